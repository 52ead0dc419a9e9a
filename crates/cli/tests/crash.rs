//! kill -9 during `staged resolve apply` (or `staged undo`) of a many-file preview: the next
//! command recovers, every file is wholly old or wholly new, all files agree, and the stack
//! and the resolve log tell the truth.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    path::Path,
    process::{Command, Stdio},
};

use common::{code, pending_ids, staged, stderr, workspace};
use staged_test_support::crash::{KillAt, kill_at as kill_child_at};

const N_FILES: usize = 1500;

/// A workspace of N files, `src/f0000.ts` on, file `i` holding `text(i)`.
fn workspace_of_n(text: impl Fn(usize) -> String) -> tempfile::TempDir {
    let files: Vec<(String, String)> =
        (0..N_FILES).map(|i| (format!("src/f{i:04}.ts"), text(i))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    workspace(&refs)
}

/// Runs `staged args` in `ws`, which must succeed.
fn staged_ok(ws: &tempfile::TempDir, args: &[&str]) {
    let out = staged(ws.path(), args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

/// Starts `staged args` in `ws` and kills it at `kill_at`; `ws` when the kill landed there
/// (see [`kill_child_at`]).
fn kill_staged_at(
    ws: tempfile::TempDir,
    args: &[&str],
    kill_at: KillAt,
    what: &str,
) -> Option<tempfile::TempDir> {
    let mut child = Command::new(common::staged_bin())
        .args(args)
        .current_dir(ws.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    kill_child_at(&mut child, ws.path(), kill_at, what).then_some(ws)
}

/// The `ast-edit` that stages the rewrite of every `legacyWrap(i, 0)` of the N files.
const AST_EDIT: &[&str] =
    &["ast-edit", "--max-files", "5000", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "src"];

/// The workspace of the first of five tries of `attempt` whose kill landed where it aimed.
fn caught(attempt: impl Fn() -> Option<tempfile::TempDir>, what: &str) -> tempfile::TempDir {
    (0..5).find_map(|_| attempt()).unwrap_or_else(|| panic!("never caught {what}"))
}

/// Stages a rewrite of N files, kills the apply at `kill_at`, and returns the workspace. `None`
/// when the apply finished before the kill point was seen, or had moved past it when the kill
/// landed (the journal, final once its writer is dead, says which).
fn kill_during_apply(kill_at: KillAt) -> Option<tempfile::TempDir> {
    let ws = workspace_of_n(|i| format!("legacyWrap({i}, 0);\n"));
    staged_ok(&ws, AST_EDIT);
    kill_staged_at(ws, &["resolve", "apply", "--reason", "crash test"], kill_at, "apply")
}

/// The next command, whatever it is, recovers first: the one journal is finished (when
/// `finished`) or rolled back; then file `i` holds `want(i)`, with no temp file left beside.
fn recovered_to(ws: &Path, finished: bool, want: impl Fn(usize) -> String) {
    let out = staged(ws, &["pending"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let expected_report =
        if finished { "1 finished, 0 rolled back" } else { "0 finished, 1 rolled back" };
    assert!(stderr(&out).contains(expected_report), "{}", stderr(&out));
    for i in 0..N_FILES {
        let text = std::fs::read_to_string(ws.join(format!("src/f{i:04}.ts"))).unwrap();
        assert_eq!(text, want(i), "file {i}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(ws.join("src"))
        .unwrap()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".ts"))
        .map(|e| e.file_name())
        .collect();
    assert!(leftovers.is_empty(), "temp files left behind: {leftovers:?}");
}

/// The next command recovers; every file ends as `expect_new` says, with no leftovers, and
/// the stack agrees with the files.
fn check_recovered(ws: &Path, expect_new: bool) {
    recovered_to(ws, expect_new, |i| {
        if expect_new { format!("modernWrap(0, {i});\n") } else { format!("legacyWrap({i}, 0);\n") }
    });
    let pending = pending_ids(ws);
    if expect_new {
        assert!(pending.is_empty(), "a finished apply must not stay pending: {pending:?}");
    } else {
        // Rolled back: the preview is still pending and applies cleanly now.
        assert_eq!(pending.len(), 1);
        let out = staged(ws, &["resolve", "apply", "--reason", "again"]);
        assert_eq!(code(&out), 0, "{}", common::stdout(&out));
        let text = std::fs::read_to_string(ws.join("src/f0007.ts")).unwrap();
        assert_eq!(text, "modernWrap(0, 7);\n");
    }
}

#[test]
fn kill_9_while_writing_temps_is_rolled_back_by_the_next_command() {
    let ws = caught(|| kill_during_apply(KillAt::Preparing), "the apply before its commit point");
    check_recovered(ws.path(), false);
}

#[test]
fn kill_9_after_the_commit_point_is_finished_by_the_next_command() {
    let ws = caught(|| kill_during_apply(KillAt::Committed), "the apply after its commit point");
    check_recovered(ws.path(), true);
}

/// A many-file apply while other `staged` processes start, list and recover in the same
/// workspace: none of them touches the live apply, which writes every file and exits 0. The
/// stress script repeats this 200 times with 12 readers (`scripts/stress.py --only readers`).
#[test]
fn an_apply_survives_other_processes_starting_and_recovering() {
    use std::sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    };
    for round in 0..3 {
        let files: Vec<(String, String)> = (0..100)
            .map(|i| (format!("src/f{i:03}.ts"), format!("legacyWrap({i}, 0);\n")))
            .collect();
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let ws = workspace(&refs);
        let out = staged(
            ws.path(),
            &["ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "src"],
        );
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (stop, dir) = (Arc::clone(&stop), ws.path().to_path_buf());
                std::thread::spawn(move || {
                    let mut complaints = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let out = staged(&dir, &["pending"]);
                        if code(&out) != 0 || stderr(&out).contains("recovered") {
                            complaints.push(stderr(&out));
                        }
                    }
                    complaints
                })
            })
            .collect();
        let out = staged(ws.path(), &["resolve", "apply", "--reason", "while others start"]);
        stop.store(true, Ordering::Relaxed);
        for reader in readers {
            let complaints = reader.join().unwrap();
            assert!(complaints.is_empty(), "round {round}: {complaints:?}");
        }
        assert_eq!(code(&out), 0, "round {round}: {}", common::stdout(&out));
        for i in 0..100 {
            let text = std::fs::read_to_string(ws.path().join(format!("src/f{i:03}.ts"))).unwrap();
            assert_eq!(text, format!("modernWrap(0, {i});\n"), "round {round}: file {i}");
        }
        assert!(pending_ids(ws.path()).is_empty());
    }
}

/// Applies a rewrite of N files, then kills `staged undo` at `kill_at`. `None` when the undo
/// finished before the kill point was seen, or had moved past it when the kill landed.
fn kill_during_undo(kill_at: KillAt) -> Option<tempfile::TempDir> {
    let ws = workspace_of_n(|i| format!("legacyWrap({i}, 0);\n"));
    staged_ok(&ws, AST_EDIT);
    staged_ok(&ws, &["resolve", "apply", "--reason", "before the undo"]);
    kill_staged_at(ws, &["undo", "--reason", "crash test"], kill_at, "undo")
}

/// The outcomes in the log, newest first.
fn outcomes(ws: &Path) -> Vec<String> {
    let out = staged(ws, &["--json", "log"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    common::json(&out)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["outcome"].as_str().unwrap().to_owned())
        .collect()
}

/// After a killed undo, the next command recovers: every file is wholly the applied or wholly
/// the original text, and the log says `undone` exactly when the files are the original.
fn check_undo_recovered(ws: &Path, expect_undone: bool) {
    recovered_to(ws, expect_undone, |i| {
        if expect_undone {
            format!("legacyWrap({i}, 0);\n")
        } else {
            format!("modernWrap(0, {i});\n")
        }
    });
    if expect_undone {
        assert_eq!(outcomes(ws), ["undone", "applied"]);
        // Finished by recovery, so the entry cannot be undone again.
        assert_eq!(code(&staged(ws, &["undo", "1"])), 1);
    } else {
        assert_eq!(outcomes(ws), ["applied"]);
        let out = staged(ws, &["undo", "--reason", "again"]);
        assert_eq!(code(&out), 0, "{}", common::stdout(&out));
        let text = std::fs::read_to_string(ws.join("src/f0007.ts")).unwrap();
        assert_eq!(text, "legacyWrap(7, 0);\n");
        assert_eq!(outcomes(ws), ["undone", "applied"]);
    }
}

#[test]
fn kill_9_during_an_undo_before_its_commit_point_is_rolled_back() {
    let ws = caught(|| kill_during_undo(KillAt::Preparing), "the undo before its commit point");
    check_undo_recovered(ws.path(), false);
}

#[test]
fn kill_9_during_an_undo_after_its_commit_point_is_finished_and_logged() {
    let ws = caught(|| kill_during_undo(KillAt::Committed), "the undo after its commit point");
    check_undo_recovered(ws.path(), true);
}

/// A record-mode session S1 of Claude Code session `claude-k` that rewrote N files with one
/// shell command; then `staged session revert S1` killed at `kill_at`. `None` as in
/// [`kill_during_apply`].
fn kill_during_session_revert(kill_at: KillAt) -> Option<tempfile::TempDir> {
    let ws = workspace_of_n(|i| format!("old {i}\n"));
    let run = "for f in src/*.ts; do echo new >> \"$f\"; done";
    staged_ok(
        &ws,
        &[
            "shell-run",
            "--client",
            "claude-code",
            "--session",
            "claude-k",
            "--mode",
            "record",
            "--",
            run,
        ],
    );
    let revert = ["session", "revert", "S1", "--reason", "not this"];
    kill_staged_at(ws, &revert, kill_at, "session revert")
}

/// The next command recovers; the files are all reverted or all the session's, and the
/// session's model is told of the revert (once) exactly when it happened.
fn check_revert_recovered(ws: &Path, expect_reverted: bool) {
    recovered_to(ws, expect_reverted, |i| {
        if expect_reverted { format!("old {i}\n") } else { format!("old {i}\nnew\n") }
    });
    let log = common::json(&staged(ws, &["--json", "log"]));
    let reverts: Vec<_> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["source"] == "session_revert")
        .collect();
    assert_eq!(reverts.len(), usize::from(expect_reverted), "{log}");
    let prompt = serde_json::json!({"session_id": "claude-k", "cwd": ws, "hook_event_name": "UserPromptSubmit",
        "prompt": "go on", "permission_mode": "acceptEdits"});
    let told = |out: &std::process::Output| {
        assert_eq!(code(out), 0, "{}", stderr(out));
        let text = common::stdout(out);
        // The first ten files are named, the rest counted.
        text.contains("A person reverted your change to src/f0000.ts (line 2), src/f0001.ts")
            && text.contains(&format!(
                "src/f0009.ts (line 2) and {} more files: not this.",
                N_FILES - 10
            ))
    };
    let record = ["hook", "claude-code", "--mode", "record"];
    assert_eq!(told(&common::hook(ws, &record, &prompt)), expect_reverted);
    assert!(!told(&common::hook(ws, &record, &prompt)), "a notice is told once");
}

#[test]
fn kill_9_of_a_session_revert_before_its_commit_point_reverts_nothing_and_tells_nothing() {
    let ws = caught(
        || kill_during_session_revert(KillAt::Preparing),
        "the revert before its commit point",
    );
    check_revert_recovered(ws.path(), false);
}

#[test]
fn kill_9_of_a_session_revert_after_its_commit_point_reverts_all_and_tells_the_model_once() {
    let ws = caught(
        || kill_during_session_revert(KillAt::Committed),
        "the revert after its commit point",
    );
    check_revert_recovered(ws.path(), true);
}
