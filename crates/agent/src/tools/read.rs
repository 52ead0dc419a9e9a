//! `read`: a text file of the workspace, or a range of its lines, with line numbers.

use serde_json::{Value, json};
use staged_core::{CancelToken, Tool, ToolError, ToolResult};
use staged_journal::Workspace;

use crate::tools::{positive, required_str};

/// Lines returned when no `limit` is given.
const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 2000;

/// The read-only `read` tool, confined to the workspace.
#[derive(Debug, Clone)]
pub struct ReadTool {
    workspace: Workspace,
}

impl ReadTool {
    /// A tool reading files under `workspace`.
    pub fn new(workspace: Workspace) -> Self {
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
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "file path, relative to the workspace root"},
                "offset": {"type": "integer", "minimum": 1, "description": "first line to read (1-based)"},
                "limit": {"type": "integer", "minimum": 1, "description": "number of lines to read"}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, cancel: &CancelToken) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        let given = required_str(&args, "path")?;
        let offset = positive(&args, "offset")?.unwrap_or(1);
        let limit = positive(&args, "limit")?.unwrap_or(DEFAULT_LIMIT);
        let is_dir = |rel: &staged_fs::RelPath| {
            self.workspace.fs().symlink_metadata(rel).is_ok_and(|meta| meta.is_dir())
        };
        let path = match self
            .workspace
            .resolve_existing(given)
            .map_err(|err| ToolError::new(err.to_string()))?
        {
            Some(rel) if !is_dir(&rel) => rel,
            _ => {
                return Err(ToolError::new(format!(
                    "{given} is a directory; use `find` to list its files"
                )));
            }
        };
        // Read through the root's handle: nothing outside the workspace, even through a
        // symlink swapped in since the path was checked.
        let bytes = self
            .workspace
            .fs()
            .read(&path)
            .map_err(|err| ToolError::new(format!("Cannot read {given}: {err}")))?;
        if bytes.contains(&0) {
            return Err(ToolError::new(format!("{given} is not a text file")));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| ToolError::new(format!("{given} is not UTF-8 text")))?;
        let total = text.lines().count();
        if total == 0 {
            return Ok(ToolResult::text(format!("{given} is empty.")));
        }
        if offset > total {
            return Err(ToolError::new(format!(
                "{given} has {total} lines; offset {offset} is past the end"
            )));
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
        let details = json!({"path": path.display(), "startLine": offset, "endLine": last, "totalLines": total});
        Ok(ToolResult::text(res.trim_end().to_owned()).with_details(details))
    }
}
