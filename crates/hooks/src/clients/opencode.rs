//! opencode: its plugin API has no command hooks, so `staged hook install opencode` writes a
//! small plugin (`.opencode/plugins/staged.js`, `install/opencode.rs`) whose
//! `tool.execute.before` (and, in record mode, `tool.execute.after`) runs `staged hook
//! opencode` with the call on stdin, and throws to block: opencode gives the model the thrown
//! message as the tool's error.
//!
//! The event the plugin sends is opencode's own hook input, as one JSON object:
//! `{"hook": "tool.execute.before" | "tool.execute.after", "tool", "sessionID", "callID",
//! "args", "directory"}` (`args` is the tool's arguments; `directory` the project's folder,
//! which opencode takes from `$PWD`). It becomes a [`HookEvent`] with `PreToolUse` or
//! `PostToolUse`, the session and call ids, and the edit tools in the client-neutral shapes the
//! gate stages: opencode 1.18's `edit` (`filePath`, `oldString`, `newString`, `replaceAll`) as
//! an `Edit`, `write` (`filePath`, `content`) as a `Write`, `apply_patch` (`patchText`, the
//! Codex patch format) as an `apply_patch`; a relative `filePath` is relative to `directory`.
//!
//! The reply is `{"decision": "deny", "reason": ...}` to block (the plugin throws the reason),
//! nothing to let the call run. The plugin blocks too when staged is missing, fails, or answers
//! something else (`docs/contract/hooks.md#opencode`).
//!
//! What opencode would allow (`permission.rs`'s rule, for opencode): its `permission` config
//! (`permission.edit`, or `permission` as one string), read from the global
//! `opencode/opencode.json(c)` in `XDG_CONFIG_HOME` (else `~/.config`), the project's
//! `opencode.json(c)` and `.opencode/opencode.json(c)`, and `OPENCODE_PERMISSION`, the later
//! over the earlier. `deny` denies without staging; `ask`, or per-path rules (which staged does
//! not match), stage a preview only a person may apply; `allow`, or none (opencode's default),
//! stage one the model may apply. An agent's own permissions are not read for edits; for `bash`
//! (a shell call is wrapped only where every command is allowed) they are, with
//! `OPENCODE_CONFIG`'s file ([`bash_allowed`]). A path outside opencode's project folder (the
//! event's `directory`), in an edit or named by a shell command, needs its permission
//! `external_directory` too (unset, it asks; [`edit_verdict`], [`external_allowed`],
//! [`outside_path`]).
//!
//! Record mode: at `PreToolUse` the file is read and what the edit makes of it is kept (an
//! `edit`'s `oldString` replaced exactly; opencode also matches text loosely, which staged does
//! not guess at, so such an edit is not recorded); at `PostToolUse` the disk must hold exactly
//! that (a formatter opencode runs after the edit makes it differ: not recorded, with a note).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use staged_workspace::WorkspaceSession;

use crate::{
    clients::{
        EditInput, PatchInput, ToolEdit, WriteInput, input_json,
        opencode_text::{glob, shell_words},
        wire::{Decided, Decision, to_json},
    },
    event::{EventName, HookEvent, Reply},
    permission::Verdict,
    state::{FileBefore, Snapshot},
};

/// The opencode hooks the plugin sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
enum Hook {
    /// Before a tool runs: a `PreToolUse`.
    #[serde(rename = "tool.execute.before")]
    Before,
    /// After a tool ran: a `PostToolUse`.
    #[serde(rename = "tool.execute.after")]
    After,
}

impl Hook {
    /// The neutral event.
    fn neutral(self) -> EventName {
        match self {
            Hook::Before => EventName::PreToolUse,
            Hook::After => EventName::PostToolUse,
        }
    }
}

/// The plugin's event.
#[derive(Debug, Deserialize)]
struct Event {
    hook: String,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default, rename = "sessionID")]
    session_id: Option<String>,
    #[serde(default, rename = "callID")]
    call_id: Option<String>,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    directory: Option<PathBuf>,
    /// The agent the session's last model request was made for (the plugin's
    /// `chat.params`), when the plugin saw one.
    #[serde(default)]
    agent: Option<String>,
}

/// The client's name for people.
pub(crate) const DISPLAY: &str = "opencode";

/// What its edit is called in a deny text.
pub(crate) const WHAT: &str = "edit";

pub(crate) use super::opencode_text::parse_jsonc;

/// How its model calls `resolve` (opencode names an MCP tool `<server>_<tool>`).
pub(crate) const RESOLVE_TOOL: &str = "staged_resolve";

