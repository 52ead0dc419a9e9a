//! One module per subcommand, and the output shape they share.

pub(crate) mod agent;
pub(crate) mod ast_edit;
pub(crate) mod ast_grep;
pub(crate) mod doctor;
pub(crate) mod hook;
pub(crate) mod ids;
pub(crate) mod log;
pub(crate) mod pending;
pub(crate) mod resolve;
pub(crate) mod session;
pub(crate) mod shell_run;
pub(crate) mod show;
pub(crate) mod text_edit;
pub(crate) mod tool;
pub(crate) mod tools;
pub(crate) mod trust;
pub(crate) mod undo;

use std::{
    path::Path,
    time::{Duration, SystemTime},
};

use serde::Deserialize as _;
use serde_json::Value;
use staged_core::{PendingId, Tool, ToolError};
use staged_protocol::ToolResult;
use staged_protocol::{EditErrorDetails, PendingHead, StructuredResult};
use staged_workspace::{
    ApplyPatchParams, AstEditParams, AstGrepParams, EditParams, LangRequiredDetails,
    WorkspaceSession, WriteParams,
};

use crate::{args::GlobalArgs, context, exit::Exit, output::Output, progress::Progress};

/// Whether a command stages (and so may create `.staged`), serves a client (and creates it
/// now), or only looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Creates `.staged` only when it stages something, so an error before that (a missing
    /// `--lang`, a bad pattern) leaves the workspace as it was.
    Stages,
    /// Creates `.staged` at once: `staged mcp` (its token file) and `staged agent` (its
    /// transcript) keep state whatever they stage.
    Serves,
    /// Never creates `.staged`.
    ReadOnly,
}

/// The arguments a tool-like command hands its tool, made JSON once the workspace is open.
pub(crate) trait ToolArgs {
    /// The arguments as the tool takes them, the `paths` a person typed rebased on the
    /// workspace `root` (see [`context::scope_paths`]).
    fn into_args(self, root: &Path) -> anyhow::Result<Value>;
}

/// The text tools' arguments (`edit`, `write`, `patch`): they name no scope paths.
macro_rules! text_tool_args {
    ($($params:ty),*) => {$(
        impl ToolArgs for $params {
            fn into_args(self, _root: &Path) -> anyhow::Result<Value> {
                Ok(serde_json::to_value(self)?)
            }
        }
    )*};
}
text_tool_args!(EditParams, WriteParams, ApplyPatchParams);

impl ToolArgs for AstEditParams {
    fn into_args(mut self, root: &Path) -> anyhow::Result<Value> {
        self.paths = context::scope_paths(root, &self.paths)?;
        Ok(serde_json::to_value(self)?)
    }
}

impl ToolArgs for AstGrepParams {
    fn into_args(mut self, root: &Path) -> anyhow::Result<Value> {
        self.paths = context::scope_paths(root, &self.paths)?;
        Ok(serde_json::to_value(self)?)
    }
}

/// Runs a tool-like command (`ast-edit`, `ast-grep`, `edit`, `write`, `patch`): opens the
/// workspace, makes `params` the tool's arguments (see [`ToolArgs`]), runs the tool that
/// `pick` chooses on them with a spinner, and prints the `--json` object or, for a person,
/// what `print` writes. A tool error is an input error (exit 2); the stack is untouched.
pub(crate) fn run_tool<T: Tool + 'static>(
    global: &GlobalArgs,
    out: &Output,
    effect: Effect,
    pick: impl FnOnce(&WorkspaceSession) -> T,
    params: impl ToolArgs,
    print: impl FnOnce(&ToolResult, &Output) -> anyhow::Result<()>,
) -> anyhow::Result<Exit> {
    let ws = match effect {
        Effect::Stages => context::open_deferred(global)?,
        Effect::Serves => context::open(global)?,
        Effect::ReadOnly => context::open_existing(global)?,
    };
    let params = params.into_args(ws.workspace().root())?;
    let tool = pick(&ws);
    let res = {
        let _progress = Progress::start(out, "searching files");
        context::block_on(|cancel| async move { tool.execute(params, &cancel).await })?
    };
    match res {
        Ok(result) => {
            if out.json {
                print_tool_json(out, &result, head(&ws).as_ref())?;
            } else {
                print(&result, out)?;
            }
            Ok(if result.is_error { Exit::ToolError } else { Exit::Success })
        }
        Err(err) => {
            if out.json {
                print_tool_json(out, &error_result(&err), head(&ws).as_ref())?;
            }
            let message = cli_message(&err).unwrap_or_else(|| err.message().to_owned());
            Err(anyhow::anyhow!("{message}"))
        }
    }
}

