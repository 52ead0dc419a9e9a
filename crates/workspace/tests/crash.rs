//! Kill -9 at every step of a staged preview's apply, then open the workspace again: every
//! file is wholly old or wholly new, all files agree, and the pending stack agrees with them.
//! A preview whose files were written is never left pending (it leaves the stack before its
//! journal is deleted), and one whose files were not is still pending and applies cleanly.
//!
//! The test re-runs its own binary as a child (`apply_reports_every_step`), which applies the
//! head with an observer that aborts the process at step k. Run on its own, without the
//! child's environment variable, that test applies in a fresh workspace and checks the steps,
//! the files and the stack.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{path::Path, process::Command};

use serde_json::json;
use staged_ast_edit::{AstEditAction, CommitStep};
use staged_core::{CancelToken, ResolveParams, Retirement, Tool};
use staged_workspace::WorkspaceSession;

const CHILD_ENV: &str = "STAGED_WORKSPACE_CRASH_CHILD";
const FILES: [&str; 3] = ["a.ts", "src/b.ts", "src/deep/c.ts"];

fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(fut)
}

fn all_steps() -> Vec<CommitStep> {
    let mut res = vec![CommitStep::Prepared];
    res.extend((0..FILES.len()).map(CommitStep::TempWritten));
    res.push(CommitStep::Committed);
    res.extend((0..FILES.len()).map(CommitStep::Replaced));
    res.extend([CommitStep::Retired, CommitStep::Finished]);
    res
}

fn old_text(path: &str) -> String {
    format!("// {path}\nfoo(1);\n")
}

fn new_text(path: &str) -> String {
    format!("// {path}\nbar(1);\n")
}

/// A workspace with the three files and the rewrite staged; returns the pending id.
fn stage(root: &Path) -> String {
    for p in FILES {
        let full = root.join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, old_text(p)).unwrap();
    }
    let ws = WorkspaceSession::open(root).unwrap();
    let res = block_on(ws.ast_edit_tool().execute(
        json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["."], "lang": "typescript"}),
        &CancelToken::new(),
    ))
    .unwrap();
    res.details.unwrap()["pendingId"].as_str().unwrap().to_owned()
}

/// Applies the head the way `resolve` does, with an observer on the commit.
fn apply_head(root: &Path, observer: &mut dyn FnMut(CommitStep)) {
    let ws = WorkspaceSession::open(root).unwrap();
    let store = ws.store().clone();
    let claim = store.claim_head().unwrap().unwrap();
    let payload = claim.entry().action.payload().unwrap();
    let action = AstEditAction::from_payload(ws.workspace().clone(), &payload).unwrap();
    let retirement = Retirement::claimed(store, claim);
    let res = action.apply_observed(&CancelToken::new(), &retirement, observer).unwrap();
    assert_eq!(res.text_content(), "Applied 3 replacements in 3 files.");
    assert!(retirement.is_retired());
}

#[test]
fn apply_reports_every_step() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        // The child of `kill_at_every_step_keeps_files_and_stack_in_agreement`.
        let (root, step) = spec.rsplit_once('|').unwrap();
        let crash_at: usize = step.parse().unwrap();
        let mut seen = 0usize;
        apply_head(Path::new(root), &mut |_| {
            if seen == crash_at {
                std::process::abort();
            }
            seen += 1;
        });
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    stage(dir.path());
    let mut steps = Vec::new();
    apply_head(dir.path(), &mut |step| steps.push(step));
    assert_eq!(steps, all_steps());
    for p in FILES {
        assert_eq!(std::fs::read_to_string(dir.path().join(p)).unwrap(), new_text(p));
    }
    let ws = WorkspaceSession::open(dir.path()).unwrap();
    assert!(ws.recovery().is_empty(), "{:?}", ws.recovery());
    assert!(!ws.store().has_pending().unwrap());
}

#[test]
fn kill_at_every_step_keeps_files_and_stack_in_agreement() {
    let exe = std::env::current_exe().unwrap();
    let n_steps = all_steps().len();
    let mut outcomes = Vec::new();
    for crash_at in 0..=n_steps {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let id = stage(&root);
        let status = Command::new(&exe)
            .args(["--exact", "apply_reports_every_step", "--test-threads=1", "--nocapture"])
            .env(CHILD_ENV, format!("{}|{crash_at}", root.display()))
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap()
            .status;
        assert_eq!(status.success(), crash_at == n_steps, "step {crash_at}: {status:?}");

        // Any next start recovers.
        let ws = WorkspaceSession::open(&root).unwrap();
        assert!(ws.recovery().refused.is_empty(), "step {crash_at}: {:?}", ws.recovery());
        let new: Vec<bool> = FILES
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(root.join(p)).unwrap();
                assert!(text == old_text(p) || text == new_text(p), "step {crash_at}: {p} is torn");
                text == new_text(p)
            })
            .collect();
        assert!(new.iter().all(|n| *n == new[0]), "step {crash_at}: files disagree: {new:?}");
        let pending: Vec<String> =
            ws.store().list().unwrap().into_iter().map(|e| e.id.to_string()).collect();
        if new[0] {
            assert!(pending.is_empty(), "step {crash_at}: written but still pending: {pending:?}");
        } else {
            assert_eq!(
                pending,
                std::slice::from_ref(&id),
                "step {crash_at}: not written, so still pending"
            );
            let res =
                block_on(ws.session().resolve(ResolveParams::apply("again"), &CancelToken::new()))
                    .unwrap();
            assert_eq!(res.text_content(), "Applied 3 replacements in 3 files.");
        }
        let journal: Vec<String> = std::fs::read_dir(root.join(".staged/journal"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(journal, ["commit.lock"], "step {crash_at}");
        outcomes.push(new[0]);
    }
    // The journal's switch to `committed` is step 4 (from 0): from it on, the files are new.
    let expected: Vec<bool> = (0..=n_steps).map(|k| k > FILES.len()).collect();
    assert_eq!(outcomes, expected);
}