/// The client-neutral name of an opencode hook.
fn neutral(hook: &str) -> Option<EventName> {
    serde_json::from_value::<Hook>(Value::String(hook.to_owned())).ok().map(Hook::neutral)
}

/// The client-neutral name of the event in `input` (`PreToolUse`, `PostToolUse`).
pub(crate) fn event_name(input: &[u8]) -> Option<EventName> {
    #[derive(Deserialize)]
    struct Named {
        hook: Option<String>,
    }
    let hook = serde_json::from_slice::<Named>(input).ok()?.hook?;
    neutral(&hook)
}

/// The plugin's event as a [`HookEvent`].
pub(crate) fn parse(input: &[u8]) -> Result<HookEvent, String> {
    let event: Event = serde_json::from_slice(input)
        .map_err(|err| format!("the opencode hook event is not valid: {err}"))?;
    let name = neutral(&event.hook)
        .ok_or_else(|| format!("{:?} is not an opencode hook staged handles", event.hook))?;
    let dir = event.directory.filter(|d| d.is_absolute());
    let args = event.args.unwrap_or(Value::Null);
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    let path = |key: &str| {
        text(key).map(|p| match &dir {
            Some(dir) if !Path::new(p).is_absolute() => dir.join(p).to_string_lossy().into_owned(),
            _ => p.to_owned(),
        })
    };
    let (tool, input) = match event.tool.as_deref() {
        Some("edit") => {
            let input = EditInput {
                file_path: Some(path("filePath").into()),
                old_string: Some(text("oldString").into()),
                new_string: Some(text("newString").into()),
                replace_all: args.get("replaceAll").and_then(Value::as_bool),
            };
            (Some("Edit".to_owned()), input_json(input)?)
        }
        Some("write") => {
            let input = WriteInput {
                file_path: Some(path("filePath").into()),
                content: Some(text("content").into()),
            };
            (Some("Write".to_owned()), input_json(input)?)
        }
        Some("apply_patch") => {
            let input = PatchInput { input: text("patchText").into() };
            (Some("apply_patch".to_owned()), input_json(input)?)
        }
        other => (other.map(str::to_owned), args.clone()),
    };
    Ok(HookEvent {
        hook_event_name: name,
        session_id: event.session_id,
        cwd: dir,
        tool_name: tool,
        tool_input: Some(input),
        tool_response: None,
        tool_use_id: event.call_id,
        permission_mode: None,
        stop_hook_active: None,
        prompt: None,
        agent: event.agent,
    })
}

/// The plugin's answer that rewrites a call: the arguments to run it with.
#[derive(Debug, Serialize)]
struct Rewritten<'a> {
    args: &'a Value,
}

/// `reply` as the plugin reads it.
///
/// # Errors
/// Why the answer could not be written.
pub(crate) fn answer(reply: &Reply) -> Result<Option<Value>, String> {
    let answer = match reply {
        // Neither a model's context nor a message to the person reaches this client's
        // answer (notices wait for a deny or a block, which carry text in any client).
        Reply::Nothing | Reply::Context { .. } | Reply::Notice(_) => return Ok(None),
        Reply::Deny(reason) | Reply::Block(reason) => {
            to_json(Decided { decision: Decision::Deny, reason })
        }
        // A `bash` call run under staged's wrapper: the plugin assigns these arguments to
        // the call's own (opencode runs the tool with the object the plugin was given).
        Reply::Rewrite(args) => to_json(Rewritten { args }),
    };
    answer.map(Some)
}

/// The edit a read event's tool makes: `edit` (read as `Edit`) replaces, `write` (`Write`)
/// writes, `apply_patch` is a patch in Codex's format.
pub(crate) fn edit(event: &HookEvent) -> Option<ToolEdit> {
    match event.tool_name.as_deref()? {
        "Edit" => Some(ToolEdit::Replace),
        "Write" => Some(ToolEdit::Write),
        "apply_patch" => Some(ToolEdit::Patch),
        _ => None,
    }
}

/// opencode's own tool name for a decoded event's tool.
pub(crate) fn tool_name(event: &HookEvent) -> &str {
    match event.tool_name.as_deref() {
        Some("Edit") => "edit",
        Some("Write") => "write",
        Some(other) => other,
        None => "tool",
    }
}

// --- what opencode would allow ------------------------------------------------------------

