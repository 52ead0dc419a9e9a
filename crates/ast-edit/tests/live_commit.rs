//! `recover` never touches a commit whose owner is still running: a second process (here, a
//! second caller in the same process, which opens its own lock) sees it as in progress, and
//! the commit finishes normally afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;

use staged_ast_edit::{CommitStep, FileWrite, Workspace, commit_observed, fingerprint, recover};

#[test]
fn recover_leaves_a_live_commit_alone() {
    let dir = tempfile::tempdir().unwrap();
    let files = ["a.ts", "b.ts", "c.ts"];
    for f in files {
        std::fs::write(dir.path().join(f), format!("old({f});\n")).unwrap();
    }
    let workspace = Workspace::new(dir.path()).unwrap();
    let writes: Vec<FileWrite> = files
        .iter()
        .map(|f| FileWrite {
            target: workspace.root().join(f),
            expected_fingerprint: fingerprint(format!("old({f});\n").as_bytes()),
            contents: format!("new({f});\n"),
        })
        .collect();

    let (reached, wait_here) = (mpsc::channel::<()>(), mpsc::channel::<()>());
    let (reached_tx, reached_rx) = reached;
    let (resume_tx, resume_rx) = wait_here;
    let committer = {
        let workspace = workspace.clone();
        std::thread::spawn(move || {
            commit_observed(&workspace, &writes, &mut |step| {
                if step == CommitStep::TempWritten(1) {
                    reached_tx.send(()).unwrap();
                    resume_rx.recv().unwrap();
                }
            })
        })
    };
    reached_rx.recv().unwrap();

    // Mid-commit: another start-up must not roll this commit back.
    let report = recover(&workspace).unwrap();
    assert_eq!(report.in_progress, 1);
    assert_eq!((report.rolled_back, report.rolled_forward), (0, 0));

    resume_tx.send(()).unwrap();
    committer.join().unwrap().unwrap();
    for f in files {
        assert_eq!(std::fs::read_to_string(dir.path().join(f)).unwrap(), format!("new({f});\n"));
    }
    let report = recover(&workspace).unwrap();
    assert_eq!(report, staged_ast_edit::RecoveryReport::default());
    let leftovers: Vec<_> = std::fs::read_dir(workspace.journal_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
