//! opencode's events, as staged's plugin sends them (recorded from opencode 1.18.33 with the
//! plugin `staged hook install opencode` writes: `tests/fixtures/opencode/`, with the
//! workspace's path as `__ROOT__`), run through `staged_hooks::handle` in a fresh workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::json;
use staged_hooks::{Client, HookEvent, Mode, Reply, handle};
use staged_workspace::WorkspaceSession;

struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.ts"), "oldApi(1);\n").unwrap();
        Repo { _dir: dir, root }
    }

    fn event(&self, name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/fixtures/opencode/{name}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        text.replace("__ROOT__", self.root.to_str().unwrap()).into_bytes()
    }

    fn run(&self, mode: Mode, name: &str) -> staged_hooks::Outcome {
        handle(Client::OpenCode, mode, &self.event(name), None, &self.root)
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }

    fn pending(&self) -> Vec<String> {
        let ws = WorkspaceSession::open(&self.root).unwrap();
        ws.store().summaries().unwrap().into_iter().map(|s| s.label).collect()
    }

    /// The log's entries, oldest first: (front end, source, label, reason, has undo data).
    fn log(&self) -> Vec<(String, String, String, String, bool)> {
        let ws = WorkspaceSession::open(&self.root).unwrap();
        let mut entries = ws.store().log().unwrap().entries(100, true).unwrap();
        entries.reverse();
        entries
            .into_iter()
            .map(|e| {
                (
                    e.record.front_end.clone(),
                    e.record.source_tool_name.clone(),
                    e.record.label.clone(),
                    e.record.reason.clone(),
                    e.record.undo.is_some(),
                )
            })
            .collect()
    }
}

fn denied(reply: &Reply) -> &str {
    match reply {
        Reply::Deny(reason) => reason,
        other => panic!("expected a deny, got {other:?}"),
    }
}

#[test]
fn the_plugins_events_decode_to_the_neutral_events() {
    let repo = Repo::new();
    for (name, kind) in [
        ("pre-edit", "PreToolUse"),
        ("post-edit", "PostToolUse"),
        ("pre-write", "PreToolUse"),
        ("post-write", "PostToolUse"),
        ("pre-apply-patch", "PreToolUse"),
        ("post-apply-patch", "PostToolUse"),
    ] {
        assert_eq!(
            staged_hooks::event_name(Client::OpenCode, &repo.event(name)).as_deref(),
            Some(kind),
            "{name}"
        );
        // They are not Claude Code's events: read as one, they name no event.
        assert!(HookEvent::parse(&repo.event(name)).is_err(), "{name}");
    }
}

#[test]
fn an_edit_is_staged_and_denied_naming_the_preview_and_staged_resolve() {
    let repo = Repo::new();
    let outcome = repo.run(Mode::Gate, "pre-edit");
    let reason = denied(&outcome.reply);
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
    assert_eq!(repo.pending(), ["Edit: src/a.ts (1 replacement)"]);
    assert!(
        reason.starts_with("staged holds this edit as a preview, and nothing was written yet: "),
        "{reason}"
    );
    assert!(reason.contains("To write it, call staged_resolve with action \"apply\""), "{reason}");
    assert!(reason.ends_with(staged_core::RESOLVE_REMINDER), "{reason}");
    // What the plugin reads: a deny it throws.
    assert_eq!(
        outcome.reply.answer_for(Client::OpenCode).unwrap(),
        Some(json!({"decision": "deny", "reason": reason}))
    );
}

#[test]
fn a_write_and_an_apply_patch_are_staged() {
    let repo = Repo::new();
    denied(&repo.run(Mode::Gate, "pre-write").reply);
    assert_eq!(repo.read("src/b.ts"), None);
    assert_eq!(repo.pending(), ["Write: src/b.ts (new file, 1 line)"]);
    let repo = Repo::new();
    denied(&repo.run(Mode::Gate, "pre-apply-patch").reply);
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
    assert_eq!(repo.pending().len(), 1);
}