/// opencode's rule for `key` (`edit`, `bash`) in the workspace `root`, and where it was
/// read: the last of the global `opencode.json(c)`, the project's, `.opencode/`'s and
/// `OPENCODE_PERMISSION` that has one (`permission.<key>`, or `permission` as one string).
///
/// # Errors
/// The config that could not be read, and why.
fn rule_for(root: &Path, key: &str) -> Result<Option<(Value, String)>, String> {
    let global = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .map(|dir| dir.join("opencode"));
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in global.iter().cloned().chain([root.to_path_buf(), root.join(".opencode")]) {
        files.push(dir.join("opencode.json"));
        files.push(dir.join("opencode.jsonc"));
    }
    let mut found: Option<(Value, String)> = None;
    for file in files {
        let Ok(meta) = std::fs::metadata(&file) else { continue };
        let where_ = file.display().to_string();
        if !meta.is_file() {
            continue;
        }
        let config = std::fs::read_to_string(&file)
            .map_err(|err| err.to_string())
            .and_then(|text| parse_jsonc(&text));
        match config {
            Ok(config) => {
                if let Some(rule) = rule_of(&config, key) {
                    found = Some((rule, where_));
                }
            }
            Err(why) => {
                return Err(format!("staged could not read opencode's config {where_}: {why}"));
            }
        }
    }
    if let Some(text) = std::env::var_os("OPENCODE_PERMISSION") {
        let text = text.to_string_lossy();
        match serde_json::from_str::<Value>(&text) {
            Ok(permission) => {
                if let Some(rule) = permission_rule(&permission, key) {
                    found = Some((rule, "OPENCODE_PERMISSION".to_owned()));
                }
            }
            Err(err) => return Err(format!("staged could not read OPENCODE_PERMISSION: {err}")),
        }
    }
    Ok(found)
}

/// Whether opencode runs every `bash` command of the agent `agent` (the one the plugin saw
/// the session's last model request made for; `None`: every agent the config names) without
/// asking: only then is a `bash` call wrapped, since the wrapped command would no longer
/// match opencode's own rules for commands. Read as opencode 1.18 builds an agent's rules:
/// its defaults allow `bash`; then the merged config's `permission` (the configs of
/// [`config_sources`], `tools.bash` before it, `OPENCODE_PERMISSION` over it), then the
/// agent's own `agent.<name>` (or `mode.<name>`) `permission` (`tools.bash` before it); the
/// last rule whose permission matches `bash` decides, so every rule after the last `*`
/// pattern must allow too. The order of the rules inside one level (the merged config's, or
/// the agent's) is not known here (a JSON object is read as a sorted map), so a level's rules
/// count as a set: each of them must allow, and a level decides every command when one of
/// them is a `*` pattern; unsure, staged refuses rather than wrap. An agent defined in a Markdown file with a `permission` or
/// `tools` of its own is not read (YAML): it is taken as not allowing. `Err` says what the
/// rule is instead, and where.
pub(crate) fn bash_allowed(root: &Path, agent: Option<&str>) -> Result<(), String> {
    allowed(root, agent, Guarded::Bash)
}

/// Whether opencode lets the agent `agent` reach every folder outside the project without
/// asking (its permission `external_directory`), read as [`bash_allowed`] reads `bash`;
/// unset, opencode 1.18's default asks (`{"*": "ask"}`, with its own temporary folders
/// allowed). `Err` says what the rule is instead, and where.
pub(crate) fn external_allowed(root: &Path, agent: Option<&str>) -> Result<(), String> {
    allowed(root, agent, Guarded::ExternalDirectory)
}

/// A path `command` names outside the folder `dir` (opencode's project folder): an absolute
/// path elsewhere, a path from the home folder (`~`), or one that climbs (`..`). opencode asks
/// its permission `external_directory` before a command of its own list (`cd`, `rm`, `cp`,
/// ...) touches such a path; wrapped, the command is an argument of staged's and opencode no
/// longer sees the path, so the gate reads every word of every command this way (more than
/// opencode does, never less): a heredoc's text, the part after a `=`; a quoted word is one
/// word, as opencode reads it.
pub(crate) fn outside_path(command: &str, dir: &Path) -> Option<String> {
    shell_words(command).into_iter().find(|word| {
        let climbs = Path::new(word).components().any(|c| c == std::path::Component::ParentDir);
        climbs
            || word.starts_with('~')
            || (word.starts_with('/') && !Path::new(word).starts_with(dir))
    })
}

/// An opencode permission the gate reads to never grant more than opencode would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Guarded {
    /// `bash`: a shell command (allowed by default).
    Bash,
    /// `external_directory`: a path outside the project (asked by default).
    ExternalDirectory,
}

