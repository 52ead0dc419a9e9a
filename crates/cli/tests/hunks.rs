//! Applying part of a preview through the real binary (issue 24, items 1 and 2): hunks as
//! `staged show` numbers them (`--only FILE:N`, `--except`, `extra.hunks` over `--extra` and
//! MCP), folders and globs, the remainder's label and diff, the log entry and the Accept
//! block of what was written, stale files, undo of a partial apply, and the input errors
//! (exit 2, nothing written, nothing logged).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod mcp_process;

use std::{
    io::Write,
    path::Path,
    process::{Command, Stdio},
};

use common::{code, json, pending_ids, read, staged, staged_bin, stderr, stdout, workspace};
use serde_json::{Value, json};

#[track_caller]
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = staged(dir, args);
    assert_eq!(code(&out), 0, "staged {args:?}: {}{}", stdout(&out), stderr(&out));
    stdout(&out)
}

/// A file with `foo(N)` on line 1 and line 20: its rewrite has two hunks.
fn two_hunks(a: u32, b: u32) -> String {
    let middle: String = (2..20).map(|i| format!("keep({i});\n")).collect();
    format!("foo({a});\n{middle}foo({b});\n")
}

fn stage(dir: &Path, paths: &[&str]) -> String {
    let mut args = vec!["--json", "ast-edit", "--op", "foo($A)", "bar($A)"];
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

fn shown(dir: &Path) -> Value {
    json(&staged(dir, &["--json", "show"]))
}

/// Runs `staged` with `input` on stdin.
fn staged_in(dir: &Path, args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = Command::new(staged_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn show_numbers_the_hunks_that_only_names() {
    let ws = workspace(&[("a.ts", &two_hunks(1, 2)), ("b.ts", "foo(3);\n")]);
    let dir = ws.path();
    stage(dir, &["."]);
    let numbered = ok(dir, &["show", "--hunks"]);
    for note in
        ["@@ -1,4 +1,4 @@ [hunk 1 of 2]", "@@ -17,4 +17,4 @@ [hunk 2 of 2]", "[hunk 1 of 1]"]
    {
        assert!(numbered.contains(note), "{note} in {numbered}");
    }
    // Piped without --hunks, the diff is byte for byte the preview's.
    let plain = ok(dir, &["show"]);
    assert!(!plain.contains("[hunk"), "{plain}");
    assert!(plain.contains(shown(dir)["diff"].as_str().unwrap()), "{plain}");
}

#[test]
fn only_file_hunk_writes_that_hunk_and_leaves_the_rest_pending() {
    let ws = workspace(&[("a.ts", &two_hunks(1, 2)), ("b.ts", "foo(3);\n")]);
    let dir = ws.path();
    let id = stage(dir, &["."]);
    let whole = shown(dir)["diff"].as_str().unwrap().to_owned();

    let out = ok(dir, &["resolve", "apply", "--only", "a.ts:2", "--reason", "the second call"]);
    let pending = pending_ids(dir);
    assert_eq!(pending.len(), 1);
    assert_ne!(pending[0], id, "the rest is a new preview");
    // Only hunk 2 was written.
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2).replace("foo(2)", "bar(2)"));
    assert_eq!(read(dir, "b.ts"), "foo(3);\n");
    // The Accept block and the result name what was written, and what is left.
    assert!(out.contains("Accept: 1 replacement in 1 file ⟦AST Edit⟧"), "{out}");
    assert!(!out.contains("AST Edit: 3 replacements in 2 files"), "{out}");
    assert!(
        out.contains(&format!(
            "Applied 1 replacement in 1 file (a.ts: hunk 2 of 2). The rest stays pending as the newest preview: AST Edit: 2 replacements in 2 files ({}).",
            pending[0]
        )),
        "{out}"
    );

    // The remainder: its label, and a diff of exactly what is left, on the file as it is now.
    let rest = shown(dir);
    assert_eq!(rest["label"], "AST Edit: 2 replacements in 2 files");
    let rest_diff = rest["diff"].as_str().unwrap();
    assert!(rest_diff.contains("-foo(1);\n+bar(1);\n"), "{rest_diff}");
    assert!(rest_diff.contains("diff --git a/b.ts b/b.ts"), "{rest_diff}");
    assert!(!rest_diff.contains("foo(2)"), "{rest_diff}");
    assert!(!rest_diff.contains("bar(2)"), "{rest_diff}");

    // The log: the label and diff of what was written, and the selection as the reason's.
    let entry = &log(dir)[0];
    assert_eq!(entry["outcome"], "applied");
    assert_eq!(entry["id"].as_str().unwrap(), id);
    assert_eq!(entry["label"], "AST Edit: 1 replacement in 1 file");
    assert_eq!(entry["reason"], "the second call");
    assert_eq!(entry["extra"], json!({"hunks": {"a.ts": [2]}}));
    let diff = entry["diff"].as_str().unwrap();
    assert!(diff.contains("-foo(2);\n+bar(2);\n") && !diff.contains("foo(1)"), "{diff}");
    assert!(!diff.contains("b.ts"), "{diff}");
    assert_eq!(entry["files"].as_array().unwrap().len(), 1);
    assert!(whole.contains(diff.lines().last().unwrap()));

    // The rest applies later, and both applies together are the whole preview.
    ok(dir, &["resolve", "apply", "--reason", "the rest"]);
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2).replace("foo", "bar"));
    assert_eq!(read(dir, "b.ts"), "bar(3);\n");
    assert!(pending_ids(dir).is_empty());

    // Each undo reverts exactly what its apply wrote: the rest, then hunk 2.
    ok(dir, &["undo", "2", "--yes"]);
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2).replace("foo(2)", "bar(2)"));
    assert_eq!(read(dir, "b.ts"), "foo(3);\n");
    ok(dir, &["undo", "1", "--yes"]);
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2));
}

