//! Shell runs' folders in a workspace someone else controls (`docs/contract/shell.md`): what
//! is planted in `.staged/shell/` (a finished run's `gone-` folder that is a symlink to a
//! folder outside, a symlink or a FIFO inside a run folder, a lock file that is a FIFO, a
//! forged run whose upper layer is a symlink) never makes a hook call delete, read, move or
//! write anything outside the workspace, and never hangs it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    os::unix::fs::symlink,
    path::Path,
    process::{Command, Output, Stdio},
};

use common::{code, stderr, workspace};
use serde_json::{Value, json};

/// A Claude Code hook call with `event`, failing the test rather than hanging past a minute.
fn hook_within_a_minute(dir: &Path, event: &Value) -> Output {
    let child = common::spawn_with_event(dir, &["hook", "claude-code", "--mode", "record"], event);
    common::output_within_a_minute(child, "the hook call")
}

/// A `Read` the model made in `session-1`, done: a hook call that sweeps the session's runs.
fn read_event(dir: &Path, session: &str) -> Value {
    json!({
        "hook_event_name": "PostToolUse",
        "session_id": session,
        "cwd": dir,
        "permission_mode": "acceptEdits",
        "tool_name": "Read",
        "tool_input": {"file_path": dir.join("a.txt")},
        "tool_use_id": "toolu_2",
    })
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A folder outside the workspace with `n` files and the folders `work` and `work/work`
/// (mode 0750, checked by [`assert_untouched`]).
fn outside_folder(n: usize) -> tempfile::TempDir {
    let outside = tempfile::tempdir().unwrap();
    for i in 0..n {
        std::fs::write(outside.path().join(format!("f{i}")), "keep\n").unwrap();
    }
    std::fs::create_dir_all(outside.path().join("work/work")).unwrap();
    for folder in ["work", "work/work"] {
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o750);
        std::fs::set_permissions(outside.path().join(folder), mode).unwrap();
    }
    outside
}

fn assert_untouched(outside: &Path, n: usize) {
    let count = std::fs::read_dir(outside).unwrap().count();
    assert_eq!(count, n + 1, "files outside the workspace were deleted");
    for folder in ["work", "work/work"] {
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(outside.join(folder)).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o750, "{folder} outside the workspace had its mode changed");
    }
}

fn runs(root: &Path) -> std::path::PathBuf {
    let runs = root.join(".staged/shell");
    std::fs::create_dir_all(&runs).unwrap();
    runs
}

#[test]
fn a_gone_folder_that_is_a_symlink_to_a_folder_outside_deletes_nothing_there() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let outside = outside_folder(200);
    symlink(outside.path(), runs(&root).join("gone-1-2-0")).unwrap();
    let out = hook_within_a_minute(&root, &read_event(&root, "session-1"));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_untouched(outside.path(), 200);
    assert!(!runs(&root).join("gone-1-2-0").exists(), "the planted symlink itself is deleted");
}

#[test]
fn symlinks_inside_a_gone_folder_delete_and_change_nothing_outside() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let outside = outside_folder(200);
    let gone = runs(&root).join("gone-1-2-0");
    std::fs::create_dir_all(gone.join("upper")).unwrap();
    // `work` names the folder outside (whose `work` the deleter would open up), and a folder
    // of the run names it too.
    symlink(outside.path(), gone.join("work")).unwrap();
    symlink(outside.path(), gone.join("upper/deep")).unwrap();
    for i in 0..100 {
        std::fs::write(gone.join(format!("upper/f{i}")), "x").unwrap();
    }
    let out = hook_within_a_minute(&root, &read_event(&root, "session-1"));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_untouched(outside.path(), 200);
    assert!(!gone.exists(), "the gone folder is deleted, symlinks and all");
}

#[test]
fn a_shell_gone_lock_that_is_a_fifo_never_hangs_a_hook_call() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(runs(&root).join("gone-1-2-0/upper")).unwrap();
    mkfifo(&root.join(".staged/shell-gone.lock"));
    let out = hook_within_a_minute(&root, &read_event(&root, "session-1"));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

/// A run folder of `session-1` made by someone else: `run.json` naming the session, its
/// `run.lock` free (its wrapper gone).
fn forged_run(root: &Path, name: &str) -> std::path::PathBuf {
    let run = runs(root).join(name);
    std::fs::create_dir_all(&run).unwrap();
    let info = json!({
        "client": "claude-code", "session": "session-1", "call": "toolu_1", "mode": "record",
        "command": "true", "cwd": root,
    });
    std::fs::write(run.join("run.json"), info.to_string()).unwrap();
    std::fs::write(run.join("run.lock"), "").unwrap();
    std::fs::write(run.join("boot"), std::fs::read("/proc/sys/kernel/random/boot_id").unwrap())
        .unwrap();
    run
}

