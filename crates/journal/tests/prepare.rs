//! The prepare hook of a commit nobody observes runs while the temp files are written: a
//! hook's error still leaves every file old and nothing of the commit behind (no temp, no
//! folder, no journal), and the abandon hook is not told of a record never prepared.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use staged_fs::RelPath;
use staged_journal::{
    CommitOptions, ConfinedRoot, Expect, Step, StepChange, StepMode, fingerprint,
};

fn steps(root: &std::path::Path) -> Vec<Step> {
    let mut steps = Vec::new();
    for i in 0..40 {
        let path = format!("f{i}.txt");
        let old = format!("old {i}\n");
        std::fs::write(root.join(&path), &old).unwrap();
        steps.push(Step {
            target: RelPath::new(&path).unwrap(),
            expect: Expect::Fingerprint(fingerprint(old.as_bytes())),
            change: StepChange::Write {
                bytes: format!("new {i}\n").into_bytes(),
                mode: StepMode::Keep,
            },
        });
    }
    steps.push(Step {
        target: RelPath::new("made/deep/new.txt").unwrap(),
        expect: Expect::Absent,
        change: StepChange::Write { bytes: b"new\n".to_vec(), mode: StepMode::Default },
    });
    steps
}

/// Every name in the root but the state folder, and whether the journal folder holds a
/// journal.
fn names(root: &std::path::Path) -> (Vec<String>, bool) {
    let mut res: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".staged")
        .collect();
    res.sort();
    let journals = std::fs::read_dir(root.join(".staged/journal"))
        .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().ends_with(".json")))
        .unwrap_or(false);
    (res, journals)
}

#[test]
fn a_prepare_hook_that_fails_while_the_temps_are_written_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let steps = steps(root);
    let before = names(root);
    let ws = ConfinedRoot::new(root).unwrap();
    let mut abandoned = 0;
    let mut prepare = |_: &str| Err("the log is full".to_owned());
    let mut abandon = |_: &str| abandoned += 1;
    let options = CommitOptions {
        prepare: Some(&mut prepare),
        abandon: Some(&mut abandon),
        ..CommitOptions::default()
    };
    let err = staged_journal::commit(&ws, &steps, options).unwrap_err();
    assert!(err.to_string().contains("the log is full"), "{err}");
    assert_eq!(abandoned, 0, "nothing was prepared");
    assert_eq!(names(root), before, "no temp, no folder, no journal");
    for i in 0..40 {
        assert_eq!(
            std::fs::read_to_string(root.join(format!("f{i}.txt"))).unwrap(),
            format!("old {i}\n")
        );
    }
}

#[test]
fn a_prepare_hook_that_succeeds_commits_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let steps = steps(root);
    let ws = ConfinedRoot::new(root).unwrap();
    let mut prepared = Vec::new();
    let mut prepare = |id: &str| {
        prepared.push(id.to_owned());
        Ok(())
    };
    let options = CommitOptions { prepare: Some(&mut prepare), ..CommitOptions::default() };
    staged_journal::commit(&ws, &steps, options).unwrap();
    assert_eq!(prepared.len(), 1);
    for i in 0..40 {
        assert_eq!(
            std::fs::read_to_string(root.join(format!("f{i}.txt"))).unwrap(),
            format!("new {i}\n")
        );
    }
    assert_eq!(std::fs::read_to_string(root.join("made/deep/new.txt")).unwrap(), "new\n");
    assert!(!names(root).1, "the journal is gone");
}
