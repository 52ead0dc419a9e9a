//! One codec per client: how its events are read into the client-neutral [`HookEvent`], which
//! of its tool calls are edits (as a neutral [`ToolEdit`]), and how a neutral [`Reply`] is
//! written back in the client's own format. Everything else in this crate (the gate, record
//! mode, the Stop hold) works on the neutral types only.
//!
//! The neutral event names are Claude Code's (`PreToolUse`, `PostToolUse`, `Stop`): a codec
//! for a client with other names maps them (Gemini CLI's `BeforeTool` is a `PreToolUse`). The
//! neutral edits are Claude Code's Edit (`file_path`, `old_string`, `new_string`,
//! `replace_all`, or `edits`) and Write (`file_path`, `content`), and Codex's patches: a codec
//! whose client names them otherwise rewrites the tool input into that shape (opencode's and
//! Cursor's, Copilot CLI's and Cline's codecs also rename their edit tools to Claude Code's
//! `Edit` and `Write`).

use serde::Serialize;
use serde_json::Value;

use crate::event::{Client, EventName, HookEvent, Reply};

pub(crate) mod claude_code;
pub(crate) mod cline;
pub(crate) mod codex;
pub(crate) mod copilot;
pub(crate) mod cursor;
pub(crate) mod gemini_cli;
pub(crate) mod opencode;
pub(crate) mod opencode_text;
pub(crate) mod qwen_code;
pub(crate) mod wire;

/// Claude Code's Edit input, the neutral replacement a codec rewrites its client's edit into
/// (`file_path`, `old_string`, `new_string`, `replace_all`; a field left `None` is absent).
#[derive(Debug, Default, Serialize)]
pub(crate) struct EditInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file_path: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) new_string: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) old_string: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) replace_all: Option<bool>,
}

/// Claude Code's Write input, the neutral whole-file write (`file_path`, `content`; a field
/// left `None` is absent).
#[derive(Debug, Default, Serialize)]
pub(crate) struct WriteInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) content: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file_path: Option<Value>,
}

/// Codex's `apply_patch` input, the neutral patch: the patch text in `input`.
#[derive(Debug, Serialize)]
pub(crate) struct PatchInput {
    pub(crate) input: Value,
}

/// Claude Code's `tool_response` of an edit, as the codecs of Qwen Code and Gemini CLI read
/// theirs (`returnDisplay.filePath` and `originalContent`): the file and its text before the
/// edit.
#[derive(Debug, Serialize)]
pub(crate) struct EditResponse<'a> {
    #[serde(rename = "filePath")]
    pub(crate) file_path: &'a str,
    #[serde(rename = "originalFile")]
    pub(crate) original_file: &'a str,
}

/// A neutral tool input as the event's JSON.
///
/// # Errors
/// Why it could not be written (never, for these shapes).
pub(crate) fn input_json(input: impl Serialize) -> Result<Value, String> {
    serde_json::to_value(input).map_err(|err| format!("the hook event could not be read: {err}"))
}

/// The edit a tool call makes, whatever the client calls its tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolEdit {
    /// String replacements in one file (`file_path`, `old_string`, `new_string`,
    /// `replace_all`; or `file_path` and `edits`).
    Replace,
    /// A whole file's content (`file_path`, `content`).
    Write,
    /// A notebook cell edit (Claude Code's NotebookEdit), which staged does not stage.
    Notebook,
    /// A patch in Codex's format, as the `apply_patch` tool's `command` or `input`.
    Patch,
    /// A shell command that runs a patch (alone, or entangled with other commands).
    ShellPatch,
    /// An edit the client's codec refuses whole without staging it ([`Client::refusal`] says
    /// why): Cline's `editor` with `insert_line`.
    Refused,
}

impl Client {
    /// Reads one event of this client as a neutral [`HookEvent`].
    pub(crate) fn parse(self, input: &[u8]) -> Result<HookEvent, String> {
        match self {
            Client::ClaudeCode => claude_code::parse(input),
            Client::Codex => codex::parse(input),
            Client::QwenCode => qwen_code::parse(input),
            Client::GeminiCli => gemini_cli::parse(input),
            Client::OpenCode => opencode::parse(input),
            Client::Cursor => cursor::parse(input),
            Client::Copilot => copilot::parse(input),
            Client::Cline => cline::parse(input),
        }
    }

    /// The neutral name of an event of this client, read without building the rest of it.
    pub(crate) fn event_name(self, input: &[u8]) -> Option<EventName> {
        match self {
            Client::ClaudeCode | Client::Codex | Client::QwenCode => claude_code::event_name(input),
            Client::GeminiCli => gemini_cli::event_name(input),
            Client::OpenCode => opencode::event_name(input),
            Client::Cursor => cursor::event_name(input),
            Client::Copilot => copilot::event_name(input),
            Client::Cline => cline::event_name(input),
        }
    }

