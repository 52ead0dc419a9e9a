//! Kill -9 at every step of an apply whose temp files one `syncfs` makes durable (a
//! `staged_fs::SyncBatch`, taken for a commit of many files), then open the workspace again:
//! every file is wholly old or wholly new, all agree, and the stack agrees with them, as with
//! a sync per file (`crash.rs`). The batch is forced here, so that the test takes its path on
//! any machine, whatever else is waiting to be written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::json;
use staged_ast_edit::AstEditAction;
use staged_core::{CancelToken, ResolveOptions, Retirement, Tool};
use staged_fs::{SyncBatchPolicy, set_sync_batch_policy, sync_batches_finished};
use staged_journal::CommitStep;
use staged_protocol::ResolveParams;
use staged_test_support::crash::{abort_at, child_spec, run_child};
use staged_workspace::WorkspaceSession;

const CHILD_ENV: &str = "STAGED_WORKSPACE_BATCH_CRASH_CHILD";
const FILES: usize = 12;

fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(fut)
}

fn path(i: usize) -> String {
    format!("src/f{i:02}.ts")
}

fn all_steps() -> Vec<CommitStep> {
    let mut res = vec![CommitStep::Prepared];
    res.extend((0..FILES).map(CommitStep::TempWritten));
    res.push(CommitStep::Committed);
    res.extend((0..FILES).map(CommitStep::Replaced));
    res.extend([CommitStep::Retired, CommitStep::Finished]);
    res
}

fn old_text(i: usize) -> String {
    format!("// {}\nfoo({i});\n", path(i))
}

fn new_text(i: usize) -> String {
    format!("// {}\nbar({i});\n", path(i))
}

fn applied() -> String {
    format!("Applied {FILES} replacements in {FILES} files.")
}

/// A workspace with the files and their rewrite staged; returns the pending id.
fn stage(root: &Path) -> String {
    std::fs::create_dir_all(root.join("src")).unwrap();
    for i in 0..FILES {
        std::fs::write(root.join(path(i)), old_text(i)).unwrap();
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
    assert_eq!(res.text_content(), applied());
    assert!(retirement.is_retired());
}

#[test]
fn a_batched_apply_reports_every_step() {
    set_sync_batch_policy(SyncBatchPolicy::Always);
    if let Some((root, crash_at)) = child_spec(CHILD_ENV) {
        // The child of `kill_at_every_step_of_a_batched_apply_keeps_files_and_stack_in_agreement`.
        apply_head(&root, &mut abort_at(crash_at));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    stage(dir.path());
    let batches = sync_batches_finished();
    let mut steps = Vec::new();
    apply_head(dir.path(), &mut |step| steps.push(step));
    assert_eq!(sync_batches_finished(), batches + 1, "the temps were synced one by one");
    assert_eq!(steps, all_steps());
    for i in 0..FILES {
        assert_eq!(std::fs::read_to_string(dir.path().join(path(i))).unwrap(), new_text(i));
    }
    let ws = WorkspaceSession::open(dir.path()).unwrap();
    assert!(ws.recovery().is_empty(), "{:?}", ws.recovery());
    assert!(ws.store().is_empty().unwrap());
}

#[test]
fn kill_at_every_step_of_a_batched_apply_keeps_files_and_stack_in_agreement() {
    let n_steps = all_steps().len();
    let mut outcomes = Vec::new();
    for crash_at in 0..=n_steps {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let id = stage(&root);
        let status = run_child("a_batched_apply_reports_every_step", CHILD_ENV, &root, crash_at);
        assert_eq!(status.success(), crash_at == n_steps, "step {crash_at}: {status:?}");

        // Any next start recovers.
        let ws = WorkspaceSession::open(&root).unwrap();
        assert!(ws.recovery().refused.is_empty(), "step {crash_at}: {:?}", ws.recovery());
        let new: Vec<bool> = (0..FILES)
            .map(|i| {
                let text = std::fs::read_to_string(root.join(path(i))).unwrap();
                assert!(text == old_text(i) || text == new_text(i), "step {crash_at}: {i} is torn");
                text == new_text(i)
            })
            .collect();
        assert!(new.iter().all(|n| *n == new[0]), "step {crash_at}: files disagree: {new:?}");
        let pending: Vec<String> =
            ws.store().list().unwrap().into_iter().map(|e| e.id.to_string()).collect();
        if new[0] {
            assert!(pending.is_empty(), "step {crash_at}: written but still pending: {pending:?}");
        } else {
            assert_eq!(pending, std::slice::from_ref(&id), "step {crash_at}: still pending");
            let res = block_on(ws.session().resolve(
                ResolveParams::apply("again"),
                ResolveOptions::default(),
                &CancelToken::new(),
            ))
            .unwrap();
            assert_eq!(res.text_content(), applied());
        }
        let mut journal: Vec<String> = std::fs::read_dir(root.join(".staged/journal"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        journal.sort();
        assert_eq!(journal, ["commit.lock", "write.lock"], "step {crash_at}");
        let src: usize = std::fs::read_dir(root.join("src")).unwrap().count();
        assert_eq!(src, FILES, "step {crash_at}: a temp file was left beside the files");
        outcomes.push(new[0]);
    }
    // The journal's switch to `committed` comes after the temps: from it on, the files are new.
    let expected: Vec<bool> = (0..=n_steps).map(|k| k > FILES).collect();
    assert_eq!(outcomes, expected);
}
