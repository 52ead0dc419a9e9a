//! Codex's install (`CODEX_HOME`'s `hooks.json` and `config.toml`, with a trust entry per hook)
//! and its checks in `staged doctor`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::event::{Client, Mode};

use super::{
    HUMAN_GATE_LINE, HUMAN_TOOL_TIMEOUT_SECS, InstallError, SERVER, Target, add_hook,
    doctor::{Check, binary_checks, hook_commands, mcp_command_check, older_install_checks},
    files::{read_json, regular_or_absent, write_json, write_text},
    hook_command, is_ours, parse_ours, remove_hooks, server_args, with_article,
};

/// The Codex tools a hook sees: `Edit|Write` selects `apply_patch`; `Bash`, shell patches.
pub(super) const CODEX_MATCHER: &str = "Edit|Write|Bash";

pub(super) fn install_codex(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let home = target.codex_home.clone().ok_or_else(|| {
        InstallError::Missing("Codex's home is unknown: set CODEX_HOME".to_owned())
    })?;
    let hooks_path = home.join("hooks.json");
    let config_path = home.join("config.toml");
    let mut hooks = read_json(&hooks_path)?;
    let mut config = read_toml(&config_path)?;
    let client = Client::Codex;
    let hooks_key = key_source(&hooks_path);
    // The workspaces the hooks are for now: every one of earlier installs, with this one added
    // (or, uninstalling, taken out). An install from before `--in` gated every folder; its
    // hooks are replaced by ones for this workspace alone.
    let root = target.root.to_string_lossy().into_owned();
    let mut roots: Vec<String> = Vec::new();
    let mut mode = target.mode;
    for (_, command) in hook_commands(&hooks, client) {
        if let Some(ours) = parse_ours(&command, client) {
            if uninstall {
                mode = ours.mode;
            }
            for r in ours.roots {
                if !roots.contains(&r) {
                    roots.push(r);
                }
            }
        }
    }
    let was_there = roots.contains(&root);
    roots.retain(|r| *r != root);
    if !uninstall {
        roots.push(root.clone());
    }
    // Trust entries of the hooks that are ours now go with them.
    for (key, _) in our_handlers(&hooks, &hooks_key, client) {
        remove_state(&mut config, &key, &config_path)?;
    }
    remove_hooks(&mut hooks, client, &hooks_path)?;
    let mut lines = Vec::new();
    if roots.is_empty() {
        if let Some(servers) = config.get_mut("mcp_servers").and_then(|s| s.as_table_like_mut()) {
            servers.remove(SERVER);
        }
        lines.push(format!(
            "removed staged's hooks and their trust from {} and {}",
            hooks_path.display(),
            config_path.display()
        ));
    } else {
        let roots_paths: Vec<PathBuf> = roots.iter().map(PathBuf::from).collect();
        let command = |event| hook_command(&target.hook, client, mode, &roots_paths, event);
        let pre = command("PreToolUse");
        add_hook(&mut hooks, "PreToolUse", Some(CODEX_MATCHER), &pre, &hooks_path)?;
        if mode == Mode::Record {
            let post = command("PostToolUse");
            add_hook(&mut hooks, "PostToolUse", Some(CODEX_MATCHER), &post, &hooks_path)?;
        }
        add_hook(&mut hooks, "Stop", None, &command("Stop"), &hooks_path)?;
        let prompt = command("UserPromptSubmit");
        add_hook(&mut hooks, "UserPromptSubmit", None, &prompt, &hooks_path)?;
        if !uninstall {
            set_mcp_server(&mut config, &target.staged, target.approve_human, &config_path)?;
        }
        for (key, hash) in our_handlers(&hooks, &hooks_key, client) {
            set_state(&mut config, &key, &hash, &config_path)?;
        }
        if uninstall {
            lines.push(if was_there {
                format!("staged's hooks no longer act in {root}")
            } else {
                format!("staged's hooks did not act in {root}; nothing to take out here")
            });
        } else {
            lines.push(format!(
                "{} mode: hooks for apply_patch and shell patches{} in {}",
                mode.name(),
                if mode == Mode::Gate { ", and Stop," } else { ", after and before," },
                hooks_path.display()
            ));
            lines.push(format!(
                "the staged MCP server, with resolve approved, in {}",
                config_path.display()
            ));
            if target.approve_human {
                lines.push(HUMAN_GATE_LINE.to_owned());
                lines.push(format!(
                    "the server's tool_timeout_sec is {HUMAN_TOOL_TIMEOUT_SECS}, so a person has an hour to answer; it serves every folder Codex runs in"
                ));
            }
        }
        lines.push(format!(
            "Codex runs these hooks in every folder; they act only in {} (and the folders inside), and everywhere else let Codex's edits through",
            roots.join(", ")
        ));
        if mode == Mode::Gate && !uninstall {
            lines.push(format!(
                "each hook runs {}; when it cannot run, the hook blocks the edit and says why",
                target.hook.display()
            ));
        }
    }
    write_json(&hooks_path, &hooks)?;
    write_text(&config_path, &config.to_string())?;
    if !roots.is_empty() {
        let checks = check_codex_trust(&home)?;
        lines.push(format!(
            "trusted: {} hook{} recorded in {}, each hash checked against the hook read back from {}",
            checks,
            if checks == 1 { "" } else { "s" },
            config_path.display(),
            hooks_path.display()
        ));
    }
    Ok(lines)
}

