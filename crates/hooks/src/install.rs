//! `staged hook install claude-code|codex [--mode gate|record] [--uninstall]`: writes what each
//! client needs, merged into what is there (a user's other hooks and settings are kept), and
//! the checks of `staged doctor`.
//!
//! - **Claude Code** (the workspace's own files): the hooks in `.claude/settings.json`
//!   (`PreToolUse` for Edit, MultiEdit and Write; `Stop` in gate mode, `PostToolUse` in record
//!   mode), the MCP server in `.mcp.json`, and its approval (`enabledMcpjsonServers`, and
//!   `mcp__staged` in `permissions.allow`, so headless `claude -p` loads it and may call
//!   `resolve`).
//! - **Codex** (`CODEX_HOME`): the hooks in `hooks.json` (`PreToolUse` for `Edit|Write|Bash`,
//!   which selects `apply_patch` and shell patches), the MCP server in `config.toml` with
//!   `resolve` approved, and a trust entry per hook (`[hooks.state."<hooks.json>:<event>:<group>:
//!   <handler>"]` with `trusted_hash`), without which Codex skips a hook silently. The hash is
//!   Codex's: SHA-256 of the hook's normalized definition (its event, matcher and handler, with
//!   the timeout filled in, as sorted, compact JSON); the installer reads the files back and
//!   checks every hash before it says the hooks are trusted.
//!
//! The workspace's files are an attacker's as much as the user's: they are read and written
//! through `staged-fs`, never through a symlink and never outside the root, and a FIFO or
//! anything else that is not a regular file is refused, not waited on. Codex's home is the
//! user's own (its files may be symlinks a dotfiles manager made), but there too only regular
//! files are read.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use staged_fs::{NewFileMode, RelPath, Root};

use crate::event::{Client, Mode};

/// The Claude Code tools a hook gates: every tool of Claude Code 2.1.197 that edits a file
/// (`crates/mcp/tests/clients/test_hooks.py` compares the tools the client offers with it).
const CLAUDE_MATCHER: &str = "Edit|Write|MultiEdit|NotebookEdit";

/// The Codex tools a hook sees: `Edit|Write` selects `apply_patch`; `Bash`, shell patches.
const CODEX_MATCHER: &str = "Edit|Write|Bash";

/// The MCP server's name, in both clients.
const SERVER: &str = "staged";

/// What to install, and where.
#[derive(Debug, Clone)]
pub struct Target {
    /// The client.
    pub client: Client,
    /// Gate or record.
    pub mode: Mode,
    /// The `staged` binary the hooks and the MCP server run (absolute).
    pub staged: PathBuf,
    /// The workspace root (Claude Code's files go there).
    pub root: PathBuf,
    /// Codex's home (`CODEX_HOME`, else `~/.codex`).
    pub codex_home: Option<PathBuf>,
}

/// Why an install could not be done; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A file to merge into is not what it should be.
    #[error("{path}: {why}; nothing was changed")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {why}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        why: String,
    },
    /// Something needed is missing.
    #[error("{0}")]
    Missing(String),
}

/// Installs (or, with `uninstall`, removes) `target`'s hooks and MCP server. Returns one line
/// per thing done, for a person.
///
/// # Errors
/// [`InstallError`], before anything is written when a file cannot be merged into.
pub fn install(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    match target.client {
        Client::ClaudeCode => install_claude(target, uninstall),
        Client::Codex => install_codex(target, uninstall),
    }
}

/// The command a client runs for the hook.
pub fn hook_command(staged: &Path, client: Client, mode: Mode) -> String {
    let mut res = format!("{} hook {}", shell_quote(&staged.to_string_lossy()), client.name());
    if mode == Mode::Record {
        res.push_str(" --mode record");
    }
    res
}

/// Whether a hook command is one `staged hook install` wrote for `client`.
fn is_ours(command: &str, client: Client) -> bool {
    let suffix = format!(" hook {}", client.name());
    command.ends_with(&suffix) || command.ends_with(&format!("{suffix} --mode record"))
}

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+@%:,".contains(&b)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

