//! Cursor: not tested against the real client (Cursor is an editor; its CLI is in no
//! registry), only on events built from its documentation: the hooks reference
//! (<https://cursor.com/docs/hooks>) and the page on the Claude Code hooks it also runs
//! (<https://cursor.com/docs/reference/third-party-hooks>). `tests/fixtures/cursor/` holds
//! those events.
//!
//! `.cursor/hooks.json` runs `staged hook cursor` with one JSON object on stdin. Every event
//! carries `hook_event_name` (camelCase: `preToolUse`, `postToolUse`, `stop`, ...),
//! `conversation_id` (the session), `generation_id`, `cursor_version` and `workspace_roots`;
//! a tool event carries `tool_name`, `tool_input`, `tool_use_id` and `cwd`, and a `stop` its
//! `status` and `loop_count` (how many follow-ups a stop hook already caused). They become a
//! [`HookEvent`]: `PreToolUse`, `PostToolUse` or `Stop`, the conversation as the session, `cwd`
//! (else the first workspace root), and the edit tools in the client-neutral shapes the gate
//! stages: `Write` (`file_path`, `contents` or `content`) as a `Write`, `StrReplace` and `Edit`
//! (`file_path`, `old_string`, `new_string`, `replace_all`) as an `Edit` (an `Edit` that
//! carries no `old_string` is refused by the staging, naming what it lacks).
//!
//! Replies: `{"permission": "deny", "agent_message": <reason>, "user_message": ...}` denies a
//! `preToolUse` (the agent gets `agent_message`); `{"followup_message": <reason>}` answers a
//! `stop` with another turn; nothing lets the call run.
//!
//! Cursor also runs the Claude Code hooks in `.claude/settings.json` (third-party hooks): every
//! matching hook of every source runs. With both of staged's hooks installed an edit would be
//! staged by the first and refused by the second (its file has a pending preview), so the
//! Cursor hook answers and the Claude Code hook stands aside: [`claude_hook_defers`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    clients::{EditInput, ToolEdit, WriteInput, input_json, wire::to_json},
    event::{EventName, HookEvent, Reply},
};

/// Cursor's event, as the hooks reference gives it.
#[derive(Debug, Deserialize)]
struct Event {
    hook_event_name: String,
    #[serde(default)]
    conversation_id: Option<String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    workspace_roots: Vec<PathBuf>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    tool_input: Option<Value>,
    #[serde(default)]
    tool_output: Option<Value>,
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    loop_count: Option<u64>,
}

/// The client's name for people.
pub(crate) const DISPLAY: &str = "Cursor";

/// What its edit is called in a deny text.
pub(crate) const WHAT: &str = "edit";

/// Cursor's own names of the hooks staged handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
enum CursorEvent {
    /// Before a tool runs: a `PreToolUse`.
    PreToolUse,
    /// After a tool ran: a `PostToolUse`.
    PostToolUse,
    /// The end of the agent's turn: a `Stop`.
    Stop,
}

/// The client-neutral name of a Cursor hook.
fn neutral(name: &str) -> Option<EventName> {
    let event = serde_json::from_value::<CursorEvent>(Value::String(name.to_owned())).ok()?;
    Some(match event {
        CursorEvent::PreToolUse => EventName::PreToolUse,
        CursorEvent::PostToolUse => EventName::PostToolUse,
        CursorEvent::Stop => EventName::Stop,
    })
}

/// The client-neutral name of the event in `input`.
pub(crate) fn event_name(input: &[u8]) -> Option<EventName> {
    #[derive(Deserialize)]
    struct Name {
        hook_event_name: Option<String>,
    }
    let name = serde_json::from_slice::<Name>(input).ok()?.hook_event_name?;
    neutral(&name)
}

/// Cursor's event as a [`HookEvent`].
pub(crate) fn parse(input: &[u8]) -> Result<HookEvent, String> {
    let event: Event = serde_json::from_slice(input)
        .map_err(|err| format!("the Cursor hook event is not valid: {err}"))?;
    let name = neutral(&event.hook_event_name).ok_or_else(|| {
        format!("{:?} is not a Cursor hook staged handles", event.hook_event_name)
    })?;
    let cwd = event
        .cwd
        .filter(|c| c.is_absolute())
        .or_else(|| event.workspace_roots.into_iter().find(|r| r.is_absolute()));
    let args = event.tool_input.unwrap_or(Value::Null);
    let text = |keys: &[&str]| keys.iter().find_map(|k| args.get(*k).and_then(Value::as_str));
    let path = text(&["file_path", "path"]).map(|p| match &cwd {
        Some(dir) if !Path::new(p).is_absolute() => dir.join(p).to_string_lossy().into_owned(),
        _ => p.to_owned(),
    });
    let (tool, input) = match event.tool_name.as_deref() {
        Some("Write") => {
            let input = WriteInput {
                file_path: Some(path.into()),
                content: Some(text(&["contents", "content"]).into()),
            };
            (Some("Write".to_owned()), input_json(input)?)
        }
        Some("StrReplace" | "Edit") => {
            let input = EditInput {
                file_path: Some(path.into()),
                old_string: text(&["old_string"]).map(Value::from),
                new_string: text(&["new_string"]).map(Value::from),
                replace_all: args.get("replace_all").and_then(Value::as_bool),
            };
            (Some("Edit".to_owned()), input_json(input)?)
        }
        other => (other.map(|t| format!("cursor:{t}")), args.clone()),
    };
    Ok(HookEvent {
        hook_event_name: name,
        session_id: event.conversation_id,
        cwd,
        tool_name: tool,
        tool_input: Some(input),
        tool_response: event.tool_output,
        tool_use_id: event.tool_use_id,
        permission_mode: None,
        stop_hook_active: event.loop_count.map(|n| n > 0),
        prompt: None,
        agent: None,
    })
}

