//! GitHub Copilot CLI (`@github/copilot`, tested with 1.0.102): its hook events, its answers,
//! its installer and its `staged doctor` checks.
//!
//! Copilot runs the command hooks of `.github/hooks/*.json` (`{"version": 1, "hooks":
//! {"preToolUse": [{"type": "command", "bash": ..., "timeoutSec": ...}]}}`), only in a folder
//! a person trusted (`--trust-folder` for one run); elsewhere it skips them without a word.
//! Each hook gets one JSON object on stdin, camelCase, without the event's name:
//!
//! - `preToolUse`: `{sessionId, timestamp, cwd, toolName, toolArgs}`, `toolArgs` an object
//!   (older versions sent it as a JSON string; both are read);
//! - `postToolUse`: the same and `toolResult: {resultType, textResultForLlm}`;
//! - `agentStop`: `{sessionId, timestamp, cwd, transcriptPath, stopReason, stop_hook_active}`.
//!
//! The event is told by its fields: a tool (its name or its arguments) with a result is
//! `PostToolUse`, one without `PreToolUse`, a `stopReason` or `stop_hook_active` a `Stop`;
//! an event with none of them is not read (a gate refuses it: it could be a tool call).
//! The edit tools are `edit` (`{path, old_str, new_str}`, one exact replacement; `path`
//! absolute) and `create` (`{path, file_text}`, a new file only); they become Claude Code's `Edit` and `Write`, so the gate
//! and record mode treat them as Claude Code's. The events carry no tool call id: the call is
//! named by a hash of its tool and arguments, the same in its `preToolUse` and `postToolUse`.
//!
//! Answers: `{"permissionDecision": "deny", "permissionDecisionReason": R}` denies the tool
//! call, and the model reads `Denied by preToolUse hook: R`; `{"decision": "block", "reason":
//! R}` from `agentStop` gives the model another turn with `R` as the person's message (the
//! next `agentStop` says `stop_hook_active: true`). Measured on 1.0.102: a hook that exits
//! non-zero, or whose command is missing, denies the call (`(hook errored)`); a hook that
//! prints no JSON and exits 0 lets it run, and so does one that outlives its `timeoutSec`
//! (30 s by default): the installed hook's timeout is therefore [`HOOK_TIMEOUT_SECS`], far
//! above the gate's own (`staged hook --timeout`, 45 s), whose supervisor always answers.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::{
    clients::{
        EditInput, ToolEdit, WriteInput, input_json,
        wire::{Decided, Decision, to_json},
    },
    event::{Client, EventName, HookEvent, Mode, Reply},
    install::{
        Check, InstallError, SERVER, Target, WorkspaceFile, binary_checks,
        entries::{CopilotHook, McpServer, entry_json},
        hook_command, is_ours, mcp_check, object_at, older_install_checks, parse_json, wrong_shape,
    },
};

/// The `timeoutSec` of the installed hooks: Copilot runs the tool when a hook outlives it.
pub(crate) const HOOK_TIMEOUT_SECS: u64 = 600;

/// One Copilot CLI hook event, as it comes.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CopilotEvent {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    tool_args: Option<Value>,
    #[serde(default)]
    tool_result: Option<Value>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default, rename = "stop_hook_active")]
    stop_hook_active: Option<bool>,
}