// --- Claude Code --------------------------------------------------------------------------

fn install_claude(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let settings_file = WorkspaceFile::new(&target.root, CLAUDE_SETTINGS)?;
    let mcp_file = WorkspaceFile::new(&target.root, MCP_JSON)?;
    let (settings_path, mcp_path) = (settings_file.path(), mcp_file.path());
    let mut settings = settings_file.read_json()?;
    let mut mcp = mcp_file.read_json()?;
    // Both are checked writable before either is written.
    settings_file.writable()?;
    mcp_file.writable()?;
    let client = Client::ClaudeCode;
    let mut lines = Vec::new();
    remove_hooks(&mut settings, client);
    if uninstall {
        remove_from_array(&mut settings, &["enabledMcpjsonServers"], SERVER);
        remove_from_array(&mut settings, &["permissions", "allow"], &format!("mcp__{SERVER}"));
        if let Some(servers) = mcp.get_mut("mcpServers").and_then(Value::as_object_mut) {
            servers.remove(SERVER);
        }
        lines.push(format!("removed staged's hooks from {}", settings_path.display()));
        lines.push(format!("removed the staged MCP server from {}", mcp_path.display()));
    } else {
        let command = hook_command(&target.staged, client, target.mode);
        add_hook(&mut settings, "PreToolUse", Some(CLAUDE_MATCHER), &command);
        match target.mode {
            Mode::Gate => add_hook(&mut settings, "Stop", None, &command),
            Mode::Record => add_hook(&mut settings, "PostToolUse", Some(CLAUDE_MATCHER), &command),
        }
        add_to_array(&mut settings, &["enabledMcpjsonServers"], SERVER);
        add_to_array(&mut settings, &["permissions", "allow"], &format!("mcp__{SERVER}"));
        object_at(&mut mcp, &["mcpServers"]).insert(
            SERVER.to_owned(),
            json!({"command": target.staged.to_string_lossy(), "args": ["mcp"]}),
        );
        lines.push(format!(
            "{} mode: hooks for Edit, MultiEdit and Write{} in {}",
            target.mode.name(),
            if target.mode == Mode::Gate { ", and Stop," } else { ", after and before," },
            settings_path.display()
        ));
        lines.push(format!(
            "the staged MCP server in {}, approved in {} (enabledMcpjsonServers, permissions.allow mcp__staged)",
            mcp_path.display(),
            settings_path.display()
        ));
        lines.push(
            "Claude Code applies a project's permissions only in a folder a person trusted: run claude here once and accept the trust dialog, or headless claude -p refuses mcp__staged__resolve (`staged doctor` checks it)"
                .to_owned(),
        );
    }
    settings_file.write_json(&settings)?;
    mcp_file.write_json(&mcp)?;
    Ok(lines)
}

// --- Codex --------------------------------------------------------------------------------

