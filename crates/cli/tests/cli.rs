//! End-to-end tests of the `staged` binary in temporary workspaces: each command is its own
//! process, so staging in one and resolving in another is the normal case.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{code, json, pending_ids, read, staged, stderr, stdout, workspace};

const A_TS: &str = "export function f(x: number) {\n  return legacyWrap(x, 1);\n}\n";
const B_TS: &str = "const z = legacyWrap(9, 9);\n";

#[test]
fn stages_in_one_process_and_applies_in_another() {
    let ws = workspace(&[("src/a.ts", A_TS), ("src/b.ts", B_TS)]);
    let out = staged(
        ws.path(),
        &["--json", "ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "src"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let preview = json(&out);
    assert_eq!(preview["isError"], false);
    assert_eq!(preview["pending"]["label"], "AST Edit: 2 replacements in 2 files");
    assert_eq!(preview["details"]["totalReplacements"], 2);
    assert!(preview["text"].as_str().unwrap().contains("NOT"), "{}", preview["text"]);
    assert_eq!(
        preview.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["details", "isError", "pending", "text"]
    );
    // Nothing was written by the preview.
    assert_eq!(read(ws.path(), "src/a.ts"), A_TS);

    let out = staged(
        ws.path(),
        &[
            "--json",
            "resolve",
            "apply",
            "--reason",
            "swap is intended",
            "--extra",
            r#"{"ticket":"T-1"}"#,
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let res = json(&out);
    assert_eq!(res["text"], "Applied 2 replacements in 2 files.");
    assert_eq!(res["details"]["extra"]["ticket"], "T-1");
    assert_eq!(res["details"]["sourceResultDetails"]["totalReplacements"], 2);
    assert_eq!(res["pending"], serde_json::Value::Null);
    assert_eq!(read(ws.path(), "src/a.ts"), A_TS.replace("legacyWrap(x, 1)", "modernWrap(1, x)"));
    assert_eq!(read(ws.path(), "src/b.ts"), "const z = modernWrap(9, 9);\n");
}

#[test]
fn resolves_in_lifo_order_across_processes() {
    let ws = workspace(&[("a.ts", "first(1);\n"), ("b.ts", "second(2);\n")]);
    assert_eq!(code(&staged(ws.path(), &["ast-edit", "--op", "first($A)", "one($A)", "a.ts"])), 0);
    assert_eq!(code(&staged(ws.path(), &["ast-edit", "--op", "second($A)", "two($A)", "b.ts"])), 0);
    let ids = pending_ids(ws.path());
    assert_eq!(ids.len(), 2);
    assert!(ids[0].ends_with(":1") && ids[1].ends_with(":0"), "{ids:?}");

    let out = staged(ws.path(), &["resolve", "discard", "--reason", "not the second"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("Discard: 1 replacement in 1 file"), "{}", stdout(&out));
    assert_eq!(read(ws.path(), "b.ts"), "second(2);\n");
    assert_eq!(pending_ids(ws.path()), [ids[1].clone()]);

    let out = staged(ws.path(), &["resolve", "apply", "--reason", "the first is right"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Accept: 1 replacement in 1 file"), "{text}");
    assert!(text.contains("⟦AST Edit⟧"), "{text}");
    assert!(text.contains("Applied 1 replacement in 1 file."), "{text}");
    assert_eq!(read(ws.path(), "a.ts"), "one(1);\n");
    assert!(pending_ids(ws.path()).is_empty());
}

#[test]
fn a_stale_preview_writes_nothing_and_exits_1() {
    let ws = workspace(&[("src/a.ts", A_TS), ("src/b.ts", B_TS)]);
    assert_eq!(
        code(&staged(
            ws.path(),
            &["ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "src"]
        )),
        0
    );
    let changed = "const z = otherWrap(9, 9);\n";
    std::fs::write(ws.path().join("src/b.ts"), changed).unwrap();
    let out = staged(ws.path(), &["--json", "resolve", "apply", "--reason", "ok"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let res = json(&out);
    assert_eq!(res["isError"], true);
    let text = res["text"].as_str().unwrap();
    assert!(
        text.starts_with("Preview is stale / no longer matches; no replacements were applied."),
        "{text}"
    );
    assert_eq!(read(ws.path(), "src/a.ts"), A_TS, "nothing written, not even the unchanged file");
    assert_eq!(read(ws.path(), "src/b.ts"), changed);
    // A stale apply consumes the preview (it is an error *result*).
    assert!(pending_ids(ws.path()).is_empty());
}

#[test]
fn two_concurrent_applies_apply_exactly_once() {
    for round in 0..3 {
        let files: Vec<(String, String)> = (0..200)
            .map(|i| (format!("src/f{i:03}.ts"), format!("legacyWrap({i}, {round});\n")))
            .collect();
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let ws = workspace(&refs);
        assert_eq!(
            code(&staged(
                ws.path(),
                &["ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "src"]
            )),
            0
        );
        let spawn = || {
            std::process::Command::new(common::staged_bin())
                .args(["--json", "resolve", "apply", "--reason", "race"])
                .current_dir(ws.path())
                .env("NO_COLOR", "1")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (one, two) = (spawn(), spawn());
        let outs = [one.wait_with_output().unwrap(), two.wait_with_output().unwrap()];
        let codes: Vec<i32> = outs.iter().map(code).collect();
        let applied = outs
            .iter()
            .filter(|o| json(o)["text"] == "Applied 200 replacements in 200 files.")
            .count();
        assert_eq!(
            applied,
            1,
            "codes {codes:?}: {:?}",
            outs.iter().map(stdout).collect::<Vec<_>>()
        );
        assert!(codes.contains(&0) && codes.contains(&1), "{codes:?}");
        for (i, (path, _)) in files.iter().enumerate() {
            assert_eq!(read(ws.path(), path), format!("modernWrap({round}, {i});\n"));
        }
    }
}

#[test]
fn no_matches_is_success_and_stages_nothing() {
    let ws = workspace(&[("a.ts", "x(1);\n")]);
    let out = staged(ws.path(), &["ast-edit", "--op", "nothing($A)", "y($A)", "a.ts"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("No replacements made"));
    assert!(pending_ids(ws.path()).is_empty());
}

#[test]
fn bad_input_is_a_one_line_error_with_exit_2_and_changes_nothing() {
    let ws = workspace(&[("a.ts", "x(1);\n")]);
    assert_eq!(code(&staged(ws.path(), &["ast-edit", "--op", "x($A)", "y($A)", "a.ts"])), 0);
    let before = pending_ids(ws.path());
    let cases: [(&[&str], &str); 8] = [
        (
            &["ast-edit", "--op", "x(", "y", "a.ts"],
            "Invalid pattern: x(: not valid typescript code",
        ),
        (&["ast-grep", "--pattern", "class {", "a.ts"], "Invalid pattern: class {"),
        (
            &["ast-edit", "--op", "x($A)", "y($A)", "--lang", "brainfuck", "a.ts"],
            "Unsupported language 'brainfuck'. Supported:",
        ),
        (&["ast-edit", "--op", "x($A)", "y($A)", "missing.ts"], "Path not found"),
        (&["ast-edit", "--op", "x($A)", "y($A)", "../outside.ts"], "outside"),
        (
            &["resolve", "apply", "--reason", "r", "--extra", "{not json"],
            "--extra is not valid JSON",
        ),
        (
            &["resolve", "apply", "--reason", "r", "--extra", "[1]"],
            "--extra must be a JSON object, not an array",
        ),
        (
            &["ast-grep", "--pattern", "x($A)", "--lang", "cobol", "a.ts"],
            "Unsupported language 'cobol'",
        ),
    ];
    for (args, message) in cases {
        let out = staged(ws.path(), args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.contains(message), "{args:?}: {err}");
    }
    assert_eq!(pending_ids(ws.path()), before);
    assert_eq!(read(ws.path(), "a.ts"), "x(1);\n");
    // Usage errors are exit 2 as well.
    assert_eq!(code(&staged(ws.path(), &["resolve", "keep", "--reason", "r"])), 2);
    assert_eq!(code(&staged(ws.path(), &["ast-edit", "a.ts"])), 2);
}

#[test]
fn a_corrupt_database_is_a_clear_error_and_is_left_alone() {
    let ws = workspace(&[("a.ts", "x(1);\n")]);
    std::fs::create_dir(ws.path().join(".staged")).unwrap();
    std::fs::write(ws.path().join(".staged/staged.db"), vec![7u8; 4096]).unwrap();
    let out = staged(ws.path(), &["pending"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("staged.db: file is not a database"), "{}", stderr(&out));
    assert_eq!(std::fs::read(ws.path().join(".staged/staged.db")).unwrap(), vec![7u8; 4096]);
}

#[test]
fn nothing_to_apply_exits_1_and_nothing_to_discard_exits_0() {
    let ws = workspace(&[("a.ts", "x(1);\n")]);
    let out = staged(ws.path(), &["resolve", "apply", "--reason", "r"]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("No pending action to resolve. Nothing to apply or discard."));
    assert!(stdout(&out).contains("Failed: nothing pending"), "{}", stdout(&out));
    let out = staged(ws.path(), &["resolve", "discard", "--reason", "r"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("Nothing to discard; no pending action remains."));
}

#[test]
fn show_prints_the_diff_of_the_head_or_of_an_id() {
    let ws = workspace(&[("a.ts", "first(1);\n"), ("b.ts", "second(2);\n")]);
    staged(ws.path(), &["ast-edit", "--op", "first($A)", "one($A)", "a.ts"]);
    staged(ws.path(), &["ast-edit", "--op", "second($A)", "two($A)", "b.ts"]);
    let ids = pending_ids(ws.path());
    let out = staged(ws.path(), &["show"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("+two(2);"), "{}", stdout(&out));
    let out = staged(ws.path(), &["--json", "show", &ids[1]]);
    let shown = json(&out);
    assert_eq!(shown["id"], ids[1].as_str());
    assert!(shown["diff"].as_str().unwrap().contains("+one(1);"));
    assert_eq!(shown["source"], "ast_edit");
    let out = staged(ws.path(), &["show", "pending-action:ast_edit:99"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no pending preview has id `pending-action:ast_edit:99`"));
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let ws = workspace(&[("a.ts", "x(1);\n".repeat(5000).as_str())]);
    let mut child = std::process::Command::new(common::staged_bin())
        .args(["ast-grep", "--pattern", "x($A)", "a.ts"])
        .current_dir(ws.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn the_workspace_is_the_nearest_root_and_can_be_given() {
    let ws = workspace(&[("pkg/src/a.ts", "x(1);\n")]);
    let out = common::staged(
        &ws.path().join("pkg/src"),
        &["--json", "ast-edit", "--op", "x($A)", "y($A)", "a.ts"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(ws.path().join(".staged/staged.db").exists());
    let elsewhere = tempfile::tempdir().unwrap();
    let root = ws.path().to_str().unwrap();
    assert_eq!(
        common::staged(elsewhere.path(), &["--workspace", root, "--json", "pending"]).status.code(),
        Some(0)
    );
    assert_eq!(pending_ids(ws.path()).len(), 1);
}

#[test]
fn a_locked_database_is_a_clear_error_and_nothing_is_staged() {
    let ws = workspace(&[("a.ts", "x(1);\n")]);
    // Staging (then discarding) creates the database; a search that matches nothing would not.
    let created = staged(ws.path(), &["ast-edit", "--op", "x($A)", "y($A)", "a.ts"]);
    assert_eq!(code(&created), 0, "creates the database: {}", stderr(&created));
    let discarded = staged(ws.path(), &["resolve", "discard", "--reason", "only the database"]);
    assert_eq!(code(&discarded), 0, "{}", stderr(&discarded));
    // Another process holds the write lock for longer than staged waits.
    let conn = rusqlite::Connection::open(ws.path().join(".staged/staged.db")).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    let out = staged(ws.path(), &["ast-edit", "--op", "x($A)", "y($A)", "a.ts"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("staged.db: database is locked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    conn.execute_batch("ROLLBACK;").unwrap();
    assert!(pending_ids(ws.path()).is_empty());
    assert_eq!(read(ws.path(), "a.ts"), "x(1);\n");
}

#[test]
fn a_workspace_where_state_cannot_be_written_is_a_clear_error() {
    let ws = workspace(&[("a.ts", "x(1);\n")]);
    // `.staged` cannot be created (a file is in the way), as in a read-only workspace.
    std::fs::write(ws.path().join(".staged"), "not a folder").unwrap();
    let out = staged(ws.path(), &["ast-edit", "--op", "x($A)", "y($A)", "a.ts"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out).trim_end(),
        format!(
            "error: Refusing the state folder {}: it is not a directory",
            ws.path().canonicalize().unwrap().join(".staged").display()
        )
    );
    assert_eq!(read(ws.path(), "a.ts"), "x(1);\n");
}
