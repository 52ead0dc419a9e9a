//! Kill -9 at every step of a mixed patch's apply (a file added in a new folder, one deleted,
//! one updated, one moved), and of its undo, then open the workspace again: the tree is
//! wholly the old one or wholly the new one, byte for byte and mode for mode (no folder the
//! apply created is left behind by a roll back), and the stack and the log agree with it.
//!
//! As in `crash.rs`, the test re-runs its own binary as a child that applies (or undoes) with
//! an observer that aborts the process at step k.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{collections::BTreeMap, os::unix::fs::PermissionsExt, path::Path};

use serde_json::json;
use staged_core::{
    CancelToken, FrontEnd, LogAction, LogOutcome, LogRecord, ResolveOptions, Retirement, Tool,
    UndoOptions,
};
use staged_journal::{ChangeAction, CommitStep, undo_observed};
use staged_protocol::ResolveParams;
use staged_test_support::crash::{abort_at, child_spec, run_child};
use staged_workspace::WorkspaceSession;

const APPLY_CHILD: &str = "STAGED_MIXED_APPLY_CHILD";
const UNDO_CHILD: &str = "STAGED_MIXED_UNDO_CHILD";

const PATCH: &str = "*** Begin Patch
*** Add File: new/dir/added.txt
+one
*** Delete File: src/gone.sh
*** Update File: src/app.ts
@@
-  return 1;
+  return 2;
*** Update File: src/tool.sh
*** Move to: bin/tool.sh
@@
-echo old
+echo new
*** End Patch";

fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(fut)
}

/// Every file and folder under `root` (but `.staged`), with its bytes and mode.
fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut res = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".staged" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                res.insert(format!("{rel}/"), (Vec::new(), 0));
                stack.push(path);
            } else {
                res.insert(
                    rel,
                    (std::fs::read(&path).unwrap(), meta.permissions().mode() & 0o7777),
                );
            }
        }
    }
    res
}

