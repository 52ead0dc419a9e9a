//! Cursor's events as its documentation gives them (`tests/fixtures/cursor/`, not recorded:
//! see its README), run through `staged_hooks::handle`; the `.cursor/hooks.json` the installer
//! writes, checked against the shape the hooks reference gives; and Cursor running both
//! staged's Cursor hook and its Claude Code hook (`.claude/settings.json`) for one edit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use staged_hooks::{Client, Mode, Reply, handle, install};
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
            .join(format!("tests/fixtures/cursor/{name}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        text.replace("__ROOT__", self.root.to_str().unwrap()).into_bytes()
    }

    fn run(&self, client: Client, mode: Mode, name: &str) -> staged_hooks::Outcome {
        handle(client, mode, &self.event(name), None, &self.root)
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }

    fn pending(&self) -> Vec<String> {
        let ws = WorkspaceSession::open(&self.root).unwrap();
        ws.store().summaries().unwrap().into_iter().map(|s| s.label).collect()
    }

    fn install(&self, client: Client, mode: Mode) {
        let target = install::Target {
            client,
            mode,
            staged: PathBuf::from("/opt/staged/bin/staged"),
            hook: PathBuf::from("/opt/staged/bin/staged"),
            root: self.root.clone(),
            codex_home: None,
            local: false,
            claude_config: None,
            qwen_home: None,
            qwen_approvals: None,
            cline_mcp_settings: None,
            approve_human: false,
        };
        install::install(&target, false).unwrap();
    }

    fn json(&self, path: &str) -> Value {
        serde_json::from_str(&self.read(path).unwrap()).unwrap()
    }
}

fn denied(reply: &Reply) -> &str {
    match reply {
        Reply::Deny(reason) => reason,
        other => panic!("expected a deny, got {other:?}"),
    }
}

#[test]
fn the_documented_events_decode() {
    let repo = Repo::new();
    for (name, kind) in [
        ("pre-write", Some("PreToolUse")),
        ("pre-str-replace", Some("PreToolUse")),
        ("post-str-replace", Some("PostToolUse")),
        ("pre-shell", Some("PreToolUse")),
        ("stop", Some("Stop")),
    ] {
        assert_eq!(
            staged_hooks::event_name(Client::Cursor, &repo.event(name)).as_deref(),
            kind,
            "{name}"
        );
    }
}

#[test]
fn a_str_replace_is_staged_and_denied_in_cursors_shape() {
    let repo = Repo::new();
    let outcome = repo.run(Client::Cursor, Mode::Gate, "pre-str-replace");
    let reason = denied(&outcome.reply).to_owned();
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
    assert_eq!(repo.pending(), ["Edit: src/a.ts (1 replacement)"]);
    assert!(
        reason.starts_with("staged holds this edit as a preview, and nothing was written yet: "),
        "{reason}"
    );
    assert!(
        reason.contains("call the `resolve` tool of the `staged` MCP server with action \"apply\""),
        "{reason}"
    );
    let reply = outcome.reply.answer_for(Client::Cursor).unwrap().unwrap();
    assert_eq!(reply["permission"], "deny");
    assert_eq!(reply["agent_message"], reason.as_str());
    assert!(reply["user_message"].is_string());
    // Claude Code's shape is not what Cursor reads from its own hooks.
    assert!(reply.get("hookSpecificOutput").is_none());
}

#[test]
fn a_write_is_staged_and_a_shell_call_goes_through() {
    let repo = Repo::new();
    denied(&repo.run(Client::Cursor, Mode::Gate, "pre-write").reply);
    assert_eq!(repo.read("src/new.ts"), None);
    assert_eq!(repo.pending(), ["Write: src/new.ts (new file, 1 line)"]);
    assert_eq!(repo.run(Client::Cursor, Mode::Gate, "pre-shell").reply, Reply::Nothing);
}

#[test]
fn the_stop_asks_for_a_followup_while_the_preview_is_pending() {
    let repo = Repo::new();
    assert_eq!(repo.run(Client::Cursor, Mode::Gate, "stop").reply, Reply::Nothing);
    denied(&repo.run(Client::Cursor, Mode::Gate, "pre-str-replace").reply);
    let stop = repo.run(Client::Cursor, Mode::Gate, "stop");
    let reply = stop.reply.answer_for(Client::Cursor).unwrap().unwrap();
    let followup = reply["followup_message"].as_str().unwrap();
    assert!(
        followup.starts_with("A change staged in this session is still pending: "),
        "{followup}"
    );
}

#[test]
fn record_mode_logs_the_edit_with_undo_data() {
    let repo = Repo::new();
    assert_eq!(repo.run(Client::Cursor, Mode::Record, "pre-str-replace").reply, Reply::Nothing);
    std::fs::write(repo.root.join("src/a.ts"), "newApi(1);\n").unwrap();
    let post = repo.run(Client::Cursor, Mode::Record, "post-str-replace");
    assert!(post.notes.is_empty(), "{:?}", post.notes);
    let ws = WorkspaceSession::open(&repo.root).unwrap();
    let entries = ws.store().log().unwrap().entries(10, true).unwrap();
    assert_eq!(entries.len(), 1);
    let record = &entries[0].record;
    assert_eq!(record.front_end, "hook:cursor");
    assert_eq!(record.reason, "Cursor's edit, recorded by staged's hook");
    assert!(record.undo.is_some());
}

