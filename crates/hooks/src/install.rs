//! `staged hook install claude-code|codex|qwen-code|gemini-cli|opencode|cursor [--mode
//! gate|record] [--uninstall]`: writes what each client needs, merged into what is there (a
//! user's other hooks and settings are kept), and the checks of `staged doctor`. Qwen Code's,
//! Gemini CLI's, opencode's and Cursor's installers are in their own files (`install/`).
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
//! - **Qwen Code** and **Gemini CLI**: `install/qwen_code.rs` and `install/gemini_cli.rs`
//!   (the workspace's `.qwen/settings.json` with the approval in Qwen Code's home;
//!   `.gemini/settings.json`).
//! - **opencode** and **Cursor**: `install/opencode.rs` and `install/cursor.rs` (a plugin in
//!   `.opencode/plugins/` and the server in `opencode.json`; `.cursor/hooks.json` and
//!   `.cursor/mcp.json`).
//!
//! The hook commands name `staged` by its absolute path, or by the name `staged` (found on
//! `PATH`) for files that are committed. A gate's commands end with a shell fail-safe: when
//! `staged` cannot run, `PreToolUse` exits 2 with a reason (a block in both clients, where exit
//! 127 would let the edit through) and `Stop` exits 1 (the turn ends). Codex's commands carry
//! `--in <root>`, one per workspace installed, since Codex runs its hooks in every folder.
//! Claude Code's `local` install writes `.claude/settings.local.json` and the server in
//! Claude Code's own config (its local scope). A key of an unexpected shape (a list given as
//! a string) is refused, naming it, and nothing is written; `staged doctor` recognises the
//! commands of an older install (no fail-safe, no `--in`), and installing again replaces them.
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

mod cursor;
mod gemini_cli;
mod opencode;
mod qwen_code;

pub(crate) use cursor::installed as cursor_hook_installed;

/// The Claude Code tools a hook gates: every tool of Claude Code 2.1.197 that edits a file
/// (`crates/mcp/tests/clients/test_hooks.py` compares the tools the client offers with it).
const CLAUDE_MATCHER: &str = "Edit|Write|MultiEdit|NotebookEdit|Bash";

/// The Codex tools a hook sees: `Edit|Write` selects `apply_patch`; `Bash`, shell patches.
const CODEX_MATCHER: &str = "Edit|Write|Bash";

/// The MCP server's name, in both clients.
pub(crate) const SERVER: &str = "staged";

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
    /// Claude Code: the person's own files instead of the committed ones: the hooks and
    /// approvals in `.claude/settings.local.json`, the MCP server in Claude Code's config for
    /// this folder (its local scope) instead of `.mcp.json`.
    pub local: bool,
    /// Claude Code's global config (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`),
    /// where `local` puts the MCP server.
    pub claude_config: Option<PathBuf>,
    /// Qwen Code's home (`QWEN_HOME`, else `~/.qwen`), whose `mcpApprovals.json` gets the
    /// MCP server's approval.
    pub qwen_home: Option<PathBuf>,
    /// `QWEN_CODE_MCP_APPROVALS_PATH`: Qwen Code's approvals file, when set.
    pub qwen_approvals: Option<PathBuf>,
    /// Cline's MCP settings file (user-level: Cline reads no project MCP servers).
    pub cline_mcp_settings: Option<PathBuf>,
    /// `--approve human`: the MCP server runs `staged mcp --approve human`, so a model's
    /// `resolve apply` waits for a person (MCP elicitation), and for Codex the server's tool
    /// timeout leaves the person [`HUMAN_TOOL_TIMEOUT_SECS`] to decide.
    pub approve_human: bool,
}

/// Codex's `tool_timeout_sec` for the staged MCP server under `--approve human`: how long a
/// person has to answer the approval question (Codex's default, 60 seconds, would end the
/// call while the person reads the diff; the call's error keeps the preview pending).
pub const HUMAN_TOOL_TIMEOUT_SECS: i64 = 3600;

