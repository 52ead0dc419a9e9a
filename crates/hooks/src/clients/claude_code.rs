//! Claude Code's codec: its events are the neutral format itself (`hook_event_name`,
//! `session_id`, `cwd`, `tool_name`, `tool_input`, `tool_response`, `tool_use_id`,
//! `permission_mode`, `stop_hook_active`); its edit tools are Edit, MultiEdit, Write and
//! NotebookEdit; a deny is `hookSpecificOutput.permissionDecision: "deny"` with the reason,
//! and a Stop that holds the turn is `{"decision": "block", "reason": ...}`.

use serde_json::{Value, json};

use crate::{
    clients::ToolEdit,
    event::{HookEvent, Reply},
};

/// The client's name for people.
pub(crate) const DISPLAY: &str = "Claude Code";

/// What its edit is called in a deny text.
pub(crate) const WHAT: &str = "edit";

/// Reads one event (the neutral format).
pub(crate) fn parse(input: &[u8]) -> Result<HookEvent, String> {
    serde_json::from_slice(input).map_err(|err| format!("the hook event is not valid: {err}"))
}

/// The `hook_event_name` of an event, read without building the rest of it (the other fields
/// are skipped, not kept).
pub(crate) fn event_name(input: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Name {
        hook_event_name: Option<String>,
    }
    serde_json::from_slice::<Name>(input).ok()?.hook_event_name
}

/// Edit and MultiEdit replace, Write writes, NotebookEdit is a notebook edit.
pub(crate) fn edit(event: &HookEvent) -> Option<ToolEdit> {
    match event.tool_name.as_deref()? {
        "Edit" | "MultiEdit" => Some(ToolEdit::Replace),
        "Write" => Some(ToolEdit::Write),
        "NotebookEdit" => Some(ToolEdit::Notebook),
        _ => None,
    }
}

/// Claude Code's answer (Codex and Qwen Code read the same shape).
pub(crate) fn answer(reply: &Reply) -> Option<Value> {
    match reply {
        Reply::Nothing => None,
        Reply::Deny(reason) => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        })),
        Reply::Block(reason) => Some(json!({"decision": "block", "reason": reason})),
        Reply::Context { event, text } => Some(crate::session::context_json(event, text)),
        Reply::Notice(text) => Some(json!({"systemMessage": text})),
        Reply::Rewrite(input) => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "updatedInput": input,
            }
        })),
    }
}