fn install_codex(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let home = target.codex_home.clone().ok_or_else(|| {
        InstallError::Missing("Codex's home is unknown: set CODEX_HOME".to_owned())
    })?;
    let hooks_path = home.join("hooks.json");
    let config_path = home.join("config.toml");
    let mut hooks = read_json(&hooks_path)?;
    let mut config = read_toml(&config_path)?;
    let client = Client::Codex;
    let hooks_key = key_source(&hooks_path);
    // Trust entries of the hooks that are ours now go with them.
    for (key, _) in our_handlers(&hooks, &hooks_key, client) {
        remove_state(&mut config, &key);
    }
    remove_hooks(&mut hooks, client);
    let mut lines = Vec::new();
    if uninstall {
        if let Some(servers) = config.get_mut("mcp_servers").and_then(|s| s.as_table_like_mut()) {
            servers.remove(SERVER);
        }
        lines.push(format!(
            "removed staged's hooks and their trust from {} and {}",
            hooks_path.display(),
            config_path.display()
        ));
    } else {
        let command = hook_command(&target.staged, client, target.mode);
        add_hook(&mut hooks, "PreToolUse", Some(CODEX_MATCHER), &command);
        match target.mode {
            Mode::Gate => add_hook(&mut hooks, "Stop", None, &command),
            Mode::Record => {
                add_hook(&mut hooks, "PostToolUse", Some(CODEX_MATCHER), &command);
                add_hook(&mut hooks, "Stop", None, &command);
            }
        }
        set_mcp_server(&mut config, &target.staged);
        for (key, hash) in our_handlers(&hooks, &hooks_key, client) {
            set_state(&mut config, &key, &hash);
        }
        lines.push(format!(
            "{} mode: hooks for apply_patch and shell patches{} in {}",
            target.mode.name(),
            if target.mode == Mode::Gate { ", and Stop," } else { ", after and before," },
            hooks_path.display()
        ));
        lines.push(format!(
            "the staged MCP server, with resolve approved, in {}",
            config_path.display()
        ));
    }
    write_json(&hooks_path, &hooks)?;
    write_text(&config_path, &config.to_string())?;
    if !uninstall {
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
    normalized.insert("type".to_owned(), json!("command"));
    normalized.insert("command".to_owned(), handler.get("command").cloned().unwrap_or(json!("")));
    let timeout = handler.get("timeout").and_then(Value::as_u64).unwrap_or(600).max(1);
    normalized.insert("timeout".to_owned(), json!(timeout));
    normalized.insert(
        "async".to_owned(),
        json!(handler.get("async").and_then(Value::as_bool).unwrap_or(false)),
    );
    if let Some(message) = handler.get("statusMessage").filter(|m| !m.is_null()) {
        normalized.insert("statusMessage".to_owned(), message.clone());
    }
    let mut identity = Map::new();
    identity.insert("event_name".to_owned(), json!(label));
    if !matches!(event, "Stop" | "UserPromptSubmit")
        && let Some(matcher) = matcher
    {
        identity.insert("matcher".to_owned(), json!(matcher));
    }
    identity.insert("hooks".to_owned(), Value::Array(vec![Value::Object(normalized)]));
    // serde_json's maps are sorted by key, and `to_string` is compact.
    let text = Value::Object(identity).to_string();
    let digest = Sha256::digest(text.as_bytes());
    format!("sha256:{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Codex's snake-case name of a hook event.
fn event_label(event: &str) -> String {
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
fn key_source(hooks_path: &Path) -> String {
    let parent = hooks_path.parent().and_then(|p| p.canonicalize().ok());
    match (parent, hooks_path.file_name()) {
        (Some(parent), Some(name)) => parent.join(name).display().to_string(),
        _ => hooks_path.display().to_string(),
    }
}

/// `(trust key, hash)` of each of `client`'s hooks in a `hooks.json`.
fn our_handlers(hooks: &Value, key_source: &str, client: Client) -> Vec<(String, String)> {
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
pub fn check_codex_trust(home: &Path) -> Result<usize, InstallError> {
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

fn set_mcp_server(config: &mut toml_edit::DocumentMut, staged: &Path) {
    let servers = table_at(config, &["mcp_servers"]);
    let mut server = toml_edit::Table::new();
    server.insert("command", toml_edit::value(staged.to_string_lossy().into_owned()));
    let mut args = toml_edit::Array::new();
    args.push("mcp");
    server.insert("args", toml_edit::value(args));
    let mut resolve = toml_edit::Table::new();
    resolve.insert("approval_mode", toml_edit::value("approve"));
    let mut tools = toml_edit::Table::new();
    tools.set_implicit(true);
    tools.insert("resolve", toml_edit::Item::Table(resolve));
    server.insert("tools", toml_edit::Item::Table(tools));
    servers.insert(SERVER, toml_edit::Item::Table(server));
}

fn set_state(config: &mut toml_edit::DocumentMut, key: &str, hash: &str) {
    let state = table_at(config, &["hooks", "state"]);
    let mut entry = toml_edit::Table::new();
    entry.insert("enabled", toml_edit::value(true));
    entry.insert("trusted_hash", toml_edit::value(hash));
    state.insert(key, toml_edit::Item::Table(entry));
}

fn remove_state(config: &mut toml_edit::DocumentMut, key: &str) {
    if let Some(state) = config
        .get_mut("hooks")
        .and_then(|h| h.as_table_like_mut())
        .and_then(|h| h.get_mut("state"))
        .and_then(|s| s.as_table_like_mut())
    {
        state.remove(key);
    }
}

/// The table at `path`, made (implicit, so that only its children show) where missing.
fn table_at<'a>(config: &'a mut toml_edit::DocumentMut, path: &[&str]) -> &'a mut toml_edit::Table {
    let mut table = config.as_table_mut();
    for name in path {
        let entry = table.entry(name).or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        });
        if !entry.is_table() {
            *entry = toml_edit::Item::Table(toml_edit::Table::new());
        }
        table = match entry.as_table_mut() {
            Some(t) => t,
            None => unreachable_table(),
        };
    }
    table
}

/// Never reached: the entry was just made a table.
fn unreachable_table() -> &'static mut toml_edit::Table {
    Box::leak(Box::new(toml_edit::Table::new()))
}

// --- shared JSON editing ------------------------------------------------------------------

/// Removes every hook of `client` from a settings or hooks file, and the groups and events it
/// leaves empty.
fn remove_hooks(settings: &mut Value, client: Client) {
    let Some(events) = settings.get_mut("hooks").and_then(Value::as_object_mut) else { return };
    for groups in events.values_mut() {
        let Some(groups) = groups.as_array_mut() else { continue };
        for group in groups.iter_mut() {
            if let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                handlers.retain(|h| {
                    !h.get("command").and_then(Value::as_str).is_some_and(|c| is_ours(c, client))
                });
            }
        }
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|h| !h.is_empty()));
    }
    events.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    if events.is_empty()
        && let Some(object) = settings.as_object_mut()
    {
        object.remove("hooks");
    }
}