/// A Copilot CLI event as a [`HookEvent`].
///
/// # Errors
/// Why the bytes are not a Copilot CLI hook event.
pub(crate) fn parse(input: &[u8]) -> Result<HookEvent, String> {
    let event: CopilotEvent = serde_json::from_slice(input)
        .map_err(|err| format!("the Copilot CLI hook event is not valid: {err}"))?;
    let args = match event.tool_args {
        // Older versions sent the arguments as a JSON string.
        Some(Value::String(text)) => {
            Some(serde_json::from_str(&text).unwrap_or(Value::String(text)))
        }
        other => other,
    };
    // A tool's arguments without its name are still a tool call (which a gate refuses).
    let tool_call = event.tool_name.is_some() || args.is_some();
    let name = match (tool_call, &event.tool_result) {
        (true, Some(_)) => EventName::PostToolUse,
        (true, None) => EventName::PreToolUse,
        _ if event.stop_reason.is_some() || event.stop_hook_active.is_some() => EventName::Stop,
        // Only `preToolUse`, `postToolUse` and `agentStop` run staged's hook, and a tool call
        // cannot be told from an event naming neither, so a gate refuses it (never lets it pass).
        _ => {
            return Err(
                "the Copilot CLI hook event is neither a tool call (no toolName or toolArgs) nor an agentStop (no stopReason)"
                    .to_owned(),
            );
        }
    };
    let call = event.tool_name.as_deref().map(|tool| call_id(tool, args.as_ref()));
    let (tool_name, tool_input) = match (event.tool_name.as_deref(), args) {
        // An edit tool's call without arguments is still an edit (refused, naming no file),
        // never a tool the gate lets pass.
        (Some("edit"), args) => {
            (Some("Edit".to_owned()), Some(edit_input(&args.unwrap_or_default())?))
        }
        (Some("create"), args) => {
            (Some("Write".to_owned()), Some(create_input(&args.unwrap_or_default())?))
        }
        (tool, args) => (tool.map(str::to_owned), args),
    };
    Ok(HookEvent {
        hook_event_name: name,
        session_id: event.session_id,
        cwd: event.cwd,
        tool_name,
        tool_input,
        tool_response: event.tool_result,
        tool_use_id: call,
        permission_mode: None,
        stop_hook_active: event.stop_hook_active,
        prompt: None,
        agent: None,
    })
}

/// `edit`'s `{path, old_str, new_str}` as Claude Code's Edit (`new_str` left out deletes).
fn edit_input(args: &Value) -> Result<Value, String> {
    input_json(EditInput {
        file_path: args.get("path").cloned(),
        old_string: args.get("old_str").cloned(),
        new_string: Some(args.get("new_str").cloned().unwrap_or_else(|| Value::from(""))),
        replace_all: None,
    })
}

/// `create`'s `{path, file_text}` as Claude Code's Write.
fn create_input(args: &Value) -> Result<Value, String> {
    input_json(WriteInput {
        file_path: args.get("path").cloned(),
        content: args.get("file_text").cloned(),
    })
}

/// The call's name: its tool and a hash of its arguments, equal in its `preToolUse` and
/// `postToolUse`.
fn call_id(tool: &str, args: Option<&Value>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    hasher.update(args.map(Value::to_string).unwrap_or_default().as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    format!("{tool}-{hex}")
}

/// The client's name for people.
pub(crate) const DISPLAY: &str = "Copilot CLI";

/// What its edit is called in a deny text.
pub(crate) const WHAT: &str = "edit";

/// How its model calls `resolve`.
pub(crate) const RESOLVE_TOOL: &str = "staged-resolve";

/// The client-neutral name of the event in `input` (the name of the event [`parse`] makes of it).
pub(crate) fn event_name(input: &[u8]) -> Option<EventName> {
    parse(input).ok().map(|event| event.hook_event_name)
}

/// The edit a read event's tool makes: `Edit` replaces, `Write` writes.
pub(crate) fn edit(event: &HookEvent) -> Option<ToolEdit> {
    match event.tool_name.as_deref()? {
        "Edit" => Some(ToolEdit::Replace),
        "Write" => Some(ToolEdit::Write),
        _ => None,
    }
}

/// Copilot CLI's answer to a `preToolUse`: a deny with its reason, or the arguments to run the
/// tool with.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PreToolAnswer<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    modified_args: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permission_decision: Option<Decision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permission_decision_reason: Option<&'a str>,
}

/// What Copilot CLI reads back for `reply`.
///
/// # Errors
/// Why the answer could not be written.
pub(crate) fn answer(reply: &Reply) -> Result<Option<Value>, String> {
    let answer = match reply {
        // Neither a model's context nor a message to the person reaches this client's
        // answer (notices wait for a deny or a block, which carry text in any client).
        Reply::Nothing | Reply::Context { .. } | Reply::Notice(_) => return Ok(None),
        // A `bash` call under staged's wrapper: Copilot runs the tool with `modifiedArgs`.
        Reply::Rewrite(args) => to_json(PreToolAnswer {
            modified_args: Some(args),
            permission_decision: None,
            permission_decision_reason: None,
        }),
        Reply::Deny(reason) => to_json(PreToolAnswer {
            modified_args: None,
            permission_decision: Some(Decision::Deny),
            permission_decision_reason: Some(reason),
        }),
        Reply::Block(reason) => to_json(Decided { decision: Decision::Block, reason }),
    };
    answer.map(Some)
}