    /// The edit a tool event makes, if it is one this hook handles.
    pub(crate) fn edit(self, event: &HookEvent) -> Option<ToolEdit> {
        match self {
            Client::ClaudeCode => claude_code::edit(event),
            Client::Codex => codex::edit(event),
            Client::QwenCode => qwen_code::edit(event),
            Client::GeminiCli => gemini_cli::edit(event),
            Client::OpenCode => opencode::edit(event),
            Client::Cursor => cursor::edit(event),
            Client::Copilot => copilot::edit(event),
            Client::Cline => cline::edit(event),
        }
    }

    /// Whether this client's answer carries text to the model besides a deny or a block
    /// (Claude Code's `additionalContext`, which Codex and Qwen Code read too).
    pub(crate) fn carries_context(self) -> bool {
        matches!(self, Client::ClaudeCode | Client::Codex | Client::QwenCode)
    }

    /// The JSON to print on stdout for `reply`, if any.
    ///
    /// # Errors
    /// Why the answer could not be written (never, for the shapes of `wire`).
    pub(crate) fn answer(self, reply: &Reply) -> Result<Option<Value>, String> {
        match self {
            Client::Codex => codex::answer(reply),
            Client::ClaudeCode | Client::QwenCode => claude_code::answer(reply),
            Client::GeminiCli => gemini_cli::answer(reply),
            Client::OpenCode => opencode::answer(reply),
            Client::Cursor => cursor::answer(reply),
            Client::Copilot => copilot::answer(reply),
            Client::Cline => cline::answer(reply),
        }
    }

    /// Why the gate refuses an edit of this client without staging it, if it does: an edit the
    /// client itself would refuse (Copilot CLI's `create` of a file that exists), or one staged
    /// cannot stage as the client would make it (Cline's `insert_line`).
    pub(crate) fn refusal(self, event: &HookEvent) -> Option<String> {
        match self {
            Client::Copilot => copilot::refusal(event),
            Client::Cline => cline::refusal(event),
            _ => None,
        }
    }