fn setup(root: &Path) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/app.ts"), "function main() {\n  return 1;\n}\n").unwrap();
    std::fs::write(root.join("src/gone.sh"), "#!/bin/sh\nrm -rf build\n").unwrap();
    std::fs::write(root.join("src/tool.sh"), "#!/bin/sh\necho old\n").unwrap();
    for exec in ["src/gone.sh", "src/tool.sh"] {
        std::fs::set_permissions(root.join(exec), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Stages the patch; returns the pending id.
fn stage(root: &Path) -> String {
    let ws = WorkspaceSession::open(root).unwrap();
    let res = block_on(ws.apply_patch_tool().execute(json!({"input": PATCH}), &CancelToken::new()))
        .unwrap();
    res.details.unwrap()["pendingId"].as_str().unwrap().to_owned()
}

/// Applies the head as `resolve` does, with an observer on the commit.
fn apply_head(root: &Path, observer: &mut dyn FnMut(CommitStep)) {
    let ws = WorkspaceSession::open(root).unwrap();
    let store = ws.store().clone();
    let claim = store.claim_head().unwrap().unwrap();
    let payload = claim.entry().action.payload().unwrap();
    let action =
        ChangeAction::from_payload(ws.workspace().clone(), "apply_patch", &payload).unwrap();
    let record = LogRecord::new(
        claim.entry().id.clone(),
        claim.entry().label().to_owned(),
        "apply_patch",
        LogOutcome::Applied,
        LogAction::Apply,
        &FrontEnd::Cli,
    );
    let retirement = Retirement::claimed_logged(store, claim, record);
    let res = action.apply_only_observed(None, &CancelToken::new(), &retirement, observer).unwrap();
    assert!(!res.is_error, "{}", res.text_content());
    assert!(retirement.is_retired());
}

/// Undoes the newest applied entry as `Session::undo` does, with an observer on the commit.
fn undo_newest(root: &Path, observer: &mut dyn FnMut(CommitStep)) {
    let ws = WorkspaceSession::open(root).unwrap();
    let log = ws.store().log().unwrap();
    let seq = log.newest_applied().unwrap().unwrap();
    let entry = log.entry(seq).unwrap().unwrap();
    let mut base = LogRecord::new(
        entry.record.id.clone(),
        entry.record.label.clone(),
        entry.record.source_tool_name.clone(),
        LogOutcome::Undone,
        LogAction::Undo,
        &FrontEnd::Cli,
    );
    base.reverts = Some(seq);
    let retirement = Retirement::for_undo(ws.store().clone(), base);
    let res =
        undo_observed(ws.workspace(), &entry, &retirement, &CancelToken::new(), observer).unwrap();
    assert!(!res.is_error, "{}", res.text_content());
    assert!(retirement.is_retired());
}

fn journal_is_clean(root: &Path) -> bool {
    staged_test_support::sorted_names(&root.join(".staged/journal"))
        == ["commit.lock", "write.lock"]
}

#[test]
fn mixed_apply_reports_every_step() {
    if let Some((root, crash_at)) = child_spec(APPLY_CHILD) {
        let mut observer = abort_at(crash_at);
        apply_head(&root, &mut observer);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    stage(dir.path());
    let mut steps = Vec::new();
    apply_head(dir.path(), &mut |step| steps.push(step));
    use CommitStep::*;
    // The new file's two folders, the three temps, the commit point, the two new files, the
    // replaced one, the two deletes.
    assert_eq!(
        steps,
        [
            Prepared,
            DirCreated(0),
            DirCreated(1),
            DirCreated(2),
            TempWritten(0),
            TempWritten(2),
            TempWritten(3),
            Committed,
            Replaced(0),
            Replaced(3),
            Replaced(2),
            Deleted(1),
            Deleted(4),
            Retired,
            Finished
        ]
    );
}

#[test]
fn kill_at_every_step_of_a_mixed_apply_leaves_all_old_or_all_new() {
    let reference = tempfile::tempdir().unwrap();
    setup(reference.path());
    let old = tree(reference.path());
    stage(reference.path());
    let mut n_steps = 0;
    apply_head(reference.path(), &mut |_| n_steps += 1);
    let new = tree(reference.path());
    assert_ne!(old, new);
    let mut outcomes = Vec::new();
    for k in 0..=n_steps {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        setup(&root);
        let id = stage(&root);
        let finished = run_child("mixed_apply_reports_every_step", APPLY_CHILD, &root, k).success();
        assert_eq!(finished, k == n_steps, "step {k}");
        let ws = WorkspaceSession::open(&root).unwrap();
        assert!(ws.recovery().refused.is_empty(), "step {k}: {:?}", ws.recovery());
        let now = tree(&root);
        let pending: Vec<String> =
            ws.store().list().unwrap().into_iter().map(|e| e.id.to_string()).collect();
        let log = ws.store().log().unwrap().entries(10, false).unwrap();
        if now == new {
            assert!(pending.is_empty(), "step {k}: written but still pending");
            assert_eq!(log.len(), 1, "step {k}");
            assert_eq!(log[0].record.outcome, LogOutcome::Applied, "step {k}");
        } else {
            assert_eq!(now, old, "step {k}: the tree is neither all old nor all new");
            assert_eq!(pending, std::slice::from_ref(&id), "step {k}: not written, so pending");
            assert!(log.is_empty(), "step {k}: nothing written, nothing logged");
            let res = block_on(ws.session().resolve(
                ResolveParams::apply("again"),
                ResolveOptions::default(),
                &CancelToken::new(),
            ))
            .unwrap();
            assert!(!res.is_error, "step {k}: {}", res.text_content());
            assert_eq!(tree(&root), new, "step {k}");
        }
        assert!(journal_is_clean(&root), "step {k}");
        outcomes.push(now == new);
    }
    // The commit point is the 8th step (7 from 0): killed once it is durable, the files are
    // new.
    let expected: Vec<bool> = (0..=n_steps).map(|k| k >= 7).collect();
    assert_eq!(outcomes, expected);
}

#[test]
fn mixed_undo_reports_every_step() {
    if let Some((root, crash_at)) = child_spec(UNDO_CHILD) {
        let mut observer = abort_at(crash_at);
        undo_newest(&root, &mut observer);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let old = tree(dir.path());
    stage(dir.path());
    apply_head(dir.path(), &mut |_| {});
    undo_newest(dir.path(), &mut |_| {});
    assert_eq!(tree(dir.path()), old);
}

#[test]
fn kill_at_every_step_of_a_mixed_undo_leaves_all_old_or_all_new() {
    let reference = tempfile::tempdir().unwrap();
    setup(reference.path());
    let old = tree(reference.path());
    stage(reference.path());
    apply_head(reference.path(), &mut |_| {});
    let new = tree(reference.path());
    let mut n_steps = 0;
    undo_newest(reference.path(), &mut |_| n_steps += 1);
    assert_eq!(tree(reference.path()), old);
    let mut restored = Vec::new();
    for k in 0..=n_steps {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        setup(&root);
        stage(&root);
        apply_head(&root, &mut |_| {});
        let finished = run_child("mixed_undo_reports_every_step", UNDO_CHILD, &root, k).success();
        assert_eq!(finished, k == n_steps, "step {k}");
        let ws = WorkspaceSession::open(&root).unwrap();
        assert!(ws.recovery().refused.is_empty(), "step {k}: {:?}", ws.recovery());
        let now = tree(&root);
        let log = ws.store().log().unwrap();
        let reverted = log.reverted_by(1).unwrap();
        if now == old {
            assert!(reverted.is_some_and(|r| r.done), "step {k}: restored but not logged");
        } else {
            assert_eq!(now, new, "step {k}: the tree is neither all old nor all new");
            assert!(reverted.is_none(), "step {k}: logged as undone but not restored");
            let res = block_on(ws.session().undo(
                "again",
                UndoOptions { target: None, front_end: Some(&FrontEnd::Cli) },
                &CancelToken::new(),
            ))
            .unwrap();
            assert!(!res.is_error, "step {k}: {}", res.text_content());
            assert_eq!(tree(&root), old, "step {k}");
        }
        assert!(journal_is_clean(&root), "step {k}");
        restored.push(now == old);
    }
    assert!(
        restored.iter().any(|r| !r) && restored.iter().any(|r| *r),
        "{restored:?} of {n_steps} steps"
    );
    assert_eq!(restored.last(), Some(&true));
}
