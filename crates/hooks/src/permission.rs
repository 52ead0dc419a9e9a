//! What the client itself would let its model write, so that the gate never grants more
//! (`docs/contract/hooks.md#what-the-client-would-allow`).
//!
//! A gated edit is staged and then written by `resolve`, in staged's own process, outside the
//! client's sandbox and after its permission check said nothing (the hook denied the call). So
//! before staging, the hook reads what the client would have done with the edit:
//!
//! - **Claude Code** sends its permission mode in every event (`permission_mode`). `plan` and
//!   `dontAsk` (which refuses what was not allowed beforehand) are denied without staging;
//!   `acceptEdits` and `bypassPermissions` stage as before; `default` (the client would have
//!   asked the person), a mode staged does not know, or none, stage a preview only a person
//!   may apply. Allow rules (`permissions.allow`, `--allowedTools`) are not read: the safe
//!   reading is that the client would have asked.
//! - **Codex** sends `bypassPermissions` when its approval policy is `never`, else `default`,
//!   and no sandbox. The sandbox and approval policy are read from `config.toml`: the
//!   project's `.codex/config.toml` over the one in `CODEX_HOME`, a selected `profile`'s
//!   values over the top level's; with no `sandbox_mode`, Codex's own default: `workspace-write`
//!   in a project the person trusted (`[projects."<root>"] trust_level = "trusted"`), else
//!   `read-only`. A read-only sandbox that never asks denies without staging; one that asks,
//!   and the `untrusted` policy, stage a preview only a person may apply. Command-line flags
//!   (`--sandbox`, `--full-auto`, `-c`) are not visible to a hook; when the event's approval
//!   contradicts the configuration, the safe reading (the person is asked) wins.
//!
//! - **Qwen Code** sends its approval mode as `permission_mode` (`plan`, `default`,
//!   `auto-edit`, `auto`, `yolo`). `plan` is denied without staging; `auto-edit` and `yolo`
//!   (which write without asking) stage as before; `default` (which asks the person before an
//!   edit), `auto` (where a classifier may hand the edit to the person), a mode staged does
//!   not know, or none, stage a preview only a person may apply.
//!
//! In a `workspace-write` sandbox Codex writes only in the folder it runs in (its session's
//! folder, where it runs its hooks) and the `writable_roots` of `[sandbox_workspace_write]`: a
//! patch of a file of the workspace outside them is denied without staging
//! ([`outside_workspace_write`]).
//!
//! Paths outside the workspace are refused by the staging itself, and `.git/` and the agents'
//! control files by [`staged_journal::PROTECTED_PATHS`], whatever the mode.

use std::path::{Component, Path, PathBuf};

use toml_edit::DocumentMut;

use crate::event::{Client, HookEvent};

/// What the client would have done with an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Written without asking: stage it, and the model's `resolve` may apply it.
    Stage,
    /// The person would have been asked: stage it, but only a person may apply it (why).
    PersonOnly(String),
    /// Refused: deny without staging (why).
    Deny(String),
}

/// The deny reason in Claude Code's plan mode.
pub(crate) const PLAN_MODE: &str = "staged refused this edit without staging it, and nothing was written: Claude Code is in plan mode, in which it makes no edits. Present your plan instead; the edits can be made once the person leaves plan mode.";

/// The deny reason in Claude Code's `dontAsk` mode.
pub(crate) const DONT_ASK_MODE: &str = "staged refused this edit without staging it, and nothing was written: Claude Code is in its dontAsk permission mode, which refuses every tool not allowed beforehand, and staged does not read the allow rules. A person who wants this edit makes it, or runs Claude Code in acceptEdits mode.";

/// Why a Claude Code preview in its default mode waits for a person.
pub(crate) const CLAUDE_DEFAULT: &str =
    "Claude Code is in its default permission mode, in which it asks the person before an edit";

/// The longest unknown mode name quoted in a reason.
const MAX_MODE_CHARS: usize = 40;

