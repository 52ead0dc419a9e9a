//! Qwen Code's installer and `staged doctor` checks.
//!
//! The hooks go in the workspace's `.qwen/settings.json` (`PreToolUse` for `write_file`,
//! `edit` and `notebook_edit`; `Stop` in gate mode, `PostToolUse` in record mode), so they act
//! only here. The MCP server goes in the person's own `settings.json` in Qwen Code's home
//! (`QWEN_HOME`, else `~/.qwen`), with `trust: true` so that headless `qwen -p` runs its tools
//! without asking: Qwen Code skips a project's MCP servers until a person approves them, and
//! not a user's. In every other folder the server only offers staged's tools; nothing is
//! gated there. Uninstalling takes out this workspace's hooks and the server (a workspace
//! installed elsewhere then needs `staged hook install qwen-code` again).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{
    Check, InstallError, Mode, SERVER, Target, WorkspaceFile, add_hook, binary_checks,
    hook_command, hook_commands, mcp_check, object_at, older_install_checks, read_json,
    remove_hooks, write_json,
};
use crate::event::Client;

/// The Qwen Code tools a hook gates: every tool of Qwen Code 0.24.4 that edits a file.
pub(super) const MATCHER: &str = "write_file|edit|notebook_edit";

/// Qwen Code's project settings, relative to the root.
const SETTINGS: &str = ".qwen/settings.json";

/// The person's Qwen Code settings, where the MCP server goes.
fn user_settings(target_home: Option<&Path>) -> Result<PathBuf, InstallError> {
    target_home.map(|home| home.join("settings.json")).ok_or_else(|| {
        InstallError::Missing("Qwen Code's home is unknown: set QWEN_HOME or HOME".to_owned())
    })
}

pub(super) fn install(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let client = Client::QwenCode;
    let settings_file = WorkspaceFile::new(&target.root, SETTINGS)?;
    let settings_path = settings_file.path();
    let user_path = user_settings(target.qwen_home.as_deref())?;
    let mut settings = settings_file.read_json()?;
    let mut user = read_json(&user_path)?;
    settings_file.writable()?;
    remove_hooks(&mut settings, client, &settings_path)?;
    let mut lines = Vec::new();
    if uninstall {
        if let Some(servers) = user.get_mut("mcpServers").and_then(Value::as_object_mut) {
            servers.remove(SERVER);
        }
        lines.push(format!("removed staged's hooks from {}", settings_path.display()));
        lines.push(format!(
            "removed the staged MCP server from {} (another workspace with staged's Qwen Code hooks needs `staged hook install qwen-code` there again)",
            user_path.display()
        ));
    } else {
        let command = |event| hook_command(&target.staged, client, target.mode, &[], event);
        add_hook(
            &mut settings,
            "PreToolUse",
            Some(MATCHER),
            &command("PreToolUse"),
            &settings_path,
        )?;
        match target.mode {
            Mode::Gate => add_hook(&mut settings, "Stop", None, &command("Stop"), &settings_path)?,
            Mode::Record => add_hook(
                &mut settings,
                "PostToolUse",
                Some(MATCHER),
                &command("PostToolUse"),
                &settings_path,
            )?,
        }
        let server = json!({
            "command": target.staged.to_string_lossy(),
            "args": ["mcp"],
            "trust": true,
        });
        object_at(&mut user, &["mcpServers"], &user_path)?.insert(SERVER.to_owned(), server);
        lines.push(format!(
            "{} mode: hooks for write_file, edit and notebook_edit{} in {}",
            target.mode.name(),
            if target.mode == Mode::Gate { ", and Stop," } else { ", after and before," },
            settings_path.display()
        ));
        if target.mode == Mode::Gate {
            lines.push(format!(
                "each hook runs {}; when it cannot run, the hook blocks the edit and says why",
                target.staged.display()
            ));
        }
        lines.push(format!(
            "the staged MCP server, trusted (its tools run without asking), in {}: Qwen Code skips a project's MCP servers until a person approves them, so it is the person's own; in other folders it only offers staged's tools",
            user_path.display()
        ));
    }
    settings_file.write_json(&settings)?;
    write_json(&user_path, &user)?;
    Ok(lines)
}

pub(super) fn doctor(root: &Path, home: Option<&Path>) -> Option<Vec<Check>> {
    let client = Client::QwenCode;
    let file = WorkspaceFile::new(root, SETTINGS).ok()?;
    let settings = file.read_json().ok()?;
    let commands = hook_commands(&settings, client);
    if commands.is_empty() {
        return None;
    }
    let mut checks = Vec::new();
    checks.push(Check::new(
        format!(
            "Qwen Code: hooks for write_file, edit and notebook_edit in {}",
            file.path().display()
        ),
        matcher_covers(&settings).then_some(()).ok_or_else(|| {
            format!("there is no PreToolUse hook for {}", MATCHER.replace('|', ", "))
        }),
    ));
    checks.extend(older_install_checks(client, &commands, None));
    checks.extend(binary_checks(client, &commands));
    let user_path = user_settings(home).ok();
    let server = user_path
        .as_deref()
        .and_then(|path| read_json(path).ok())
        .and_then(|user| user.get("mcpServers")?.get(SERVER).cloned());
    let shown = user_path
        .as_deref()
        .map_or_else(|| "Qwen Code's home".to_owned(), |p| p.display().to_string());
    checks.push(Check::new(
        format!("Qwen Code: the staged MCP server in {shown}"),
        server
            .is_some()
            .then_some(())
            .ok_or_else(|| "it is not there: run `staged hook install qwen-code`".to_owned()),
    ));
    if let Some(server) = server {
        checks.push(Check::new(
            "Qwen Code: the staged MCP server is trusted (qwen -p runs resolve without asking)",
            (server.get("trust").and_then(Value::as_bool) == Some(true))
                .then_some(())
                .ok_or_else(|| {
                    "without `trust: true` headless qwen -p refuses resolve; run `staged hook install qwen-code` again".to_owned()
                }),
        ));
        checks.push(mcp_check("Qwen Code", &server, root));
    }
    Some(checks)
}

/// Whether staged's `PreToolUse` hooks see every tool of [`MATCHER`].
fn matcher_covers(settings: &Value) -> bool {
    let groups = settings.pointer("/hooks/PreToolUse").and_then(Value::as_array);
    let matched: Vec<&str> = groups
        .into_iter()
        .flatten()
        .filter(|group| {
            group.get("hooks").and_then(Value::as_array).into_iter().flatten().any(|handler| {
                handler
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|command| super::is_ours(command, Client::QwenCode))
            })
        })
        .filter_map(|group| group.get("matcher").and_then(Value::as_str))
        .flat_map(|matcher| matcher.split('|'))
        .collect();
    MATCHER.split('|').all(|tool| matched.contains(&tool))
}