#[test]
fn fifos_planted_in_a_run_folder_never_hang_a_hook_call() {
    for planted in ["run.lock", "run.json", "harvest.lock", "snapshot.json", "boot"] {
        let dir = workspace(&[("a.txt", "a\n")]);
        let root = dir.path().canonicalize().unwrap();
        let run = forged_run(&root, "1-2-0");
        std::fs::create_dir_all(run.join("upper")).unwrap();
        std::fs::create_dir_all(run.join("work")).unwrap();
        let _ = std::fs::remove_file(run.join(planted));
        mkfifo(&run.join(planted));
        let out = hook_within_a_minute(&root, &read_event(&root, "session-1"));
        assert_eq!(code(&out), 0, "{planted}: {}", stderr(&out));
    }
}

#[test]
fn a_run_folder_whose_lock_names_a_file_outside_never_makes_it() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let run = forged_run(&root, "1-2-0");
    std::fs::create_dir_all(run.join("upper")).unwrap();
    std::fs::create_dir_all(run.join("work")).unwrap();
    symlink(outside.path().join("made"), run.join("harvest.lock")).unwrap();
    let out = hook_within_a_minute(&root, &read_event(&root, "session-1"));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!outside.path().join("made").exists(), "a file was made outside the workspace");
}

#[test]
fn a_forged_run_whose_upper_layer_or_folder_is_a_symlink_outside_moves_nothing_in() {
    for what in ["upper", "folder"] {
        let dir = workspace(&[("a.txt", "a\n")]);
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret");
        std::fs::create_dir_all(secret.join("upper")).unwrap();
        std::fs::create_dir_all(secret.join("work")).unwrap();
        std::fs::write(secret.join("upper/secret.txt"), "secret\n").unwrap();
        std::fs::write(secret.join("secret.txt"), "secret\n").unwrap();
        if what == "upper" {
            let run = forged_run(&root, "1-2-0");
            std::fs::create_dir_all(run.join("work")).unwrap();
            symlink(&secret, run.join("upper")).unwrap();
        } else {
            let run = forged_run(&root, "forged");
            for name in ["run.json", "run.lock", "boot"] {
                std::fs::rename(run.join(name), secret.join(name)).unwrap();
            }
            std::fs::remove_dir(&run).unwrap();
            symlink(&secret, runs(&root).join("1-2-0")).unwrap();
        }
        let out = hook_within_a_minute(&root, &read_event(&root, "session-1"));
        assert_eq!(code(&out), 0, "{what}: {}", stderr(&out));
        assert!(!root.join("secret.txt").exists(), "{what}: a file outside was moved in");
        assert_eq!(std::fs::read_to_string(secret.join("secret.txt")).unwrap(), "secret\n");
        assert_eq!(std::fs::read_to_string(secret.join("upper/secret.txt")).unwrap(), "secret\n");
    }
}

/// `staged shell-run` of `command` in record mode with isolation off (the snapshot
/// fallback), failing the test rather than hanging past a minute.
fn snapshot_run_within_a_minute(dir: &Path, command: &str) -> Output {
    let child = Command::new(common::staged_bin())
        .args(["shell-run", "--client", "claude-code", "--session", "session-1"])
        .args(["--mode", "record", "--", command])
        .env("STAGED_SHELL_ISOLATION", "off")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::output_within_a_minute(child, "the shell run")
}

#[test]
fn a_fifo_for_gits_index_or_an_ignore_file_never_hangs_the_snapshot_fallback() {
    for (fifo, recorded) in [(".git/index", true), (".gitignore", false), ("sub/.gitignore", false)]
    {
        let dir = workspace(&[("a.txt", "a\n"), ("sub/b.txt", "b\n")]);
        let root = dir.path().canonicalize().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .current_dir(&root)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        };
        std::fs::remove_dir(root.join(".git")).unwrap();
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["commit", "-qm", "a"]);
        let _ = std::fs::remove_file(root.join(fifo));
        mkfifo(&root.join(fifo));
        let out = snapshot_run_within_a_minute(&root, "echo more >> a.txt");
        assert_eq!(code(&out), 0, "{fifo}: {}", stderr(&out));
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\nmore\n");
        let err = stderr(&out);
        if recorded {
            assert!(err.contains("recorded by comparing the tree before and after it"), "{err}");
        } else {
            assert!(
                err.contains(&format!(
                    "staged: the workspace's snapshot could not be taken: {} is not a regular file (a symlink, a FIFO or a device), and staged does not read it",
                    root.join(fifo).display()
                )),
                "{fifo}: {err}"
            );
            assert!(err.contains("this command runs unrecorded."), "{err}");
        }
    }
}

#[test]
fn a_forged_snapshot_naming_paths_outside_the_workspace_logs_nothing_and_is_kept_aside() {
    for path in ["../../escaped.txt", "/tmp/escaped.txt", ".git/config", "a/../b.txt", ".staged/x"]
    {
        let dir = workspace(&[("a.txt", "a\n")]);
        let root = dir.path().canonicalize().unwrap();
        let run = forged_run(&root, "1-2-0");
        let item = json!({
            "stat": {"size": 7, "mtime": [1, 0], "ctime": [1, 0], "ino": 1, "mode": 0o100644},
            "kind": {"link": "target"},
        });
        let snapshot = json!({"items": {path: item}, "odd": []});
        std::fs::write(run.join("snapshot.json"), snapshot.to_string()).unwrap();
        let out = hook_within_a_minute(&root, &read_event(&root, "session-1"));
        assert_eq!(code(&out), 0, "{path}: {}", stderr(&out));
        let log = common::staged(&root, &["--json", "log"]);
        assert!(!common::stdout(&log).contains("escaped"), "{path}: {}", common::stdout(&log));
        assert_eq!(common::json(&log)["entries"].as_array().map(Vec::len), Some(0), "{path}");
        let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
        let told = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
        assert!(told.contains("the command's snapshot could not be read:"), "{path}: {reply}");
        assert!(runs(&root).join("kept-1-2-0").is_dir(), "{path}: the run is kept aside");
    }
}

