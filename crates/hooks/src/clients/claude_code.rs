//! Claude Code's codec: its events are the neutral format itself (`hook_event_name`,
//! `session_id`, `cwd`, `tool_name`, `tool_input`, `tool_response`, `tool_use_id`,
//! `permission_mode`, `stop_hook_active`); its edit tools are Edit, MultiEdit, Write and
//! NotebookEdit; a deny is `hookSpecificOutput.permissionDecision: "deny"` with the reason,
//! and a Stop that holds the turn is `{"decision": "block", "reason": ...}`.

use serde_json::Value;

use crate::{
    clients::{
        ToolEdit,
        wire::{ClaudeOutput, Decided, Decision, Specific, SystemMessage, to_json},
    },
    event::{EventName, HookEvent, Reply},
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
pub(crate) fn event_name(input: &[u8]) -> Option<EventName> {
    #[derive(serde::Deserialize)]
    struct Name {
        hook_event_name: Option<EventName>,
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

/// Claude Code's answer (Codex and Qwen Code read the same shape): a deny is
/// `hookSpecificOutput.permissionDecision: "deny"` with its reason, a held Stop `{"decision":
/// "block", "reason": ...}`, context `hookSpecificOutput.additionalContext`, a message to the
/// person `systemMessage`, a rewrite `hookSpecificOutput.updatedInput`.
///
/// # Errors
/// Why the answer could not be written.
pub(crate) fn answer(reply: &Reply) -> Result<Option<Value>, String> {
    let pre = EventName::PreToolUse;
    let answer = match reply {
        Reply::Nothing => return Ok(None),
        Reply::Deny(reason) => to_json(Specific {
            hook_specific_output: ClaudeOutput {
                permission_decision: Some(Decision::Deny),
                permission_decision_reason: Some(reason),
                ..ClaudeOutput::of(&pre)
            },
        }),
        Reply::Block(reason) => to_json(Decided { decision: Decision::Block, reason }),
        Reply::Context { event, text } => to_json(Specific {
            hook_specific_output: ClaudeOutput {
                additional_context: Some(text),
                ..ClaudeOutput::of(event)
            },
        }),
        Reply::Notice(text) => to_json(SystemMessage { system_message: text }),
        Reply::Rewrite(input) => to_json(Specific {
            hook_specific_output: ClaudeOutput {
                updated_input: Some(input),
                ..ClaudeOutput::of(&pre)
            },
        }),
    };
    answer.map(Some)
}
