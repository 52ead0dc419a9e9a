//! Hostile input to the session review (issue 34), through the real binary: a state folder's
//! rows edited by someone else (times no calendar can print), hunk numbers a session's file
//! does not have, and files a session made or removed with no lines. Each must give a clear
//! answer or a clear error, never a crash, and never a success that did nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{code, hook, json, staged, stderr, stdout, workspace};
use serde_json::json;

const RECORD: &[&str] = &["hook", "claude-code", "--mode", "record"];

/// Claude Code's Write of `text` to `path` in session `session`, recorded: PreToolUse, the
/// client's write, PostToolUse.
fn recorded_write(dir: &Path, session: &str, call: &str, path: &str, text: &str) {
    let file = dir.join(path);
    let input = json!({"file_path": file, "content": text});
    let pre = json!({"session_id": session, "cwd": dir, "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": input, "tool_use_id": call,
        "permission_mode": "acceptEdits"});
    let out = hook(dir, RECORD, &pre);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let original = std::fs::read_to_string(&file).ok();
    std::fs::write(&file, text).unwrap();
    let kind = if original.is_some() { "update" } else { "create" };
    let post = json!({"session_id": session, "cwd": dir, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": input, "tool_use_id": call,
        "permission_mode": "acceptEdits",
        "tool_response": {"type": kind, "filePath": file, "content": text, "structuredPatch": [],
            "originalFile": original}});
    let out = hook(dir, RECORD, &post);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
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