impl Guarded {
    /// The permission's key in opencode's config.
    fn key(self) -> &'static str {
        match self {
            Guarded::Bash => "bash",
            Guarded::ExternalDirectory => "external_directory",
        }
    }

    /// What opencode does without a rule: `None` allows, else why it does not.
    fn default_refusal(self) -> Option<&'static str> {
        match self {
            Guarded::Bash => None,
            Guarded::ExternalDirectory => {
                Some("it is not set, and opencode's default for external_directory is \"ask\"")
            }
        }
    }
}

/// Whether opencode allows every use of `guarded` by the agent `agent` ([`bash_allowed`]).
fn allowed(root: &Path, agent: Option<&str>, guarded: Guarded) -> Result<(), String> {
    let sources = config_sources(root)?;
    let mut merged = Value::Object(Map::new());
    for (config, _) in &sources {
        merge_into(&mut merged, config.clone());
    }
    let mut rules = Vec::new();
    let mut permission = merged.get("permission").cloned().unwrap_or(Value::Null);
    if let Some(text) = std::env::var_os("OPENCODE_PERMISSION") {
        let env = serde_json::from_str::<Value>(&text.to_string_lossy())
            .map_err(|err| format!("staged could not read OPENCODE_PERMISSION: {err}"))?;
        merge_into(&mut permission, env);
    }
    let env = std::env::var_os("OPENCODE_PERMISSION")
        .and_then(|text| serde_json::from_str::<Value>(&text.to_string_lossy()).ok());
    let global = with_tools(merged.get("tools"), permission);
    push_rules(&mut rules, 0, &global, &|key| match &env {
        Some(Value::Object(keys)) if keys.contains_key(key) => {
            Some("OPENCODE_PERMISSION".to_owned())
        }
        Some(Value::String(_)) => Some("OPENCODE_PERMISSION".to_owned()),
        _ => where_set(&sources, &["permission", key], None),
    });
    let mut agents: Vec<String> = match agent {
        Some(name) => vec![name.to_owned()],
        None => ["agent", "mode"]
            .iter()
            .filter_map(|kind| merged.get(*kind).and_then(Value::as_object))
            .flat_map(|agents| agents.keys().cloned())
            .collect(),
    };
    agents.dedup();
    if agents.is_empty() {
        return decided(&rules, guarded);
    }
    for name in &agents {
        if let Some(file) = agent_file_with_permission(root, name) {
            return Err(format!(
                "the agent {name}'s permission is set in {}, which staged does not read",
                file.display()
            ));
        }
        let mut own = Value::Null;
        for kind in ["agent", "mode"] {
            if let Some(def) = merged.get(kind).and_then(|a| a.get(name.as_str())) {
                merge_into(&mut own, def.clone());
            }
        }
        let permission = own.get("permission").cloned().unwrap_or(Value::Null);
        let own_rules = with_tools(own.get("tools"), permission);
        let mut all = rules.clone();
        push_rules(&mut all, 1, &own_rules, &|key| {
            where_set(&sources, &["permission", key], Some(name))
                .map(|at| format!("{at} (agent {name})"))
        });
        decided(&all, guarded)?;
    }
    Ok(())
}

/// One rule of opencode's: the permission it names (a glob: `bash`, `*`), the pattern of
/// the command it matches, what it does, and how a person is told of it.
#[derive(Debug, Clone)]
struct Rule {
    /// Its level: 0 the merged config's, 1 the agent's own (a later level's rules come after).
    level: usize,
    permission: String,
    pattern: String,
    action: Value,
    told: String,
}

/// `tools` (opencode's older form: `{"bash": false}`) as rules before `permission`.
fn with_tools(tools: Option<&Value>, permission: Value) -> Value {
    let Some(bash) = tools.and_then(|t| t.get("bash")).and_then(Value::as_bool) else {
        return permission;
    };
    let action = if bash { "allow" } else { "deny" };
    let mut res = Value::Object(Map::from_iter([("bash".to_owned(), Value::from(action))]));
    merge_into(&mut res, permission);
    res
}