/// What `client` would do with the edit `event` carries in the workspace `root`; `codex_home`
/// is Codex's home (its `config.toml`).
pub(crate) fn verdict(
    client: Client,
    event: &HookEvent,
    root: &Path,
    homes: &crate::install::ClientHomes,
) -> Verdict {
    let codex_home = homes.codex_home.as_deref();
    let mode = event.permission_mode.as_deref();
    if mode == Some("plan") {
        return Verdict::Deny(match client {
            Client::QwenCode => QWEN_PLAN_MODE.to_owned(),
            _ => PLAN_MODE.to_owned(),
        });
    }
    match client {
        Client::ClaudeCode => claude(mode),
        Client::Codex => codex(mode, &CodexConfig::read(root, codex_home)),
        Client::QwenCode => qwen(mode),
        Client::GeminiCli => gemini(&GeminiApproval::read(root, homes.gemini_home.as_deref())),
        Client::OpenCode => crate::clients::opencode::edit_verdict(root, event),
        // Cursor's agent writes its edits without asking (the person reviews them after).
        Client::Cursor => Verdict::Stage,
        // Its events carry no mode; its own permissions decide whether `staged-resolve` runs.
        Client::Copilot | Client::Cline => Verdict::Stage,
    }
}

/// The deny reason in Gemini CLI's plan mode.
pub(crate) const GEMINI_PLAN_MODE: &str = "staged refused this edit without staging it, and nothing was written: Gemini CLI's approval mode is plan, in which it makes no edits. Present your plan instead; the edits can be made once the person leaves plan mode.";

/// Gemini CLI's approval mode as its settings give it (`general.defaultApprovalMode`): its
/// events do not say, and an `--approval-mode` flag is not visible to a hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GeminiApproval {
    /// The mode, when a settings file sets it.
    pub(crate) mode: Option<String>,
    /// The settings files read, the one that decided first.
    pub(crate) from: String,
}

impl GeminiApproval {
    /// The workspace's `.gemini/settings.json` over the one in Gemini CLI's home (`home` is
    /// its `.gemini` folder).
    pub(crate) fn read(root: &Path, home: Option<&Path>) -> GeminiApproval {
        let files: Vec<PathBuf> = [Some(root.join(".gemini")), home.map(Path::to_path_buf)]
            .into_iter()
            .flatten()
            .map(|dir| dir.join("settings.json"))
            .collect();
        for file in &files {
            let mode = std::fs::metadata(file)
                .ok()
                .filter(std::fs::Metadata::is_file)
                .and_then(|_| std::fs::read(file).ok())
                .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
                .and_then(|v| {
                    v.pointer("/general/defaultApprovalMode")?.as_str().map(str::to_owned)
                });
            if let Some(mode) = mode {
                return GeminiApproval { mode: Some(mode), from: file.display().to_string() };
            }
        }
        let from = files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ");
        GeminiApproval { mode: None, from }
    }
}

fn gemini(approval: &GeminiApproval) -> Verdict {
    match approval.mode.as_deref() {
        Some("auto_edit" | "yolo") => Verdict::Stage,
        Some("plan") => Verdict::Deny(GEMINI_PLAN_MODE.to_owned()),
        Some("default") => Verdict::PersonOnly(format!(
            "Gemini CLI's approval mode is default (general.defaultApprovalMode in {}), in which it asks the person before an edit",
            approval.from
        )),
        Some(other) => Verdict::PersonOnly(format!(
            "Gemini CLI's approval mode is `{}` ({}), which staged does not know, so it reads it as one that asks the person before an edit",
            other.chars().take(MAX_MODE_CHARS).collect::<String>().escape_debug(),
            approval.from
        )),
        None => Verdict::PersonOnly(format!(
            "Gemini CLI's settings ({}) do not set general.defaultApprovalMode, so staged reads its approval mode as default, in which it asks the person before an edit (an --approval-mode flag is not visible to a hook)",
            approval.from
        )),
    }
}

/// The deny reason in Qwen Code's plan mode.
pub(crate) const QWEN_PLAN_MODE: &str = "staged refused this edit without staging it, and nothing was written: Qwen Code is in plan mode, in which it makes no edits. Present your plan instead; the edits can be made once the person leaves plan mode.";

/// Why a Qwen Code preview in its default approval mode waits for a person.
pub(crate) const QWEN_DEFAULT: &str =
    "Qwen Code is in its default approval mode, in which it asks the person before an edit";

fn qwen(mode: Option<&str>) -> Verdict {
    match mode {
        Some("auto-edit" | "auto_edit" | "yolo") => Verdict::Stage,
        Some("default") => Verdict::PersonOnly(QWEN_DEFAULT.to_owned()),
        Some("auto") => Verdict::PersonOnly(
            "Qwen Code is in its auto approval mode, in which a classifier may ask the person before an edit".to_owned(),
        ),
        Some(other) => Verdict::PersonOnly(format!(
            "Qwen Code is in the approval mode `{}`, which staged does not know, so it reads it as one that asks the person before an edit",
            other.chars().take(MAX_MODE_CHARS).collect::<String>().escape_debug()
        )),
        None => Verdict::PersonOnly(
            "Qwen Code did not say its approval mode, so staged reads it as one that asks the person before an edit"
                .to_owned(),
        ),
    }
}