#[test]
fn an_undo_of_a_hunk_apply_reverts_only_that_hunk() {
    let ws = workspace(&[("a.ts", &two_hunks(1, 2)), ("b.ts", "foo(3);\n")]);
    let dir = ws.path();
    stage(dir, &["."]);
    ok(dir, &["resolve", "apply", "--only", "a.ts:1", "--reason", "first"]);
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2).replace("foo(1)", "bar(1)"));
    // The rest (hunk 2 of a.ts, and b.ts) was promised on the file with hunk 1 written:
    // reverting that would make it stale in silence, so the undo is refused and names it
    // (issue 32, finding 23).
    let rest = pending_ids(dir);
    assert_eq!(rest.len(), 1);
    let out = staged(dir, &["undo", "--yes"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert_eq!(
        stdout(&out).trim_end(),
        format!(
            "Log entry 1 (AST Edit: 1 replacement in 1 file) was not reverted: a.ts has a pending preview, {} (AST Edit: 2 replacements in 2 files), made against the file as it is now, which reverting would change (the rest of a partial apply is such a preview). Resolve it first (apply or discard it), then revert again. Nothing was written.",
            rest[0]
        )
    );
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2).replace("foo(1)", "bar(1)"));
    assert_eq!(pending_ids(dir), rest);
    // Once the rest is resolved, the undo reverts only hunk 1.
    ok(dir, &["resolve", "apply", "--only", "b.ts", "--reason", "b only"]);
    ok(dir, &["resolve", "discard", "--reason", "not hunk 2"]);
    assert!(pending_ids(dir).is_empty());
    ok(dir, &["undo", "--yes", "1"]);
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2));
    assert_eq!(read(dir, "b.ts"), "bar(3);\n");
}

