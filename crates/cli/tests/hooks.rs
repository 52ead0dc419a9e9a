//! `staged hook claude-code|codex`, `staged hook install` and `staged doctor` through the real
//! binary: the replies a client reads, the refusals a gate answers with (it never fails open),
//! record mode and `staged undo`, and installs that merge into a user's files and come out
//! cleanly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    io::Write,
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use common::{
    HUNG, code, hook_bin, installed_hook, pending_ids, read, staged, staged_bin, stderr, stdout,
    workspace,
};
use serde_json::{Value, json};

/// Runs `staged` in `dir` with `input` on stdin, and extra environment; fails the test if it
/// has not exited after [`common::HUNG`].
fn staged_in(
    dir: &Path,
    args: &[&str],
    input: &[u8],
    env: &[(&str, &Path)],
) -> std::process::Output {
    binary_in(&staged_bin(), dir, args, input, env)
}

/// [`staged_in`] with the binary `bin` (a copy of `staged` elsewhere).
fn binary_in(
    bin: &Path,
    dir: &Path,
    args: &[&str],
    input: &[u8],
    env: &[(&str, &Path)],
) -> std::process::Output {
    // Codex's configuration is the test's, never the home folder's of whoever runs it.
    let no_codex = dir.join(".no-codex-home");
    let mut all = vec![("CODEX_HOME", no_codex.as_path())];
    all.extend_from_slice(env);
    common::run_within(bin, dir, args, input, &all)
}

/// A Claude Code `PreToolUse` of `tool` with `input`, as 2.1.197 sends it in `acceptEdits`
/// mode (in which the model's `resolve` may apply what the gate stages).
fn claude_pre(dir: &Path, tool: &str, input: Value) -> Vec<u8> {
    claude_pre_in(dir, tool, input, "acceptEdits")
}

/// [`claude_pre`] in the permission mode `mode`.
fn claude_pre_in(dir: &Path, tool: &str, input: Value, mode: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "s-1",
        "transcript_path": "/home/user/.claude/projects/x/s-1.jsonl",
        "cwd": dir,
        "prompt_id": "p-1",
        "permission_mode": mode,
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_1",
    }))
    .unwrap()
}

/// The hook command a gate install writes: `words`, then what the shell runs when they fail
/// (staged is missing, exit 127): a reason on stderr and exit 2, a block in both clients.
fn gate_command(words: &str, client: &str) -> String {
    format!(
        "{words} || {{ echo \"staged's hook could not run (exit $?), so this tool call is refused and nothing was written. Install staged, or remove its hooks: staged hook install {client} --uninstall\" >&2; exit 2; }}"
    )
}

/// The reply a hook printed.
fn reply(out: &std::process::Output) -> Value {
    assert_eq!(
        code(out),
        0,
        "a hook always exits 0 so the client reads its reply: {}",
        stderr(out)
    );
    serde_json::from_str(stdout(out).trim())
        .unwrap_or_else(|err| panic!("{err}: {:?}", stdout(out)))
}

fn deny_reason(out: &std::process::Output) -> String {
    let reply = reply(out);
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "PreToolUse", "{reply}");
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny", "{reply}");
    reply["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().to_owned()
}

#[test]
fn a_gated_edit_is_denied_naming_the_preview_and_written_only_on_resolve() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let file = dir.join("src/a.ts");
    let event = claude_pre(
        &dir,
        "Edit",
        json!({"file_path": file, "old_string": "oldApi(1);", "new_string": "newApi(1);", "replace_all": false}),
    );
    let out = staged_in(&dir, &["hook", "claude-code"], &event, &[]);
    let reason = deny_reason(&out);
    let ids = pending_ids(&dir);
    assert_eq!(ids.len(), 1);
    assert!(
        reason.starts_with(&format!(
            "staged holds this edit as a preview, and nothing was written yet: {} (Edit: src/a.ts (1 replacement)). To write it, call mcp__staged__resolve",
            ids[0]
        )),
        "{reason}"
    );
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
    let out = staged(&dir, &["resolve", "apply", "--reason", "the rename"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&dir, "src/a.ts"), "newApi(1);\n");
}

#[test]
fn the_gate_never_grants_what_claude_code_would_not() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n"), ("nb.ipynb", "{\"cells\": []}\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let edit = json!({"file_path": dir.join("src/a.ts"), "old_string": "oldApi(1);", "new_string": "newApi(1);", "replace_all": false});
    // Plan mode: denied, nothing staged.
    let out = staged_in(
        &dir,
        &["hook", "claude-code"],
        &claude_pre_in(&dir, "Edit", edit.clone(), "plan"),
        &[],
    );
    assert_eq!(
        deny_reason(&out),
        "staged refused this edit without staging it, and nothing was written: Claude Code is in plan mode, in which it makes no edits. Present your plan instead; the edits can be made once the person leaves plan mode."
    );
    assert!(pending_ids(&dir).is_empty());
    // A notebook cell edit never goes through, in any mode.
    let cell = json!({"notebook_path": dir.join("nb.ipynb"), "cell_id": "c", "new_source": "import os\nos.system('x')", "edit_mode": "insert", "cell_type": "code"});
    for mode in ["default", "acceptEdits", "bypassPermissions"] {
        let event = claude_pre_in(&dir, "NotebookEdit", cell.clone(), mode);
        let reason = deny_reason(&staged_in(&dir, &["hook", "claude-code"], &event, &[]));
        assert!(
            reason.starts_with("staged refused this NotebookEdit without staging it"),
            "{reason}"
        );
        assert!(reason.contains("edit its JSON with Edit"), "{reason}");
    }
    // The agents' control files and git's folder: refused even where every edit is allowed.
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    for path in
        [".claude/settings.json", ".git/config", ".mcp.json", "staged.toml", ".codex/config.toml"]
    {
        let write = json!({"file_path": dir.join(path), "content": "{\"permissions\": {\"allow\": [\"Bash(*)\"]}}"});
        let event = claude_pre_in(&dir, "Write", write, "bypassPermissions");
        let reason = deny_reason(&staged_in(&dir, &["hook", "claude-code"], &event, &[]));
        assert!(
            reason.starts_with(&format!(
                "staged refused this edit, and nothing was written: Refusing {path}: "
            )),
            "{reason}"
        );
        assert!(!dir.join(path).exists(), "{path}");
    }
    assert!(pending_ids(&dir).is_empty());
    // staged's own tools refuse them too, from any front end.
    let out = staged(&dir, &["write", ".git/config", "-"]);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("Refusing .git/config: .git/ is git's own folder"),
        "{}",
        stderr(&out)
    );
    // Default mode: staged, but only a person may apply it.
    let out = staged_in(
        &dir,
        &["hook", "claude-code"],
        &claude_pre_in(&dir, "Edit", edit, "default"),
        &[],
    );
    let reason = deny_reason(&out);
    let ids = pending_ids(&dir);
    assert_eq!(ids.len(), 1);
    assert!(
        reason.contains(&format!("Claude Code is in its default permission mode, in which it asks the person before an edit, so only a person may apply it: tell them it waits for them (`staged review`, or `staged resolve apply --id {} --reason \"...\"` in the workspace).", ids[0])),
        "{reason}"
    );
    // The model's resolve over MCP is refused, and the preview stays pending.
    let frames = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "claude-code", "version": "2.1.197"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "resolve", "arguments": {"action": "apply", "reason": "the model applies it"}}}),
    ];
    let input: String = frames.iter().map(|f| format!("{f}\n")).collect();
    let out = staged_in(&dir, &["mcp"], input.as_bytes(), &[]);
    let answer = stdout(&out)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|frame| frame["id"] == 2)
        .unwrap_or_else(|| panic!("no answer to the call: {}", stdout(&out)));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("Only a person may apply {} (Edit: src/a.ts (1 replacement)): it was staged while Claude Code is in its default permission mode", ids[0])),
        "{text}"
    );
    assert_eq!(pending_ids(&dir), ids);
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
    // A person applies it from the CLI.
    let out = staged(&dir, &["resolve", "apply", "--reason", "the person read it"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&dir, "src/a.ts"), "newApi(1);\n");
}

#[test]
fn the_gate_never_grants_what_codex_sandbox_would_not() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = [("CODEX_HOME", home.path())];
    let patch =
        "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-oldApi(1);\n+newApi(1);\n*** End Patch\n";
    let event = |mode: &str| {
        serde_json::to_vec(&json!({
            "session_id": "c-1", "turn_id": "t", "cwd": dir, "hook_event_name": "PreToolUse",
            "model": "m", "permission_mode": mode, "tool_name": "apply_patch",
            "tool_input": {"command": patch}, "tool_use_id": "call_0",
        }))
        .unwrap()
    };
    // approval_policy = "never" (bypassPermissions) in a read-only sandbox: Codex would refuse.
    std::fs::write(home.path().join("config.toml"), "sandbox_mode = \"read-only\"\n").unwrap();
    let reason =
        deny_reason(&staged_in(&dir, &["hook", "codex"], &event("bypassPermissions"), &env));
    assert_eq!(
        reason,
        "staged refused this patch without staging it, and nothing was written: Codex runs with a `read-only` sandbox (sandbox_mode in CODEX_HOME/config.toml) and never asks for approval, so it would refuse this write itself. A person who wants this change makes it, or runs Codex with a sandbox that allows it."
    );
    // No sandbox_mode at all, in a project not marked trusted: Codex's default, read-only.
    std::fs::write(home.path().join("config.toml"), "model = \"m\"\n").unwrap();
    let reason =
        deny_reason(&staged_in(&dir, &["hook", "codex"], &event("bypassPermissions"), &env));
    assert!(reason.contains("Codex's default in a project not marked trusted"), "{reason}");
    assert!(pending_ids(&dir).is_empty());
    let out = staged_in(&dir, &["doctor"], b"", &env);
    assert!(!stdout(&out).contains("Codex's sandbox"), "not installed: no reading");
    // A workspace-write sandbox: staged, and the model may apply it.
    std::fs::write(home.path().join("config.toml"), "sandbox_mode = \"workspace-write\"\n")
        .unwrap();
    let reason =
        deny_reason(&staged_in(&dir, &["hook", "codex"], &event("bypassPermissions"), &env));
    assert!(reason.starts_with("staged holds this patch as a preview"), "{reason}");
    assert!(!reason.contains("only a person"), "{reason}");
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