/// Why the gate refuses a Copilot edit without staging it: `create` of a file that exists
/// (Copilot refuses it too, so the gate must not stage what it would not write).
pub(crate) fn refusal(event: &HookEvent) -> Option<String> {
    if event.tool_name.as_deref() != Some("Write") {
        return None;
    }
    let path = event.input().file_path.0?;
    std::fs::symlink_metadata(Path::new(path)).is_ok().then(|| CREATE_EXISTS.to_owned())
}

/// The deny text of a `create` of a file that exists.
pub(crate) const CREATE_EXISTS: &str = "staged refused this create without staging it, and nothing was written: the file already exists, and create makes only new files. To change it, use edit.";

/// What `staged doctor` says about how the gate reads Copilot CLI's permissions.
pub(crate) const PERMISSIONS: &str = "Copilot CLI's events carry no permission mode: the gate stages every edit as a preview the model may apply, and the model's staged-resolve is a tool call Copilot runs only as its own permissions allow (asked, or allowed by --allow-all-tools or --allow-tool)";

// --- installer ----------------------------------------------------------------------------

/// staged's hooks file, relative to the root: Copilot reads every `.github/hooks/*.json`.
pub(crate) const HOOKS_FILE: &str = ".github/hooks/staged.json";

/// The repository's MCP servers (Copilot reads `.mcp.json` too, which is Claude Code's).
pub(crate) const MCP_FILE: &str = ".github/mcp.json";

/// Copilot's names of the events staged hooks, and staged's names for them.
const EVENTS: [(&str, &str); 3] =
    [("preToolUse", "PreToolUse"), ("postToolUse", "PostToolUse"), ("agentStop", "Stop")];

/// `staged hook install copilot [--mode record] [--uninstall]`: staged's hooks in
/// [`HOOKS_FILE`] (`preToolUse`, and `agentStop` in gate mode, `postToolUse` in record mode),
/// merged into what that file holds, and the MCP server in [`MCP_FILE`], merged likewise.
///
/// # Errors
/// [`InstallError`], before anything is written when a file cannot be merged into.
pub(crate) fn install(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let client = Client::Copilot;
    let hooks_file = WorkspaceFile::new(&target.root, HOOKS_FILE)?;
    let mcp_file = WorkspaceFile::new(&target.root, MCP_FILE)?;
    let (hooks_path, mcp_path) = (hooks_file.path(), mcp_file.path());
    let mut hooks = hooks_file.read_json()?;
    let mut mcp = mcp_file.read_json()?;
    hooks_file.writable()?;
    mcp_file.writable()?;
    remove_hooks(&mut hooks, &hooks_path)?;
    let mut lines = Vec::new();
    if uninstall {
        if let Some(servers) = mcp.get_mut("mcpServers").and_then(Value::as_object_mut) {
            servers.remove(SERVER);
        }
        lines.push(format!("removed staged's hooks from {}", hooks_path.display()));
        lines.push(format!("removed the staged MCP server from {}", mcp_path.display()));
    } else {
        let events: &[&str] = match target.mode {
            Mode::Gate => &["PreToolUse", "Stop"],
            Mode::Record => &["PreToolUse", "PostToolUse"],
        };
        if let Some(object) = hooks.as_object_mut() {
            object.entry("version").or_insert(Value::from(1));
        }
        for ours in events {
            let command = hook_command(&target.hook, client, target.mode, &[], ours);
            let theirs = EVENTS.iter().find(|(_, o)| o == ours).map_or(*ours, |(t, _)| *t);
            let list = object_at(&mut hooks, &["hooks"], &hooks_path)?
                .entry(theirs.to_owned())
                .or_insert_with(|| Value::Array(Vec::new()));
            let Some(list) = list.as_array_mut() else {
                return Err(wrong_shape(
                    &hooks_path,
                    &format!("hooks.{theirs}"),
                    list,
                    "a list of hooks",
                ));
            };
            let hook =
                CopilotHook { bash: &command, timeout_sec: HOOK_TIMEOUT_SECS, kind: "command" };
            list.push(entry_json(hook)?);
        }
        let staged = target.staged.to_string_lossy();
        let server = entry_json(McpServer {
            tools: Some(&["*"]),
            kind: Some("local"),
            ..McpServer::new(&staged, &["mcp"])
        })?;
        object_at(&mut mcp, &["mcpServers"], &mcp_path)?.insert(SERVER.to_owned(), server);
        lines.push(format!(
            "{} mode: hooks for edit and create{} in {}",
            target.mode.name(),
            if target.mode == Mode::Gate { ", and agentStop," } else { ", after and before," },
            hooks_path.display()
        ));
        if target.mode == Mode::Gate {
            lines.push(format!(
                "each hook runs {}; when it cannot run, the hook blocks the edit and says why",
                target.hook.display()
            ));
        }
        lines.push(format!(
            "the staged MCP server in {} (the model calls staged-resolve)",
            mcp_path.display()
        ));
        lines.push(
            "Copilot CLI runs a repository's hooks and MCP servers only in a folder a person trusted (its trust prompt, or --trust-folder for one run); elsewhere it skips them without a word (`staged doctor` checks it)"
                .to_owned(),
        );
    }
    hooks_file.write_json(&hooks)?;
    mcp_file.write_json(&mcp)?;
    Ok(lines)
}