/// The MCP server's arguments.
fn server_args(approve_human: bool) -> Vec<&'static str> {
    if approve_human { vec!["mcp", "--approve", "human"] } else { vec!["mcp"] }
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
        Client::Codex if target.local => Err(InstallError::Missing(
            "--local is for Claude Code: Codex's hooks and MCP server are in CODEX_HOME, which is already a person's own"
                .to_owned(),
        )),
        Client::Codex => install_codex(target, uninstall),
        Client::QwenCode if target.local => Err(InstallError::Missing(
            "--local is for Claude Code: Qwen Code's hooks and MCP server are the workspace's own .qwen/settings.json, approved in the person's own mcpApprovals.json"
                .to_owned(),
        )),
        Client::QwenCode => qwen_code::install(target, uninstall),
        Client::GeminiCli if target.local => Err(InstallError::Missing(
            "--local is for Claude Code: Gemini CLI's hooks and MCP server are the workspace's own .gemini/settings.json"
                .to_owned(),
        )),
        Client::GeminiCli => gemini_cli::install(target, uninstall),
        Client::OpenCode if target.local => Err(InstallError::Missing(
            "--local is for Claude Code: opencode's plugin and MCP server are the project's (.opencode/plugins/, opencode.json)"
                .to_owned(),
        )),
        Client::OpenCode => opencode::install(target, uninstall),
        Client::Cursor if target.local => Err(InstallError::Missing(
            "--local is for Claude Code: Cursor's hooks and MCP server are the project's (.cursor/hooks.json, .cursor/mcp.json)"
                .to_owned(),
        )),
        Client::Cursor => cursor::install(target, uninstall),
        Client::Copilot | Client::Cline if target.local => Err(InstallError::Missing(format!(
            "--local is for Claude Code: {} reads staged's hooks from the workspace",
            target.client.display()
        ))),
        Client::Copilot => crate::clients::copilot::install(target, uninstall),
        Client::Cline => crate::clients::cline::install(target, uninstall),
    }
}

/// The command a client runs for the hook of `event`: `staged` (by the path given, quoted for
/// the shell), `hook <client>`, `--mode record` in record mode, an `--in <root>` per workspace
/// the hooks are for (Codex, whose hooks apply in every folder), and in gate mode a fail-safe
/// for when the command fails (the binary is gone, exit 127): the shell prints why and, for
/// `PreToolUse`, exits 2, which both clients take as a block; for `Stop`, exits 1, which lets
/// the turn end (a Stop that exits 2 would hold the turn for ever).
pub fn hook_command(
    staged: &Path,
    client: Client,
    mode: Mode,
    roots: &[PathBuf],
    event: &str,
) -> String {
    let mut res = format!("{} hook {}", shell_quote(&staged.to_string_lossy()), client.name());
    if mode == Mode::Record {
        res.push_str(" --mode record");
    }
    for root in roots {
        res.push_str(" --in ");
        res.push_str(&shell_quote(&root.to_string_lossy()));
    }
    if mode == Mode::Gate {
        res.push_str(&fail_safe(client, FailSafe::for_event(event)));
    }
    res
}

/// What a gate's command does when `staged` cannot run or fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailSafe {
    /// Nothing: the client sees the exit status (installs before issue 32).
    None,
    /// A reason on stderr and exit 2: a `PreToolUse` blocks the tool call.
    Block,
    /// A note on stderr and exit 1: a `Stop` lets the turn end.
    Pass,
}

impl FailSafe {
    /// Gemini CLI's `BeforeTool` is a `PreToolUse`, its `AfterAgent` a `Stop`.
    pub(crate) fn for_event(event: &str) -> FailSafe {
        match event {
            "PreToolUse" | "BeforeTool" => FailSafe::Block,
            // A prompt hook that fails must not hold the prompt: its exit status (not 2)
            // lets the prompt through, and the person sees the error.
            "UserPromptSubmit" => FailSafe::None,
            _ => FailSafe::Pass,
        }
    }
}