/// A tool error in the command line's own terms, where the tool's message names one of its
/// arguments: "`lang` is required ..." becomes which `--lang` to pass.
fn cli_message(err: &ToolError) -> Option<String> {
    if let Some(message) = edit_message(err.details()?) {
        return Some(message);
    }
    let details = LangRequiredDetails::parse(err.details()?)?;
    if let Some(files) = details.uninferred {
        return Some(format!(
            "cannot tell the language of {}; pass --lang LANG (see `--lang` in `staged ast-edit --help`)",
            files.join("; ")
        ));
    }
    let found: Vec<String> = details
        .languages?
        .iter()
        .map(|l| format!("{} ({} file{})", l.lang, l.files, if l.files == 1 { "" } else { "s" }))
        .collect();
    Some(if found.is_empty() {
        "no file in these paths is in a language staged knows; pass --lang LANG to choose one"
            .to_owned()
    } else {
        format!(
            "these paths hold files in {} languages: {}; pass --lang with the one to rewrite",
            found.len(),
            found.join(", ")
        )
    })
}

/// An `edit` error in the command line's terms (`--old`, `--new`, `--all`).
fn edit_message(details: &Value) -> Option<String> {
    match EditErrorDetails::deserialize(details).ok()? {
        EditErrorDetails::NotFound { path } => Some(format!(
            "the --old text is not in {path}: it must match the file exactly, whitespace and indentation included"
        )),
        EditErrorDetails::Ambiguous { path, count, lines } => Some(format!(
            "the --old text occurs {count} times in {path} (at lines {lines}): pass --all to replace every one, or make --old longer so that it occurs once"
        )),
        EditErrorDetails::NoChange { path } => {
            Some(format!("--old and --new are the same: nothing would change in {path}"))
        }
    }
}

/// Prints the `--json` object of a tool-like command, the [`StructuredResult`]
/// `{"text", "isError", "details", "pending": {"id", "label"} | null}`, where `pending` is the
/// head of the stack after the command. It borrows the details, so that a big preview's (its
/// whole diff) are not copied into another JSON value first.
pub(crate) fn print_tool_json(
    out: &Output,
    result: &ToolResult,
    head: Option<&(PendingId, String)>,
) -> std::io::Result<()> {
    let text = result.text_content();
    let pending = head.map(|(id, label)| PendingHead { id: id.as_str(), label });
    out.json_line(&StructuredResult::new(result, &text, pending))
}

/// The result a `ToolError` stands for.
pub(crate) fn error_result(err: &ToolError) -> ToolResult {
    err.to_result()
}

/// The id and label of the stack's head, for the JSON output; a store failure reads as no
/// head, since the command itself already succeeded or failed on its own terms.
pub(crate) fn head(ws: &WorkspaceSession) -> Option<(PendingId, String)> {
    ws.store().head_summary().ok().flatten().map(|head| (head.id, head.label))
}

/// `3s`, `5m`, `2h`, `4d`.
pub(crate) fn age(created_at: SystemTime) -> String {
    let secs = SystemTime::now().duration_since(created_at).unwrap_or(Duration::ZERO).as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// Whole seconds since `created_at`.
pub(crate) fn age_seconds(created_at: SystemTime) -> u64 {
    SystemTime::now().duration_since(created_at).unwrap_or(Duration::ZERO).as_secs()
}

/// RFC 3339, UTC, whole seconds. A time RFC 3339 cannot write (past the year 9999: a row of
/// `.staged/staged.db` someone else edited) is said so, with its seconds since the Unix epoch,
/// rather than formatted, whose failure would end the command.
pub(crate) fn timestamp(at: SystemTime) -> String {
    use std::fmt::Write as _;
    let mut res = String::new();
    if write!(res, "{}", humantime::format_rfc3339_seconds(at)).is_ok() {
        return res;
    }
    let secs = at.duration_since(SystemTime::UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs();
    format!("{secs} s after 1970 (not a date staged can print)")
}

/// The most characters of a label or reason a table cell shows; `log show` prints all of it.
const CELL_CHARS: usize = 200;

/// `text` as a table cell: on one line, its control characters escaped (so a label cannot
/// clear the screen or forge a row), and cut to [`CELL_CHARS`] with `…`.
pub(crate) fn cell(text: &str) -> String {
    let escaped = staged_render::escape_line(text);
    if escaped.chars().count() <= CELL_CHARS {
        return escaped.into_owned();
    }
    let mut res: String = escaped.chars().take(CELL_CHARS - 1).collect();
    res.push('…');
    res
}
