//! Hostile input to the session review (issue 34), through the real binary: a state folder's
//! rows edited by someone else (times no calendar can print), hunk numbers a session's file
//! does not have, and files a session made or removed with no lines. Each must give a clear
//! answer or a clear error, never a crash, and never a success that did nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{code, json, recorded_write, staged, stderr, stdout, workspace};
use serde_json::json;

/// A workspace of a.txt and b.txt, lines 1 to 10 (`before`), where session S1 turned line 3 of
/// both into THREE.
fn three_in_two_files() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let before: String = (1..=10).map(|n| format!("{n}\n")).collect();
    let ws = workspace(&[("a.txt", &before), ("b.txt", &before)]);
    let dir = ws.path().canonicalize().unwrap();
    let mine = before.replace("3\n", "THREE\n");
    recorded_write(&dir, "claude-1", "t1", "a.txt", &mine);
    recorded_write(&dir, "claude-1", "t2", "b.txt", &mine);
    (ws, dir, before)
}

/// Asserts that `out` printed `text` on stdout.
#[track_caller]
fn says_out(out: &std::process::Output, text: &str) {
    assert!(stdout(out).contains(text), "not in stdout: {text}\n{}{}", stdout(out), stderr(out));
}

/// Each file of `staged --json session show`'s answer `shown`: its path and its change.
fn path_and_change(shown: &serde_json::Value) -> Vec<(&str, &str)> {
    shown["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["change"].as_str().unwrap()))
        .collect()
}

/// A record-mode session S1 that changed two lines of a.txt far apart: two hunks.
fn two_hunk_session() -> (tempfile::TempDir, std::path::PathBuf) {
    let before: String = (1..=20).map(|n| format!("line {n}\n")).collect();
    let ws = workspace(&[("a.txt", &before)]);
    let dir = ws.path().canonicalize().unwrap();
    let after = before.replace("line 2\n", "two\n").replace("line 15\n", "fifteen\n");
    recorded_write(&dir, "claude-1", "t1", "a.txt", &after);
    (ws, dir)
}

#[test]
fn a_time_past_the_year_9999_in_the_state_folder_is_printed_not_a_crash() {
    let (_ws, dir) = two_hunk_session();
    // Someone else's rows: a log entry and a session dated past what RFC 3339 can write.
    let conn = rusqlite::Connection::open(dir.join(".staged/staged.db")).unwrap();
    conn.execute("UPDATE log SET at_ms = 9223372036854775807", []).unwrap();
    conn.execute(
        "UPDATE sessions SET started_ms = 253402300800000, active_ms = 253402300800000",
        [],
    )
    .unwrap();
    drop(conn);
    for args in [&["log"][..], &["--json", "log"], &["log", "show", "1"], &["session", "list"]] {
        let out = staged(&dir, args);
        assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
        assert!(
            stdout(&out).contains("s after 1970 (not a date staged can print)"),
            "{args:?}: {}",
            stdout(&out)
        );
    }
    // `--json` gives the milliseconds as stored.
    let list = json(&staged(&dir, &["--json", "session", "list"]));
    assert_eq!(list[0]["startedMs"], 253_402_300_800_000_i64, "{list}");
}

#[test]
fn keeping_or_reverting_a_hunk_the_file_does_not_have_is_an_input_error() {
    let (_ws, dir) = two_hunk_session();
    for (args, number) in [
        (&["session", "keep", "S1", "--only", "a.txt:3"][..], 3),
        (&["session", "keep", "S1", "--only", "a.txt:0"], 0),
        (&["session", "keep", "S1", "--only", "a.txt:1-5"], 3),
        (&["session", "revert", "S1", "--only", "a.txt:9", "--reason", "no"], 9),
    ] {
        let out = staged(&dir, args);
        assert_eq!(code(&out), 2, "{args:?}: {}{}", stdout(&out), stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "--only names hunk {number} of a.txt, which has 2 hunks (numbered from 1, as `staged session show` prints them); nothing was written"
            )),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // Nothing was marked reviewed.
    let list = json(&staged(&dir, &["--json", "session", "list"]));
    assert_eq!(list[0]["reviewed"], 0, "{list}");
    assert_eq!(list[0]["hunks"], 2, "{list}");
}

#[test]
fn a_bad_pick_of_a_session_speaks_of_the_session_not_of_a_preview() {
    let (_ws, dir) = two_hunk_session();
    for args in [
        &["session", "keep", "S1", "--except", "a.txt:9"][..],
        &["session", "keep", "S1", "--only", "a.txt:1", "--only", "a.txt:1"],
        &["session", "revert", "S1", "--only", "nothing-here.txt", "--reason", "no"],
        &["session", "revert", "S1", "--only", "a.txt", "--only", "a.txt:1", "--reason", "no"],
    ] {
        let out = staged(&dir, args);
        let err = stderr(&out);
        assert_eq!(code(&out), 2, "{args:?}: {}{err}", stdout(&out));
        assert!(err.to_lowercase().contains("nothing was written"), "{args:?}: {err}");
        assert!(!err.contains("pending") && !err.contains("applied"), "{args:?}: {err}");
    }
}

#[test]
fn an_absolute_path_inside_the_workspace_picks_as_its_relative_path_does() {
    let (_ws, dir) = two_hunk_session();
    let absolute = format!("{}:2", dir.join("a.txt").display());
    let out = staged(&dir, &["session", "revert", "S1", "--only", &absolute, "--reason", "no"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = common::read(&dir, "a.txt");
    assert!(text.contains("two\n") && text.contains("line 15\n"), "{text}");
    // One outside the workspace matches nothing, and says so.
    let outside = format!("{}:1", dir.parent().unwrap().join("a.txt").display());
    let out = staged(&dir, &["session", "keep", "S1", "--only", &outside]);
    assert_eq!(code(&out), 2, "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("matches none of the"), "{}", stderr(&out));
}

#[test]
fn an_empty_file_the_session_created_is_part_of_its_change_and_reverted_with_it() {
    let ws = workspace(&[("a.txt", "one\n")]);
    let dir = ws.path().canonicalize().unwrap();
    std::fs::create_dir(dir.join("pkg")).unwrap();
    recorded_write(&dir, "claude-1", "t1", "a.txt", "ONE\n");
    // An agent's `__init__.py`: a file with no lines is still a file the session made.
    recorded_write(&dir, "claude-1", "t2", "pkg/__init__.py", "");
    let shown = json(&staged(&dir, &["--json", "session", "show", "S1"]));
    let files = path_and_change(&shown);
    assert_eq!(files, [("a.txt", "changed"), ("pkg/__init__.py", "created")], "{shown}");
    let out = staged(&dir, &["session", "show", "S1"]);
    assert!(stdout(&out).contains("new file mode 100644"), "{}", stdout(&out));

    let out = staged(&dir, &["session", "revert", "S1", "--reason", "start over"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).starts_with(
            "Reverted 1 hunk and 1 file of S1 (a.txt, pkg/__init__.py (new file)): start over."
        ),
        "{}",
        stdout(&out)
    );
    assert!(!dir.join("pkg/__init__.py").exists(), "the session's empty file is gone");
    assert_eq!(common::read(&dir, "a.txt"), "one\n");
    // Undo of the revert makes it again.
    let out = staged(&dir, &["undo", "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(common::read(&dir, "pkg/__init__.py"), "");
}

#[test]
fn an_empty_file_the_session_deleted_comes_back_with_its_revert() {
    let ws = workspace(&[("empty.keep", ""), ("full.txt", "x\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let out = staged(&dir, &common::shell_run_args("record", "rm empty.keep full.txt"));
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let shown = json(&staged(&dir, &["--json", "session", "show"]));
    let files = path_and_change(&shown);
    assert_eq!(files, [("empty.keep", "deleted"), ("full.txt", "deleted")], "{shown}");
    // The empty file alone: a file, not "0 hunks".
    let out = staged(&dir, &["session", "revert", "--only", "empty.keep", "--reason", "keep it"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).starts_with("Reverted 1 file of S1 (empty.keep (deleted file)): keep it."),
        "{}",
        stdout(&out)
    );
    assert_eq!(common::read(&dir, "empty.keep"), "");
    let out = staged(&dir, &["session", "revert", "--only", "full.txt", "--reason", "keep them"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(common::read(&dir, "full.txt"), "x\n");
}

/// A workspace whose a.txt is `before`, and a session that changed both of its `same` lines.
fn twin_hunks_session(before: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let ws = workspace(&[("a.txt", before)]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "claude-1", "t1", "a.txt", &before.replace("same\n", "changed\n"));
    (ws, dir)
}

#[test]
fn a_review_state_never_passes_to_a_twin_hunk_when_the_kept_one_is_reverted() {
    // Two hunks of the very same texts in one file: told apart by which of the two each is.
    let before: String = (1..=20)
        .map(|n| if n == 1 || n == 12 { "same\n".to_owned() } else { format!("line {n}\n") })
        .collect();
    let (_ws, dir) = twin_hunks_session(&before);
    let out = staged(&dir, &["session", "keep", "S1", "--only", "a.txt:1"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = staged(&dir, &["session", "revert", "S1", "--only", "a.txt:1", "--reason", "no"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // The hunk left is the second one, which nobody reviewed.
    let shown = json(&staged(&dir, &["--json", "session", "show", "S1"]));
    assert_eq!(shown["hunks"], 1, "{shown}");
    assert_eq!(shown["reviewed"], 0, "the twin of the kept hunk is not kept: {shown}");
    assert_eq!(shown["files"][0]["hunks"][0]["review"], serde_json::Value::Null, "{shown}");

    // The other way round: the second kept, the first reverted and its revert undone.
    let (_ws, dir) = twin_hunks_session(&before);
    let out = staged(&dir, &["session", "keep", "S1", "--only", "a.txt:2"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = staged(&dir, &["session", "revert", "S1", "--only", "a.txt:1", "--reason", "no"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = staged(&dir, &["undo", "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let shown = json(&staged(&dir, &["--json", "session", "show", "S1"]));
    let reviews: Vec<&serde_json::Value> =
        shown["files"][0]["hunks"].as_array().unwrap().iter().map(|h| &h["review"]).collect();
    assert_eq!(reviews, [&serde_json::Value::Null, &json!("kept")], "{shown}");
}

#[test]
fn a_review_state_written_by_someone_else_cannot_forge_a_line_of_the_session_diff() {
    let (_ws, dir) = two_hunk_session();
    let out = staged(&dir, &["session", "keep", "S1", "--only", "a.txt:1"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let conn = rusqlite::Connection::open(dir.join(".staged/staged.db")).unwrap();
    conn.execute("UPDATE reviews SET state = 'kept' || char(10) || '+forged line'", []).unwrap();
    drop(conn);
    let out = staged(&dir, &["session", "show", "S1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let diff = stdout(&out);
    assert!(!diff.lines().any(|l| l.starts_with("+forged")), "{diff}");
    assert!(diff.contains("[hunk 1 of 2] [kept\\n+forged line]"), "{diff}");
}

/// A whole revert of a session of 25 files: the answer, the log entry's label and the model's
/// notice name ten files and count the rest (one line of 21 KB for 1,500 files before), while
/// `--json` and the log entry list every hunk.
#[test]
fn a_revert_of_many_files_names_ten_and_counts_the_rest() {
    let files: Vec<(String, String)> =
        (0..25).map(|i| (format!("src/f{i:02}.ts"), format!("old {i}\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let ws = workspace(&refs);
    let dir = ws.path().canonicalize().unwrap();
    let run = [
        "shell-run",
        "--client",
        "claude-code",
        "--session",
        "claude-m",
        "--mode",
        "record",
        "--",
        "for f in src/*.ts; do echo new >> \"$f\"; done",
    ];
    let out = staged(&dir, &run);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = staged(&dir, &["--json", "session", "revert", "S1", "--reason", "not this"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let answer = json(&out);
    let named: Vec<String> = (0..10).map(|i| format!("src/f{i:02}.ts")).collect();
    assert_eq!(
        answer["text"],
        format!(
            "Reverted 25 hunks of S1 ({} and 15 more files): not this. Logged as entry 2; `staged undo 2` restores what it reverted.",
            named.join(", ")
        )
    );
    assert_eq!(answer["hunks"].as_array().unwrap().len(), 25, "{answer}");
    let log = json(&staged(&dir, &["--json", "log"]));
    let entry = &log["entries"][0];
    assert_eq!(entry["label"], format!("Revert of S1: {} and 15 more files", named.join(", ")));
    assert_eq!(entry["extra"]["hunks"].as_array().unwrap().len(), 25, "{entry}");
    let prompt = json!({"session_id": "claude-m", "cwd": dir, "hook_event_name": "UserPromptSubmit",
        "prompt": "go on", "permission_mode": "acceptEdits"});
    let out = common::hook(&dir, &["hook", "claude-code", "--mode", "record"], &prompt);
    let told = named.iter().map(|p| format!("{p} (line 2)")).collect::<Vec<_>>().join(", ");
    assert_eq!(
        json(&out)["hookSpecificOutput"]["additionalContext"],
        format!("A person reverted your change to {told} and 15 more files: not this.")
    );
}

#[test]
fn a_reverted_deletion_leaves_the_session_diff_and_is_never_written_twice() {
    let ws = workspace(&[("d.txt", "a\nX\nb\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "claude-1", "t1", "d.txt", "a\nb\n");
    let out = staged(&dir, &["session", "revert", "--reason", "keep X"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(common::read(&dir, "d.txt"), "a\nX\nb\n");
    // Reverted: the session changed nothing that is still there, and a second revert writes
    // nothing (it wrote the line again, after the one the first put back).
    let shown = json(&staged(&dir, &["--json", "session", "show"]));
    assert_eq!(shown["files"].as_array().map(Vec::len), Some(0), "{shown}");
    let out = staged(&dir, &["session", "revert", "--reason", "again"]);
    assert_eq!(code(&out), 2, "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("S1 has no change left to revert; nothing was written"));
    assert_eq!(common::read(&dir, "d.txt"), "a\nX\nb\n");
    // The undo of the revert deletes the line again: the session's change is back, one hunk.
    let out = staged(&dir, &["undo", "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(common::read(&dir, "d.txt"), "a\nb\n");
    let shown = json(&staged(&dir, &["--json", "session", "show"]));
    assert_eq!(path_and_change(&shown), [("d.txt", "changed")], "{shown}");
    assert_eq!(shown["files"][0]["hunks"].as_array().map(Vec::len), Some(1), "{shown}");
}

#[test]
fn a_persons_edit_after_two_sessions_of_one_file_leaves_the_later_session_reviewable() {
    let before: String = (1..=12).map(|n| format!("line {n}\n")).collect();
    let ws = workspace(&[("a.txt", &before), ("b.txt", "b\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let first = before.replace("line 2\n", "LINE 2\n");
    recorded_write(&dir, "claude-1", "t1", "a.txt", &first);
    let second = first.replace("line 10\n", "LINE 10\n");
    recorded_write(&dir, "claude-2", "t2", "a.txt", &second);
    recorded_write(&dir, "claude-2", "t3", "b.txt", "B\n");
    // The person's own edit, outside staged, of a line neither session touched.
    let now = second.replace("line 6\n", "six\n");
    std::fs::write(dir.join("a.txt"), &now).unwrap();
    for session in ["S1", "S2"] {
        let out = staged(&dir, &["session", "show", session]);
        assert_eq!(code(&out), 0, "{session}: {}{}", stdout(&out), stderr(&out));
        assert!(
            !stdout(&out).contains("six"),
            "the person's line is no session's: {}",
            stdout(&out)
        );
    }
    let shown = json(&staged(&dir, &["--json", "session", "show", "S2"]));
    assert_eq!(path_and_change(&shown), [("a.txt", "changed"), ("b.txt", "changed")], "{shown}");
    // S2's line of a.txt reverts alone, around the person's line and S1's.
    let out = staged(&dir, &["session", "revert", "S2", "--only", "a.txt", "--reason", "no"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(common::read(&dir, "a.txt"), now.replace("LINE 10\n", "line 10\n"));
    let out = staged(&dir, &["undo", "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(common::read(&dir, "a.txt"), now);
    // And S2's older entry undoes out of order, as its own lines are intact.
    let out = staged(&dir, &["undo", "2", "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(common::read(&dir, "a.txt"), now.replace("LINE 10\n", "line 10\n"));
}

#[test]
fn a_file_someone_else_deleted_after_the_sessions_change_is_not_the_sessions_deletion() {
    let (_ws, dir, _) = three_in_two_files();
    // a.txt: the session's line reverted, then another session deletes the file.
    let out = staged(&dir, &["session", "revert", "S1", "--only", "a.txt", "--reason", "first"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let mut rm = common::shell_run_args("record", "rm a.txt");
    rm[4] = "claude-2";
    let out = staged(&dir, &rm);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(!dir.join("a.txt").exists());
    // b.txt: the session's line still there when a person deletes the file.
    std::fs::remove_file(dir.join("b.txt")).unwrap();
    let shown = json(&staged(&dir, &["--json", "session", "show", "S1"]));
    assert_eq!(path_and_change(&shown), [("b.txt", "deleted")], "{shown}");
    assert!(
        shown["files"][0]["hunks"][0]["changedSince"].is_string(),
        "the deletion is someone else's: {shown}"
    );
    // Neither comes back as the session's revert; nothing is written.
    for args in [&["session", "revert", "S1", "--reason", "again"][..], &["undo", "1", "--yes"]] {
        let out = staged(&dir, args);
        assert_ne!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
        assert!(!dir.join("a.txt").exists() && !dir.join("b.txt").exists(), "{args:?}");
    }
    let out = staged(&dir, &["session", "revert", "S1", "--reason", "again"]);
    says_out(
        &out,
        "b.txt was changed since the session wrote it, by a change made outside staged. Nothing was written.",
    );
}

#[test]
fn a_file_the_session_made_that_a_person_emptied_is_not_deleted_by_its_revert() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "claude-1", "t1", "new.txt", "made\n");
    std::fs::write(dir.join("new.txt"), "").unwrap();
    // Nothing of the session's is left in it: it is no longer the session's change.
    let shown = json(&staged(&dir, &["--json", "session", "show"]));
    assert_eq!(shown["files"].as_array().map(Vec::len), Some(0), "{shown}");
    let out = staged(&dir, &["session", "revert", "--reason", "no"]);
    assert_eq!(code(&out), 2, "{}{}", stdout(&out), stderr(&out));
    assert!(dir.join("new.txt").exists());
    // Nor when another session removes it and makes it again, empty.
    recorded_write(&dir, "claude-1", "t2", "other.txt", "hello\n");
    let mut rm = common::shell_run_args("record", "rm other.txt; : > other.txt");
    rm[4] = "claude-2";
    let out = staged(&dir, &rm);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let shown = json(&staged(&dir, &["--json", "session", "show", "S1"]));
    assert_eq!(shown["files"].as_array().map(Vec::len), Some(0), "{shown}");
}

#[test]
fn the_undo_of_a_revert_of_added_lines_or_a_made_file_makes_them_the_sessions_again() {
    let ws = workspace(&[("a.txt", "1\n2\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "claude-1", "t1", "a.txt", "1\nNEW\n2\n");
    recorded_write(&dir, "claude-1", "t2", "made.txt", "hello\n");
    for round in 0..2 {
        let out = staged(&dir, &["session", "revert", "--reason", "r"]);
        assert_eq!(code(&out), 0, "{round}: {}{}", stdout(&out), stderr(&out));
        assert_eq!(common::read(&dir, "a.txt"), "1\n2\n");
        assert!(!dir.join("made.txt").exists());
        let out = staged(&dir, &["undo", "--yes"]);
        assert_eq!(code(&out), 0, "{round}: {}{}", stdout(&out), stderr(&out));
        let shown = json(&staged(&dir, &["--json", "session", "show"]));
        assert_eq!(
            path_and_change(&shown),
            [("a.txt", "changed"), ("made.txt", "created")],
            "{round}: {shown}"
        );
    }
}

#[test]
fn a_file_whose_net_change_came_to_nothing_leaves_the_session() {
    let (_ws, dir, before) = three_in_two_files();
    // A person, in one edit, puts line 3 back and changes line 4; the session puts 4 back.
    std::fs::write(dir.join("a.txt"), before.replace("4\n", "FOUR\n")).unwrap();
    recorded_write(&dir, "claude-1", "t3", "a.txt", &before);
    let shown = json(&staged(&dir, &["--json", "session", "show", "S1"]));
    assert_eq!(path_and_change(&shown), [("b.txt", "changed")], "{shown}");
    let out = staged(&dir, &["session", "revert", "S1", "--reason", "x"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).starts_with("Reverted 1 hunk of S1 (b.txt): x."), "{}", stdout(&out));
}

#[test]
fn a_deletion_back_by_the_undo_of_its_revert_is_the_sessions_again() {
    let ws = workspace(&[("full.txt", "x\ny\n"), ("empty.keep", "")]);
    let dir = ws.path().canonicalize().unwrap();
    let out = staged(&dir, &common::shell_run_args("record", "rm full.txt empty.keep"));
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    for round in 0..2 {
        let out = staged(&dir, &["session", "revert", "--reason", "keep them"]);
        assert_eq!(code(&out), 0, "round {round}: {}{}", stdout(&out), stderr(&out));
        assert_eq!(common::read(&dir, "full.txt"), "x\ny\n");
        assert_eq!(common::read(&dir, "empty.keep"), "");
        let out = staged(&dir, &["undo", "--yes"]);
        assert_eq!(code(&out), 0, "round {round}: {}{}", stdout(&out), stderr(&out));
        assert!(!dir.join("full.txt").exists() && !dir.join("empty.keep").exists());
        let shown = json(&staged(&dir, &["--json", "session", "show"]));
        let mut files = path_and_change(&shown);
        files.sort_unstable();
        assert_eq!(files, [("empty.keep", "deleted"), ("full.txt", "deleted")], "{round}: {shown}");
    }
}

#[test]
fn the_notice_of_a_revert_names_the_files_it_made_or_removed_whole() {
    let ws = workspace(&[("empty.keep", ""), ("a.txt", "1\n2\n3\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let out = staged(
        &dir,
        &common::shell_run_args("record", "rm empty.keep; : > made.py; sed -i s/2/TWO/ a.txt"),
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let out = staged(&dir, &["session", "revert", "--reason", "keep it"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let prompt = json!({"session_id": "session-1", "cwd": dir,
        "hook_event_name": "UserPromptSubmit", "prompt": "go on"});
    let out = common::hook(&dir, &["hook", "claude-code", "--mode", "record"], &prompt);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let told = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(told.starts_with("A person reverted your change to a.txt (line 2), "), "{told}");
    for named in ["empty.keep (deleted file)", "made.py (new file)"] {
        assert!(told.contains(named), "{named}: {told}");
    }
    assert!(told.ends_with(": keep it."), "{told}");
}

#[test]
fn a_revert_of_some_hunks_of_a_file_says_the_rest_are_numbered_anew() {
    let (_ws, dir) = two_hunk_session();
    let out = staged(&dir, &["session", "revert", "--only", "a.txt:1", "--reason", "two stays"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).trim_end().ends_with(
            "restores what it reverted. The hunks left in a.txt are numbered anew: `staged session show S1` shows them."
        ),
        "{}",
        stdout(&out)
    );
    // The one left is hunk 1 now; a revert of all that is left says nothing of numbers.
    let out = staged(&dir, &["session", "revert", "--only", "a.txt:1", "--reason", "fifteen"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(!stdout(&out).contains("numbered anew"), "{}", stdout(&out));
    assert_eq!(
        common::read(&dir, "a.txt"),
        (1..=20).map(|n| format!("line {n}\n")).collect::<String>()
    );
}

#[test]
fn a_folder_left_in_place_by_a_revert_is_neither_named_nor_counted() {
    let ws = workspace(&[("t.txt", "1\n2\n3\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let out = staged(
        &dir,
        &common::shell_run_args("record", "sed -i s/2/TWO/ t.txt; mkdir -p gen/sub x/y"),
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // A person's file in one of the session's folders.
    std::fs::write(dir.join("gen/sub/person.txt"), "mine\n").unwrap();
    let out = staged(&dir, &["session", "revert", "--reason", "r"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).starts_with("Reverted 1 hunk and 2 folders of S1 (t.txt, x/y/ (folder made by the session), x/ (folder made by the session)): r."),
        "{}",
        stdout(&out)
    );
    assert!(dir.join("gen/sub/person.txt").exists() && !dir.join("x").exists());
    assert_eq!(common::read(&dir, "t.txt"), "1\n2\n3\n");
}

#[test]
fn a_log_entry_edited_to_name_the_state_folder_writes_nothing_there() {
    let ws = workspace(&[("d.txt", "1\n2\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let out = staged(&dir, &common::shell_run_args("record", "rm d.txt"));
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    // Someone else rewrites the entry's path into staged's own state folder.
    let conn = rusqlite::Connection::open(dir.join(".staged/staged.db")).unwrap();
    conn.execute(
        "UPDATE log SET undo = replace(undo, '\"d.txt\"', '\".staged/evil.txt\"'),
                        files = replace(files, '\"d.txt\"', '\".staged/evil.txt\"'),
                        diff = replace(diff, 'd.txt', '.staged/evil.txt')",
        [],
    )
    .unwrap();
    drop(conn);
    for args in [&["session", "revert", "--reason", "r"][..], &["undo", "1", "--yes"]] {
        let out = staged(&dir, args);
        assert_ne!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
        assert!(
            format!("{}{}", stdout(&out), stderr(&out)).contains("staged's state folder"),
            "{args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(!dir.join(".staged/evil.txt").exists(), "{args:?}");
    }
}

#[test]
fn the_log_names_each_entrys_session() {
    let (_ws, dir) = two_hunk_session();
    let out = staged(&dir, &["session", "revert", "--only", "a.txt:1", "--reason", "two stays"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let listing = stdout(&staged(&dir, &["log"]));
    let rows: Vec<Vec<&str>> =
        listing.lines().map(|l| l.split_whitespace().take(3).collect()).collect();
    assert_eq!(rows[0], ["ENTRY", "OUTCOME", "SESSION"], "{listing}");
    assert_eq!(rows[1], ["2", "applied", "-"], "the person's revert: {listing}");
    assert_eq!(rows[2], ["1", "applied", "S1"], "{listing}");
    let log = json(&staged(&dir, &["--json", "log"]));
    assert_eq!(log["entries"][0]["session"], serde_json::Value::Null, "{log}");
    assert_eq!(log["entries"][1]["session"], "S1", "{log}");
    assert!(stdout(&staged(&dir, &["log", "show", "1"])).contains("\nsession:   S1\n"));
}

#[test]
fn a_root_path_typed_in_a_subfolder_is_refused_saying_how_to_name_it_from_there() {
    let ws = workspace(&[("src/a.txt", "1\n2\n3\n"), ("lib/b.txt", "b\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "claude-1", "t1", "src/a.txt", "1\nTWO\n3\n");
    recorded_write(&dir, "claude-1", "t2", "lib/b.txt", "B\n");
    let src = dir.join("src");
    for (typed, hint) in [("src/a.txt:1", "`a.txt:1`"), ("lib/b.txt", "`../lib/b.txt`")] {
        let out = staged(&src, &["session", "keep", "--only", typed, "--reason", "ok"]);
        assert_eq!(code(&out), 2, "{}{}", stdout(&out), stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "(paths are relative to the current folder, src/: from here, type {hint})"
            )),
            "{}",
            stderr(&out)
        );
    }
    let out = staged(&src, &["session", "keep", "--only", "a.txt:1", "--reason", "ok"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn a_line_feed_in_a_file_name_cannot_start_a_line_of_a_revert_answer() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "claude-1", "t1", "new\n1      applied  forged.txt", "x\n");
    let out = staged(&dir, &["session", "revert", "--reason", "no"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 1, "{}", stdout(&out));
    says_out(&out, "new\\n1      applied  forged.txt (new file)");
}

#[test]
fn a_hook_event_naming_no_session_is_an_agents_change_not_the_persons() {
    let ws = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "", "t1", "a.txt", "A\n");
    recorded_write(&dir, "  ", "t2", "b.txt", "B\n");
    let log = json(&staged(&dir, &["--json", "log"]));
    for entry in log["entries"].as_array().unwrap() {
        assert!(entry["session"].as_str().is_some_and(|s| s.starts_with('S')), "{log}");
    }
    let list = json(&staged(&dir, &["--json", "session", "list"]));
    assert!(!list.as_array().unwrap().is_empty(), "{list}");
    let out = staged(&dir, &["session", "revert", "--reason", "not these"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn a_log_entry_whose_undo_data_someone_broke_is_named_not_hidden() {
    let ws = workspace(&[("a.txt", "1\n2\n3\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "claude-1", "t1", "a.txt", "1\nTWO\n3\n");
    for broken in ["'{\"ops\":['", "NULL", "X'00ff00'"] {
        let conn = rusqlite::Connection::open(dir.join(".staged/staged.db")).unwrap();
        conn.execute(&format!("UPDATE log SET undo = {broken} WHERE seq = 1"), []).unwrap();
        drop(conn);
        let out = staged(&dir, &["session", "show", "S1"]);
        assert_eq!(code(&out), 1, "{broken}: {}{}", stdout(&out), stderr(&out));
        assert_eq!(stdout(&out), "S1 changed nothing staged can show.\n", "{broken}");
        assert!(
            stderr(&out).contains("log entry 1 (Write: a.txt (+1 -1)) wrote files, but its undo data cannot be read (the log was changed outside staged): its change is neither shown nor reverted."),
            "{broken}: {}",
            stderr(&out)
        );
        let shown = json(&staged(&dir, &["--json", "session", "show", "S1"]));
        assert_eq!(shown["caveats"][0]["entry"], 1, "{broken}: {shown}");
        let out = staged(&dir, &["session", "revert", "--reason", "r"]);
        assert_eq!(code(&out), 2, "{broken}: {}{}", stdout(&out), stderr(&out));
        assert!(
            stderr(&out).contains("S1 has no change staged can revert: log entry 1"),
            "{}",
            stderr(&out)
        );
        assert_eq!(common::read(&dir, "a.txt"), "1\nTWO\n3\n");
    }
}

#[test]
fn a_deletion_someone_else_wrote_beside_is_refused_not_guessed() {
    // The session deletes the last line; another session adds one with no line feed there.
    let ws = workspace(&[("a.txt", "1\n2\n3\n"), ("b.txt", "1\n2\n3\n4\n5\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "claude-1", "t1", "a.txt", "1\n2\n");
    recorded_write(&dir, "claude-2", "t2", "a.txt", "1\n2\n4");
    // And deletes b.txt, which a person then makes again with other lines.
    let out = staged(&dir, &common::shell_run_args("record", "rm b.txt"));
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    std::fs::write(dir.join("b.txt"), "foo\n").unwrap();
    for (only, by) in
        [("a.txt", "log entry 2 (session S2)"), ("b.txt", "a change made outside staged")]
    {
        let session = if only == "a.txt" { "S1" } else { "S3" };
        let out = staged(&dir, &["session", "revert", session, "--only", only, "--reason", "r"]);
        assert_eq!(code(&out), 1, "{only}: {}{}", stdout(&out), stderr(&out));
        says_out(&out, &format!("was changed since the session wrote it, by {by}"));
    }
    assert_eq!(common::read(&dir, "a.txt"), "1\n2\n4");
    assert_eq!(common::read(&dir, "b.txt"), "foo\n");
}
