//! Bulk rewrites through the real binary never leave sites out silently (issue 23): a cap says
//! what it left out and how to lift it, a nested match that cannot compose affects only the
//! matches involved, files with parse errors are counted (and, when asked, rewritten where the
//! match holds no error), blank lines stay blank, and the pattern picks the language.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{code, json, read, staged, stderr, stdout, workspace};

fn last_line(text: &str) -> &str {
    text.trim_end().lines().last().unwrap_or("")
}

#[test]
fn a_capped_rewrite_says_what_it_left_out_and_the_flag_that_lifts_the_cap() {
    let two = "foo(1);\nfoo(2);\n";
    let ws = workspace(&[("a.ts", two), ("b.ts", two), ("c.ts", two)]);
    let out =
        staged(ws.path(), &["ast-edit", "--max-files", "1", "--op", "foo($A)", "bar($A)", "."]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        last_line(&stdout(&out)),
        "Capped by `--max-files` 1: 2 more files with 4 replacements were left out; raise `--max-files` (or leave it out) to include them."
    );
    // One pending preview per file: each preview is discarded before the next.
    staged(ws.path(), &["resolve", "discard", "--reason", "next"]);
    let out = staged(
        ws.path(),
        &["--json", "ast-edit", "--limit", "3", "--op", "foo($A)", "bar($A)", "."],
    );
    let res = json(&out);
    assert_eq!(
        res["pending"]["label"],
        "AST Edit: 3 replacements in 2 files (capped by `--limit`: 3 more replacements left out)"
    );
    assert_eq!(
        last_line(res["text"].as_str().unwrap()),
        "Capped by `--limit` 3: 3 more replacements in 2 files were left out; raise `--limit` (or leave it out) to include them."
    );
    assert_eq!(
        res["details"]["leftOut"],
        serde_json::json!({"cap": "limit", "value": 3, "files": 2, "replacements": 3, "exact": true, "lift": "--limit"})
    );
    staged(ws.path(), &["resolve", "discard", "--reason", "next"]);
    // Over the tool (what a model calls), the parameter is named.
    let args = r#"{"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["."], "max_files": 2}"#;
    let out = staged(ws.path(), &["--json", "tool", "ast_edit", "--args", args]);
    let res = json(&out);
    assert_eq!(
        res["pending"]["label"],
        "AST Edit: 4 replacements in 2 files (capped by `max_files`: 1 more file left out)"
    );
    assert!(
        res["text"].as_str().unwrap().contains(
            "\n\nCapped by `max_files` 2: 1 more file with 2 replacements was left out; raise `max_files` to include it."
        ),
        "{}",
        res["text"]
    );
}

#[test]
fn the_command_line_does_not_cap_a_bulk_rewrite_by_default() {
    // More files than the tool's default cap of 1000: a person gets all of them.
    let files: Vec<(String, &str)> =
        (0..1003).map(|i| (format!("f{i:04}.ts"), "foo(1);\n")).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let ws = workspace(&refs);
    let out = staged(ws.path(), &["--json", "ast-edit", "--op", "foo($A)", "bar($A)", "."]);
    let res = json(&out);
    assert_eq!(res["pending"]["label"], "AST Edit: 1003 replacements in 1003 files");
    assert_eq!(res["details"]["limitReached"], false);
    staged(ws.path(), &["resolve", "discard", "--reason", "next"]);
    // A model still gets the default cap, and is told.
    let args = r#"{"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["."]}"#;
    let out = staged(ws.path(), &["--json", "tool", "ast_edit", "--args", args]);
    let res = json(&out);
    assert_eq!(
        res["pending"]["label"],
        "AST Edit: 1000 replacements in 1000 files (capped by `max_files`: 3 more files left out)"
    );
}