fn add_hook(settings: &mut Value, event: &str, matcher: Option<&str>, command: &str) {
    let hooks = object_at(settings, &["hooks"]);
    let groups = hooks.entry(event.to_owned()).or_insert_with(|| json!([]));
    if !groups.is_array() {
        *groups = json!([]);
    }
    let mut group = Map::new();
    if let Some(matcher) = matcher {
        group.insert("matcher".to_owned(), json!(matcher));
    }
    group.insert("hooks".to_owned(), json!([{"type": "command", "command": command}]));
    if let Some(groups) = groups.as_array_mut() {
        groups.push(Value::Object(group));
    }
}

fn object_at<'a>(value: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut at = value;
    for name in path {
        if !at.is_object() {
            *at = json!({});
        }
        let Some(object) = at.as_object_mut() else { unreachable_object() };
        at = object.entry((*name).to_owned()).or_insert_with(|| json!({}));
    }
    if !at.is_object() {
        *at = json!({});
    }
    match at.as_object_mut() {
        Some(object) => object,
        None => unreachable_object(),
    }
}

/// Never reached: the value was just made an object.
fn unreachable_object() -> ! {
    #[allow(clippy::panic, reason = "the value was made an object on the line before")]
    {
        panic!("a JSON value made an object is not one")
    }
}

fn add_to_array(settings: &mut Value, path: &[&str], item: &str) {
    let (last, parents) = match path.split_last() {
        Some(split) => split,
        None => return,
    };
    let parent = object_at(settings, parents);
    let array = parent.entry((*last).to_owned()).or_insert_with(|| json!([]));
    if !array.is_array() {
        *array = json!([]);
    }
    if let Some(array) = array.as_array_mut()
        && !array.iter().any(|v| v.as_str() == Some(item))
    {
        array.push(json!(item));
    }
}

