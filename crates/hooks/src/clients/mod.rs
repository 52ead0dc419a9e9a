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

use serde_json::Value;

use crate::event::{Client, HookEvent, Reply};

pub(crate) mod claude_code;
pub(crate) mod cline;
pub(crate) mod codex;
pub(crate) mod copilot;
pub(crate) mod cursor;
pub(crate) mod gemini_cli;
pub(crate) mod opencode;
pub(crate) mod qwen_code;

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
    pub(crate) fn event_name(self, input: &[u8]) -> Option<String> {
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
    pub(crate) fn answer(self, reply: &Reply) -> Option<Value> {
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