#[test]
fn a_nested_match_that_cannot_compose_leaves_only_the_matches_involved() {
    // The issue's reproduction composes: the statement's `;` is not part of the match.
    let ws = workspace(&[("a.js", "var a = function(){ var b = 1; };\nvar c = 2;\n")]);
    let out =
        staged(ws.path(), &["--json", "ast-edit", "--op", "var $A = $B", "let $A = $B", "a.js"]);
    assert_eq!(json(&out)["pending"]["label"], "AST Edit: 3 replacements in 1 file");
    let out = staged(ws.path(), &["resolve", "apply", "--reason", "let everywhere"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(ws.path(), "a.js"), "let a = function(){ let b = 1; };\nlet c = 2;\n");

    // `y * 2 * 2`: once the inner `y * 2` is `y << 1`, the outer is `y << 1 * 2`, a shift: it
    // is rewritten alone, as ast-grep does; the independent match beside it is not affected.
    let ws = workspace(&[("b.js", "let x = y * 2 * 2;\nlet z = w * 2;\n")]);
    let out = staged(ws.path(), &["ast-edit", "--op", "$A * 2", "$A << 1", "b.js"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Nested matches left as they were:\n- b.js:1:9: 1 nested match left as it was: the outer rewrite replaced it (at 1:9), since `$A * 2` no longer matches there once it is rewritten. Stage the same rewrite again once this one is applied to rewrite it.\n"),
        "{text}"
    );
    assert!(!text.contains("Parse issues"), "{text}");
    assert!(text.contains("Staged pending-action:ast_edit:0: 2 replacements in 1 file."), "{text}");
    staged(ws.path(), &["resolve", "apply", "--reason", "shift"]);
    assert_eq!(read(ws.path(), "b.js"), "let x = y * 2 << 1;\nlet z = w << 1;\n");

    // A rewrite that drops a statement's `;` breaks the block around it: the hint says so.
    let ws = workspace(&[("m.rs", "fn f() {\n    let a = { let b = 1; b };\n    let c = 2;\n}\n")]);
    let out = staged(
        ws.path(),
        &["--json", "ast-edit", "--op", "let $A = $B;", "let mut $A = $B", "m.rs"],
    );
    let res = json(&out);
    assert_eq!(
        res["details"]["notes"][0],
        "Nested matches left as they were:\n- m.rs:2:5: 1 nested match left as it was: the outer rewrite replaced it (at 2:15), since `let $A = $B;` no longer matches there once it is rewritten. Hint: the rewrite drops the `;` that ends the nested statement; end both the pattern and the rewrite with `;`."
    );
    assert_eq!(
        res["details"]["nestedLeft"][0]["inner"],
        serde_json::json!([{"line": 2, "column": 15}])
    );
}

/// A file with a syntax error: the second match's node holds it, the first one's does not.
const BROKEN_RS: &str =
    "fn ok() {\n    a.unwrap();\n}\nfn g() {\n    let v = f(1 +).unwrap();\n}\n";

#[test]
fn files_with_parse_errors_are_searched_counted_and_rewritten_only_when_asked() {
    let ws = workspace(&[("good.rs", "fn f() { x.unwrap(); }\n"), ("bad.rs", BROKEN_RS)]);
    // A search finds the matches in the broken file too, and marks them.
    let out = staged(ws.path(), &["ast-grep", "--pattern", "$X.unwrap()", "."]);
    let text = stdout(&out);
    assert!(
        text.starts_with("3 matches in 2 files\n\nbad.rs:2:5 (file has parse errors)\n"),
        "{text}"
    );
    assert!(text.contains("\n\ngood.rs:1:10\n"), "{text}");
    assert_eq!(
        last_line(&text),
        "1 file with matches has parse errors: their matches are marked (file has parse errors), and ast-edit skips such files unless given `--include-parse-errors`."
    );
    // A rewrite keeps the reference's rule, and says so in its last line.
    let out = staged(ws.path(), &["ast-edit", "--op", "$X.unwrap()", "$X.expect(\"x\")", "."]);
    let text = stdout(&out);
    assert!(
        text.contains("Parse issues:\n- bad.rs: parse error (syntax tree contains error nodes)\n"),
        "{text}"
    );
    assert_eq!(
        last_line(&text),
        "1 file with parse errors was skipped (see Parse issues); pass `--include-parse-errors` to rewrite the matches in it that hold no error."
    );
    staged(ws.path(), &["resolve", "discard", "--reason", "try again"]);
    // Asked, it rewrites the matches whose node holds no error, and lists the file.
    let out = staged(
        ws.path(),
        &["ast-edit", "--include-parse-errors", "--op", "$X.unwrap()", "$X.expect(\"x\")", "."],
    );
    let text = stdout(&out);
    assert!(
        text.contains("Files with parse errors, rewritten only where the match holds no error:\n- bad.rs (1 replacement; 1 match left alone: it holds a parse error)\n"),
        "{text}"
    );
    let out = staged(ws.path(), &["resolve", "apply", "--reason", "expect"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(ws.path(), "bad.rs"), BROKEN_RS.replacen("a.unwrap()", "a.expect(\"x\")", 1));
    assert_eq!(read(ws.path(), "good.rs"), "fn f() { x.expect(\"x\"); }\n");
}

#[test]
fn a_rewrite_never_adds_whitespace_to_a_blank_line() {
    let src = "fn main() {\n    tokio::spawn(async move {\n        let a = 1;\n\n        work(a).await;\n\n    });\n}\n";
    let ws = workspace(&[("main.rs", src)]);
    let out = staged(
        ws.path(),
        &["ast-edit", "--op", "tokio::spawn($A)", "tokio::task::spawn(\n    $A\n)", "main.rs"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    staged(ws.path(), &["resolve", "apply", "--reason", "task"]);
    let after = read(ws.path(), "main.rs");
    assert_eq!(
        after,
        "fn main() {\n    tokio::task::spawn(\n        async move {\n            let a = 1;\n\n            work(a).await;\n\n        }\n    );\n}\n"
    );
    assert!(after.lines().all(|l| l.is_empty() || !l.trim().is_empty()), "{after:?}");
}

#[test]
fn the_pattern_picks_the_language_among_those_of_the_paths() {
    let ws = workspace(&[
        ("src/a.js", "var started = Date.now();\n"),
        ("tsconfig.json", "{\"compilerOptions\": {}}\n"),
        ("README.md", "# var x = 1\n"),
    ]);
    let out = staged(ws.path(), &["--json", "ast-edit", "--op", "var $A = $B", "let $A = $B", "."]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let res = json(&out);
    assert_eq!(res["pending"]["label"], "AST Edit: 1 replacement in 1 file");
    assert!(
        res["text"].as_str().unwrap().ends_with(
            "\n\nLanguage: javascript, the one language of these paths the pattern is meant for; left out: json (1 file), markdown (1 file) (pass `--lang` to rewrite another)."
        ),
        "{}",
        res["text"]
    );
    assert!(!res["text"].as_str().unwrap().contains("Parse issues"), "{}", res["text"]);
    staged(ws.path(), &["resolve", "discard", "--reason", "only checking"]);

    // Several code languages fit: refused, naming them.
    std::fs::write(ws.path().join("src/b.ts"), "var n: number = 1;\n").unwrap();
    let out = staged(ws.path(), &["ast-edit", "--op", "var $A = $B", "let $A = $B", "."]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out).trim_end(),
        "error: these paths hold files in 2 languages: javascript (1 file), typescript (1 file); pass --lang with the one to rewrite"
    );

    // A search over them reports nothing for the languages the pattern is not meant for.
    let out = staged(ws.path(), &["ast-grep", "--pattern", "$A.indexOf($B) !== -1", "."]);
    assert_eq!(stdout(&out), "No matches found\n");
    let out = staged(ws.path(), &["ast-grep", "--pattern", "Date.now()", "."]);
    let text = stdout(&out);
    assert!(text.starts_with("1 match in 1 file\n\nsrc/a.js:1:15\n"), "{text}");
    assert!(!text.contains("Parse issues") && !text.contains("Multiple AST nodes"), "{text}");
}

/// Runs `staged` in `dir` under an open-file limit of 256, soft and hard: raising the soft
/// limit cannot help, so the work must not hold a descriptor per file (issue 32, finding 11).
fn staged_under_256_files(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let script = r#"ulimit -n 256 && [ "$(ulimit -Hn)" = 256 ] || exit 99; exec "$0" "$@""#;
    std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(common::staged_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn applies_and_undos_of_more_files_than_the_open_file_limit_succeed() {
    // 1,200 files to rewrite (600 in one folder, 600 each in a folder of its own), 400 to
    // create in new folders and 400 to delete: all under a hard limit of 256 descriptors.
    let mut files: Vec<(String, &str)> = Vec::new();
    for i in 0..600 {
        files.push((format!("f{i:04}.ts"), "foo(1);\n"));
        files.push((format!("pkg/p{i:04}/index.ts"), "foo(2);\n"));
    }
    for i in 0..400 {
        files.push((format!("old/o{i:04}.ts"), "gone();\n"));
    }
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let ws = workspace(&refs);
    let run = |args: &[&str]| {
        let out = staged_under_256_files(ws.path(), args);
        assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
        stdout(&out)
    };
    run(&["ast-edit", "--op", "foo($A)", "bar($A)", "."]);
    assert_eq!(
        last_line(&run(&["resolve", "--reason", "many", "apply"])),
        "Applied 1200 replacements in 1200 files."
    );
    assert_eq!(read(ws.path(), "f0599.ts"), "bar(1);\n");
    assert_eq!(read(ws.path(), "pkg/p0599/index.ts"), "bar(2);\n");
    run(&["undo", "--yes"]);
    assert_eq!(read(ws.path(), "f0000.ts"), "foo(1);\n");
    assert_eq!(read(ws.path(), "pkg/p0599/index.ts"), "foo(2);\n");

    let mut patch = String::from("*** Begin Patch\n");
    for i in 0..400 {
        patch.push_str(&format!("*** Add File: new/n{i:04}/a.ts\n+made({i});\n"));
        patch.push_str(&format!("*** Delete File: old/o{i:04}.ts\n"));
    }
    patch.push_str("*** End Patch\n");
    std::fs::write(ws.path().join("many.patch"), patch).unwrap();
    run(&["patch", "many.patch"]);
    run(&["resolve", "--reason", "many", "apply"]);
    assert_eq!(read(ws.path(), "new/n0399/a.ts"), "made(399);\n");
    assert!(!ws.path().join("old/o0399.ts").exists());
    run(&["undo", "--yes"]);
    assert!(!ws.path().join("new").exists());
    assert_eq!(read(ws.path(), "old/o0399.ts"), "gone();\n");
}
