//! The events Claude Code and Codex send a hook on stdin, and the replies they read back.
//!
//! Both clients send one JSON object: `hook_event_name`, `session_id`, `cwd`, and for tool
//! events `tool_name`, `tool_input` (and after the tool ran, `tool_response`) and
//! `tool_use_id`; a `Stop` event says whether it is `stop_hook_active`. Both send
//! `permission_mode` (Claude Code: `default`, `acceptEdits`, `plan`, `dontAsk`,
//! `bypassPermissions`; Codex: `bypassPermissions` when its approval policy is `never`, else
//! `default`), which the gate reads (`permission.rs`). Fields this crate does
//! not read (`transcript_path`, `prompt_id`, `turn_id`, `model`, ...) are ignored.
//! `tests/fixtures/` holds events recorded from the pinned clients. Other clients' events are
//! translated into this shape by their codec in `clients/` ([`Client::decode`]), and a
//! [`Reply`] into their answer ([`Client::encode`]).

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

/// The client a hook runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Code (`.claude/settings.json` hooks).
    ClaudeCode,
    /// Codex (`hooks.json` in `CODEX_HOME`).
    Codex,
    /// GitHub Copilot CLI (`.github/hooks/staged.json`); its events are translated by
    /// `clients/copilot.rs`.
    Copilot,
    /// Cline CLI (a plugin in `.cline/plugins/` that runs `staged hook cline`); its events are
    /// translated by `clients/cline.rs`.
    Cline,
}

impl Client {
    /// `claude-code` or `codex`: the hook command's argument and the log's `hook:<client>`.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Codex => "codex",
            Client::Copilot => "copilot",
            Client::Cline => "cline",
        }
    }

    /// How a person calls this client, in the log's reasons and in messages.
    pub fn title(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Codex => "Codex",
            Client::Copilot => "Copilot CLI",
            Client::Cline => "Cline",
        }
    }

    /// The event `input` (the bytes this client sends a hook) as a [`HookEvent`].
    ///
    /// # Errors
    /// Why the bytes are not an event of this client.
    pub fn decode(self, input: &[u8]) -> Result<HookEvent, String> {
        match self {
            Client::ClaudeCode | Client::Codex => HookEvent::parse(input),
            Client::Copilot => crate::clients::copilot::decode(input),
            Client::Cline => crate::clients::cline::decode(input),
        }
    }

    /// What this client reads back for `reply`: the JSON to print on stdout, if any.
    pub fn encode(self, reply: &Reply) -> Option<Value> {
        match self {
            Client::ClaudeCode | Client::Codex => reply.to_json(),
            Client::Copilot => crate::clients::copilot::encode(reply),
            Client::Cline => crate::clients::cline::encode(reply),
        }
    }

    /// How this client's model calls staged's `resolve` over MCP.
    pub fn resolve_tool(self) -> &'static str {
        match self {
            Client::ClaudeCode => "mcp__staged__resolve",
            Client::Codex => "the `resolve` tool of the `staged` MCP server",
            Client::Copilot => "staged-resolve",
            Client::Cline => "staged__resolve",
        }
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

/// One hook event, as either client sends it.
#[derive(Debug, Clone, Deserialize)]
pub struct HookEvent {
    /// `PreToolUse`, `PostToolUse`, `Stop`, ...
    pub hook_event_name: String,
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
}

impl HookEvent {
    /// Parses one event.
    ///
    /// # Errors
    /// Why the bytes are not a hook event.
    pub fn parse(input: &[u8]) -> Result<HookEvent, String> {
        serde_json::from_slice(input).map_err(|err| format!("the hook event is not valid: {err}"))
    }

    /// A string field of `tool_input`.
    pub(crate) fn input_str(&self, key: &str) -> Option<&str> {
        self.tool_input.as_ref()?.get(key)?.as_str()
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
}

impl Reply {
    /// The JSON to print on stdout, if any. The same shape serves both clients: Codex reads
    /// Claude Code's.
    pub fn to_json(&self) -> Option<Value> {
        match self {
            Reply::Nothing => None,
            Reply::Deny(reason) => Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            })),
            Reply::Block(reason) => Some(json!({"decision": "block", "reason": reason})),
        }
    }
}
