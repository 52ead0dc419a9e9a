//! One module per subcommand, and the output shape they share.

pub(crate) mod ast_edit;
pub(crate) mod ast_grep;
pub(crate) mod pending;
pub(crate) mod resolve;
pub(crate) mod show;

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use staged_core::{PendingId, Tool, ToolError, ToolResult};
use staged_workspace::WorkspaceSession;

use crate::{args::GlobalArgs, context, exit::Exit, output::Output, progress::Progress};

/// Runs a tool-like command (`ast-edit`, `ast-grep`): opens the workspace, runs the tool that
/// `pick` chooses on `params` with a spinner, and prints the `--json` object or, for a person,
/// what `print` writes. A tool error is an input error (exit 2); the stack is untouched.
pub(crate) fn run_tool<T: Tool + 'static>(
    global: &GlobalArgs,
    out: &Output,
    pick: impl FnOnce(&WorkspaceSession) -> T,
    params: Value,
    print: impl FnOnce(&ToolResult, &Output) -> anyhow::Result<()>,
) -> anyhow::Result<Exit> {
    let ws = context::open(global)?;
    let tool = pick(&ws);
    let res = {
        let _progress = Progress::start("searching files");
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
            Err(anyhow::anyhow!("{}", err.message()))
        }
    }
}

/// Prints the `--json` object of a tool-like command:
/// `{"text", "isError", "details", "pending": {"id", "label"} | null}`, where `pending` is the
/// head of the stack after the command. Written member by member, so that a big preview's
/// details (its whole diff) are not copied into another JSON value first.
pub(crate) fn print_tool_json(
    out: &Output,
    result: &ToolResult,
    head: Option<&(PendingId, String)>,
) -> std::io::Result<()> {
    let no_details = json!({});
    let pending = head.map(|(id, label)| json!({"id": id.as_str(), "label": label}));
    out.json_object_line(&[
        ("text", &Value::String(result.text_content())),
        ("isError", &Value::Bool(result.is_error)),
        ("details", result.details.as_ref().unwrap_or(&no_details)),
        ("pending", pending.as_ref().unwrap_or(&Value::Null)),
    ])
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

/// RFC 3339, UTC, whole seconds.
pub(crate) fn timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at).to_string()
}