/// Removes staged's hooks (its commands, now or from an older install) from a Copilot hooks
/// file, and the event lists they leave empty; `hooks` that is not an object is refused.
fn remove_hooks(file: &mut Value, path: &Path) -> Result<(), InstallError> {
    let Some(hooks) = file.get_mut("hooks") else { return Ok(()) };
    let Some(events) = hooks.as_object_mut() else {
        return Err(wrong_shape(path, "hooks", hooks, "an object of hook lists"));
    };
    for list in events.values_mut() {
        if let Some(list) = list.as_array_mut() {
            list.retain(|hook| !command_of(hook).is_some_and(|c| is_ours(c, Client::Copilot)));
        }
    }
    events.retain(|_, list| list.as_array().is_none_or(|l| !l.is_empty()));
    Ok(())
}

/// The command a Copilot hook runs on Linux and macOS.
fn command_of(hook: &Value) -> Option<&str> {
    hook.get("bash").or_else(|| hook.get("command")).and_then(Value::as_str)
}

/// `(staged's event name, command)` of each of staged's hooks in a Copilot hooks file.
fn our_commands(file: &Value) -> Vec<(String, String)> {
    let mut res = Vec::new();
    let Some(events) = file.get("hooks").and_then(Value::as_object) else { return res };
    for (event, list) in events {
        let ours = EVENTS.iter().find(|(t, _)| t == event).map_or(event.as_str(), |(_, o)| *o);
        for hook in list.as_array().into_iter().flatten() {
            if let Some(command) = command_of(hook).filter(|c| is_ours(c, Client::Copilot)) {
                res.push((ours.to_owned(), command.to_owned()));
            }
        }
    }
    res
}