/// Codex's hash of one command hook: SHA-256 (hex, `sha256:`-prefixed) of the sorted, compact
/// JSON of `{event_name, matcher, hooks: [handler]}`, with the handler's timeout filled in (600
/// seconds when unset) and no matcher for the events that take none.
pub fn codex_hook_hash(event: &str, matcher: Option<&str>, handler: &Value) -> String {
    let label = event_label(event);
    let mut normalized = Map::new();
    normalized.insert("type".to_owned(), Value::from("command"));
    let command = handler.get("command").cloned().unwrap_or_else(|| Value::from(""));
    normalized.insert("command".to_owned(), command);
    let timeout = handler.get("timeout").and_then(Value::as_u64).unwrap_or(600).max(1);
    normalized.insert("timeout".to_owned(), Value::from(timeout));
    let run_async = handler.get("async").and_then(Value::as_bool).unwrap_or(false);
    normalized.insert("async".to_owned(), Value::from(run_async));
    if let Some(message) = handler.get("statusMessage").filter(|m| !m.is_null()) {
        normalized.insert("statusMessage".to_owned(), message.clone());
    }
    let mut identity = Map::new();
    identity.insert("event_name".to_owned(), Value::from(label));
    if !matches!(event, "Stop" | "UserPromptSubmit")
        && let Some(matcher) = matcher
    {
        identity.insert("matcher".to_owned(), Value::from(matcher));
    }
    identity.insert("hooks".to_owned(), Value::Array(vec![Value::Object(normalized)]));
    // serde_json's maps are sorted by key, and `to_string` is compact.
    let text = Value::Object(identity).to_string();
    let digest = Sha256::digest(text.as_bytes());
    format!("sha256:{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Codex's snake-case name of a hook event.
pub(super) fn event_label(event: &str) -> String {
    let mut res = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                res.push('_');
            }
            res.push(c.to_ascii_lowercase());
        } else {
            res.push(c);
        }
    }
    res
}

/// How Codex names the file of a hook in its trust keys: its absolute path.
pub(super) fn key_source(hooks_path: &Path) -> String {
    let parent = hooks_path.parent().and_then(|p| p.canonicalize().ok());
    match (parent, hooks_path.file_name()) {
        (Some(parent), Some(name)) => parent.join(name).display().to_string(),
        _ => hooks_path.display().to_string(),
    }
}

