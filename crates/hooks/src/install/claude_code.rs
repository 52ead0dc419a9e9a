//! Claude Code's install (the workspace's own `.claude/settings.json` or `settings.local.json`,
//! `.mcp.json`) and its checks in `staged doctor`.

use std::path::Path;

use serde_json::Value;

use crate::event::Client;

use super::{
    HUMAN_GATE_LINE, InstallError, SERVER, Target, add_hook, add_mode_hooks, add_to_array,
    doctor::{Check, binary_checks, hook_commands, mcp_check, older_install_checks},
    entries::{McpServer, entry_json},
    files::{WorkspaceFile, read_json, write_json},
    hook_command, is_ours, mode_hook_lines, object_at, remove_from_array, remove_hooks,
    server_args,
};

/// The Claude Code tools a hook gates: every tool of Claude Code 2.1.197 that edits a file
/// (`crates/mcp/tests/clients/test_hooks.py` compares the tools the client offers with it).
pub(super) const CLAUDE_MATCHER: &str = "Edit|Write|MultiEdit|NotebookEdit|Bash";

/// What an install of Claude Code's hooks says it did.
fn installed_lines(
    target: &Target,
    settings_path: &Path,
    mcp_path: &Path,
    config_path: Option<&Path>,
) -> Vec<String> {
    let mut lines = mode_hook_lines(target, "Edit, MultiEdit and Write", settings_path);
    match config_path {
        Some(path) => lines.push(format!(
            "the staged MCP server in {} (Claude Code's local scope for {}), approved in {} (permissions.allow mcp__staged)",
            path.display(),
            target.root.display(),
            settings_path.display()
        )),
        None => lines.push(format!(
            "the staged MCP server in {}, approved in {} (enabledMcpjsonServers, permissions.allow mcp__staged)",
            mcp_path.display(),
            settings_path.display()
        )),
    }
    if target.approve_human {
        lines.push(HUMAN_GATE_LINE.to_owned());
    }
    lines.push(
        "Claude Code applies a project's permissions only in a folder a person trusted: run claude here once and accept the trust dialog, or headless claude -p refuses mcp__staged__resolve (`staged doctor` checks it)"
            .to_owned(),
    );
    lines
}

