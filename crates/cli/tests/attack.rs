//! A workspace someone else controls, `.staged/` included (a cloned repository that ships
//! one): no `staged` command, even a read-only one, writes, renames or deletes anything
//! outside the workspace, and a planted state folder is refused with a one-line error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{os::unix::fs::symlink, path::Path};

use common::{code, staged, stderr, workspace};

/// A workspace, and a folder beside it with files a planted `.staged/` aims at.
fn victim() -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = workspace(&[("src/a.ts", "foo(1);\n")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), "victim\n").unwrap();
    std::fs::write(outside.path().join("delete-me.txt"), "keep\n").unwrap();
    (ws, outside)
}

/// Every file in `dir`, with its contents.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut res: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            (path.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect();
    res.sort();
    res
}

fn outside_untouched(outside: &Path) {
    let names: Vec<String> = snapshot(outside).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["delete-me.txt", "victim.txt"], "something was created outside");
    assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "victim\n");
    assert_eq!(std::fs::read_to_string(outside.join("delete-me.txt")).unwrap(), "keep\n");
}

#[test]
fn a_planted_journal_aimed_outside_is_refused_by_every_command() {
    let (ws, outside) = victim();
    let journal = ws.path().join(".staged/journal");
    std::fs::create_dir_all(&journal).unwrap();
    let target = outside.path().join("victim.txt");
    let rel_target =
        format!("../{}/victim.txt", outside.path().file_name().unwrap().to_string_lossy());
    // The old format (absolute paths and temps named by the journal), and the new one with
    // a climbing target, and a target behind a symlinked folder.
    std::fs::write(ws.path().join("src/payload.txt"), "pwned\n").unwrap();
    std::fs::write(
        journal.join("1-1-1.json"),
        serde_json::json!({"state": "committed", "entries": [
            {"target": target, "temp": ws.path().join("src/payload.txt")},
            {"target": outside.path().join("x"), "temp": outside.path().join("delete-me.txt")},
        ]})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        journal.join("2-2-2.json"),
        serde_json::json!({"version": 2, "state": "committed", "entries": [{"target": rel_target}]})
            .to_string(),
    )
    .unwrap();
    // A preparing journal's rollback deletes its temps: one behind a symlinked folder is
    // outside, and must survive.
    symlink(outside.path(), ws.path().join("link")).unwrap();
    std::fs::write(outside.path().join(".victim.txt.staged-3-3-3-0.tmp"), "pwned\n").unwrap();
    std::fs::write(
        journal.join("3-3-3.json"),
        serde_json::json!({"version": 2, "state": "preparing", "entries": [{"target": "link/victim.txt"}]})
            .to_string(),
    )
    .unwrap();
    let before = snapshot(outside.path());

    for args in [&["pending"][..], &["ast-grep", "--pattern", "foo($A)", "src"]] {
        let out = staged(ws.path(), args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.matches("staged: warning: refused the journal").count(), 3, "{err}");
        assert!(err.contains("Nothing it names was changed"), "{err}");
        assert_eq!(snapshot(outside.path()), before, "{args:?} touched a file outside");
    }
    assert_eq!(std::fs::read_to_string(ws.path().join("src/a.ts")).unwrap(), "foo(1);\n");
}

#[test]
fn a_state_folder_that_is_a_symlink_is_refused() {
    let (ws, outside) = victim();
    symlink(outside.path(), ws.path().join(".staged")).unwrap();
    for args in [&["pending"][..], &["ast-edit", "--op", "foo($A)", "bar($A)", "src"]] {
        let out = staged(ws.path(), args);
        assert_eq!(code(&out), 2, "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("Refusing the state folder") && err.contains("symlink"), "{err}");
        outside_untouched(outside.path());
    }
}

#[test]
fn a_planted_database_symlink_is_refused() {
    let (ws, outside) = victim();
    std::fs::create_dir(ws.path().join(".staged")).unwrap();
    symlink(outside.path().join("victim.txt"), ws.path().join(".staged/staged.db-wal")).unwrap();
    let out = staged(ws.path(), &["pending"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("staged.db-wal: it is a symlink"), "{}", stderr(&out));
    outside_untouched(outside.path());
}