/// The shell text after a gate's words for `kind`.
fn fail_safe(client: Client, kind: FailSafe) -> String {
    let uninstall = format!("staged hook install {} --uninstall", client.name());
    match kind {
        FailSafe::None => String::new(),
        FailSafe::Block => format!(
            " || {{ echo \"staged's hook could not run (exit $?), so this tool call is refused and nothing was written. Install staged, or remove its hooks: {uninstall}\" >&2; exit 2; }}"
        ),
        FailSafe::Pass => format!(
            " || {{ echo \"staged's Stop hook could not run (exit $?), so pending previews were not checked. Install staged, or remove its hooks: {uninstall}\" >&2; exit 1; }}"
        ),
    }
}

/// A hook command `staged hook install` wrote for a client, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ours {
    /// The binary it runs.
    binary: String,
    mode: Mode,
    /// Its `--in` workspaces.
    roots: Vec<String>,
    /// What it does when staged cannot run (installs before issue 32: nothing).
    fail_safe: FailSafe,
}

/// The hook command `command` read back, if `staged hook install` wrote it for `client`, now
/// or before (without the fail-safe and the `--in` workspaces).
pub(crate) fn parse_ours(command: &str, client: Client) -> Option<Ours> {
    let (words, fail_safe) = [FailSafe::Block, FailSafe::Pass]
        .into_iter()
        .find_map(|kind| Some((command.strip_suffix(&fail_safe(client, kind))?, kind)))
        .unwrap_or((command, FailSafe::None));
    let mut words = shell_words(words)?.into_iter();
    let binary = words.next()?;
    if words.next()? != "hook" || words.next()? != client.name() {
        return None;
    }
    let mut ours = Ours { binary, mode: Mode::Gate, roots: Vec::new(), fail_safe };
    while let Some(word) = words.next() {
        match (word.as_str(), words.next()) {
            ("--mode", Some(mode)) if mode == "record" => ours.mode = Mode::Record,
            ("--mode", Some(mode)) if mode == "gate" => ours.mode = Mode::Gate,
            ("--in", Some(root)) => ours.roots.push(root),
            _ => return None,
        }
    }
    Some(ours)
}

/// Whether a hook command is one `staged hook install` wrote for `client`.
pub(crate) fn is_ours(command: &str, client: Client) -> bool {
    parse_ours(command, client).is_some()
}