/// The rules of a `permission` value, in order (as opencode's `fromConfig`; one string is
/// the rule of every permission).
fn push_rules(
    rules: &mut Vec<Rule>,
    level: usize,
    permission: &Value,
    at: &dyn Fn(&str) -> Option<String>,
) {
    let place = |key: &str| at(key).unwrap_or_else(|| "OPENCODE_PERMISSION".to_owned());
    match permission {
        Value::String(_) => rules.push(Rule {
            level,
            permission: "*".to_owned(),
            pattern: "*".to_owned(),
            action: permission.clone(),
            told: format!("it is {permission} in {}", place("")),
        }),
        Value::Object(keys) => {
            for (key, value) in keys {
                let told = format!("it is {value} in {}", place(key));
                match value {
                    Value::Object(patterns) => {
                        for (pattern, action) in patterns {
                            rules.push(Rule {
                                level,
                                permission: key.clone(),
                                pattern: pattern.clone(),
                                action: action.clone(),
                                told: told.clone(),
                            });
                        }
                    }
                    _ => rules.push(Rule {
                        level,
                        permission: key.clone(),
                        pattern: "*".to_owned(),
                        action: value.clone(),
                        told,
                    }),
                }
            }
        }
        _ => {}
    }
}

/// Whether `rules` allow every `bash` command: from the last level that has a rule for every
/// command (a `*` pattern) whose permission matches `bash`, every rule matching `bash` must
/// allow (a level's rules in any order, since their order inside the level is not known).
/// None: opencode's default, which allows.
#[cfg(test)]
fn bash_decided(rules: &[Rule]) -> Result<(), String> {
    decided(rules, Guarded::Bash)
}

/// Whether `rules` allow every use of `guarded`, by the rule `bash_decided` describes for
/// `bash`; with no level deciding every use, opencode's default decides.
fn decided(rules: &[Rule], guarded: Guarded) -> Result<(), String> {
    let mut decided_at = None;
    for rule in rules.iter().rev().filter(|r| glob(&r.permission, guarded.key())) {
        if decided_at.is_some_and(|level| level != rule.level) {
            return Ok(());
        }
        if rule.action.as_str() != Some("allow") {
            return Err(rule.told.clone());
        }
        if rule.pattern == "*" {
            decided_at = Some(rule.level);
        }
    }
    match (decided_at, guarded.default_refusal()) {
        (None, Some(why)) => Err(why.to_owned()),
        _ => Ok(()),
    }
}

/// `over` merged into `into` as opencode merges its configs (objects key by key, a key
/// already there keeping its place; anything else replaced).
fn merge_into(into: &mut Value, over: Value) {
    match (into, over) {
        (Value::Object(into), Value::Object(over)) => {
            for (key, value) in over {
                match into.get_mut(&key) {
                    Some(slot) => merge_into(slot, value),
                    None => {
                        into.insert(key, value);
                    }
                }
            }
        }
        (into, over) => *into = over,
    }
}

/// Where the last config that sets `permission.<key>` (for `agent`: `agent.<agent>.` or
/// `mode.<agent>.permission.<key>`) was read; the empty key is `permission` itself.
fn where_set(sources: &[(Value, String)], path: &[&str], agent: Option<&str>) -> Option<String> {
    let key = path.get(1).copied().unwrap_or_default();
    sources.iter().rev().find_map(|(config, at)| {
        let scopes: Vec<&Value> = match agent {
            None => vec![config],
            Some(name) => ["agent", "mode"]
                .iter()
                .filter_map(|kind| config.get(*kind).and_then(|a| a.get(name)))
                .collect(),
        };
        scopes
            .iter()
            .any(|scope| {
                let permission = scope.get("permission");
                let tools = scope.get("tools").and_then(|t| t.get("bash")).is_some();
                match permission {
                    Some(Value::Object(keys)) => key.is_empty() || keys.contains_key(key) || tools,
                    Some(_) => true,
                    None => tools,
                }
            })
            .then(|| at.clone())
    })
}

/// opencode's config folders for agents and its own files: the global one
/// (`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`), the project's `.opencode`, and
/// `OPENCODE_CONFIG_DIR`.
fn config_dirs(root: &Path) -> Vec<PathBuf> {
    let global = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .map(|dir| dir.join("opencode"));
    let custom = std::env::var_os("OPENCODE_CONFIG_DIR").map(PathBuf::from);
    global.into_iter().chain([root.join(".opencode")]).chain(custom).collect()
}