/// What `staged doctor` checks for Copilot CLI: `None` when staged's hooks are not installed.
pub(crate) fn doctor(root: &Path, copilot_home: Option<&Path>) -> Option<Vec<Check>> {
    let who = Client::Copilot.display();
    let hooks_file = WorkspaceFile::new(root, HOOKS_FILE).ok()?;
    let hooks = hooks_file.read_json().ok()?;
    let commands = our_commands(&hooks);
    if commands.is_empty() {
        return None;
    }
    let mut checks = Vec::new();
    checks.push(Check::new(
        format!("{who}: hooks for edit and create in {}", hooks_file.path().display()),
        commands
            .iter()
            .any(|(event, _)| event == "PreToolUse")
            .then_some(())
            .ok_or_else(|| "there is no preToolUse hook".to_owned()),
    ));
    let short = hooks
        .get("hooks")
        .and_then(|h| h.get("preToolUse"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|hook| command_of(hook).is_some_and(|c| is_ours(c, Client::Copilot)))
        .any(|hook| {
            hook.get("timeoutSec").and_then(Value::as_u64).unwrap_or(30) < HOOK_TIMEOUT_SECS
        });
    checks.push(Check::new(
        format!("{who}: the preToolUse hook's timeout is above the gate's own"),
        match short {
            true => Err(format!(
                "Copilot CLI runs the edit when a hook outlives its timeoutSec; run `staged hook install copilot` again to set it to {HOOK_TIMEOUT_SECS}"
            )),
            false => Ok(()),
        },
    ));
    checks.extend(older_install_checks(Client::Copilot, &commands, None));
    checks.extend(binary_checks(Client::Copilot, &commands));
    let mcp_file = WorkspaceFile::new(root, MCP_FILE).ok()?;
    let server = mcp_file.read_json().ok().and_then(|m| m.get("mcpServers")?.get(SERVER).cloned());
    checks.push(Check::new(
        format!("{who}: the staged MCP server in {}", mcp_file.path().display()),
        server
            .is_some()
            .then_some(())
            .ok_or_else(|| "it is not there: run `staged hook install copilot`".to_owned()),
    ));
    if let Some(server) = server {
        checks.push(mcp_check(who, &server, root));
    }
    checks.push(Check::warn(format!("{who}: this folder is trusted"), trusts(copilot_home, root)));
    Some(checks)
}

/// Whether Copilot's `config.json` (JSON after `//` comment lines) lists `root`, or a folder
/// above it, in `trustedFolders`.
fn trusts(home: Option<&Path>, root: &Path) -> Result<(), String> {
    let fix = "until a person trusts it (run copilot here once and accept the trust prompt), Copilot CLI skips the repository's hooks and MCP servers without a word, and edits go through ungated";
    let Some(home) = home else { return Err(format!("Copilot CLI's home is unknown; {fix}")) };
    let path = home.join("config.json");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let json: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let config = parse_json(&path, Some(json.into_bytes())).unwrap_or(Value::Null);
    let trusted = config
        .get("trustedFolders")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|folder| root.starts_with(folder));
    match trusted {
        true => Ok(()),
        false => Err(format!("{} does not list it in trustedFolders; {fix}", path.display())),
    }
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
    fn an_edit_becomes_claude_codes_edit_with_a_call_id_its_post_tool_use_shares() {
        let pre = br#"{"sessionId":"s1","timestamp":1,"cwd":"/r","toolName":"edit","toolArgs":{"path":"/r/a.ts","old_str":"a","new_str":"b"}}"#;
        let post = br#"{"sessionId":"s1","timestamp":2,"cwd":"/r","toolName":"edit","toolArgs":{"path":"/r/a.ts","old_str":"a","new_str":"b"},"toolResult":{"resultType":"success","textResultForLlm":"ok"}}"#;
        let pre = parse(pre).unwrap();
        let post = parse(post).unwrap();
        assert_eq!(pre.hook_event_name, "PreToolUse");
        assert_eq!(post.hook_event_name, "PostToolUse");
        assert_eq!(pre.tool_name.as_deref(), Some("Edit"));
        assert_eq!(pre.session_id.as_deref(), Some("s1"));
        assert_eq!(
            pre.tool_input.unwrap(),
            json!({"file_path": "/r/a.ts", "old_string": "a", "new_string": "b"})
        );
        assert_eq!(pre.tool_use_id, post.tool_use_id);
        assert!(pre.tool_use_id.unwrap().starts_with("edit-"));
    }

    #[test]
    fn arguments_sent_as_a_string_are_read_and_create_becomes_write() {
        let pre = br#"{"sessionId":"s","cwd":"/r","toolName":"create","toolArgs":"{\"path\":\"/r/n.ts\",\"file_text\":\"x\"}"}"#;
        let pre = parse(pre).unwrap();
        assert_eq!(pre.tool_name.as_deref(), Some("Write"));
        assert_eq!(pre.tool_input.unwrap(), json!({"file_path": "/r/n.ts", "content": "x"}));
    }

    #[test]
    fn agent_stop_is_a_stop_and_an_event_naming_neither_is_not_read() {
        let stop = parse(
            br#"{"sessionId":"s","cwd":"/r","stopReason":"end_turn","stop_hook_active":true}"#,
        )
        .unwrap();
        assert_eq!(stop.hook_event_name, "Stop");
        assert_eq!(stop.stop_hook_active, Some(true));
        let neither = parse(br#"{"sessionId":"s","cwd":"/r","source":"new"}"#).unwrap_err();
        assert!(neither.contains("neither a tool call"), "{neither}");
        assert!(parse(b"[1]").is_err());
    }

    #[test]
    fn replies_are_copilots_shapes() {
        assert_eq!(
            answer(&Reply::Deny("no".into())).unwrap(),
            json!({"permissionDecision": "deny", "permissionDecisionReason": "no"})
        );
        assert_eq!(
            answer(&Reply::Block("go on".into())).unwrap(),
            json!({"decision": "block", "reason": "go on"})
        );
        assert_eq!(answer(&Reply::Nothing), None);
    }
}
