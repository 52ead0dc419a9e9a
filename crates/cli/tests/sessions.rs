//! Sessions through the real binary (issue 34): a record-mode Claude Code session made of hook
//! events as the client sends them, its net change as one diff (`staged session show`), keep
//! and revert per hunk in any order (`staged session revert`), out-of-order `staged undo
//! ENTRY`, the refusals that write nothing, and the person's reason told to the session's model
//! once, at its next hook event.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{path::Path, process::Output};

use common::{code, hook, json, read, recorded_write, staged, stderr, stdout, workspace};
use serde_json::{Value, json};

const RECORD: &[&str] = &["hook", "claude-code", "--mode", "record"];

/// Twenty numbered lines, with line `n` replaced by `with` for each `(n, with)`.
fn lines(changes: &[(usize, &str)]) -> String {
    (1..=20)
        .map(|n| {
            let line = changes
                .iter()
                .find(|(m, _)| *m == n)
                .map_or(format!("line {n}"), |(_, w)| (*w).to_owned());
            format!("{line}\n")
        })
        .collect()
}

fn log_entries(dir: &Path) -> Vec<Value> {
    json(&staged(dir, &["--json", "log"]))["entries"].as_array().unwrap().clone()
}

/// A record-mode session S1: a.txt edited twice (line 2, then line 15), b.txt once, new.txt
/// written.
fn four_edit_session() -> (tempfile::TempDir, std::path::PathBuf) {
    let ws = workspace(&[("a.txt", &lines(&[])), ("b.txt", "alpha\nbeta\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "claude-1", "t1", "a.txt", &lines(&[(2, "two, by the agent")]));
    recorded_write(
        &dir,
        "claude-1",
        "t2",
        "a.txt",
        &lines(&[(2, "two, by the agent"), (15, "fifteen, by the agent")]),
    );
    recorded_write(&dir, "claude-1", "t3", "b.txt", "alpha\nBETA\n");
    recorded_write(&dir, "claude-1", "t4", "src/new.txt", "brand new\n");
    (ws, dir)
}

#[test]
fn a_record_mode_session_is_one_diff_and_reverts_hunk_by_hunk_in_any_order() {
    let (_ws, dir) = four_edit_session();
    let list = json(&staged(&dir, &["--json", "session", "list"]));
    let session = &list[0];
    assert_eq!(session["id"], "S1", "{list}");
    assert_eq!(session["client"], "claude-code");
    assert_eq!(session["files"], 3);
    assert_eq!(session["entries"], 4);
    assert_eq!(session["hunks"], 4, "a.txt's two edits are two hunks: {list}");

    let out = staged(&dir, &["session", "show", "S1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let diff = stdout(&out);
    assert_eq!(diff.matches("diff --git ").count(), 3, "{diff}");
    assert!(diff.contains("@@ -1,5 +1,5 @@ [hunk 1 of 2]"), "{diff}");
    assert!(diff.contains("[hunk 2 of 2]"), "{diff}");
    assert!(diff.contains("[new file, reverted whole]"), "{diff}");
    // The diff is one `staged patch -R` takes: applied in reverse, it would undo the session.
    let shown = json(&staged(&dir, &["--json", "session", "show"]));
    let a = shown["files"].as_array().unwrap().iter().find(|f| f["path"] == "a.txt").unwrap();
    assert_eq!(a["hunks"][0]["entries"], json!([1]), "{a}");
    assert_eq!(a["hunks"][1]["entries"], json!([2]), "the log entry behind each hunk: {a}");

    // Revert the first edit's hunk, keep the second's.
    let out = staged(
        &dir,
        &["session", "revert", "S1", "--only", "a.txt:1", "--reason", "line 2 must stay as it was"],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&dir, "a.txt"), lines(&[(15, "fifteen, by the agent")]));
    // The new file alone.
    let out =
        staged(&dir, &["session", "revert", "--only", "src/new.txt", "--reason", "not wanted"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(!dir.join("src/new.txt").exists());
    assert_eq!(read(&dir, "b.txt"), "alpha\nBETA\n", "b.txt is left as the session made it");

    let entries = log_entries(&dir);
    let revert = &entries[1];
    assert_eq!(revert["reason"], "line 2 must stay as it was", "{revert}");
    assert_eq!(revert["frontEnd"], "cli");
    assert_eq!(revert["source"], "session_revert");
    // The net change now holds what is left: a.txt's second hunk and b.txt.
    let shown = json(&staged(&dir, &["--json", "session", "show", "S1"]));
    let paths: Vec<&str> =
        shown["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["a.txt", "b.txt"], "{shown}");

    // Undo of the reverts restores the session's bytes exactly.
    let out = staged(&dir, &["undo", "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&dir, "src/new.txt"), "brand new\n");
    let seq = revert["entry"].as_u64().unwrap().to_string();
    let out = staged(&dir, &["undo", &seq, "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        read(&dir, "a.txt"),
        lines(&[(2, "two, by the agent"), (15, "fifteen, by the agent")])
    );
}

#[test]
fn an_older_entry_is_undone_out_of_order_unless_a_later_one_changed_its_lines() {
    let (_ws, dir) = four_edit_session();
    // Entry 1 wrote line 2; entry 2 wrote line 15 of the same file. Undoing 1 keeps 2.
    let out = staged(&dir, &["undo", "1", "--yes", "--reason", "not line 2"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&dir, "a.txt"), lines(&[(15, "fifteen, by the agent")]));
    // A later entry that rewrote b.txt's line: undoing the first write of it is refused.
    recorded_write(&dir, "claude-1", "t5", "b.txt", "alpha\nBeta, again\n");
    let out = staged(&dir, &["undo", "3", "--yes"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("were changed since by log entry"), "{text}");
    assert!(text.contains("Nothing was written."), "{text}");
    assert_eq!(read(&dir, "b.txt"), "alpha\nBeta, again\n");
}

#[test]
fn a_hunk_a_person_changed_since_refuses_the_whole_revert_and_writes_nothing() {
    let (_ws, dir) = four_edit_session();
    // The person edits line 15 after the session.
    let person = lines(&[(2, "two, by the agent"), (15, "fifteen, by the person")]);
    std::fs::write(dir.join("a.txt"), &person).unwrap();
    let out = staged(&dir, &["session", "show", "S1"]);
    assert!(
        stdout(&out).contains("[changed since by a change made outside staged]"),
        "{}",
        stdout(&out)
    );
    let out = staged(
        &dir,
        &["session", "revert", "S1", "--only", "a.txt", "b.txt", "--reason", "all of it"],
    );
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("hunk 2 of a.txt was changed since the session wrote it"),
        "{}",
        stdout(&out)
    );
    // And how to revert the rest.
    assert!(
        stdout(&out)
            .trim_end()
            .ends_with("Nothing was written. `--except a.txt:2` reverts the rest."),
        "{}",
        stdout(&out)
    );
    assert_eq!(read(&dir, "a.txt"), person, "nothing written");
    assert_eq!(read(&dir, "b.txt"), "alpha\nBETA\n", "nothing written, all or nothing");
    // Its other hunk still reverts alone, on the file as the person left it.
    let out =
        staged(&dir, &["session", "revert", "S1", "--only", "a.txt:1", "--reason", "line 2 back"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&dir, "a.txt"), lines(&[(15, "fifteen, by the person")]));
}

#[test]
fn the_reason_reaches_the_sessions_model_once_at_its_next_hook_event() {
    let (_ws, dir) = four_edit_session();
    let out = staged(
        &dir,
        &[
            "session",
            "revert",
            "--only",
            "b.txt",
            "--reason",
            "keep beta lower-case; the parser is case-sensitive",
        ],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let prompt = json!({"session_id": "claude-1", "cwd": dir, "hook_event_name": "UserPromptSubmit",
        "prompt": "go on", "permission_mode": "acceptEdits"});
    let out = hook(&dir, RECORD, &prompt);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        reply["hookSpecificOutput"]["additionalContext"],
        "A person reverted your change to b.txt (line 2): keep beta lower-case; the parser is case-sensitive."
    );
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    // Once.
    let out = hook(&dir, RECORD, &prompt);
    assert_eq!(stdout(&out), "");
    // Another session is not told.
    let other = json!({"session_id": "claude-2", "cwd": dir, "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    let out = hook(&dir, RECORD, &other);
    assert_eq!(stdout(&out), "");
}

#[test]
fn a_session_is_titled_by_its_first_prompt() {
    let ws = workspace(&[("a.txt", "x\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let prompt = json!({"session_id": "c-9", "cwd": dir, "hook_event_name": "UserPromptSubmit",
        "prompt": "\n  Fix the retry loop\nand more"});
    assert_eq!(code(&hook(&dir, RECORD, &prompt)), 0);
    recorded_write(&dir, "c-9", "t1", "a.txt", "y\n");
    let list = json(&staged(&dir, &["--json", "session", "list"]));
    assert_eq!(list[0]["title"], "Fix the retry loop", "{list}");
}

#[test]
fn part_of_an_entry_is_undone_and_the_rest_stays_undoable() {
    let ws = workspace(&[("a.txt", &lines(&[]))]);
    let dir = ws.path().canonicalize().unwrap();
    // One entry that changes lines 2 and 15 (two hunks).
    recorded_write(&dir, "c-1", "t1", "a.txt", &lines(&[(2, "two!"), (15, "fifteen!")]));
    let shown = json(&staged(&dir, &["--json", "session", "show", "--entry", "1"]));
    assert_eq!(shown["files"][0]["hunks"].as_array().unwrap().len(), 2, "{shown}");
    let out = staged(&dir, &["undo", "1", "--only", "a.txt:2", "--reason", "fifteen stays"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&dir, "a.txt"), lines(&[(2, "two!")]));
    // The rest of the entry: a whole undo now reverts what is left of it.
    let out = staged(&dir, &["undo", "1", "--yes"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&dir, "a.txt"), lines(&[]));
}

#[test]
fn kept_hunks_stay_reviewed_until_the_session_changes_them_again() {
    let (_ws, dir) = four_edit_session();
    let out =
        staged(&dir, &["session", "keep", "S1", "--only", "a.txt:2", "b.txt", "--reason", "good"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out), "Kept 2 hunks of S1; 2 of 4 hunks reviewed.\n");
    let list = json(&staged(&dir, &["--json", "session", "list"]));
    assert_eq!(list[0]["reviewed"], 2, "{list}");
    let out = staged(&dir, &["session", "show"]);
    assert!(stdout(&out).contains("[hunk 2 of 2] [kept]"), "{}", stdout(&out));
    // The session changes b.txt again: that hunk is new, unreviewed.
    recorded_write(&dir, "claude-1", "t9", "b.txt", "alpha\nBETA!\n");
    let list = json(&staged(&dir, &["--json", "session", "list"]));
    assert_eq!(list[0]["reviewed"], 1, "{list}");
}

/// Claude Code's Edit of `path` in session `session`, in gate mode: staged, denied.
fn gated_edit(dir: &Path, session: &str, call: &str, path: &str, old: &str, new: &str) -> Output {
    let event = json!({"session_id": session, "cwd": dir, "hook_event_name": "PreToolUse",
        "tool_name": "Edit", "tool_use_id": call, "permission_mode": "acceptEdits",
        "tool_input": {"file_path": dir.join(path), "old_string": old, "new_string": new, "replace_all": false}});
    hook(dir, &["hook", "claude-code"], &event)
}

#[test]
fn each_session_has_its_own_stack_and_a_person_sees_them_all() {
    let ws = workspace(&[("a.txt", "a = 1\n"), ("b.txt", "b = 1\n")]);
    let dir = ws.path().canonicalize().unwrap();
    assert_eq!(code(&gated_edit(&dir, "sess-a", "t1", "a.txt", "a = 1", "a = 2")), 0);
    assert_eq!(code(&gated_edit(&dir, "sess-b", "t2", "b.txt", "b = 1", "b = 2")), 0);
    // The person sees both, with their sessions.
    let pending = json(&staged(&dir, &["--json", "pending"]));
    let sessions: Vec<&str> = pending["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, ["S2", "S1"], "{pending}");
    assert!(stdout(&staged(&dir, &["pending"])).contains("SESSION"));
    // A file pending in S1 is refused to S2, naming whose it is.
    let out = gated_edit(&dir, "sess-b", "t3", "a.txt", "a = 1", "a = 3");
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let reason = reply["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.contains("It is session S1's preview, not this session's: do not resolve it; a person resolves it with `staged review`."),
        "{reason}"
    );
    // `--session` resolves that session's newest, though another session's is newer.
    let out = staged(&dir, &["resolve", "apply", "--session", "S1", "--reason", "a first"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&dir, "a.txt"), "a = 2\n");
    assert_eq!(read(&dir, "b.txt"), "b = 1\n");
    let entry = &log_entries(&dir)[0];
    assert_eq!(
        (entry["reason"].as_str(), entry["frontEnd"].as_str()),
        (Some("a first"), Some("cli")),
        "{entry}"
    );
    let out = staged(&dir, &["resolve", "apply", "--session", "S9", "--reason", "x"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("there is no session S9"), "{}", stderr(&out));
    // A signed number is no session id, and a long mistyped one is not echoed whole.
    for args in
        [&["resolve", "apply", "--session", "+1", "--reason", "x"][..], &["session", "show", "+1"]]
    {
        let out = staged(&dir, args);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(
            stderr(&out)
                .contains("`+1` is not a session id (S1, S2, ..., or the id its client gave it); see `staged session list`"),
            "{}",
            stderr(&out)
        );
    }
    let long = format!("S1{}", "\u{1b}x".repeat(5000));
    let out = staged(&dir, &["session", "revert", &long, "--reason", "x"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("`S1\\u{1b}x\\u{1b}x"), "{}", stderr(&out));
    assert!(stderr(&out).contains("…` is not a session id"), "{}", stderr(&out));
    assert!(stderr(&out).len() < 400, "{}", stderr(&out));
    assert_eq!(read(&dir, "b.txt"), "b = 1\n");
}

#[test]
fn a_session_is_named_by_its_clients_id_too_whole_or_a_start_only_it_has() {
    let ws = workspace(&[("a.txt", "a = 1\n"), ("b.txt", "b = 1\n"), ("c.txt", "c = 1\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let (s1, s2) = ("5f2a1c3e-0b9d-4e7f-8a6b-1c2d3e4f5a6b", "5f2a1c99-7777-4e7f-8a6b-1c2d3e4f5a6b");
    assert_eq!(code(&gated_edit(&dir, s1, "t1", "a.txt", "a = 1", "a = 2")), 0);
    assert_eq!(code(&gated_edit(&dir, s2, "t2", "b.txt", "b = 1", "b = 2")), 0);
    assert_eq!(code(&gated_edit(&dir, "abc", "t3", "c.txt", "c = 1", "c = 2")), 0);
    // The list shows each session's client id, by which a person finds it.
    let list = stdout(&staged(&dir, &["session", "list"]));
    for (short, id) in [("S1", s1), ("S2", s2), ("S3", "abc")] {
        let at = list.find(&format!("{short} claude-code")).unwrap_or_else(|| panic!("{list}"));
        let next = list[at..].lines().nth(1).unwrap_or_default();
        assert_eq!(next, format!("    client id: {id}"), "{list}");
    }
    // Whole, or a start of 6 characters or more that no other session's id has.
    for typed in [s1, "5f2a1c3e", "5f2a1c3"] {
        let out = staged(&dir, &["session", "show", typed]);
        assert_eq!(code(&out), 0, "{typed}: {}", stderr(&out));
        assert!(stdout(&out).starts_with("S1 "), "{typed}: {}", stdout(&out));
    }
    let out = staged(&dir, &["resolve", "apply", "--session", "5f2a1c99", "--reason", "by id"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!((read(&dir, "a.txt"), read(&dir, "b.txt")), ("a = 1\n".into(), "b = 2\n".into()));
    // A client's whole id names its session however short; a short id's look-alike is a
    // short id whatever a client called its session.
    let out = staged(&dir, &["session", "show", "abc"]);
    assert!(stdout(&out).starts_with("S3 "), "{}{}", stdout(&out), stderr(&out));
    std::fs::write(dir.join("d.txt"), "d = 1\n").unwrap();
    assert_eq!(code(&gated_edit(&dir, "2", "t4", "d.txt", "d = 1", "d = 2")), 0);
    let out = staged(&dir, &["session", "show", "2"]);
    assert!(stdout(&out).starts_with("diff --git a/b.txt"), "{}{}", stdout(&out), stderr(&out));
    // A start two sessions' ids share names neither; a start under 6 characters, none.
    let out = staged(&dir, &["session", "show", "5f2a1c"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "`5f2a1c` begins the client ids of S1 and S2: type more of it, or the short id; see `staged session list`"
        ),
        "{}",
        stderr(&out)
    );
    for typed in ["5f2a1", "ab", "5f2a1c3e-x"] {
        let out = staged(&dir, &["session", "show", typed]);
        assert_eq!(code(&out), 2, "{typed}: {}", stderr(&out));
        assert!(stderr(&out).contains("is not a session id"), "{typed}: {}", stderr(&out));
    }
}

#[test]
fn a_session_goes_with_the_logs_retention_once_none_of_its_entries_are_left() {
    let ws = workspace(&[("a.txt", "one\n"), ("b.txt", "x\n")]);
    let dir = ws.path().canonicalize().unwrap();
    recorded_write(&dir, "old-session", "t1", "a.txt", "two\n");
    recorded_write(&dir, "new-session", "t2", "b.txt", "y\n");
    assert_eq!(json(&staged(&dir, &["--json", "session", "list"])).as_array().unwrap().len(), 2);
    // Keep one entry: the old session's is pruned, and the session with it.
    assert_eq!(code(&staged(&dir, &["log", "--keep", "1"])), 0);
    recorded_write(&dir, "new-session", "t3", "b.txt", "z\n");
    let list = json(&staged(&dir, &["--json", "session", "list"]));
    let ids: Vec<&str> =
        list.as_array().unwrap().iter().map(|s| s["clientSessionId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["new-session"], "{list}");
    // The session left shows the net change of the entries left.
    let shown = json(&staged(&dir, &["--json", "session", "show"]));
    assert_eq!(shown["files"][0]["path"], "b.txt", "{shown}");
}

#[test]
fn retention_never_takes_the_history_of_a_session_that_still_has_entries() {
    let ws = workspace(&[("a.txt", &lines(&[]))]);
    let dir = ws.path().canonicalize().unwrap();
    assert_eq!(code(&staged(&dir, &["log", "--keep", "2"])), 0);
    recorded_write(&dir, "long", "t1", "a.txt", &lines(&[(1, "one")]));
    recorded_write(&dir, "long", "t2", "a.txt", &lines(&[(1, "one"), (10, "ten")]));
    recorded_write(&dir, "long", "t3", "a.txt", &lines(&[(1, "one"), (10, "ten"), (20, "twenty")]));
    recorded_write(&dir, "long", "t4", "a.txt", &lines(&[(1, "ONE"), (10, "ten"), (20, "twenty")]));
    // Four entries kept past `--keep 2`: the session is still there, whole.
    assert_eq!(log_entries(&dir).len(), 4);
    let out = staged(&dir, &["session", "revert", "--reason", "all of it"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(read(&dir, "a.txt"), lines(&[]));
}
