//! Shell commands under staged, through the real binary (`docs/contract/shell.md`): Claude
//! Code's hook rewrites a `Bash` call to run under `staged shell-run`; the rewritten command,
//! run by a shell as Claude Code runs it, has its writes recorded in the session (record mode)
//! or staged as one preview and kept out of the tree (gate mode); a run whose wrapper was
//! killed is finished by the session's next hook call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    path::Path,
    process::{Command, Output, Stdio},
};

use common::{code, json, pending_ids, read, staged, stderr, stdout, workspace};
use serde_json::{Value, json};

/// `sed -i` on one file (whose bytes end without a newline, with a CRLF line) and a heredoc
/// creating another.
const COMMAND: &str = "sed -i 's/two/TWO/' src/a.txt && cat > src/new.txt <<'EOF'\nhello\nEOF";
const A: &str = "one\r\ntwo\nthree";

fn hook(dir: &Path, mode: &str, event: &Value) -> Output {
    let mut child = Command::new(common::staged_bin())
        .args(["hook", "claude-code", "--mode", mode])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), event.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn bash_event(dir: &Path, command: &str) -> Value {
    json!({
        "hook_event_name": "PreToolUse",
        "session_id": "session-1",
        "cwd": dir,
        "permission_mode": "acceptEdits",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Edit two files"},
        "tool_use_id": "toolu_1",
    })
}

/// The hook's rewrite of `command`, checked, and the command Claude Code would then run.
fn rewritten(dir: &Path, mode: &str, command: &str) -> String {
    let out = hook(dir, mode, &bash_event(dir, command));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let output = &reply["hookSpecificOutput"];
    assert_eq!(output["hookEventName"], "PreToolUse", "{reply}");
    assert!(output.get("permissionDecision").is_none(), "the rewrite grants nothing: {reply}");
    let input = &output["updatedInput"];
    assert_eq!(input["description"], "Edit two files", "the rest of the input is kept");
    let wrapped = input["command"].as_str().unwrap().to_owned();
    assert!(wrapped.contains(" shell-run --client claude-code --session 'session-1'"), "{wrapped}");
    wrapped
}

/// Runs `command` with `sh -c` in `dir`, as Claude Code's Bash tool does.
fn sh(dir: &Path, command: &str) -> Output {
    Command::new("sh").arg("-c").arg(command).current_dir(dir).output().unwrap()
}

#[test]
fn record_mode_logs_a_shell_commands_writes_and_a_hunk_reverts_to_the_exact_bytes() {
    let dir = workspace(&[("src/a.txt", A), ("src/other.txt", "other\n")]);
    let root = dir.path().canonicalize().unwrap();
    let wrapped = rewritten(&root, "record", COMMAND);
    let out = sh(&root, &wrapped);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&root, "src/a.txt"), "one\r\nTWO\nthree");
    assert_eq!(read(&root, "src/new.txt"), "hello\n");
    let log = json(&staged(&root, &["--json", "log"]));
    let entry = &log["entries"][0];
    assert_eq!(entry["source"], "shell", "{entry}");
    assert_eq!(entry["frontEnd"], "hook:claude-code");
    assert_eq!(
        entry["label"],
        "Shell: sed -i 's/two/TWO/' src/a.txt && cat > src/new.txt <<'EOF'\\nhello\\nEOF"
    );
    assert_eq!(entry["extra"]["shell"]["attribution"], "exact");
    let shown = staged(&root, &["session", "show"]);
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    let diff = stdout(&shown);
    assert!(diff.contains("diff --git a/src/a.txt b/src/a.txt"), "{diff}");
    assert!(diff.contains("-two\n+TWO\n"), "{diff}");
    assert!(diff.contains("diff --git a/src/new.txt b/src/new.txt"), "{diff}");
    assert!(!diff.contains("other.txt"), "{diff}");
    let out =
        staged(&root, &["session", "revert", "--only", "src/a.txt:1", "--reason", "keep two"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read(root.join("src/a.txt")).unwrap(), A.as_bytes());
    assert_eq!(read(&root, "src/new.txt"), "hello\n");
    // Nothing of the run is left behind.
    let runs: Vec<_> = std::fs::read_dir(root.join(".staged/shell")).unwrap().flatten().collect();
    assert!(runs.is_empty(), "{runs:?}");
}