#[test]
fn the_installed_hooks_json_has_the_documented_shape_and_keeps_the_users_hooks() {
    let repo = Repo::new();
    std::fs::create_dir_all(repo.root.join(".cursor")).unwrap();
    let users =
        json!({"version": 1, "hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}]}});
    std::fs::write(repo.root.join(".cursor/hooks.json"), users.to_string()).unwrap();
    repo.install(Client::Cursor, Mode::Gate);
    repo.install(Client::Cursor, Mode::Gate);
    let hooks = repo.json(".cursor/hooks.json");
    let gate = "/opt/staged/bin/staged hook cursor || { echo \"staged's hook could not run (exit $?), so this tool call is refused and nothing was written. Install staged, or remove its hooks: staged hook install cursor --uninstall\" >&2; exit 2; }";
    let stop = "/opt/staged/bin/staged hook cursor || { echo \"staged's Stop hook could not run (exit $?), so pending previews were not checked. Install staged, or remove its hooks: staged hook install cursor --uninstall\" >&2; exit 1; }";
    assert_eq!(
        hooks,
        json!({
            "version": 1,
            "hooks": {
                "afterFileEdit": [{"command": "./hooks/format.sh"}],
                "preToolUse": [{"command": gate, "matcher": "Write|StrReplace|Edit"}],
                "stop": [{"command": stop}],
            },
        }),
        "installed twice, listed once"
    );
    // The documented shape: a version, and per event a flat list of handlers, each a command
    // (and a matcher), never Claude Code's `{"matcher", "hooks": [...]}` groups.
    assert_eq!(hooks["version"], 1);
    for (event, handlers) in hooks["hooks"].as_object().unwrap() {
        for handler in handlers.as_array().unwrap() {
            let keys: Vec<&str> = handler.as_object().unwrap().keys().map(String::as_str).collect();
            assert!(keys.iter().all(|k| ["command", "matcher"].contains(k)), "{event}: {handler}");
            assert!(handler["command"].is_string(), "{event}: {handler}");
        }
    }
    assert_eq!(
        repo.json(".cursor/mcp.json"),
        json!({"mcpServers": {"staged": {"command": "/opt/staged/bin/staged", "args": ["mcp"]}}})
    );
    repo.install(Client::Cursor, Mode::Record);
    let hooks = repo.json(".cursor/hooks.json");
    assert!(hooks["hooks"].get("stop").is_none(), "{hooks}");
    assert_eq!(
        hooks["hooks"]["postToolUse"][0]["command"],
        "/opt/staged/bin/staged hook cursor --mode record"
    );
    let target = install::Target {
        client: Client::Cursor,
        mode: Mode::Gate,
        staged: PathBuf::from("/opt/staged/bin/staged"),
        hook: PathBuf::from("/opt/staged/bin/staged"),
        root: repo.root.clone(),
        codex_home: None,
        local: false,
        claude_config: None,
        qwen_home: None,
        qwen_approvals: None,
        cline_mcp_settings: None,
        approve_human: false,
    };
    install::install(&target, true).unwrap();
    assert_eq!(repo.json(".cursor/hooks.json"), users);
    assert_eq!(repo.json(".cursor/mcp.json"), json!({"mcpServers": {}}));
}

#[test]
fn with_both_hooks_installed_an_edit_is_staged_once_by_the_cursor_hook() {
    let repo = Repo::new();
    repo.install(Client::ClaudeCode, Mode::Gate);
    repo.install(Client::Cursor, Mode::Gate);
    // Cursor runs its own hook and the Claude Code hook for the same edit.
    denied(&repo.run(Client::Cursor, Mode::Gate, "pre-str-replace").reply);
    let claude = repo.run(Client::ClaudeCode, Mode::Gate, "claude-pre-edit");
    assert_eq!(claude.reply, Reply::Nothing);
    assert!(
        claude.notes.iter().any(|n| n.contains("the Claude Code hook stands aside")),
        "{:?}",
        claude.notes
    );
    assert_eq!(repo.pending(), ["Edit: src/a.ts (1 replacement)"]);
    // Its Stop stands aside too: the Cursor hook's stop holds the turn.
    let stop = String::from_utf8(repo.event("claude-pre-edit"))
        .unwrap()
        .replace("\"PreToolUse\"", "\"Stop\"");
    let outcome = handle(Client::ClaudeCode, Mode::Gate, stop.as_bytes(), None, &repo.root);
    assert_eq!(outcome.reply, Reply::Nothing);
}

#[test]
fn without_staged_s_cursor_hook_the_claude_code_hook_gates_cursors_edit() {
    let repo = Repo::new();
    repo.install(Client::ClaudeCode, Mode::Gate);
    let outcome = repo.run(Client::ClaudeCode, Mode::Gate, "claude-pre-edit");
    denied(&outcome.reply);
    assert_eq!(repo.pending(), ["Edit: src/a.ts (1 replacement)"]);
}

#[test]
fn claude_codes_own_events_are_gated_whatever_is_installed_for_cursor() {
    let repo = Repo::new();
    repo.install(Client::ClaudeCode, Mode::Gate);
    repo.install(Client::Cursor, Mode::Gate);
    let own = json!({
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "cwd": repo.root,
        "permission_mode": "acceptEdits",
        "tool_name": "Edit",
        "tool_input": {"file_path": repo.root.join("src/a.ts"), "old_string": "oldApi(1);", "new_string": "newApi(1);"},
        "tool_use_id": "toolu_1",
    });
    let outcome =
        handle(Client::ClaudeCode, Mode::Gate, own.to_string().as_bytes(), None, &repo.root);
    denied(&outcome.reply);
    assert_eq!(repo.pending().len(), 1);
}