    /// How this client's model calls staged's `resolve` over MCP.
    pub fn resolve_tool(self) -> &'static str {
        match self {
            Client::ClaudeCode => "mcp__staged__resolve",
            Client::Codex | Client::Cursor => "the `resolve` tool of the `staged` MCP server",
            Client::QwenCode => qwen_code::RESOLVE_TOOL,
            Client::GeminiCli => gemini_cli::RESOLVE_TOOL,
            Client::OpenCode => opencode::RESOLVE_TOOL,
            Client::Copilot => copilot::RESOLVE_TOOL,
            Client::Cline => cline::RESOLVE_TOOL,
        }
    }

    /// The client's name for people: `Claude Code`, `Codex`, ...
    pub fn display(self) -> &'static str {
        match self {
            Client::ClaudeCode => claude_code::DISPLAY,
            Client::Codex => codex::DISPLAY,
            Client::QwenCode => qwen_code::DISPLAY,
            Client::GeminiCli => gemini_cli::DISPLAY,
            Client::OpenCode => opencode::DISPLAY,
            Client::Cursor => cursor::DISPLAY,
            Client::Copilot => copilot::DISPLAY,
            Client::Cline => cline::DISPLAY,
        }
    }

    /// What the client's edit is called in a deny text: `edit`, `patch`.
    pub(crate) fn what(self) -> &'static str {
        match self {
            Client::ClaudeCode => claude_code::WHAT,
            Client::Codex => codex::WHAT,
            Client::QwenCode => qwen_code::WHAT,
            Client::GeminiCli => gemini_cli::WHAT,
            Client::OpenCode => opencode::WHAT,
            Client::Cursor => cursor::WHAT,
            Client::Copilot => copilot::WHAT,
            Client::Cline => cline::WHAT,
        }
    }

    /// Whether a deny text tells the model to read the files again after applying (a client
    /// that refuses to edit a file it did not read since it changed).
    pub(crate) fn reread_after_apply(self) -> bool {
        match self {
            Client::ClaudeCode | Client::QwenCode => true,
            Client::Codex
            | Client::GeminiCli
            | Client::OpenCode
            | Client::Cursor
            | Client::Copilot
            | Client::Cline => false,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    const CLIENTS: [Client; 8] = Client::ALL;

    /// Each client's answers, as the bytes the hook prints (the typed shapes print what the
    /// `json!` objects they replaced printed: keys sorted).
    #[test]
    fn each_clients_answers_are_its_documented_bytes() {
        let input = json!({"command": "ls", "a": 1});
        let replies = [
            Reply::Deny("no \"x\"".to_owned()),
            Reply::Block("go on".to_owned()),
            Reply::Rewrite(input),
            Reply::Context { event: EventName::PostToolUse, text: "note".to_owned() },
            Reply::Notice("told".to_owned()),
            Reply::Nothing,
        ];
        let deny_claude = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no \"x\""}}"#;
        let block = r#"{"decision":"block","reason":"go on"}"#;
        let context =
            r#"{"hookSpecificOutput":{"additionalContext":"note","hookEventName":"PostToolUse"}}"#;
        let notice = r#"{"systemMessage":"told"}"#;
        let claude = [
            Some(deny_claude),
            Some(block),
            Some(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"a":1,"command":"ls"}}}"#,
            ),
            Some(context),
            Some(notice),
            None,
        ];
        let codex_rewrite = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"staged runs this command under staged shell-run, which records or stages what it writes","updatedInput":{"a":1,"command":"ls"}}}"#;
        let expected: [(Client, [Option<&str>; 6]); 8] = [
            (Client::ClaudeCode, claude),
            (
                Client::Codex,
                [claude[0], claude[1], Some(codex_rewrite), claude[3], claude[4], None],
            ),
            (Client::QwenCode, claude),
            (
                Client::GeminiCli,
                [
                    Some(r#"{"decision":"deny","reason":"no \"x\""}"#),
                    Some(block),
                    Some(
                        r#"{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"a":1,"command":"ls"}}}"#,
                    ),
                    None,
                    None,
                    None,
                ],
            ),
            (
                Client::OpenCode,
                [
                    Some(r#"{"decision":"deny","reason":"no \"x\""}"#),
                    Some(r#"{"decision":"deny","reason":"go on"}"#),
                    Some(r#"{"args":{"a":1,"command":"ls"}}"#),
                    None,
                    None,
                    None,
                ],
            ),
            (
                Client::Cursor,
                [
                    Some(
                        r#"{"agent_message":"no \"x\"","permission":"deny","user_message":"staged holds this edit as a preview (or refused it); see the agent's message, or run `staged review`."}"#,
                    ),
                    Some(r#"{"followup_message":"go on"}"#),
                    None,
                    None,
                    None,
                    None,
                ],
            ),
            (
                Client::Copilot,
                [
                    Some(r#"{"permissionDecision":"deny","permissionDecisionReason":"no \"x\""}"#),
                    Some(block),
                    Some(r#"{"modifiedArgs":{"a":1,"command":"ls"}}"#),
                    None,
                    None,
                    None,
                ],
            ),
            (
                Client::Cline,
                [
                    Some(r#"{"reason":"no \"x\"","skip":true}"#),
                    Some(r#"{"reason":"go on","skip":true}"#),
                    Some(r#"{"input":{"a":1,"command":"ls"}}"#),
                    None,
                    None,
                    None,
                ],
            ),
        ];
        assert_eq!(expected.map(|(client, _)| client), CLIENTS);
        for (client, bytes) in expected {
            for (reply, want) in replies.iter().zip(bytes) {
                let got = reply.answer_for(client).unwrap().map(|json| json.to_string());
                assert_eq!(got.as_deref(), want, "{client:?} {reply:?}");
            }
        }
    }

    /// Every client refuses a denied call with an answer: no deny is ever written as nothing.
    #[test]
    fn a_deny_is_always_an_answer() {
        for client in CLIENTS {
            let deny = Reply::Deny("why".to_owned()).answer_for(client);
            assert!(matches!(deny, Ok(Some(_))), "{client:?}");
        }
    }

    /// The event names of each client read as the neutral ones.
    #[test]
    fn event_names_read_as_the_neutral_ones() {
        let cases: [(Client, &[u8], Option<EventName>); 7] = [
            (Client::ClaudeCode, br#"{"hook_event_name":"Stop"}"#, Some(EventName::Stop)),
            (
                Client::ClaudeCode,
                br#"{"hook_event_name":"SessionStart"}"#,
                Some(EventName::Other("SessionStart".to_owned())),
            ),
            (
                Client::GeminiCli,
                br#"{"hook_event_name":"BeforeTool"}"#,
                Some(EventName::PreToolUse),
            ),
            (Client::GeminiCli, br#"{"hook_event_name":"AfterAgent"}"#, Some(EventName::Stop)),
            (Client::Cursor, br#"{"hook_event_name":"postToolUse"}"#, Some(EventName::PostToolUse)),
            (Client::Cursor, br#"{"hook_event_name":"beforeReadFile"}"#, None),
            (Client::OpenCode, br#"{"hook":"tool.execute.after"}"#, Some(EventName::PostToolUse)),
        ];
        for (client, input, want) in cases {
            assert_eq!(client.event_name(input), want, "{client:?}");
        }
    }
}