#[test]
fn codex_in_a_workspace_write_sandbox_writes_only_in_its_folder() {
    // Codex runs in `app/` of the workspace; its sandbox lets it write there and in the
    // writable roots only, so a patch of `lib/` is denied without staging.
    let ws = workspace(&[("app/a.ts", "oldApi(1);\n"), ("lib/b.ts", "oldApi(2);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let app = dir.join("app");
    let home = tempfile::tempdir().unwrap();
    let env = [("CODEX_HOME", home.path())];
    std::fs::write(home.path().join("config.toml"), "sandbox_mode = \"workspace-write\"\n")
        .unwrap();
    let event = |patch: &str| {
        serde_json::to_vec(&json!({
            "session_id": "c-1", "turn_id": "t", "cwd": app, "hook_event_name": "PreToolUse",
            "model": "m", "permission_mode": "bypassPermissions", "tool_name": "apply_patch",
            "tool_input": {"command": patch}, "tool_use_id": "call_0",
        }))
        .unwrap()
    };
    let outside = "*** Begin Patch\n*** Update File: ../lib/b.ts\n@@\n-oldApi(2);\n+newApi(2);\n*** End Patch\n";
    let reason = deny_reason(&staged_in(&app, &["hook", "codex"], &event(outside), &env));
    assert_eq!(
        reason,
        format!(
            "staged refused this patch without staging it, and nothing was written: Codex runs with a `workspace-write` sandbox (sandbox_mode in CODEX_HOME/config.toml), in which it writes only in {}, and lib/b.ts is outside that, so it would refuse this write itself. A person who wants this change makes it, or runs Codex in a folder that holds it.",
            app.display()
        )
    );
    assert!(pending_ids(&dir).is_empty());
    // Inside its folder: staged as before.
    let inside =
        "*** Begin Patch\n*** Update File: a.ts\n@@\n-oldApi(1);\n+newApi(1);\n*** End Patch\n";
    let reason = deny_reason(&staged_in(&app, &["hook", "codex"], &event(inside), &env));
    assert!(reason.starts_with("staged holds this patch as a preview"), "{reason}");
    assert_eq!(pending_ids(&dir).len(), 1);
    // A writable root lets it write there too.
    let out = staged(&dir, &["resolve", "discard", "--reason", "next case"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    std::fs::write(
        home.path().join("config.toml"),
        "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nwritable_roots = [\"../lib\"]\n",
    )
    .unwrap();
    let reason = deny_reason(&staged_in(&app, &["hook", "codex"], &event(outside), &env));
    assert!(reason.starts_with("staged holds this patch as a preview"), "{reason}");
    assert_eq!(read(&dir, "lib/b.ts"), "oldApi(2);\n");
}

#[test]
fn a_gate_denies_what_it_cannot_stage_and_writes_nothing() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "keep\n").unwrap();
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n"), ("bin.dat", "")]);
    let dir = ws.path().canonicalize().unwrap();
    std::fs::write(dir.join("bin.dat"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({"file_path": outside.path().join("secret.txt"), "old_string": "keep", "new_string": "gone", "replace_all": false}),
            "Edit",
            "outside the workspace",
        ),
        (
            json!({"file_path": dir.join("src/a.ts"), "old_string": "notThere", "new_string": "x", "replace_all": false}),
            "Edit",
            "not found",
        ),
        (json!({"file_path": dir.join(".staged/staged.db"), "content": "x"}), "Write", ".staged"),
        (json!({"file_path": dir.join("bin.dat"), "content": "x"}), "Write", "bin.dat"),
        (json!({"file_path": dir.join("src/a.ts")}), "Edit", "old_string"),
    ];
    for (input, tool, says) in cases {
        let out =
            staged_in(&dir, &["hook", "claude-code"], &claude_pre(&dir, tool, input.clone()), &[]);
        let reason = deny_reason(&out);
        assert!(
            reason.starts_with("staged refused this edit, and nothing was written: "),
            "{input}: {reason}"
        );
        assert!(reason.to_lowercase().contains(&says.to_lowercase()), "{input}: {reason}");
    }
    assert!(pending_ids(&dir).is_empty());
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
    assert_eq!(std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(), "keep\n");
    // What is not an event at all is denied too, for either client.
    for client in ["claude-code", "codex"] {
        for input in [&b"{not json"[..], b"", b"[]", &[0xff, 0xfe][..]] {
            let out = staged_in(&dir, &["hook", client], input, &[]);
            let reason = deny_reason(&out);
            assert!(reason.starts_with("staged could not read this hook event ("), "{reason}");
        }
    }
}

#[test]
fn a_codex_shell_patch_and_a_second_edit_of_a_pending_file_are_refused_as_such() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let patch =
        "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-oldApi(1);\n+newApi(1);\n*** End Patch\n";
    let event = |tool: &str, input: Value| {
        serde_json::to_vec(&json!({
            "session_id": "c-1", "turn_id": "t", "cwd": dir, "hook_event_name": "PreToolUse",
            "model": "m", "permission_mode": "default", "tool_name": tool, "tool_input": input,
            "tool_use_id": "call_0",
        }))
        .unwrap()
    };
    let heredoc =
        format!("cd src && apply_patch <<'EOF'\n{}EOF\n", patch.replace("src/a.ts", "a.ts"));
    let out = staged_in(&dir, &["hook", "codex"], &event("Bash", json!({"command": heredoc})), &[]);
    let reason = deny_reason(&out);
    assert!(reason.contains("(Patch: 1 file (1 updated))"), "{reason}");
    // The same file again, as apply_patch: refused, since its preview is pending.
    let out =
        staged_in(&dir, &["hook", "codex"], &event("apply_patch", json!({"command": patch})), &[]);
    let reason = deny_reason(&out);
    assert!(reason.starts_with("staged refused this edit, and nothing was written: "), "{reason}");
    // Other shell commands are not the hook's business.
    let out =
        staged_in(&dir, &["hook", "codex"], &event("Bash", json!({"command": "cargo test"})), &[]);
    assert_eq!(code(&out), 0);
    assert_eq!(stdout(&out), "");
    assert_eq!(pending_ids(&dir).len(), 1);
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

#[test]
fn a_recorded_edit_is_in_the_log_and_undone_without_git() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let file = dir.join("src/a.ts");
    let input = json!({"file_path": file, "old_string": "oldApi(1);", "new_string": "newApi(1);", "replace_all": false});
    let out = staged_in(
        &dir,
        &["hook", "claude-code", "--mode", "record"],
        &claude_pre(&dir, "Edit", input.clone()),
        &[],
    );
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "record mode lets the edit go");
    // Claude Code writes the file, then sends PostToolUse.
    std::fs::write(&file, "newApi(1);\n").unwrap();
    let post = serde_json::to_vec(&json!({
        "session_id": "s-1", "cwd": dir, "hook_event_name": "PostToolUse", "tool_name": "Edit",
        "tool_input": input, "tool_use_id": "toolu_1",
        "tool_response": {"filePath": file, "oldString": "oldApi(1);", "newString": "newApi(1);",
            "originalFile": "oldApi(1);\n", "structuredPatch": [], "userModified": false, "replaceAll": false},
    }))
    .unwrap();
    let out = staged_in(&dir, &["hook", "claude-code", "--mode", "record"], &post, &[]);
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
    let log = staged(&dir, &["--json", "log"]);
    let entries: Value = serde_json::from_str(&stdout(&log)).unwrap();
    let entry = &entries["entries"][0];
    assert_eq!(entry["frontEnd"], "hook:claude-code", "{entry}");
    assert_eq!(entry["outcome"], "applied", "{entry}");
    assert_eq!(entry["source"], "edit", "{entry}");
    let out = staged(&dir, &["undo", "--yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

#[test]
fn a_record_that_changed_since_is_not_undone() {
    let ws = workspace(&[("notes.md", "one\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let file = dir.join("notes.md");
    let pre = serde_json::to_vec(&json!({
        "session_id": "s-1", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "two\n"}, "tool_use_id": "toolu_2",
    }))
    .unwrap();
    let out = staged_in(&dir, &["hook", "claude-code", "--mode", "record"], &pre, &[]);
    assert_eq!(code(&out), 0);
    std::fs::write(&file, "two\n").unwrap();
    let post = serde_json::to_vec(&json!({
        "session_id": "s-1", "cwd": dir, "hook_event_name": "PostToolUse", "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "two\n"}, "tool_use_id": "toolu_2",
        "tool_response": {"type": "update", "filePath": file, "content": "two\n", "structuredPatch": [], "originalFile": "one\n"},
    }))
    .unwrap();
    let out = staged_in(&dir, &["hook", "claude-code", "--mode", "record"], &post, &[]);
    assert_eq!(code(&out), 0);
    assert_eq!(staged_log(&dir).len(), 1, "the Write is recorded");
    std::fs::write(&file, "three\n").unwrap();
    let out = staged(&dir, &["undo", "--yes"]);
    assert_ne!(code(&out), 0);
    assert_eq!(read(&dir, "notes.md"), "three\n");
}

#[test]
fn claude_code_install_merges_and_uninstall_keeps_the_users_settings() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    let users = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(.env)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]},
    });
    std::fs::write(dir.join(".claude/settings.json"), serde_json::to_vec_pretty(&users).unwrap())
        .unwrap();
    std::fs::write(
        dir.join(".mcp.json"),
        r#"{"mcpServers": {"other": {"command": "other-server"}}}"#,
    )
    .unwrap();
    let settings =
        || -> Value { serde_json::from_str(&read(&dir, ".claude/settings.json")).unwrap() };
    let mcp = || -> Value { serde_json::from_str(&read(&dir, ".mcp.json")).unwrap() };
    for _ in 0..2 {
        let out = staged(&dir, &["hook", "install", "claude-code"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let s = settings();
    let hook = installed_hook();
    let command = gate_command(&format!("{hook} hook claude-code"), "claude-code");
    assert_eq!(s["model"], "opus");
    assert_eq!(s["permissions"]["allow"], json!(["Bash(ls:*)", "mcp__staged"]));
    assert_eq!(s["permissions"]["deny"], json!(["Read(.env)"]));
    assert_eq!(s["enabledMcpjsonServers"], json!(["staged"]));
    assert_eq!(
        s["hooks"]["PreToolUse"],
        json!([
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},
            {"matcher": "Edit|Write|MultiEdit|NotebookEdit|Bash", "hooks": [{"type": "command", "command": command}]},
        ]),
        "installed twice, listed once"
    );
    let stop = format!(
        "{hook} hook claude-code || {{ echo \"staged's Stop hook could not run (exit $?), so pending previews were not checked. Install staged, or remove its hooks: staged hook install claude-code --uninstall\" >&2; exit 1; }}"
    );
    assert_eq!(s["hooks"]["Stop"], json!([{"hooks": [{"type": "command", "command": stop}]}]));
    assert_eq!(mcp()["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(mcp()["mcpServers"]["staged"]["args"], json!(["mcp"]));
    // Record mode replaces the gate's hooks.
    let out = staged(&dir, &["hook", "install", "claude-code", "--mode", "record"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s = settings();
    assert!(s["hooks"].get("Stop").is_none(), "{s}");
    assert_eq!(
        s["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        format!("{hook} hook claude-code --mode record")
    );
    assert_eq!(s["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
    let out = staged(&dir, &["hook", "install", "claude-code", "--uninstall"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        settings(),
        json!({
            "model": "opus",
            "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(.env)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]},
            "enabledMcpjsonServers": [],
        })
    );
    assert_eq!(mcp(), json!({"mcpServers": {"other": {"command": "other-server"}}}));
}

#[test]
fn an_unreadable_settings_file_is_refused_and_left_alone() {
    let ws = workspace(&[(".claude/settings.json", "{ \"model\": \"opus\", // a comment\n")]);
    let dir = ws.path();
    let out = staged(dir, &["hook", "install", "claude-code"]);
    assert_ne!(code(&out), 0);
    assert!(stderr(&out).contains("settings.json"), "{}", stderr(&out));
    assert_eq!(read(dir, ".claude/settings.json"), "{ \"model\": \"opus\", // a comment\n");
    assert!(!dir.join(".mcp.json").exists());
}

#[test]
fn codex_install_trusts_its_hooks_and_keeps_the_users_config() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    let config = "# my settings\nmodel = \"gpt-5.5\" # the one I like\n\n[mcp_servers.other]\ncommand = \"other\"\n";
    std::fs::write(home_path.join("config.toml"), config).unwrap();
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]}});
    std::fs::write(home_path.join("hooks.json"), hooks.to_string()).unwrap();
    let env = [("CODEX_HOME", home_path.as_path())];
    for _ in 0..2 {
        let out = staged_in(&dir, &["hook", "install", "codex"], b"", &env);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(stdout(&out).contains("trusted: 3 hooks"), "{}", stdout(&out));
    }
    let text = std::fs::read_to_string(home_path.join("config.toml")).unwrap();
    assert!(text.starts_with("# my settings\nmodel = \"gpt-5.5\" # the one I like\n"), "{text}");
    let parsed: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(parsed["mcp_servers"]["other"]["command"].as_str(), Some("other"));
    assert_eq!(
        parsed["mcp_servers"]["staged"]["tools"]["resolve"]["approval_mode"].as_str(),
        Some("approve")
    );
    let hooks_json = home_path.join("hooks.json").display().to_string();
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(home_path.join("hooks.json")).unwrap())
            .unwrap();
    let ours = &written["hooks"]["PreToolUse"][1];
    assert_eq!(ours["matcher"], "Edit|Write|Bash");
    let state = parsed["hooks"]["state"].as_table().unwrap();
    let key = format!("{hooks_json}:pre_tool_use:1:0");
    assert_eq!(state[&key]["enabled"].as_bool(), Some(true), "{state:?}");
    assert_eq!(
        state[&key]["trusted_hash"].as_str().unwrap(),
        staged_hooks::install::codex_hook_hash(
            "PreToolUse",
            Some("Edit|Write|Bash"),
            &ours["hooks"][0]
        )
    );
    assert!(state.contains_key(&format!("{hooks_json}:stop:0:0")), "{state:?}");
    assert!(
        !state.contains_key(&format!("{hooks_json}:pre_tool_use:0:0")),
        "the user's own hook is theirs to trust"
    );
    // doctor: all well.
    let out = staged_in(&dir, &["doctor"], b"", &env);
    assert!(stdout(&out).contains("ok   Codex: every staged hook is trusted"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("FAIL"), "{}", stdout(&out));
    // And what it reads of Codex's sandbox, which the hook cannot learn from the event.
    assert!(
        stdout(&out).contains("note Codex's sandbox as staged reads it: read-only (Codex's default in a project not marked trusted; no sandbox_mode is set), approval_policy "),
        "{}",
        stdout(&out)
    );
    // A trust entry that no longer matches is found.
    let tampered = std::fs::read_to_string(home_path.join("config.toml"))
        .unwrap()
        .replacen("sha256:", "sha256:0", 1);
    std::fs::write(home_path.join("config.toml"), tampered).unwrap();
    let out = staged_in(&dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("FAIL Codex: every staged hook is trusted"), "{}", stdout(&out));
    // Uninstall: the user's hook, server and comment stay; staged's trust entries go.
    let out = staged_in(&dir, &["hook", "install", "codex", "--uninstall"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = std::fs::read_to_string(home_path.join("config.toml")).unwrap();
    assert!(text.starts_with("# my settings\n"), "{text}");
    assert!(!text.contains("staged"), "{text}");
    assert!(text.contains("[mcp_servers.other]"), "{text}");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(home_path.join("hooks.json")).unwrap())
            .unwrap();
    assert_eq!(written, hooks);
}

/// `staged` linked into a folder of its own, with `staged-hook` beside it: the real one when
/// `fake` is `None`, else a script that prints `fake` for `--version`.
fn staged_with_hook(fake: Option<&str>) -> (tempfile::TempDir, std::path::PathBuf) {
    let bin = tempfile::tempdir().unwrap();
    let place = |from: &Path, to: &Path| {
        if std::fs::hard_link(from, to).is_err() {
            std::fs::copy(from, to).unwrap();
        }
    };
    let staged = bin.path().canonicalize().unwrap().join("staged");
    place(&staged_bin(), &staged);
    let hook = staged.with_file_name("staged-hook");
    match fake {
        None => place(&hook_bin(), &hook),
        Some(line) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(&hook, format!("#!/bin/sh\necho '{line}'\n")).unwrap();
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    (bin, staged)
}

// See: the brief "h-shape": a staged-hook left from another build beside staged went unnoticed.
#[test]
fn doctor_fails_when_staged_hook_is_of_another_build() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = [("CODEX_HOME", home.path())];
    // Both binaries of one build: the check passes, and the install names that staged-hook.
    let (_bin, staged) = staged_with_hook(None);
    let hook = staged.with_file_name("staged-hook").display().to_string();
    let out = binary_in(&staged, &dir, &["hook", "install", "claude-code"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(read(&dir, ".claude/settings.json").contains(&format!("{hook} hook claude-code")));
    let version = stdout(&binary_in(&staged, &dir, &["--version"], b"", &[]));
    let build = version.trim().strip_prefix("staged ").unwrap().to_owned();
    assert!(build.contains(" (build "), "{version}");
    let hook_version = stdout(&binary_in(&hook_bin(), &dir, &["--version"], b"", &[]));
    assert_eq!(hook_version.trim(), format!("staged-hook {build}"));
    let out = binary_in(&staged, &dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let ok = format!("ok   staged-hook is this staged's build ({hook}): {build}\n");
    assert!(stdout(&out).contains(&ok), "{ok:?} in\n{}", stdout(&out));
    let out = binary_in(&staged, &dir, &["doctor", "--json"], b"", &env);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(
        report["build"],
        json!({
            "staged": {"path": staged, "build": build},
            "stagedHook": {"path": hook, "build": build, "status": "ok", "why": null},
        })
    );
    // A staged-hook of another build in its place: doctor fails and says how to mend it.
    let (_bin, staged) = staged_with_hook(Some("staged-hook 0.1.0 (build 000000000000)"));
    let hook = staged.with_file_name("staged-hook").display().to_string();
    let out = binary_in(&staged, &dir, &["hook", "install", "claude-code"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = binary_in(&staged, &dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let fail = format!(
        "FAIL staged-hook is this staged's build ({hook}): it is 0.1.0 (build 000000000000), and this staged ({}) is {build}; `staged hook install` writes it into the clients' hooks, which would then run other code than this staged; reinstall: `cargo install --path crates/cli --locked --force` in staged's source installs staged and staged-hook from one build\n",
        staged.display()
    );
    assert!(stdout(&out).contains(&fail), "{fail:?} in\n{}", stdout(&out));
    assert!(stdout(&out).contains("ok   Claude Code: the hook runs "), "{}", stdout(&out));
    let out = binary_in(&staged, &dir, &["doctor", "--json"], b"", &env);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false, "{report}");
    assert_eq!(report["build"]["stagedHook"]["status"], "fail", "{report}");
    assert_eq!(report["build"]["stagedHook"]["build"], "0.1.0 (build 000000000000)");
    let claude = &report["clients"][0];
    assert_eq!((&claude["client"], &claude["installed"]), (&json!("claude-code"), &json!(true)));
    assert!(claude["checks"].as_array().unwrap().iter().all(|c| c["status"] != "fail"), "{claude}");
    // One from before build ids (`staged-hook 0.1.0`) is another build too.
    let (_bin, staged) = staged_with_hook(Some("staged-hook 0.1.0"));
    let out = binary_in(&staged, &dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains(": it is 0.1.0, an older build without a build id, and this staged"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn doctor_says_what_is_missing_and_fails() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = [("CODEX_HOME", home.path())];
    let out = staged_in(&dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("FAIL no client has staged's hooks installed here"),
        "{}",
        stdout(&out)
    );
    let out = staged_in(&dir, &["hook", "install", "claude-code"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = staged_in(&dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let text = stdout(&out);
    for line in [
        "ok   Claude Code: hooks for Edit, MultiEdit and Write in ",
        "ok   Claude Code: the hook runs ",
        "ok   Claude Code: the staged MCP server in ",
        "ok   Claude Code: the project's MCP server is approved",
        "ok   Claude Code: the staged MCP server answers",
        "note Claude Code's permission mode is read from each event: plan and dontAsk deny an edit without staging it; in default mode (or an unknown one) only a person may apply the preview (`staged review`), since staged does not read allow rules (`permissions.allow`, `--allowedTools`)",
        "--   Codex: staged's hooks are not installed (`staged hook install codex`)",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    assert!(
        text.contains("ok   Claude Code: the hook sees every editing tool (Edit, Write, MultiEdit, NotebookEdit, Bash)"),
        "{text}"
    );
    // An older install's matcher lets NotebookEdit through: doctor says so, and installing
    // again fixes it.
    let settings = read(&dir, ".claude/settings.json");
    let older = settings.replace("Edit|Write|MultiEdit|NotebookEdit|Bash", "Edit|Write|MultiEdit");
    assert_ne!(older, settings);
    std::fs::write(dir.join(".claude/settings.json"), older).unwrap();
    let out = staged_in(&dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("FAIL Claude Code: the hook sees every editing tool (Edit, Write, MultiEdit, NotebookEdit, Bash): an older install, whose hook does not see NotebookEdit, Bash: those edits are not gated; run `staged hook install claude-code` again"),
        "{}",
        stdout(&out)
    );
    let out = staged_in(&dir, &["hook", "install", "claude-code"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(code(&staged_in(&dir, &["doctor"], b"", &env)), 0);
    // The binary the hooks name is gone.
    let settings = read(&dir, ".claude/settings.json");
    let bin = staged_bin().canonicalize().unwrap().display().to_string();
    std::fs::write(
        dir.join(".claude/settings.json"),
        settings.replace(&bin, "/nonexistent/staged"),
    )
    .unwrap();
    let out = staged_in(&dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("FAIL Claude Code: the hook runs /nonexistent/staged-hook: "),
        "{}",
        stdout(&out)
    );
}

/// The resolve log's entries of applied edits (not undos), newest first.
fn staged_log(dir: &Path) -> Vec<Value> {
    let log = staged(dir, &["--json", "log"]);
    assert_eq!(code(&log), 0, "{}", stderr(&log));
    let entries: Value = serde_json::from_str(&stdout(&log)).unwrap();
    let entries = entries["entries"].as_array().unwrap();
    entries.iter().filter(|e| e["action"] == "apply").cloned().collect()
}

/// A Codex `PreToolUse` of `tool` with `input`, as 0.171.0 sends it.
fn codex_pre(dir: &Path, tool: &str, input: Value, call: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "c-1", "turn_id": "t", "cwd": dir, "hook_event_name": "PreToolUse",
        "model": "m", "permission_mode": "default", "tool_name": tool, "tool_input": input,
        "tool_use_id": call,
    }))
    .unwrap()
}

#[test]
fn a_codex_shell_command_that_runs_a_patch_with_anything_else_is_refused_whole() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let patch = "*** Begin Patch\n*** Add File: evil.ts\n+x\n*** End Patch\n";
    // Codex applies this one itself, without a shell: it must be staged like any other.
    let tight = format!("apply_patch<<'EOF'\n{patch}EOF\n");
    let out = staged_in(
        &dir,
        &["hook", "codex"],
        &codex_pre(&dir, "Bash", json!({"command": tight}), "call_0"),
        &[],
    );
    let reason = deny_reason(&out);
    assert!(reason.starts_with("staged holds this patch as a preview"), "{reason}");
    assert!(reason.contains("(Patch: 1 file (1 added))"), "{reason}");
    let out = staged(&dir, &["resolve", "discard", "--reason", "not now"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Anything else that runs apply_patch goes to the shell, where Codex's own apply_patch
    // is on PATH: it is refused whole, and the model is told to send the patch alone.
    for script in [
        format!("apply_patch <<'EOF'\n{patch}EOF\nrm -rf src"),
        format!("echo hi; apply_patch <<'EOF'\n{patch}EOF\n"),
        format!("(cd src && apply_patch <<'EOF'\n{patch}EOF\n)"),
        format!("apply_patch <<'EOF' && rm -rf src\n{patch}EOF\n"),
        format!("bash -lc \"apply_patch <<'EOF'\n{patch}EOF\n\""),
        "cat fix.patch | apply_patch".to_owned(),
        // Wrappers, leading redirections, quoted and escaped names (issue 32).
        "timeout 10 apply_patch < fix.patch".to_owned(),
        "nice -n 5 apply_patch < fix.patch".to_owned(),
        "stdbuf -oL apply_patch < fix.patch".to_owned(),
        "time -p apply_patch < fix.patch".to_owned(),
        "< fix.patch apply_patch".to_owned(),
        "\"apply_patch\" < fix.patch".to_owned(),
        "\\apply_patch < fix.patch".to_owned(),
        "apply_pat''ch < fix.patch".to_owned(),
        "find . -name '*.patch' -exec apply_patch {} \\;".to_owned(),
    ] {
        let out = staged_in(
            &dir,
            &["hook", "codex"],
            &codex_pre(&dir, "Bash", json!({"command": script}), "call_1"),
            &[],
        );
        let reason = deny_reason(&out);
        assert!(
            reason.starts_with("staged refused this edit, and nothing was written: this shell command runs apply_patch (or carries a patch) together with other commands"),
            "{script}: {reason}"
        );
        assert!(reason.contains("Send the patch on its own"), "{reason}");
    }
    // The same as words.
    let out = staged_in(
        &dir,
        &["hook", "codex"],
        &codex_pre(
            &dir,
            "shell",
            json!({"command": ["bash", "-lc", format!("ls; apply_patch '{patch}'")]}),
            "call_2",
        ),
        &[],
    );
    assert!(deny_reason(&out).contains("Send the patch on its own"));
    // A command that names it so often that telling a run from a mention would take hours
    // is not let through while the client waits: it is refused like any other.
    let many = format!("echo a/{}", "apply_patch/".repeat(400_000));
    let out = staged_in(
        &dir,
        &["hook", "codex"],
        &codex_pre(&dir, "Bash", json!({"command": many}), "call_4"),
        &[],
    );
    assert!(deny_reason(&out).contains("Send the patch on its own"));
    // A mention is not a run.
    for script in ["grep -rn apply_patch src", "cat docs/apply_patch.md"] {
        let out = staged_in(
            &dir,
            &["hook", "codex"],
            &codex_pre(&dir, "Bash", json!({"command": script}), "call_3"),
            &[],
        );
        assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{script}");
    }
    assert!(pending_ids(&dir).is_empty());
    assert!(!dir.join("evil.ts").exists());
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

#[test]
fn a_fifo_where_a_file_should_be_never_hangs_a_hook() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let mkfifo = |path: &Path| {
        let status = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(status.success());
    };
    mkfifo(&dir.join("src/pipe.ts"));
    // Record mode reads the files a Codex patch names before it runs...
    let patch = "*** Begin Patch\n*** Update File: src/pipe.ts\n@@\n-a\n+b\n*** End Patch\n";
    let out = staged_in(
        &dir,
        &["hook", "codex", "--mode", "record"],
        &codex_pre(&dir, "apply_patch", json!({"command": patch}), "call_0"),
        &[],
    );
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not recorded: src/pipe.ts is not a regular file"),
        "{}",
        stderr(&out)
    );
    // ...and the file Claude Code's Write names.
    let pre =
        claude_pre(&dir, "Write", json!({"file_path": dir.join("src/pipe.ts"), "content": "x\n"}));
    let out = staged_in(&dir, &["hook", "claude-code", "--mode", "record"], &pre, &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not recorded: src/pipe.ts is not a regular file"),
        "{}",
        stderr(&out)
    );
    // A gate refuses an edit of it, at once.
    let pipe = dir.join("src/pipe.ts");
    for (tool, input) in [
        (
            "Edit",
            json!({"file_path": pipe, "old_string": "a", "new_string": "b", "replace_all": false}),
        ),
        ("Write", json!({"file_path": pipe, "content": "x\n"})),
    ] {
        let out = staged_in(&dir, &["hook", "claude-code"], &claude_pre(&dir, tool, input), &[]);
        let reason = deny_reason(&out);
        assert!(
            reason.starts_with("staged refused this edit, and nothing was written: "),
            "{reason}"
        );
        assert!(reason.contains("src/pipe.ts is not a regular file"), "{reason}");
    }
    let out = staged_in(
        &dir,
        &["hook", "codex"],
        &codex_pre(&dir, "apply_patch", json!({"command": patch}), "call_1"),
        &[],
    );
    assert!(deny_reason(&out).starts_with("staged refused this edit, and nothing was written: "));
    // A gate whose session state is a FIFO still answers: a hook the client times out is
    // one whose edit it runs.
    let out = staged_in(&dir, &["pending"], b"", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    std::fs::create_dir_all(dir.join(".staged/hooks")).unwrap();
    std::fs::remove_file(dir.join(".staged/hooks/claude-code-s-1.json")).ok();
    mkfifo(&dir.join(".staged/hooks/claude-code-s-1.json"));
    hold_edit_of_a_ts(&dir);
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

#[test]
fn a_tampered_session_state_never_reaches_outside_the_workspace_or_into_staged() {
    let outside = tempfile::tempdir().unwrap();
    let outside = outside.path().canonicalize().unwrap();
    std::fs::write(outside.join("victim.txt"), "keep\n").unwrap();
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let out = staged_in(&dir, &["pending"], b"", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    std::fs::create_dir_all(dir.join(".staged/hooks")).unwrap();
    let escape = pathdiff(&outside.join("victim.txt"), &dir);
    let state = json!({"staged": [], "stopBlocks": 0, "snapshots": {
        "x1": {"files": [{"path": escape, "text": "evil\n", "mode": 0o644}], "moves": [], "after": {escape.clone(): null}},
        "x2": {"files": [{"path": outside.join("victim.txt"), "text": "evil\n", "mode": 0o644}], "moves": [],
            "after": {outside.join("victim.txt").display().to_string(): null}},
        "x3": {"files": [{"path": ".staged/evil.txt", "text": "evil\n", "mode": 0o644}], "moves": [], "after": {".staged/evil.txt": null}},
        "x4": {"files": [{"path": "src/gone.ts", "text": "was here\n", "mode": 0o104755}], "moves": [], "after": {"src/gone.ts": null}},
        "x5": {"files": [{"path": "src/a.ts", "text": "oldApi(1);\n", "mode": 0o100644}], "moves": [["src/a.ts", "../x"]],
            "after": {"src/a.ts": null, "../x": "oldApi(1);\n"}},
        "x6": {"files": [{"path": "src/a.ts", "text": "evil\n", "mode": 0o100644}], "moves": []},
    }});
    std::fs::write(dir.join(".staged/hooks/codex-c-1.json"), state.to_string()).unwrap();
    let stop = serde_json::to_vec(&json!({
        "session_id": "c-1", "cwd": dir, "hook_event_name": "Stop", "stop_hook_active": false,
    }))
    .unwrap();
    let out = staged_in(&dir, &["hook", "codex", "--mode", "record"], &stop, &[]);
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
    let log = staged(&dir, &["--json", "log"]);
    let entries: Value = serde_json::from_str(&stdout(&log)).unwrap();
    let entries = entries["entries"].as_array().unwrap();
    // Only the one entry that names a workspace file, and not staged's own, is recorded, with
    // the mode of a plain file.
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["label"], "Patch: 1 file (1 deleted)", "{entries:?}");
    let diff = entries[0]["diff"].as_str().unwrap();
    assert!(diff.contains("deleted file mode 100755\n"), "{diff}");
    let out = staged(&dir, &["undo", "--yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(dir.join("src/gone.ts")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o7777, 0o755);
    assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "keep\n");
    assert!(!dir.join(".staged/evil.txt").exists());
    // Garbage, or a state file that is a symlink out, is a new session's state; the gate
    // still denies and writes nothing outside.
    std::fs::write(dir.join(".staged/hooks/codex-c-1.json"), b"\xff{{{garbage").unwrap();
    let out = staged_in(&dir, &["hook", "codex", "--mode", "record"], &stop, &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    std::fs::remove_file(dir.join(".staged/hooks/claude-code-s-1.json")).ok();
    std::os::unix::fs::symlink(
        outside.join("victim.txt"),
        dir.join(".staged/hooks/claude-code-s-1.json"),
    )
    .unwrap();
    hold_edit_of_a_ts(&dir);
    assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "keep\n");
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

/// Claude Code's Edit of `src/a.ts` (`oldApi(1);` to `newApi(1);`) in `dir`, held by the hook
/// as a preview.
fn hold_edit_of_a_ts(dir: &Path) {
    let input = json!({"file_path": dir.join("src/a.ts"), "old_string": "oldApi(1);", "new_string": "newApi(1);", "replace_all": false});
    let out = staged_in(dir, &["hook", "claude-code"], &claude_pre(dir, "Edit", input), &[]);
    assert!(deny_reason(&out).starts_with("staged holds this edit as a preview"));
}

/// `path` relative to `base` (both absolute), with as many `..` as it takes.
fn pathdiff(path: &Path, base: &Path) -> String {
    let common = path.components().zip(base.components()).take_while(|(a, b)| a == b).count();
    let ups = base.components().count() - common;
    let mut res = std::path::PathBuf::new();
    for _ in 0..ups {
        res.push("..");
    }
    for part in path.components().skip(common) {
        res.push(part);
    }
    res.display().to_string()
}

#[test]
fn record_mode_never_takes_a_file_it_cannot_read_for_one_that_is_not_there() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let logo = [0x89u8, b'P', b'N', b'G', 0, 0xff, 0xfe, 1];
    std::fs::write(dir.join("logo.png"), logo).unwrap();
    // Codex's Add File overwrites what is there: the binary file was not "absent", and an
    // undo that deletes the file the patch wrote would lose it for good.
    let patch = "*** Begin Patch\n*** Add File: logo.png\n+text now\n*** End Patch\n";
    let out = staged_in(
        &dir,
        &["hook", "codex", "--mode", "record"],
        &codex_pre(&dir, "apply_patch", json!({"command": patch}), "call_0"),
        &[],
    );
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "record mode lets the patch go");
    assert!(
        stderr(&out).contains("staged: not recorded: logo.png is not a text file"),
        "{}",
        stderr(&out)
    );
    std::fs::write(dir.join("logo.png"), "text now\n").unwrap();
    let post = serde_json::to_vec(&json!({
        "session_id": "c-1", "turn_id": "t", "cwd": dir, "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "call_0",
        "tool_response": "Success. Updated the following files:\nA logo.png\n",
    }))
    .unwrap();
    let out = staged_in(&dir, &["hook", "codex", "--mode", "record"], &post, &[]);
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
    let log = staged(&dir, &["--json", "log"]);
    let entries: Value = serde_json::from_str(&stdout(&log)).unwrap();
    assert_eq!(entries["entries"], json!([]), "nothing it could undo faithfully is recorded");
    let out = staged(&dir, &["undo", "--yes"]);
    assert_ne!(code(&out), 0);
    assert_eq!(read(&dir, "logo.png"), "text now\n");
    // Claude Code's edit of staged's own state is not the workspace's: never logged, so
    // never undone into `.staged/`.
    let out = staged_in(&dir, &["pending"], b"", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let own = dir.join(".staged/notes.txt");
    std::fs::write(&own, "two\n").unwrap();
    let post = serde_json::to_vec(&json!({
        "session_id": "s-1", "cwd": dir, "hook_event_name": "PostToolUse", "tool_name": "Write",
        "tool_input": {"file_path": own, "content": "two\n"}, "tool_use_id": "toolu_9",
        "tool_response": {"type": "update", "filePath": own, "content": "two\n", "structuredPatch": [], "originalFile": "one\n"},
    }))
    .unwrap();
    let out = staged_in(&dir, &["hook", "claude-code", "--mode", "record"], &post, &[]);
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
    assert!(stderr(&out).contains("staged's own state folder"), "{}", stderr(&out));
    let log = staged(&dir, &["--json", "log"]);
    let entries: Value = serde_json::from_str(&stdout(&log)).unwrap();
    assert_eq!(entries["entries"], json!([]));
}

#[test]
fn a_hostile_workspace_never_turns_the_installer_outside_it() {
    let outside = tempfile::tempdir().unwrap();
    let outside = outside.path().canonicalize().unwrap();
    let theirs = r#"{"model": "theirs"}"#;
    std::fs::write(outside.join("settings.json"), theirs).unwrap();
    std::fs::write(outside.join("mcp.json"), theirs).unwrap();
    let listing = || {
        let mut names: Vec<_> = std::fs::read_dir(&outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    // `.claude` is a symlink to a folder outside: the installer neither reads its settings
    // into the workspace nor writes staged's hooks there.
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    std::os::unix::fs::symlink(&outside, dir.join(".claude")).unwrap();
    let out = staged(&dir, &["hook", "install", "claude-code"]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    assert!(
        stderr(&out).contains(".claude/settings.json: it is reached through a symlink that leads outside the workspace, which staged does not follow; nothing was changed"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join(".mcp.json").exists());
    // `.mcp.json` (or the settings) is a symlink to a file outside: refused, left alone.
    std::fs::remove_file(dir.join(".claude")).unwrap();
    std::os::unix::fs::symlink(outside.join("mcp.json"), dir.join(".mcp.json")).unwrap();
    let out = staged(&dir, &["hook", "install", "claude-code"]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    assert!(stderr(&out).contains(".mcp.json: it is a symlink"), "{}", stderr(&out));
    assert!(!dir.join(".claude/settings.json").exists());
    std::fs::remove_file(dir.join(".mcp.json")).unwrap();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::os::unix::fs::symlink(outside.join("settings.json"), dir.join(".claude/settings.json"))
        .unwrap();
    let out = staged(&dir, &["hook", "install", "claude-code", "--uninstall"]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(listing(), ["mcp.json", "settings.json"]);
    assert_eq!(std::fs::read_to_string(outside.join("settings.json")).unwrap(), theirs);
    assert_eq!(std::fs::read_to_string(outside.join("mcp.json")).unwrap(), theirs);
    // A FIFO where the settings should be is refused at once, by the installer and the
    // doctor alike.
    std::fs::remove_file(dir.join(".claude/settings.json")).unwrap();
    let status = Command::new("mkfifo").arg(dir.join(".claude/settings.json")).status().unwrap();
    assert!(status.success());
    let out = staged_in(&dir, &["hook", "install", "claude-code"], b"", &[]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    assert!(stderr(&out).contains("it is not a regular file"), "{}", stderr(&out));
    let out = staged_in(&dir, &["doctor"], b"", &[]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
}

#[test]
fn the_workspace_is_where_the_hook_runs_not_a_folder_the_model_names() {
    // Codex sends a shell call's `workdir`, which the model picks, as the event's `cwd`.
    let other = workspace(&[("lib.ts", "theirs\n")]);
    let other = other.path().canonicalize().unwrap();
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let patch = "*** Begin Patch\n*** Add File: evil.ts\n+x\n*** End Patch\n";
    let mut event: Value = serde_json::from_slice(&codex_pre(
        &dir,
        "Bash",
        json!({"command": format!("apply_patch <<'EOF'\n{patch}EOF\n")}),
        "call_0",
    ))
    .unwrap();
    event["cwd"] = json!(other);
    let event = serde_json::to_vec(&event).unwrap();
    let out = staged_in(&dir, &["hook", "codex"], &event, &[]);
    let reason = deny_reason(&out);
    assert!(
        reason.starts_with(&format!(
            "staged refused this edit, and nothing was written: the patch runs in {}, which is outside the workspace {}",
            other.display(),
            dir.display()
        )),
        "{reason}"
    );
    let out = staged_in(&dir, &["hook", "codex", "--mode", "record"], &event, &[]);
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
    assert!(stderr(&out).contains("outside the workspace"), "{}", stderr(&out));
    assert!(!other.join(".staged").exists(), "nothing is staged, or kept, in the other folder");
    assert!(pending_ids(&dir).is_empty());
    // A folder inside the workspace is where the patch's paths start.
    let mut event: Value = serde_json::from_slice(&event).unwrap();
    event["cwd"] = json!(dir.join("src"));
    let out = staged_in(&dir, &["hook", "codex"], &serde_json::to_vec(&event).unwrap(), &[]);
    assert!(deny_reason(&out).starts_with("staged holds this patch as a preview"));
    let out = staged(&dir, &["resolve", "apply", "--reason", "in src"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&dir, "src/evil.ts"), "x\n");
}

#[test]
fn edits_that_would_take_minutes_or_gigabytes_are_refused_at_once() {
    let big = format!("{}TOKEN0\n", format!("{}\n", "z".repeat(99)).repeat(100_000));
    let ws = workspace(&[("src/big.ts", &big), ("src/a.ts", "a\n"), ("data.csv", "")]);
    let dir = ws.path().canonicalize().unwrap();
    std::fs::write(dir.join("data.csv"), ",".repeat(1_500_000)).unwrap();
    // Each edit is made on the whole text the previous ones left: 300 of a 10 MB file.
    let edits: Vec<Value> = (0..300)
        .map(|i| json!({"old_string": format!("TOKEN{i}\n"), "new_string": format!("TOKEN{}\n", i + 1)}))
        .collect();
    let input = json!({"file_path": dir.join("src/big.ts"), "edits": edits});
    let out = staged_in(&dir, &["hook", "claude-code"], &claude_pre(&dir, "MultiEdit", input), &[]);
    let reason = deny_reason(&out);
    assert!(reason.contains("`edits` are too many for a file of 9 MiB"), "{reason}");
    // A text that doubles with each edit.
    let edits: Vec<Value> = (0..40)
        .map(|_| json!({"old_string": "a", "new_string": "aa", "replace_all": true}))
        .collect();
    let input = json!({"file_path": dir.join("src/a.ts"), "edits": edits});
    let out = staged_in(&dir, &["hook", "claude-code"], &claude_pre(&dir, "MultiEdit", input), &[]);
    let reason = deny_reason(&out);
    assert!(reason.starts_with("staged refused this edit, and nothing was written: "), "{reason}");
    assert!(reason.contains("a preview holds at most 1000000 replacements"), "{reason}");
    // One replace_all with more replacements than a preview holds.
    let input = json!({"file_path": dir.join("data.csv"), "old_string": ",", "new_string": ";", "replace_all": true});
    let out = staged_in(&dir, &["hook", "claude-code"], &claude_pre(&dir, "Edit", input), &[]);
    let reason = deny_reason(&out);
    assert!(reason.contains("old_string occurs 1500000 times in data.csv"), "{reason}");
    // Replacements that would make the file hundreds of gigabytes.
    std::fs::write(dir.join("data.csv"), ",".repeat(500_000)).unwrap();
    let input = json!({"file_path": dir.join("data.csv"), "old_string": ",", "new_string": "x".repeat(1 << 20), "replace_all": true});
    let out = staged_in(&dir, &["hook", "claude-code"], &claude_pre(&dir, "Edit", input), &[]);
    let reason = deny_reason(&out);
    assert!(
        reason.contains("the replacements would make data.csv longer than 1024 MiB"),
        "{reason}"
    );
    assert!(pending_ids(&dir).is_empty());
    assert_eq!(read(&dir, "src/a.ts"), "a\n");
}

#[test]
fn hostile_events_are_denied_and_write_nothing() {
    let outside = tempfile::tempdir().unwrap();
    let outside = outside.path().canonicalize().unwrap();
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let escape = format!("{}/src/../../{}/x.ts", dir.display(), pathdiff(&outside, &dir));
    let edit = |file: Value| json!({"file_path": file, "old_string": "oldApi(1);", "new_string": "x", "replace_all": false});
    let nested = format!(
        r#"{{"hook_event_name":"PreToolUse","tool_name":"Edit","cwd":{},"tool_input":{}{}}}"#,
        json!(dir),
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let surrogate = format!(
        r#"{{"hook_event_name":"PreToolUse","tool_name":"Write","cwd":{},"tool_input":{{"file_path":"src/\ud800.ts","content":"x"}}}}"#,
        json!(dir)
    );
    let events: Vec<(Vec<u8>, &str)> = vec![
        (nested.into_bytes(), "staged could not read this hook event"),
        (surrogate.into_bytes(), "staged could not read this hook event"),
        (
            serde_json::to_vec(&json!({"hook_event_name": "PreToolUse", "tool_name": 5, "cwd": dir})).unwrap(),
            "staged could not read this hook event",
        ),
        (
            serde_json::to_vec(&json!({"hook_event_name": "PreToolUse", "session_id": ["s"], "tool_name": "Write", "cwd": dir})).unwrap(),
            "staged could not read this hook event",
        ),
        (claude_pre(&dir, "Write", json!("src/a.ts")), "staged refused this edit"),
        (claude_pre(&dir, "Write", json!({"file_path": 5, "content": "x"})), "staged refused this edit"),
        (claude_pre(&dir, "MultiEdit", json!({"file_path": dir.join("src/a.ts"), "edits": "x"})), "staged refused this edit"),
        (claude_pre(&dir, "Edit", edit(json!(format!("{}/src/a\u{0}.ts", dir.display())))), "staged refused this edit"),
        (claude_pre(&dir, "Edit", edit(json!(escape))), "outside the workspace"),
        (claude_pre(&dir, "Write", json!({"file_path": "../x.ts", "content": "x"})), "outside the workspace"),
        (claude_pre(&dir, "Write", json!({"file_path": outside.join("x.ts"), "content": "x"})), "outside the workspace"),
    ];
    for (event, says) in events {
        let out = staged_in(&dir, &["hook", "claude-code"], &event, &[]);
        let reason = deny_reason(&out);
        assert!(
            reason.contains(says),
            "{}: {reason}",
            String::from_utf8_lossy(&event[..event.len().min(200)])
        );
    }
    assert!(pending_ids(&dir).is_empty());
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(!dir.parent().unwrap().join("x.ts").exists());
}

/// The command an installed hook of `client` runs, read back from `file` (its `PreToolUse`).
fn installed_command(file: &Path) -> String {
    let hooks: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let groups = hooks["hooks"]["PreToolUse"].as_array().unwrap();
    let ours = groups.iter().find(|g| g["matcher"] != "Bash" || groups.len() == 1).unwrap();
    ours["hooks"][0]["command"].as_str().unwrap().to_owned()
}

/// Runs a hook command as the clients do (`sh -c`), in `dir`, with `event` on stdin.
fn run_hook_command(
    dir: &Path,
    command: &str,
    event: &[u8],
    env: &[(&str, &Path)],
) -> std::process::Output {
    common::run_within(Path::new("sh"), dir, &["-c", command], event, env)
}

/// A 1.8 MB file and a 1.2 KB Edit event within every cap (900,000 replacements of `a` by
/// 1,000 bytes) whose preview needs gigabytes: the hook's worker runs out of the memory it
/// may take and aborts.
/// A Write of a new 30 MiB file: within the 32 MiB a preview may hold, and a few hundred MiB of
/// work (the event, the text, its diff, the stored preview).
fn heavy_write(dir: &Path) -> Vec<u8> {
    let line = format!("{}\n", "x".repeat(99));
    claude_pre(
        dir,
        "Write",
        json!({"file_path": dir.join("src/big.txt"), "content": line.repeat(30 * 1024 * 1024 / 100)}),
    )
}

#[test]
fn a_gate_whose_work_runs_out_of_memory_denies_and_writes_nothing() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let event = heavy_write(&dir);
    // Under a limit the person's shell set (`ulimit -v`, 400 MB), which the worker inherits.
    let out = common::run_within(
        Path::new("sh"),
        &dir,
        &[
            "-c",
            "ulimit -v 400000 && exec \"$0\" hook claude-code",
            &staged_bin().display().to_string(),
        ],
        &event,
        &[],
    );
    let reason = deny_reason(&out);
    assert_eq!(
        reason,
        "staged could not finish staging this edit (its worker was killed by signal 6 (SIGABRT), as when the work needs more than the 390 MiB of memory it may take), so it refuses the tool call; nothing was written.",
        "{}",
        stderr(&out)
    );
    // Under the hook's own bound.
    let expected = "staged could not finish staging this edit (its worker was killed by signal 6 (SIGABRT), as when the work needs more than the 320 MiB of memory it may take), so it refuses the tool call; nothing was written.";
    let out = staged_in(&dir, &["hook", "claude-code", "--max-memory", "320"], &event, &[]);
    assert_eq!(deny_reason(&out), expected, "{}", stderr(&out));
    assert!(!dir.join("src/big.txt").exists());
    assert!(pending_ids(&dir).is_empty());
    // The same hook stages an ordinary edit under the same bound.
    let event = claude_pre(
        &dir,
        "Edit",
        json!({"file_path": dir.join("src/a.ts"), "old_string": "oldApi(1);", "new_string": "newApi(1);", "replace_all": false}),
    );
    let out = staged_in(&dir, &["hook", "claude-code", "--max-memory", "320"], &event, &[]);
    assert!(deny_reason(&out).starts_with("staged holds this edit as a preview"));
}

/// Starts `staged <args>` (a gate hook) in `dir` as a client that stalls halfway through its
/// event, and waits for the hook's worker until `ready` says its pid is far enough: the hook,
/// its stdin (the rest of the event not yet written) and the worker's pid.
// The caller waits for the hook it is handed; only a failing test leaves it unwaited.
#[allow(clippy::zombie_processes)]
fn hook_stalled_mid_event(
    dir: &Path,
    args: &[&str],
    ready: impl Fn(&str) -> bool,
) -> (std::process::Child, std::process::ChildStdin, String) {
    let mut hook = common::spawn_piped(&staged_bin(), dir, args, &[]);
    let mut stdin = hook.stdin.take().unwrap();
    stdin.write_all(b"{\"hook_event_name\": \"PreToolUse\", ").unwrap();
    let children = format!("/proc/{0}/task/{0}/children", hook.id());
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(&children).unwrap_or_default();
        if let Some(pid) = text.split_whitespace().next()
            && ready(pid)
        {
            return (hook, stdin, pid.to_owned());
        }
        if started.elapsed() > HUNG {
            let _ = hook.kill();
            let _ = hook.wait();
            panic!("the hook started no worker");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_gate_whose_worker_is_killed_blocks_the_call() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    // The worker reads the event; the client is still writing it when the system kills the
    // worker (as the kernel's out-of-memory killer does).
    let (hook, stdin, worker) = hook_stalled_mid_event(&dir, &["hook", "claude-code"], |_| true);
    let killed = Command::new("kill").args(["-KILL", &worker]).status().unwrap();
    assert!(killed.success());
    drop(stdin);
    let out = hook.wait_with_output().unwrap();
    assert_eq!(code(&out), 2, "exit 2 is a block in both clients: {}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains(
            "staged could not finish this hook call (its worker was killed by signal 9 (SIGKILL), as when the system runs out of memory), so the tool call is blocked; nothing was written."
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

/// A gate call's worker is this process forked, not the binary started a second time (most
/// of a hook call's cost is a process start: bench/RESULTS.md, "Hook latency per client"):
/// it runs with the hook's own command line, not `hook claude-code --work`.
#[test]
fn a_gates_worker_is_the_hook_forked_not_started_again() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    // The worker, once it waits for the rest of the event (a started binary has run by then).
    let waits = |pid: &str| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('S'))
    };
    let (hook, mut stdin, worker) = hook_stalled_mid_event(&dir, &["hook", "claude-code"], waits);
    let cmdline = |pid: &str| std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&cmdline(&worker)),
        String::from_utf8_lossy(&cmdline(&hook.id().to_string()))
    );
    stdin.write_all(b"\"tool_name\": \"Read\", \"tool_input\": {}}").unwrap();
    drop(stdin);
    let out = hook.wait_with_output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_gate_whose_work_takes_too_long_blocks_the_call() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    // A client that stalls halfway through the event: the worker waits on it.
    let args = ["hook", "claude-code", "--timeout", "1"];
    let (hook, stdin, worker) = hook_stalled_mid_event(&dir, &args, |_| true);
    let started = Instant::now();
    let waited = std::thread::spawn(move || hook.wait_with_output().unwrap());
    while !waited.is_finished() {
        assert!(started.elapsed() < HUNG, "the hook outlived its timeout");
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = waited.join().unwrap();
    drop(stdin);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("staged could not finish this hook call (it took longer than 1 s (--timeout)), so the tool call is blocked; nothing was written."),
        "{}",
        stderr(&out)
    );
    assert!(!Path::new(&format!("/proc/{worker}")).exists(), "the worker was stopped");
}

#[test]
fn a_gate_hook_blocks_the_edit_when_staged_cannot_run() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    // A copy of staged the hooks name, which then goes away (`cargo clean`).
    let bin_dir = tempfile::tempdir().unwrap();
    let copy = bin_dir.path().join("staged");
    std::fs::copy(staged_bin(), &copy).unwrap();
    let out = common::run_within(&copy, &dir, &["hook", "install", "claude-code"], b"", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("; when it cannot run, the hook blocks the edit and says why"),
        "{}",
        stdout(&out)
    );
    let command = installed_command(&dir.join(".claude/settings.json"));
    let copy = copy.canonicalize().unwrap();
    assert_eq!(
        command,
        gate_command(&format!("{} hook claude-code", copy.display()), "claude-code")
    );
    let event = claude_pre(
        &dir,
        "Edit",
        json!({"file_path": dir.join("src/a.ts"), "old_string": "oldApi(1);", "new_string": "x", "replace_all": false}),
    );
    let out = run_hook_command(&dir, &command, &event, &[]);
    assert!(deny_reason(&out).starts_with("staged holds this edit as a preview"));
    let out = staged(&dir, &["resolve", "discard", "--reason", "again"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    std::fs::remove_file(&copy).unwrap();
    let out = run_hook_command(&dir, &command, &event, &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("staged's hook could not run (exit 127), so this tool call is refused and nothing was written. Install staged, or remove its hooks: staged hook install claude-code --uninstall"),
        "{}",
        stderr(&out)
    );
    // doctor says the binary is gone.
    let out = staged(&dir, &["doctor"]);
    assert!(
        stdout(&out).contains(&format!("FAIL Claude Code: the hook runs {}: ", copy.display())),
        "{}",
        stdout(&out)
    );
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

#[test]
fn claude_code_installs_by_path_or_into_the_local_settings() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let config_dir = home.path().canonicalize().unwrap();
    std::fs::write(
        config_dir.join(".claude.json"),
        r#"{"numStartups": 3, "projects": {"/elsewhere": {"mcpServers": {}}}}"#,
    )
    .unwrap();
    let env = [("CLAUDE_CONFIG_DIR", config_dir.as_path())];
    let read_json = |path: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    // PATH-relative: nothing machine-specific in the files a team commits.
    let out = staged_in(&dir, &["hook", "install", "claude-code", "--on-path"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let command = installed_command(&dir.join(".claude/settings.json"));
    assert_eq!(command, gate_command("staged hook claude-code", "claude-code"));
    assert_eq!(read_json(&dir.join(".mcp.json"))["mcpServers"]["staged"]["command"], "staged");
    // doctor looks the name up on PATH, as the client's shell will.
    let bin_dir = staged_bin().canonicalize().unwrap().parent().unwrap().to_path_buf();
    let out = staged_in(&dir, &["doctor"], b"", &[("PATH", bin_dir.as_path())]);
    assert!(stdout(&out).contains("ok   Claude Code: the hook runs staged\n"), "{}", stdout(&out));
    let out = staged_in(&dir, &["doctor"], b"", &[("PATH", config_dir.as_path())]);
    assert!(
        stdout(&out).contains("FAIL Claude Code: the hook runs staged: it is not on PATH\n"),
        "{}",
        stdout(&out)
    );
    // Local: the person's own settings, and Claude Code's local scope for the server; the
    // committed files lose staged's hooks and server.
    let out = staged_in(&dir, &["hook", "install", "claude-code", "--local"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let bin = staged_bin().canonicalize().unwrap().display().to_string();
    let hook = installed_hook();
    let local = read_json(&dir.join(".claude/settings.local.json"));
    assert_eq!(
        installed_command(&dir.join(".claude/settings.local.json")),
        gate_command(&format!("{hook} hook claude-code"), "claude-code")
    );
    assert_eq!(local["permissions"]["allow"], json!(["mcp__staged"]));
    let project = read_json(&dir.join(".claude/settings.json"));
    assert!(project.get("hooks").is_none(), "{project}");
    assert_eq!(project["enabledMcpjsonServers"], json!([]), "{project}");
    assert_eq!(read_json(&dir.join(".mcp.json")), json!({"mcpServers": {}}));
    let config = read_json(&config_dir.join(".claude.json"));
    assert_eq!(config["numStartups"], 3);
    assert_eq!(
        config["projects"][dir.display().to_string()]["mcpServers"]["staged"],
        json!({"type": "stdio", "command": bin, "args": ["mcp"]})
    );
    let out = staged_in(&dir, &["doctor"], b"", &env);
    let text = stdout(&out);
    for line in [
        "ok   Claude Code: hooks for Edit, MultiEdit and Write in ",
        "ok   Claude Code: the hooks block the edit when staged cannot run",
        "ok   Claude Code: the staged MCP server in ",
        "ok   Claude Code: the staged MCP server answers",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    assert!(text.contains("settings.local.json"), "{text}");
    // Uninstalled, the person's config keeps everything else.
    let out =
        staged_in(&dir, &["hook", "install", "claude-code", "--local", "--uninstall"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let config = read_json(&config_dir.join(".claude.json"));
    assert_eq!(config["projects"][dir.display().to_string()]["mcpServers"], json!({}));
    assert_eq!(config["projects"]["/elsewhere"], json!({"mcpServers": {}}));
    assert!(read_json(&dir.join(".claude/settings.local.json")).get("hooks").is_none());
}

#[test]
fn codex_hooks_act_only_in_the_workspaces_they_were_installed_in() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let mut roots = Vec::new();
    for name in ["one", "two", "elsewhere"] {
        let root = base.join(name);
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("a.ts"), "x\n").unwrap();
        roots.push(root);
    }
    let home = base.join("codex-home");
    std::fs::create_dir(&home).unwrap();
    let env = [("CODEX_HOME", home.as_path())];
    for root in &roots[..2] {
        let out = staged_in(root, &["hook", "install", "codex"], b"", &env);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(stdout(&out).contains("Codex runs these hooks in every folder; they act only in "));
    }
    let (one, two, elsewhere) = (&roots[0], &roots[1], &roots[2]);
    let hook = installed_hook();
    let command = installed_command(&home.join("hooks.json"));
    assert_eq!(
        command,
        gate_command(
            &format!("{hook} hook codex --in {} --in {}", one.display(), two.display()),
            "codex"
        )
    );
    let patch = "*** Begin Patch\n*** Update File: a.ts\n@@\n-x\n+y\n*** End Patch\n";
    let event = |root: &Path| codex_pre(root, "apply_patch", json!({"command": patch}), "call-1");
    // Outside: no reply, and nothing made.
    let out = run_hook_command(elsewhere, &command, &event(elsewhere), &[]);
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
    assert!(!elsewhere.join(".staged").exists());
    let stop = json!({"hook_event_name": "Stop", "session_id": "s", "turn_id": "t", "cwd": elsewhere, "stop_hook_active": false});
    let out = run_hook_command(elsewhere, &command, stop.to_string().as_bytes(), &[]);
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
    assert!(!elsewhere.join(".staged").exists());
    // Inside each, and in a folder inside one: the gate.
    std::fs::create_dir(two.join("sub")).unwrap();
    std::fs::write(two.join("sub/a.ts"), "x\n").unwrap();
    for dir in [one.clone(), two.join("sub")] {
        let out = run_hook_command(&dir, &command, &event(&dir), &[]);
        let reason = deny_reason(&out);
        assert!(reason.starts_with("staged holds this patch as a preview"), "{reason}");
    }
    assert_eq!(read(one, "a.ts"), "x\n");
    // doctor, in a workspace the hooks do not act in.
    let out = staged_in(elsewhere, &["doctor"], b"", &env);
    assert!(
        stdout(&out).contains(&format!(
            "warn Codex: the hooks act only in the workspaces they were installed in: they act in {}, {}, not in {}",
            one.display(),
            two.display(),
            elsewhere.display()
        )),
        "{}",
        stdout(&out)
    );
    // Uninstalled from a workspace they do not act in, nothing changes.
    let before = std::fs::read_to_string(home.join("hooks.json")).unwrap();
    let out = staged_in(elsewhere, &["hook", "install", "codex", "--uninstall"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("staged's hooks did not act in "), "{}", stdout(&out));
    assert_eq!(std::fs::read_to_string(home.join("hooks.json")).unwrap(), before);
    // Uninstalled from one workspace, they still act in the other; from the last, they go.
    let out = staged_in(one, &["hook", "install", "codex", "--uninstall"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("staged's hooks no longer act in {}", one.display())),
        "{}",
        stdout(&out)
    );
    let command = installed_command(&home.join("hooks.json"));
    assert_eq!(
        command,
        gate_command(&format!("{hook} hook codex --in {}", two.display()), "codex")
    );
    let out = staged_in(two, &["hook", "install", "codex", "--uninstall"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let hooks = std::fs::read_to_string(home.join("hooks.json")).unwrap();
    assert_eq!(hooks.trim(), "{}");
    assert!(!std::fs::read_to_string(home.join("config.toml")).unwrap().contains("staged"));
}

#[test]
fn settings_of_an_unexpected_shape_are_refused_and_left_alone() {
    let cases = [
        (
            r#"{"permissions": {"allow": "Bash(ls:*)"}}"#,
            "`permissions.allow` is a string, where a list belongs",
        ),
        (r#"{"permissions": "all"}"#, "`permissions` is a string, where an object belongs"),
        (
            r#"{"hooks": {"PreToolUse": "audit.sh"}}"#,
            "`hooks.PreToolUse` is a string, where a list of hook groups belongs",
        ),
        (
            r#"{"hooks": ["audit.sh"]}"#,
            "`hooks` is an array, where an object of hook lists belongs",
        ),
        (
            r#"{"enabledMcpjsonServers": {"staged": true}}"#,
            "`enabledMcpjsonServers` is an object, where a list belongs",
        ),
    ];
    for (settings, says) in cases {
        let ws = workspace(&[(".claude/settings.json", settings)]);
        let dir = ws.path();
        let out = staged(dir, &["hook", "install", "claude-code"]);
        assert_eq!(code(&out), 2, "{settings}: {}", stdout(&out));
        assert!(stderr(&out).contains("settings.json: "), "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{says:?} in {}", stderr(&out));
        assert!(stderr(&out).contains("nothing was changed"), "{}", stderr(&out));
        assert_eq!(read(dir, ".claude/settings.json"), settings);
        assert!(!dir.join(".mcp.json").exists());
    }
    let ws = workspace(&[(".mcp.json", r#"{"mcpServers": []}"#)]);
    let out = staged(ws.path(), &["hook", "install", "claude-code"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("`mcpServers` is an array, where an object belongs"),
        "{}",
        stderr(&out)
    );
    assert!(!ws.path().join(".claude/settings.json").exists());
    // Codex: a key that should be a table, and hooks in a list of the wrong shape.
    let ws = workspace(&[]);
    for (config, hooks, says) in [
        (
            "mcp_servers = \"none\"\n",
            "{}",
            "`mcp_servers` is a string, where Codex expects a table",
        ),
        ("hooks = 5\n", "{}", "`hooks` is an integer, where Codex expects a table"),
        (
            "",
            r#"{"hooks": {"Stop": {"command": "x"}}}"#,
            "`hooks.Stop` is an object, where a list of hook groups belongs",
        ),
    ] {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        std::fs::write(home.path().join("hooks.json"), hooks).unwrap();
        let env = [("CODEX_HOME", home.path())];
        let out = staged_in(ws.path(), &["hook", "install", "codex"], b"", &env);
        assert_eq!(code(&out), 2, "{config}{hooks}: {}", stdout(&out));
        assert!(stderr(&out).contains(says), "{says:?} in {}", stderr(&out));
        assert_eq!(std::fs::read_to_string(home.path().join("config.toml")).unwrap(), config);
        assert_eq!(std::fs::read_to_string(home.path().join("hooks.json")).unwrap(), hooks);
    }
    // An inline table is a table: its entries are kept.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "mcp_servers = { other = { command = \"o\" } }\n",
    )
    .unwrap();
    let env = [("CODEX_HOME", home.path())];
    let out = staged_in(ws.path(), &["hook", "install", "codex"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let parsed: toml::Value =
        toml::from_str(&std::fs::read_to_string(home.path().join("config.toml")).unwrap()).unwrap();
    assert_eq!(parsed["mcp_servers"]["other"]["command"].as_str(), Some("o"));
    assert!(parsed["mcp_servers"].get("staged").is_some());
}

#[test]
fn doctor_recognises_an_older_install_and_installing_again_migrates_it() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path().canonicalize().unwrap();
    let bin = staged_bin().canonicalize().unwrap().display().to_string();
    let hook = installed_hook();
    let fixture = |name: &str| {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hooks_old_install").join(name),
        )
        .unwrap()
        .replace("@STAGED@", &bin)
        .replace("@CODEX_HOME@", &home.display().to_string())
    };
    std::fs::create_dir(dir.join(".claude")).unwrap();
    std::fs::write(dir.join(".claude/settings.json"), fixture("claude-settings.json")).unwrap();
    std::fs::write(dir.join(".mcp.json"), fixture("mcp.json")).unwrap();
    let hooks = fixture("codex-hooks.json");
    let old_command = format!("{bin} hook codex");
    let handler = json!({"type": "command", "command": old_command});
    let config = fixture("codex-config.toml")
        .replace(
            "@HASH_PRE_TOOL_USE@",
            &staged_hooks::install::codex_hook_hash(
                "PreToolUse",
                Some("Edit|Write|Bash"),
                &handler,
            ),
        )
        .replace("@HASH_STOP@", &staged_hooks::install::codex_hook_hash("Stop", None, &handler));
    std::fs::write(home.join("hooks.json"), &hooks).unwrap();
    std::fs::write(home.join("config.toml"), &config).unwrap();
    let env = [("CODEX_HOME", home.as_path())];
    let out = staged_in(&dir, &["doctor"], b"", &env);
    let text = stdout(&out);
    for line in [
        "ok   Codex: every staged hook is trusted with the hash Codex computes",
        "warn Claude Code: the hooks block the edit when staged cannot run: an older install: when the binary is missing, the client lets the edit through; run `staged hook install claude-code` again to update it",
        "warn Codex: the hooks block the edit when staged cannot run: an older install: when the binary is missing, the client lets the edit through; run `staged hook install codex` again to update it",
        "warn Codex: the hooks act only in the workspaces they were installed in: an older install: they act in every folder Codex runs in; run `staged hook install codex` again to update it",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    for client in ["claude-code", "codex"] {
        let out = staged_in(&dir, &["hook", "install", client], b"", &env);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let out = staged_in(&dir, &["doctor"], b"", &env);
    let text = stdout(&out);
    assert!(!text.contains("an older install") && !text.contains("FAIL"), "{text}");
    for line in [
        "ok   Claude Code: the hooks block the edit when staged cannot run",
        "ok   Codex: the hooks block the edit when staged cannot run",
        "ok   Codex: the hooks act only in the workspaces they were installed in",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    // One set of hooks each, the new commands, and no trust entry of the old ones.
    let settings: Value = serde_json::from_str(&read(&dir, ".claude/settings.json")).unwrap();
    assert_eq!(settings["hooks"]["PreToolUse"].as_array().unwrap().len(), 1, "{settings}");
    assert_eq!(
        installed_command(&dir.join(".claude/settings.json")),
        gate_command(&format!("{hook} hook claude-code"), "claude-code")
    );
    assert_eq!(
        installed_command(&home.join("hooks.json")),
        gate_command(&format!("{hook} hook codex --in {}", dir.display()), "codex")
    );
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert_eq!(config.matches("trusted_hash").count(), 3, "{config}");
}

/// A Codex event `name` of call `call` with `input`, in record mode, through the binary.
fn codex_record(dir: &Path, name: &str, tool: &str, input: Value, call: &str) -> String {
    let mut event = json!({
        "session_id": "c-1", "turn_id": "t", "cwd": dir, "hook_event_name": name,
        "model": "m", "permission_mode": "default",
    });
    if name == "Stop" {
        event["stop_hook_active"] = json!(false);
    } else {
        event["tool_name"] = json!(tool);
        event["tool_input"] = input;
        event["tool_use_id"] = json!(call);
    }
    if name == "PostToolUse" {
        event["tool_response"] = json!("Exit code: 0\nOutput:\nSuccess.\n");
    }
    let out = staged_in(
        dir,
        &["hook", "codex", "--mode", "record"],
        &serde_json::to_vec(&event).unwrap(),
        &[],
    );
    assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
    stderr(&out)
}

#[test]
fn codex_record_mode_logs_only_what_a_patch_itself_did() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n"), ("src/c.ts", "one\n")]);
    let dir = ws.path().canonicalize().unwrap();
    // A patch Codex fails to apply (its lines are not in the file): it writes nothing and
    // fires no PostToolUse.
    let failing = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-notThere();\n+x();\n*** Add File: src/person.ts\n+codex\n*** End Patch\n";
    let notes =
        codex_record(&dir, "PreToolUse", "apply_patch", json!({"command": failing}), "call_0");
    assert!(
        notes.contains("staged: not recorded: the patch does not apply to the files as they are (Failed to find expected lines in src/a.ts:"),
        "{notes}"
    );
    // A patch that is declined (never runs), sent through the shell.
    let declined = "*** Begin Patch\n*** Update File: src/c.ts\n@@\n-one\n+two\n*** End Patch\n";
    let script = format!("apply_patch <<'EOF'\n{declined}EOF\n");
    codex_record(&dir, "PreToolUse", "Bash", json!({"command": script}), "call_1");
    // Meanwhile a person edits the files both patches name, and creates one.
    std::fs::write(dir.join("src/a.ts"), "person(1);\n").unwrap();
    std::fs::write(dir.join("src/c.ts"), "mine\n").unwrap();
    std::fs::write(dir.join("src/person.ts"), "made by a person\n").unwrap();
    let notes = codex_record(&dir, "Stop", "", Value::Null, "");
    assert!(
        notes.contains("staged: not recorded: src/c.ts is not what the patch makes of it: the patch did not run (declined or failed), or the file changed since"),
        "{notes}"
    );
    assert_eq!(staged_log(&dir), Vec::<Value>::new(), "nothing is logged as Codex's");
    let out = staged(&dir, &["undo", "--yes"]);
    assert_ne!(code(&out), 0);
    assert_eq!(read(&dir, "src/a.ts"), "person(1);\n");
    assert_eq!(read(&dir, "src/c.ts"), "mine\n");
    assert_eq!(read(&dir, "src/person.ts"), "made by a person\n");
    // Two shell patches of one file in one turn, each recorded: the second's PreToolUse
    // checks the first against what it left.
    let first = "*** Begin Patch\n*** Update File: src/c.ts\n@@\n-mine\n+two\n*** End Patch\n";
    let second = "*** Begin Patch\n*** Update File: src/c.ts\n@@\n-two\n+three\n*** End Patch\n";
    for (patch, call, result) in [(first, "call_2", "two\n"), (second, "call_3", "three\n")] {
        let script = format!("apply_patch <<'EOF'\n{patch}EOF\n");
        codex_record(&dir, "PreToolUse", "Bash", json!({"command": script}), call);
        std::fs::write(dir.join("src/c.ts"), result).unwrap();
    }
    // A person's edit of a file no patch names is none of the record's business.
    std::fs::write(dir.join("src/a.ts"), "person(2);\n").unwrap();
    codex_record(&dir, "Stop", "", Value::Null, "");
    let log = staged_log(&dir);
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log.iter().all(|e| e["frontEnd"] == "hook:codex"), "{log:?}");
    for _ in 0..2 {
        let out = staged(&dir, &["undo", "--yes"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    assert_eq!(read(&dir, "src/c.ts"), "mine\n");
    assert_eq!(read(&dir, "src/a.ts"), "person(2);\n");
    // The apply_patch tool's own PostToolUse: recorded only when the disk is what it wrote.
    let patch =
        "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-person(2);\n+codex(2);\n*** End Patch\n";
    codex_record(&dir, "PreToolUse", "apply_patch", json!({"command": patch}), "call_4");
    std::fs::write(dir.join("src/a.ts"), "codex(2);\nand a person's line\n").unwrap();
    let notes =
        codex_record(&dir, "PostToolUse", "apply_patch", json!({"command": patch}), "call_4");
    assert!(notes.contains("src/a.ts is not what the patch makes of it"), "{notes}");
    assert_eq!(staged_log(&dir).len(), 2);
}

#[test]
fn claude_code_record_mode_undoes_to_the_bytes_that_were_on_disk() {
    let mixed = "oldApi(1);\r\nconst y = 2;\nz();\r\nq\rw\n";
    let crlf = "oldApi(1);\r\nconst y = 2;\r\n";
    let ws = workspace(&[("src/m.ts", mixed), ("src/c.ts", crlf)]);
    let dir = ws.path().canonicalize().unwrap();
    let input = |path: &str| json!({"file_path": dir.join(path), "old_string": "oldApi(1);", "new_string": "newApi(1);\nextra();", "replace_all": false});
    let post = |path: &str, original: &str| {
        serde_json::to_vec(&json!({
            "session_id": "s-1", "cwd": dir, "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": input(path), "tool_use_id": "toolu_1",
            "tool_response": {"filePath": dir.join(path), "oldString": "oldApi(1);", "newString": "newApi(1);\nextra();",
                "originalFile": original, "structuredPatch": [], "userModified": false, "replaceAll": false},
        }))
        .unwrap()
    };
    // What Claude Code 2.1.197 does (measured): it reads the file with CRLF as LF, replaces,
    // and writes all CRLF (a CRLF file) or all LF (a mixed one); its originalFile is LF.
    for (path, before, written) in [
        ("src/m.ts", mixed, "newApi(1);\nextra();\nconst y = 2;\nz();\nq\rw\n"),
        ("src/c.ts", crlf, "newApi(1);\r\nextra();\r\nconst y = 2;\r\n"),
    ] {
        let out = staged_in(
            &dir,
            &["hook", "claude-code", "--mode", "record"],
            &claude_pre(&dir, "Edit", input(path)),
            &[],
        );
        assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
        std::fs::write(dir.join(path), written).unwrap();
        let out = staged_in(
            &dir,
            &["hook", "claude-code", "--mode", "record"],
            &post(path, &before.replace("\r\n", "\n")),
            &[],
        );
        assert_eq!((code(&out), stdout(&out).as_str()), (0, ""), "{}", stderr(&out));
        assert_eq!(stderr(&out), "", "recorded");
        let out = staged(&dir, &["undo", "--yes"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_eq!(std::fs::read(dir.join(path)).unwrap(), before.as_bytes(), "{path}");
    }
    // A person's edit of the file while the tool ran is not what the Edit did: not recorded.
    let out = staged_in(
        &dir,
        &["hook", "claude-code", "--mode", "record"],
        &claude_pre(&dir, "Edit", input("src/c.ts")),
        &[],
    );
    assert_eq!(code(&out), 0);
    std::fs::write(dir.join("src/c.ts"), "newApi(1);\r\nextra();\r\nconst y = 3;\r\n").unwrap();
    let out = staged_in(
        &dir,
        &["hook", "claude-code", "--mode", "record"],
        &post("src/c.ts", &crlf.replace("\r\n", "\n")),
        &[],
    );
    assert!(
        stderr(&out).contains("staged: not recorded: src/c.ts is not what the edit makes of it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(staged_log(&dir).len(), 2, "the two undone entries only");
}

/// A Claude Code `Stop` of session `s-1`, through the binary: its reply (`Value::Null` for
/// none) and its stderr.
fn claude_stop(dir: &Path, active: bool) -> (Value, String) {
    let event = serde_json::to_vec(&json!({
        "session_id": "s-1", "cwd": dir, "hook_event_name": "Stop", "stop_hook_active": active,
        "last_assistant_message": "Done.",
    }))
    .unwrap();
    let out = staged_in(dir, &["hook", "claude-code"], &event, &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply = if stdout(&out).trim().is_empty() { Value::Null } else { reply(&out) };
    (reply, stderr(&out))
}

fn blocked(reply: &Value) -> String {
    assert_eq!(reply["decision"], "block", "{reply}");
    reply["reason"].as_str().unwrap().to_owned()
}

#[test]
fn the_stop_hook_holds_the_rest_of_a_partial_apply() {
    let before: String = (0..40).map(|i| format!("line {i}\n")).collect();
    let after = before.replace("line 3\n", "LINE 3\n").replace("line 37\n", "LINE 37\n");
    let ws = workspace(&[("t.txt", &before)]);
    let dir = ws.path().canonicalize().unwrap();
    let write = json!({"file_path": dir.join("t.txt"), "content": after});
    let out = staged_in(&dir, &["hook", "claude-code"], &claude_pre(&dir, "Write", write), &[]);
    assert!(deny_reason(&out).starts_with("staged holds this edit as a preview"));
    let out = staged(&dir, &["resolve", "apply", "--only", "t.txt:1", "--reason", "the first"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let rest = pending_ids(&dir);
    assert_eq!(rest.len(), 1, "the rest is pending under a new id");
    let (reply, _) = claude_stop(&dir, false);
    let reason = blocked(&reply);
    assert!(
        reason.starts_with(&format!(
            "A change staged in this session is still pending: {} (Write: t.txt (+1 -1)). Resolve it before you finish",
            rest[0]
        )),
        "{reason}"
    );
    // The rest of the rest is the session's too.
    let out = staged(&dir, &["resolve", "discard", "--reason", "not the second"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (reply, _) = claude_stop(&dir, false);
    assert_eq!(reply, Value::Null);
}

#[test]
fn a_session_state_file_from_before_the_upgrade_is_honoured_then_moved_into_the_database() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    hold_edit_of_a_ts(&dir);
    let id = pending_ids(&dir)[0].clone();
    // The workspace as a staged before schema 5 left it, mid-session: the session's state in
    // its own file, none in the database (which the next staged migrates).
    let db = dir.join(".staged/staged.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("DROP TABLE hook_state; PRAGMA user_version = 4;").unwrap();
    }
    let file = dir.join(".staged/hooks/claude-code-s-1.json");
    std::fs::write(&file, json!({"staged": [id], "stopBlocks": 1}).to_string()).unwrap();
    let (reply, _) = claude_stop(&dir, true);
    let reason = blocked(&reply);
    assert!(
        reason.starts_with(&format!("A change staged in this session is still pending: {id} (")),
        "{reason}"
    );
    // Saved into the database; the file is gone, and what it said goes on counting there.
    assert!(!file.exists());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, 6);
    let (reply, _) = claude_stop(&dir, true);
    blocked(&reply);
    let (reply, notes) = claude_stop(&dir, true);
    assert!(notes.contains("let the turn end after holding it 3 times"), "{notes}");
    assert!(reply.get("decision").is_none(), "{reply}");
    // A file that turns up again is never read over the database's row (which still has the
    // preview, and the count back at 0).
    std::fs::write(&file, json!({"staged": [], "stopBlocks": 3}).to_string()).unwrap();
    let (reply, _) = claude_stop(&dir, true);
    blocked(&reply);
}

#[test]
fn an_unreadable_session_state_is_rebuilt_from_the_stack_and_said_so_never_dropped() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    hold_edit_of_a_ts(&dir);
    let id = pending_ids(&dir)[0].clone();
    let db = dir.join(".staged/staged.db");
    let state = |conn: &rusqlite::Connection| -> Vec<u8> {
        conn.query_row(
            "SELECT CAST(state AS BLOB) FROM hook_state WHERE client = 'claude-code' AND session = 's-1'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    for bad in ["{\"staged\": \"not a list\"}", "\u{0}not json"] {
        {
            let conn = rusqlite::Connection::open(&db).unwrap();
            conn.execute("UPDATE hook_state SET state = ?1", [bad]).unwrap();
        }
        // The Stop still holds the turn for the session's pending preview, read from the
        // stack, and says that the state it could not read is replaced.
        let (reply, notes) = claude_stop(&dir, false);
        let reason = blocked(&reply);
        assert!(
            reason
                .starts_with(&format!("A change staged in this session is still pending: {id} (")),
            "{reason}"
        );
        assert!(
            notes.contains("staged: this session's hook state could not be read (its row is not a state staged wrote: "),
            "{notes}"
        );
        assert!(
            notes.contains(&format!("it is replaced by one rebuilt from the session's pending previews ({id}), and the refused edits, Stop count and record-mode snapshots it held are lost")),
            "{notes}"
        );
        // Replaced by a state that reads back, which goes on counting.
        let conn = rusqlite::Connection::open(&db).unwrap();
        let text = String::from_utf8(state(&conn)).unwrap();
        let saved: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(saved["staged"], json!([id]), "{saved}");
        assert_eq!(saved["stopBlocks"], 1, "{saved}");
        let (reply, notes) = claude_stop(&dir, true);
        blocked(&reply);
        assert!(!notes.contains("could not be read"), "{notes}");
    }
}

#[test]
fn the_stop_hook_names_a_refused_edit_until_it_is_made_again() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n"), ("src/b.ts", "b(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let edit = |path: &str, old: &str, new: &str| json!({"file_path": dir.join(path), "old_string": old, "new_string": new, "replace_all": false});
    let out = staged_in(
        &dir,
        &["hook", "claude-code"],
        &claude_pre(&dir, "Edit", edit("src/a.ts", "oldApi(1);", "newApi(1);")),
        &[],
    );
    assert!(deny_reason(&out).starts_with("staged holds this edit as a preview"));
    let first = pending_ids(&dir)[0].clone();
    // A second edit of the file is refused while the first is pending.
    let out = staged_in(
        &dir,
        &["hook", "claude-code"],
        &claude_pre(&dir, "Edit", edit("src/a.ts", "oldApi(1);", "otherApi(1);")),
        &[],
    );
    assert!(deny_reason(&out).contains("src/a.ts already has a pending preview"));
    let refusal = format!(
        "An edit refused in this session, because a preview of its file was pending, was never made again: src/a.ts (refused while {first} (Edit: src/a.ts (1 replacement)) was pending). Once that preview is resolved, make the edit again against the file as it is now (Read it first)."
    );
    let (reply, _) = claude_stop(&dir, false);
    let reason = blocked(&reply);
    assert!(reason.starts_with("A change staged in this session is still pending: "), "{reason}");
    assert!(reason.contains(&format!("\n\n{refusal}\n\n<system-reminder>")), "{reason}");
    // The model drops the preview and moves on: the refused edit is still named.
    let out = staged(&dir, &["resolve", "discard", "--reason", "not this"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (reply, _) = claude_stop(&dir, true);
    let reason = blocked(&reply);
    assert!(reason.starts_with(&refusal), "{reason}");
    // Made again: no longer named; its preview is.
    let out = staged_in(
        &dir,
        &["hook", "claude-code"],
        &claude_pre(&dir, "Edit", edit("src/a.ts", "oldApi(1);", "otherApi(1);")),
        &[],
    );
    assert!(deny_reason(&out).starts_with("staged holds this edit as a preview"));
    let (reply, _) = claude_stop(&dir, true);
    let reason = blocked(&reply);
    assert!(!reason.contains("never made again"), "{reason}");
    let out = staged(&dir, &["resolve", "apply", "--reason", "made"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(claude_stop(&dir, false).0, Value::Null);
    // A file pending in another session's preview: named once, never held for.
    let out = staged_in(&dir, &["write", "src/b.ts"], b"b(2);\n", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let theirs = pending_ids(&dir)[0].clone();
    let out = staged_in(
        &dir,
        &["hook", "claude-code"],
        &claude_pre(&dir, "Edit", edit("src/b.ts", "b(1);", "b(3);")),
        &[],
    );
    assert!(deny_reason(&out).contains("src/b.ts already has a pending preview"));
    let (reply, notes) = claude_stop(&dir, false);
    // Not the model's to fix: the turn ends, and the person is told what waits.
    let told = format!(
        "staged: 1 preview is still pending, nothing of it written: {theirs} (Write: src/b.ts (rewritten, 1 line)). Review it with `staged ui` (in a browser) or `staged review` (in a terminal)."
    );
    assert_eq!(reply, json!({"systemMessage": told}));
    assert!(
        notes.contains(&format!(
            "staged: An edit of this session was refused because another session's preview of its file was pending (not yours to resolve): src/b.ts (refused while {theirs} (Write: src/b.ts (rewritten, 1 line)) was pending)."
        )),
        "{notes}"
    );
    let (reply, notes) = claude_stop(&dir, false);
    assert_eq!((reply, notes), (json!({"systemMessage": told}), String::new()), "named once");
}

#[test]
fn a_refused_edit_lets_the_turn_end_after_three_holds() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let edit = |new: &str| json!({"file_path": dir.join("src/a.ts"), "old_string": "oldApi(1);", "new_string": new, "replace_all": false});
    for new in ["newApi(1);", "otherApi(1);"] {
        staged_in(&dir, &["hook", "claude-code"], &claude_pre(&dir, "Edit", edit(new)), &[]);
    }
    let out = staged(&dir, &["resolve", "discard", "--reason", "not this"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for active in [false, true, true] {
        blocked(&claude_stop(&dir, active).0);
    }
    let (reply, notes) = claude_stop(&dir, true);
    assert_eq!(reply, Value::Null);
    assert!(
        notes.contains("staged: let the turn end after holding it 3 times; still pending: nothing; refused and never made again: src/a.ts (refused while "),
        "{notes}"
    );
    assert_eq!(claude_stop(&dir, false).0, Value::Null, "said, and forgotten");
}

#[test]
fn claude_code_record_mode_replays_deletions_and_edits_that_create_a_file() {
    let crlf = "keep();\r\nconst x = 1;\r\ntail();\r\n";
    let ws = workspace(&[("src/d.ts", crlf)]);
    let dir = ws.path().canonicalize().unwrap();
    // As Claude Code 2.1.197 does them (measured): an empty new_string takes the line's
    // ending with it; an Edit with an empty old_string creates the file, and its
    // originalFile is "".
    for (path, old, new, original, written) in [
        (
            "src/d.ts",
            "const x = 1;",
            "",
            "keep();\nconst x = 1;\ntail();\n",
            "keep();\r\ntail();\r\n",
        ),
        ("src/n.ts", "", "made();\n", "", "made();\n"),
    ] {
        let input = json!({"file_path": dir.join(path), "old_string": old, "new_string": new, "replace_all": false});
        let out = staged_in(
            &dir,
            &["hook", "claude-code", "--mode", "record"],
            &claude_pre(&dir, "Edit", input.clone()),
            &[],
        );
        assert_eq!((code(&out), stderr(&out).as_str()), (0, ""));
        std::fs::write(dir.join(path), written).unwrap();
        let post = serde_json::to_vec(&json!({
            "session_id": "s-1", "cwd": dir, "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": input, "tool_use_id": "toolu_1",
            "tool_response": {"filePath": dir.join(path), "oldString": old, "newString": new,
                "originalFile": original, "structuredPatch": [], "userModified": false, "replaceAll": false},
        }))
        .unwrap();
        let out = staged_in(&dir, &["hook", "claude-code", "--mode", "record"], &post, &[]);
        assert_eq!((code(&out), stderr(&out).as_str()), (0, ""), "{path}: recorded");
    }
    for _ in 0..2 {
        let out = staged(&dir, &["undo", "--yes"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    assert_eq!(std::fs::read(dir.join("src/d.ts")).unwrap(), crlf.as_bytes());
    assert!(!dir.join("src/n.ts").exists());
}

#[test]
fn ast_edit_never_stages_a_rewrite_of_a_protected_file() {
    let ws = workspace(&[
        ("opencode.json", "{\"permission\": \"ask\"}\n"),
        (".claude/settings.json", "{\"permission\": \"ask\"}\n"),
        ("src/conf.json", "{\"permission\": \"ask\"}\n"),
    ]);
    let dir = ws.path().canonicalize().unwrap();
    for path in ["opencode.json", ".claude/settings.json", "."] {
        let out =
            staged(&dir, &["ast-edit", "--op", "\"ask\"", "\"allow\"", "--lang", "json", path]);
        assert_ne!(code(&out), 0, "{path}: {}", stdout(&out));
        assert!(stderr(&out).contains("Refusing "), "{path}: {}", stderr(&out));
        assert!(pending_ids(&dir).is_empty(), "{path}");
    }
    assert_eq!(read(&dir, "opencode.json"), "{\"permission\": \"ask\"}\n");
    // The same rewrite of a file of the project stages.
    let out = staged(&dir, &["ast-edit", "--op", "\"ask\"", "\"allow\"", "--lang", "json", "src"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(pending_ids(&dir).len(), 1);
}

/// `--approve human`: the server each client runs asks a person before every apply, and
/// Codex's call waits long enough for them; installing again without it takes it away.
#[test]
fn install_with_approve_human_makes_resolve_wait_for_a_person() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let bin = staged_bin().canonicalize().unwrap().display().to_string();
    let out = staged(&dir, &["hook", "install", "claude-code", "--approve", "human"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("--approve human: the model's resolve apply waits for a person"));
    let mcp: Value = serde_json::from_str(&read(&dir, ".mcp.json")).unwrap();
    assert_eq!(
        mcp["mcpServers"]["staged"],
        json!({"command": bin, "args": ["mcp", "--approve", "human"]})
    );
    let out = staged(&dir, &["hook", "install", "claude-code"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mcp: Value = serde_json::from_str(&read(&dir, ".mcp.json")).unwrap();
    assert_eq!(mcp["mcpServers"]["staged"]["args"], json!(["mcp"]));

    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    let env = [("CODEX_HOME", home_path.as_path())];
    let out = staged_in(&dir, &["hook", "install", "codex", "--approve", "human"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("tool_timeout_sec is 3600"), "{}", stdout(&out));
    let parsed: toml::Value =
        toml::from_str(&std::fs::read_to_string(home_path.join("config.toml")).unwrap()).unwrap();
    let server = &parsed["mcp_servers"]["staged"];
    let args: Vec<&str> =
        server["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(args, ["mcp", "--approve", "human"]);
    assert_eq!(server["tool_timeout_sec"].as_integer(), Some(3600));
    assert_eq!(server["tools"]["resolve"]["approval_mode"].as_str(), Some("approve"));
    let out = staged_in(&dir, &["hook", "install", "codex"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let parsed: toml::Value =
        toml::from_str(&std::fs::read_to_string(home_path.join("config.toml")).unwrap()).unwrap();
    assert!(parsed["mcp_servers"]["staged"].get("tool_timeout_sec").is_none());
}

/// Issue 36: the clients' hooks run `staged-hook`, which links no ast engine and no grammar
/// (so it starts faster). An `ast_edit` preview staged beside the hook's own is still the
/// stack's: the hook refuses an edit of its file naming it, stages other edits over it, and
/// leaves it whole for `staged resolve`, which applies it.
#[test]
fn staged_hook_keeps_an_ast_edit_preview_it_cannot_apply() {
    let ws = workspace(&[
        ("src/conf.json", "{\"permission\": \"ask\"}\n"),
        ("src/a.ts", "oldApi(1);\n"),
    ]);
    let dir = ws.path().canonicalize().unwrap();
    let out = staged(&dir, &["ast-edit", "--op", "\"ask\"", "\"allow\"", "--lang", "json", "src"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let ast = pending_ids(&dir);
    assert_eq!(ast.len(), 1);
    let gate = |tool_input: Value| {
        let event = claude_pre(&dir, "Edit", tool_input);
        common::run_within(&hook_bin(), &dir, &["hook", "claude-code"], &event, &[])
    };
    let out = gate(
        json!({"file_path": dir.join("src/conf.json"), "old_string": "ask", "new_string": "deny", "replace_all": false}),
    );
    let reason = deny_reason(&out);
    assert!(
        reason.contains(&format!("src/conf.json already has a pending preview: {} (", ast[0])),
        "{reason}"
    );
    let out = gate(
        json!({"file_path": dir.join("src/a.ts"), "old_string": "oldApi(1);", "new_string": "newApi(1);", "replace_all": false}),
    );
    assert!(
        deny_reason(&out).starts_with("staged holds this edit as a preview"),
        "{}",
        stdout(&out)
    );
    let ids = pending_ids(&dir);
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.contains(&ast[0]));
    let out = staged(&dir, &["resolve", "discard", "--reason", "not this one"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = staged(&dir, &["resolve", "apply", "--id", &ast[0], "--reason", "allow it"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&dir, "src/conf.json"), "{\"permission\": \"allow\"}\n");
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

/// A hook call is two short processes that allocate little: `staged-hook` runs on the system's
/// allocator, whose start costs fewer page faults than jemalloc's (`staged` keeps jemalloc).
#[test]
fn staged_hook_runs_on_the_system_allocator() {
    // A string of jemalloc's own messages (kept in a stripped binary, unlike its symbols).
    let jemalloc: &[u8] = b"<jemalloc>";
    let links = |bin: &Path| {
        let bytes = std::fs::read(bin).unwrap();
        bytes.windows(jemalloc.len()).any(|window| window == jemalloc)
    };
    assert!(links(&staged_bin()), "staged links jemalloc");
    assert!(!links(&hook_bin()), "staged-hook links no jemalloc");
}

/// Issue 36: `staged-hook` has the hooks' commands and nothing of the ast engine: a grammar's
/// entry point is in `staged` and not in it (a reference to the ast tools from the hooks'
/// path would link all 57 grammars back in), and it installs nothing itself.
#[test]
fn staged_hook_links_no_grammar_and_runs_only_hooks() {
    let grammar: &[u8] = b"tree_sitter_typescript";
    let links = |bin: &Path| {
        let bytes = std::fs::read(bin).unwrap();
        bytes.windows(grammar.len()).any(|window| window == grammar)
    };
    assert!(links(&staged_bin()), "staged links the TypeScript grammar");
    assert!(!links(&hook_bin()), "staged-hook links no grammar");
    let dir = tempfile::tempdir().unwrap();
    let out =
        common::run_within(&hook_bin(), dir.path(), &["hook", "install", "claude-code"], b"", &[]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out)
            .contains("staged-hook only runs hooks: install them with `staged hook install`"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join(".claude").exists());
    let out = common::run_within(&hook_bin(), dir.path(), &["ast-edit", "--help"], b"", &[]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
}
