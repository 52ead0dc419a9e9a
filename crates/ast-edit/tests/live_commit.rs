//! `recover` never touches a commit whose owner is still running: a second process (here, a
//! second caller in the same process, which opens its own lock) sees it as in progress, and
//! the commit finishes normally afterwards. The commit lock is never deleted, so a recovery
//! that opened it early can never win a lock that no longer guards anything.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;

use staged_fs::RelPath;
use staged_journal::{
    CommitOptions, CommitStep, ConfinedRoot, FileWrite, RecoverOptions, Step, commit, fingerprint,
    recover,
};

fn three_files() -> (tempfile::TempDir, ConfinedRoot, Vec<FileWrite>) {
    let dir = tempfile::tempdir().unwrap();
    let files = ["a.ts", "b.ts", "c.ts"];
    for f in files {
        std::fs::write(dir.path().join(f), format!("old({f});\n")).unwrap();
    }
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    let writes = files
        .iter()
        .map(|f| FileWrite {
            target: RelPath::new(f).unwrap(),
            expected_fingerprint: fingerprint(format!("old({f});\n").as_bytes()),
            contents: format!("new({f});\n"),
        })
        .collect();
    (dir, workspace, writes)
}

/// Runs a commit on a thread that pauses at `pause_at` until told to go on.
fn paused_commit(
    workspace: &ConfinedRoot,
    writes: Vec<FileWrite>,
    pause_at: CommitStep,
) -> (std::thread::JoinHandle<()>, mpsc::Sender<()>) {
    let (reached_tx, reached_rx) = mpsc::channel::<()>();
    let (resume_tx, resume_rx) = mpsc::channel::<()>();
    let committer = {
        let workspace = workspace.clone();
        std::thread::spawn(move || {
            let steps: Vec<Step> = writes.into_iter().map(Step::from).collect();
            let mut observer = |step: CommitStep| {
                if step == pause_at {
                    reached_tx.send(()).unwrap();
                    resume_rx.recv().unwrap();
                }
            };
            commit(
                &workspace,
                &steps,
                CommitOptions { observer: Some(&mut observer), ..Default::default() },
            )
            .unwrap();
        })
    };
    reached_rx.recv().unwrap();
    (committer, resume_tx)
}

fn journal_names(workspace: &ConfinedRoot) -> Vec<String> {
    staged_test_support::sorted_names(&workspace.journal_dir())
}

#[test]
fn recover_leaves_a_live_commit_alone_at_every_step() {
    for pause_at in [
        CommitStep::Prepared,
        CommitStep::TempWritten(1),
        CommitStep::Committed,
        CommitStep::Replaced(0),
        CommitStep::Replaced(2),
    ] {
        let (dir, workspace, writes) = three_files();
        let (committer, resume) = paused_commit(&workspace, writes, pause_at);
        // Mid-commit, however many other start-ups run, none touches it.
        for _ in 0..3 {
            let report = recover(&workspace, RecoverOptions::default()).unwrap();
            assert_eq!(report.in_progress, 1, "{pause_at:?}");
            assert_eq!((report.rolled_back, report.rolled_forward), (0, 0), "{pause_at:?}");
        }
        resume.send(()).unwrap();
        committer.join().unwrap();
        for f in ["a.ts", "b.ts", "c.ts"] {
            assert_eq!(
                std::fs::read_to_string(dir.path().join(f)).unwrap(),
                format!("new({f});\n"),
                "{pause_at:?}"
            );
        }
        assert!(recover(&workspace, RecoverOptions::default()).unwrap().is_empty());
        // Only the locks are left, and they are never deleted.
        assert_eq!(journal_names(&workspace), ["commit.lock", "write.lock"]);
    }
}

#[test]
fn a_recovery_that_opened_the_lock_before_a_commit_still_waits_for_it() {
    let (_dir, workspace, writes) = three_files();
    // A first commit creates the lock file; a recovery keeps it open from then on.
    let (committer, resume) = paused_commit(&workspace, writes.clone(), CommitStep::Prepared);
    let early = std::fs::File::open(workspace.journal_dir().join("commit.lock")).unwrap();
    resume.send(()).unwrap();
    committer.join().unwrap();
    // While a second commit is live, the early handle cannot take the lock exclusively.
    let writes2: Vec<FileWrite> = writes
        .iter()
        .map(|w| FileWrite {
            expected_fingerprint: fingerprint(
                std::fs::read(workspace.root().join(w.target.as_path())).unwrap().as_slice(),
            ),
            ..w.clone()
        })
        .collect();
    let (committer, resume) = paused_commit(&workspace, writes2, CommitStep::TempWritten(0));
    assert!(matches!(early.try_lock(), Err(std::fs::TryLockError::WouldBlock)));
    resume.send(()).unwrap();
    committer.join().unwrap();
    early.try_lock().unwrap();
}
