//! `staged hook install cursor`: the hooks in the project's `.cursor/hooks.json` and the MCP
//! server in `.cursor/mcp.json`, merged into what is there, in the shapes Cursor's hooks
//! reference (<https://cursor.com/docs/hooks>) and MCP page give: `{"version": 1, "hooks":
//! {"<event>": [{"command": ..., "matcher": ...}]}}`, a flat list of handlers per event (not
//! Claude Code's groups), and `{"mcpServers": {"staged": {"command", "args"}}}`.
//!
//! Gate mode: `preToolUse` for `Write|StrReplace|Edit` and `stop`; record mode: `preToolUse`
//! and `postToolUse`. The commands are the ones Claude Code's hooks run, with `cursor` as the
//! client: a gate's `preToolUse` ends with the fail-safe that exits 2 (a block in Cursor, as
//! in Claude Code) when `staged` cannot run.

use std::path::Path;

use serde_json::Value;

use super::{
    InstallError, SERVER, Target,
    doctor::{Check, executable, mcp_check, on_path},
    entries::{CursorHook, McpServer, entry_json},
    files::WorkspaceFile,
    hook_command, is_ours, object_at, parse_ours, wrong_shape,
};
use crate::event::{Client, Mode};

/// The hooks, relative to the root.
pub(crate) const HOOKS: &str = ".cursor/hooks.json";

/// The MCP servers, relative to the root.
const MCP: &str = ".cursor/mcp.json";

/// The Cursor tools the hooks gate.
pub(crate) const MATCHER: &str = "Write|StrReplace|Edit";

/// Takes staged's handlers out of every event's list (an event left empty goes).
fn remove_ours(hooks: &mut Value, file: &Path) -> Result<(), InstallError> {
    let Some(events) = hooks.get_mut("hooks") else { return Ok(()) };
    let Some(events) = events.as_object_mut() else {
        return Err(wrong_shape(file, "hooks", events, "an object of hook lists"));
    };
    for handlers in events.values_mut() {
        if let Some(list) = handlers.as_array_mut() {
            list.retain(|h| {
                !h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_ours(c, Client::Cursor))
            });
        }
    }
    events.retain(|_, handlers| handlers.as_array().is_none_or(|l| !l.is_empty()));
    Ok(())
}

fn add(hooks: &mut Value, event: &str, handler: Value, file: &Path) -> Result<(), InstallError> {
    let events = object_at(hooks, &["hooks"], file)?;
    let list = events.entry(event.to_owned()).or_insert_with(|| Value::Array(Vec::new()));
    let Some(list) = list.as_array_mut() else {
        return Err(wrong_shape(file, &format!("hooks.{event}"), list, "a list of hooks"));
    };
    list.push(handler);
    Ok(())
}