fn claude(mode: Option<&str>) -> Verdict {
    match mode {
        Some("acceptEdits" | "bypassPermissions") => Verdict::Stage,
        Some("dontAsk") => Verdict::Deny(DONT_ASK_MODE.to_owned()),
        Some("default") => Verdict::PersonOnly(CLAUDE_DEFAULT.to_owned()),
        Some(other) => Verdict::PersonOnly(format!(
            "Claude Code is in the permission mode `{}`, which staged does not know, so it reads it as one that asks the person before an edit",
            other.chars().take(MAX_MODE_CHARS).collect::<String>().escape_debug()
        )),
        None => Verdict::PersonOnly(
            "Claude Code did not say its permission mode, so staged reads it as one that asks the person before an edit"
                .to_owned(),
        ),
    }
}

/// Codex's approval policy and sandbox as its configuration files give them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CodexConfig {
    /// `approval_policy`, when set.
    pub(crate) approval: Option<String>,
    /// `sandbox_mode`, when set, else Codex's default for the project.
    pub(crate) sandbox: String,
    /// Where the sandbox came from, for the reasons and `staged doctor`.
    pub(crate) sandbox_from: String,
    /// `[sandbox_workspace_write] writable_roots`: folders a `workspace-write` sandbox lets
    /// Codex write besides the one it runs in.
    pub(crate) writable_roots: Vec<PathBuf>,
}

impl CodexConfig {
    /// Reads `CODEX_HOME/config.toml`, then the project's `.codex/config.toml` over it.
    pub(crate) fn read(root: &Path, codex_home: Option<&Path>) -> CodexConfig {
        let user = codex_home.and_then(|home| parse(&home.join("config.toml")));
        let project = parse(&root.join(".codex").join("config.toml"));
        let value = |key: &str| -> Option<(String, &'static str)> {
            [(project.as_ref(), ".codex/config.toml"), (user.as_ref(), "CODEX_HOME/config.toml")]
                .into_iter()
                .find_map(|(doc, from)| Some((setting(doc?, key)?, from)))
        };
        let approval = value("approval_policy").map(|(v, _)| v);
        let (sandbox, sandbox_from) = match value("sandbox_mode") {
            Some((mode, from)) => (mode, format!("sandbox_mode in {from}")),
            None => {
                let trusted = user.as_ref().is_some_and(|doc| trusted(doc, root));
                let mode = if trusted { "workspace-write" } else { "read-only" };
                let why = if trusted {
                    "Codex's default in a trusted project; no sandbox_mode is set"
                } else {
                    "Codex's default in a project not marked trusted; no sandbox_mode is set"
                };
                (mode.to_owned(), why.to_owned())
            }
        };
        let writable_roots = [project.as_ref(), user.as_ref()]
            .into_iter()
            .flatten()
            .flat_map(writable_roots)
            .collect();
        CodexConfig { approval, sandbox, sandbox_from, writable_roots }
    }
}

/// The `writable_roots` of a `config.toml`'s `[sandbox_workspace_write]` (the selected
/// profile's too).
fn writable_roots(doc: &DocumentMut) -> Vec<PathBuf> {
    let profile = doc.get("profile").and_then(|p| p.as_str());
    let tables = [
        profile.and_then(|name| doc.get("profiles")?.get(name)?.get("sandbox_workspace_write")),
        doc.get("sandbox_workspace_write"),
    ];
    tables
        .into_iter()
        .flatten()
        .filter_map(|table| table.get("writable_roots")?.as_array())
        .flat_map(|roots| roots.iter().filter_map(|v| v.as_str().map(PathBuf::from)))
        .collect()
}

/// `path` with its `.` and `..` components resolved by name.
fn lexical(path: &Path) -> PathBuf {
    let mut res = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                res.pop();
            }
            Component::CurDir => {}
            other => res.push(other),
        }
    }
    res
}

