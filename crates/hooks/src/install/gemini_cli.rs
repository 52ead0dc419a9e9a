//! Gemini CLI's installer and `staged doctor` checks.
//!
//! Everything goes in the workspace's `.gemini/settings.json`, so it acts only here: the hooks
//! (`BeforeTool` for `write_file` and `replace`; `AfterAgent` in gate mode, `AfterTool` in
//! record mode) and the MCP server (`mcpServers.staged`, with `trust: true`: Gemini CLI hides
//! an MCP server's tools from a headless model unless the server is trusted). Gemini CLI reads
//! a workspace's settings only in a folder a person trusted (`trustedFolders.json` in its home,
//! or `GEMINI_CLI_TRUST_WORKSPACE=true`), which `staged doctor` checks.

use std::path::Path;

use serde_json::Value;

use super::{
    InstallError, Mode, SERVER, Target, add_hook,
    doctor::{Check, binary_checks, hook_commands, mcp_check, older_install_checks},
    entries::{McpServer, entry_json},
    files::{WorkspaceFile, read_json},
    hook_command, object_at, remove_hooks,
};
use crate::event::Client;

/// The Gemini CLI tools a hook gates: every tool of Gemini CLI 0.61.0 that edits a file, and
/// its shell (run under staged's wrapper).
pub(super) const MATCHER: &str = "write_file|replace|run_shell_command";

/// Gemini CLI's project settings, relative to the root.
const SETTINGS: &str = ".gemini/settings.json";

pub(super) fn install(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let client = Client::GeminiCli;
    let file = WorkspaceFile::new(&target.root, SETTINGS)?;
    let path = file.path();
    let mut settings = file.read_json()?;
    file.writable()?;
    remove_hooks(&mut settings, client, &path)?;
    let mut lines = Vec::new();
    if uninstall {
        if let Some(servers) = settings.get_mut("mcpServers").and_then(Value::as_object_mut) {
            servers.remove(SERVER);
            if servers.is_empty()
                && let Some(object) = settings.as_object_mut()
            {
                object.remove("mcpServers");
            }
        }
        lines.push(format!("removed staged's hooks and MCP server from {}", path.display()));
    } else {
        // The fail-safe follows the neutral event: `BeforeTool` blocks, `AfterAgent` passes.
        let command = |event| hook_command(&target.hook, client, target.mode, &[], event);
        add_hook(&mut settings, "BeforeTool", Some(MATCHER), &command("PreToolUse"), &path)?;
        match target.mode {
            Mode::Gate => add_hook(&mut settings, "AfterAgent", None, &command("Stop"), &path)?,
            Mode::Record => {
                add_hook(&mut settings, "AfterTool", Some(MATCHER), &command("PostToolUse"), &path)?
            }
        }
        let staged = target.staged.to_string_lossy();
        let server =
            entry_json(McpServer { trust: Some(true), ..McpServer::new(&staged, &["mcp"]) })?;
        object_at(&mut settings, &["mcpServers"], &path)?.insert(SERVER.to_owned(), server);
        lines.push(format!(
            "{} mode: hooks for write_file and replace{} in {}",
            target.mode.name(),
            if target.mode == Mode::Gate { ", and AfterAgent," } else { ", after and before," },
            path.display()
        ));
        if target.mode == Mode::Gate {
            lines.push(format!(
                "each hook runs {}; when it cannot run, the hook blocks the edit and says why",
                target.hook.display()
            ));
        }
        lines.push(format!(
            "the staged MCP server, trusted (its tools reach the model and run without asking), in {}",
            path.display()
        ));
        lines.push(
            "Gemini CLI reads a workspace's settings only in a folder a person trusted: run gemini here once and trust the folder (or set GEMINI_CLI_TRUST_WORKSPACE=true); staged reads its approval mode from general.defaultApprovalMode in settings.json (`staged doctor` says what it read)"
                .to_owned(),
        );
    }
    file.write_json(&settings)?;
    Ok(lines)
}

/// Whether Gemini CLI's `trustedFolders.json` (in `home`, its `.gemini` folder) trusts `root`:
/// `TRUST_FOLDER` for it or an ancestor's `TRUST_PARENT` entry (the folder it names is the
/// parent of one trusted).
fn trusted(root: &Path, home: Option<&Path>) -> Result<(), String> {
    let fix = "until a person trusts this folder in gemini (or GEMINI_CLI_TRUST_WORKSPACE=true is set), Gemini CLI ignores .gemini/settings.json and with it staged's hooks";
    let Some(home) = home else { return Err(format!("Gemini CLI's home is unknown; {fix}")) };
    let file = home.join("trustedFolders.json");
    let Ok(folders) = read_json(&file) else {
        return Err(format!("{} is unreadable; {fix}", file.display()));
    };
    let rule = |path: &Path| folders.get(path.to_string_lossy().as_ref()).and_then(Value::as_str);
    let ok = rule(root) == Some("TRUST_FOLDER")
        || root.ancestors().skip(1).any(|a| rule(a) == Some("TRUST_FOLDER"))
        || root.ancestors().any(|a| {
            rule(a) == Some("TRUST_PARENT") && a.parent().is_some_and(|p| root.starts_with(p))
        });
    if ok { Ok(()) } else { Err(format!("{} does not trust it; {fix}", file.display())) }
}

pub(super) fn doctor(root: &Path, home: Option<&Path>) -> Option<Vec<Check>> {
    let client = Client::GeminiCli;
    let file = WorkspaceFile::new(root, SETTINGS).ok()?;
    let settings = file.read_json().ok()?;
    let commands = hook_commands(&settings, client);
    if commands.is_empty() {
        return None;
    }
    let mut checks = Vec::new();
    let covered = settings
        .pointer("/hooks/BeforeTool")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|group| {
            group.get("hooks").and_then(Value::as_array).into_iter().flatten().any(|h| {
                h.get("command").and_then(Value::as_str).is_some_and(|c| super::is_ours(c, client))
            })
        })
        .filter_map(|group| group.get("matcher").and_then(Value::as_str))
        .flat_map(|m| m.split('|'))
        .collect::<Vec<_>>();
    checks.push(Check::new(
        format!("Gemini CLI: hooks for write_file and replace in {}", file.path().display()),
        MATCHER.split('|').all(|tool| covered.contains(&tool)).then_some(()).ok_or_else(|| {
            format!("there is no BeforeTool hook for {}", MATCHER.replace('|', ", "))
        }),
    ));
    checks.extend(older_install_checks(client, &commands, None));
    checks.extend(binary_checks(client, &commands));
    let server = settings.get("mcpServers").and_then(|s| s.get(SERVER)).cloned();
    checks.push(Check::new(
        format!("Gemini CLI: the staged MCP server in {}", file.path().display()),
        server
            .as_ref()
            .map(|_| ())
            .ok_or_else(|| "it is not there: run `staged hook install gemini-cli`".to_owned()),
    ));
    if let Some(server) = server {
        checks.push(Check::new(
            "Gemini CLI: the staged MCP server is trusted (its tools reach the model)",
            (server.get("trust").and_then(Value::as_bool) == Some(true)).then_some(()).ok_or_else(
                || {
                    "without `trust: true` a headless model never sees resolve; run `staged hook install gemini-cli` again".to_owned()
                },
            ),
        ));
        checks.push(mcp_check("Gemini CLI", &server, root));
    }
    checks.push(Check::warn("Gemini CLI: this folder is trusted", trusted(root, home)));
    Some(checks)
}