fn remove_from_array(settings: &mut Value, path: &[&str], item: &str) {
    let mut at = &mut *settings;
    for name in path {
        match at.get_mut(*name) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(array) = at.as_array_mut() {
        array.retain(|v| v.as_str() != Some(item));
    }
}

/// Claude Code's project settings, relative to the root.
const CLAUDE_SETTINGS: &str = ".claude/settings.json";

/// The project's MCP servers (Claude Code), relative to the root.
const MCP_JSON: &str = ".mcp.json";

/// A file of the workspace, read and written only through `staged-fs`.
struct WorkspaceFile {
    root: PathBuf,
    rel: RelPath,
}

impl WorkspaceFile {
    fn new(root: &Path, rel: &str) -> Result<WorkspaceFile, InstallError> {
        let rel = RelPath::new(rel).map_err(|err| InstallError::Missing(err.to_string()))?;
        Ok(WorkspaceFile { root: root.to_path_buf(), rel })
    }

    /// Its path, for messages.
    fn path(&self) -> PathBuf {
        self.root.join(self.rel.as_path())
    }

    fn open_root(&self) -> std::io::Result<Root> {
        Root::open(&self.root)
    }

    /// Its JSON object; `{}` when it is not there.
    fn read_json(&self) -> Result<Value, InstallError> {
        let read = self.open_root().and_then(|root| root.read(&self.rel));
        let bytes = match read {
            Ok(bytes) => Some(bytes),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => {
                return Err(InstallError::Unreadable { path: self.path(), why: why(&err) });
            }
        };
        parse_json(&self.path(), bytes)
    }

    /// Fails unless every folder on its way is a real folder inside the root and it is a
    /// regular file or not there.
    fn writable(&self) -> Result<(), InstallError> {
        let fail = |err: std::io::Error| InstallError::Write { path: self.path(), why: why(&err) };
        let root = self.open_root().map_err(fail)?;
        let Some(parent) = self.rel.parent() else { return Ok(()) };
        match root.dir(Some(&parent)) {
            Ok(dir) => match dir.entry_metadata(self.rel.file_name()).map_err(fail)? {
                Some(meta) if !meta.is_file() => Err(InstallError::Write {
                    path: self.path(),
                    why: if meta.is_symlink() {
                        "it is a symlink, which staged does not write through".to_owned()
                    } else {
                        "it is not a regular file".to_owned()
                    },
                }),
                _ => Ok(()),
            },
            // Made when written.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(fail(err)),
        }
    }

    /// Writes `value` (atomically, keeping the file's permission bits).
    fn write_json(&self, value: &Value) -> Result<(), InstallError> {
        let fail = |err: std::io::Error| InstallError::Write { path: self.path(), why: why(&err) };
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|err| InstallError::Write { path: self.path(), why: err.to_string() })?;
        text.push('\n');
        let root = self.open_root().map_err(fail)?;
        let dir = match self.rel.parent() {
            Some(parent) => root.create_dir_all(&parent).map_err(fail)?,
            None => root.handle().map_err(fail)?,
        };
        let name = self.rel.file_name();
        let mode = match dir.entry_metadata(name).map_err(fail)? {
            Some(meta) if meta.is_file() => dir.file_mode(name).map_err(fail)? & 0o777,
            Some(_) => return self.writable(),
            None => 0o644,
        };
        dir.write_replace(name, text.as_bytes(), &NewFileMode::Mode(mode)).map_err(fail)
    }
}

/// What is wrong with a workspace file, in words.
fn why(err: &std::io::Error) -> String {
    let symlink = [rustix::io::Errno::LOOP, rustix::io::Errno::NOTDIR]
        .iter()
        .any(|errno| err.raw_os_error() == Some(errno.raw_os_error()));
    if symlink {
        return "it is a symlink (or is reached through one), which staged does not follow"
            .to_owned();
    }
    match err.kind() {
        std::io::ErrorKind::InvalidInput => "it is not a regular file".to_owned(),
        // cap-std's own refusal to leave the root (a real EACCES carries its errno).
        std::io::ErrorKind::PermissionDenied if err.raw_os_error().is_none() => {
            "it is reached through a symlink that leads outside the workspace, which staged does not follow"
                .to_owned()
        }
        _ => err.to_string(),
    }
}