#[test]
fn a_runs_folder_that_is_a_symlink_outside_is_never_swept() {
    let dir = workspace(&[("a.txt", "a\n")]);
    let root = dir.path().canonicalize().unwrap();
    // A folder outside holding what looks like a run of the session, its upper layer holding
    // a file; `.staged/shell` a symlink naming it.
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let run = forged_run(elsewhere.path(), "1-2-0");
    std::fs::create_dir_all(run.join("upper")).unwrap();
    std::fs::create_dir_all(run.join("work")).unwrap();
    std::fs::write(run.join("upper/secret.txt"), "secret\n").unwrap();
    std::fs::rename(elsewhere.path().join(".staged/shell"), outside.path().join("shell")).unwrap();
    std::fs::create_dir_all(root.join(".staged")).unwrap();
    symlink(outside.path().join("shell"), root.join(".staged/shell")).unwrap();
    let out = hook_within_a_minute(&root, &read_event(&root, "session-1"));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!root.join("secret.txt").exists(), "a file outside was moved in");
    let secret = outside.path().join("shell/1-2-0/upper/secret.txt");
    assert_eq!(std::fs::read_to_string(secret).unwrap(), "secret\n");
}

/// A folder of the workspace that is a symlink to a folder outside, replaced by the command
/// with a real folder holding a file of the same name as one outside: the file outside is
/// never opened, its bytes are in no entry, preview or store, and it is not changed.
#[test]
fn a_symlinked_folder_a_command_replaces_never_reads_the_file_outside_into_the_log() {
    for mode in ["record", "gate"] {
        let dir = workspace(&[("a.txt", "a\n")]);
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "SECRET outside\n").unwrap();
        symlink(outside.path(), root.join("link")).unwrap();
        let mut opened = inotify::Inotify::init().unwrap();
        opened.watches().add(outside.path(), inotify::WatchMask::OPEN).unwrap();
        let command = "rm link && mkdir link && printf 'mine\\n' > link/secret.txt";
        let out = common::staged(&root, &common::shell_run_args(mode, command));
        assert_eq!(code(&out), 0, "{mode}: {}", stderr(&out));
        let mut buffer = [0; 4096];
        let names: Vec<_> = match opened.read_events(&mut buffer) {
            Ok(events) => events.filter_map(|e| e.name.map(ToOwned::to_owned)).collect(),
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => Vec::new(),
            Err(err) => panic!("{err}"),
        };
        assert!(names.is_empty(), "{mode}: the file outside was opened: {names:?}");
        let everything = |args: &[&str]| {
            let out = common::staged(&root, args);
            format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out))
        };
        for args in [&["--json", "log"][..], &["session", "show"], &["--json", "pending"]] {
            let text = everything(args);
            assert!(!text.contains("SECRET"), "{mode}: {args:?} shows the file outside: {text}");
        }
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
            "SECRET outside\n"
        );
        let db = std::fs::read(root.join(".staged/staged.db")).unwrap_or_default();
        let wal = std::fs::read(root.join(".staged/staged.db-wal")).unwrap_or_default();
        for bytes in [db, wal] {
            assert!(
                !bytes.windows(6).any(|w| w == b"SECRET"),
                "{mode}: the store holds the file outside"
            );
        }
    }
}

#[test]
fn a_session_or_call_id_that_starts_with_a_dash_still_runs_under_the_wrapper() {
    let ws = workspace(&[("a.txt", "one\n")]);
    let dir = ws.path().canonicalize().unwrap();
    for (session, call) in [("--mode", "-x"), ("-s", "--call")] {
        let event = json!({"hook_event_name": "PreToolUse", "session_id": session, "cwd": dir,
            "permission_mode": "acceptEdits", "tool_name": "Bash",
            "tool_input": {"command": format!("echo {session} >> a.txt")}, "tool_use_id": call});
        let out = common::hook(&dir, &["hook", "claude-code", "--mode", "record"], &event);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
        let wrapped = reply["hookSpecificOutput"]["updatedInput"]["command"].as_str().unwrap();
        // Run as Claude Code's Bash tool runs it: the wrapper must take the ids as values.
        let out = Command::new("sh").arg("-c").arg(wrapped).current_dir(&dir).output().unwrap();
        assert_eq!(code(&out), 0, "{session} {call}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one\n--mode\n-s\n");
    let log = common::json(&common::staged(&dir, &["--json", "log"]));
    assert_eq!(log["entries"].as_array().unwrap().len(), 2, "both recorded: {log}");
}