/// `(trust key, hash)` of each of `client`'s hooks in a `hooks.json`.
pub(super) fn our_handlers(
    hooks: &Value,
    key_source: &str,
    client: Client,
) -> Vec<(String, String)> {
    let mut res = Vec::new();
    let Some(events) = hooks.get("hooks").and_then(Value::as_object) else { return res };
    for (event, groups) in events {
        let Some(groups) = groups.as_array() else { continue };
        for (g, group) in groups.iter().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            let Some(handlers) = group.get("hooks").and_then(Value::as_array) else { continue };
            for (h, handler) in handlers.iter().enumerate() {
                let command = handler.get("command").and_then(Value::as_str).unwrap_or("");
                if is_ours(command, client) {
                    let key = format!("{key_source}:{}:{g}:{h}", event_label(event));
                    res.push((key, codex_hook_hash(event, matcher, handler)));
                }
            }
        }
    }
    res
}

/// Reads `hooks.json` and `config.toml` back and checks every staged hook is trusted with the
/// hash Codex computes for it; returns how many.
///
/// # Errors
/// [`InstallError::Missing`] naming the first hook that is not.
pub(crate) fn check_codex_trust(home: &Path) -> Result<usize, InstallError> {
    let hooks_path = home.join("hooks.json");
    let hooks = read_json(&hooks_path)?;
    let config = read_toml(&home.join("config.toml"))?;
    let ours = our_handlers(&hooks, &key_source(&hooks_path), Client::Codex);
    if ours.is_empty() {
        return Err(InstallError::Missing(format!("no staged hook in {}", hooks_path.display())));
    }
    for (key, hash) in &ours {
        let state = config.get("hooks").and_then(|h| h.get("state")).and_then(|s| s.get(key));
        let trusted = state.and_then(|s| s.get("trusted_hash")).and_then(|h| h.as_str());
        let enabled =
            state.and_then(|s| s.get("enabled")).and_then(|e| e.as_bool()).unwrap_or(true);
        if trusted != Some(hash.as_str()) || !enabled {
            return Err(InstallError::Missing(format!(
                "the hook {key} is not trusted with its hash {hash} (Codex skips it without a word): run `staged hook install codex` again"
            )));
        }
    }
    Ok(ours.len())
}

pub(super) fn set_mcp_server(
    config: &mut toml_edit::DocumentMut,
    staged: &Path,
    approve_human: bool,
    file: &Path,
) -> Result<(), InstallError> {
    let servers = table_at(config, &["mcp_servers"], file)?;
    let mut server = toml_edit::Table::new();
    server.insert("command", toml_edit::value(staged.to_string_lossy().into_owned()));
    let mut args = toml_edit::Array::new();
    for arg in server_args(approve_human) {
        args.push(arg);
    }
    server.insert("args", toml_edit::value(args));
    if approve_human {
        server.insert("tool_timeout_sec", toml_edit::value(HUMAN_TOOL_TIMEOUT_SECS));
    }
    let mut resolve = toml_edit::Table::new();
    resolve.insert("approval_mode", toml_edit::value("approve"));
    let mut tools = toml_edit::Table::new();
    tools.set_implicit(true);
    tools.insert("resolve", toml_edit::Item::Table(resolve));
    server.insert("tools", toml_edit::Item::Table(tools));
    servers.insert(SERVER, toml_edit::Item::Table(server));
    Ok(())
}

pub(super) fn set_state(
    config: &mut toml_edit::DocumentMut,
    key: &str,
    hash: &str,
    file: &Path,
) -> Result<(), InstallError> {
    let state = table_at(config, &["hooks", "state"], file)?;
    let mut entry = toml_edit::Table::new();
    entry.insert("enabled", toml_edit::value(true));
    entry.insert("trusted_hash", toml_edit::value(hash));
    state.insert(key, toml_edit::Item::Table(entry));
    Ok(())
}

pub(super) fn remove_state(
    config: &mut toml_edit::DocumentMut,
    key: &str,
    file: &Path,
) -> Result<(), InstallError> {
    if config.get("hooks").and_then(|h| h.get("state")).is_some() {
        table_at(config, &["hooks", "state"], file)?.remove(key);
    }
    Ok(())
}

