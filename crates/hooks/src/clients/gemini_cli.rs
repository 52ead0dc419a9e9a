//! Gemini CLI's codec. Its command hooks (`.gemini/settings.json` `hooks`) get one JSON event
//! on stdin: `hook_event_name` (`BeforeTool`, `AfterTool`, `AfterAgent`, ...), `session_id`,
//! `cwd`, `tool_name`, `tool_input` and, after the tool, `tool_response`; `AfterAgent` says
//! `stop_hook_active`. There is no call id and no approval mode in an event.
//!
//! - The names become the neutral ones: `BeforeTool` is `PreToolUse`, `AfterTool` is
//!   `PostToolUse`, `AfterAgent` (the end of the agent's turn) is `Stop`.
//! - Its edit tools are `write_file` (`file_path`, `content`: Claude Code's Write) and
//!   `replace` (`file_path`, `old_string`, `new_string`, `allow_multiple`, `instruction`:
//!   Claude Code's Edit, with `allow_multiple` as `replace_all`). A relative `file_path` is
//!   taken from the event's `cwd`, as Gemini CLI does.
//! - The call id a tool's two events share is made from the session, the tool and its input
//!   (the same in both).
//! - `AfterTool` carries the file as it was before the edit in `tool_response.returnDisplay`
//!   (`filePath`, `originalContent`), read as Claude Code's `filePath` and `originalFile`.
//! - `run_shell_command` (`command`) is run under staged's wrapper (`shell_run.rs`): the answer
//!   `{"hookSpecificOutput": {"tool_input": ...}}` is assigned to the call's arguments.
//! - A deny is `{"decision": "deny", "reason": ...}` (the model sees `Tool execution blocked:
//!   <reason>`); an `AfterAgent` that holds the turn is `{"decision": "block", "reason": ...}`,
//!   which Gemini CLI sends the model as a new prompt.
//!
//! Measured with Gemini CLI 0.61.0: a hook that exits 1 lets the tool run (any other non-zero
//! exit denies, with its stderr as the reason); a hook that times out (60 s) lets it run too.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::{
    clients::{
        EditResponse, ToolEdit, claude_code,
        wire::{Decided, Decision, Specific, to_json},
    },
    event::{EventName, HookEvent, Reply},
};

/// The client's name for people.
pub(crate) const DISPLAY: &str = "Gemini CLI";

/// What its edit is called in a deny text.
pub(crate) const WHAT: &str = "edit";

/// How its model calls `resolve`.
pub(crate) const RESOLVE_TOOL: &str = "mcp_staged_resolve";

/// Gemini CLI's own names of the events staged hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) enum GeminiEvent {
    /// Before a tool runs: a `PreToolUse`.
    BeforeTool,
    /// After a tool ran: a `PostToolUse`.
    AfterTool,
    /// The end of the agent's turn: a `Stop`.
    AfterAgent,
}

impl GeminiEvent {
    /// The neutral event.
    fn neutral(self) -> EventName {
        match self {
            GeminiEvent::BeforeTool => EventName::PreToolUse,
            GeminiEvent::AfterTool => EventName::PostToolUse,
            GeminiEvent::AfterAgent => EventName::Stop,
        }
    }
}

/// Gemini CLI's event name as the neutral one (a name that is none of Gemini CLI's stays as
/// it is).
fn neutral(name: EventName) -> EventName {
    let EventName::Other(own) = &name else { return name };
    serde_json::from_value::<GeminiEvent>(Value::String(own.clone()))
        .map_or(name, GeminiEvent::neutral)
}

/// Reads one event into the neutral shape.
pub(crate) fn parse(input: &[u8]) -> Result<HookEvent, String> {
    let mut value: Value = serde_json::from_slice(input)
        .map_err(|err| format!("the hook event is not valid: {err}"))?;
    let Some(object) = value.as_object_mut() else {
        return Err("the hook event is not valid: it is not a JSON object".to_owned());
    };
    let cwd = object.get("cwd").and_then(Value::as_str).map(std::path::PathBuf::from);
    if let Some(input) = object.get_mut("tool_input").and_then(Value::as_object_mut) {
        if let (Some(path), Some(cwd)) = (input.get("file_path").and_then(Value::as_str), &cwd)
            && !path.starts_with('/')
        {
            let absolute = cwd.join(path).to_string_lossy().into_owned();
            input.insert("file_path".to_owned(), Value::String(absolute));
        }
        if let Some(all) = input.get("allow_multiple").and_then(Value::as_bool) {
            input.insert("replace_all".to_owned(), Value::Bool(all));
        }
    }
    if let Some(display) = object.get("tool_response").and_then(|r| r.get("returnDisplay"))
        && let Some(path) = display.get("filePath").and_then(Value::as_str)
    {
        let original = display.get("originalContent").and_then(Value::as_str).unwrap_or_default();
        let response = to_json(EditResponse { file_path: path, original_file: original })?;
        object.insert("tool_response".to_owned(), response);
    }
    if object.get("tool_name").is_some() && object.get("tool_use_id").is_none() {
        let mut hash = Sha256::new();
        for key in ["session_id", "tool_name", "tool_input"] {
            hash.update(object.get(key).map(Value::to_string).unwrap_or_default().as_bytes());
            hash.update([0]);
        }
        let digest = hash.finalize();
        let id: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
        object.insert("tool_use_id".to_owned(), Value::String(format!("gemini-{id}")));
    }
    let mut event: HookEvent = serde_json::from_value(value)
        .map_err(|err| format!("the hook event is not valid: {err}"))?;
    event.hook_event_name = neutral(event.hook_event_name);
    Ok(event)
}

/// The neutral name of an event, read without building the rest of it.
pub(crate) fn event_name(input: &[u8]) -> Option<EventName> {
    claude_code::event_name(input).map(neutral)
}

/// `replace` replaces, `write_file` writes.
pub(crate) fn edit(event: &HookEvent) -> Option<ToolEdit> {
    match event.tool_name.as_deref()? {
        "replace" => Some(ToolEdit::Replace),
        "write_file" => Some(ToolEdit::Write),
        _ => None,
    }
}

/// Gemini CLI's `hookSpecificOutput` of a `BeforeTool` that rewrites the call.
#[derive(Debug, Serialize)]
struct BeforeToolOutput<'a> {
    #[serde(rename = "hookEventName")]
    hook_event_name: GeminiEvent,
    tool_input: &'a Value,
}

/// Gemini CLI's answer: `decision` and `reason`.
///
/// # Errors
/// Why the answer could not be written.
pub(crate) fn answer(reply: &Reply) -> Result<Option<Value>, String> {
    let answer = match reply {
        // Neither a model's context nor a message to the person reaches this client's
        // answer (notices wait for a deny or a block, which carry text in any client).
        Reply::Nothing | Reply::Context { .. } | Reply::Notice(_) => return Ok(None),
        // A `run_shell_command` under staged's wrapper: Gemini CLI 0.61 assigns
        // `hookSpecificOutput.tool_input` to the call's arguments and builds the call again.
        Reply::Rewrite(input) => to_json(Specific {
            hook_specific_output: BeforeToolOutput {
                hook_event_name: GeminiEvent::BeforeTool,
                tool_input: input,
            },
        }),
        Reply::Deny(reason) => to_json(Decided { decision: Decision::Deny, reason }),
        Reply::Block(reason) => to_json(Decided { decision: Decision::Block, reason }),
    };
    answer.map(Some)
}
