//! The hook events recorded from Qwen Code 0.24.4 (`tests/fixtures/qwen-code/`, with the
//! workspace's path as `__ROOT__`), run through `staged_hooks::handle` in a fresh workspace
//! that holds the file the recorded session edited: its codec reads them into the neutral
//! event, and the gate, record mode and the Stop hold answer in Claude Code's format, which
//! Qwen Code reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

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

    fn event(&self, name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/fixtures/qwen-code/{name}.json"));
        std::fs::read_to_string(path).unwrap().replace("__ROOT__", self.root.to_str().unwrap())
    }

    fn run_text(&self, mode: Mode, event: &str) -> staged_hooks::Outcome {
        handle(Client::QwenCode, mode, event.as_bytes(), None, &self.root)
    }

    fn run(&self, mode: Mode, name: &str) -> staged_hooks::Outcome {
        self.run_text(mode, &self.event(name))
    }

    fn in_mode(&self, name: &str, approval: &str) -> staged_hooks::Outcome {
        let event = self.event(name);
        assert!(event.contains(r#""permission_mode": "auto-edit""#), "{event}");
        let event = event.replace(
            r#""permission_mode": "auto-edit""#,
            &format!(r#""permission_mode": "{approval}""#),
        );
        self.run_text(Mode::Gate, &event)
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }

    fn pending(&self) -> Vec<String> {
        let ws = WorkspaceSession::open(&self.root).unwrap();
        ws.store().summaries().unwrap().into_iter().map(|s| s.label).collect()
    }
}

fn denied(reply: &Reply) -> &str {
    match reply {
        Reply::Deny(reason) => reason,
        other => panic!("expected a deny, got {other:?}"),
    }
}

#[test]
fn qwen_code_events_are_read_into_the_neutral_event() {
    let repo = Repo::new();
    let cases = [
        ("pre-edit", "PreToolUse", Some("edit")),
        ("post-edit", "PostToolUse", Some("edit")),
        ("pre-write-create", "PreToolUse", Some("write_file")),
        ("post-write-create", "PostToolUse", Some("write_file")),
        ("stop", "Stop", None),
    ];
    for (name, kind, tool) in cases {
        let event = HookEvent::parse_from(Client::QwenCode, repo.event(name).as_bytes()).unwrap();
        assert_eq!(event.hook_event_name, kind, "{name}");
        assert_eq!(event.tool_name.as_deref(), tool, "{name}");
        assert_eq!(event.cwd.as_deref(), Some(repo.root.as_path()), "{name}");
        assert!(event.session_id.as_deref().is_some_and(|s| s.len() == 36), "{name}");
        assert_eq!(
            staged_hooks::event_name(Client::QwenCode, repo.event(name).as_bytes()).as_deref(),
            Some(kind)
        );
    }
    // The file as it was before the edit, in Claude Code's shape.
    let post = HookEvent::parse_from(Client::QwenCode, repo.event("post-edit").as_bytes()).unwrap();
    let response = post.tool_response.unwrap();
    assert_eq!(response["originalFile"], "oldApi(1);\n");
    assert_eq!(response["filePath"], format!("{}/src/a.ts", repo.root.display()));
}

#[test]
fn qwen_code_edit_is_staged_and_denied_in_its_own_words() {
    let repo = Repo::new();
    let outcome = repo.run(Mode::Gate, "pre-edit");
    let reason = denied(&outcome.reply).to_owned();
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
    assert_eq!(repo.pending(), ["Edit: src/a.ts (1 replacement)"]);
    assert!(
        reason.contains("To write it, call mcp__staged__resolve (load it with tool_search if it is not among your tools yet) with action \"apply\""),
        "{reason}"
    );
    assert!(reason.contains("Read src/a.ts again"), "{reason}");
    assert_eq!(
        outcome.reply.answer_for(Client::QwenCode).unwrap(),
        Some(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }}))
    );
}

#[test]
fn qwen_code_write_file_of_a_new_file_is_staged() {
    let repo = Repo::new();
    denied(&repo.run(Mode::Gate, "pre-write-create").reply);
    assert_eq!(repo.read("src/b.ts"), None);
    assert_eq!(repo.pending(), ["Write: src/b.ts (new file, 1 line)"]);
}

#[test]
fn qwen_code_approval_modes_are_honoured_and_notebook_edits_refused() {
    let repo = Repo::new();
    let plan = repo.in_mode("pre-edit", "plan");
    assert!(denied(&plan.reply).contains("Qwen Code is in plan mode"), "{:?}", plan.reply);
    assert!(repo.pending().is_empty());
    let default = repo.in_mode("pre-edit", "default");
    let reason = denied(&default.reply);
    assert!(
        reason.contains("Qwen Code is in its default approval mode, in which it asks the person before an edit, so only a person may apply it"),
        "{reason}"
    );
    assert_eq!(repo.pending().len(), 1);
    let notebook = repo.event("pre-write-create").replace("\"write_file\"", "\"notebook_edit\"");
    let reason = repo.run_text(Mode::Gate, &notebook).reply;
    assert!(denied(&reason).starts_with("staged refused this notebook_edit without staging it"));
    assert_eq!(repo.pending().len(), 1);
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
}

#[test]
fn qwen_code_stop_is_held_while_the_sessions_preview_is_pending() {
    let repo = Repo::new();
    assert_eq!(repo.run(Mode::Gate, "stop").reply, Reply::Nothing);
    denied(&repo.run(Mode::Gate, "pre-edit").reply);
    let stop = repo.run(Mode::Gate, "stop");
    let Reply::Block(reason) = &stop.reply else { panic!("{:?}", stop.reply) };
    assert!(reason.starts_with("A change staged in this session is still pending: "), "{reason}");
    assert_eq!(
        stop.reply.answer_for(Client::QwenCode).unwrap(),
        Some(json!({"decision": "block", "reason": reason}))
    );
}

#[test]
fn qwen_code_edits_are_recorded_in_the_log() {
    let repo = Repo::new();
    assert_eq!(repo.run(Mode::Record, "pre-edit").reply, Reply::Nothing);
    std::fs::write(repo.root.join("src/a.ts"), "newApi(1);\n").unwrap();
    let post = repo.run(Mode::Record, "post-edit");
    assert!(post.notes.is_empty(), "{:?}", post.notes);
    assert_eq!(repo.run(Mode::Record, "pre-write-create").reply, Reply::Nothing);
    std::fs::write(repo.root.join("src/b.ts"), "export const b = 1;\n").unwrap();
    let post = repo.run(Mode::Record, "post-write-create");
    assert!(post.notes.is_empty(), "{:?}", post.notes);
    let ws = WorkspaceSession::open(&repo.root).unwrap();
    let mut entries = ws.store().log().unwrap().entries(10, true).unwrap();
    entries.reverse();
    let seen: Vec<(String, String, String)> = entries
        .iter()
        .map(|e| {
            (e.record.front_end.clone(), e.record.source_tool_name.clone(), e.record.reason.clone())
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "hook:qwen-code".to_owned(),
                "edit".to_owned(),
                "Qwen Code's edit, recorded by staged's hook".to_owned()
            ),
            (
                "hook:qwen-code".to_owned(),
                "write".to_owned(),
                "Qwen Code's write_file, recorded by staged's hook".to_owned()
            ),
        ]
    );
    // An edit the disk does not show (it was declined) is not recorded.
    assert_eq!(repo.run(Mode::Record, "pre-edit").reply, Reply::Nothing);
    let post = repo.run(Mode::Record, "post-edit");
    assert!(post.notes.iter().any(|n| n.contains("not recorded")), "{:?}", post.notes);
}