/// Refuses anything at `path` that is not a regular file (a FIFO would block the read).
fn regular_or_absent(path: &Path) -> Result<(), InstallError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(InstallError::Unreadable {
            path: path.to_path_buf(),
            why: "it is not a regular file".to_owned(),
        }),
        _ => Ok(()),
    }
}

fn read_json(path: &Path) -> Result<Value, InstallError> {
    regular_or_absent(path)?;
    match std::fs::read(path) {
        Ok(bytes) => parse_json(path, Some(bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => parse_json(path, None),
        Err(err) => {
            Err(InstallError::Unreadable { path: path.to_path_buf(), why: err.to_string() })
        }
    }
}

/// The JSON object in `bytes` (read from `path`); `{}` for no file or blank space.
fn parse_json(path: &Path, bytes: Option<Vec<u8>>) -> Result<Value, InstallError> {
    match bytes {
        None => Ok(json!({})),
        Some(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(json!({})),
        Some(bytes) => {
            let value: Value =
                serde_json::from_slice(&bytes).map_err(|err| InstallError::Unreadable {
                    path: path.to_path_buf(),
                    why: format!("it is not valid JSON ({err})"),
                })?;
            if value.is_object() {
                Ok(value)
            } else {
                Err(InstallError::Unreadable {
                    path: path.to_path_buf(),
                    why: "it is not a JSON object".to_owned(),
                })
            }
        }
    }
}

fn read_toml(path: &Path) -> Result<toml_edit::DocumentMut, InstallError> {
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

fn write_json(path: &Path, value: &Value) -> Result<(), InstallError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|err| InstallError::Write { path: path.to_path_buf(), why: err.to_string() })?;
    text.push('\n');
    write_text(path, &text)
}

/// Writes `text` to `path` through a temp file and a rename, keeping the file's mode.
fn write_text(path: &Path, text: &str) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |err: std::io::Error| InstallError::Write {
        path: path.to_path_buf(),
        why: err.to_string(),
    };
    let dir = path
        .parent()
        .ok_or_else(|| InstallError::Missing(format!("{} has no folder", path.display())))?;
    std::fs::create_dir_all(dir).map_err(fail)?;
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode()).unwrap_or(0o644);
    let temp = dir.join(format!(
        ".{}.staged-{}.tmp",
        path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&temp, text).map_err(fail)?;
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode)).map_err(fail)?;
    std::fs::rename(&temp, path).map_err(|err| {
        let _ = std::fs::remove_file(&temp);
        fail(err)
    })
}

// --- checks for `staged doctor` -----------------------------------------------------------

/// One line of `staged doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked.
    pub what: String,
    /// `Ok` or why not.
    pub result: Result<(), String>,
    /// Whether a failure is only a warning: the hooks work, but not everywhere (headless runs).
    pub warning: bool,
}

impl Check {
    fn new(what: impl Into<String>, result: Result<(), String>) -> Check {
        Check { what: what.into(), result, warning: false }
    }

    fn warn(what: impl Into<String>, result: Result<(), String>) -> Check {
        Check { what: what.into(), result, warning: true }
    }
}

/// Where the clients keep their own state, for the checks that read it.
#[derive(Debug, Clone, Default)]
pub struct ClientHomes {
    /// Codex's home (`CODEX_HOME`, else `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// Claude Code's global config file (`$CLAUDE_CONFIG_DIR/.claude.json`, else
    /// `~/.claude.json`), where it records the folders a person trusted.
    pub claude_config: Option<PathBuf>,
}

/// What `staged doctor` checks for `client`: `None` when nothing of staged is installed for it.
pub fn doctor(client: Client, root: &Path, homes: &ClientHomes) -> Option<Vec<Check>> {
    match client {
        Client::ClaudeCode => doctor_claude(root, homes.claude_config.as_deref()),
        Client::Codex => doctor_codex(homes.codex_home.as_deref()?),
    }
}

