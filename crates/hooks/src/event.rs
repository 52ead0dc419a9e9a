//! The client-neutral event model: the [`HookEvent`] each client's codec (`clients/`) reads
//! its events into, and the [`Reply`] it writes back in the client's format.
//!
//! The neutral event is Claude Code's, which Codex sends as it is: one JSON object, `hook_event_name`, `session_id`, `cwd`, and for tool
//! events `tool_name`, `tool_input` (and after the tool ran, `tool_response`) and
//! `tool_use_id`; a `Stop` event says whether it is `stop_hook_active`. Both send
//! `permission_mode` (Claude Code: `default`, `acceptEdits`, `plan`, `dontAsk`,
//! `bypassPermissions`; Codex: `bypassPermissions` when its approval policy is `never`, else
//! `default`), which the gate reads (`permission.rs`). Fields this crate does
//! not read (`transcript_path`, `prompt_id`, `turn_id`, `model`, ...) are ignored.
//! `tests/fixtures/` holds events recorded from the pinned clients. Other clients' events are
//! read into this shape by their codec in `clients/` ([`HookEvent::parse_from`]), and a
//! [`Reply`] written as their answer ([`Reply::answer_for`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The client a hook runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Code (`.claude/settings.json` hooks).
    ClaudeCode,
    /// Codex (`hooks.json` in `CODEX_HOME`).
    Codex,
    /// Qwen Code (`.qwen/settings.json` hooks, Claude Code's format).
    QwenCode,
    /// Gemini CLI (`.gemini/settings.json` hooks: `BeforeTool`, `AfterTool`, `AfterAgent`).
    GeminiCli,
    /// opencode (a plugin in `.opencode/plugins/` that runs the hook; `clients/opencode.rs`).
    OpenCode,
    /// Cursor (`.cursor/hooks.json`; `clients/cursor.rs`), tested on events built from its
    /// documentation only.
    Cursor,
    /// GitHub Copilot CLI (`.github/hooks/staged.json`); its events are translated by
    /// `clients/copilot.rs`.
    Copilot,
    /// Cline CLI (a plugin in `.cline/plugins/` that runs `staged hook cline`); its events are
    /// translated by `clients/cline.rs`.
    Cline,
}

impl Client {
    /// `claude-code`, `codex`, `qwen-code`, ...: the hook command's argument and the log's
    /// `hook:<client>`.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Codex => "codex",
            Client::QwenCode => "qwen-code",
            Client::GeminiCli => "gemini-cli",
            Client::OpenCode => "opencode",
            Client::Cursor => "cursor",
            Client::Copilot => "copilot",
            Client::Cline => "cline",
        }
    }

    /// Every client, in the order of the enum.
    pub(crate) const ALL: [Client; 8] = [
        Client::ClaudeCode,
        Client::Codex,
        Client::QwenCode,
        Client::GeminiCli,
        Client::OpenCode,
        Client::Cursor,
        Client::Copilot,
        Client::Cline,
    ];

    /// The client [`Client::name`] names.
    pub(crate) fn from_name(name: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|client| client.name() == name)
    }
}

/// What a hook does with an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every edit is staged as a preview and denied: nothing is written until `resolve`.
    Gate,
    /// Every edit goes through and is recorded in the resolve log, so `staged undo` reverts it.
    Record,
}

impl Mode {
    /// `gate` or `record`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Gate => "gate",
            Mode::Record => "record",
        }
    }
}

/// The neutral name of a hook event: Claude Code's, which each client's codec maps its own
/// names to (Gemini CLI's `BeforeTool`, Cursor's `preToolUse`, opencode's
/// `tool.execute.before` are a [`EventName::PreToolUse`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventName {
    /// Before a tool runs: the gate stages an edit and denies the call.
    PreToolUse,
    /// After a tool ran: record mode records the edit.
    PostToolUse,
    /// The end of the agent's turn: a gate may hold it while a preview is pending.
    Stop,
    /// A prompt of the person: its first line titles the session.
    UserPromptSubmit,
    /// Any other event (`SessionStart`, a client's own), which the hooks answer with nothing.
    #[serde(untagged)]
    Other(String),
}