/// opencode's configs, in the order it merges them (each with where it was read): the global
/// `config.json`, `opencode.json`, `opencode.jsonc`; the file `OPENCODE_CONFIG` names; the
/// project's `opencode.json(c)`; `.opencode/`'s and `OPENCODE_CONFIG_DIR`'s; then
/// `OPENCODE_CONFIG_CONTENT`.
///
/// # Errors
/// A config that is there and cannot be read, and why.
fn config_sources(root: &Path) -> Result<Vec<(Value, String)>, String> {
    let dirs = config_dirs(root);
    let mut files: Vec<PathBuf> = Vec::new();
    let custom_dir = std::env::var_os("OPENCODE_CONFIG_DIR").map(PathBuf::from);
    let global = dirs.first().filter(|d| **d != root.join(".opencode")).cloned();
    if let Some(global) = &global {
        files.extend(["config.json", "opencode.json", "opencode.jsonc"].map(|f| global.join(f)));
    }
    if let Some(custom) = std::env::var_os("OPENCODE_CONFIG") {
        files.push(PathBuf::from(custom));
    }
    for dir in
        [Some(root.to_path_buf()), Some(root.join(".opencode")), custom_dir].into_iter().flatten()
    {
        files.extend(["opencode.json", "opencode.jsonc"].map(|f| dir.join(f)));
    }
    let mut res = Vec::new();
    for file in files {
        let Ok(meta) = std::fs::metadata(&file) else { continue };
        if !meta.is_file() {
            continue;
        }
        let at = file.display().to_string();
        let config = std::fs::read_to_string(&file)
            .map_err(|err| err.to_string())
            .and_then(|text| parse_jsonc(&text))
            .map_err(|why| format!("staged could not read opencode's config {at}: {why}"))?;
        res.push((config, at));
    }
    if let Some(text) = std::env::var_os("OPENCODE_CONFIG_CONTENT") {
        let config = parse_jsonc(&text.to_string_lossy())
            .map_err(|why| format!("staged could not read OPENCODE_CONFIG_CONTENT: {why}"))?;
        res.push((config, "OPENCODE_CONFIG_CONTENT".to_owned()));
    }
    Ok(res)
}

/// A Markdown file defining the agent `name` (`{agent,agents}/<name>.md`,
/// `{mode,modes}/<name>.md` of a config folder) whose front matter sets a `permission` or
/// `tools` of its own, which staged does not read.
fn agent_file_with_permission(root: &Path, name: &str) -> Option<PathBuf> {
    for dir in config_dirs(root) {
        for kind in ["agent", "agents", "mode", "modes"] {
            let file = dir.join(kind).join(format!("{name}.md"));
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            let mut lines = text.lines();
            if lines.next().map(str::trim_end) != Some("---") {
                continue;
            }
            let sets = lines
                .take_while(|line| line.trim_end() != "---")
                .any(|line| line.starts_with("permission:") || line.starts_with("tools:"));
            if sets {
                return Some(file);
            }
        }
    }
    None
}

/// What opencode would do with the edit `event` in the workspace `root`: its permission for
/// edits ([`verdict`]), and for a file outside its project folder (the event's `directory`)
/// its permission for `external_directory` too, which opencode asks before such an edit
/// (unset, it asks): not `allow`, the preview is one only a person may apply; `deny` (or a
/// config staged cannot read as allowing) and opencode would refuse it.
pub(crate) fn edit_verdict(root: &Path, event: &HookEvent) -> Verdict {
    let verdict = verdict(root);
    if matches!(verdict, Verdict::Deny(_)) {
        return verdict;
    }
    let dir = event.cwd.as_deref().unwrap_or(root);
    let Some(path) = edit_outside(event, dir) else { return verdict };
    let Err(why) = external_allowed(root, event.agent.as_deref()) else { return verdict };
    let outside = format!("{path}, outside opencode's project folder {}", dir.display());
    if why.contains("\"deny\"") {
        return Verdict::Deny(format!(
            "opencode's permission for external_directory is \"deny\" ({why}), and this edit is of {outside}, so staged refused it without staging it, and nothing was written."
        ));
    }
    Verdict::PersonOnly(format!(
        "the person would have been asked before this edit of {outside} (opencode's permission for external_directory: {why})"
    ))
}

/// A file the edit `event` makes outside `dir`: an `edit`'s or `write`'s `file_path`, or a
/// file an `apply_patch` names (`*** Add File:`, `Update File:`, `Delete File:`, `Move to:`,
/// relative to `dir`).
fn edit_outside(event: &HookEvent, dir: &Path) -> Option<String> {
    let outside = |path: &str| {
        let path = dir.join(path);
        let climbs = path.components().any(|c| c == std::path::Component::ParentDir);
        (climbs || !path.starts_with(dir)).then(|| path.display().to_string())
    };
    if event.tool_name.as_deref() == Some("apply_patch") {
        let patch = event.input().input.0.unwrap_or_default();
        return patch.lines().find_map(|line| {
            let path = ["*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"]
                .iter()
                .find_map(|mark| line.strip_prefix(mark))?;
            outside(path.trim())
        });
    }
    outside(event.input().file_path.0?)
}

