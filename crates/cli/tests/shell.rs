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
    let child = common::spawn_with_event(dir, &["hook", "claude-code", "--mode", mode], event);
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
    // Nothing of the run is left behind (its folder is deleted by a child of the wrapper that
    // outlives it).
    let left = || -> Vec<_> {
        std::fs::read_dir(root.join(".staged/shell")).unwrap().flatten().map(|e| e.path()).collect()
    };
    wait_until(10, || left().is_empty());
    assert!(left().is_empty(), "{:?}", left());
}

/// The wrapper's commit frees no file's blocks on the call's way (`free_later`: the file a
/// text change replaces and the journal's own files are kept under freed names in the journal
/// folder); its cleaning child deletes them with the run's folder, so nothing is left in the
/// journal folder but its two lock files, and the file holds the command's bytes.
#[test]
fn the_wrappers_cleaner_deletes_what_its_commit_left_to_free() {
    let dir = workspace(&[("src/a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let out = shell_run(&root, "record", "echo more >> src/a.txt");
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&root, "src/a.txt"), "a\nmore\n");
    let journal = || staged_test_support::sorted_names(&root.join(".staged/journal"));
    wait_until(10, || journal() == ["commit.lock", "write.lock"]);
    assert_eq!(journal(), ["commit.lock", "write.lock"]);
    let log = json(&staged(&root, &["--json", "log"]));
    assert_eq!(log["entries"][0]["source"], "shell", "{log}");
}

/// The wrapper opens the workspace while the command runs: a command that deletes the
/// workspace's database meanwhile has its writes logged in the one there once it is done,
/// never in the deleted one.
#[test]
fn a_command_that_deletes_the_database_while_it_runs_is_logged_in_the_new_one() {
    let dir = workspace(&[("src/a.txt", A)]);
    let root = dir.path().canonicalize().unwrap();
    // Made before the command, so the wrapper opens it while the command sleeps.
    assert_eq!(code(&staged(&root, &["pending"])), 0);
    let command = "sleep 1; rm -f .staged/staged.db .staged/staged.db-wal .staged/staged.db-shm; echo four >> src/a.txt";
    let out = sh(&root, &rewritten(&root, "record", command));
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(read(&root, "src/a.txt").ends_with("four\n"));
    let log = json(&staged(&root, &["--json", "log"]));
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{log}");
    assert_eq!(entries[0]["source"], "shell", "{log}");
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
fn a_run_whose_wrapper_was_killed_is_recorded_at_the_sessions_next_hook_call_once_its_command_ends()
{
    let dir = workspace(&[("src/a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    // The shell kills the wrapper (its parent), then writes: the wrapper never finishes.
    let wrapped = rewritten(&root, "record", "kill -9 $PPID; sleep 2; echo late > src/late.txt");
    run_killing_its_wrapper(&root, &wrapped, &[]);
    let mut next = read_event(&root, Some("toolu_2"));
    // While the command still runs, the session's next call leaves its run alone.
    let out = hook(&root, "record", &next);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
    // The command's write lands in its run, not in the tree.
    let runs = root.join(".staged/shell");
    let landed = || {
        std::fs::read_dir(&runs)
            .unwrap()
            .flatten()
            .any(|run| run.path().join("upper/src/late.txt").exists())
    };
    wait_until(30, landed);
    assert!(landed());
    assert!(!root.join("src/late.txt").exists(), "the write stays in the run until it is finished");
    // Another session's hook call leaves it alone.
    next["session_id"] = json!("session-2");
    assert_eq!(code(&hook(&root, "record", &next)), 0);
    assert!(!root.join("src/late.txt").exists());
    // The session's next call once the command is gone records it, and its model is told.
    next["session_id"] = json!("session-1");
    let start = std::time::Instant::now();
    let out = loop {
        let out = hook(&root, "record", &next);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        if !out.stdout.is_empty() || start.elapsed().as_secs() > 30 {
            break out;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(read(&root, "src/late.txt"), "late\n");
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    assert_eq!(entry["source"], "shell", "{entry}");
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(
        context.starts_with(
            "A shell command that did not finish (`Shell: kill -9 $PPID; sleep 2; echo late > src/late.txt`): what it wrote was recorded."
        ),
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

/// Runs `command` under `staged shell-run` for session `session-1` in `mode`.
fn shell_run(dir: &Path, mode: &str, command: &str) -> Output {
    staged(dir, &common::shell_run_args(mode, command))
}

/// Every path of the tree at `root` but `.git` and `.staged`, a folder with a `/` after it,
/// a file with its text: what a revert must give back exactly.
fn tree(root: &Path) -> Vec<String> {
    fn walk(root: &Path, rel: &str, res: &mut Vec<String>) {
        let dir = if rel.is_empty() { root.to_path_buf() } else { root.join(rel) };
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        for name in names {
            let path = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
            if rel.is_empty() && (name == ".git" || name == ".staged") {
                continue;
            }
            if root.join(&path).is_dir() {
                res.push(format!("{path}/"));
                walk(root, &path, res);
            } else {
                res.push(format!("{path}: {}", read(root, &path)));
            }
        }
    }
    let mut res = Vec::new();
    walk(root, "", &mut res);
    res
}

#[test]
fn a_deleted_folder_of_a_thousand_files_is_recorded_and_reverted_or_staged_and_put_back() {
    let files: Vec<(String, String)> =
        (0..1000).map(|i| (format!("gen/d{}/f{i}.txt", i % 10), format!("file {i}\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    for mode in ["record", "gate"] {
        let dir = workspace(&refs);
        let root = dir.path().canonicalize().unwrap();
        // A folder that was empty before comes back too.
        std::fs::create_dir_all(root.join("gen/empty/deeper")).unwrap();
        let before = tree(&root);
        let out = shell_run(&root, mode, "rm -rf gen");
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        if mode == "record" {
            assert!(!root.join("gen").exists(), "the folder is gone, empty folders too");
            let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
            assert_eq!(entry["files"].as_array().unwrap().len(), 1000, "{}", entry["label"]);
            let diff = entry["diff"].as_str().unwrap();
            assert!(
                diff.starts_with("deleted folder gen/d0/\n")
                    && diff.contains(
                        "\ndeleted folder gen/empty/deeper/\ndeleted folder gen/empty/\n"
                    ),
                "{}",
                &diff[..400]
            );
            let out = staged(&root, &["session", "revert", "--reason", "keep them"]);
            assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
            assert!(
                stdout(&out).contains("gen/empty/ (folder deleted by the session)"),
                "{}",
                stdout(&out)
            );
            assert_eq!(tree(&root), before, "the tree exactly, folders included");
            // The revert is an entry like any other: its undo deletes them all again, folders
            // included, and the undo of that gives them back.
            let seq = json(&staged(&root, &["--json", "log"]))["entries"][0]["entry"].to_string();
            let out = staged(&root, &["undo", &seq, "--yes"]);
            assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
            assert!(!root.join("gen").exists(), "{:?}", tree(&root));
            let seq = json(&staged(&root, &["--json", "log"]))["entries"][0]["entry"].to_string();
            let out = staged(&root, &["undo", &seq, "--yes"]);
            assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
        } else {
            assert_eq!(pending_ids(&root).len(), 1);
        }
        assert_eq!(tree(&root), before, "{mode}");
        if mode == "gate" {
            let out = staged(&root, &["resolve", "apply", "--reason", "as the command did"]);
            assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
            assert!(!root.join("gen").exists(), "{:?}", tree(&root));
        }
    }
}

#[test]
fn folders_a_command_made_are_recorded_and_reverted_once_empty_never_with_a_persons_file() {
    let dir = workspace(&[("src/a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let before = tree(&root);
    let out =
        shell_run(&root, "record", "mkdir empty && mkdir -p a/b/c && echo new > a/b/c/new.txt");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    let diff = entry["diff"].as_str().unwrap();
    assert!(
        diff.starts_with("new folder a/\nnew folder a/b/\nnew folder a/b/c/\nnew folder empty/\ndiff --git a/a/b/c/new.txt b/a/b/c/new.txt\n"),
        "{diff}"
    );
    let shown = staged(&root, &["session", "show"]);
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    assert!(
        stdout(&shown).starts_with(
            "new folder a/\nnew folder a/b/\nnew folder a/b/c/\nnew folder empty/\ndiff --git"
        ),
        "{}",
        stdout(&shown)
    );
    assert!(stderr(&shown).contains("1 file and 4 folders"), "{}", stderr(&shown));
    // A person's file in `a` since: `a` holds something the command did not make, so it is
    // left in place; its empty folders go.
    std::fs::write(root.join("a/mine.txt"), "mine\n").unwrap();
    let out = staged(&root, &["session", "revert", "--reason", "not these"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let mut expected = vec!["a/".to_owned(), "a/mine.txt: mine\n".to_owned()];
    expected.extend(before);
    assert_eq!(tree(&root), expected);
    // Only the folders it did remove are in the revert's entry.
    let revert = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    assert!(
        revert["diff"].as_str().unwrap().starts_with(
            "deleted folder empty/\ndeleted folder a/b/c/\ndeleted folder a/b/\ndiff --git"
        ),
        "{}",
        revert["diff"]
    );
}

#[test]
fn an_empty_folder_a_command_made_is_staged_in_gate_mode_and_applied_by_resolve() {
    let dir = workspace(&[("src/a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let out = shell_run(&root, "gate", "mkdir empty");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!root.join("empty").exists(), "nothing reaches the tree before resolve");
    let ids = pending_ids(&root);
    assert_eq!(ids.len(), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("{} (Shell: mkdir empty; empty/)", ids[0])),
        "{}",
        stderr(&out)
    );
    let shown = staged(&root, &["show"]);
    assert!(stdout(&shown).contains("new folder empty/\n"), "{}{}", stdout(&shown), stderr(&shown));
    let out = staged(&root, &["resolve", "apply", "--reason", "as the command did"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(root.join("empty").is_dir());
    // Recorded as made: its undo removes it, and the undo of that makes it again.
    let seq = json(&staged(&root, &["--json", "log"]))["entries"][0]["entry"].to_string();
    let out = staged(&root, &["undo", &seq, "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        format!("Undid log entry {seq} (Shell: mkdir empty): 1 folder restored.")
    );
    assert!(!root.join("empty").exists());
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A repository on `main` (a.txt, gone.txt) with a branch `other` (a.txt changed, new.txt
/// added, gone.txt deleted).
fn repository() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(root.join("a.txt"), "main\n").unwrap();
    std::fs::write(root.join("gone.txt"), "only on main\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "main"]);
    git(&root, &["checkout", "-qb", "other"]);
    std::fs::write(root.join("a.txt"), "other\n").unwrap();
    std::fs::write(root.join("new.txt"), "only on other\n").unwrap();
    std::fs::remove_file(root.join("gone.txt")).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "other"]);
    git(&root, &["checkout", "-q", "main"]);
    (dir, root)
}

fn head(root: &Path) -> String {
    std::fs::read_to_string(root.join(".git/HEAD")).unwrap()
}

#[test]
fn a_git_checkout_of_another_branch_is_recorded_exactly_and_reverts() {
    let (_dir, root) = repository();
    let out = shell_run(&root, "record", "git checkout -q other");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(head(&root), "ref: refs/heads/other\n");
    assert_eq!(read(&root, "a.txt"), "other\n");
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    let mut paths: Vec<&str> =
        entry["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["a.txt", "gone.txt", "new.txt"], "never .git: {entry}");
    let out = staged(&root, &["session", "revert", "--reason", "stay on main's files"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&root, "a.txt"), "main\n");
    assert_eq!(read(&root, "gone.txt"), "only on main\n");
    assert!(!root.join("new.txt").exists());
}

#[test]
fn a_git_checkout_in_gate_mode_moves_the_repository_and_stages_the_working_tree() {
    let (_dir, root) = repository();
    let out = shell_run(&root, "gate", "git checkout -q other");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The repository's part happened; the working tree's is held back.
    assert_eq!(head(&root), "ref: refs/heads/other\n");
    assert_eq!(read(&root, "a.txt"), "main\n");
    assert_eq!(read(&root, "gone.txt"), "only on main\n");
    assert!(!root.join("new.txt").exists());
    assert_eq!(pending_ids(&root).len(), 1);
    let out = staged(&root, &["resolve", "apply", "--reason", "the branch's files"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&root, "a.txt"), "other\n");
    assert_eq!(read(&root, "new.txt"), "only on other\n");
    assert!(!root.join("gone.txt").exists());
}

#[test]
fn staged_folder_and_ignored_files_are_never_recorded_and_the_entry_counts_them() {
    let dir = workspace(&[
        ("a.txt", "a\n"),
        (".gitignore", "node_modules/\ntarget/\n"),
        ("target/old.o", "old\n"),
    ]);
    let root = dir.path().canonicalize().unwrap();
    let out = shell_run(
        &root,
        "record",
        "echo b >> a.txt; mkdir -p node_modules/p && echo i > node_modules/p/i.js; rm -rf target; echo mine > .staged/mine.txt",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&root, "node_modules/p/i.js"), "i\n");
    assert!(!root.join("target/old.o").exists(), "the ignored deletion happened");
    assert_eq!(read(&root, ".staged/mine.txt"), "mine\n");
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    let paths: Vec<&str> =
        entry["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["a.txt"], "{entry}");
    assert_eq!(entry["extra"]["shell"]["ignoredChanged"], 5, "{entry}");
}

#[test]
fn a_binary_file_is_named_with_its_bytes_before_kept() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("blob.bin"), b"\0old").unwrap();
    let out = shell_run(&root, "record", "printf '\\0new' > blob.bin; echo b >> a.txt");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0new");
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    let named = &entry["extra"]["shell"]["notInDiff"][0];
    assert_eq!((named["path"].as_str(), named["why"].as_str()), (Some("blob.bin"), Some("binary")));
    let before = named["before"].as_str().unwrap();
    let kept = std::fs::read(root.join(".staged/shell/kept").join(before)).unwrap();
    assert_eq!(kept, b"\0old");
}

#[test]
fn a_fifty_megabyte_file_rewritten_is_recorded_exactly_and_reverts_and_in_gate_mode_is_staged() {
    let big: String = (0..1_000_000)
        .map(|i| format!("line {i:>10} of the big generated text file...\n"))
        .collect();
    assert!(big.len() >= 50_000_000, "{}", big.len());
    let rewritten = big.replace("00000 of the big", "00000 OF THE BIG");
    for mode in ["record", "gate"] {
        let dir = workspace(&[]);
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("big.txt"), &big).unwrap();
        let out = shell_run(&root, mode, "sed -i 's/00000 of the big/00000 OF THE BIG/' big.txt");
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        if mode == "record" {
            assert!(std::fs::read(root.join("big.txt")).unwrap() == rewritten.as_bytes());
            let out = staged(&root, &["session", "revert", "--reason", "keep it"]);
            assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
            assert!(std::fs::read(root.join("big.txt")).unwrap() == big.as_bytes());
        } else {
            assert!(std::fs::read(root.join("big.txt")).unwrap() == big.as_bytes());
            let out = staged(&root, &["resolve", "apply", "--reason", "the rewrite"]);
            assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
            assert!(std::fs::read(root.join("big.txt")).unwrap() == rewritten.as_bytes());
        }
    }
}

#[test]
fn a_command_runs_in_the_folder_it_was_called_in() {
    let dir = workspace(&[("src/a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let out = Command::new(common::staged_bin())
        .args(["shell-run", "--client", "claude-code", "--session", "s", "--mode", "record"])
        .args(["--", "pwd; echo here > here.txt"])
        .current_dir(root.join("src"))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{}\n", root.join("src").display()));
    assert_eq!(read(&root, "src/here.txt"), "here\n");
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    assert_eq!(entry["files"][0]["path"], "src/here.txt");
}

/// `staged hook <client> --mode <mode>` in `dir` on `event`.
fn client_hook(dir: &Path, client: &str, mode: &str, event: &Value) -> Output {
    let mut child = Command::new(common::staged_bin())
        .args(["hook", client, "--mode", mode])
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

/// Each client's shell call, as its hook (or staged's plugin) sends it, and where its answer
/// holds the wrapped command.
fn client_shell_calls(root: &Path) -> Vec<(&'static str, &'static str, Value, &'static str)> {
    vec![
        (
            "gemini-cli",
            "gemini-session",
            json!({"hook_event_name": "BeforeTool", "session_id": "gemini-session", "cwd": root,
                   "tool_name": "run_shell_command",
                   "tool_input": {"command": COMMAND, "description": "Edit two files"}}),
            "/hookSpecificOutput/tool_input",
        ),
        (
            "opencode",
            "ses_1",
            json!({"hook": "tool.execute.before", "tool": "bash", "sessionID": "ses_1",
                   "callID": "call_1", "directory": root,
                   "args": {"command": COMMAND, "description": "Edit two files"}}),
            "/args",
        ),
        (
            "copilot",
            "copilot-session",
            json!({"sessionId": "copilot-session", "timestamp": 1, "cwd": root, "toolName": "bash",
                   "toolArgs": {"command": COMMAND, "description": "Edit two files"}}),
            "/modifiedArgs",
        ),
    ]
}

#[test]
fn gemini_opencode_and_copilot_shell_calls_run_under_the_wrapper_in_their_clients_session() {
    for mode in ["record", "gate"] {
        let dir = workspace(&[("src/a.txt", A)]);
        let root = dir.path().canonicalize().unwrap();
        for (client, session, event, at) in client_shell_calls(&root) {
            let out = client_hook(&root, client, mode, &event);
            assert_eq!(code(&out), 0, "{client}: {}", stderr(&out));
            let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
            let input = reply.pointer(at).unwrap_or_else(|| panic!("{client}: {reply}"));
            assert_eq!(input["description"], "Edit two files", "{client}: the rest is kept");
            let wrapped = input["command"].as_str().unwrap();
            assert!(
                wrapped.contains(&format!(
                    " shell-run --client {client} --session '{session}' --mode {mode}"
                )),
                "{wrapped}"
            );
            let out = sh(&root, wrapped);
            assert_eq!(code(&out), 0, "{client}: {}", stderr(&out));
            let sessions = json(&staged(&root, &["--json", "session", "list"]));
            let row = sessions.as_array().unwrap().iter().find(|s| s["client"] == client);
            assert_eq!(row.unwrap()["clientSessionId"], session, "{sessions}");
            if mode == "record" {
                let log = json(&staged(&root, &["--json", "log"]));
                assert_eq!(log["entries"][0]["frontEnd"], format!("hook:{client}"), "{log}");
                assert_eq!(read(&root, "src/a.txt"), "one\r\nTWO\nthree");
                let out = staged(&root, &["undo", "--yes"]);
                assert_eq!(code(&out), 0, "{}", stderr(&out));
                std::fs::remove_file(root.join("src/new.txt")).ok();
            } else {
                assert_eq!(read(&root, "src/a.txt"), A, "{client}");
                assert_eq!(pending_ids(&root).len(), 1, "{client}");
                // The model is told the client's own name for resolve.
                let tool = match client {
                    "gemini-cli" => "mcp_staged_resolve",
                    "opencode" => "staged_resolve",
                    _ => "staged-resolve",
                };
                let told = stderr(&out);
                assert!(told.contains(&format!(" To write it, call {tool} with action")), "{told}");
                let out = staged(&root, &["resolve", "discard", "--reason", "next client"]);
                assert_eq!(code(&out), 0, "{}", stderr(&out));
            }
            assert_eq!(read(&root, "src/a.txt"), A, "{client}");
        }
    }
}

#[test]
fn cline_shell_calls_wrap_each_command_of_run_commands_on_its_own() {
    let dir = workspace(&[("src/a.txt", A)]);
    let root = dir.path().canonicalize().unwrap();
    let event = json!({"hook_event_name": "PreToolUse", "session_id": "cline-session", "cwd": root,
                       "tool_name": "run_commands", "tool_use_id": "call_1",
                       "tool_input": {"commands": [COMMAND, {"command": "touch", "args": ["it's"]}]}});
    let out = client_hook(&root, "cline", "record", &event);
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let commands = reply["input"]["commands"].as_array().unwrap();
    assert_eq!(commands.len(), 2, "{reply}");
    assert!(commands[0].as_str().unwrap().contains("--call 'call_1-1' -- 'sed -i "), "{reply}");
    assert!(
        commands[1]
            .as_str()
            .unwrap()
            .ends_with("--call 'call_1-2' -- ''\\''touch'\\'' '\\''it'\\''\\'\\'''\\''s'\\'''"),
        "{reply}"
    );
    for command in commands {
        let out = sh(&root, command.as_str().unwrap());
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    assert_eq!(read(&root, "src/a.txt"), "one\r\nTWO\nthree");
    assert_eq!(read(&root, "it's"), "");
    let log = json(&staged(&root, &["--json", "log"]));
    assert_eq!(log["entries"].as_array().unwrap().len(), 2, "{log}");
}

#[test]
fn clines_rewritten_run_commands_keeps_every_other_field_it_was_sent() {
    let dir = workspace(&[("src/a.txt", A)]);
    let root = dir.path().canonicalize().unwrap();
    let call = |input: Value| {
        let event = json!({"hook_event_name": "PreToolUse", "session_id": "cline-session",
                           "cwd": root, "tool_name": "run_commands", "tool_use_id": "call_1",
                           "tool_input": input});
        let out = client_hook(&root, "cline", "record", &event);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
        reply["input"].clone()
    };
    // A list of commands with fields beside it: only the commands are wrapped.
    let input = call(json!({"commands": ["touch a", "touch b"], "timeout": 30,
                            "description": "two files", "extra": {"nested": [1, 2]}}));
    assert_eq!(input["timeout"], 30, "{input}");
    assert_eq!(input["description"], "two files", "{input}");
    assert_eq!(input["extra"], json!({"nested": [1, 2]}), "{input}");
    let commands = input["commands"].as_array().unwrap();
    assert_eq!(commands.len(), 2, "{input}");
    assert!(commands[1].as_str().unwrap().ends_with("--call 'call_1-2' -- 'touch b'"), "{input}");
    // One command given as `{command, args}`: the wrapped line (run by a shell) replaces it.
    let input = call(json!({"command": "touch", "args": ["c"], "description": "one file"}));
    assert_eq!(input["description"], "one file", "{input}");
    assert!(input.get("args").is_none(), "{input}");
    assert!(input.get("commands").is_none(), "{input}");
    let line = input["command"].as_str().unwrap();
    assert!(line.ends_with("--call 'call_1' -- ''\\''touch'\\'' '\\''c'\\'''"), "{line}");
    // Cline reads `command` before `cmd`, and so does staged: the one Cline runs is wrapped.
    let input = call(json!({"command": "touch d", "cmd": "touch e", "note": "n"}));
    assert!(input["command"].as_str().unwrap().ends_with(" -- 'touch d'"), "{input}");
    assert_eq!(input["cmd"], "touch e", "{input}");
    assert_eq!(input["note"], "n", "{input}");
    let out = sh(&root, input["command"].as_str().unwrap());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(root.join("d").exists() && !root.join("e").exists());
    let log = json(&staged(&root, &["--json", "log"]));
    assert_eq!(log["entries"][0]["label"], "Shell: touch d", "{log}");
}

#[test]
fn a_shell_call_whose_command_staged_cannot_read_is_refused_in_gate_mode() {
    let dir = workspace(&[("src/a.txt", A)]);
    let root = dir.path().canonicalize().unwrap();
    // A shape of Cline's input staged does not read, and a command that is not a string.
    let cline = json!({"hook_event_name": "PreToolUse", "session_id": "cline-session", "cwd": root,
                       "tool_name": "run_commands", "tool_use_id": "call_1",
                       "tool_input": {"commands": [{"cmd": "touch x"}]}});
    let mut claude = bash_event(&root, COMMAND);
    claude["tool_input"]["command"] = json!(["touch", "x"]);
    for (client, event) in [("cline", &cline), ("claude-code", &claude)] {
        let out = client_hook(&root, client, "gate", event);
        let reply = stdout(&out);
        assert!(
            reply.contains("staged cannot read this shell call's command (its input is not in a shape staged knows), so it cannot run it under its wrapper; in gate mode it is refused, and nothing was run."),
            "{client}: {reply}"
        );
        // Record mode lets it run, saying it is not recorded.
        let out = client_hook(&root, client, "record", event);
        assert!(
            out.stdout.is_empty() || !stdout(&out).contains("deny"),
            "{client}: {}",
            stdout(&out)
        );
        assert!(stderr(&out).contains("its writes are not recorded"), "{client}: {}", stderr(&out));
    }
    assert_eq!(read(&root, "src/a.txt"), A);
}

#[test]
fn qwen_code_shell_call_is_refused_naming_the_wrapper_and_only_that_exact_command_passes() {
    let dir = workspace(&[("src/a.txt", A)]);
    let root = dir.path().canonicalize().unwrap();
    let mut event = bash_event(&root, COMMAND);
    event["tool_name"] = json!("run_shell_command");
    let out = client_hook(&root, "qwen-code", "gate", &event);
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let output = &reply["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "deny", "{reply}");
    let told = output["permissionDecisionReason"].as_str().unwrap();
    let run_as = "Run the same command as exactly this command (the same text, the command quoted as one word after --): ";
    assert!(
        told.starts_with("staged runs Qwen Code's shell commands under its wrapper, which holds what it writes as a preview, and Qwen Code's hooks cannot change a command, so this call was refused and nothing was run. "),
        "{told}"
    );
    let wrapped = told.split_once(run_as).unwrap().1;
    assert!(
        wrapped.contains(" shell-run --client qwen-code --session 'session-1' --mode gate -- "),
        "{wrapped}"
    );
    assert_eq!(read(&root, "src/a.txt"), A);
    // The exact command passes: Qwen Code runs it, under the wrapper.
    event["tool_input"]["command"] = json!(wrapped);
    let out = client_hook(&root, "qwen-code", "gate", &event);
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
    // Anything else is refused: a command after the quoted one, the other mode, a word more.
    for tampered in [
        format!("{wrapped}; touch x"),
        format!("{wrapped} x"),
        wrapped.replace("--mode gate", "--mode record"),
        wrapped.replace("'session-1'", "'session-2'"),
    ] {
        event["tool_input"]["command"] = json!(tampered);
        let out = client_hook(&root, "qwen-code", "gate", &event);
        let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny", "{tampered}");
    }
    let out = sh(&root, wrapped);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&root, "src/a.txt"), A);
    assert_eq!(pending_ids(&root).len(), 1);
}

#[test]
fn opencode_shell_calls_are_wrapped_only_where_its_permission_for_bash_is_allow() {
    let dir = workspace(&[
        ("src/a.txt", A),
        ("opencode.json", r#"{"permission": {"bash": {"*": "ask", "rm *": "deny"}}}"#),
    ]);
    let root = dir.path().canonicalize().unwrap();
    let (_, _, event, _) = client_shell_calls(&root).swap_remove(1);
    let out = client_hook(&root, "opencode", "gate", &event);
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reply["decision"], "deny", "{reply}");
    let reason = reply["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("staged runs opencode's shell commands under its wrapper only where opencode's permission for bash is \"allow\" (it is {\"*\":\"ask\",\"rm *\":\"deny\"} in "),
        "{reason}"
    );
    let out = client_hook(&root, "opencode", "record", &event);
    assert!(out.stdout.is_empty(), "record mode lets it run unwrapped: {}", stdout(&out));
}

#[test]
fn opencode_shell_calls_read_the_agents_permission_for_bash_and_opencode_config() {
    let dir = workspace(&[
        ("src/a.txt", A),
        ("opencode.json", r#"{"agent": {"careful": {"permission": {"bash": {"rm *": "deny"}}}}}"#),
    ]);
    let root = dir.path().canonicalize().unwrap();
    let (_, _, mut event, _) = client_shell_calls(&root).swap_remove(1);
    let ask = |event: &Value, env: &[(&str, &Path)]| {
        let mut child = Command::new(common::staged_bin());
        child.args(["hook", "opencode", "--mode", "gate"]).current_dir(&root);
        // No person's own opencode config is read.
        child.env("XDG_CONFIG_HOME", root.join("xdg")).env_remove("OPENCODE_CONFIG");
        for (key, value) in env {
            child.env(key, value);
        }
        let mut child = child
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), event.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    // The agent the plugin saw: its own rules for bash count.
    event["agent"] = json!("careful");
    let reply = ask(&event, &[]);
    assert_eq!(reply["decision"], "deny", "{reply}");
    let reason = reply["reason"].as_str().unwrap();
    assert!(reason.contains("(it is {\"rm *\":\"deny\"} in "), "{reason}");
    assert!(reason.contains("(agent careful)"), "{reason}");
    // Another agent, with no rules of its own: wrapped.
    event["agent"] = json!("build");
    assert!(ask(&event, &[])["args"]["command"].as_str().unwrap().contains(" shell-run "));
    // No agent named (a plugin installed before): every agent the config names counts.
    event.as_object_mut().unwrap().remove("agent");
    assert_eq!(ask(&event, &[])["decision"], "deny");
    // The config OPENCODE_CONFIG names.
    std::fs::write(root.join("opencode.json"), "{}").unwrap();
    let custom = root.join("custom.json");
    std::fs::write(&custom, r#"{"permission": {"bash": "ask"}}"#).unwrap();
    assert!(ask(&event, &[])["args"].is_object());
    let reply = ask(&event, &[("OPENCODE_CONFIG", &custom)]);
    assert_eq!(reply["decision"], "deny", "{reply}");
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("(it is \"ask\" in {})", custom.display())),
        "{reply}"
    );
    assert_eq!(read(&root, "src/a.txt"), A);
}

#[test]
fn a_run_left_from_an_earlier_boot_is_kept_aside_never_recorded() {
    let dir = workspace(&[("src/a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    // The shell kills the wrapper (its parent), then writes: the wrapper never finishes.
    let wrapped = rewritten(&root, "record", "kill -9 $PPID; echo late > src/late.txt");
    run_killing_its_wrapper(&root, &wrapped, &[]);
    let runs = root.join(".staged/shell");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("run.json").exists())
        .expect("the killed wrapper's run");
    wait_until(30, || run.join("upper/src/late.txt").exists());
    // As if the system had restarted since: the overlay synced nothing of what it holds.
    let mut info: Value =
        serde_json::from_slice(&std::fs::read(run.join("run.json")).unwrap()).unwrap();
    assert!(info["boot"].is_string(), "the run names its boot: {info}");
    info["boot"] = "an earlier boot\n".into();
    std::fs::write(run.join("run.json"), serde_json::to_vec(&info).unwrap()).unwrap();
    let next = read_event(&root, None);
    let start = std::time::Instant::now();
    let out = loop {
        let out = hook(&root, "record", &next);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        if !out.stdout.is_empty() || start.elapsed().as_secs() > 30 {
            break out;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(!root.join("src/late.txt").exists(), "an earlier boot's run is never recorded");
    assert!(json(&staged(&root, &["--json", "log"]))["entries"].as_array().unwrap().is_empty());
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("the system restarted before they were recorded"), "{reply}");
    let name = run.file_name().unwrap().to_string_lossy().into_owned();
    assert!(runs.join(format!("kept-{name}/upper/src/late.txt")).exists(), "{context}");
}

/// A workspace where a recorded command changed `blob.bin` (binary), created `new.bin`,
/// deleted the executable `gone.bin` and appended to `a.txt`; its log entry's number.
fn binary_run() -> (tempfile::TempDir, std::path::PathBuf, String) {
    use std::os::unix::fs::PermissionsExt;
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("blob.bin"), b"\0old").unwrap();
    std::fs::write(root.join("gone.bin"), b"\0gone").unwrap();
    std::fs::set_permissions(root.join("gone.bin"), std::fs::Permissions::from_mode(0o750))
        .unwrap();
    let command =
        "printf '\\0new' > blob.bin; printf '\\0made' > new.bin; rm gone.bin; echo b >> a.txt";
    let out = shell_run(&root, "record", command);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0new");
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    let seq = entry["entry"].as_u64().unwrap().to_string();
    (dir, root, seq)
}

fn mode_of(root: &Path, path: &str) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(root.join(path)).unwrap().permissions().mode() & 0o777
}

/// The bytes before the command, each file as it was.
fn assert_before(root: &Path) {
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0old");
    assert!(!root.join("new.bin").exists(), "the file the command created is deleted");
    assert_eq!(std::fs::read(root.join("gone.bin")).unwrap(), b"\0gone");
    assert_eq!(mode_of(root, "gone.bin"), 0o750, "the deleted file comes back with its mode");
    assert_eq!(read(root, "a.txt"), "a\n");
}

/// The bytes the command left.
fn assert_after(root: &Path) {
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0new");
    assert_eq!(std::fs::read(root.join("new.bin")).unwrap(), b"\0made");
    assert!(!root.join("gone.bin").exists());
    assert_eq!(read(root, "a.txt"), "a\nb\n");
}

#[test]
fn a_session_revert_restores_the_binary_files_a_command_replaced_and_its_undo_puts_them_back() {
    let (_dir, root, _) = binary_run();
    let shown = staged(&root, &["session", "show"]);
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    let diff = stdout(&shown);
    for line in [
        "Binary files a/blob.bin and b/blob.bin differ [not a text diff: binary; reverted whole]\n",
        "Binary files /dev/null and b/new.bin differ [not a text diff: binary; reverted whole]\n",
        "Binary files a/gone.bin and /dev/null differ [not a text diff: a binary file, deleted; reverted whole]\n",
    ] {
        assert!(diff.contains(line), "{line}\n{diff}");
    }
    let shown = json(&staged(&root, &["--json", "session", "show"]));
    let blob = shown["files"].as_array().unwrap().iter().find(|f| f["path"] == "blob.bin").unwrap();
    assert_eq!(blob["change"], "changed", "{blob}");
    assert_eq!(blob["hunks"].as_array().unwrap().len(), 1, "one unit: {blob}");
    assert_eq!(blob["notText"]["why"], "binary", "{blob}");
    assert_eq!(shown["hunks"], 4, "{shown}");

    let out = staged(&root, &["--json", "session", "revert", "--reason", "not these"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_before(&root);
    let revert = json(&out);
    let seq = revert["entry"].as_u64().unwrap().to_string();
    // Nothing of the session is left to revert.
    let shown = json(&staged(&root, &["--json", "session", "show"]));
    assert_eq!(shown["files"], json!([]), "{shown}");

    // Undo of the revert restores the command's bytes.
    let out = staged(&root, &["undo", &seq, "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_after(&root);
    let shown = json(&staged(&root, &["--json", "session", "show"]));
    let mut paths: Vec<&str> =
        shown["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    paths.sort_unstable();
    assert!(paths.ends_with(&["blob.bin", "gone.bin", "new.bin"]), "back in the session: {shown}");
}

#[test]
fn a_binary_file_reverts_alone_by_name_or_as_its_one_hunk() {
    let (_dir, root, _) = binary_run();
    let out = staged(&root, &["session", "revert", "--only", "blob.bin:1", "--reason", "old one"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0old");
    assert_eq!(std::fs::read(root.join("new.bin")).unwrap(), b"\0made");
    assert_eq!(read(&root, "a.txt"), "a\nb\n");
    let out = staged(&root, &["session", "revert", "--only", "gone.bin", "--reason", "keep it"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read(root.join("gone.bin")).unwrap(), b"\0gone");
    assert_eq!(mode_of(&root, "gone.bin"), 0o750);
    assert_eq!(std::fs::read(root.join("new.bin")).unwrap(), b"\0made");
}

#[test]
fn a_binary_file_changed_since_the_command_is_refused_and_nothing_is_written() {
    let (_dir, root, seq) = binary_run();
    std::fs::write(root.join("blob.bin"), b"\0someone else").unwrap();
    let out = staged(&root, &["session", "revert", "--reason", "not these"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "Cannot revert S1's change: hunk 1 of blob.bin was changed since the session wrote it, by a change made outside staged. Nothing was written."
    );
    let out = staged(&root, &["undo", &seq, "--yes"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("blob.bin"), "{text}");
    assert!(text.contains("a change made outside staged"), "{text}");
    assert!(text.contains("Nothing was written."), "{text}");
    // All or nothing: the other files are as the command left them.
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0someone else");
    assert_eq!(std::fs::read(root.join("new.bin")).unwrap(), b"\0made");
    assert!(!root.join("gone.bin").exists());
    assert_eq!(read(&root, "a.txt"), "a\nb\n");
}

#[test]
fn undo_of_a_commands_entry_restores_its_binary_files_and_a_redo_writes_them_again() {
    let (_dir, root, seq) = binary_run();
    let out = staged(&root, &["undo", &seq, "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_before(&root);
    let undo = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    let undo_seq = undo["entry"].as_u64().unwrap().to_string();
    let out = staged(&root, &["undo", &undo_seq, "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_after(&root);
}

/// `staged undo ENTRY` at a terminal: what it printed until it asked, and its exit code once
/// it was answered `answer`.
fn undo_at_a_terminal(root: &Path, seq: &str, answer: &str) -> (String, u32) {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    use std::io::{Read, Write};
    let pair = native_pty_system()
        .openpty(PtySize { rows: 40, cols: 200, pixel_width: 0, pixel_height: 0 })
        .unwrap();
    let mut cmd = CommandBuilder::new(common::staged_bin());
    cmd.args(["undo", seq, "--reason", "at a terminal"]);
    cmd.cwd(root);
    cmd.env("NO_COLOR", "1");
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = seen.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let start = std::time::Instant::now();
    while !seen.lock().unwrap().contains("[y/N]") {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("undo did not ask ({status:?}): {}", seen.lock().unwrap());
        }
        assert!(start.elapsed().as_secs() < 60, "no prompt: {}", seen.lock().unwrap());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let asked = seen.lock().unwrap().clone();
    let mut keys = pair.master.take_writer().unwrap();
    keys.write_all(format!("{answer}\r").as_bytes()).unwrap();
    keys.flush().unwrap();
    let status = child.wait().unwrap();
    (asked, status.exit_code())
}

#[test]
fn undo_at_a_terminal_asks_before_restoring_binary_files_and_names_them() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("blob.bin"), b"\0old").unwrap();
    std::fs::write(root.join("gone.bin"), b"\0gone").unwrap();
    // Only files that are not text: the entry has no text diff at all.
    let out = shell_run(&root, "record", "printf '\\0new' > blob.bin; rm gone.bin");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    assert_eq!(entry["files"], json!([]), "{entry}");
    let seq = entry["entry"].as_u64().unwrap().to_string();
    let (asked, exit) = undo_at_a_terminal(&root, &seq, "n");
    assert!(
        asked.contains("Binary files a/blob.bin and b/blob.bin differ [not a text diff: binary; restored whole]"),
        "{asked}"
    );
    assert!(
        asked.contains("Binary files /dev/null and b/gone.bin differ [not a text diff: a binary file, deleted; restored whole]"),
        "{asked}"
    );
    assert!(asked.contains(&format!("Undo log entry {seq} (Shell: ")), "{asked}");
    assert_eq!(exit, 1, "{asked}");
    // Answered no: nothing was written.
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0new");
    assert!(!root.join("gone.bin").exists());
    let (_, exit) = undo_at_a_terminal(&root, &seq, "y");
    assert_eq!(exit, 0);
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0old");
    assert_eq!(std::fs::read(root.join("gone.bin")).unwrap(), b"\0gone");
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// `staged ARGS` in `dir`, failing the test rather than hanging past a minute.
fn staged_within_a_minute(dir: &Path, args: &[&str]) -> Output {
    let child = Command::new(common::staged_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::output_within_a_minute(child, &format!("staged {args:?}"))
}

#[test]
fn a_symlink_planted_for_kept_bytes_never_sends_them_out_of_the_workspace() {
    let outside = tempfile::tempdir().unwrap();
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("blob.bin"), b"\0old").unwrap();
    // The kept folder, a symlink to a folder outside the workspace.
    std::fs::create_dir_all(root.join(".staged/shell")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join(".staged/shell/kept")).unwrap();
    let out = shell_run(&root, "record", "printf '\\0new' > blob.bin");
    let told = stderr(&out);
    assert!(
        told.contains(&format!(
            "staged's folder of kept bytes {} cannot be used: it is a symlink, and staged never follows one out of its own folder",
            root.join(".staged/shell/kept").display()
        )),
        "{told}"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "written outside");
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0old", "nothing recorded");

    // A kept file swapped for a symlink to the same bytes elsewhere is not read.
    std::fs::remove_file(root.join(".staged/shell/kept")).unwrap();
    let out = shell_run(&root, "record", "printf '\\0new' > blob.bin");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let kept = root.join(".staged/shell/kept").join(sha256_of(b"\0old"));
    std::fs::rename(&kept, outside.path().join("copy")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("copy"), &kept).unwrap();
    revert_refuses_the_kept_copy(&root, &kept);
}

/// `staged session revert` in `root` refuses, naming `kept` (the kept copy of `blob.bin`'s bytes
/// before) as not a regular file staged made, and writes nothing.
fn revert_refuses_the_kept_copy(root: &Path, kept: &Path) {
    let out = staged_within_a_minute(root, &["session", "revert", "--reason", "old one"]);
    assert_ne!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        text.contains(&format!(
            "the kept copy of the bytes of `blob.bin` ({}) is not a regular file staged made",
            kept.display()
        )),
        "{text}"
    );
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0new", "nothing written");
}

/// The SHA-256 of `bytes` (hex), by `sha256sum`.
fn sha256_of(bytes: &[u8]) -> String {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), bytes).unwrap();
    sha256(file.path())
}

#[test]
fn a_fifo_planted_for_kept_bytes_is_replaced_when_keeping_and_refused_when_reading() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("blob.bin"), b"\0old").unwrap();
    let kept = root.join(".staged/shell/kept").join(sha256_of(b"\0old"));
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    // Where the bytes before will be kept, a FIFO: taken for them, they would be lost.
    mkfifo(&kept);
    let out = staged_within_a_minute(
        &root,
        &common::shell_run_args("record", "printf '\\0new' > blob.bin"),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0new");
    assert_eq!(std::fs::read(&kept).unwrap(), b"\0old", "the FIFO is replaced by the bytes");
    // Swapped for a FIFO once kept: a revert refuses at once, naming it, and writes nothing.
    std::fs::remove_file(&kept).unwrap();
    mkfifo(&kept);
    revert_refuses_the_kept_copy(&root, &kept);
    // Put back, the revert goes through.
    std::fs::remove_file(&kept).unwrap();
    std::fs::write(&kept, b"\0old").unwrap();
    let out = staged_within_a_minute(&root, &["session", "revert", "--reason", "old one"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0old");
}

/// Plants in `root` a commit of the journal interrupted after its commit point: `a.txt`'s
/// new text (`text`) in its temp file, the journal saying committed, nothing renamed yet.
fn plant_interrupted_commit(root: &Path, text: &str) {
    use std::os::unix::fs::MetadataExt;
    let temp = root.join(".a.txt.staged-1-2-3-0.tmp");
    std::fs::write(&temp, text).unwrap();
    let meta = std::fs::metadata(&temp).unwrap();
    let journal = json!({
        "version": 4,
        "state": "committed",
        "entries": [{
            "target": "a.txt",
            "temp": {"dev": meta.dev(), "ino": meta.ino(), "ctime": meta.ctime(), "ctimeNsec": meta.ctime_nsec()},
        }],
    });
    std::fs::create_dir_all(root.join(".staged/journal")).unwrap();
    std::fs::write(root.join(".staged/journal/1-2-3.json"), journal.to_string()).unwrap();
}

#[test]
fn an_interrupted_commit_is_recovered_before_a_shell_command_reads_the_tree() {
    for mode in ["record", "gate"] {
        let dir = workspace(&[("a.txt", "old\n")]);
        let root = dir.path().canonicalize().unwrap();
        // The shortcut's check sees no journal: no state is opened, and the command runs.
        let out = shell_run(&root, mode, "cat a.txt");
        assert_eq!((code(&out), stdout(&out).as_str()), (0, "old\n"), "{}", stderr(&out));
        plant_interrupted_commit(&root, "new\n");
        // The command reads the tree as the commit left it once finished, never half of it.
        let out = shell_run(&root, mode, "cat a.txt; cat a.txt > copy.txt");
        assert_eq!(code(&out), 0, "{mode}: {}", stderr(&out));
        assert_eq!(stdout(&out), "new\n", "{mode}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("recovered interrupted applies: 1 finished"),
            "{}",
            stderr(&out)
        );
        assert_eq!(read(&root, "a.txt"), "new\n");
        assert!(!root.join(".staged/journal/1-2-3.json").exists());
        assert!(!root.join(".a.txt.staged-1-2-3-0.tmp").exists());
        if mode == "record" {
            assert_eq!(read(&root, "copy.txt"), "new\n");
        } else {
            assert_eq!(pending_ids(&root).len(), 1, "the copy is staged");
        }
    }
}

#[test]
fn kept_bytes_go_with_the_log_entries_retention_drops_and_never_before() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("blob.bin"), b"\0one").unwrap();
    let kept = |bytes: &[u8]| root.join(".staged/shell/kept").join(sha256_of(bytes));
    let grace0 = |args: &[&str]| {
        let out = Command::new(common::staged_bin())
            .args(args)
            .current_dir(&root)
            .env("STAGED_KEPT_GRACE_SECONDS", "0")
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    };
    let run = |session: &str, command: &str| {
        grace0(&[
            "shell-run",
            "--client",
            "claude-code",
            "--session",
            session,
            "--mode",
            "record",
            "--",
            command,
        ]);
    };
    run("session-1", "printf '\\0two' > blob.bin");
    run("session-2", "printf '\\0three' > blob.bin");
    // Every entry still in the log: its bytes stay, even with no grace at all.
    run("session-2", "echo b >> a.txt");
    assert!(kept(b"\0one").exists() && kept(b"\0two").exists());
    // Retention drops session 1's entry; its bytes are left for the grace (an hour).
    let out = staged(&root, &["log", "--keep", "2"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let log = json(&staged(&root, &["--json", "log"]));
    assert_eq!(log["entries"].as_array().unwrap().len(), 2, "{log}");
    assert!(kept(b"\0one").exists(), "deleted within the grace");
    // Past it, they go; the bytes an entry left in the log names stay.
    grace0(&["log", "--keep", "2"]);
    assert!(!kept(b"\0one").exists(), "the bytes of a pruned entry stay");
    assert!(kept(b"\0two").exists(), "the bytes of an entry in the log went");
    // And session 2's entry still undoes to its exact bytes.
    let seq = log["entries"][1]["entry"].as_u64().unwrap().to_string();
    let out = staged(&root, &["undo", &seq, "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0two");
}

/// The caveat an entry recorded by comparing snapshots carries (`docs/contract/shell.md`).
const CAVEAT: &str = "changes made while the command ran; other programs' writes in that window cannot be told apart";

/// Runs `command` with `sh -c` in `dir` as Claude Code's Bash tool does, with the isolation
/// forced off (`STAGED_SHELL_ISOLATION=off`): the wrapper takes the snapshot fallback.
fn sh_unisolated(dir: &Path, command: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("STAGED_SHELL_ISOLATION", "off")
        .output()
        .unwrap()
}

/// `shell-run` with the isolation forced off.
fn shell_run_unisolated(dir: &Path, mode: &str, command: &str) -> Output {
    Command::new(common::staged_bin())
        .args(["shell-run", "--client", "claude-code", "--session", "session-1", "--mode", mode])
        .args(["--", command])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("STAGED_SHELL_ISOLATION", "off")
        .output()
        .unwrap()
}

/// A repository holding `files`, committed, its index written after them (so git's stat
/// data of each is trusted, not racily clean).
fn committed(files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "files"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    git(&root, &["update-index", "--really-refresh"]);
    (dir, root)
}

fn kept_files(root: &Path) -> Vec<String> {
    std::fs::read_dir(root.join(".staged/shell/kept"))
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn unisolated_record_mode_records_a_sed_and_a_heredoc_by_snapshots_with_the_caveat() {
    let (_dir, root) = committed(&[("src/a.txt", A), ("src/other.txt", "other\n")]);
    let wrapped = rewritten(&root, "record", COMMAND);
    let out = sh_unisolated(&root, &wrapped);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let told = stderr(&out);
    assert!(
        told.contains("cannot isolate shell commands here (isolation is turned off: STAGED_SHELL_ISOLATION=off); this command's writes are recorded by comparing the tree before and after it."),
        "{told}"
    );
    assert!(told.contains(CAVEAT), "{told}");
    assert_eq!(read(&root, "src/a.txt"), "one\r\nTWO\nthree");
    assert_eq!(read(&root, "src/new.txt"), "hello\n");
    let log = json(&staged(&root, &["--json", "log"]));
    assert_eq!(log["entries"].as_array().unwrap().len(), 1, "{log}");
    let entry = &log["entries"][0];
    assert_eq!(entry["source"], "shell", "{entry}");
    assert_eq!(entry["frontEnd"], "hook:claude-code");
    assert_eq!(entry["reason"], "Claude Code's shell command, recorded by staged's wrapper");
    assert_eq!(
        entry["label"],
        "Shell: sed -i 's/two/TWO/' src/a.txt && cat > src/new.txt <<'EOF'\\nhello\\nEOF"
    );
    let shell = &entry["extra"]["shell"];
    assert_eq!(shell["attribution"], "snapshot", "{entry}");
    assert_eq!(shell["caveat"], CAVEAT);
    assert_eq!(shell["command"], COMMAND);
    let files: Vec<&str> =
        entry["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(files, ["src/a.txt", "src/new.txt"]);
    // The tracked file's bytes before are git's blob: nothing of it was copied.
    assert!(kept_files(&root).iter().all(|f| !f.starts_with(&sha256_of(A.as_bytes())[..12])));
    let shown = staged(&root, &["session", "show"]);
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    let diff = stdout(&shown);
    assert!(diff.contains("-two\n+TWO\n"), "{diff}");
    assert!(diff.contains("diff --git a/src/new.txt b/src/new.txt"), "{diff}");
    assert!(!diff.contains("other.txt"), "{diff}");
    assert!(
        stderr(&shown).contains(&format!(
            "log entry 1 (Shell: sed -i 's/two/TWO/' src/a.txt && cat > src/new.txt <<'EOF'\\nhello\\nEOF) was recorded by comparing the tree before and after its command: {CAVEAT}."
        )),
        "{}",
        stderr(&shown)
    );
    let shown = json(&staged(&root, &["--json", "session", "show"]));
    assert_eq!(shown["caveats"][0]["entry"], 1, "{shown}");
    assert_eq!(shown["caveats"][0]["caveat"], CAVEAT);
    let out =
        staged(&root, &["session", "revert", "--only", "src/a.txt:1", "--reason", "keep two"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read(root.join("src/a.txt")).unwrap(), A.as_bytes());
    assert_eq!(read(&root, "src/new.txt"), "hello\n");
    // The run's folder goes, as an isolated one's does.
    let runs = || -> Vec<_> {
        std::fs::read_dir(root.join(".staged/shell"))
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir() && e.file_name() != "kept")
            .map(|e| e.path())
            .collect()
    };
    wait_until(10, || runs().is_empty());
    assert!(runs().is_empty(), "{:?}", runs());
}

#[test]
fn unisolated_an_untracked_file_truncated_by_a_redirect_reverts_to_its_exact_bytes() {
    let (_dir, root) = committed(&[("tracked.txt", "t\n")]);
    let before = "line one\nline two\r\nno newline";
    std::fs::write(root.join("notes.txt"), before).unwrap();
    std::fs::write(root.join("dirty.txt"), "dirty before\n").unwrap();
    // A tracked file changed since the index: its bytes are not git's, so they are copied.
    std::fs::write(root.join("tracked.txt"), "t changed\n").unwrap();
    let out = shell_run_unisolated(
        &root,
        "record",
        "echo replaced > notes.txt; rm dirty.txt; echo again > tracked.txt",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&root, "notes.txt"), "replaced\n");
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    assert_eq!(entry["extra"]["shell"]["attribution"], "snapshot", "{entry}");
    assert_eq!(entry["extra"]["shell"]["notInDiff"], json!([]), "{entry}");
    let out = staged(&root, &["session", "revert", "--reason", "put them back"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read(root.join("notes.txt")).unwrap(), before.as_bytes());
    assert_eq!(read(&root, "dirty.txt"), "dirty before\n");
    assert_eq!(read(&root, "tracked.txt"), "t changed\n");
}

#[test]
fn unisolated_a_binary_file_reverts_to_its_bytes_from_git_and_one_past_the_cap_is_named() {
    let (_dir, root) = committed(&[("a.txt", "a\n")]);
    std::fs::write(root.join("blob.bin"), b"\0old").unwrap();
    git(&root, &["add", "blob.bin"]);
    git(&root, &["commit", "-qm", "blob"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    git(&root, &["update-index", "--really-refresh"]);
    // 17 MiB of text, untracked: past the 16 MiB staged copies of one file.
    let big = "0123456789abcdef\n".repeat(17 << 16);
    std::fs::write(root.join("big.txt"), &big).unwrap();
    let out = shell_run_unisolated(
        &root,
        "record",
        "printf '\\0new' > blob.bin; echo tail >> big.txt; echo b >> a.txt",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    let named = entry["extra"]["shell"]["notInDiff"].as_array().unwrap().clone();
    let whys: Vec<(&str, &str)> =
        named.iter().map(|n| (n["path"].as_str().unwrap(), n["why"].as_str().unwrap())).collect();
    assert_eq!(
        whys,
        [
            ("big.txt", "before bytes not kept (over 16 MiB, the most staged copies of one file)"),
            ("blob.bin", "binary"),
        ],
        "{entry}"
    );
    assert!(named[0].get("before").is_none(), "{entry}");
    assert_eq!(named[1]["before"], sha256_of(b"\0old"));
    let files: Vec<&str> =
        entry["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(files, ["a.txt"]);
    let out = staged(&root, &["session", "revert", "--reason", "put them back"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(std::fs::read(root.join("blob.bin")).unwrap(), b"\0old");
    assert_eq!(read(&root, "a.txt"), "a\n");
    // Named, never restored: staged has no bytes of it before.
    assert_eq!(read(&root, "big.txt"), format!("{big}tail\n"));
}

#[test]
fn unisolated_gate_mode_still_refuses_to_run_the_command() {
    let (_dir, root) = committed(&[("src/a.txt", A)]);
    let wrapped = rewritten(&root, "gate", COMMAND);
    let out = sh_unisolated(&root, &wrapped);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim_end(),
        "staged cannot isolate shell commands here (isolation is turned off: STAGED_SHELL_ISOLATION=off), so in gate mode it did not run this one: nothing was run and nothing was written. A person can run it, or staged's hooks can be installed in record mode."
    );
    assert_eq!(read(&root, "src/a.txt"), A);
    assert!(!root.join("src/new.txt").exists());
    assert!(pending_ids(&root).is_empty());
    assert_eq!(json(&staged(&root, &["--json", "log"]))["entries"], json!([]));
}

#[test]
fn an_unknown_isolation_setting_runs_nothing_and_says_so() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let out = Command::new(common::staged_bin())
        .args(["shell-run", "--client", "claude-code", "--session", "s", "--mode", "record"])
        .args(["--", "echo b > a.txt"])
        .current_dir(&root)
        .env("STAGED_SHELL_ISOLATION", "of")
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim_end(),
        "staged: STAGED_SHELL_ISOLATION is \"of\", but staged knows only \"auto\" (isolate where the system allows) and \"off\" (never isolate); nothing was run."
    );
    assert_eq!(read(&root, "a.txt"), "a\n");
}

#[test]
fn unisolated_a_run_whose_wrapper_was_killed_is_recorded_at_the_sessions_next_hook_call() {
    let (_dir, root) = committed(&[("src/a.txt", "a\n")]);
    let wrapped = rewritten(
        &root,
        "record",
        "kill -9 $PPID; sleep 1; echo late > src/late.txt; echo b >> src/a.txt",
    );
    run_killing_its_wrapper(&root, &wrapped, &[("STAGED_SHELL_ISOLATION", "off")]);
    let next = read_event(&root, Some("read-after-the-kill"));
    let start = std::time::Instant::now();
    let out = loop {
        let out = hook(&root, "record", &next);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        if !out.stdout.is_empty() || start.elapsed().as_secs() > 30 {
            break out;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("what it wrote was recorded."), "{reply}");
    let entry = &json(&staged(&root, &["--json", "log"]))["entries"][0];
    assert_eq!(entry["extra"]["shell"]["attribution"], "snapshot", "{entry}");
    let files: Vec<&str> =
        entry["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(files, ["src/a.txt", "src/late.txt"]);
    let out = staged(&root, &["session", "revert", "--reason", "put back"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&root, "src/a.txt"), "a\n");
    assert!(!root.join("src/late.txt").exists());
}

/// A command that leaves a process running after its shell ends: `sh -c '(...) & echo now >
/// now.txt'`, whose background part waits for each of `steps`' signal files (made by the test,
/// outside the workspace, each waited for 30 s at most) and then runs that step's command. The
/// signals make the order certain on a busy machine, where a `sleep 0.3` may end before the
/// wrapper has harvested.
fn background_command(signals: &Path, steps: &[&str]) -> String {
    let mut script = String::from(
        "w() { for i in $(seq 1500); do [ -e \"$1\" ] && return; sleep 0.02; done; }; ",
    );
    for (i, step) in steps.iter().enumerate() {
        script.push_str(&format!("w '{}/{i}'; {step}; ", signals.display()));
    }
    format!("({script}) & echo now > now.txt")
}

/// Runs `wrapped` with `sh -c` in `dir` (with `env` set), its output discarded: its command
/// kills its wrapper (`kill -9 $PPID`), so the shell fails.
fn run_killing_its_wrapper(dir: &Path, wrapped: &str, env: &[(&str, &str)]) {
    let status = Command::new("sh")
        .arg("-c")
        .arg(wrapped)
        .current_dir(dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success());
}

/// The session's next hook event: a `Read`'s `PostToolUse`, of the tool call `call` (of the
/// Bash call's, for `None`).
fn read_event(root: &Path, call: Option<&str>) -> Value {
    let mut next = bash_event(root, "true");
    next["hook_event_name"] = json!("PostToolUse");
    next["tool_name"] = json!("Read");
    if let Some(call) = call {
        next["tool_use_id"] = json!(call);
    }
    next
}

/// Runs the wrapped command with `sh -c` in `dir`, its output in files (the process it leaves
/// running keeps its descriptors): its exit code and stderr.
fn run_detached(dir: &Path, wrapped: &str) -> (i32, String) {
    let err = tempfile::NamedTempFile::new().unwrap();
    let status = Command::new("sh")
        .arg("-c")
        .arg(wrapped)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(err.reopen().unwrap()))
        .status()
        .unwrap();
    (status.code().unwrap_or(-1), std::fs::read_to_string(err.path()).unwrap())
}

/// The session's next hook events (a `Read`'s `PostToolUse`), until `done` holds of the last
/// reply's context (30 s at most); that context.
fn next_events_until(root: &Path, mode: &str, done: impl Fn(&str) -> bool) -> String {
    let next = read_event(root, Some("toolu_next"));
    let start = std::time::Instant::now();
    loop {
        let out = hook(root, mode, &next);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let context = if out.stdout.is_empty() {
            String::new()
        } else {
            let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
            reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned()
        };
        if done(&context) {
            return context;
        }
        assert!(start.elapsed().as_secs() < 30, "never done; last context: {context}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Polls `done` every 20 ms until it holds, for `secs` seconds at most; whether it held.
fn wait_until(secs: u64, done: impl Fn() -> bool) -> bool {
    let start = std::time::Instant::now();
    while !done() {
        if start.elapsed().as_secs() >= secs {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

fn runs_left(root: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(root.join(".staged/shell"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| !p.ends_with("kept")).collect())
        .unwrap_or_default()
}

fn shell_entries(root: &Path) -> Vec<Value> {
    let log = json(&staged(root, &["--json", "log"]));
    log["entries"].as_array().unwrap().iter().filter(|e| e["source"] == "shell").cloned().collect()
}

/// A command run in `mode` whose background part writes `late.txt` once signalled (step 0)
/// and ends at step 1, its wrapper done; with the first entry's label and the background one.
struct Background {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    signals: tempfile::TempDir,
    told: String,
    label: String,
    background: String,
}

fn start_background(mode: &str) -> Background {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let signals = tempfile::tempdir().unwrap();
    let command = background_command(signals.path(), &["echo late > late.txt", "true"]);
    let wrapped = rewritten(&root, mode, &command);
    let (code, told) = run_detached(&root, &wrapped);
    assert_eq!(code, 0, "{told}");
    let label = first_label(&root);
    let background = label.replacen("Shell: ", "Shell (background): ", 1);
    Background { _dir: dir, root, signals, told, label, background }
}

fn signal(signals: &Path, step: usize) {
    std::fs::write(signals.join(step.to_string()), "").unwrap();
}

#[test]
fn a_background_processs_later_write_is_recorded_at_the_sessions_next_hook_event_as_its_own_entry()
{
    let Background { _dir, root, signals, told, label, background } = start_background("record");
    assert_eq!(
        told.trim_end(),
        format!(
            "staged: a process this command started is still running; what it writes from now on is recorded in this session at this session's next tool call or prompt, as `{background}`."
        )
    );
    // What the command wrote before its call returned: the first entry.
    assert_eq!(read(&root, "now.txt"), "now\n");
    assert!(!root.join("late.txt").exists());
    let entries = shell_entries(&root);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["label"], label.as_str());
    // While the process writes nothing, the session's next events take nothing.
    assert_eq!(next_events_until(&root, "record", |_| true), "");
    assert_eq!(shell_entries(&root).len(), 1);
    assert!(!runs_left(&root).is_empty(), "the run outlives its wrapper");
    // It writes: the session's next event records it as an entry of its own, and tells.
    signal(signals.path(), 0);
    let context = next_events_until(&root, "record", |c| !c.is_empty());
    assert_eq!(
        context,
        format!(
            "A process that the shell command `{label}` started, that is still running, wrote files after its call returned: staged recorded them as `{background}` (late.txt)."
        )
    );
    assert_eq!(read(&root, "late.txt"), "late\n");
    let entries = shell_entries(&root);
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[0]["label"], background.as_str());
    assert_eq!(entries[0]["frontEnd"], "hook:claude-code");
    let shown = stdout(&staged(&root, &["session", "show"]));
    assert!(shown.contains("diff --git a/late.txt b/late.txt"), "{shown}");
    // Revertable as any entry; what was harvested is never taken again.
    let out = staged(&root, &["session", "revert", "--only", "late.txt", "--reason", "not this"]);
    assert_eq!(code_of(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(!root.join("late.txt").exists());
    // The process ends: the last harvest takes nothing more, and the run folder goes.
    signal(signals.path(), 1);
    next_events_until(&root, "record", |_| runs_left(&root).is_empty());
    assert!(!root.join("late.txt").exists(), "a reverted write came back");
    assert_eq!(read(&root, "now.txt"), "now\n");
}

#[test]
fn a_background_processs_later_write_in_gate_mode_is_its_own_preview_and_neither_reaches_the_tree()
{
    let Background { _dir, root, signals, told, label, background } = start_background("gate");
    let first = pending_ids(&root);
    assert_eq!(first.len(), 1);
    assert!(
        told.starts_with(&format!("staged holds what this command wrote as a preview, and none of it was written to the workspace yet: {} ({label}; now.txt).", first[0])),
        "{told}"
    );
    assert!(
        told.trim_end().ends_with(&format!(
            "staged: a process this command started is still running; what it writes from now on is staged as a preview of its own at this session's next tool call or prompt, as `{background}`."
        )),
        "{told}"
    );
    assert!(!root.join("now.txt").exists());
    signal(signals.path(), 0);
    let context = next_events_until(&root, "gate", |c| !c.is_empty());
    let ids = pending_ids(&root);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let second = ids.iter().find(|id| **id != first[0]).unwrap();
    assert!(
        context.starts_with(&format!(
            "A process that the shell command `{label}` started, that is still running, wrote files after its call returned: staged holds what this command wrote as a preview, and none of it was written to the workspace yet: {second} ({background}; late.txt)."
        )),
        "{context}"
    );
    assert!(!root.join("now.txt").exists());
    assert!(!root.join("late.txt").exists());
    signal(signals.path(), 1);
    next_events_until(&root, "gate", |_| runs_left(&root).is_empty());
    assert_eq!(pending_ids(&root).len(), 2);
    for _ in 0..2 {
        let out = staged(&root, &["resolve", "apply", "--reason", "as the command did"]);
        assert_eq!(code_of(&out), 0, "{}{}", stdout(&out), stderr(&out));
    }
    assert_eq!(read(&root, "now.txt"), "now\n");
    assert_eq!(read(&root, "late.txt"), "late\n");
}

#[test]
fn a_background_write_over_a_file_a_person_changed_since_is_never_recorded_and_is_named() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let signals = tempfile::tempdir().unwrap();
    let command = background_command(
        signals.path(),
        &["echo late > late.txt", "echo later > late.txt", "true"],
    );
    let wrapped = rewritten(&root, "record", &command);
    assert_eq!(run_detached(&root, &wrapped).0, 0);
    let label = first_label(&root);
    signal(signals.path(), 0);
    next_events_until(&root, "record", |c| !c.is_empty());
    assert_eq!(read(&root, "late.txt"), "late\n");
    // A person's change, then the process writes the file again.
    std::fs::write(root.join("late.txt"), "mine\n").unwrap();
    signal(signals.path(), 1);
    let context = next_events_until(&root, "record", |c| !c.is_empty());
    assert_eq!(
        context,
        format!(
            "A process that the shell command `{label}` started, that is still running, wrote files after its call returned: staged did not record its writes to late.txt: each was changed in the workspace since staged recorded this command's earlier write of it, and staged never overwrites such a change."
        )
    );
    assert_eq!(read(&root, "late.txt"), "mine\n");
    assert_eq!(shell_entries(&root).len(), 2);
    signal(signals.path(), 2);
    next_events_until(&root, "record", |_| runs_left(&root).is_empty());
    assert_eq!(read(&root, "late.txt"), "mine\n");
    assert_eq!(shell_entries(&root).len(), 2);
}

/// The label of the session's first shell entry or preview: `Shell: ` and the command, cut.
fn first_label(root: &Path) -> String {
    let mut labels: Vec<String> =
        shell_entries(root).iter().map(|e| e["label"].as_str().unwrap().to_owned()).collect();
    let pending = json(&staged(root, &["--json", "pending"]));
    labels.extend(
        pending["pending"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["label"].as_str().unwrap().to_owned()),
    );
    let label = labels.into_iter().find(|l| l.starts_with("Shell: ")).unwrap();
    assert!(label.starts_with("Shell: (w() { for i in $(seq 1500)"), "{label}");
    label
}

fn code_of(out: &Output) -> i32 {
    code(out)
}

#[test]
fn a_codex_exec_command_that_runs_on_after_its_call_returned_is_harvested_from_the_turns_stop() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let signals = tempfile::tempdir().unwrap();
    let sig = |i: usize| signals.path().join(i.to_string()).display().to_string();
    // The command itself runs on (no `&`): Codex's `exec_command` returns after its yield time
    // while the wrapper still waits for it.
    let command = format!(
        "w() {{ for i in $(seq 1500); do [ -e \"$1\" ] && return; sleep 0.02; done; }}; echo now > now.txt; w '{}'; echo late > late.txt; w '{}'",
        sig(0),
        sig(1)
    );
    let mut event = bash_event(&root, &command);
    event["permission_mode"] = json!("bypassPermissions");
    let codex = |event: &Value| common::hook(&root, &["hook", "codex", "--mode", "record"], event);
    let out = codex(&event);
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let wrapped =
        reply["hookSpecificOutput"]["updatedInput"]["command"].as_str().unwrap().to_owned();
    let err = tempfile::NamedTempFile::new().unwrap();
    let mut wrapper = Command::new("sh")
        .arg("-c")
        .arg(&wrapped)
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(err.reopen().unwrap()))
        .spawn()
        .unwrap();
    let upper_has = |name: &str| {
        std::fs::read_dir(root.join(".staged/shell")).is_ok_and(|runs| {
            runs.flatten().any(|run| run.path().join("upper").join(name).exists())
        })
    };
    let start = std::time::Instant::now();
    while !upper_has("now.txt") {
        assert!(start.elapsed().as_secs() < 30);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Another event of the session leaves the live wrapper's run alone.
    let mut other = event.clone();
    other["hook_event_name"] = json!("PostToolUse");
    other["tool_use_id"] = json!("toolu_other");
    other["tool_input"] = json!({"command": "ls"});
    assert_eq!(code(&codex(&other)), 0);
    assert!(shell_entries(&root).is_empty());
    // The end of the turn (Codex sends no `PostToolUse` for an `exec_command` that yielded):
    // no call is in flight, so the command runs on after its call returned.
    let returned = json!({
        "hook_event_name": "Stop",
        "session_id": "session-1",
        "cwd": root,
        "permission_mode": "bypassPermissions",
        "stop_hook_active": false,
    });
    assert_eq!(code(&codex(&returned)), 0);
    assert_eq!(read(&root, "now.txt"), "now\n");
    let entries = shell_entries(&root);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let label = entries[0]["label"].as_str().unwrap().to_owned();
    assert!(label.starts_with("Shell: w() {"), "{label}");
    assert_eq!(entries[0]["frontEnd"], "hook:codex");
    // What it writes after that: an entry of its own at the session's next event.
    signal(signals.path(), 0);
    while !upper_has("late.txt") {
        assert!(start.elapsed().as_secs() < 30);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = codex(&other);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(&root, "late.txt"), "late\n");
    let entries = shell_entries(&root);
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[0]["label"], label.replacen("Shell: ", "Shell (background): ", 1));
    // The command ends: its wrapper takes the rest (nothing) and the run goes.
    signal(signals.path(), 1);
    assert!(wrapper.wait().unwrap().success());
    assert_eq!(shell_entries(&root).len(), 2);
    let start = std::time::Instant::now();
    while !runs_left(&root).is_empty() {
        assert!(start.elapsed().as_secs() < 10, "{:?}", runs_left(&root));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