pub(super) fn install_claude(
    target: &Target,
    uninstall: bool,
) -> Result<Vec<String>, InstallError> {
    let (here, there) = if target.local {
        (CLAUDE_LOCAL_SETTINGS, CLAUDE_SETTINGS)
    } else {
        (CLAUDE_SETTINGS, CLAUDE_LOCAL_SETTINGS)
    };
    let settings_file = WorkspaceFile::new(&target.root, here)?;
    let other_file = WorkspaceFile::new(&target.root, there)?;
    let mcp_file = WorkspaceFile::new(&target.root, MCP_JSON)?;
    let (settings_path, mcp_path) = (settings_file.path(), mcp_file.path());
    let mut settings = settings_file.read_json()?;
    let mut other = other_file.read_json()?;
    let mut mcp = mcp_file.read_json()?;
    let (other_before, mcp_before) = (other.clone(), mcp.clone());
    let config_path = match (target.local, &target.claude_config) {
        (false, _) => None,
        (true, Some(path)) => Some(path.clone()),
        (true, None) => {
            return Err(InstallError::Missing(
                "Claude Code's config is unknown: set CLAUDE_CONFIG_DIR or HOME".to_owned(),
            ));
        }
    };
    let mut config = config_path.as_deref().map(read_json).transpose()?;
    // Every file is checked writable before any is written.
    settings_file.writable()?;
    other_file.writable()?;
    mcp_file.writable()?;
    let client = Client::ClaudeCode;
    let root_key = target.root.to_string_lossy().into_owned();
    let mut lines = Vec::new();
    remove_hooks(&mut settings, client, &settings_path)?;
    // One set of staged's hooks: the other settings file's go (an install moved between them).
    remove_hooks(&mut other, client, &other_file.path())?;
    if target.local && !uninstall {
        // The local install replaces the committed server and its approval.
        remove_from_array(&mut other, &["enabledMcpjsonServers"], SERVER);
        if let Some(servers) = mcp.get_mut("mcpServers").and_then(Value::as_object_mut) {
            servers.remove(SERVER);
        }
    }
    if uninstall {
        remove_from_array(&mut settings, &["enabledMcpjsonServers"], SERVER);
        remove_from_array(&mut settings, &["permissions", "allow"], &format!("mcp__{SERVER}"));
        if target.local {
            if let Some(config) = &mut config
                && let Some(servers) = config
                    .get_mut("projects")
                    .and_then(|p| p.get_mut(&root_key))
                    .and_then(|p| p.get_mut("mcpServers"))
                    .and_then(Value::as_object_mut)
            {
                servers.remove(SERVER);
            }
        } else if let Some(servers) = mcp.get_mut("mcpServers").and_then(Value::as_object_mut) {
            servers.remove(SERVER);
        }
        lines.push(format!("removed staged's hooks from {}", settings_path.display()));
        lines.push(format!(
            "removed the staged MCP server from {}",
            config_path.as_deref().unwrap_or(&mcp_path).display()
        ));
    } else {
        add_mode_hooks(&mut settings, target, client, CLAUDE_MATCHER, &settings_path)?;
        // A prompt titles the session and carries a person's notices to the model.
        let prompt = hook_command(&target.hook, client, target.mode, &[], "UserPromptSubmit");
        add_hook(&mut settings, "UserPromptSubmit", None, &prompt, &settings_path)?;
        let allow = format!("mcp__{SERVER}");
        add_to_array(&mut settings, &["permissions", "allow"], &allow, &settings_path)?;
        let staged = target.staged.to_string_lossy();
        let args = server_args(target.approve_human);
        let server = McpServer::new(&staged, &args);
        match (&mut config, &config_path) {
            (Some(config), Some(path)) => {
                let server = entry_json(McpServer { kind: Some("stdio"), ..server })?;
                object_at(config, &["projects", &root_key, "mcpServers"], path)?
                    .insert(SERVER.to_owned(), server);
            }
            _ => {
                add_to_array(&mut settings, &["enabledMcpjsonServers"], SERVER, &settings_path)?;
                let server = entry_json(server)?;
                object_at(&mut mcp, &["mcpServers"], &mcp_path)?.insert(SERVER.to_owned(), server);
            }
        }
        lines.extend(installed_lines(target, &settings_path, &mcp_path, config_path.as_deref()));
    }
    settings_file.write_json(&settings)?;
    if other != other_before {
        other_file.write_json(&other)?;
        lines.push(format!("removed staged's earlier hooks from {}", other_file.path().display()));
    }
    if mcp != mcp_before || !target.local {
        mcp_file.write_json(&mcp)?;
    }
    if let (Some(config), Some(path)) = (&config, &config_path) {
        write_json(path, config)?;
    }
    Ok(lines)
}

/// Claude Code's project settings, relative to the root.
pub(super) const CLAUDE_SETTINGS: &str = ".claude/settings.json";

/// Claude Code's local project settings (a person's own, not committed), relative to the root.
pub(super) const CLAUDE_LOCAL_SETTINGS: &str = ".claude/settings.local.json";

/// The project's MCP servers (Claude Code), relative to the root.
pub(super) const MCP_JSON: &str = ".mcp.json";

/// Whether Claude Code's config records `root` as trusted: until a person accepts the trust
/// dialog there, Claude Code runs the project's hooks but ignores its permission rules, so
/// headless `claude -p` refuses `mcp__staged__resolve`.
pub(super) fn claude_trusts(config: Option<&Path>, root: &Path) -> Result<(), String> {
    let fix = "until you run claude in this folder once and accept the trust dialog, headless claude -p ignores the project's permissions and refuses mcp__staged__resolve";
    let Some(config) = config else {
        return Err(format!("Claude Code's config is unknown; {fix}"));
    };
    let Ok(value) = read_json(config) else {
        return Err(format!("{} is unreadable; {fix}", config.display()));
    };
    let trusted = |path: &Path| {
        value
            .get("projects")
            .and_then(|p| p.get(path.to_string_lossy().as_ref()))
            .and_then(|p| p.get("hasTrustDialogAccepted"))
            .and_then(Value::as_bool)
            == Some(true)
    };
    if root.ancestors().any(trusted) {
        Ok(())
    } else {
        Err(format!("{} does not record it; {fix}", config.display()))
    }
}

