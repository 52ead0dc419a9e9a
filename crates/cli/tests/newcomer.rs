//! What a person at a terminal, or a script, expects of the command line: paths relative to
//! where they stand, looking that leaves nothing behind, a guard against resolving the wrong
//! preview, a reason that says something, and output a pipe can read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{code, json, pending_ids, read, staged, stderr, stdout, workspace};

#[test]
fn paths_are_relative_to_the_current_folder_and_shown_from_the_root() {
    let ws = workspace(&[
        ("src/value/a.ts", "fetchJson(1);\n"),
        ("src/b.ts", "fetchJson(2);\n"),
        ("lib/c.ts", "fetchJson(3);\n"),
    ]);
    let src = ws.path().join("src");
    let out = staged(&src, &["--json", "ast-grep", "--pattern", "fetchJson($A)", "value"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("src/value/a.ts"), "{}", stdout(&out));
    // `.` in a subfolder is that subfolder, not the whole repository.
    let out = staged(&src, &["--json", "ast-grep", "--pattern", "fetchJson($A)", "."]);
    let text = json(&out)["text"].as_str().unwrap().to_owned();
    assert!(text.contains("src/b.ts") && text.contains("src/value/a.ts"), "{text}");
    assert!(!text.contains("lib/c.ts"), "{text}");
    // `..` climbs to the sibling folder, still inside the workspace.
    let out = staged(&src, &["ast-edit", "--op", "fetchJson($A)", "getJson($A)", "../lib"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("lib/c.ts"), "{}", stdout(&out));
    // Out of the workspace is refused.
    let out = staged(&src, &["ast-grep", "--pattern", "x", "../../.."]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("outside the workspace"), "{}", stderr(&out));
}

#[test]
fn looking_never_creates_state_and_says_which_folder_is_the_workspace() {
    // No `.git` or `.staged` anywhere above: the folder itself is the workspace.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.ts"), "foo(1);\n").unwrap();
    for args in [
        &["pending"][..],
        &["--json", "pending"],
        &["show"],
        &["ast-grep", "--pattern", "foo($A)", "a.ts"],
        &["resolve", "discard", "--reason", "nothing here"],
    ] {
        let out = staged(dir.path(), args);
        assert!(code(&out) == 0 || code(&out) == 1, "{args:?}: {}", stderr(&out));
        assert!(!dir.path().join(".staged").exists(), "{args:?} created .staged");
        let canonical = dir.path().canonicalize().unwrap();
        let note = format!(
            "staged: no .git or .staged folder in {} or above it; using it as the workspace",
            canonical.display()
        );
        assert!(stderr(&out).contains(&note), "{args:?}: {}", stderr(&out));
    }
    // Staging creates it.
    let out = staged(dir.path(), &["ast-edit", "--op", "foo($A)", "bar($A)", "a.ts"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(dir.path().join(".staged/staged.db").exists());
}

#[test]
fn resolve_with_an_id_touches_only_that_preview() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "bar(2);\n")]);
    let first = staged(ws.path(), &["--json", "ast-edit", "--op", "foo($A)", "x($A)", "a.ts"]);
    let first_id = json(&first)["pending"]["id"].as_str().unwrap().to_owned();
    // A script's second step fails to stage...
    let failed = staged(ws.path(), &["--json", "ast-edit", "--op", "bar(", "y($A)", "b.ts"]);
    assert_eq!(code(&failed), 2);
    // ...so discarding "its" preview by id must not discard the one before it.
    let out = staged(
        ws.path(),
        &["resolve", "discard", "--id", "pending-action:ast_edit:1", "--reason", "wrong"],
    );
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(stdout(&out).contains("not pending-action:ast_edit:1"), "{}", stdout(&out));
    assert_eq!(pending_ids(ws.path()), std::slice::from_ref(&first_id));
    // The right id resolves it.
    let out = staged(ws.path(), &["resolve", "apply", "--id", &first_id, "--reason", "right"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(read(ws.path(), "a.ts"), "x(1);\n");
    // Once it is gone, its id resolves nothing.
    let out = staged(ws.path(), &["resolve", "apply", "--id", &first_id, "--reason", "again"]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("is no longer pending"), "{}", stdout(&out));
}

#[test]
fn a_blank_reason_is_refused() {
    let ws = workspace(&[("a.ts", "foo(1);\n")]);
    let out = staged(ws.path(), &["ast-edit", "--op", "foo($A)", "x($A)", "a.ts"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for reason in ["", "   ", "\t\n"] {
        let out = staged(ws.path(), &["resolve", "apply", "--reason", reason]);
        assert_eq!(code(&out), 2, "{reason:?}");
        assert_eq!(
            stderr(&out).trim_end(),
            "error: --reason must not be blank: say why the preview is applied or discarded"
        );
    }
    assert_eq!(pending_ids(ws.path()).len(), 1);
    assert_eq!(read(ws.path(), "a.ts"), "foo(1);\n");
}

#[test]
fn piped_output_is_neither_padded_nor_cut() {
    let ws = workspace(&[("a.ts", "foo(1);\n")]);
    let out = staged(ws.path(), &["ast-edit", "--op", "foo($A)", "x($A)", "a.ts"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The block shows the reason once, and off a terminal a line longer than 80 columns is
    // neither cut nor padded.
    let reason =
        "long enough to pass eighty columns in the block, where a terminal would cut the line";
    for color in [&[][..], &["--color", "never"]] {
        let mut args = color.to_vec();
        args.extend(["resolve", "discard", "--reason", reason]);
        let out = staged(ws.path(), &args);
        let text = stdout(&out);
        for line in text.lines() {
            assert_eq!(line, line.trim_end(), "padded: {line:?}");
        }
        assert!(text.contains(&format!("\n {reason}\n")), "{text}");
        assert!(reason.chars().count() > 80);
        assert_eq!(text.matches(reason).count(), 1, "{text}");
        let out = staged(ws.path(), &["ast-edit", "--op", "foo($A)", "x($A)", "a.ts"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
}

#[test]
fn a_rewrite_with_an_unbound_metavariable_is_refused_naming_it() {
    let ws = workspace(&[("a.rs", "fn f() { seed.deserialize(a.unwrap()); }\n")]);
    let out = staged(ws.path(), &["ast-edit", "--op", "$X.unwrap()", "$Y.expect(\"x\")", "a.rs"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out).trim_end(),
        "error: Invalid pattern: $X.unwrap(): the rewrite uses metavariable $Y that is not bound by the pattern (it binds $X)"
    );
    assert!(pending_ids(ws.path()).is_empty());
}

#[test]
fn nested_matches_compose_and_crossing_ones_are_refused_naming_both() {
    let ws = workspace(&[("a.rs", "fn f() { let b = Box::new(Box::new(x)); }\n")]);
    let out =
        staged(ws.path(), &["--json", "ast-edit", "--op", "Box::new($A)", "Box::from($A)", "a.rs"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["details"]["totalReplacements"], 2);
    let out = staged(ws.path(), &["resolve", "apply", "--reason", "from, not new"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(read(ws.path(), "a.rs"), "fn f() { let b = Box::from(Box::from(x)); }\n");
    // Two different rewrites of the same code: refused at preview, naming both places.
    let out = staged(
        ws.path(),
        &[
            "ast-edit",
            "--op",
            "Box::from($A)",
            "a($A)",
            "--op",
            "Box::from(Box::from($A))",
            "b($A)",
            "a.rs",
        ],
    );
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(stderr(&out).contains("a.rs:1:18"), "{}", stderr(&out));
    assert!(pending_ids(ws.path()).is_empty());
}

#[test]
fn a_rewrite_that_changes_nothing_stages_nothing() {
    let ws = workspace(&[("a.rs", "fn f() { let v = Value::Null; g(Value::Null); }\n")]);
    let out =
        staged(ws.path(), &["--json", "ast-edit", "--op", "Value::Null", "Value::Null", "a.rs"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["text"], "No replacements made");
    assert!(json(&out)["pending"].is_null());
    assert!(pending_ids(ws.path()).is_empty());
}

#[test]
fn a_stale_preview_says_it_was_dropped_and_how_to_stage_it_again() {
    let ws = workspace(&[("src/a.ts", "legacy(\"it's\", 1);\n")]);
    let src = ws.path().join("src");
    let out = staged(&src, &["ast-edit", "--op", "legacy($A, $B)", "modern($B, $A)", "a.ts"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(pending_ids(ws.path()).len(), 1);
    std::fs::write(src.join("a.ts"), "legacy(\"it's\", 2);\n").unwrap();
    let out = staged(&src, &["resolve", "apply", "--reason", "go"]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    assert!(text.contains("The preview was dropped from the pending stack"), "{text}");
    assert!(pending_ids(ws.path()).is_empty());
    let command = text
        .lines()
        .find_map(|l| l.strip_prefix("To stage it again: "))
        .unwrap_or_else(|| panic!("no command in {text}"))
        .to_owned();
    // The printed command, run by a shell from anywhere, stages the same rewrite again.
    let again = std::process::Command::new("sh")
        .arg("-c")
        .arg(command.replacen("staged ", &format!("{} ", common::staged_bin().display()), 1))
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(pending_ids(ws.path()).len(), 1);
    let out = staged(ws.path(), &["resolve", "apply", "--reason", "now"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(read(ws.path(), "src/a.ts"), "modern(2, \"it's\");\n");
}

#[test]
fn a_mixed_scope_names_the_cli_flag_and_the_languages_found() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.js", "foo(2);\n"), ("c.js", "foo(3);\n")]);
    let out = staged(ws.path(), &["ast-edit", "--op", "foo($A)", "bar($A)", "."]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out).trim_end(),
        "error: these paths hold files in 2 languages: javascript (2 files), typescript (1 file); pass --lang with the one to rewrite"
    );
    // Over MCP or `--json`, the tool's own message (it names the `lang` argument) stays.
    let out = staged(ws.path(), &["--json", "ast-edit", "--op", "foo($A)", "bar($A)", "."]);
    assert_eq!(
        json(&out)["text"],
        "`lang` is required for ast_edit when path/glob resolves to multiple languages: javascript, typescript"
    );
    let out = staged(ws.path(), &["ast-edit", "--lang", "js", "--op", "foo($A)", "bar($A)", "."]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}
