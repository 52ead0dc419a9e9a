//! The preview's unified diff is accepted by `git apply --check`, and applying it gives the
//! same bytes as applying the action.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

use common::{Fixture, details};
use serde_json::json;

fn git_apply(root: &std::path::Path, patch: &str, check: bool) -> std::process::Output {
    let patch_path =
        root.join("..").join(format!("{}.patch", root.file_name().unwrap().to_string_lossy()));
    std::fs::write(&patch_path, patch).unwrap();
    let mut cmd = Command::new("git");
    cmd.arg("apply");
    if check {
        cmd.arg("--check");
    }
    cmd.arg(&patch_path).current_dir(root).env("GIT_CEILING_DIRECTORIES", root.parent().unwrap());
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_file(patch_path);
    out
}

#[tokio::test]
async fn diff_passes_git_apply_check_and_matches_the_apply() {
    let files = [
        ("a.ts", "import x from 'y';\n\nfoo(1);\nconst z = 2;\n"),
        ("src/no_newline.ts", "foo(1); foo(2)"),
        ("src/multi.ts", "function f() {\n  foo(\n    1,\n    2,\n  );\n}\n"),
        ("src/untouched.ts", "baz(1);\n"),
    ];
    let fx = Fixture::new(&files);
    let copy = tempfile::tempdir().unwrap();
    for (p, t) in files {
        common::write(copy.path(), p, t);
    }
    let res = fx
        .edit(json!({"ops": [{"pat": "foo($$$A)", "out": "bar($$$A)"}], "paths": ["."]}))
        .await
        .unwrap();
    let diff = details(&res)["diff"].as_str().unwrap().to_owned();
    assert!(diff.contains("--- a/src/no_newline.ts\n+++ b/src/no_newline.ts\n"), "{diff}");
    assert!(diff.contains("\\ No newline at end of file"), "{diff}");
    let out = git_apply(copy.path(), &diff, true);
    assert!(out.status.success(), "git apply --check: {}", String::from_utf8_lossy(&out.stderr));
    let out = git_apply(copy.path(), &diff, false);
    assert!(out.status.success(), "git apply: {}", String::from_utf8_lossy(&out.stderr));
    let applied = fx.apply().await;
    assert!(!applied.is_error);
    for (p, _) in files {
        assert_eq!(fx.read(p), std::fs::read_to_string(copy.path().join(p)).unwrap(), "{p}");
    }
    // ast-grep's template re-indents a multi-line `$$$` capture; we keep its behaviour.
    assert_eq!(fx.read("src/multi.ts"), "function f() {\n  bar(1,\n  2,);\n}\n");
}
