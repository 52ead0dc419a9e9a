//! Kill -9 at every step of a multi-file commit, then `recover`: every file must be wholly old
//! or wholly new, and all files must agree.
//!
//! The test re-runs its own test binary as a child (`crash_child`), which commits with an
//! observer that aborts the process at step k; `crash_child` does nothing unless the
//! environment variable names a workspace and a step.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{path::Path, process::Command};

use staged_ast_edit::{FileWrite, Workspace, commit_observed, fingerprint, recover};

const CHILD_ENV: &str = "STAGED_AST_EDIT_CRASH_CHILD";
const FILES: [&str; 3] = ["a.ts", "src/b.ts", "src/deep/c.ts"];
/// Prepared, 3 temps, Committed, 3 replacements, Finished.
const STEPS: usize = 9;

fn old_text(path: &str) -> String {
    format!("// {path}\nfoo(1);\n")
}

fn new_text(path: &str) -> String {
    format!("// {path}\nbar(1);\n")
}

#[test]
fn crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let (root, step) = spec.rsplit_once('|').unwrap();
    let crash_at: usize = step.parse().unwrap();
    let workspace = Workspace::new(root).unwrap();
    let writes: Vec<FileWrite> = FILES
        .iter()
        .map(|p| FileWrite {
            target: workspace.root().join(p),
            expected_fingerprint: fingerprint(old_text(p).as_bytes()),
            contents: new_text(p),
        })
        .collect();
    let mut seen = 0usize;
    commit_observed(&workspace, &writes, &mut |_step| {
        if seen == crash_at {
            std::process::abort();
        }
        seen += 1;
    })
    .unwrap();
}

fn setup(root: &Path) {
    for p in FILES {
        let full = root.join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, old_text(p)).unwrap();
    }
}

fn stray_files(root: &Path) -> Vec<String> {
    let mut res = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().contains(".staged-")
                || path.starts_with(root.join(".staged/journal"))
            {
                res.push(path.display().to_string());
            }
        }
    }
    res
}

#[test]
fn kill_at_every_step_then_recover() {
    let exe = std::env::current_exe().unwrap();
    let mut outcomes = Vec::new();
    for crash_at in 0..=STEPS {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        let root = dir.path().canonicalize().unwrap();
        let status = Command::new(&exe)
            .args(["--exact", "crash_child", "--test-threads=1", "--nocapture"])
            .env(CHILD_ENV, format!("{}|{crash_at}", root.display()))
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap()
            .status;
        assert_eq!(status.success(), crash_at == STEPS, "step {crash_at}: {status:?}");
        let workspace = Workspace::new(&root).unwrap();
        recover(&workspace).unwrap();
        let states: Vec<bool> = FILES
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(root.join(p)).unwrap();
                assert!(
                    text == old_text(p) || text == new_text(p),
                    "step {crash_at}: {p} is torn: {text:?}"
                );
                text == new_text(p)
            })
            .collect();
        assert!(
            states.iter().all(|s| *s == states[0]),
            "step {crash_at}: files disagree: {states:?}"
        );
        assert!(
            stray_files(&root).is_empty(),
            "step {crash_at}: leftovers {:?}",
            stray_files(&root)
        );
        outcomes.push(states[0]);
    }
    // Before the commit point the old contents survive; from it on the new ones do.
    assert_eq!(outcomes, [false, false, false, false, true, true, true, true, true, true]);
}