/// Whether Claude Code's config records `root` as trusted: until a person accepts the trust
/// dialog there, Claude Code runs the project's hooks but ignores its permission rules, so
/// headless `claude -p` refuses `mcp__staged__resolve`.
fn claude_trusts(config: Option<&Path>, root: &Path) -> Result<(), String> {
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

fn doctor_claude(root: &Path, claude_config: Option<&Path>) -> Option<Vec<Check>> {
    let settings_file = WorkspaceFile::new(root, CLAUDE_SETTINGS).ok()?;
    let settings_path = settings_file.path();
    let settings = settings_file.read_json().ok()?;
    let commands = hook_commands(&settings, Client::ClaudeCode);
    if commands.is_empty() {
        return None;
    }
    let mut checks = Vec::new();
    checks.push(Check::new(
        format!("Claude Code: hooks for Edit, MultiEdit and Write in {}", settings_path.display()),
        commands
            .iter()
            .any(|(event, _)| event == "PreToolUse")
            .then_some(())
            .ok_or_else(|| "there is no PreToolUse hook".to_owned()),
    ));
    checks.push(claude_matcher_check(&settings));
    checks.extend(binary_checks("Claude Code", &commands));
    let mcp_file = WorkspaceFile::new(root, MCP_JSON).ok()?;
    let mcp_path = mcp_file.path();
    let server = mcp_file.read_json().ok().and_then(|m| m.get("mcpServers")?.get(SERVER).cloned());
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
    if let Some(server) = server {
        checks.push(mcp_check("Claude Code", &server, root));
    }
    checks.push(Check::warn(
        "Claude Code: this folder is trusted",
        claude_trusts(claude_config, root),
    ));
    Some(checks)
}

fn doctor_codex(home: &Path) -> Option<Vec<Check>> {
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
    checks.extend(binary_checks("Codex", &commands));
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
            checks.push(mcp_check("Codex", &json!({"command": command, "args": args}), home));
        }
    }
    Some(checks)
}

/// `(event, command)` of each of `client`'s hooks.
fn hook_commands(settings: &Value, client: Client) -> Vec<(String, String)> {
    let mut res = Vec::new();
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else { return res };
    for (event, groups) in events {
        for group in groups.as_array().into_iter().flatten() {
            for handler in group.get("hooks").and_then(Value::as_array).into_iter().flatten() {
                if let Some(command) = handler.get("command").and_then(Value::as_str)
                    && is_ours(command, client)
                {
                    res.push((event.clone(), command.to_owned()));
                }
            }
        }
    }
    res
}

/// Every tool [`CLAUDE_MATCHER`] names reaches staged's `PreToolUse` hook: an older install
/// (`Edit|Write|MultiEdit`) lets NotebookEdit through, and installing again fixes it.
fn claude_matcher_check(settings: &Value) -> Check {
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

/// The binary each hook command runs exists and may be run.
fn binary_checks(who: &str, commands: &[(String, String)]) -> Vec<Check> {
    let mut seen = Vec::new();
    let mut res = Vec::new();
    for (_, command) in commands {
        let binary = first_word(command);
        if seen.contains(&binary) {
            continue;
        }
        seen.push(binary.clone());
        res.push(Check::new(
            format!("{who}: the hook runs {binary}"),
            executable(Path::new(&binary)),
        ));
    }
    res
}

/// The first word of a command as `hook_command` writes it.
fn first_word(command: &str) -> String {
    if let Some(rest) = command.strip_prefix('\'') {
        let mut res = String::new();
        let mut rest = rest;
        loop {
            match rest.find('\'') {
                Some(end) => {
                    res.push_str(&rest[..end]);
                    rest = &rest[end + 1..];
                    if let Some(after) = rest.strip_prefix("\\''") {
                        res.push('\'');
                        rest = after;
                    } else {
                        return res;
                    }
                }
                None => return res,
            }
        }
    }
    command.split_whitespace().next().unwrap_or_default().to_owned()
}

fn executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => Ok(()),
        Ok(_) => Err("it is not an executable file".to_owned()),
        Err(err) => Err(format!("it cannot be found ({err})")),
    }
}

