//! `read`: a text file of the workspace, or a range of its lines, with line numbers.
//!
//! It reads only regular files (a FIFO, whose open would wait for a writer, a socket or a
//! device is a tool error at once), never anything in staged's state folder but plan files,
//! and at most [`MAX_READ_BYTES`] of a file, saying so when it stops early. The work runs on
//! a blocking thread that the call does not wait for once it is cancelled.

use std::io::Read as _;

use serde::Serialize;
use serde_json::Value;
use staged_core::{CancelToken, Tool, ToolError};
use staged_journal::{ConfinedRoot, ModelAccess};
use staged_protocol::ToolResult;

use crate::tools::{positive, refuse_unknown, required_str};

/// Lines returned when no `limit` is given.
const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 2000;
/// The most bytes read of one file: a bigger file is read up to the last whole line within
/// them, and the result says where it stopped.
const MAX_READ_BYTES: usize = 8 << 20;

/// The read-only `read` tool, confined to the workspace.
#[derive(Debug, Clone)]
pub struct ReadTool {
    workspace: ConfinedRoot,
}

impl ReadTool {
    /// A tool reading files under `workspace`.
    pub fn new(workspace: ConfinedRoot) -> Self {
        Self { workspace }
    }
}

#[async_trait::async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn label(&self) -> &str {
        "Read"
    }

    fn description(&self) -> &str {
        "Read a text file of the workspace, with line numbers. `offset` is the first line (1-based) and `limit` the number of lines (default 2000). Read-only."
    }

    fn parameters(&self) -> Value {
        staged_core::parameters_schema::<ReadParams>()
    }

    fn read_only(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, cancel: &CancelToken) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        refuse_unknown(&args, &["path", "offset", "limit"])?;
        let given = required_str(&args, "path")?.to_owned();
        if given.trim().is_empty() {
            return Err(ToolError::new(
                "`path` is empty: name a file of the workspace, relative to its root",
            ));
        }
        let offset = positive(&args, "offset")?.unwrap_or(1);
        let limit = positive(&args, "limit")?.unwrap_or(DEFAULT_LIMIT);
        let workspace = self.workspace.clone();
        let work = tokio::task::spawn_blocking(move || read(&workspace, &given, offset, limit));
        tokio::select! {
            () = cancel.cancelled() => Err(ToolError::aborted(cancel.reason())),
            res = work => res.map_err(|err| ToolError::new(staged_core::worker_failure("read", err)))?,
        }
    }
}

/// What was read of a file: its first bytes (whole lines), and whether there was more.
struct Text {
    text: String,
    truncated: bool,
    size: u64,
}

fn read(
    workspace: &ConfinedRoot,
    given: &str,
    offset: usize,
    limit: usize,
) -> Result<ToolResult, ToolError> {
    let directory =
        || ToolError::new(format!("{given} is a directory; use `find` to list its files"));
    let not_regular = || {
        ToolError::new(format!(
            "{given} is not a regular file (it is a FIFO, a socket or a device); `read` reads only regular files"
        ))
    };
    let path = workspace
        .resolve_for_model(given, ModelAccess::ReadPlan)
        .map_err(|err| ToolError::new(err.to_string()))?
        .ok_or_else(directory)?;
    match workspace.fs().symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() => return Err(directory()),
        Ok(meta) if !meta.is_file() && !meta.file_type().is_symlink() => {
            return Err(not_regular());
        }
        _ => {}
    }
    // Through the root's handle, and with no symlink anywhere in the path: the file opened is
    // the one whose path was checked, even if a directory is swapped for a symlink meanwhile.
    let file = workspace.fs().open_file_strict(&path).map_err(|err| match err.kind() {
        std::io::ErrorKind::InvalidInput => not_regular(),
        _ => ToolError::new(format!("Cannot read {given}: {err}")),
    })?;
    let Text { text, truncated, size } = read_text(file, given)?;
    let total = text.lines().count();
    let stopped = |lines: usize| {
        format!(
            "[{given} is {size} bytes; `read` reads only its first {} MiB, {lines} lines, and stopped there.]",
            MAX_READ_BYTES >> 20
        )
    };
    if total == 0 {
        if truncated {
            return Err(ToolError::new(format!(
                "{given} has no line break in its first {} MiB; `read` cannot show it",
                MAX_READ_BYTES >> 20
            )));
        }
        return Ok(ToolResult::text(format!("{given} is empty.")));
    }
    if offset > total {
        let mut message = format!("{given} has {total} lines; offset {offset} is past the end");
        if truncated {
            message = format!("{message} of what `read` reads. {}", stopped(total));
        }
        return Err(ToolError::new(message));
    }
    let last = offset.saturating_add(limit - 1).min(total);
    let width = last.to_string().len();
    let mut res = String::new();
    for (idx, line) in text.lines().enumerate().skip(offset - 1).take(last + 1 - offset) {
        let shown: String = line.chars().take(MAX_LINE_CHARS).collect();
        res.push_str(&format!("{:>width$}\t{shown}\n", idx + 1));
    }
    if last < total {
        res.push_str(&format!(
            "… {} more lines (read on with offset {})\n",
            total - last,
            last + 1
        ));
    }
    if truncated {
        res.push_str(&stopped(total));
    }
    let details = ReadDetails {
        path: path.display().to_string(),
        start_line: offset,
        end_line: last,
        total_lines: total,
        truncated: truncated.then_some(true),
        size: truncated.then_some(size),
    };
    Ok(ToolResult::text(res.trim_end().to_owned()).with_details_of(&details))
}

/// `read`'s details: the file, the lines shown and how many it has; when `read` stopped at
/// [`MAX_READ_BYTES`], `truncated` and the file's size.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReadDetails {
    path: String,
    start_line: usize,
    end_line: usize,
    total_lines: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

/// Reads at most [`MAX_READ_BYTES`] of `file`, cut after its last whole line when there is
/// more; refuses binary and non-UTF-8 text.
fn read_text(file: std::fs::File, given: &str) -> Result<Text, ToolError> {
    let size = file.metadata().map_or(0, |m| m.len());
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ToolError::new(format!("Cannot read {given}: {err}")))?;
    let truncated = bytes.len() > MAX_READ_BYTES;
    if truncated {
        let end = bytes[..MAX_READ_BYTES].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(end);
    }
    if bytes.contains(&0) {
        return Err(ToolError::new(format!("{given} is not a text file")));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| ToolError::new(format!("{given} is not UTF-8 text")))?;
    Ok(Text { text, truncated, size })
}

/// `read`'s arguments, as its schema declares them (`execute` reads them by key, with its own
/// error texts).
#[derive(schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ReadParams {
    #[schemars(description = "file path, relative to the workspace root")]
    path: String,
    #[serde(default)]
    #[schemars(with = "u64", range(min = 1), description = "first line to read (1-based)")]
    offset: Option<u64>,
    #[serde(default)]
    #[schemars(with = "u64", range(min = 1), description = "number of lines to read")]
    limit: Option<u64>,
}