pub(super) fn install(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let hooks_file = WorkspaceFile::new(&target.root, HOOKS)?;
    let mcp_file = WorkspaceFile::new(&target.root, MCP)?;
    let mut hooks = hooks_file.read_json()?;
    let mut mcp = mcp_file.read_json()?;
    hooks_file.writable()?;
    mcp_file.writable()?;
    let (hooks_path, mcp_path) = (hooks_file.path(), mcp_file.path());
    remove_ours(&mut hooks, &hooks_path)?;
    let mut lines = Vec::new();
    if uninstall {
        if let Some(servers) = mcp.get_mut("mcpServers").and_then(Value::as_object_mut) {
            servers.remove(SERVER);
        }
        lines.push(format!("removed staged's hooks from {}", hooks_path.display()));
        lines.push(format!("removed the staged MCP server from {}", mcp_path.display()));
    } else {
        if let Some(object) = hooks.as_object_mut() {
            object.entry("version").or_insert(Value::from(1));
        }
        let command = |event| hook_command(&target.hook, Client::Cursor, target.mode, &[], event);
        let hook = |command: &str, matcher| entry_json(CursorHook { command, matcher });
        let pre = hook(&command("PreToolUse"), Some(MATCHER))?;
        add(&mut hooks, "preToolUse", pre, &hooks_path)?;
        match target.mode {
            Mode::Gate => add(&mut hooks, "stop", hook(&command("Stop"), None)?, &hooks_path)?,
            Mode::Record => {
                let post = hook(&command("PostToolUse"), Some(MATCHER))?;
                add(&mut hooks, "postToolUse", post, &hooks_path)?
            }
        }
        let staged = target.staged.to_string_lossy();
        let server = entry_json(McpServer::new(&staged, &["mcp"]))?;
        object_at(&mut mcp, &["mcpServers"], &mcp_path)?.insert(SERVER.to_owned(), server);
        lines.push(format!(
            "{} mode: hooks for Write, StrReplace and Edit{} in {}",
            target.mode.name(),
            if target.mode == Mode::Gate { ", and stop," } else { ", before and after," },
            hooks_path.display()
        ));
        lines.push(format!("the staged MCP server in {}", mcp_path.display()));
        lines.push(
            "Cursor also runs the Claude Code hooks in .claude/settings.json: with both installed, staged's Cursor hook answers and its Claude Code hook stands aside, so an edit is staged once"
                .to_owned(),
        );
    }
    hooks_file.write_json(&hooks)?;
    mcp_file.write_json(&mcp)?;
    Ok(lines)
}

/// staged's commands in a hooks file, by event.
fn ours(hooks: &Value) -> Vec<(String, String)> {
    let mut res = Vec::new();
    let Some(events) = hooks.get("hooks").and_then(Value::as_object) else { return res };
    for (event, list) in events {
        for handler in list.as_array().into_iter().flatten() {
            if let Some(command) = handler.get("command").and_then(Value::as_str)
                && is_ours(command, Client::Cursor)
            {
                res.push((event.clone(), command.to_owned()));
            }
        }
    }
    res
}

/// Whether staged's Cursor `preToolUse` hook is in `root`'s `.cursor/hooks.json`.
pub(crate) fn installed(root: &Path) -> bool {
    WorkspaceFile::new(root, HOOKS)
        .and_then(|file| file.read_json())
        .is_ok_and(|hooks| ours(&hooks).iter().any(|(event, _)| event == "preToolUse"))
}

/// What `staged doctor` checks for Cursor; `None` when staged's hooks are not installed.
pub(super) fn doctor(root: &Path) -> Option<Vec<Check>> {
    let hooks_file = WorkspaceFile::new(root, HOOKS).ok()?;
    let hooks = hooks_file.read_json().ok()?;
    let commands = ours(&hooks);
    if commands.is_empty() {
        return None;
    }
    let mut checks = vec![Check::new(
        format!("Cursor: hooks for Write, StrReplace and Edit in {}", hooks_file.path().display()),
        commands
            .iter()
            .any(|(event, _)| event == "preToolUse")
            .then_some(())
            .ok_or_else(|| "there is no preToolUse hook".to_owned()),
    )];
    let mut seen = Vec::new();
    for (_, command) in &commands {
        let Some(binary) = parse_ours(command, Client::Cursor).map(|o| o.binary) else { continue };
        if seen.contains(&binary) {
            continue;
        }
        let result =
            if binary.contains('/') { executable(Path::new(&binary)) } else { on_path(&binary) };
        checks.push(Check::new(format!("Cursor: the hook runs {binary}"), result));
        seen.push(binary);
    }
    let mcp_file = WorkspaceFile::new(root, MCP).ok()?;
    let server = mcp_file.read_json().ok().and_then(|m| m.get("mcpServers")?.get(SERVER).cloned());
    checks.push(Check::new(
        format!("Cursor: the staged MCP server in {}", mcp_file.path().display()),
        server
            .is_some()
            .then_some(())
            .ok_or_else(|| "it is not there: run `staged hook install cursor`".to_owned()),
    ));
    if let Some(server) = server {
        checks.push(mcp_check("Cursor", &server, root));
    }
    Some(checks)
}