#[test]
fn the_after_hook_in_gate_mode_and_other_tools_answer_nothing() {
    let repo = Repo::new();
    assert_eq!(repo.run(Mode::Gate, "post-edit").reply, Reply::Nothing);
    let bash = String::from_utf8(repo.event("pre-edit"))
        .unwrap()
        .replace(r#""tool": "edit""#, r#""tool": "read""#);
    let outcome = handle(Client::OpenCode, Mode::Gate, bash.as_bytes(), None, &repo.root);
    assert_eq!(outcome.reply, Reply::Nothing);
    assert_eq!(outcome.reply.answer_for(Client::OpenCode).unwrap(), None);
    // A `bash` call whose command staged cannot read is no other tool: a gate refuses it.
    let bash = bash.replace(r#""tool": "read""#, r#""tool": "bash""#);
    let outcome = handle(Client::OpenCode, Mode::Gate, bash.as_bytes(), None, &repo.root);
    assert!(
        denied(&outcome.reply).contains("staged cannot read this shell call's command"),
        "{outcome:?}"
    );
    // An event that is not one is refused in gate mode.
    let odd = handle(Client::OpenCode, Mode::Gate, br#"{"hook":"x"}"#, None, &repo.root);
    assert!(denied(&odd.reply).contains("\"x\" is not an opencode hook"), "{odd:?}");
}

#[test]
fn edits_writes_and_patches_are_recorded_with_undo_data() {
    let repo = Repo::new();
    assert_eq!(repo.run(Mode::Record, "pre-edit").reply, Reply::Nothing);
    std::fs::write(repo.root.join("src/a.ts"), "newApi(1);\n").unwrap();
    let post = repo.run(Mode::Record, "post-edit");
    assert_eq!(post.reply, Reply::Nothing);
    assert!(post.notes.is_empty(), "{:?}", post.notes);
    repo.run(Mode::Record, "pre-write");
    std::fs::write(repo.root.join("src/b.ts"), "hello\n").unwrap();
    repo.run(Mode::Record, "post-write");
    let log = repo.log();
    assert_eq!(
        log.iter()
            .map(|(f, s, l, r, u)| (f.as_str(), s.as_str(), l.as_str(), r.as_str(), *u))
            .collect::<Vec<_>>(),
        [
            (
                "hook:opencode",
                "edit",
                "Edit: src/a.ts (+1 -1)",
                "opencode's edit, recorded by staged's hook",
                true
            ),
            (
                "hook:opencode",
                "write",
                "Write: src/b.ts (new file, 1 lines)",
                "opencode's write, recorded by staged's hook",
                true
            ),
        ]
    );
    let repo = Repo::new();
    repo.run(Mode::Record, "pre-apply-patch");
    std::fs::write(repo.root.join("src/a.ts"), "newApi(1);\n").unwrap();
    repo.run(Mode::Record, "post-apply-patch");
    assert_eq!(repo.log().len(), 1);
    assert_eq!(repo.log()[0].1, "apply_patch");
}

#[test]
fn an_edit_the_disk_does_not_show_is_not_recorded() {
    let repo = Repo::new();
    repo.run(Mode::Record, "pre-edit");
    // A formatter, or opencode's loose matching, made something else of the file.
    std::fs::write(repo.root.join("src/a.ts"), "newApi( 1 );\n").unwrap();
    let post = repo.run(Mode::Record, "post-edit");
    assert_eq!(post.reply, Reply::Nothing);
    assert!(
        post.notes.iter().any(|n| n.contains("not what the patch makes of it")),
        "{:?}",
        post.notes
    );
    assert!(repo.log().is_empty());
}

#[test]
fn opencodes_permission_for_edits_is_honoured() {
    let repo = Repo::new();
    std::fs::write(
        repo.root.join("opencode.json"),
        "{\n  // edits are refused here\n  \"permission\": {\"edit\": \"deny\"},\n}\n",
    )
    .unwrap();
    let reason = denied(&repo.run(Mode::Gate, "pre-edit").reply).to_owned();
    assert!(reason.starts_with("opencode's permission for edits is \"deny\" ("), "{reason}");
    assert!(repo.pending().is_empty());
    std::fs::write(repo.root.join("opencode.json"), r#"{"permission": {"edit": "ask"}}"#).unwrap();
    let reason = denied(&repo.run(Mode::Gate, "pre-edit").reply).to_owned();
    assert!(reason.contains("so only a person may apply it"), "{reason}");
    assert!(reason.contains("The person would have been asked before this edit (opencode's permission for edits is \"ask\" in "), "{reason}");
    assert_eq!(repo.pending().len(), 1);
}

/// opencode asks its permission `external_directory` before an edit of a file outside its
/// project folder (the event's `directory`), and asks by default: such an edit in the
/// workspace is staged as a preview only a person may apply, refused where opencode's rule
/// denies, and staged as any other where it allows.
#[test]
fn an_edit_outside_opencodes_project_folder_follows_its_external_directory_permission() {
    let outside_event = |repo: &Repo, name: &str| {
        std::fs::create_dir_all(repo.root.join("sub")).unwrap();
        let text = String::from_utf8(repo.event(name)).unwrap();
        let root = repo.root.to_str().unwrap();
        let text = text.replace(
            &format!("\"directory\": \"{root}\""),
            &format!("\"directory\": \"{root}/sub\""),
        );
        assert!(text.contains("/sub\""), "{text}");
        // A patch's paths are relative to the project folder.
        let text = text.replace("File: src/", "File: ../src/");
        handle(Client::OpenCode, Mode::Gate, text.as_bytes(), Some(&repo.root), &repo.root)
    };
    // Unset: opencode would ask.
    let repo = Repo::new();
    let reason = denied(&outside_event(&repo, "pre-edit").reply).to_owned();
    assert!(reason.contains("so only a person may apply it"), "{reason}");
    assert!(reason.contains("outside opencode's project folder"), "{reason}");
    assert_eq!(repo.pending().len(), 1);
    let repo = Repo::new();
    let reason = denied(&outside_event(&repo, "pre-apply-patch").reply).to_owned();
    assert!(reason.contains("so only a person may apply it"), "{reason}");
    // Denied: refused without staging.
    let repo = Repo::new();
    let config = r#"{"permission": {"external_directory": "deny"}}"#;
    std::fs::write(repo.root.join("opencode.json"), config).unwrap();
    let reason = denied(&outside_event(&repo, "pre-edit").reply).to_owned();
    assert!(
        reason.starts_with("opencode's permission for external_directory is \"deny\" ("),
        "{reason}"
    );
    assert!(repo.pending().is_empty());
    // Allowed: the model may apply it.
    let repo = Repo::new();
    let config = r#"{"permission": {"external_directory": "allow"}}"#;
    std::fs::write(repo.root.join("opencode.json"), config).unwrap();
    let reason = denied(&outside_event(&repo, "pre-edit").reply).to_owned();
    assert!(!reason.contains("only a person"), "{reason}");
    assert_eq!(repo.pending().len(), 1);
    // Inside the project folder, its permission is not asked.
    let repo = Repo::new();
    let reason = denied(&repo.run(Mode::Gate, "pre-edit").reply).to_owned();
    assert!(!reason.contains("only a person"), "{reason}");
}
