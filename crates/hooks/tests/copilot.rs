//! The hook events recorded from GitHub Copilot CLI 1.0.102 (`tests/fixtures/copilot/`, with
//! the workspace's path as `__ROOT__`), run through `staged_hooks::handle` in a fresh
//! workspace that holds the file the recorded session edited, and the answers Copilot reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::json;
use staged_hooks::{Client, Mode, Reply, handle};
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
            .join(format!("tests/fixtures/copilot/{name}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        text.replace("__ROOT__", self.root.to_str().unwrap()).into_bytes()
    }

    fn run(&self, mode: Mode, name: &str) -> Reply {
        handle(Client::Copilot, mode, &self.event(name), None, &self.root).reply
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }

    fn pending(&self) -> Vec<(String, String)> {
        let ws = WorkspaceSession::open(&self.root).unwrap();
        ws.store().summaries().unwrap().into_iter().map(|s| (s.id.to_string(), s.label)).collect()
    }

    /// (front end, source, label, reason) of each entry, oldest first.
    fn log(&self) -> Vec<(String, String, String, String)> {
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
fn an_edit_is_staged_and_denied_naming_the_preview_for_staged_resolve() {
    let repo = Repo::new();
    let reason = denied(&repo.run(Mode::Gate, "pre-edit")).to_owned();
    let pending = repo.pending();
    assert_eq!(pending.len(), 1);
    let (id, label) = &pending[0];
    assert_eq!(label, "Edit: src/a.ts (1 replacement)");
    assert!(
        reason.starts_with(&format!(
            "staged holds this edit as a preview, and nothing was written yet: {id} ({label}). To write it, call staged-resolve with action \"apply\""
        )),
        "{reason}"
    );
    assert_eq!(repo.read("src/a.ts").unwrap(), "oldApi(1);\n");
    // Copilot's answer to a deny.
    assert_eq!(
        Reply::Deny(reason.clone()).answer_for(Client::Copilot).unwrap().unwrap(),
        json!({"permissionDecision": "deny", "permissionDecisionReason": reason})
    );
    // The turn is held while the session's preview is pending.
    let Reply::Block(held) = repo.run(Mode::Gate, "agent-stop") else { panic!("not held") };
    assert!(held.contains(&format!("still pending: {id} ({label})")), "{held}");
    assert!(held.contains("call staged-resolve with action \"apply\""), "{held}");
    assert_eq!(
        Reply::Block(held.clone()).answer_for(Client::Copilot).unwrap().unwrap(),
        json!({"decision": "block", "reason": held})
    );
    // A gate has no postToolUse, and answers nothing to one.
    assert_eq!(repo.run(Mode::Gate, "post-edit"), Reply::Nothing);
}

#[test]
fn a_create_is_staged_and_a_create_of_a_file_that_exists_is_refused_without_staging() {
    let repo = Repo::new();
    denied(&repo.run(Mode::Gate, "pre-create"));
    assert_eq!(repo.pending().len(), 1);
    assert_eq!(repo.pending()[0].1, "Write: src/new.ts (new file, 1 line)");
    assert_eq!(repo.read("src/new.ts"), None);
    let repo = Repo::new();
    std::fs::write(repo.root.join("src/new.ts"), "mine\n").unwrap();
    let reason = denied(&repo.run(Mode::Gate, "pre-create")).to_owned();
    assert!(
        reason.contains("the file already exists, and create makes only new files"),
        "{reason}"
    );
    assert_eq!(repo.pending(), Vec::new());
    assert_eq!(repo.read("src/new.ts").unwrap(), "mine\n");
}

#[test]
fn record_mode_logs_edit_and_create_under_copilot() {
    let repo = Repo::new();
    assert_eq!(repo.run(Mode::Record, "pre-edit"), Reply::Nothing);
    // Copilot writes the edit between its two events.
    std::fs::write(repo.root.join("src/a.ts"), "newApi(1);\n").unwrap();
    assert_eq!(repo.run(Mode::Record, "post-edit"), Reply::Nothing);
    assert_eq!(repo.run(Mode::Record, "pre-create"), Reply::Nothing);
    std::fs::write(repo.root.join("src/new.ts"), "export const n = 1;\n").unwrap();
    assert_eq!(repo.run(Mode::Record, "post-create"), Reply::Nothing);
    let log = repo.log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(
        (log[0].0.as_str(), log[0].1.as_str(), log[0].3.as_str()),
        ("hook:copilot", "edit", "Copilot CLI's edit, recorded by staged's hook")
    );
    assert_eq!(
        (log[1].0.as_str(), log[1].1.as_str(), log[1].3.as_str()),
        ("hook:copilot", "write", "Copilot CLI's create, recorded by staged's hook")
    );
    assert_eq!(repo.run(Mode::Record, "agent-stop"), Reply::Nothing);
}

#[test]
fn a_failed_edit_is_not_recorded_and_an_unreadable_event_is_denied_in_gate_mode() {
    let repo = Repo::new();
    assert_eq!(repo.run(Mode::Record, "pre-edit"), Reply::Nothing);
    let post = String::from_utf8(repo.event("post-edit")).unwrap();
    let failed = post.replace("\"success\"", "\"failure\"");
    assert_ne!(failed, post);
    let out = handle(Client::Copilot, Mode::Record, failed.as_bytes(), None, &repo.root);
    assert_eq!(out.reply, Reply::Nothing);
    assert_eq!(repo.log(), Vec::new());
    let out = handle(Client::Copilot, Mode::Gate, b"{not json", None, &repo.root);
    assert!(denied(&out.reply).contains("staged could not read this hook event"));
}