/// Why Codex would refuse to write some of `paths` (absolute) itself: in a `workspace-write`
/// sandbox it writes only in `session_dir` (the folder it runs in) and the configuration's
/// `writable_roots`. `None` in any other sandbox, or when every path is inside them.
pub(crate) fn outside_workspace_write(
    root: &Path,
    codex_home: Option<&Path>,
    session_dir: &Path,
    paths: &[PathBuf],
) -> Option<String> {
    let config = CodexConfig::read(root, codex_home);
    if config.sandbox != "workspace-write" {
        return None;
    }
    let session_dir = session_dir.canonicalize().unwrap_or_else(|_| lexical(session_dir));
    let mut writable = vec![session_dir.clone()];
    writable.extend(config.writable_roots.iter().map(|r| lexical(&session_dir.join(r))));
    let outside: Vec<String> = paths
        .iter()
        .map(|path| lexical(path))
        .filter(|path| !writable.iter().any(|w| path.starts_with(w)))
        .map(|path| path.strip_prefix(root).unwrap_or(&path).display().to_string())
        .collect();
    if outside.is_empty() {
        return None;
    }
    let roots: Vec<String> = writable.iter().map(|w| w.display().to_string()).collect();
    Some(format!(
        "staged refused this patch without staging it, and nothing was written: Codex runs with a `workspace-write` sandbox ({}), in which it writes only in {}, and {} {} outside that, so it would refuse this write itself. A person who wants this change makes it, or runs Codex in a folder that holds it.",
        config.sandbox_from,
        roots.join(", "),
        outside.join(", "),
        if outside.len() == 1 { "is" } else { "are" }
    ))
}

fn parse(path: &Path) -> Option<DocumentMut> {
    std::fs::read_to_string(path).ok()?.parse::<DocumentMut>().ok()
}

/// A top-level string setting, the selected profile's first.
fn setting(doc: &DocumentMut, key: &str) -> Option<String> {
    let profile = doc.get("profile").and_then(|p| p.as_str());
    let in_profile = profile.and_then(|name| doc.get("profiles")?.get(name)?.get(key)?.as_str());
    in_profile.or_else(|| doc.get(key)?.as_str()).map(str::to_owned)
}

fn trusted(doc: &DocumentMut, root: &Path) -> bool {
    let Some(root) = root.to_str() else { return false };
    doc.get("projects")
        .and_then(|projects| projects.get(root))
        .and_then(|project| project.get("trust_level"))
        .and_then(|level| level.as_str())
        == Some("trusted")
}

fn codex(mode: Option<&str>, config: &CodexConfig) -> Verdict {
    let never_asks = match mode {
        Some("bypassPermissions") => true,
        // The approval asks the person; which policy, the configuration says, unless it says
        // `never` (then a flag changed it, and the safe reading is that the person is asked).
        _ => false,
    };
    let sandbox = config.sandbox.as_str();
    let read_only = !matches!(sandbox, "workspace-write" | "danger-full-access");
    if never_asks {
        return match read_only {
            true => Verdict::Deny(format!(
                "staged refused this patch without staging it, and nothing was written: Codex runs with a `{}` sandbox ({}) and never asks for approval, so it would refuse this write itself. A person who wants this change makes it, or runs Codex with a sandbox that allows it.",
                sandbox.escape_debug(),
                config.sandbox_from
            )),
            false => Verdict::Stage,
        };
    }
    let approval = config.approval.as_deref();
    match approval {
        Some("on-request" | "on-failure") if !read_only => Verdict::Stage,
        Some("untrusted") => Verdict::PersonOnly(
            "Codex asks the person before every edit (approval_policy = \"untrusted\")".to_owned(),
        ),
        Some("on-request" | "on-failure") => Verdict::PersonOnly(format!(
            "Codex runs with a `{}` sandbox ({}), in which it asks the person before an edit",
            sandbox.escape_debug(),
            config.sandbox_from
        )),
        _ => Verdict::PersonOnly(
            "Codex asks the person for approvals (its event says permission_mode \"default\"), and its configuration does not say for which, so staged reads it as asking before an edit"
                .to_owned(),
        ),
    }
}