impl EventName {
    /// The name as Claude Code spells it.
    pub fn as_str(&self) -> &str {
        match self {
            EventName::PreToolUse => "PreToolUse",
            EventName::PostToolUse => "PostToolUse",
            EventName::Stop => "Stop",
            EventName::UserPromptSubmit => "UserPromptSubmit",
            EventName::Other(name) => name,
        }
    }
}

impl std::fmt::Display for EventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::ops::Deref for EventName {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<&str> for EventName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for EventName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

/// One hook event, client-neutral: as Claude Code sends it, or as a client's codec reads its
/// own event into this shape (`clients/`).
#[derive(Debug, Clone, Deserialize)]
pub struct HookEvent {
    /// `PreToolUse`, `PostToolUse`, `Stop`, ...
    pub hook_event_name: EventName,
    /// The client's session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The folder the client runs in (absolute).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The tool, for a tool event: `Edit`, `Write`, `MultiEdit`, `NotebookEdit` (Claude Code), `apply_patch`,
    /// `Bash` (Codex).
    #[serde(default)]
    pub tool_name: Option<String>,
    /// The tool's arguments.
    #[serde(default)]
    pub tool_input: Option<Value>,
    /// What the tool returned (`PostToolUse`).
    #[serde(default)]
    pub tool_response: Option<Value>,
    /// The tool call's id.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// The client's permission mode (`default`, `acceptEdits`, `plan`, `dontAsk`,
    /// `bypassPermissions`).
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// `Stop`: whether the client already continued because of a Stop hook.
    #[serde(default)]
    pub stop_hook_active: Option<bool>,
    /// `UserPromptSubmit`: the person's prompt (its first line titles the session).
    #[serde(default)]
    pub prompt: Option<String>,
    /// opencode: the agent the call is made for, as its plugin saw it (never read from an
    /// event in the neutral format).
    #[serde(skip)]
    pub agent: Option<String>,
}

impl HookEvent {
    /// Parses one event in the neutral format (Claude Code's).
    ///
    /// # Errors
    /// Why the bytes are not a hook event.
    pub fn parse(input: &[u8]) -> Result<HookEvent, String> {
        crate::clients::claude_code::parse(input)
    }

    /// Parses one event as `client` sends it.
    ///
    /// # Errors
    /// Why the bytes are not a hook event of that client.
    pub fn parse_from(client: Client, input: &[u8]) -> Result<HookEvent, String> {
        client.parse(input)
    }

    /// What staged reads of `tool_input`.
    pub(crate) fn input(&self) -> crate::clients::wire::ToolInput<'_> {
        crate::clients::wire::ToolInput::of(self.tool_input.as_ref())
    }
}

/// What a hook answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Nothing: the client goes on as it would without the hook.
    Nothing,
    /// `PreToolUse`: the tool call is not run, and the model gets this reason as its result.
    Deny(String),
    /// `Stop`: the turn does not end; the model gets this reason and another turn.
    Block(String),
    /// `UserPromptSubmit`, `PostToolUse`: the model gets this text with its next request.
    Context {
        /// The event answered.
        event: EventName,
        /// The text.
        text: String,
    },
    /// `Stop`: the turn ends, and the person is shown this text (`systemMessage`: Claude
    /// Code shows it in its interface, and headless `claude -p` only in `--output-format
    /// stream-json --include-hook-events`; Codex 0.171.0 accepts the same field, and `codex
    /// exec` shows it nowhere).
    Notice(String),
    /// `PreToolUse`: the tool runs with this input instead (Claude Code's `updatedInput`): a
    /// shell call is run under `staged shell-run`, which knows what it wrote.
    Rewrite(Value),
}

impl Reply {
    /// The JSON to print on stdout for `client`, if any: what a gate prints.
    ///
    /// # Errors
    /// Why the answer could not be written (never, for the clients' shapes): a gate then
    /// exits 2, which every client takes as a block, so that no call goes through unanswered.
    pub fn answer_for(&self, client: Client) -> Result<Option<Value>, String> {
        client.answer(self)
    }
}
