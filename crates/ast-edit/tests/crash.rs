//! Kill -9 at every step of a multi-file commit, then `recover`: every file must be wholly old
//! or wholly new, all files must agree, and nothing staged wrote may be left behind.
//!
//! The test re-runs its own test binary as a child (`commit_reports_every_step`), which
//! commits with an observer that aborts the process at step k. Run on its own, without the
//! child's environment variable, that test commits in a fresh workspace and checks the steps
//! it observed and the files it wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use staged_fs::RelPath;
use staged_journal::{
    CommitOptions, CommitStep, ConfinedRoot, FileWrite, RecoverOptions, Step, commit, fingerprint,
    recover,
};
use staged_test_support::crash::{abort_at, child_spec, run_child};

const CHILD_ENV: &str = "STAGED_AST_EDIT_CRASH_CHILD";
const FILES: [&str; 3] = ["a.ts", "src/b.ts", "src/deep/c.ts"];

/// Every step of a three-file commit, in order.
fn all_steps() -> Vec<CommitStep> {
    let mut res = vec![CommitStep::Prepared];
    res.extend((0..FILES.len()).map(CommitStep::TempWritten));
    res.push(CommitStep::Committed);
    res.extend((0..FILES.len()).map(CommitStep::Replaced));
    res.push(CommitStep::Finished);
    res
}

fn old_text(path: &str) -> String {
    format!("// {path}\nfoo(1);\n")
}

fn new_text(path: &str) -> String {
    format!("// {path}\nbar(1);\n")
}

fn writes() -> Vec<Step> {
    FILES
        .iter()
        .map(|p| {
            Step::from(FileWrite {
                target: RelPath::new(p).unwrap(),
                expected_fingerprint: fingerprint(old_text(p).as_bytes()),
                contents: new_text(p),
            })
        })
        .collect()
}

#[test]
fn commit_reports_every_step() {
    if let Some((root, crash_at)) = child_spec(CHILD_ENV) {
        // The child of `kill_at_every_step_then_recover`: die at the given step.
        let workspace = ConfinedRoot::new(root).unwrap();
        let mut observer = abort_at(crash_at);
        commit(
            &workspace,
            &writes(),
            CommitOptions { observer: Some(&mut observer), ..Default::default() },
        )
        .unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    let mut steps = Vec::new();
    let mut observer = |step: CommitStep| steps.push(step);
    commit(
        &workspace,
        &writes(),
        CommitOptions { observer: Some(&mut observer), ..Default::default() },
    )
    .unwrap();
    assert_eq!(steps, all_steps());
    for p in FILES {
        assert_eq!(std::fs::read_to_string(dir.path().join(p)).unwrap(), new_text(p));
    }
    assert!(stray_files(dir.path()).is_empty(), "{:?}", stray_files(dir.path()));
}

fn setup(root: &Path) {
    for p in FILES {
        let full = root.join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, old_text(p)).unwrap();
    }
}

/// Temp files beside the targets, and journals (the commit lock is meant to stay).
fn stray_files(root: &Path) -> Vec<String> {
    let mut res = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().contains(".staged-")
                || (path.starts_with(root.join(".staged/journal"))
                    && !path.ends_with("commit.lock")
                    && !path.ends_with("write.lock"))
            {
                res.push(path.display().to_string());
            }
        }
    }
    res
}

#[test]
fn kill_at_every_step_then_recover() {
    let n_steps = all_steps().len();
    let mut outcomes = Vec::new();
    for crash_at in 0..=n_steps {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        let root = dir.path().canonicalize().unwrap();
        let status = run_child("commit_reports_every_step", CHILD_ENV, &root, crash_at);
        assert_eq!(status.success(), crash_at == n_steps, "step {crash_at}: {status:?}");
        let workspace = ConfinedRoot::new(&root).unwrap();
        let report = recover(&workspace, RecoverOptions::default()).unwrap();
        assert!(report.refused.is_empty(), "step {crash_at}: {report:?}");
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
    // Killed before the commit point (the journal's switch to `committed`, step 4 counting
    // from 0), the old contents survive; from it on, the new ones do.
    let expected: Vec<bool> = (0..=n_steps).map(|k| k > FILES.len()).collect();
    assert_eq!(outcomes, expected);
}
