//! The entries the installers write into a client's config, as typed shapes: each client's
//! documented form of a hook and of an MCP server, field by field. An entry becomes JSON
//! ([`entry_json`]) and is merged into the person's file as a `Value`, key by key, so nothing
//! of theirs is lost; the JSON's keys are sorted, as the files were written before.

use serde::Serialize;
use serde_json::Value;

use super::InstallError;

/// An MCP server that runs `staged mcp` over stdio, in the `mcpServers` of Claude Code, Qwen
/// Code, Gemini CLI, Cursor, Copilot CLI and Cline (the fields a client does not take left
/// out).
#[derive(Debug, Serialize)]
pub(crate) struct McpServer<'a> {
    /// `staged`'s arguments: `mcp` (and `--approve human`).
    pub(crate) args: &'a [&'a str],
    /// staged's path.
    pub(crate) command: &'a str,
    /// Copilot CLI: the tools it may call (`*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tools: Option<&'a [&'a str]>,
    /// Qwen Code, Gemini CLI: its tools run without asking.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) trust: Option<bool>,
    /// Claude Code's local scope (`stdio`), Copilot CLI (`local`).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<&'a str>,
}

impl<'a> McpServer<'a> {
    /// `command` with `args`, and nothing else.
    pub(crate) fn new(command: &'a str, args: &'a [&'a str]) -> McpServer<'a> {
        McpServer { args, command, tools: None, trust: None, kind: None }
    }
}

/// opencode's MCP server (`mcp.staged`): the command line as one list.
#[derive(Debug, Serialize)]
pub(crate) struct OpencodeServer<'a> {
    pub(crate) command: [&'a str; 2],
    pub(crate) enabled: bool,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
}

/// A command hook in Claude Code's format (Qwen Code's and Gemini CLI's too): one group of
/// `hooks.<event>`, its `matcher` and its one command.
#[derive(Debug, Serialize)]
pub(crate) struct HookGroup<'a> {
    pub(crate) hooks: [CommandHook<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) matcher: Option<&'a str>,
}

/// One command of a [`HookGroup`].
#[derive(Debug, Serialize)]
pub(crate) struct CommandHook<'a> {
    pub(crate) command: &'a str,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
}

/// Cursor's hook (`hooks.<event>` of `.cursor/hooks.json`): its command, and for a tool
/// event the tools it runs for.
#[derive(Debug, Serialize)]
pub(crate) struct CursorHook<'a> {
    pub(crate) command: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) matcher: Option<&'a str>,
}

/// Copilot CLI's hook (`hooks.<event>` of `.github/hooks/staged.json`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CopilotHook<'a> {
    pub(crate) bash: &'a str,
    pub(crate) timeout_sec: u64,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
}

/// Qwen Code's approval of a project's MCP server (`mcpApprovals.json`), bound to the hash
/// of its configuration.
#[derive(Debug, Serialize)]
pub(crate) struct Approval<'a> {
    pub(crate) hash: &'a str,
    pub(crate) status: &'static str,
}

/// `entry` as the JSON merged into a client's config.
///
/// # Errors
/// Why it could not be written (never, for these shapes).
pub(crate) fn entry_json(entry: impl Serialize) -> Result<Value, InstallError> {
    serde_json::to_value(entry)
        .map_err(|err| InstallError::Missing(format!("staged's entry could not be written: {err}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Each entry is the client's documented shape, as the installers wrote it before it was
    /// typed (keys sorted, absent fields left out).
    #[test]
    fn entries_are_the_clients_shapes() {
        let text = |entry: Value| entry.to_string();
        let server = McpServer::new("/s", &["mcp"]);
        assert_eq!(text(entry_json(&server).unwrap()), r#"{"args":["mcp"],"command":"/s"}"#);
        let claude_local = McpServer { kind: Some("stdio"), ..McpServer::new("/s", &["mcp"]) };
        assert_eq!(
            text(entry_json(claude_local).unwrap()),
            r#"{"args":["mcp"],"command":"/s","type":"stdio"}"#
        );
        let copilot = McpServer {
            tools: Some(&["*"]),
            kind: Some("local"),
            ..McpServer::new("/s", &["mcp"])
        };
        assert_eq!(
            text(entry_json(copilot).unwrap()),
            r#"{"args":["mcp"],"command":"/s","tools":["*"],"type":"local"}"#
        );
        let trusted = McpServer { trust: Some(true), ..McpServer::new("/s", &["mcp"]) };
        assert_eq!(
            text(entry_json(trusted).unwrap()),
            r#"{"args":["mcp"],"command":"/s","trust":true}"#
        );
        let opencode = OpencodeServer { command: ["/s", "mcp"], enabled: true, kind: "local" };
        assert_eq!(
            text(entry_json(opencode).unwrap()),
            r#"{"command":["/s","mcp"],"enabled":true,"type":"local"}"#
        );
        let group =
            HookGroup { hooks: [CommandHook { command: "c", kind: "command" }], matcher: None };
        assert_eq!(
            text(entry_json(group).unwrap()),
            r#"{"hooks":[{"command":"c","type":"command"}]}"#
        );
        let group = HookGroup {
            hooks: [CommandHook { command: "c", kind: "command" }],
            matcher: Some("Edit"),
        };
        assert_eq!(
            text(entry_json(group).unwrap()),
            r#"{"hooks":[{"command":"c","type":"command"}],"matcher":"Edit"}"#
        );
        let cursor = CursorHook { command: "c", matcher: Some("Write") };
        assert_eq!(text(entry_json(cursor).unwrap()), r#"{"command":"c","matcher":"Write"}"#);
        let cursor = CursorHook { command: "c", matcher: None };
        assert_eq!(text(entry_json(cursor).unwrap()), r#"{"command":"c"}"#);
        let copilot = CopilotHook { bash: "c", timeout_sec: 600, kind: "command" };
        assert_eq!(
            text(entry_json(copilot).unwrap()),
            r#"{"bash":"c","timeoutSec":600,"type":"command"}"#
        );
        let approval = Approval { hash: "h", status: "approved" };
        assert_eq!(text(entry_json(approval).unwrap()), r#"{"hash":"h","status":"approved"}"#);
    }
}