/// Cursor's answer to a `preToolUse` that denies the call.
#[derive(Debug, Serialize)]
struct Denied<'a> {
    agent_message: &'a str,
    permission: crate::clients::wire::Decision,
    user_message: &'static str,
}

/// Cursor's answer to a `stop` that gives the agent another turn.
#[derive(Debug, Serialize)]
struct FollowUp<'a> {
    followup_message: &'a str,
}

/// What a person sees in Cursor when the gate denies an edit.
const USER_MESSAGE: &str = "staged holds this edit as a preview (or refused it); see the agent's message, or run `staged review`.";

/// `reply` as Cursor reads it.
///
/// # Errors
/// Why the answer could not be written.
pub(crate) fn answer(reply: &Reply) -> Result<Option<Value>, String> {
    let answer = match reply {
        // Neither a model's context nor a message to the person reaches this client's
        // answer (notices wait for a deny or a block, which carry text in any client).
        Reply::Nothing | Reply::Context { .. } | Reply::Notice(_) | Reply::Rewrite(_) => {
            return Ok(None);
        }
        Reply::Deny(reason) => to_json(Denied {
            agent_message: reason,
            permission: crate::clients::wire::Decision::Deny,
            user_message: USER_MESSAGE,
        }),
        Reply::Block(reason) => to_json(FollowUp { followup_message: reason }),
    };
    answer.map(Some)
}

/// The edit a read event's tool makes: `StrReplace` and `Edit` (read as `Edit`) replace,
/// `Write` writes; `Shell` and `Delete` are not gated.
pub(crate) fn edit(event: &HookEvent) -> Option<ToolEdit> {
    match event.tool_name.as_deref()? {
        "Edit" => Some(ToolEdit::Replace),
        "Write" => Some(ToolEdit::Write),
        _ => None,
    }
}

/// Whether a call of the Claude Code hook is Cursor running `.claude/settings.json` while
/// staged's own Cursor hook is installed in `.cursor/hooks.json` of `root`: then the Cursor
/// hook answers for the edit, and the Claude Code hook answers nothing, so that an edit is
/// staged once. Cursor's events carry `cursor_version` and `generation_id`, which Claude
/// Code's never do. Without staged's Cursor hook the Claude Code hook gates as it would.
pub(crate) fn claude_hook_defers(input: &[u8], root: &Path) -> bool {
    #[derive(Deserialize)]
    struct Marks {
        cursor_version: Option<Value>,
        generation_id: Option<Value>,
    }
    let from_cursor = serde_json::from_slice::<Marks>(input)
        .is_ok_and(|m| m.cursor_version.is_some() || m.generation_id.is_some());
    from_cursor && crate::install::cursor_hook_installed(root)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    /// The answer, which these shapes always write.
    fn answer(reply: &Reply) -> Option<Value> {
        super::answer(reply).unwrap()
    }

    #[test]
    fn replies_are_in_cursors_shape() {
        assert_eq!(answer(&Reply::Nothing), None);
        let deny = answer(&Reply::Deny("why".to_owned())).unwrap();
        assert_eq!(
            (deny["permission"].as_str(), deny["agent_message"].as_str()),
            (Some("deny"), Some("why"))
        );
        assert_eq!(
            answer(&Reply::Block("go on".to_owned())),
            Some(json!({"followup_message": "go on"}))
        );
    }

    #[test]
    fn an_unknown_hook_and_a_relative_path() {
        assert!(
            parse(br#"{"hook_event_name":"beforeReadFile"}"#)
                .unwrap_err()
                .contains("beforeReadFile")
        );
        let event = parse(
            br#"{"hook_event_name":"preToolUse","workspace_roots":["/w"],"tool_name":"StrReplace","tool_input":{"path":"a.ts","old_string":"a","new_string":"b"}}"#,
        )
        .unwrap();
        assert_eq!(event.cwd.as_deref(), Some(Path::new("/w")));
        assert_eq!(
            event.tool_input,
            Some(json!({"file_path": "/w/a.ts", "old_string": "a", "new_string": "b"}))
        );
        let shell = parse(br#"{"hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"ls"}}"#).unwrap();
        assert_eq!(shell.tool_name.as_deref(), Some("cursor:Shell"));
    }
}