/// What opencode would do with an edit in the workspace `root`, from its permission config.
pub(crate) fn verdict(root: &Path) -> Verdict {
    let found = match rule_for(root, "edit") {
        Ok(found) => found,
        Err(why) => {
            return Verdict::PersonOnly(format!(
                "the person may have been asked before this edit ({why})"
            ));
        }
    };
    let Some((rule, source)) = found else { return Verdict::Stage };
    match rule.as_str() {
        Some("allow") => Verdict::Stage,
        Some("deny") => Verdict::Deny(format!(
            "opencode's permission for edits is \"deny\" ({source}), so staged refused this edit without staging it, and nothing was written."
        )),
        Some("ask") => Verdict::PersonOnly(format!(
            "the person would have been asked before this edit (opencode's permission for edits is \"ask\" in {source})"
        )),
        _ => {
            let all_allow = rule
                .as_object()
                .is_some_and(|rules| rules.values().all(|v| v.as_str() == Some("allow")));
            if all_allow {
                Verdict::Stage
            } else {
                Verdict::PersonOnly(format!(
                    "the person may have been asked before this edit (opencode's permission for edits in {source} has per-path rules, which staged does not match)"
                ))
            }
        }
    }
}

/// A config's rule for `key`: `permission.<key>`, or `permission` when it is one string.
fn rule_of(config: &Value, key: &str) -> Option<Value> {
    permission_rule(config.get("permission")?, key)
}

/// A `permission` value's rule for `key`: its `<key>`, or itself when it is one string.
fn permission_rule(permission: &Value, key: &str) -> Option<Value> {
    if permission.is_string() {
        return Some(permission.clone());
    }
    permission.get(key).cloned()
}

// --- record mode --------------------------------------------------------------------------

/// The file an `edit` or `write` names as it is now, and what the call makes of it; an
/// `apply_patch`'s files as Codex's are read.
pub(crate) fn snapshot(
    event: &HookEvent,
    ws: &WorkspaceSession,
    cwd: &Path,
) -> Result<Snapshot, String> {
    let tool = tool_name(event).to_owned();
    if event.tool_name.as_deref() == Some("apply_patch") {
        let mut snapshot = crate::record::codex_snapshot(event, ws, cwd)?;
        snapshot.tool = Some(tool);
        return Ok(snapshot);
    }
    let path = event.input().file_path.0.ok_or("the edit names no file")?;
    let rel = crate::record::claude_file(ws, path)?;
    let (text, mode) = match crate::record::read(ws, &rel)? {
        Some((text, mode)) => (Some(text), mode),
        None => (None, 0),
    };
    let input = event.tool_input.clone().unwrap_or(Value::Null);
    let after = match event.tool_name.as_deref() {
        Some("Write") => {
            input.get("content").and_then(Value::as_str).ok_or("the write has no content")?.to_owned()
        }
        _ => exact_edit(&input, text.as_deref().unwrap_or_default()).ok_or_else(|| {
            format!(
                "the edit's oldString is not in {} exactly as given, so what opencode makes of it is not known",
                rel.display()
            )
        })?,
    };
    let path = rel.display();
    Ok(Snapshot {
        files: vec![FileBefore { path: path.clone(), text, mode }],
        after: [(path, Some(after))].into_iter().collect(),
        tool: Some(tool),
        ..Snapshot::default()
    })
}