#[test]
fn a_hunk_apply_on_a_changed_file_writes_nothing() {
    let ws = workspace(&[("a.ts", &two_hunks(1, 2)), ("b.ts", "foo(3);\n")]);
    let dir = ws.path();
    stage(dir, &["."]);
    let edited = two_hunks(1, 2).replace("keep(10)", "keep(100)");
    std::fs::write(dir.join("a.ts"), &edited).unwrap();
    let out = staged(dir, &["resolve", "apply", "--only", "a.ts:1", "b.ts", "--reason", "part"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("Preview is stale / no longer matches"), "{}", stdout(&out));
    assert_eq!(read(dir, "a.ts"), edited);
    assert_eq!(read(dir, "b.ts"), "foo(3);\n");
    assert!(pending_ids(dir).is_empty());
    assert_eq!(log(dir)[0]["outcome"], "stale");

    // A text preview's hunks: the same check, byte for byte.
    let ws = workspace(&[("t.txt", &two_hunks(1, 2))]);
    let dir = ws.path();
    let out = staged_in(dir, &["write", "t.txt"], two_hunks(5, 6).as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    std::fs::write(dir.join("t.txt"), two_hunks(1, 2) + "\n").unwrap();
    let out = staged(dir, &["resolve", "apply", "--only", "t.txt:2", "--reason", "part"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("Preview is stale / no longer matches"), "{}", stdout(&out));
    assert_eq!(read(dir, "t.txt"), two_hunks(1, 2) + "\n");
}

#[test]
fn a_text_preview_applies_hunk_by_hunk_and_the_rest_keeps_its_own_numbers() {
    // Three changed lines far apart: three hunks.
    let before: String = (0..40).map(|i| format!("line {i}\n")).collect();
    let after = before
        .replace("line 3\n", "LINE 3\n")
        .replace("line 20\n", "LINE 20\n")
        .replace("line 37\n", "LINE 37\n");
    let ws = workspace(&[("t.txt", &before)]);
    let dir = ws.path();
    let out = staged_in(dir, &["write", "t.txt"], after.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let id = pending_ids(dir)[0].clone();
    assert!(ok(dir, &["show", "--hunks"]).contains("[hunk 3 of 3]"));

    let out = ok(dir, &["resolve", "apply", "--except", "t.txt:2", "--reason", "not the middle"]);
    assert_eq!(read(dir, "t.txt"), after.replace("LINE 20\n", "line 20\n"));
    let rest_id = pending_ids(dir)[0].clone();
    assert_ne!(rest_id, id);
    assert!(out.contains("Accept: t.txt (+2 -2) ⟦Write⟧"), "{out}");
    assert!(
        out.contains(&format!(
            "Applied 1 file of Write: t.txt (rewritten, 40 lines) (t.txt: hunks 1 and 3 of 3). The rest stays pending as the newest preview: Write: t.txt (+1 -1) ({rest_id})."
        )),
        "{out}"
    );
    // The rest is one hunk now, numbered 1 in its own preview.
    let rest = ok(dir, &["show", "--hunks"]);
    assert!(rest.contains("[hunk 1 of 1]") && rest.contains("+LINE 20"), "{rest}");
    assert!(!rest.contains("LINE 3") && !rest.contains("LINE 37"), "{rest}");
    let entry = &log(dir)[0];
    assert_eq!(entry["label"], "Write: t.txt (+2 -2)");
    assert_eq!(entry["extra"], json!({"hunks": {"t.txt": [1, 3]}}));
    let diff = entry["diff"].as_str().unwrap();
    assert!(diff.contains("+LINE 3") && diff.contains("+LINE 37") && !diff.contains("+LINE 20"));

    // The same selection over --extra (the shape MCP takes): hunk 1 of the rest.
    ok(dir, &["resolve", "apply", "--extra", r#"{"hunks": {"t.txt": [1]}}"#, "--reason", "last"]);
    assert_eq!(read(dir, "t.txt"), after);
    assert!(pending_ids(dir).is_empty());
    // Undo the newest (the middle hunk), then the first apply (hunks 1 and 3).
    ok(dir, &["undo", "--yes"]);
    assert_eq!(read(dir, "t.txt"), after.replace("LINE 20\n", "line 20\n"));
    ok(dir, &["undo", "1", "--yes"]);
    assert_eq!(read(dir, "t.txt"), before);
}

#[test]
fn a_hunk_apply_over_mcp_uses_extra_hunks() {
    let ws = workspace(&[("a.ts", &two_hunks(1, 2)), ("b.ts", "foo(3);\n")]);
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
    let first =
        server.next()["result"]["structuredContent"]["pending"]["id"].as_str().unwrap().to_owned();
    // A hunk the file does not have: refused, nothing written, still pending.
    server.send_json(&call(
        2,
        "resolve",
        json!({"action": "apply", "reason": "x", "extra": {"hunks": {"a.ts": [3]}}}),
    ));
    let reply = server.next();
    let result = &reply["result"]["structuredContent"];
    assert_eq!(result["isError"], true, "{reply}");
    assert!(
        result["text"].as_str().unwrap().contains(
            "`a.ts` has 2 hunks (numbered from 1, as `staged show` prints them); there is no hunk 3. Nothing was applied; the preview is still pending."
        ),
        "{reply}"
    );
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2));
    server.send_json(&call(
        3,
        "resolve",
        json!({"action": "apply", "reason": "a's first", "extra": {"hunks": {"a.ts": [1]}}}),
    ));
    let reply = server.next();
    let result = &reply["result"]["structuredContent"];
    assert_eq!(result["isError"], false, "{reply}");
    let rest = result["pending"]["id"].as_str().unwrap().to_owned();
    assert_ne!(rest, first);
    assert_eq!(result["pending"]["label"], "AST Edit: 2 replacements in 2 files");
    assert_eq!(result["details"]["label"], "AST Edit: 1 replacement in 1 file", "{reply}");
    assert!(
        result["text"].as_str().unwrap().starts_with(&format!(
            "Applied 1 replacement in 1 file (a.ts: hunk 1 of 2). The rest stays pending as the newest preview: AST Edit: 2 replacements in 2 files ({rest})."
        )),
        "{reply}"
    );
    drop(server);
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2).replace("foo(1)", "bar(1)"));
    let entry = &log(dir)[0];
    assert_eq!(entry["frontEnd"], "mcp:raw");
    assert_eq!(entry["extra"], json!({"hunks": {"a.ts": [1]}}));
    assert_eq!(pending_ids(dir), [rest]);
}

#[test]
fn only_takes_folders_and_globs_and_except_leaves_paths_out() {
    let files = [
        ("a.ts", "foo(1);\n"),
        ("src/b.ts", "foo(2);\n"),
        ("src/deep/c.ts", "foo(3);\n"),
        ("lib/e.ts", "foo(5);\n"),
    ];
    // A folder (recursive), from the root.
    let ws = workspace(&files);
    let dir = ws.path();
    stage(dir, &["."]);
    let out = ok(dir, &["resolve", "apply", "--only", "src", "--reason", "src"]);
    assert!(out.contains("Accept: 2 replacements in 2 files ⟦AST Edit⟧"), "{out}");
    assert_eq!(read(dir, "src/deep/c.ts"), "bar(3);\n");
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    assert_eq!(shown(dir)["label"], "AST Edit: 2 replacements in 2 files");

    // A glob, typed from a subfolder: `*.ts` is that folder's direct children.
    let ws = workspace(&files);
    let dir = ws.path();
    stage(dir, &["."]);
    ok(&dir.join("src"), &["resolve", "apply", "--only", "*.ts", "--reason", "direct"]);
    assert_eq!(read(dir, "src/b.ts"), "bar(2);\n");
    assert_eq!(read(dir, "src/deep/c.ts"), "foo(3);\n");
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    // `**` recurses.
    let ws = workspace(&files);
    let dir = ws.path();
    stage(dir, &["."]);
    ok(dir, &["resolve", "apply", "--only", "src/**/*.ts", "--reason", "all of src"]);
    assert_eq!(read(dir, "src/b.ts"), "bar(2);\n");
    assert_eq!(read(dir, "src/deep/c.ts"), "bar(3);\n");
    assert_eq!(read(dir, "lib/e.ts"), "foo(5);\n");
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");

    // --except: everything but those; with --only, what --only names but those.
    let ws = workspace(&files);
    let dir = ws.path();
    stage(dir, &["."]);
    let out =
        ok(dir, &["resolve", "apply", "--except", "src/deep", "a.ts", "--reason", "not those"]);
    assert!(out.contains("Accept: 2 replacements in 2 files ⟦AST Edit⟧"), "{out}");
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    assert_eq!(read(dir, "src/deep/c.ts"), "foo(3);\n");
    assert_eq!(read(dir, "src/b.ts"), "bar(2);\n");
    assert_eq!(read(dir, "lib/e.ts"), "bar(5);\n");
    let rest = shown(dir);
    assert_eq!(rest["label"], "AST Edit: 2 replacements in 2 files");
    ok(dir, &["resolve", "apply", "--only", "**/*.ts", "--except", "a.ts", "--reason", "c"]);
    assert_eq!(read(dir, "src/deep/c.ts"), "bar(3);\n");
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    let entry = &log(dir)[0];
    assert_eq!(entry["extra"], json!({"files": ["src/deep/c.ts"]}));
}

/// Runs a resolve that must be refused as an input error: exit 2, the message on stderr,
/// nothing written, the same preview pending, nothing logged.
#[track_caller]
fn refused(dir: &Path, args: &[&str], message: &str) {
    let before_log = log(dir).len();
    let before_ids = pending_ids(dir);
    let before: Vec<String> = ["a.ts", "b.ts", "n.ts"]
        .iter()
        .map(|p| std::fs::read_to_string(dir.join(p)).unwrap_or_default())
        .collect();
    let mut full = vec!["resolve", "apply"];
    full.extend(args);
    full.extend(["--reason", "part"]);
    let out = staged(dir, &full);
    assert_eq!(code(&out), 2, "{args:?}: {}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    let after: Vec<String> = ["a.ts", "b.ts", "n.ts"]
        .iter()
        .map(|p| std::fs::read_to_string(dir.join(p)).unwrap_or_default())
        .collect();
    assert_eq!(before, after, "{args:?} wrote");
    assert_eq!(pending_ids(dir), before_ids, "{args:?}");
    assert_eq!(log(dir).len(), before_log, "{args:?} was logged");
}

#[test]
fn bad_selections_are_input_errors_that_write_nothing() {
    let ws = workspace(&[("a.ts", &two_hunks(1, 2)), ("b.ts", "foo(3);\n")]);
    let dir = ws.path();
    stage(dir, &["."]);
    refused(
        dir,
        &["--only", "a.ts:3"],
        "`a.ts` has 2 hunks (numbered from 1, as `staged show` prints them); there is no hunk 3.",
    );
    refused(dir, &["--only", "a.ts:0"], "there is no hunk 0");
    refused(dir, &["--only", "a.ts:2-1"], "`2-1` is not a range of hunk numbers");
    refused(dir, &["--only", "a.ts:1,1"], "hunk 1 of `a.ts` is named twice");
    refused(dir, &["--only", "a.ts:1-2", "a.ts:2"], "hunk 2 of `a.ts` is named twice");
    refused(dir, &["--only", "a.ts", "a.ts:1"], "`a.ts` is named whole and by hunk");
    refused(dir, &["--only", "*.ts:1"], "hunk numbers name hunks of one file");
    refused(dir, &["--except", "a.ts", "b.ts"], "--except leaves nothing of the preview to apply");
    refused(
        dir,
        &["--only", "a.ts:1", "--except", "a.ts:1"],
        "leaves nothing of the preview to apply",
    );
    refused(dir, &["--only", "nope.ts"], "--only nope.ts matches none of the 2 files of");
    refused(dir, &["--except", "src/*.ts"], "--except src/*.ts matches none of the 2 files of");
    refused(dir, &["--only", "a.ts", "--extra", r#"{"hunks": {"a.ts": [1]}}"#], "not both");
    // Over --extra (as a model sends it) the tool refuses it, and the preview stays pending.
    let out = staged(
        dir,
        &["resolve", "apply", "--extra", r#"{"hunks": {"a.ts": []}}"#, "--reason", "x"],
    );
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("gives no hunk number for `a.ts`"), "{}", stdout(&out));
    assert_eq!(read(dir, "a.ts"), two_hunks(1, 2));
    assert_eq!(pending_ids(dir).len(), 1);

    // A new file applies whole.
    let ws = workspace(&[("a.ts", "x\n")]);
    let dir = ws.path();
    let patch = "diff --git a/n.ts b/n.ts\nnew file mode 100644\n--- /dev/null\n+++ b/n.ts\n@@ -0,0 +1,2 @@\n+one\n+two\n";
    assert_eq!(code(&staged_in(dir, &["patch"], patch.as_bytes())), 0);
    refused(dir, &["--only", "n.ts:1"], "`n.ts` is a new file in this preview: it applies whole");
}

#[test]
fn a_path_that_matches_nothing_lists_ten_files_and_how_to_see_them_all() {
    let files: Vec<(String, String)> =
        (0..14).map(|i| (format!("src/f{i:02}.ts"), format!("foo({i});\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let ws = workspace(&refs);
    let dir = ws.path();
    let id = stage(dir, &["src"]);
    let out = staged(dir, &["resolve", "apply", "--only", "lib", "--reason", "x"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let listed: Vec<String> = (0..10).map(|i| format!("src/f{i:02}.ts")).collect();
    assert!(
        stderr(&out).contains(&format!(
            "--only lib matches none of the 14 files of {id}: {}, and 4 more (`staged show {id}` lists them all); nothing was applied",
            listed.join(", ")
        )),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("src/f10.ts"), "{}", stderr(&out));
    assert_eq!(pending_ids(dir), [id]);
    assert!(log(dir).is_empty(), "an input error is not a resolve outcome");
    assert_eq!(read(dir, "src/f00.ts"), "foo(0);\n");
}

#[test]
fn an_empty_only_or_except_path_is_an_input_error_not_everything() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    let dir = ws.path();
    let id = stage(dir, &["."]);
    for args in [
        &["resolve", "apply", "--only", "", "--reason", "r"][..],
        &["resolve", "apply", "--only", "a.ts", "  ", "--reason", "r"],
        &["resolve", "apply", "--except", "", "--reason", "r"],
    ] {
        let out = staged(dir, args);
        assert_eq!(code(&out), 2, "{args:?}: {}{}", stdout(&out), stderr(&out));
        assert!(stderr(&out).contains("got an empty path"), "{}", stderr(&out));
    }
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    assert_eq!(read(dir, "b.ts"), "foo(2);\n");
    assert_eq!(pending_ids(dir), [id]);
    assert!(log(dir).is_empty());
}

#[test]
fn a_partial_apply_with_nothing_pending_or_another_preview_on_top_resolves_nothing() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    let dir = ws.path();
    // Nothing pending: refused, nothing logged.
    let out = staged(dir, &["resolve", "apply", "--only", "a.ts", "--reason", "r"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("No pending action to resolve. Nothing to apply or discard."),
        "{}",
        stdout(&out)
    );
    // An older preview named while a newer one is on top: refused, naming the newest.
    let older = stage(dir, &["a.ts"]);
    let newer = stage(dir, &["b.ts"]);
    let out = staged(dir, &["resolve", "apply", "--id", &older, "--only", "a.ts", "--reason", "r"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("not {older}")) && text.contains(&newer), "{text}");
    assert!(text.contains("Nothing was applied or discarded."), "{text}");
    assert_eq!(read(dir, "a.ts"), "foo(1);\n");
    assert_eq!(pending_ids(dir), [newer, older]);
    assert!(log(dir).is_empty());
}

#[test]
fn the_rest_of_a_partial_apply_keeps_files_whose_names_hold_glob_characters() {
    let ws = workspace(&[
        ("a.ts", "foo(1);\n"),
        ("{{cookiecutter.name}}/m.ts", "foo(2);\n"),
        ("{b}.ts", "foo(3);\n"),
        ("[id]/c,d.ts", "foo(4);\n"),
    ]);
    let dir = ws.path();
    stage(dir, &["."]);
    ok(dir, &["resolve", "apply", "--only", "a.ts", "--reason", "one"]);
    assert_eq!(pending_ids(dir).len(), 1);
    let applied = ok(dir, &["resolve", "apply", "--reason", "the rest"]);
    assert!(applied.contains("3 replacements in 3 files"), "{applied}");
    assert_eq!(read(dir, "{{cookiecutter.name}}/m.ts"), "bar(2);\n");
    assert_eq!(read(dir, "{b}.ts"), "bar(3);\n");
    assert_eq!(read(dir, "[id]/c,d.ts"), "bar(4);\n");
    assert!(pending_ids(dir).is_empty());
}

#[test]
fn a_pick_of_many_hunks_is_one_range_in_the_result() {
    // 50,000 hunks, every one but the first applied: picking them once took time quadratic in
    // the hunks (minutes here), and the result listed every number (issue 32, finding 12).
    let n = 50_000;
    let text: String = (0..n).map(|_| "foo\nx\nx\nx\nx\nx\nx\nx\n").collect();
    let ws = workspace(&[("a.txt", &text)]);
    ok(ws.path(), &["edit", "--all", "--old", "foo", "--new", "bar", "a.txt"]);
    let out = ok(ws.path(), &["resolve", "--reason", "most", "apply", "--except", "a.txt:1"]);
    let applied = out.lines().find(|l| l.starts_with("Applied")).unwrap();
    let rest = pending_ids(ws.path());
    assert_eq!(
        applied,
        format!(
            "Applied 1 file of Edit: a.txt ({n} replacements) (a.txt: hunks 2-{n} of {n}). The rest stays pending as the newest preview: Edit: a.txt (+1 -1) ({}).",
            rest[0]
        )
    );
    let written = read(ws.path(), "a.txt");
    assert!(written.starts_with("foo\nx\n"));
    assert_eq!(written.matches("bar\n").count(), n - 1);
}
