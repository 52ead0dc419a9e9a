//! The hook events recorded from Claude Code 2.1.197 and Codex 0.171.0 (`tests/fixtures/`, with
//! the workspace's path as `__ROOT__`), run through `staged_hooks::handle` in a fresh workspace
//! that holds the file the recorded session edited.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use staged_hooks::{Client, HookEvent, Mode, Reply, handle};
use staged_workspace::WorkspaceSession;

/// A workspace with `src/a.ts` as the recorded sessions found it.
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
        // Codex's sandbox, as the project's configuration gives it: writes in the workspace.
        std::fs::create_dir_all(root.join(".codex")).unwrap();
        std::fs::write(root.join(".codex/config.toml"), "sandbox_mode = \"workspace-write\"\n")
            .unwrap();
        Repo { _dir: dir, root }
    }

    /// The recorded event `name` of `client`, in this workspace.
    fn event(&self, client: &str, name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/fixtures/{client}/{name}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        text.replace("__ROOT__", self.root.to_str().unwrap()).into_bytes()
    }

    fn run(&self, client: Client, mode: Mode, name: &str) -> staged_hooks::Outcome {
        handle(client, mode, &self.event(client.name(), name), None, &self.root)
    }

    /// A recorded Claude Code event, in the permission mode `permission_mode`.
    fn claude_in(&self, name: &str, permission_mode: &str) -> staged_hooks::Outcome {
        let event = String::from_utf8(self.event("claude-code", name)).unwrap();
        assert!(event.contains(r#""permission_mode": "default""#), "{event}");
        let event = event.replace(
            r#""permission_mode": "default""#,
            &format!(r#""permission_mode": "{permission_mode}""#),
        );
        handle(Client::ClaudeCode, Mode::Gate, event.as_bytes(), None, &self.root)
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }

    fn session(&self) -> WorkspaceSession {
        WorkspaceSession::open(&self.root).unwrap()
    }

    /// The pending previews' labels, newest first.
    fn pending(&self) -> Vec<String> {
        let ws = self.session();
        ws.store().summaries().unwrap().into_iter().map(|s| s.label).collect()
    }

    /// The log's entries, oldest first: (front end, source tool, label, diff).
    fn log(&self) -> Vec<(String, String, String, String)> {
        let ws = self.session();
        let mut entries = ws.store().log().unwrap().entries(100, true).unwrap();
        entries.reverse();
        entries
            .into_iter()
            .map(|e| {
                (
                    e.record.front_end.clone(),
                    e.record.source_tool_name.clone(),
                    e.record.label.clone(),
                    e.record.diff.clone().unwrap_or_default(),
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
fn every_recorded_event_parses() {
    let repo = Repo::new();
    let cases = [
        ("claude-code", "pre-edit", "PreToolUse", Some("Edit")),
        ("claude-code", "post-edit", "PostToolUse", Some("Edit")),
        ("claude-code", "pre-write", "PreToolUse", Some("Write")),
        ("claude-code", "post-write-create", "PostToolUse", Some("Write")),
        ("claude-code", "stop", "Stop", None),
        ("codex", "pre-apply-patch", "PreToolUse", Some("apply_patch")),
        ("codex", "post-apply-patch", "PostToolUse", Some("apply_patch")),
        ("codex", "pre-bash-heredoc", "PreToolUse", Some("Bash")),
        ("codex", "stop", "Stop", None),
    ];
    for (client, name, kind, tool) in cases {
        let event = HookEvent::parse(&repo.event(client, name)).unwrap();
        assert_eq!(event.hook_event_name, kind, "{client}/{name}");
        assert_eq!(event.tool_name.as_deref(), tool, "{client}/{name}");
        assert_eq!(event.cwd.as_deref(), Some(repo.root.as_path()), "{client}/{name}");
        assert!(event.session_id.is_some(), "{client}/{name}");
        if kind == "Stop" {
            assert_eq!(event.stop_hook_active, Some(false), "{client}/{name}");
        } else {
            assert!(event.tool_use_id.is_some() && event.tool_input.is_some(), "{client}/{name}");
        }
        if kind == "PostToolUse" {
            assert!(event.tool_response.is_some(), "{client}/{name}");
        }
    }
}

#[test]
fn claude_code_edit_is_staged_and_denied_naming_the_preview() {
    let repo = Repo::new();
    let outcome = repo.claude_in("pre-edit", "acceptEdits");
    let reason = denied(&outcome.reply);
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
    assert_eq!(repo.pending(), ["Edit: src/a.ts (1 replacement)"]);
    let ws = repo.session();
    let id = ws.store().summaries().unwrap()[0].id.to_string();
    assert!(reason.starts_with(&format!(
        "staged holds this edit as a preview, and nothing was written yet: {id} (Edit: src/a.ts (1 replacement)). To write it, call mcp__staged__resolve with action \"apply\" and a one-line reason (or \"discard\" to drop it); resolve acts on the newest pending preview: with several pending, resolve them one at a time, newest first, each with its own reason."
    )), "{reason}");
    assert!(reason.contains("Read src/a.ts again"), "{reason}");
    assert!(reason.ends_with(staged_core::RESOLVE_REMINDER), "{reason}");
}

#[test]
fn claude_code_write_of_a_new_file_is_staged() {
    let repo = Repo::new();
    let outcome = repo.run(Client::ClaudeCode, Mode::Gate, "pre-write");
    denied(&outcome.reply);
    assert_eq!(repo.read("src/new.ts"), None);
    assert_eq!(repo.pending(), ["Write: src/new.ts (new file, 1 line)"]);
}

#[test]
fn a_second_edit_of_a_file_with_a_pending_preview_is_denied_with_the_refusal() {
    let repo = Repo::new();
    denied(&repo.run(Client::ClaudeCode, Mode::Gate, "pre-edit").reply);
    let second = repo.run(Client::ClaudeCode, Mode::Gate, "pre-edit");
    let reason = denied(&second.reply);
    assert!(reason.starts_with("staged refused this edit, and nothing was written: "), "{reason}");
    assert!(reason.contains("src/a.ts"), "{reason}");
    assert_eq!(repo.pending().len(), 1);
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
}

#[test]
fn the_stop_is_held_three_times_while_the_sessions_preview_is_pending() {
    let repo = Repo::new();
    // Nothing staged: the stop goes through.
    assert_eq!(repo.run(Client::ClaudeCode, Mode::Gate, "stop").reply, Reply::Nothing);
    denied(&repo.claude_in("pre-edit", "acceptEdits").reply);
    // Claude Code says `stop_hook_active` on every Stop after one a hook blocked.
    let again = String::from_utf8(repo.event("claude-code", "stop"))
        .unwrap()
        .replace(r#""stop_hook_active": false"#, r#""stop_hook_active": true"#);
    assert!(again.contains(r#""stop_hook_active": true"#));
    let stop = |round: u32| {
        let event =
            if round == 0 { repo.event("claude-code", "stop") } else { again.clone().into_bytes() };
        handle(Client::ClaudeCode, Mode::Gate, &event, None, &repo.root)
    };
    for round in 0..3 {
        match stop(round).reply {
            Reply::Block(reason) => {
                assert!(
                    reason.starts_with("A change staged in this session is still pending: "),
                    "{reason}"
                );
                assert!(reason.contains("(Edit: src/a.ts (1 replacement))"), "{reason}");
            }
            other => panic!("round {round}: expected a block, got {other:?}"),
        }
    }
    let fourth = stop(3);
    // The turn ends, and the person is told what waits and where to review it.
    match &fourth.reply {
        Reply::Notice(text) => {
            assert!(
                text.starts_with("staged: 1 preview is still pending, nothing of it written: "),
                "{text}"
            );
            assert!(text.contains("(Edit: src/a.ts (1 replacement))"), "{text}");
            assert!(
                text.ends_with(
                    "Review it with `staged ui` (in a browser) or `staged review` (in a terminal)."
                ),
                "{text}"
            );
        }
        other => panic!("expected a notice, got {other:?}"),
    }
    assert!(fourth.notes.iter().any(|n| n.contains("holding it 3 times")), "{:?}", fourth.notes);
    // The preview stays pending for a person to resolve; a new prompt's turn is held again.
    assert_eq!(repo.pending().len(), 1);
    assert!(matches!(stop(0).reply, Reply::Block(_)));
}

#[test]
fn claude_code_edits_are_recorded_in_the_log() {
    let repo = Repo::new();
    assert_eq!(repo.run(Client::ClaudeCode, Mode::Record, "pre-edit").reply, Reply::Nothing);
    // Claude Code wrote the edit; its PostToolUse carries the file as it was.
    std::fs::write(repo.root.join("src/a.ts"), "newApi(1);\n").unwrap();
    assert_eq!(repo.run(Client::ClaudeCode, Mode::Record, "post-edit").reply, Reply::Nothing);
    assert_eq!(repo.run(Client::ClaudeCode, Mode::Record, "pre-write").reply, Reply::Nothing);
    std::fs::write(repo.root.join("src/new.ts"), "x\n").unwrap();
    assert_eq!(
        repo.run(Client::ClaudeCode, Mode::Record, "post-write-create").reply,
        Reply::Nothing
    );
    let log = repo.log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!((log[0].0.as_str(), log[0].1.as_str()), ("hook:claude-code", "edit"));
    assert_eq!(log[0].2, "Edit: src/a.ts (+1 -1)");
    assert_eq!(
        log[0].3,
        "diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-oldApi(1);\n+newApi(1);\n"
    );
    assert_eq!((log[1].0.as_str(), log[1].1.as_str()), ("hook:claude-code", "write"));
    assert_eq!(
        log[1].3,
        "diff --git a/src/new.ts b/src/new.ts\nnew file mode 100644\n--- /dev/null\n+++ b/src/new.ts\n@@ -0,0 +1 @@\n+x\n"
    );
    assert!(repo.pending().is_empty());
}

#[test]
fn codex_patches_are_staged_and_denied() {
    let repo = Repo::new();
    let reason = denied(&repo.run(Client::Codex, Mode::Gate, "pre-apply-patch").reply).to_owned();
    assert!(
        reason.starts_with("staged holds this patch as a preview, and nothing was written yet: "),
        "{reason}"
    );
    assert!(reason.contains("the `resolve` tool of the `staged` MCP server"), "{reason}");
    let reason = denied(&repo.run(Client::Codex, Mode::Gate, "pre-bash-heredoc").reply).to_owned();
    assert!(reason.contains("(Patch: 1 file (1 added))"), "{reason}");
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
    assert_eq!(repo.read("src/b.ts"), None);
    assert_eq!(repo.pending(), ["Patch: 1 file (1 added)", "Patch: 1 file (1 updated)"]);
    // A gate does nothing after the tool ran (it never does).
    assert_eq!(repo.run(Client::Codex, Mode::Gate, "post-apply-patch").reply, Reply::Nothing);
}

#[test]
fn codex_patches_are_recorded_from_a_snapshot_taken_before_they_ran() {
    let repo = Repo::new();
    assert_eq!(repo.run(Client::Codex, Mode::Record, "pre-apply-patch").reply, Reply::Nothing);
    std::fs::write(repo.root.join("src/a.ts"), "newApi(1);\n").unwrap();
    assert_eq!(repo.run(Client::Codex, Mode::Record, "post-apply-patch").reply, Reply::Nothing);
    // The shell's patch fires no PostToolUse: the Stop records it.
    assert_eq!(repo.run(Client::Codex, Mode::Record, "pre-bash-heredoc").reply, Reply::Nothing);
    std::fs::write(repo.root.join("src/b.ts"), "b\n").unwrap();
    assert_eq!(repo.run(Client::Codex, Mode::Record, "stop").reply, Reply::Nothing);
    let log = repo.log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!((log[0].0.as_str(), log[0].1.as_str()), ("hook:codex", "apply_patch"));
    assert!(log[0].3.contains("-oldApi(1);\n+newApi(1);\n"), "{}", log[0].3);
    assert_eq!(log[1].2, "Patch: 1 file (1 added)");
    // A second Stop records nothing more.
    assert_eq!(repo.run(Client::Codex, Mode::Record, "stop").reply, Reply::Nothing);
    assert_eq!(repo.log().len(), 2);
}

#[test]
fn events_of_other_tools_and_unreadable_events() {
    let repo = Repo::new();
    let read = format!(
        r#"{{"session_id":"s","cwd":"{}","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{{"file_path":"x"}},"tool_use_id":"t"}}"#,
        repo.root.display()
    );
    let outcome = handle(Client::ClaudeCode, Mode::Gate, read.as_bytes(), None, &repo.root);
    assert_eq!(outcome.reply, Reply::Nothing);
    let shell = format!(
        r#"{{"session_id":"s","cwd":"{}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"ls -la"}},"tool_use_id":"t"}}"#,
        repo.root.display()
    );
    assert_eq!(
        handle(Client::Codex, Mode::Gate, shell.as_bytes(), None, &repo.root).reply,
        Reply::Nothing
    );
    // A gate never lets through what it cannot read.
    let outcome = handle(Client::ClaudeCode, Mode::Gate, b"{not json", None, &repo.root);
    assert!(denied(&outcome.reply).starts_with("staged could not read this hook event ("));
    let outcome = handle(Client::ClaudeCode, Mode::Record, b"{not json", None, &repo.root);
    assert_eq!(outcome.reply, Reply::Nothing);
    assert_eq!(outcome.notes.len(), 1);
}

#[test]
fn in_default_mode_only_a_person_may_apply_the_preview() {
    let repo = Repo::new();
    let outcome = repo.run(Client::ClaudeCode, Mode::Gate, "pre-edit");
    let reason = denied(&outcome.reply).to_owned();
    let ws = repo.session();
    let id = ws.store().summaries().unwrap()[0].id.to_string();
    assert_eq!(
        reason,
        format!(
            "staged holds this edit as a preview, and nothing was written yet: {id} (Edit: src/a.ts (1 replacement)). Claude Code is in its default permission mode, in which it asks the person before an edit, so only a person may apply it: tell them it waits for them (`staged review`, or `staged resolve apply --id {id} --reason \"...\"` in the workspace). Calling mcp__staged__resolve to apply it is refused (\"discard\" drops it); resolve acts on the newest pending preview: with several pending, resolve them one at a time, newest first, each with its own reason."
        )
    );
    // The Stop hook does not hold the turn for it (it is not the model's to resolve), and
    // tells the person it waits.
    assert_eq!(
        repo.run(Client::ClaudeCode, Mode::Gate, "stop").reply,
        Reply::Notice(format!(
            "staged: 1 preview is still pending, nothing of it written: {id} (Edit: src/a.ts (1 replacement)). Review it with `staged ui` (in a browser) or `staged review` (in a terminal)."
        ))
    );
    // The model's resolve, over MCP, is refused, and the preview stays pending.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mcp = staged_core::FrontEnd::Mcp(Some("claude-code".to_owned()));
    let resolve = |front_end: &staged_core::FrontEnd| {
        runtime.block_on(ws.session().resolve(
            staged_protocol::ResolveParams::apply("the model applies it"),
            staged_core::ResolveOptions { front_end: Some(front_end), ..Default::default() },
            &staged_core::CancelToken::new(),
        ))
    };
    let err = resolve(&mcp).unwrap_err();
    assert_eq!(
        err.message(),
        staged_core::needs_person_text(
            &id,
            "Edit: src/a.ts (1 replacement)",
            "Claude Code is in its default permission mode, in which it asks the person before an edit"
        )
    );
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("oldApi(1);\n"));
    assert_eq!(repo.pending().len(), 1);
    // A person applies it, in another process that reads it back from the store.
    let person = repo.session();
    runtime
        .block_on(person.session().resolve(
            staged_protocol::ResolveParams::apply("the person applies it"),
            staged_core::ResolveOptions::default(),
            &staged_core::CancelToken::new(),
        ))
        .unwrap();
    assert_eq!(repo.read("src/a.ts").as_deref(), Some("newApi(1);\n"));
}

#[test]
fn plan_mode_dont_ask_a_notebook_and_a_protected_path_are_denied_without_staging() {
    let repo = Repo::new();
    let plan = repo.claude_in("pre-edit", "plan");
    let reason = denied(&plan.reply);
    assert!(reason.contains("Claude Code is in plan mode, in which it makes no edits"), "{reason}");
    let dont_ask = repo.claude_in("pre-edit", "dontAsk");
    assert!(denied(&dont_ask.reply).contains("dontAsk"));
    let notebook = format!(
        r#"{{"session_id":"s","cwd":"{root}","permission_mode":"acceptEdits","hook_event_name":"PreToolUse","tool_name":"NotebookEdit","tool_input":{{"notebook_path":"{root}/a.ipynb","new_source":"import os\nos.system('x')","cell_id":"c1","edit_mode":"replace"}},"tool_use_id":"t"}}"#,
        root = repo.root.display()
    );
    let out = handle(Client::ClaudeCode, Mode::Gate, notebook.as_bytes(), None, &repo.root);
    assert!(denied(&out.reply).contains("edit its JSON with Edit"), "{:?}", out.reply);
    for path in [".claude/settings.json", ".git/config", "staged.toml", ".mcp.json"] {
        let write = format!(
            r#"{{"session_id":"s","cwd":"{root}","permission_mode":"bypassPermissions","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{{"file_path":"{root}/{path}","content":"x"}},"tool_use_id":"t"}}"#,
            root = repo.root.display()
        );
        let out = handle(Client::ClaudeCode, Mode::Gate, write.as_bytes(), None, &repo.root);
        let reason = denied(&out.reply);
        assert!(
            reason.starts_with(&format!(
                "staged refused this edit, and nothing was written: Refusing {path}: "
            )),
            "{reason}"
        );
        assert_eq!(repo.read(path), None, "{path}");
    }
    assert!(repo.pending().is_empty(), "{:?}", repo.pending());
}

#[test]
fn a_codex_read_only_sandbox_is_denied_without_staging() {
    let repo = Repo::new();
    std::fs::write(repo.root.join(".codex/config.toml"), "sandbox_mode = \"read-only\"\n").unwrap();
    let reason = denied(&repo.run(Client::Codex, Mode::Gate, "pre-apply-patch").reply).to_owned();
    assert!(
        reason
            .contains("Codex runs with a `read-only` sandbox (sandbox_mode in .codex/config.toml)"),
        "{reason}"
    );
    assert!(repo.pending().is_empty());
}
