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
    // The call line cuts the reason at 72 columns (as the reference does), so this one fits
    // there, and the whole line still passes the 80 columns a terminal would cut it at.
    let reason = "long enough to pass eighty columns after the call's badge";
    for color in [&[][..], &["--color", "never"]] {
        let mut args = color.to_vec();
        args.extend(["resolve", "discard", "--reason", reason]);
        let out = staged(ws.path(), &args);
        let text = stdout(&out);
        for line in text.lines() {
            assert_eq!(line, line.trim_end(), "padded: {line:?}");
        }
        let first = text.lines().next().unwrap();
        assert!(first.ends_with(reason) && first.chars().count() > 80, "{text}");
        assert!(text.contains(&format!(" {reason}\n")), "{text}");
        let out = staged(ws.path(), &["ast-edit", "--op", "foo($A)", "x($A)", "a.ts"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
}