/// What `staged doctor` says about how the gate reads `client`'s permissions in `root`, with
/// every client's home.
pub fn doctor_line_for(client: Client, root: &Path, homes: &crate::install::ClientHomes) -> String {
    let codex_home = homes.codex_home.as_deref();
    match client {
        Client::GeminiCli => {
            let approval = GeminiApproval::read(root, homes.gemini_home.as_deref());
            format!(
                "Gemini CLI's approval mode as staged reads it: {} ({}); auto_edit lets the model's resolve apply a preview, plan denies an edit without staging it, default (or none) stages previews only a person may apply; an --approval-mode or --yolo flag is not visible to the hook, so set general.defaultApprovalMode in settings.json",
                approval.mode.as_deref().unwrap_or("not set"),
                approval.from
            )
        }
        Client::ClaudeCode => "Claude Code's permission mode is read from each event: plan and dontAsk deny an edit without staging it; in default mode (or an unknown one) only a person may apply the preview (`staged review`), since staged does not read allow rules (`permissions.allow`, `--allowedTools`); acceptEdits and bypassPermissions let the model's resolve apply it".to_owned(),
        Client::QwenCode => "Qwen Code's approval mode is read from each event: plan denies an edit without staging it; in default mode (or auto, or an unknown one) only a person may apply the preview (`staged review`); auto-edit and yolo let the model's resolve apply it".to_owned(),
        Client::Copilot => crate::clients::copilot::PERMISSIONS.to_owned(),
        Client::Cline => crate::clients::cline::PERMISSIONS.to_owned(),
        Client::Codex => {
            let config = CodexConfig::read(root, codex_home);
            format!(
                "Codex's sandbox as staged reads it: {} ({}), approval_policy {}; a --sandbox, --full-auto or -c flag on Codex's command line is not visible to the hook, so set them in config.toml",
                config.sandbox,
                config.sandbox_from,
                config.approval.as_deref().unwrap_or("not set")
            )
        }
        Client::OpenCode => match crate::clients::opencode::verdict(root) {
            Verdict::Stage => "opencode's permission for edits, as staged reads it: allow (the model's resolve applies its previews)".to_owned(),
            Verdict::PersonOnly(why) => format!("opencode's permission for edits, as staged reads it: only a person may apply a preview ({why})"),
            Verdict::Deny(why) => format!("opencode's permission for edits, as staged reads it: deny ({why})"),
        },
        Client::Cursor => "Cursor's agent writes edits without asking, so the model's resolve applies its previews; Cursor's own settings are not read (tested on its documented events only)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn config(approval: Option<&str>, sandbox: &str) -> CodexConfig {
        CodexConfig {
            approval: approval.map(str::to_owned),
            sandbox: sandbox.to_owned(),
            sandbox_from: "test".to_owned(),
            writable_roots: Vec::new(),
        }
    }

    #[test]
    fn a_workspace_write_sandbox_writes_only_in_its_folder_and_writable_roots() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(root.join("app")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let paths = |names: &[&str]| names.iter().map(|n| root.join(n)).collect::<Vec<_>>();
        std::fs::write(
            home.join("config.toml"),
            "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nwritable_roots = [\"../docs\"]\n",
        )
        .unwrap();
        let session = root.join("app");
        assert_eq!(
            outside_workspace_write(
                &root,
                Some(&home),
                &session,
                &paths(&["app/a.ts", "docs/x.md"])
            ),
            None
        );
        let why = outside_workspace_write(
            &root,
            Some(&home),
            &session,
            &paths(&["app/a.ts", "lib/b.ts", "app/../c.ts"]),
        )
        .unwrap();
        assert!(why.contains("it writes only in "), "{why}");
        assert!(why.contains("and lib/b.ts, c.ts are outside that"), "{why}");
        // Another sandbox: not this rule's to decide.
        std::fs::write(home.join("config.toml"), "sandbox_mode = \"danger-full-access\"\n")
            .unwrap();
        assert_eq!(
            outside_workspace_write(&root, Some(&home), &session, &paths(&["lib/b.ts"])),
            None
        );
    }

    #[test]
    fn gemini_cli_modes_come_from_its_settings() {
        let dir = tempfile::tempdir().unwrap();
        let (root, home) = (dir.path().join("repo"), dir.path().join("home/.gemini"));
        std::fs::create_dir_all(root.join(".gemini")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let read = || GeminiApproval::read(&root, Some(&home));
        assert!(
            matches!(gemini(&read()), Verdict::PersonOnly(why) if why.contains("do not set general.defaultApprovalMode"))
        );
        let set = |file: &Path, mode: &str| {
            std::fs::write(file, format!(r#"{{"general": {{"defaultApprovalMode": "{mode}"}}}}"#))
                .unwrap();
        };
        set(&home.join("settings.json"), "auto_edit");
        assert_eq!(gemini(&read()), Verdict::Stage);
        // The workspace's settings win over the person's.
        set(&root.join(".gemini/settings.json"), "plan");
        assert_eq!(gemini(&read()), Verdict::Deny(GEMINI_PLAN_MODE.to_owned()));
        set(&root.join(".gemini/settings.json"), "default");
        assert!(
            matches!(gemini(&read()), Verdict::PersonOnly(why) if why.starts_with("Gemini CLI's approval mode is default"))
        );
        // A file that does not parse sets nothing.
        std::fs::write(root.join(".gemini/settings.json"), "{ // comment").unwrap();
        assert_eq!(gemini(&read()), Verdict::Stage);
    }

    #[test]
    fn qwen_code_modes() {
        assert_eq!(qwen(Some("auto-edit")), Verdict::Stage);
        assert_eq!(qwen(Some("auto_edit")), Verdict::Stage);
        assert_eq!(qwen(Some("yolo")), Verdict::Stage);
        assert_eq!(qwen(Some("default")), Verdict::PersonOnly(QWEN_DEFAULT.to_owned()));
        assert!(matches!(qwen(Some("auto")), Verdict::PersonOnly(_)));
        assert!(matches!(qwen(Some("new-mode")), Verdict::PersonOnly(_)));
        assert!(matches!(qwen(None), Verdict::PersonOnly(_)));
    }

    #[test]
    fn claude_code_modes() {
        assert_eq!(claude(Some("acceptEdits")), Verdict::Stage);
        assert_eq!(claude(Some("bypassPermissions")), Verdict::Stage);
        assert!(matches!(claude(Some("dontAsk")), Verdict::Deny(_)));
        assert_eq!(claude(Some("default")), Verdict::PersonOnly(CLAUDE_DEFAULT.to_owned()));
        assert!(matches!(claude(Some("auto")), Verdict::PersonOnly(why) if why.contains("`auto`")));
        assert!(matches!(claude(None), Verdict::PersonOnly(_)));
    }

    #[test]
    fn codex_sandboxes_and_approvals() {
        let bypass = Some("bypassPermissions");
        assert!(matches!(codex(bypass, &config(None, "read-only")), Verdict::Deny(_)));
        assert!(matches!(codex(bypass, &config(None, "nonsense")), Verdict::Deny(_)));
        assert_eq!(codex(bypass, &config(None, "workspace-write")), Verdict::Stage);
        assert_eq!(codex(bypass, &config(None, "danger-full-access")), Verdict::Stage);
        let asks = Some("default");
        assert_eq!(codex(asks, &config(Some("on-request"), "workspace-write")), Verdict::Stage);
        assert!(matches!(
            codex(asks, &config(Some("on-request"), "read-only")),
            Verdict::PersonOnly(_)
        ));
        assert!(matches!(
            codex(asks, &config(Some("untrusted"), "danger-full-access")),
            Verdict::PersonOnly(_)
        ));
        // The event says the person is asked while config.toml says never: a flag changed it.
        assert!(matches!(
            codex(asks, &config(Some("never"), "danger-full-access")),
            Verdict::PersonOnly(_)
        ));
    }

    #[test]
    fn codex_config_files_profiles_and_trust() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let home = dir.path().join("home");
        std::fs::create_dir_all(root.join(".codex")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        assert_eq!(CodexConfig::read(&root, Some(&home)).sandbox, "read-only");
        std::fs::write(
            home.join("config.toml"),
            format!(
                "approval_policy = \"never\"\n[projects.{:?}]\ntrust_level = \"trusted\"\n",
                root.to_str().unwrap()
            ),
        )
        .unwrap();
        let read = CodexConfig::read(&root, Some(&home));
        assert_eq!(
            (read.sandbox.as_str(), read.approval.as_deref()),
            ("workspace-write", Some("never"))
        );
        std::fs::write(
            home.join("config.toml"),
            "sandbox_mode = \"danger-full-access\"\nprofile = \"safe\"\n[profiles.safe]\nsandbox_mode = \"read-only\"\n",
        )
        .unwrap();
        assert_eq!(CodexConfig::read(&root, Some(&home)).sandbox, "read-only");
        std::fs::write(root.join(".codex/config.toml"), "sandbox_mode = \"workspace-write\"\n")
            .unwrap();
        let read = CodexConfig::read(&root, Some(&home));
        assert_eq!(read.sandbox, "workspace-write");
        assert_eq!(read.sandbox_from, "sandbox_mode in .codex/config.toml");
    }
}