/// Starts the configured MCP server and asks it for its tools: it must answer, and list
/// `resolve`, within a few seconds.
fn mcp_check(who: &str, server: &Value, cwd: &Path) -> Check {
    let command = server.get("command").and_then(Value::as_str).unwrap_or_default();
    let args: Vec<String> = server
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    Check::new(
        format!("{who}: the staged MCP server answers ({command} {})", args.join(" ")),
        probe_mcp(command, &args, cwd),
    )
}

/// `initialize`, `notifications/initialized`, `tools/list` over stdio.
fn probe_mcp(command: &str, args: &[String], cwd: &Path) -> Result<(), String> {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(command)
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|err| format!("it does not start: {err}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let send = |stdin: &mut std::process::ChildStdin, value: Value| {
        writeln!(stdin, "{value}")
            .and_then(|()| stdin.flush())
            .map_err(|err| format!("it does not read its input: {err}"))
    };
    let wait_for = |id: u64| -> Result<Value, String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line =
                rx.recv_timeout(left).map_err(|_| "it did not answer within 10 s".to_owned())?;
            if let Ok(value) = serde_json::from_str::<Value>(&line)
                && value.get("id").and_then(Value::as_u64) == Some(id)
            {
                return Ok(value);
            }
        }
    };
    let res = (|| {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "staged-doctor", "version": "1"}}}),
        )?;
        wait_for(1)?;
        send(&mut stdin, json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        send(&mut stdin, json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))?;
        let listed = wait_for(2)?;
        let names: Vec<&str> = listed
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
            .map(|tools| tools.iter().filter_map(|t| t.get("name")?.as_str()).collect())
            .unwrap_or_default();
        if names.contains(&"resolve") {
            Ok(())
        } else {
            Err(format!("it lists no resolve tool (it lists {})", names.join(", ")))
        }
    })();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_labels_are_codex_s() {
        assert_eq!(event_label("PreToolUse"), "pre_tool_use");
        assert_eq!(event_label("Stop"), "stop");
        assert_eq!(event_label("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn the_hash_of_a_stop_hook_has_no_matcher_and_a_filled_in_timeout() {
        let handler = json!({"type": "command", "command": "touch /tmp/m"});
        let expected = {
            let text = r#"{"event_name":"stop","hooks":[{"async":false,"command":"touch /tmp/m","timeout":600,"type":"command"}]}"#;
            let digest = Sha256::digest(text.as_bytes());
            format!("sha256:{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>())
        };
        assert_eq!(codex_hook_hash("Stop", Some("ignored"), &handler), expected);
        assert_ne!(codex_hook_hash("PreToolUse", Some("Bash"), &handler), expected);
    }

    #[test]
    fn commands_quote_the_binary_and_are_recognised() {
        let command = hook_command(Path::new("/opt/my tools/staged"), Client::Codex, Mode::Record);
        assert_eq!(command, "'/opt/my tools/staged' hook codex --mode record");
        assert!(is_ours(&command, Client::Codex));
        assert!(!is_ours(&command, Client::ClaudeCode));
        assert_eq!(first_word(&command), "/opt/my tools/staged");
        assert_eq!(first_word("/usr/bin/staged hook claude-code"), "/usr/bin/staged");
    }

    #[test]
    fn other_hooks_are_kept_and_ours_replaced() {
        let mut settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]},
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "/old/staged hook claude-code"}]}
        ]}, "model": "x"});
        remove_hooks(&mut settings, Client::ClaudeCode);
        add_hook(&mut settings, "PreToolUse", Some(CLAUDE_MATCHER), "/new/staged hook claude-code");
        assert_eq!(
            settings,
            json!({"hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]},
                {"matcher": CLAUDE_MATCHER, "hooks": [{"type": "command", "command": "/new/staged hook claude-code"}]}
            ]}, "model": "x"})
        );
        remove_hooks(&mut settings, Client::ClaudeCode);
        assert_eq!(settings["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
    }
}