/// The table at `path`, made (implicit, so that only its children show) where missing. An
/// inline table becomes a table with the same entries; anything else is refused, naming the
/// key and what is there.
pub(super) fn table_at<'a>(
    config: &'a mut toml_edit::DocumentMut,
    path: &[&str],
    file: &Path,
) -> Result<&'a mut toml_edit::Table, InstallError> {
    let mut table = config.as_table_mut();
    for (i, name) in path.iter().enumerate() {
        let entry = table.entry(name).or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        });
        if entry.is_inline_table() {
            let inline = std::mem::take(entry);
            *entry = match inline.into_table() {
                Ok(table) => toml_edit::Item::Table(table),
                Err(item) => item,
            };
        }
        let found = entry.type_name();
        table = entry.as_table_mut().ok_or_else(|| InstallError::Unreadable {
            path: file.to_path_buf(),
            why: format!(
                "`{}` is {}, where Codex expects a table",
                path[..=i].join("."),
                with_article(found)
            ),
        })?;
    }
    Ok(table)
}

pub(super) fn read_toml(path: &Path) -> Result<toml_edit::DocumentMut, InstallError> {
    regular_or_absent(path)?;
    match std::fs::read_to_string(path) {
        Ok(text) => text.parse().map_err(|err| InstallError::Unreadable {
            path: path.to_path_buf(),
            why: format!("it is not valid TOML ({err})"),
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(toml_edit::DocumentMut::new()),
        Err(err) => {
            Err(InstallError::Unreadable { path: path.to_path_buf(), why: err.to_string() })
        }
    }
}

pub(super) fn doctor_codex(home: &Path, root: &Path) -> Option<Vec<Check>> {
    let hooks_path = home.join("hooks.json");
    let hooks = read_json(&hooks_path).ok()?;
    let commands = hook_commands(&hooks, Client::Codex);
    if commands.is_empty() {
        return None;
    }
    let mut checks = Vec::new();
    checks.push(Check::new(
        format!("Codex: hooks for apply_patch and shell patches in {}", hooks_path.display()),
        commands
            .iter()
            .any(|(event, _)| event == "PreToolUse")
            .then_some(())
            .ok_or_else(|| "there is no PreToolUse hook".to_owned()),
    ));
    checks.push(Check::new(
        "Codex: every staged hook is trusted with the hash Codex computes",
        check_codex_trust(home).map(|_| ()).map_err(|err| err.to_string()),
    ));
    checks.extend(older_install_checks(Client::Codex, &commands, Some(root)));
    checks.extend(binary_checks(Client::Codex, &commands));
    let config = read_toml(&home.join("config.toml")).ok();
    let server = config
        .as_ref()
        .and_then(|c| c.get("mcp_servers")?.get(SERVER)?.as_table_like().map(|_| ()));
    checks.push(Check::new(
        format!("Codex: the staged MCP server in {}", home.join("config.toml").display()),
        server.ok_or_else(|| "it is not there: run `staged hook install codex`".to_owned()),
    ));
    let approved = config.as_ref().and_then(|c| {
        c.get("mcp_servers")?
            .get(SERVER)?
            .get("tools")?
            .get("resolve")?
            .get("approval_mode")?
            .as_str()
            .map(str::to_owned)
    });
    checks.push(Check::new(
        "Codex: resolve is approved for codex exec",
        (approved.as_deref() == Some("approve")).then_some(()).ok_or_else(|| {
            "codex exec would refuse every resolve (approval policy never)".to_owned()
        }),
    ));
    if let Some(config) = &config {
        let command = config
            .get("mcp_servers")
            .and_then(|s| s.get(SERVER))
            .and_then(|s| s.get("command"))
            .and_then(|c| c.as_str())
            .map(str::to_owned);
        if let Some(command) = command {
            let args: Vec<String> = config
                .get("mcp_servers")
                .and_then(|s| s.get(SERVER))
                .and_then(|s| s.get("args"))
                .and_then(|a| a.as_array())
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                .unwrap_or_default();
            checks.push(mcp_command_check("Codex", &command, &args, home));
        }
    }
    Some(checks)
}