/// What opencode's `edit` makes of `text` when its `oldString` is there exactly: the first
/// (or, with `replaceAll`, every) one replaced; an empty `oldString` writes `newString` as the
/// file. `None` when it is not there, or is there more than once without `replaceAll`
/// (opencode refuses that edit).
fn exact_edit(input: &Value, text: &str) -> Option<String> {
    let old = input.get("old_string")?.as_str()?;
    let new = input.get("new_string")?.as_str()?;
    if old.is_empty() {
        return Some(new.to_owned());
    }
    let all = input.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
    match text.matches(old).count() {
        0 => None,
        1 => Some(text.replacen(old, new, 1)),
        _ if all => Some(text.replace(old, new)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    /// The answer, which these shapes always write.
    fn answer(reply: &Reply) -> Option<Value> {
        super::answer(reply).unwrap()
    }

    #[test]
    fn a_command_names_a_path_outside_the_project_as_opencode_reads_its_words() {
        let dir = Path::new("/w/p");
        let outside = |command: &str| outside_path(command, dir);
        let sed = "sed -i 's/oldApi(1)/newApi(1)/' src/a.ts && cat > src/b.ts <<'EOF'\nx\nEOF";
        assert_eq!(outside(sed), None);
        assert_eq!(outside("cp a /w/p/b"), None);
        assert_eq!(outside("cp a ../b").as_deref(), Some("../b"));
        assert_eq!(outside("cat '/etc/x'").as_deref(), Some("/etc/x"));
        assert_eq!(outside("cd ~ && ls").as_deref(), Some("~"));
        assert_eq!(outside("make --out=/tmp/o").as_deref(), Some("/tmp/o"));
        assert_eq!(outside("ls /w/pq").as_deref(), Some("/w/pq"));
    }

    #[test]
    fn a_levels_bash_rules_count_in_any_order() {
        let decided = |levels: &[Value]| {
            let mut rules = Vec::new();
            for (level, permission) in levels.iter().enumerate() {
                push_rules(&mut rules, level, permission, &|_| None);
            }
            bash_decided(&rules)
        };
        // opencode reads a config's keys in their order: `rm *` denied after `bash` allows; a
        // sorted map puts `*` first, so an ordered walk would see `bash: allow` last.
        assert!(decided(&[json!({"bash": "allow", "*": {"rm *": "deny"}})]).is_err());
        assert!(decided(&[json!({"bash": {"rm *": "ask", "*": "allow"}})]).is_err());
        assert!(decided(&[json!({"bash": "allow", "edit": "ask"})]).is_ok());
        // The agent's level after the config's: its `*` allow decides every command.
        assert!(decided(&[json!({"bash": "ask"}), json!({"bash": "allow"})]).is_ok());
        assert!(decided(&[json!({"bash": "allow"}), json!({"bash": {"git *": "ask"}})]).is_err());
        assert!(decided(&[]).is_ok());
    }

    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas_are_read() {
        let text = "{\n  // a comment\n  \"a\": \"x // not a comment\", /* block */\n  \"b\": [1, 2,],\n}\n";
        assert_eq!(parse_jsonc(text).unwrap(), json!({"a": "x // not a comment", "b": [1, 2]}));
        assert!(parse_jsonc("[1]").is_err());
        assert!(parse_jsonc("{\"a\": }").is_err());
    }

    #[test]
    fn an_exact_edit_is_known_and_a_loose_one_is_not() {
        let edit = |old: &str, new: &str, all: bool| json!({"old_string": old, "new_string": new, "replace_all": all});
        assert_eq!(exact_edit(&edit("a", "b", false), "xay").as_deref(), Some("xby"));
        assert_eq!(exact_edit(&edit("a", "b", false), "aa"), None);
        assert_eq!(exact_edit(&edit("a", "b", true), "aa").as_deref(), Some("bb"));
        assert_eq!(exact_edit(&edit("  a", "b", false), "a"), None);
        assert_eq!(exact_edit(&edit("", "new", false), "").as_deref(), Some("new"));
    }

    #[test]
    fn events_decode_to_the_neutral_shapes() {
        let event = parse(
            br#"{"hook":"tool.execute.before","tool":"edit","sessionID":"ses_1","callID":"call_0","directory":"/w","args":{"filePath":"src/a.ts","oldString":"a","newString":"b"}}"#,
        )
        .unwrap();
        assert_eq!(event.hook_event_name, "PreToolUse");
        assert_eq!(event.session_id.as_deref(), Some("ses_1"));
        assert_eq!(event.tool_use_id.as_deref(), Some("call_0"));
        assert_eq!(event.tool_name.as_deref(), Some("Edit"));
        assert_eq!(
            event.tool_input,
            Some(json!({"file_path": "/w/src/a.ts", "old_string": "a", "new_string": "b"}))
        );
        let patch = parse(
            br#"{"hook":"tool.execute.after","tool":"apply_patch","args":{"patchText":"*** Begin Patch"}}"#,
        )
        .unwrap();
        assert_eq!(patch.hook_event_name, "PostToolUse");
        assert_eq!(patch.tool_input, Some(json!({"input": "*** Begin Patch"})));
        assert!(parse(br#"{"hook":"session.idle"}"#).unwrap_err().contains("session.idle"));
        assert!(parse(b"[]").is_err());
        assert_eq!(event_name(br#"{"hook":"tool.execute.before"}"#).as_deref(), Some("PreToolUse"));
        assert_eq!(answer(&Reply::Nothing), None);
        assert_eq!(
            answer(&Reply::Deny("no".to_owned())),
            Some(json!({"decision": "deny", "reason": "no"}))
        );
    }
}
