//! `staged hook install claude-code|codex|qwen-code|gemini-cli|opencode|cursor [--mode
//! gate|record] [--uninstall]`: writes what each client needs, merged into what is there (a
//! user's other hooks and settings are kept), and the checks of `staged doctor`. Each client's
//! installer is in its own file (`install/`), with `staged doctor`'s shared checks
//! (`install/doctor.rs`), the reading and writing of the files (`install/files.rs`) and the
//! entries staged writes into them, typed (`install/entries.rs`).
//!
//! - **Claude Code** (`install/claude_code.rs`, the workspace's own files): the hooks in `.claude/settings.json`
//!   (`PreToolUse` for Edit, MultiEdit and Write; `Stop` in gate mode, `PostToolUse` in record
//!   mode), the MCP server in `.mcp.json`, and its approval (`enabledMcpjsonServers`, and
//!   `mcp__staged` in `permissions.allow`, so headless `claude -p` loads it and may call
//!   `resolve`).
//! - **Codex** (`install/codex.rs`, `CODEX_HOME`): the hooks in `hooks.json` (`PreToolUse` for `Edit|Write|Bash`,
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
//! The hook commands name `staged-hook` (the hooks alone: no grammars, agent or UI, so it
//! starts faster) when it is installed beside `staged`, else `staged`; both take
//! `hook <client>` and `shell-run`, and `staged doctor` reads back either. They name it by its
//! absolute path, or by its name (found on `PATH`) for files that are committed. A gate's
//! commands end with a shell fail-safe: when
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

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::event::{Client, Mode};

mod claude_code;
mod codex;
mod cursor;
mod doctor;
pub(crate) mod entries;
mod files;
mod gemini_cli;
mod opencode;
mod qwen_code;

use claude_code::install_claude;
pub use codex::codex_hook_hash;
use codex::install_codex;
pub(crate) use doctor::Check;
pub use doctor::{ClientHomes, doctor, executable};
pub(crate) use doctor::{binary_checks, mcp_check, older_install_checks};
pub(crate) use files::{WorkspaceFile, parse_json, read_json, write_json};

pub(crate) use cursor::installed as cursor_hook_installed;

/// The MCP server's name, in both clients.
pub(crate) const SERVER: &str = "staged";

/// What to install, and where.
#[derive(Debug, Clone)]
pub struct Target {
    /// The client.
    pub client: Client,
    /// Gate or record.
    pub mode: Mode,
    /// The `staged` binary the MCP server runs (absolute, or the name `staged`).
    pub staged: PathBuf,
    /// The binary the hooks run: `staged-hook` (the hooks alone, which start faster) when it
    /// is installed beside `staged`, else `staged` itself; both take `hook <client>`.
    pub hook: PathBuf,
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
    /// timeout leaves the person `HUMAN_TOOL_TIMEOUT_SECS` to decide.
    pub approve_human: bool,
}

/// Codex's `tool_timeout_sec` for the staged MCP server under `--approve human`: how long a
/// person has to answer the approval question (Codex's default, 60 seconds, would end the
/// call while the person reads the diff; the call's error keeps the preview pending).
pub(crate) const HUMAN_TOOL_TIMEOUT_SECS: i64 = 3600;

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
pub(crate) fn hook_command(
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

// --- Codex --------------------------------------------------------------------------------

/// What the installer says of `--approve human`.
const HUMAN_GATE_LINE: &str = "--approve human: the model's resolve apply waits for a person, who answers the client's approval form (MCP elicitation); a decline keeps the preview pending. Without elicitation, resolve refuses and names `staged ui` and `staged review`";

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

/// Adds staged's hooks of `client` to `settings` in Claude Code's format (Qwen Code's too):
/// `PreToolUse` for the tools of `matcher`, then `Stop` in gate mode, or `PostToolUse` for the
/// same tools in record mode.
fn add_mode_hooks(
    settings: &mut Value,
    target: &Target,
    client: Client,
    matcher: &str,
    file: &Path,
) -> Result<(), InstallError> {
    let command = |event| hook_command(&target.hook, client, target.mode, &[], event);
    add_hook(settings, "PreToolUse", Some(matcher), &command("PreToolUse"), file)?;
    match target.mode {
        Mode::Gate => add_hook(settings, "Stop", None, &command("Stop"), file),
        Mode::Record => {
            add_hook(settings, "PostToolUse", Some(matcher), &command("PostToolUse"), file)
        }
    }
}

/// What an install of the hooks [`add_mode_hooks`] adds says first: the hooks for `tools` in
/// `settings_path`, and in gate mode what each runs.
fn mode_hook_lines(target: &Target, tools: &str, settings_path: &Path) -> Vec<String> {
    let mut lines = vec![format!(
        "{} mode: hooks for {tools}{} in {}",
        target.mode.name(),
        if target.mode == Mode::Gate { ", and Stop," } else { ", after and before," },
        settings_path.display()
    )];
    if target.mode == Mode::Gate {
        lines.push(format!(
            "each hook runs {}; when it cannot run, the hook blocks the edit and says why",
            target.hook.display()
        ));
    }
    lines
}

fn add_hook(
    settings: &mut Value,
    event: &str,
    matcher: Option<&str>,
    command: &str,
    file: &Path,
) -> Result<(), InstallError> {
    let hooks = object_at(settings, &["hooks"], file)?;
    let groups = hooks.entry(event.to_owned()).or_insert_with(|| Value::Array(Vec::new()));
    let Some(groups) = groups.as_array_mut() else {
        return Err(wrong_shape(file, &format!("hooks.{event}"), groups, "a list of hook groups"));
    };
    let hooks = [entries::CommandHook { command, kind: "command" }];
    groups.push(entries::entry_json(entries::HookGroup { hooks, matcher })?);
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
        let next = at.entry((*name).to_owned()).or_insert_with(|| Value::Object(Map::new()));
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
    let array = parent.entry((*last).to_owned()).or_insert_with(|| Value::Array(Vec::new()));
    let Some(items) = array.as_array_mut() else {
        return Err(wrong_shape(file, &path.join("."), array, "a list"));
    };
    if !items.iter().any(|v| v.as_str() == Some(item)) {
        items.push(Value::from(item));
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

// --- checks for `staged doctor` -----------------------------------------------------------

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use super::{claude_code::CLAUDE_MATCHER, codex::event_label};
    use sha2::{Digest, Sha256};

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
