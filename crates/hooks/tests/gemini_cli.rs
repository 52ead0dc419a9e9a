//! The hook events recorded from Gemini CLI 0.61.0 (`tests/fixtures/gemini-cli/`, with the
//! workspace's path as `__ROOT__`), run through `staged_hooks::handle_for` in a fresh
//! workspace that holds the file the recorded session edited: its codec reads `BeforeTool`,
//! `AfterTool` and `AfterAgent` into the neutral event, and the answers are Gemini CLI's
//! `{"decision": ..., "reason": ...}`. Gemini CLI's approval mode is read from its settings
//! (`general.defaultApprovalMode`), here the person's, in a home of the test's own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::json;
use staged_hooks::{Client, HookEvent, Mode, Reply, handle_for, install::ClientHomes};
use staged_workspace::WorkspaceSession;

struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    homes: ClientHomes,
}

impl Repo {
    /// A workspace, and a Gemini CLI home whose settings set `approval` (none: unset).
    fn new(approval: Option<&str>) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.ts"), "oldApi(1);\n").unwrap();
        let home = base.join("home/.gemini");
        std::fs::create_dir_all(&home).unwrap();
        if let Some(mode) = approval {
            let settings = json!({"general": {"defaultApprovalMode": mode}});
            std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
        }
        let homes = ClientHomes { gemini_home: Some(home), ..ClientHomes::default() };
        Repo { _dir: dir, root, homes }
    }

    fn event(&self, name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/fixtures/gemini-cli/{name}.json"));
        std::fs::read_to_string(path).unwrap().replace("__ROOT__", self.root.to_str().unwrap())
    }

    fn run_text(&self, mode: Mode, event: &str) -> staged_hooks::Outcome {
        handle_for(Client::GeminiCli, mode, event.as_bytes(), None, &self.root, &self.homes)
    }

    fn run(&self, mode: Mode, name: &str) -> staged_hooks::Outcome {
        self.run_text(mode, &self.event(name))
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
fn gemini_cli_events_are_read_into_the_neutral_event() {
    let repo = Repo::new(Some("auto_edit"));
    let cases = [
        ("before-replace", "PreToolUse", Some("replace")),
        ("after-replace", "PostToolUse", Some("replace")),
        ("before-write-create", "PreToolUse", Some("write_file")),
        ("after-write-create", "PostToolUse", Some("write_file")),
        ("after-agent", "Stop", None),
    ];
    for (name, kind, tool) in cases {
        let text = repo.event(name);
        let event = HookEvent::parse_from(Client::GeminiCli, text.as_bytes()).unwrap();
        assert_eq!(event.hook_event_name, kind, "{name}");
        assert_eq!(event.tool_name.as_deref(), tool, "{name}");
        assert_eq!(event.cwd.as_deref(), Some(repo.root.as_path()), "{name}");
        assert!(event.session_id.as_deref().is_some_and(|s| s.len() == 36), "{name}");
        assert_eq!(
            staged_hooks::event_name(Client::GeminiCli, text.as_bytes()).as_deref(),
            Some(kind)
        );
        assert_eq!(event.tool_use_id.is_some(), tool.is_some(), "{name}");
    }
    // A tool's two events share the call id made of the session, the tool and its input.
    let id = |name: &str| {
        HookEvent::parse_from(Client::GeminiCli, repo.event(name).as_bytes()).unwrap().tool_use_id
    };
    assert_eq!(id("before-replace"), id("after-replace"));
    assert_ne!(id("before-replace"), id("before-write-create"));
    // A relative file_path is the event's cwd's; the file as it was, in Claude Code's shape.
    let write =
        HookEvent::parse_from(Client::GeminiCli, repo.event("before-write-create").as_bytes())
            .unwrap();
    let path = format!("{}/src/b.ts", repo.root.display());
    assert_eq!(write.tool_input.unwrap()["file_path"], path.as_str());
    let after =
        HookEvent::parse_from(Client::GeminiCli, repo.event("after-replace").as_bytes()).unwrap();
    assert_eq!(after.tool_response.unwrap()["originalFile"], "oldApi(1);\n");
}

#[test]
fn gemini_cli_replace_is_staged_and_denied_in_its_format() {
    let repo = Repo::new(Some("auto_edit"));
    let outcome = repo.run(Mode::Gate, "before-replace");
    let reason = denied(&outcome.reply).to_owned();
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
    assert_eq!(repo.pending(), ["Edit: src/a.ts (1 replacement)"]);
    assert!(
        reason.contains("To write it, call mcp_staged_resolve with action \"apply\""),
        "{reason}"
    );
    assert!(!reason.contains("Read src/a.ts again"), "{reason}");
    assert_eq!(
        outcome.reply.answer_for(Client::GeminiCli).unwrap(),
        Some(json!({"decision": "deny", "reason": reason}))
    );
    // `allow_multiple` is `replace_all`.
    let all = repo
        .event("before-replace")
        .replace("\"instruction\"", "\"allow_multiple\": true, \"instruction\"")
        .replace("src/a.ts", "src/c.ts");
    std::fs::write(repo.root.join("src/c.ts"), "oldApi(1);\noldApi(1);\n").unwrap();
    denied(&repo.run_text(Mode::Gate, &all).reply);
    assert_eq!(repo.pending()[0], "Edit: src/c.ts (2 replacements)");
}

#[test]
fn gemini_cli_write_file_of_a_new_file_by_a_relative_path_is_staged() {
    let repo = Repo::new(Some("auto_edit"));
    denied(&repo.run(Mode::Gate, "before-write-create").reply);
    assert_eq!(repo.read("src/b.ts"), None);
    assert_eq!(repo.pending(), ["Write: src/b.ts (new file, 1 line)"]);
}

#[test]
fn gemini_cli_approval_mode_is_read_from_its_settings() {
    let plan = Repo::new(Some("plan"));
    let reason = plan.run(Mode::Gate, "before-replace").reply;
    assert!(denied(&reason).contains("Gemini CLI's approval mode is plan"), "{reason:?}");
    assert!(plan.pending().is_empty());
    for approval in [Some("default"), None] {
        let repo = Repo::new(approval);
        let outcome = repo.run(Mode::Gate, "before-replace");
        let reason = denied(&outcome.reply);
        assert!(reason.contains("so only a person may apply it"), "{reason}");
        assert_eq!(repo.pending().len(), 1);
        assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
    }
}

#[test]
fn gemini_cli_after_agent_is_held_while_the_sessions_preview_is_pending() {
    let repo = Repo::new(Some("auto_edit"));
    assert_eq!(repo.run(Mode::Gate, "after-agent").reply, Reply::Nothing);
    denied(&repo.run(Mode::Gate, "before-replace").reply);
    let stop = repo.run(Mode::Gate, "after-agent");
    let Reply::Block(reason) = &stop.reply else { panic!("{:?}", stop.reply) };
    assert!(reason.starts_with("A change staged in this session is still pending: "), "{reason}");
    assert!(reason.contains("call mcp_staged_resolve with action \"apply\""), "{reason}");
    assert_eq!(
        stop.reply.answer_for(Client::GeminiCli).unwrap(),
        Some(json!({"decision": "block", "reason": reason}))
    );
}

#[test]
fn gemini_cli_edits_are_recorded_in_the_log() {
    let repo = Repo::new(None);
    assert_eq!(repo.run(Mode::Record, "before-replace").reply, Reply::Nothing);
    std::fs::write(repo.root.join("src/a.ts"), "newApi(1);\n").unwrap();
    let post = repo.run(Mode::Record, "after-replace");
    assert!(post.notes.is_empty(), "{:?}", post.notes);
    assert_eq!(repo.run(Mode::Record, "before-write-create").reply, Reply::Nothing);
    std::fs::write(repo.root.join("src/b.ts"), "export const b = 1;\n").unwrap();
    let post = repo.run(Mode::Record, "after-write-create");
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
                "hook:gemini-cli".to_owned(),
                "edit".to_owned(),
                "Gemini CLI's replace, recorded by staged's hook".to_owned()
            ),
            (
                "hook:gemini-cli".to_owned(),
                "write".to_owned(),
                "Gemini CLI's write_file, recorded by staged's hook".to_owned()
            ),
        ]
    );
}