#[test]
fn gate_mode_keeps_a_shell_commands_writes_out_of_the_tree_until_the_preview_is_applied() {
    let dir = workspace(&[("src/a.txt", A)]);
    let root = dir.path().canonicalize().unwrap();
    let wrapped = rewritten(&root, "gate", COMMAND);
    let out = sh(&root, &wrapped);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&root, "src/a.txt"), A);
    assert!(!root.join("src/new.txt").exists());
    let ids = pending_ids(&root);
    assert_eq!(ids.len(), 1, "{ids:?}");
    let told = stderr(&out);
    assert!(
        told.starts_with(&format!(
            "staged holds what this command wrote as a preview, and none of it was written to the workspace yet: {} (Shell: sed -i 's/two/TWO/' src/a.txt && cat > src/new.txt <<'EOF'\\nhello\\nEOF; src/a.txt, src/new.txt). To write it, call resolve",
            ids[0]
        )),
        "{told}"
    );
    let out = staged(&root, &["resolve", "apply", "--reason", "as the command did"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&root, "src/a.txt"), "one\r\nTWO\nthree");
    assert_eq!(read(&root, "src/new.txt"), "hello\n");
}

#[test]
fn the_commands_exit_code_output_and_ignored_files_pass_through_unrecorded() {
    let dir = workspace(&[("src/a.txt", "a\n"), (".gitignore", "target/\n")]);
    let root = dir.path().canonicalize().unwrap();
    let wrapped =
        rewritten(&root, "gate", "mkdir -p target && echo built > target/out; echo said; exit 7");
    let out = sh(&root, &wrapped);
    assert_eq!(code(&out), 7);
    assert_eq!(stdout(&out), "said\n");
    assert_eq!(read(&root, "target/out"), "built\n");
    assert!(pending_ids(&root).is_empty());
    let log = json(&staged(&root, &["--json", "log"]));
    assert_eq!(log["entries"], json!([]), "ignored files are never recorded");
}

#[test]
fn a_run_whose_wrapper_was_killed_is_recorded_at_the_sessions_next_hook_call() {
    let dir = workspace(&[("src/a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    // The shell kills the wrapper (its parent), then writes: the wrapper never finishes.
    let wrapped = rewritten(&root, "record", "kill -9 $PPID; sleep 0.2; echo late > src/late.txt");
    let out = sh(&root, &wrapped);
    assert_ne!(code(&out), 0);
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert!(!root.join("src/late.txt").exists(), "the write stays in the run until it is finished");
    // Another session's hook call leaves it alone.
    let mut other = bash_event(&root, "true");
    other["hook_event_name"] = json!("PostToolUse");
    other["tool_name"] = json!("Read");
    other["session_id"] = json!("session-2");
    assert_eq!(code(&hook(&root, "record", &other)), 0);
    assert!(!root.join("src/late.txt").exists());
    // The session's next call records it, and its model is told.
    other["session_id"] = json!("session-1");
    let out = hook(&root, "record", &other);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&root, "src/late.txt"), "late\n");
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    assert_eq!(entry["source"], "shell", "{entry}");
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(
        context.starts_with("A shell command that did not finish (`Shell: kill -9 $PPID; sleep 0.2; echo late > src/late.txt`): what it wrote was recorded."),
        "{reply}"
    );
}

#[test]
fn codex_shell_calls_are_wrapped_with_an_allow_only_where_its_approval_policy_is_never() {
    let dir = workspace(&[("src/a.txt", A)]);
    let root = dir.path().canonicalize().unwrap();
    let mut event = bash_event(&root, COMMAND);
    event["permission_mode"] = json!("bypassPermissions");
    let child = |event: &Value| {
        let mut child = Command::new(common::staged_bin())
            .args(["hook", "codex", "--mode", "record"])
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), event.to_string().as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = child(&event);
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "allow", "{reply}");
    let wrapped = reply["hookSpecificOutput"]["updatedInput"]["command"].as_str().unwrap();
    assert!(
        wrapped.contains(" shell-run --client codex --session 'session-1' --mode record"),
        "{wrapped}"
    );
    // Where Codex would ask the person, an allow would grant what it would not: no rewrite.
    event["permission_mode"] = json!("default");
    let out = child(&event);
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
}
