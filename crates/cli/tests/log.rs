//! The resolve log, undo without git, and partial applies, through the real binary: the log
//! after every kind of outcome, undo and redo, undo refused after a later edit, partial
//! applies from the CLI and over MCP, retention, and two processes undoing at once.
// See: issue 13.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod mcp_process;

use std::path::Path;

use common::{code, json, pending_ids, read, staged, stderr, stdout, workspace};
use serde_json::{Value, json};

/// SHA-256 of `text`, as the log records it (via the `sha256sum` the test machine has, so the
/// test does not trust staged's own hashing).
fn sha256(text: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
}

#[track_caller]
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = staged(dir, args);
    assert_eq!(code(&out), 0, "staged {args:?}: {}{}", stdout(&out), stderr(&out));
    stdout(&out)
}

fn stage(dir: &Path, pat: &str, out: &str, paths: &[&str]) -> String {
    let mut args = vec!["--json", "ast-edit", "--op", pat, out];
    args.extend(paths);
    let res = staged(dir, &args);
    assert_eq!(code(&res), 0, "{}", stderr(&res));
    json(&res)["pending"]["id"].as_str().unwrap().to_owned()
}

/// The log's entries, newest first.
fn log(dir: &Path) -> Vec<Value> {
    let out = staged(dir, &["--json", "log", "-n", "100"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json(&out)["entries"].as_array().unwrap().clone()
}

const KEYS: [&str; 11] = [
    "id", "label", "source", "outcome", "reason", "extra", "at", "frontEnd", "files", "diff",
    "entry",
];

#[test]
fn the_log_records_every_kind_of_outcome_with_its_details() {
    let ws = workspace(&[("a.ts", "foo(1);\nfoo(2);\n"), ("b.ts", "foo(3);\n")]);
    let dir = ws.path();
    // Looking at the log of a workspace where nothing happened creates nothing.
    assert!(ok(dir, &["log"]).contains("The log is empty"));
    assert_eq!(json(&staged(dir, &["--json", "log"])), json!({"entries": []}));
    assert!(!dir.join(".staged").exists(), "staged log created state");

    // applied
    let applied = stage(dir, "foo($A)", "bar($A)", &["a.ts"]);
    ok(dir, &["resolve", "apply", "--reason", "rename is right", "--extra", r#"{"ticket": 7}"#]);
    // discarded
    let discarded = stage(dir, "foo($A)", "baz($A)", &["b.ts"]);
    ok(dir, &["resolve", "discard", "--reason", "not this one"]);
    // failed (it stays pending): a file that is not in the preview, as a model names it (the
    // CLI's `--only nope.ts` is an input error, which is not a resolve outcome)
    let failed = stage(dir, "foo($A)", "qux($A)", &["b.ts"]);
    let out = staged(dir, &["resolve", "apply", "--only", "nope.ts", "--reason", "wrong file"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let out = staged(
        dir,
        &["resolve", "apply", "--extra", r#"{"files": ["nope.ts"]}"#, "--reason", "wrong file"],
    );
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("`nope.ts` is not a file of this preview"), "{}", stdout(&out));
    assert_eq!(pending_ids(dir), std::slice::from_ref(&failed));
    // stale (dropped): the file changed since the preview
    std::fs::write(dir.join("b.ts"), "foo(3); // edited\n").unwrap();
    let out = staged(dir, &["resolve", "apply", "--reason", "too late"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(pending_ids(dir).is_empty());
    // undone, redone
    ok(dir, &["undo", "--reason", "changed my mind"]);
    ok(dir, &["undo", "5", "--reason", "no, it was right"]);
    assert_eq!(read(dir, "a.ts"), "bar(1);\nbar(2);\n");

    let entries = log(dir);
    let outcomes: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| (e["outcome"].as_str().unwrap(), e["id"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("redone", applied.as_str()),
            ("undone", applied.as_str()),
            ("stale", failed.as_str()),
            ("failed", failed.as_str()),
            ("discarded", discarded.as_str()),
            ("applied", applied.as_str()),
        ]
    );
    for entry in &entries {
        for key in KEYS {
            assert!(entry.get(key).is_some(), "{key} missing in {entry}");
        }
        assert_eq!(entry["frontEnd"], "cli");
        assert_eq!(entry["source"], "ast_edit");
        let at = entry["at"].as_str().unwrap();
        assert!(at.len() == 20 && at.ends_with('Z') && at.as_bytes()[10] == b'T', "{at}");
    }
    let by_outcome = |outcome: &str| entries.iter().find(|e| e["outcome"] == outcome).unwrap();

    let applied_entry = by_outcome("applied");
    assert_eq!(applied_entry["label"], "AST Edit: 2 replacements in 1 file");
    assert_eq!(applied_entry["reason"], "rename is right");
    assert_eq!(applied_entry["extra"], json!({"ticket": 7}));
    assert_eq!(applied_entry["result"], "Applied 2 replacements in 1 file.");
    assert_eq!(
        applied_entry["files"],
        json!([{"path": "a.ts", "before": sha256("foo(1);\nfoo(2);\n"), "after": sha256("bar(1);\nbar(2);\n")}])
    );
    let diff = applied_entry["diff"].as_str().unwrap();
    assert!(diff.contains("-foo(1);\n-foo(2);\n+bar(1);\n+bar(2);\n"), "{diff}");
    assert_eq!(applied_entry["revertedBy"], by_outcome("undone")["entry"]);

    let discarded_entry = by_outcome("discarded");
    assert_eq!(discarded_entry["reason"], "not this one");
    assert_eq!(discarded_entry["files"], json!([]));
    assert_eq!(discarded_entry["diff"], Value::Null);
    assert_eq!(
        discarded_entry["result"],
        "Discarded: AST Edit: 1 replacement in 1 file. Reason: not this one"
    );

    let failed_entry = by_outcome("failed");
    assert_eq!(failed_entry["extra"], json!({"files": ["nope.ts"]}));
    assert!(failed_entry["result"].as_str().unwrap().contains("is not a file of this preview"));

    let stale_entry = by_outcome("stale");
    assert!(
        stale_entry["result"]
            .as_str()
            .unwrap()
            .starts_with("Preview is stale / no longer matches; no replacements were applied."),
        "{stale_entry}"
    );
    assert_eq!(stale_entry["files"], json!([]));

    let undone = by_outcome("undone");
    assert_eq!(undone["reason"], "changed my mind");
    assert_eq!(undone["reverts"], applied_entry["entry"]);
    assert_eq!(
        undone["files"],
        json!([{"path": "a.ts", "before": sha256("bar(1);\nbar(2);\n"), "after": sha256("foo(1);\nfoo(2);\n")}])
    );
    assert!(undone["diff"].as_str().unwrap().contains("-bar(1);\n-bar(2);\n+foo(1);\n+foo(2);\n"));
    let redone = by_outcome("redone");
    assert_eq!(redone["reverts"], undone["entry"]);
    assert_eq!(redone["files"], applied_entry["files"]);

    // `log show` prints one entry with its diff; by number or by pending id (its newest).
    let shown = ok(dir, &["log", "show", &applied_entry["entry"].to_string()]);
    assert!(
        shown.starts_with(&format!(
            "entry {}: applied  AST Edit: 2 replacements in 1 file",
            applied_entry["entry"]
        )),
        "{shown}"
    );
    assert!(shown.contains("reason:    rename is right") && shown.contains("+bar(2);"), "{shown}");
    let out = staged(dir, &["--json", "log", "show", &applied]);
    assert_eq!(json(&out), *redone);
    // The text listing, newest first, off a terminal.
    let listing = ok(dir, &["log"]);
    let lines: Vec<&str> = listing.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().take(4).collect();
    assert_eq!(header, ["ENTRY", "OUTCOME", "SESSION", "ID"], "{listing}");
    assert!(lines[1].starts_with("6      redone"), "{listing}");
    assert!(lines.iter().any(|l| l.contains("applied (reverted by 5)")), "{listing}");
    // An entry no one has is mistyped input (exit 2), to `log show` and `undo` alike, and
    // nothing is written.
    for args in [&["log", "show", "99"][..], &["undo", "99"], &["undo", "#99", "--only", "a.ts"]] {
        let out = staged(dir, args);
        assert_eq!(code(&out), 2, "{args:?}: {}{}", stdout(&out), stderr(&out));
        assert!(stderr(&out).contains("no log entry `"), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{args:?}");
    }
    assert!(ok(dir, &["log"]).lines().nth(1).unwrap().starts_with("6      redone"));
}

#[test]
fn undo_restores_the_files_and_an_undo_of_the_undo_redoes_them() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("src/b.ts", "x;\nfoo(2);\n")]);
    let dir = ws.path();
    stage(dir, "foo($A)", "bar($A)", &["."]);
    ok(dir, &["resolve", "apply", "--reason", "go"]);
    assert_eq!(read(dir, "src/b.ts"), "x;\nbar(2);\n");

    let out = ok(dir, &["undo"]);
    assert_eq!(out, "Undid log entry 1 (AST Edit: 2 replacements in 2 files): 2 files restored.\n");
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    assert_eq!(read(dir, "src/b.ts"), "x;\nfoo(2);\n");
    // The same entry cannot be undone twice.
    let out = staged(dir, &["undo", "1"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out),
        "Log entry 1 (AST Edit: 2 replacements in 2 files) was already reverted by entry 2; nothing was written. `staged undo 2` reverts that one.\n"
    );
    // The default is the newest applied entry, which is undone already.
    assert_eq!(code(&staged(dir, &["undo"])), 1);

    let out = ok(dir, &["undo", "2"]);
    assert_eq!(
        out,
        "Redid log entry 2's change (AST Edit: 2 replacements in 2 files): 2 files written again.\n"
    );
    assert_eq!(read(dir, "a.ts"), "bar(1);\n");
    assert_eq!(read(dir, "src/b.ts"), "x;\nbar(2);\n");
    // A redo is applied again: the default undo reverts it.
    ok(dir, &["undo"]);
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    let outcomes: Vec<Value> = log(dir).iter().map(|e| e["outcome"].clone()).collect();
    assert_eq!(outcomes, ["undone", "redone", "undone", "applied"]);
    // No journal or temp file is left behind.
    let journal = staged_test_support::sorted_names(&dir.join(".staged/journal"));
    assert_eq!(journal, ["commit.lock", "write.lock"]);
}

#[test]
fn undo_after_a_later_edit_writes_nothing_and_names_the_file() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    let dir = ws.path();
    stage(dir, "foo($A)", "bar($A)", &["."]);
    ok(dir, &["resolve", "apply", "--reason", "go"]);
    std::fs::write(dir.join("b.ts"), "bar(2); // mine\n").unwrap();
    let out = staged(dir, &["undo"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        "Cannot undo log entry 1 (AST Edit: 2 replacements in 2 files): its lines in b.ts (hunk 1 of its change) were changed since by a change made outside staged; `staged undo 1 --only FILE:HUNKS` reverts the rest. Nothing was written.\n"
    );
    assert_eq!(read(dir, "a.ts"), "bar(1);\n", "the unchanged file was not written either");
    assert_eq!(read(dir, "b.ts"), "bar(2); // mine\n");
    assert_eq!(log(dir).len(), 1, "a refused undo is not an outcome");
    // Put back, the undo goes through.
    std::fs::write(dir.join("b.ts"), "bar(2);\n").unwrap();
    ok(dir, &["undo"]);
    assert_eq!((read(dir, "a.ts"), read(dir, "b.ts")), ("foo(1);\n".into(), "foo(2);\n".into()));
}

#[test]
fn undo_says_when_there_is_nothing_to_undo_and_creates_no_state() {
    let ws = workspace(&[("a.ts", "foo(1);\n")]);
    let out = staged(ws.path(), &["undo"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out),
        "Nothing to undo: the log has no applied entry that is not reverted already.\n"
    );
    assert!(!ws.path().join(".staged").exists());
    stage(ws.path(), "foo($A)", "bar($A)", &["a.ts"]);
    ok(ws.path(), &["resolve", "discard", "--reason", "no"]);
    let out = staged(ws.path(), &["undo", "1"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out),
        "Log entry 1 (AST Edit: 1 replacement in 1 file) was discarded: it wrote nothing, so there is nothing to undo.\n"
    );
    let out = staged(ws.path(), &["undo", "pending-action:ast_edit:0"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no log entry `pending-action:ast_edit:0` that wrote files"));
}

#[test]
fn a_partial_apply_writes_the_named_files_and_leaves_the_rest_pending() {
    let ws = workspace(&[
        ("a.ts", "foo(1);\n"),
        ("src/b.ts", "foo(2);\nfoo(3);\n"),
        ("src/c.ts", "foo(4);\n"),
    ]);
    let dir = ws.path();
    let id = stage(dir, "foo($A)", "bar($A)", &["."]);
    // Typed from a subfolder, relative to it.
    let out =
        staged(&dir.join("src"), &["resolve", "apply", "--only", "b.ts", "--reason", "b first"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let pending = pending_ids(dir);
    assert_eq!(pending.len(), 1);
    assert_ne!(pending[0], id, "the rest is a new preview");
    assert!(
        stdout(&out).contains(&format!(
            "Applied 2 replacements in 1 file. The rest stays pending as the newest preview: AST Edit: 2 replacements in 2 files ({}).",
            pending[0]
        )),
        "{}",
        stdout(&out)
    );
    assert_eq!(read(dir, "src/b.ts"), "bar(2);\nbar(3);\n");
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    assert_eq!(read(dir, "src/c.ts"), "foo(4);\n");

    // The remainder: its label, and a diff of exactly the files left.
    let shown = json(&staged(dir, &["--json", "show"]));
    assert_eq!(shown["label"], "AST Edit: 2 replacements in 2 files");
    let diff = shown["diff"].as_str().unwrap();
    assert!(
        diff.contains("diff --git a/a.ts b/a.ts")
            && diff.contains("diff --git a/src/c.ts b/src/c.ts"),
        "{diff}"
    );
    assert!(!diff.contains("src/b.ts"), "{diff}");
    // The log records what was written, and the remainder's id in its result.
    let entry = &log(dir)[0];
    assert_eq!(entry["outcome"], "applied");
    assert_eq!(entry["id"].as_str().unwrap(), id);
    assert_eq!(entry["extra"], json!({"files": ["src/b.ts"]}));
    assert_eq!(entry["files"].as_array().unwrap().len(), 1);
    assert!(entry["diff"].as_str().unwrap().starts_with("diff --git a/src/b.ts b/src/b.ts"));
    assert!(entry["result"].as_str().unwrap().ends_with(&format!("({}).", pending[0])));

    // The rest applies as any preview, and the partial apply can be undone on its own.
    ok(dir, &["resolve", "apply", "--reason", "the rest"]);
    assert_eq!(read(dir, "a.ts"), "bar(1);\n");
    assert_eq!(read(dir, "src/c.ts"), "bar(4);\n");
    ok(dir, &["undo", "1"]);
    assert_eq!(read(dir, "src/b.ts"), "foo(2);\nfoo(3);\n");
    assert_eq!(read(dir, "a.ts"), "bar(1);\n");
    // --only and discard do not mix; nothing changed.
    let id = stage(dir, "bar($A)", "baz($A)", &["a.ts"]);
    let out = staged(dir, &["resolve", "discard", "--only", "a.ts", "--reason", "x"]);
    assert_eq!(code(&out), 2);
    assert_eq!(pending_ids(dir), [id]);
}

#[test]
fn a_partial_apply_on_a_stale_file_writes_nothing() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    let dir = ws.path();
    stage(dir, "foo($A)", "bar($A)", &["."]);
    std::fs::write(dir.join("a.ts"), "foo(1); foo(9);\n").unwrap();
    for only in ["a.ts", "b.ts"] {
        let out = staged(dir, &["resolve", "apply", "--only", only, "--reason", "part"]);
        if only == "a.ts" {
            assert_eq!(code(&out), 1, "{}", stdout(&out));
            assert!(
                stdout(&out).contains("Preview is stale / no longer matches"),
                "{}",
                stdout(&out)
            );
        } else {
            // The stale preview was dropped by the first attempt.
            assert_eq!(code(&out), 1);
            assert!(stdout(&out).contains("No pending action to resolve"), "{}", stdout(&out));
        }
    }
    assert_eq!(read(dir, "a.ts"), "foo(1); foo(9);\n");
    assert_eq!(read(dir, "b.ts"), "foo(2);\n");
    // Stale in a file not chosen: still stale, still nothing written.
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    let dir = ws.path();
    stage(dir, "foo($A)", "bar($A)", &["."]);
    std::fs::write(dir.join("a.ts"), "foo(1); foo(9);\n").unwrap();
    let out = staged(dir, &["resolve", "apply", "--only", "b.ts", "--reason", "part"]);
    assert_eq!(code(&out), 1);
    assert_eq!(read(dir, "b.ts"), "foo(2);\n");
    assert!(pending_ids(dir).is_empty());
    assert_eq!(log(dir)[0]["outcome"], "stale");
}

#[test]
fn a_partial_apply_over_mcp_uses_extra_files_and_records_the_client() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    let dir = ws.path();
    let mut server = mcp_process::McpProcess::initialized(dir);
    let call = |id: i64, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    server.send_json(&call(
        1,
        "ast_edit",
        json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["."]}),
    ));
    let staged_reply = server.next();
    assert_eq!(staged_reply["id"], 1);
    let first =
        staged_reply["result"]["structuredContent"]["pending"]["id"].as_str().unwrap().to_owned();
    server.send_json(&call(
        2,
        "resolve",
        json!({"action": "apply", "reason": "a only", "extra": {"files": ["a.ts"]}}),
    ));
    let reply = server.next();
    let result = &reply["result"]["structuredContent"];
    assert_eq!(result["isError"], false, "{reply}");
    let rest = result["pending"]["id"].as_str().unwrap().to_owned();
    assert_ne!(rest, first);
    assert_eq!(result["pending"]["label"], "AST Edit: 1 replacement in 1 file");
    assert!(
        result["text"].as_str().unwrap().starts_with(&format!(
            "Applied 1 replacement in 1 file. The rest stays pending as the newest preview: AST Edit: 1 replacement in 1 file ({rest})."
        )),
        "{reply}"
    );
    // The rest is still a preview, so the reminder follows.
    assert!(result["text"].as_str().unwrap().contains("Call the `resolve` tool"), "{reply}");
    assert_eq!(read(dir, "a.ts"), "bar(1);\n");
    assert_eq!(read(dir, "b.ts"), "foo(2);\n");
    drop(server);
    let entry = &log(dir)[0];
    assert_eq!(entry["frontEnd"], "mcp:raw");
    assert_eq!(entry["extra"], json!({"files": ["a.ts"]}));
    assert_eq!(pending_ids(dir), [rest]);
}

#[test]
fn retention_keeps_the_newest_entries() {
    let ws = workspace(&[("a.ts", "v0(1);\n")]);
    let dir = ws.path();
    assert_eq!(ok(dir, &["log", "--keep", "3"]), "The log now keeps the newest 3 entries.\n");
    for i in 0..6 {
        stage(dir, &format!("v{i}($A)"), &format!("v{}($A)", i + 1), &["a.ts"]);
        ok(dir, &["resolve", "apply", "--reason", &format!("step {i}")]);
    }
    let entries = log(dir);
    let numbers: Vec<Value> = entries.iter().map(|e| e["entry"].clone()).collect();
    assert_eq!(numbers, [json!(6), json!(5), json!(4)]);
    assert_eq!(entries[0]["reason"], "step 5");
    // An entry that was dropped cannot be undone (the log has no entry 1, as `log show`
    // says too); a kept one can.
    for args in [&["undo", "1"][..], &["log", "show", "1"]] {
        let out = staged(dir, args);
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(stderr(&out).contains("no log entry `1` (see `staged log`)"), "{}", stderr(&out));
    }
    ok(dir, &["undo"]);
    assert_eq!(read(dir, "a.ts"), "v5(1);\n");
    assert_eq!(log(dir).len(), 3);
    let out = staged(dir, &["log", "--keep", "0"]);
    assert_eq!(code(&out), 2);
}

#[test]
fn two_processes_undoing_at_once_give_exactly_one_undo() {
    let files: Vec<(String, String)> =
        (0..200).map(|i| (format!("src/f{i:03}.ts"), format!("legacy({i});\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    for round in 0..3 {
        let ws = workspace(&refs);
        let dir = ws.path();
        stage(dir, "legacy($A)", "modern($A)", &["src"]);
        ok(dir, &["resolve", "apply", "--reason", "go"]);
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let dir = dir.to_path_buf();
                std::thread::spawn(move || staged(&dir, &["undo"]))
            })
            .collect();
        let outs: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        let mut codes: Vec<i32> = outs.iter().map(code).collect();
        codes.sort();
        assert_eq!(
            codes,
            [0, 1],
            "round {round}: {:?}",
            outs.iter().map(stdout).collect::<Vec<_>>()
        );
        let loser = outs.iter().find(|o| code(o) == 1).unwrap();
        assert!(stdout(loser).contains("was already reverted by entry 2"), "{}", stdout(loser));
        let outcomes: Vec<Value> = log(dir).iter().map(|e| e["outcome"].clone()).collect();
        assert_eq!(outcomes, ["undone", "applied"], "round {round}");
        for (path, text) in &files {
            assert_eq!(&read(dir, path), text, "round {round}");
        }
    }
}

#[test]
fn only_is_refused_for_a_preview_that_cannot_apply_part_of_itself() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    let dir = ws.path();
    let id = stage(dir, "foo($A)", "bar($A)", &["."]);
    // A preview from a tool this process does not know reads back as unavailable, which
    // cannot apply in part.
    let conn = rusqlite::Connection::open(dir.join(".staged/staged.db")).unwrap();
    conn.execute("UPDATE pending SET source_tool = 'other'", []).unwrap();
    drop(conn);
    let out = staged(dir, &["resolve", "apply", "--only", "a.ts", "--reason", "part"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&format!(
            "`AST Edit: 2 replacements in 2 files` ({id}) from `other` cannot be applied in part"
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(pending_ids(dir), [id]);
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    assert!(log(dir).is_empty());
}
