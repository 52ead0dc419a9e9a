//! Qwen Code's installer and `staged doctor` checks.
//!
//! Everything staged needs in the workspace goes in its `.qwen/settings.json`, so it acts only
//! here: the hooks (`PreToolUse` for `write_file`, `edit` and `notebook_edit`; `Stop` in gate
//! mode, `PostToolUse` in record mode) and the MCP server (`mcpServers.staged`, with
//! `trust: true` so that headless `qwen -p` runs its tools without asking). Qwen Code skips a
//! project's MCP server until a person approves it: the approval is a record in the person's
//! `mcpApprovals.json` (in Qwen Code's home, `QWEN_HOME`, else `~/.qwen`; or
//! `QWEN_CODE_MCP_APPROVALS_PATH`), under the workspace's path and the server's name, bound to
//! Qwen Code's hash of the server's configuration ([`approval_hash`]: a changed entry needs
//! approving again). The installer writes that record, reads it back and checks the hash;
//! uninstalling takes the hooks, the server and the record out again.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{
    InstallError, SERVER, Target, add_mode_hooks,
    doctor::{Check, binary_checks, hook_commands, mcp_check, older_install_checks},
    entries::{Approval, McpServer, entry_json},
    files::{WorkspaceFile, read_json, write_json},
    mode_hook_lines, object_at, remove_hooks,
};
use crate::event::Client;

/// The Qwen Code tools a hook gates: every tool of Qwen Code 0.24.4 that edits a file, and its
/// shell (which must run under staged's wrapper).
pub(super) const MATCHER: &str = "write_file|edit|notebook_edit|run_shell_command";

/// Qwen Code's project settings, relative to the root.
const SETTINGS: &str = ".qwen/settings.json";

/// The person's MCP approvals file: `approvals` when given (`QWEN_CODE_MCP_APPROVALS_PATH`),
/// else `mcpApprovals.json` in Qwen Code's home.
pub(super) fn approvals_file(
    home: Option<&Path>,
    approvals: Option<&Path>,
) -> Result<PathBuf, InstallError> {
    approvals
        .map(Path::to_path_buf)
        .or_else(|| home.map(|h| h.join("mcpApprovals.json")))
        .ok_or_else(|| {
            InstallError::Missing("Qwen Code's home is unknown: set QWEN_HOME or HOME".to_owned())
        })
}

/// Qwen Code's hash of an MCP server's configuration: SHA-256 (hex) of its compact JSON with
/// every object's keys sorted, without the fields that do not change what runs (`scope`,
/// `extensionName`, `description`).
pub(super) fn approval_hash(server: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for key in keys {
                    out.insert(key.clone(), sorted(&map[key]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut behavioral = server.clone();
    if let Some(map) = behavioral.as_object_mut() {
        for key in ["scope", "extensionName", "description"] {
            map.remove(key);
        }
    }
    // serde_json writes an object's keys in its map's order; `sorted` rebuilt each map in
    // sorted order, and a compact `to_string` is JSON.stringify's output for these values.
    let text = sorted(&behavioral).to_string();
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn install(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let client = Client::QwenCode;
    let settings_file = WorkspaceFile::new(&target.root, SETTINGS)?;
    let settings_path = settings_file.path();
    let approvals_path =
        approvals_file(target.qwen_home.as_deref(), target.qwen_approvals.as_deref())?;
    let mut settings = settings_file.read_json()?;
    let mut approvals = read_json(&approvals_path)?;
    settings_file.writable()?;
    let root_key = target.root.to_string_lossy().into_owned();
    remove_hooks(&mut settings, client, &settings_path)?;
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
        if let Some(project) = approvals.get_mut(&root_key).and_then(Value::as_object_mut) {
            project.remove(SERVER);
            if project.is_empty()
                && let Some(object) = approvals.as_object_mut()
            {
                object.remove(&root_key);
            }
        }
        lines.push(format!(
            "removed staged's hooks and MCP server from {}",
            settings_path.display()
        ));
        lines.push(format!("removed its approval from {}", approvals_path.display()));
    } else {
        add_mode_hooks(&mut settings, target, client, MATCHER, &settings_path)?;
        let staged = target.staged.to_string_lossy();
        let server =
            entry_json(McpServer { trust: Some(true), ..McpServer::new(&staged, &["mcp"]) })?;
        let hash = approval_hash(&server);
        object_at(&mut settings, &["mcpServers"], &settings_path)?
            .insert(SERVER.to_owned(), server);
        let approval = entry_json(Approval { hash: &hash, status: "approved" })?;
        object_at(&mut approvals, &[&root_key], &approvals_path)?
            .insert(SERVER.to_owned(), approval);
        lines.extend(mode_hook_lines(target, "write_file, edit and notebook_edit", &settings_path));
        lines.push(format!(
            "the staged MCP server, trusted (its tools run without asking), in {}, approved for {} in {}",
            settings_path.display(),
            target.root.display(),
            approvals_path.display()
        ));
    }
    settings_file.write_json(&settings)?;
    write_json(&approvals_path, &approvals)?;
    if !uninstall {
        approved(&settings, &approvals_path, &target.root).map_err(InstallError::Missing)?;
        lines.push(format!(
            "approved: the record's hash checked against the server read back from {}",
            settings_path.display()
        ));
    }
    Ok(lines)
}

/// Whether `approvals_path` approves the staged server `settings` configure, for `root`, with
/// the hash Qwen Code computes.
fn approved(settings: &Value, approvals_path: &Path, root: &Path) -> Result<(), String> {
    let server = settings
        .get("mcpServers")
        .and_then(|s| s.get(SERVER))
        .ok_or("there is no staged MCP server: run `staged hook install qwen-code`")?;
    let approvals = read_json(approvals_path).map_err(|err| err.to_string())?;
    let record = approvals.get(root.to_string_lossy().as_ref()).and_then(|p| p.get(SERVER));
    let hash = approval_hash(server);
    match record {
        Some(r)
            if r.get("hash").and_then(Value::as_str) == Some(hash.as_str())
                && r.get("status").and_then(Value::as_str) == Some("approved") =>
        {
            Ok(())
        }
        _ => Err(format!(
            "{} does not approve it for {} with the hash {hash} of its configuration, so Qwen Code skips it: run `staged hook install qwen-code` again",
            approvals_path.display(),
            root.display()
        )),
    }
}

pub(super) fn doctor(
    root: &Path,
    home: Option<&Path>,
    approvals: Option<&Path>,
) -> Option<Vec<Check>> {
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
    let server = settings.get("mcpServers").and_then(|s| s.get(SERVER)).cloned();
    checks.push(Check::new(
        format!("Qwen Code: the staged MCP server in {}", file.path().display()),
        server
            .as_ref()
            .map(|_| ())
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
        checks.push(Check::new(
            "Qwen Code: the staged MCP server is approved for this workspace",
            approvals_file(home, approvals)
                .map_err(|err| err.to_string())
                .and_then(|path| approved(&settings, &path, root)),
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_approval_hash_is_qwen_codes() {
        // What Qwen Code 0.24.4's hashMcpServerConfig (its code, run in node) gives for it.
        let server = json!({"trust": true, "command": "/usr/bin/staged", "args": ["mcp"], "scope": "workspace"});
        assert_eq!(
            approval_hash(&server),
            "adf78710a186085f7f703ba5f7900d6bf6246e4925b25832ae1e1628d5375889"
        );
    }
}
