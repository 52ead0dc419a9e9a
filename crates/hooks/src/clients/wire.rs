//! The clients' answers as typed shapes: each client's documented reply, field by field, with
//! the fields a reply leaves out skipped. A shape becomes the JSON the hook prints through
//! [`to_json`]; the JSON's keys are sorted (`serde_json` keeps a map's keys in order), so the
//! bytes do not depend on the order fields are declared in.
//!
//! A shape holds only strings, booleans and the client's own JSON, which serialize without
//! error; an error would still not let a call through: [`crate::Reply::answer_for`] reports
//! it, and the CLI exits 2, which every client takes as a block.
//!
//! What staged reads of the clients' tool calls is typed here too ([`ToolInput`],
//! [`FileToolResponse`], [`ClaudeEdit`]): views of the members it needs, each absent when the
//! client left it out or sent another type (`staged_protocol::lenient`), as a client's JSON
//! may drift between its versions.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_protocol::lenient::{Flag, Shaped, Text, view};

use crate::event::EventName;

/// A decision's word: `allow`, `block`, `deny`.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Decision {
    /// Let the call run (Codex's rewrite).
    Allow,
    /// Keep the turn going (a held Stop).
    Block,
    /// Refuse the call.
    Deny,
}

/// `{"decision": ..., "reason": ...}`: Claude Code's held Stop (which Codex and Qwen Code
/// read too), Gemini CLI's deny and held `AfterAgent`, opencode's deny, Copilot CLI's held
/// `agentStop`.
#[derive(Debug, Serialize)]
pub(crate) struct Decided<'a> {
    pub(crate) decision: Decision,
    pub(crate) reason: &'a str,
}

/// `{"hookSpecificOutput": ...}`: Claude Code's and Gemini CLI's answers specific to one
/// event.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Specific<T> {
    pub(crate) hook_specific_output: T,
}

/// Claude Code's `hookSpecificOutput` (Codex's and Qwen Code's too): the event answered and
/// what the answer says of it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClaudeOutput<'a> {
    pub(crate) hook_event_name: &'a EventName,
    /// Text for the model (`UserPromptSubmit`, `PostToolUse`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) additional_context: Option<&'a str>,
    /// `deny` refuses the call; `allow` (Codex's rewrite) runs it without asking.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) permission_decision: Option<Decision>,
    /// Why, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) permission_decision_reason: Option<&'a str>,
    /// The tool's input to run instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) updated_input: Option<&'a Value>,
}

impl<'a> ClaudeOutput<'a> {
    /// The answer to `event`, saying nothing yet.
    pub(crate) fn of(event: &'a EventName) -> ClaudeOutput<'a> {
        ClaudeOutput {
            hook_event_name: event,
            additional_context: None,
            permission_decision: None,
            permission_decision_reason: None,
            updated_input: None,
        }
    }
}

/// `{"systemMessage": ...}`: Claude Code's message to the person.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SystemMessage<'a> {
    pub(crate) system_message: &'a str,
}

/// `shape` as the JSON the hook prints.
///
/// # Errors
/// Why it could not be serialized (never, for the shapes of this crate).
pub(crate) fn to_json(shape: impl Serialize) -> Result<Value, String> {
    serde_json::to_value(shape)
        .map_err(|err| format!("the hook's answer could not be written: {err}"))
}

/// What staged reads of a tool call's `tool_input` in the neutral event (Claude Code's names;
/// the other clients' codecs translate theirs to them).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ToolInput<'a> {
    /// The file of Edit, MultiEdit and Write.
    #[serde(borrow)]
    pub(crate) file_path: Text<'a>,
    /// Write's new text.
    #[serde(borrow)]
    pub(crate) content: Text<'a>,
    /// apply_patch's patch as Codex sends it, or a shell call's command.
    #[serde(borrow)]
    pub(crate) command: Text<'a>,
    /// apply_patch's patch as a freeform tool's input.
    #[serde(borrow)]
    pub(crate) input: Text<'a>,
}

impl<'a> ToolInput<'a> {
    /// The view of `input`; every member absent when it is not an object.
    pub(crate) fn of(input: Option<&'a Value>) -> Self {
        input.and_then(view).unwrap_or_default()
    }

    /// apply_patch's patch: `command`, else `input`.
    pub(crate) fn patch(self) -> Option<&'a str> {
        self.command.0.or(self.input.0)
    }
}

/// What staged reads of a file tool's `tool_response`: Claude Code's `filePath` and
/// `originalFile` (the file as the tool read it, CRLF as LF), Copilot CLI's `resultType`
/// (`success`) and Cline's `isError`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct FileToolResponse<'a> {
    #[serde(borrow)]
    pub(crate) file_path: Text<'a>,
    #[serde(borrow)]
    pub(crate) original_file: Text<'a>,
    #[serde(borrow)]
    pub(crate) result_type: Text<'a>,
    pub(crate) is_error: Flag,
}

impl<'a> FileToolResponse<'a> {
    /// The view of `response`; every member absent when it is not an object.
    pub(crate) fn of(response: &'a Value) -> Self {
        view(response).unwrap_or_default()
    }
}

/// One replacement of Claude Code's Edit (its input) or of MultiEdit's `edits`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ClaudeEdit<'a> {
    #[serde(borrow)]
    pub(crate) old_string: Text<'a>,
    #[serde(borrow)]
    pub(crate) new_string: Text<'a>,
    pub(crate) replace_all: Flag,
}

/// MultiEdit's `edits`, when the input has them as an array.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ClaudeEdits {
    pub(crate) edits: Shaped<Vec<Value>>,
}
