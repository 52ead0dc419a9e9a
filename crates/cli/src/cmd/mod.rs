//! One module per subcommand, and the output shape they share.

pub(crate) mod agent;
pub(crate) mod ast_edit;
pub(crate) mod ast_grep;
pub(crate) mod pending;
pub(crate) mod resolve;
pub(crate) mod show;
pub(crate) mod tool;
pub(crate) mod tools;
pub(crate) mod trust;

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use staged_core::{PendingActionStore, PendingEntry, Tool, ToolError, ToolResult};
use staged_workspace::WorkspaceSession;

use crate::{args::GlobalArgs, context, exit::Exit, output::Output, progress::Progress};

/// Whether a tool-like command stages (and so may create `.staged`) or only looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    Stages,
    ReadOnly,
}

/// Runs a tool-like command (`ast-edit`, `ast-grep`): opens the workspace, rebases the
/// `paths` a person typed on the workspace root (see [`context::scope_paths`]), runs the tool
/// that `pick` chooses on `params` with a spinner, and prints the `--json` object or, for a
/// person, what `print` writes. A tool error is an input error (exit 2); the stack is
/// untouched.
pub(crate) fn run_tool<T: Tool + 'static>(
    global: &GlobalArgs,
    out: &Output,
    effect: Effect,
    pick: impl FnOnce(&WorkspaceSession) -> T,
    mut params: Value,
    print: impl FnOnce(&ToolResult, &Output) -> anyhow::Result<()>,
) -> anyhow::Result<Exit> {
    let ws = match effect {
        Effect::Stages => context::open(global)?,
        Effect::ReadOnly => context::open_existing(global)?,
    };
    if let Some(paths) = params.get("paths").and_then(Value::as_array) {
        let typed: Vec<String> =
            paths.iter().filter_map(Value::as_str).map(str::to_owned).collect();
        params["paths"] = json!(context::scope_paths(ws.workspace().root(), &typed)?);
    }
    let tool = pick(&ws);
    let res = {
        let _progress = Progress::start("searching files");
        context::block_on(|cancel| async move { tool.execute(params, &cancel).await })?
    };
    let head = head(ws.store().as_ref());
    match res {
        Ok(result) => {
            if out.json {
                out.json_line(&tool_json(&result, head.as_ref()))?;
            } else {
                print(&result, out)?;
            }
            Ok(if result.is_error { Exit::ToolError } else { Exit::Success })
        }
        Err(err) => {
            if out.json {
                out.json_line(&tool_json(&error_result(&err), head.as_ref()))?;
            }
            Err(anyhow::anyhow!("{}", err.message()))
        }
    }
}

/// The `--json` object of a tool-like command:
/// `{"text", "isError", "details", "pending": {"id", "label"} | null}`, where `pending` is the
/// head of the stack after the command.
pub(crate) fn tool_json(result: &ToolResult, head: Option<&PendingEntry>) -> Value {
    json!({
        "text": result.text_content(),
        "isError": result.is_error,
        "details": result.details.clone().unwrap_or_else(|| json!({})),
        "pending": head.map(|e| json!({"id": e.id.as_str(), "label": e.label()})),
    })
}

/// The result a `ToolError` stands for.
pub(crate) fn error_result(err: &ToolError) -> ToolResult {
    err.to_result()
}

/// The head of the stack, for the JSON output; a store failure reads as no head, since the
/// command itself already succeeded or failed on its own terms.
pub(crate) fn head(store: &dyn PendingActionStore) -> Option<PendingEntry> {
    store.peek().ok().flatten()
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