/// The words of a command as [`shell_quote`] writes them (bare words and `'...'` runs);
/// `None` for anything else the shell would read as more than words.
fn shell_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(done) = word.take() {
                    words.push(done);
                }
            }
            '\'' => {
                let at = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => at.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c if c.is_ascii_alphanumeric() || "/._-+@%:,=~".contains(c) || !c.is_ascii() => {
                word.get_or_insert_with(String::new).push(c);
            }
            _ => return None,
        }
    }
    words.extend(word);
    Some(words)
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
        let command = |event| hook_command(&target.staged, client, target.mode, &[], event);
        let pre = command("PreToolUse");
        add_hook(&mut settings, "PreToolUse", Some(CLAUDE_MATCHER), &pre, &settings_path)?;
        // A prompt titles the session and carries a person's notices to the model.
        let prompt = command("UserPromptSubmit");
        add_hook(&mut settings, "UserPromptSubmit", None, &prompt, &settings_path)?;
        match target.mode {
            Mode::Gate => add_hook(&mut settings, "Stop", None, &command("Stop"), &settings_path)?,
            Mode::Record => add_hook(
                &mut settings,
                "PostToolUse",
                Some(CLAUDE_MATCHER),
                &command("PostToolUse"),
                &settings_path,
            )?,
        }
        let allow = format!("mcp__{SERVER}");
        add_to_array(&mut settings, &["permissions", "allow"], &allow, &settings_path)?;
        let server = json!({
            "command": target.staged.to_string_lossy(),
            "args": server_args(target.approve_human),
        });
        match (&mut config, &config_path) {
            (Some(config), Some(path)) => {
                let mut server = server;
                server["type"] = json!("stdio");
                object_at(config, &["projects", &root_key, "mcpServers"], path)?
                    .insert(SERVER.to_owned(), server);
            }
            _ => {
                add_to_array(&mut settings, &["enabledMcpjsonServers"], SERVER, &settings_path)?;
                object_at(&mut mcp, &["mcpServers"], &mcp_path)?.insert(SERVER.to_owned(), server);
            }
        }
        lines.push(format!(
            "{} mode: hooks for Edit, MultiEdit and Write{} in {}",
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
        match &config_path {
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
        let command = |event| hook_command(&target.staged, client, mode, &roots_paths, event);
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
                target.staged.display()
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

/// What the installer says of `--approve human`.
const HUMAN_GATE_LINE: &str = "--approve human: the model's resolve apply waits for a person, who answers the client's approval form (MCP elicitation); a decline keeps the preview pending. Without elicitation, resolve refuses and names `staged ui` and `staged review`";

fn set_mcp_server(
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

fn set_state(
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

fn remove_state(
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
fn table_at<'a>(
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

/// `a string`, `an integer`, `an inline table`.
fn with_article(kind: &str) -> String {
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{article} {kind}")
}

// --- shared JSON editing ------------------------------------------------------------------

/// What a JSON value is, in words.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The refusal of a value of the wrong shape at `key` of `file`.
pub(crate) fn wrong_shape(file: &Path, key: &str, found: &Value, expected: &str) -> InstallError {
    InstallError::Unreadable {
        path: file.to_path_buf(),
        why: format!("`{key}` is {}, where {expected} belongs", json_kind(found)),
    }
}

/// Removes every hook of `client` from a settings or hooks file, and the groups and events it
/// leaves empty. `hooks` that is not an object is refused; an event's hooks that are not a
/// list are left as they are (none of them is staged's).
fn remove_hooks(settings: &mut Value, client: Client, file: &Path) -> Result<(), InstallError> {
    let Some(hooks) = settings.get_mut("hooks") else { return Ok(()) };
    let Some(events) = hooks.as_object_mut() else {
        return Err(wrong_shape(file, "hooks", hooks, "an object of hook lists"));
    };
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
    Ok(())
}

fn add_hook(
    settings: &mut Value,
    event: &str,
    matcher: Option<&str>,
    command: &str,
    file: &Path,
) -> Result<(), InstallError> {
    let hooks = object_at(settings, &["hooks"], file)?;
    let groups = hooks.entry(event.to_owned()).or_insert_with(|| json!([]));
    let Some(groups) = groups.as_array_mut() else {
        return Err(wrong_shape(file, &format!("hooks.{event}"), groups, "a list of hook groups"));
    };
    let mut group = Map::new();
    if let Some(matcher) = matcher {
        group.insert("matcher".to_owned(), json!(matcher));
    }
    group.insert("hooks".to_owned(), json!([{"type": "command", "command": command}]));
    groups.push(Value::Object(group));
    Ok(())
}

/// The object at `path`, made where missing; anything else there is refused, naming the key
/// and what was found.
pub(crate) fn object_at<'a>(
    value: &'a mut Value,
    path: &[&str],
    file: &Path,
) -> Result<&'a mut Map<String, Value>, InstallError> {
    let mut at = value.as_object_mut().ok_or_else(|| InstallError::Unreadable {
        path: file.to_path_buf(),
        why: "it is not a JSON object".to_owned(),
    })?;
    for (i, name) in path.iter().enumerate() {
        let next = at.entry((*name).to_owned()).or_insert_with(|| json!({}));
        if !next.is_object() {
            return Err(wrong_shape(file, &path[..=i].join("."), next, "an object"));
        }
        at = match next.as_object_mut() {
            Some(object) => object,
            None => {
                return Err(wrong_shape(file, &path[..=i].join("."), &Value::Null, "an object"));
            }
        };
    }
    Ok(at)
}

fn add_to_array(
    settings: &mut Value,
    path: &[&str],
    item: &str,
    file: &Path,
) -> Result<(), InstallError> {
    let Some((last, parents)) = path.split_last() else { return Ok(()) };
    let parent = object_at(settings, parents, file)?;
    let array = parent.entry((*last).to_owned()).or_insert_with(|| json!([]));
    let Some(items) = array.as_array_mut() else {
        return Err(wrong_shape(file, &path.join("."), array, "a list"));
    };
    if !items.iter().any(|v| v.as_str() == Some(item)) {
        items.push(json!(item));
    }
    Ok(())
}

pub(crate) fn remove_from_array(settings: &mut Value, path: &[&str], item: &str) {
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

/// Claude Code's local project settings (a person's own, not committed), relative to the root.
const CLAUDE_LOCAL_SETTINGS: &str = ".claude/settings.local.json";

/// The project's MCP servers (Claude Code), relative to the root.
const MCP_JSON: &str = ".mcp.json";

/// A file of the workspace, read and written only through `staged-fs`.
pub(crate) struct WorkspaceFile {
    root: PathBuf,
    rel: RelPath,
}

impl WorkspaceFile {
    pub(crate) fn new(root: &Path, rel: &str) -> Result<WorkspaceFile, InstallError> {
        let rel = RelPath::new(rel).map_err(|err| InstallError::Missing(err.to_string()))?;
        Ok(WorkspaceFile { root: root.to_path_buf(), rel })
    }

    /// Its path, for messages.
    pub(crate) fn path(&self) -> PathBuf {
        self.root.join(self.rel.as_path())
    }

    fn open_root(&self) -> std::io::Result<Root> {
        Root::open(&self.root)
    }

    /// Its JSON object; `{}` when it is not there.
    pub(crate) fn read_json(&self) -> Result<Value, InstallError> {
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
    pub(crate) fn writable(&self) -> Result<(), InstallError> {
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
    pub(crate) fn write_json(&self, value: &Value) -> Result<(), InstallError> {
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|err| InstallError::Write { path: self.path(), why: err.to_string() })?;
        text.push('\n');
        self.write_text(&text)
    }

    /// Its text; `None` when it is not there.
    pub(crate) fn read_text(&self) -> Result<Option<String>, InstallError> {
        match self.open_root().and_then(|root| root.read(&self.rel)) {
            Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| InstallError::Unreadable {
                path: self.path(),
                why: "it is not UTF-8 text".to_owned(),
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(InstallError::Unreadable { path: self.path(), why: why(&err) }),
        }
    }

    /// Removes it (never through a symlink); nothing when it is not there.
    pub(crate) fn remove(&self) -> Result<(), InstallError> {
        let fail = |err: std::io::Error| InstallError::Write { path: self.path(), why: why(&err) };
        let root = self.open_root().map_err(fail)?;
        let dir = match root.dir(self.rel.parent().as_ref()) {
            Ok(dir) => dir,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(fail(err)),
        };
        match dir.remove_file(self.rel.file_name()) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(fail(err)),
        }
    }

    /// Writes `text` (atomically, keeping the file's permission bits).
    pub(crate) fn write_text(&self, text: &str) -> Result<(), InstallError> {
        let fail = |err: std::io::Error| InstallError::Write { path: self.path(), why: why(&err) };
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

pub(crate) fn read_json(path: &Path) -> Result<Value, InstallError> {
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
pub(crate) fn parse_json(path: &Path, bytes: Option<Vec<u8>>) -> Result<Value, InstallError> {
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

pub(crate) fn write_json(path: &Path, value: &Value) -> Result<(), InstallError> {
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
    pub(crate) fn new(what: impl Into<String>, result: Result<(), String>) -> Check {
        Check { what: what.into(), result, warning: false }
    }

    pub(crate) fn warn(what: impl Into<String>, result: Result<(), String>) -> Check {
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
    /// Qwen Code's home (`QWEN_HOME`, else `~/.qwen`).
    pub qwen_home: Option<PathBuf>,
    /// `QWEN_CODE_MCP_APPROVALS_PATH`: Qwen Code's approvals file, when set.
    pub qwen_approvals: Option<PathBuf>,
    /// Gemini CLI's `.gemini` folder in its home (`$GEMINI_CLI_HOME/.gemini`, else
    /// `~/.gemini`), whose `settings.json` may set its approval mode.
    pub gemini_home: Option<PathBuf>,
    /// Copilot CLI's home (`COPILOT_HOME`, else `~/.copilot`), whose `config.json` records
    /// the folders a person trusted.
    pub copilot_home: Option<PathBuf>,
    /// Cline's MCP settings (`CLINE_MCP_SETTINGS_PATH`, else
    /// `$CLINE_DATA_DIR/settings/cline_mcp_settings.json`, else under `~/.cline/data`).
    pub cline_mcp_settings: Option<PathBuf>,
    /// The `staged` binary a shell call is wrapped in (`staged shell-run`).
    pub staged: Option<PathBuf>,
}

/// What `staged doctor` checks for `client`: `None` when nothing of staged is installed for it.
pub fn doctor(client: Client, root: &Path, homes: &ClientHomes) -> Option<Vec<Check>> {
    match client {
        Client::ClaudeCode => doctor_claude(root, homes.claude_config.as_deref()),
        Client::Codex => doctor_codex(homes.codex_home.as_deref()?, root),
        Client::QwenCode => {
            qwen_code::doctor(root, homes.qwen_home.as_deref(), homes.qwen_approvals.as_deref())
        }
        Client::GeminiCli => gemini_cli::doctor(root, homes.gemini_home.as_deref()),
        Client::OpenCode => opencode::doctor(root),
        Client::Cursor => cursor::doctor(root),
        Client::Copilot => crate::clients::copilot::doctor(root, homes.copilot_home.as_deref()),
        Client::Cline => crate::clients::cline::doctor(root, homes.cline_mcp_settings.as_deref()),
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

/// Warnings for hook commands an older `staged hook install` wrote: a gate without the
/// fail-safe (a missing binary lets the edit through), and for Codex one without `--in` (it
/// gates every folder) or one whose workspaces leave out `root`.
pub(crate) fn older_install_checks(
    client: Client,
    commands: &[(String, String)],
    root: Option<&Path>,
) -> Vec<Check> {
    let (who, name) = (client.display(), client.name());
    let ours: Vec<(&str, Ours)> = commands
        .iter()
        .filter_map(|(event, c)| Some((event.as_str(), parse_ours(c, client)?)))
        .collect();
    let again = format!("run `staged hook install {name}` again to update it");
    let mut res = Vec::new();
    if ours.iter().any(|(_, o)| o.mode == Mode::Gate) {
        let older = ours
            .iter()
            .any(|(event, o)| o.mode == Mode::Gate && o.fail_safe != FailSafe::for_event(event));
        res.push(Check::warn(
            format!("{who}: the hooks block the edit when staged cannot run"),
            match older {
                true => Err(format!(
                    "an older install: when the binary is missing, the client lets the edit through; {again}"
                )),
                false => Ok(()),
            },
        ));
    }
    if let Some(root) = root {
        let mut roots: Vec<&String> = ours.iter().flat_map(|(_, o)| &o.roots).collect();
        roots.sort();
        roots.dedup();
        let here = root.to_string_lossy();
        res.push(Check::warn(
            format!("{who}: the hooks act only in the workspaces they were installed in"),
            if ours.iter().any(|(_, o)| o.roots.is_empty()) {
                Err(format!("an older install: they act in every folder Codex runs in; {again}"))
            } else if !roots.iter().any(|r| root.starts_with(r.as_str())) {
                Err(format!(
                    "they act in {}, not in {here} (`staged hook install codex` here adds it)",
                    roots.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
                ))
            } else {
                Ok(())
            },
        ));
    }
    res
}

fn doctor_codex(home: &Path, root: &Path) -> Option<Vec<Check>> {
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

/// The binary each hook command runs exists and may be run (one without a `/` is looked up
/// on `PATH`, as the client's shell will).
pub(crate) fn binary_checks(client: Client, commands: &[(String, String)]) -> Vec<Check> {
    let who = client.display();
    let mut seen = Vec::new();
    let mut res = Vec::new();
    for (_, command) in commands {
        let Some(binary) = parse_ours(command, client).map(|o| o.binary) else { continue };
        if seen.contains(&binary) {
            continue;
        }
        seen.push(binary.clone());
        let result =
            if binary.contains('/') { executable(Path::new(&binary)) } else { on_path(&binary) };
        res.push(Check::new(format!("{who}: the hook runs {binary}"), result));
    }
    res
}

/// The first executable `name` on `PATH`.
fn on_path(name: &str) -> Result<(), String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| executable(&dir.join(name)).is_ok()) {
        Ok(())
    } else {
        Err("it is not on PATH".to_owned())
    }
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
pub(crate) fn mcp_check(who: &str, server: &Value, cwd: &Path) -> Check {
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
        let command = hook_command(
            Path::new("/opt/my tools/staged"),
            Client::Codex,
            Mode::Record,
            &[],
            "Stop",
        );
        assert_eq!(command, "'/opt/my tools/staged' hook codex --mode record");
        assert!(is_ours(&command, Client::Codex));
        assert!(!is_ours(&command, Client::ClaudeCode));
        assert_eq!(parse_ours(&command, Client::Codex).unwrap().binary, "/opt/my tools/staged");
        let roots = [PathBuf::from("/w/it's"), PathBuf::from("/w/b")];
        let command =
            hook_command(Path::new("staged"), Client::Codex, Mode::Gate, &roots, "PreToolUse");
        assert!(
            command.starts_with("staged hook codex --in '/w/it'\\''s' --in /w/b || {"),
            "{command}"
        );
        assert_eq!(
            parse_ours(&command, Client::Codex),
            Some(Ours {
                binary: "staged".to_owned(),
                mode: Mode::Gate,
                roots: vec!["/w/it's".to_owned(), "/w/b".to_owned()],
                fail_safe: FailSafe::Block
            })
        );
        let old = parse_ours("/usr/bin/staged hook claude-code", Client::ClaudeCode).unwrap();
        assert_eq!((old.binary.as_str(), old.fail_safe), ("/usr/bin/staged", FailSafe::None));
        let stop = hook_command(Path::new("/s"), Client::ClaudeCode, Mode::Gate, &[], "Stop");
        assert!(stop.ends_with("exit 1; }"), "{stop}");
        assert_eq!(parse_ours(&stop, Client::ClaudeCode).unwrap().fail_safe, FailSafe::Pass);
        assert!(!is_ours("staged hook codex; rm -rf x", Client::Codex));
        assert!(!is_ours("my-linter", Client::Codex));
    }

    #[test]
    fn other_hooks_are_kept_and_ours_replaced() {
        let mut settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]},
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "/old/staged hook claude-code"}]}
        ]}, "model": "x"});
        let file = Path::new("settings.json");
        remove_hooks(&mut settings, Client::ClaudeCode, file).unwrap();
        add_hook(
            &mut settings,
            "PreToolUse",
            Some(CLAUDE_MATCHER),
            "/new/staged hook claude-code",
            file,
        )
        .unwrap();
        assert_eq!(
            settings,
            json!({"hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]},
                {"matcher": CLAUDE_MATCHER, "hooks": [{"type": "command", "command": "/new/staged hook claude-code"}]}
            ]}, "model": "x"})
        );
        remove_hooks(&mut settings, Client::ClaudeCode, file).unwrap();
        assert_eq!(settings["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
    }
}