pub(super) fn doctor_claude(root: &Path, claude_config: Option<&Path>) -> Option<Vec<Check>> {
    // The local settings (a person's own), else the project's.
    let (settings_path, settings, commands, local) =
        [(CLAUDE_LOCAL_SETTINGS, true), (CLAUDE_SETTINGS, false)].into_iter().find_map(
            |(rel, local)| {
                let file = WorkspaceFile::new(root, rel).ok()?;
                let settings = file.read_json().ok()?;
                let commands = hook_commands(&settings, Client::ClaudeCode);
                (!commands.is_empty()).then(|| (file.path(), settings, commands, local))
            },
        )?;
    let mut checks = Vec::new();
    checks.push(Check::new(
        format!("Claude Code: hooks for Edit, MultiEdit and Write in {}", settings_path.display()),
        commands
            .iter()
            .any(|(event, _)| event == "PreToolUse")
            .then_some(())
            .ok_or_else(|| "there is no PreToolUse hook".to_owned()),
    ));
    checks.extend(older_install_checks(Client::ClaudeCode, &commands, None));
    checks.push(claude_matcher_check(&settings));
    checks.extend(binary_checks(Client::ClaudeCode, &commands));
    let local_server = claude_config.and_then(|path| read_json(path).ok()).and_then(|c| {
        c.get("projects")?
            .get(root.to_string_lossy().as_ref())?
            .get("mcpServers")?
            .get(SERVER)
            .cloned()
    });
    let server = if local {
        let path = claude_config
            .map_or_else(|| "Claude Code's config".to_owned(), |p| p.display().to_string());
        checks.push(Check::new(
            format!("Claude Code: the staged MCP server in {path} (local scope)"),
            local_server.is_some().then_some(()).ok_or_else(|| {
                "it is not there: run `staged hook install claude-code --local`".to_owned()
            }),
        ));
        local_server
    } else {
        let mcp_file = WorkspaceFile::new(root, MCP_JSON).ok()?;
        let mcp_path = mcp_file.path();
        let server =
            mcp_file.read_json().ok().and_then(|m| m.get("mcpServers")?.get(SERVER).cloned());
        checks.push(Check::new(
            format!("Claude Code: the staged MCP server in {}", mcp_path.display()),
            server
                .is_some()
                .then_some(())
                .ok_or_else(|| "it is not there: run `staged hook install claude-code`".to_owned()),
        ));
        let enabled = settings
            .get("enabledMcpjsonServers")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(SERVER)))
            || settings.get("enableAllProjectMcpServers").and_then(Value::as_bool) == Some(true);
        checks.push(Check::new(
            "Claude Code: the project's MCP server is approved (enabledMcpjsonServers)",
            enabled.then_some(()).ok_or_else(|| "claude -p will not load it".to_owned()),
        ));
        server
    };
    if let Some(server) = server {
        checks.push(mcp_check("Claude Code", &server, root));
    }
    checks.push(Check::warn(
        "Claude Code: this folder is trusted",
        claude_trusts(claude_config, root),
    ));
    Some(checks)
}

/// Every tool [`CLAUDE_MATCHER`] names reaches staged's `PreToolUse` hook: an older install
/// (`Edit|Write|MultiEdit`) lets NotebookEdit through, and installing again fixes it.
pub(super) fn claude_matcher_check(settings: &Value) -> Check {
    let groups = settings.pointer("/hooks/PreToolUse").and_then(Value::as_array);
    let matched: Vec<&str> = groups
        .into_iter()
        .flatten()
        .filter(|group| {
            group.get("hooks").and_then(Value::as_array).into_iter().flatten().any(|handler| {
                handler
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|command| is_ours(command, Client::ClaudeCode))
            })
        })
        .filter_map(|group| group.get("matcher").and_then(Value::as_str))
        .flat_map(|matcher| matcher.split('|'))
        .collect();
    let missed: Vec<&str> =
        CLAUDE_MATCHER.split('|').filter(|tool| !matched.contains(tool)).collect();
    Check::new(
        format!(
            "Claude Code: the hook sees every editing tool ({})",
            CLAUDE_MATCHER.replace('|', ", ")
        ),
        match missed.is_empty() {
            true => Ok(()),
            false => Err(format!(
                "an older install, whose hook does not see {}: those edits are not gated; run `staged hook install claude-code` again",
                missed.join(", ")
            )),
        },
    )
}
