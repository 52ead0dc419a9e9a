//! Kill -9 at every step of a staged preview's apply, then open the workspace again: every
//! file is wholly old or wholly new, all files agree, and the pending stack agrees with them.
//! A preview whose files were written is never left pending (it leaves the stack before its
//! journal is deleted), and one whose files were not is still pending and applies cleanly.
//!
//! The same holds for an undo (the resolve log says `undone` exactly when the files are the
//! old ones) and for a partial apply (the rest of the preview is pending under a new id
//! exactly when the chosen file is written), and for an apply of one hunk of a file (the rest,
//! the file's other hunk included, is pending under a new id exactly when the hunk is written).
//! And for an apply of many files whose temps one `syncfs` makes durable
//! (`staged_fs::SyncBatch`), as for one whose temps are each fsynced.
//!
//! The test re-runs its own binary as a child (`apply_reports_every_step`, and its undo and
//! partial-apply twins), which applies the head with an observer that aborts the process at
//! step k. Run on its own, without the child's environment variable, such a test runs in a
//! fresh workspace and checks the steps, the files and the stack.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::json;
use staged_ast_edit::AstEditAction;
use staged_core::{
    CancelToken, FrontEnd, LogAction, LogOutcome, LogRecord, ResolveOptions, Retirement, Tool,
    UndoOptions,
};
use staged_fs::{SyncBatchPolicy, set_sync_batch_policy, sync_batches_finished};
use staged_journal::CommitStep;
use staged_journal::{Selection, undo_observed};
use staged_protocol::ResolveParams;
use staged_test_support::crash::{abort_at, child_spec, run_child};
use staged_workspace::WorkspaceSession;

const CHILD_ENV: &str = "STAGED_WORKSPACE_CRASH_CHILD";
const UNDO_CHILD_ENV: &str = "STAGED_WORKSPACE_UNDO_CRASH_CHILD";
const PARTIAL_CHILD_ENV: &str = "STAGED_WORKSPACE_PARTIAL_CRASH_CHILD";
const BATCH_CHILD_ENV: &str = "STAGED_WORKSPACE_BATCH_CRASH_CHILD";
const FILES: [&str; 3] = ["a.ts", "src/b.ts", "src/deep/c.ts"];

fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(fut)
}

fn all_steps() -> Vec<CommitStep> {
    steps_of(FILES.len())
}

/// The steps of a commit that writes `n` files.
fn steps_of(n: usize) -> Vec<CommitStep> {
    let mut res = vec![CommitStep::Prepared];
    res.extend((0..n).map(CommitStep::TempWritten));
    res.push(CommitStep::Committed);
    res.extend((0..n).map(CommitStep::Replaced));
    res.extend([CommitStep::Retired, CommitStep::Finished]);
    res
}

fn old_text(path: &str) -> String {
    format!("// {path}\nfoo(1);\n")
}

fn new_text(path: &str) -> String {
    format!("// {path}\nbar(1);\n")
}

/// The three files most tests stage.
fn files() -> Vec<String> {
    FILES.iter().map(|p| (*p).to_owned()).collect()
}

/// The files of the batched apply: enough for one `syncfs` to make their temps durable
/// (`staged_fs::SyncBatch`).
fn batch_files() -> Vec<String> {
    (0..12).map(|i| format!("src/f{i:02}.ts")).collect()
}

/// A workspace with the three files and the rewrite staged; returns the pending id.
fn stage(root: &Path) -> String {
    stage_files(root, &files())
}

/// A workspace with `files` and their rewrite staged; returns the pending id.
fn stage_files(root: &Path, files: &[String]) -> String {
    for p in files {
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

fn applied(n: usize) -> String {
    format!("Applied {n} replacements in {n} files.")
}

/// Applies the head (a rewrite of `n` files) the way `resolve` does, with an observer on
/// the commit.
fn apply_head(root: &Path, n: usize, observer: &mut dyn FnMut(CommitStep)) {
    let ws = WorkspaceSession::open(root).unwrap();
    let store = ws.store().clone();
    let claim = store.claim_head().unwrap().unwrap();
    let payload = claim.entry().action.payload().unwrap();
    let action = AstEditAction::from_payload(ws.workspace().clone(), &payload).unwrap();
    let retirement = Retirement::claimed(store, claim);
    let res = action.apply_observed(&CancelToken::new(), &retirement, observer).unwrap();
    assert_eq!(res.text_content(), applied(n));
    assert!(retirement.is_retired());
}

/// The child's half (with `env` set: applies and aborts at its step) and the parent's (the
/// steps reported, the files written, nothing left to recover) of an apply of `files`.
fn apply_reports_every_step_of(files: &[String], env: &str) {
    if let Some((root, crash_at)) = child_spec(env) {
        apply_head(&root, files.len(), &mut abort_at(crash_at));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    stage_files(dir.path(), files);
    let mut steps = Vec::new();
    apply_head(dir.path(), files.len(), &mut |step| steps.push(step));
    assert_eq!(steps, steps_of(files.len()));
    for p in files {
        assert_eq!(std::fs::read_to_string(dir.path().join(p)).unwrap(), new_text(p));
    }
    let ws = WorkspaceSession::open(dir.path()).unwrap();
    assert!(ws.recovery().is_empty(), "{:?}", ws.recovery());
    assert!(ws.store().is_empty().unwrap());
}

/// Kills `child` (an `apply_reports_every_step_of(files, env)`) at every step, then checks
/// the files, the stack and the journal folder.
fn kill_at_every_step_of_an_apply(files: &[String], child: &str, env: &str) {
    let n_steps = steps_of(files.len()).len();
    let mut outcomes = Vec::new();
    for crash_at in 0..=n_steps {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let id = stage_files(&root, files);
        let status = run_child(child, env, &root, crash_at);
        assert_eq!(status.success(), crash_at == n_steps, "step {crash_at}: {status:?}");

        // Any next start recovers.
        let ws = WorkspaceSession::open(&root).unwrap();
        assert!(ws.recovery().refused.is_empty(), "step {crash_at}: {:?}", ws.recovery());
        let new: Vec<bool> = files
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
            let res = block_on(ws.session().resolve(
                ResolveParams::apply("again"),
                ResolveOptions::default(),
                &CancelToken::new(),
            ))
            .unwrap();
            assert_eq!(res.text_content(), applied(files.len()));
        }
        assert_eq!(journal_names(&root), ["commit.lock", "write.lock"], "step {crash_at}");
        let mut found = files_below(&root, &root);
        found.sort();
        let mut expected = files.to_vec();
        expected.sort();
        assert_eq!(found, expected, "step {crash_at}: a temp file was left beside the files");
        outcomes.push(new[0]);
    }
    // The journal's switch to `committed` comes after the temps: from it on, the files are new.
    let expected: Vec<bool> = (0..=n_steps).map(|k| k > files.len()).collect();
    assert_eq!(outcomes, expected);
}

/// The files below `dir` (`.staged/` aside), as paths relative to `root`.
fn files_below(root: &Path, dir: &Path) -> Vec<String> {
    let mut res = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path == root.join(".staged") {
            continue;
        }
        if path.is_dir() {
            res.extend(files_below(root, &path));
        } else {
            res.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
    res
}

#[test]
fn apply_reports_every_step() {
    // The child of `kill_at_every_step_keeps_files_and_stack_in_agreement` too.
    apply_reports_every_step_of(&files(), CHILD_ENV);
}

#[test]
fn kill_at_every_step_keeps_files_and_stack_in_agreement() {
    kill_at_every_step_of_an_apply(&files(), "apply_reports_every_step", CHILD_ENV);
}

#[test]
fn a_batched_apply_reports_every_step() {
    // One `syncfs` for the temps, forced so that the test takes that path on any machine,
    // whatever else waits to be written. The child of the test below too.
    set_sync_batch_policy(SyncBatchPolicy::Always);
    let batches = sync_batches_finished();
    apply_reports_every_step_of(&batch_files(), BATCH_CHILD_ENV);
    assert_eq!(sync_batches_finished(), batches + 1, "the temps were synced one by one");
}

#[test]
fn kill_at_every_step_of_a_batched_apply_keeps_files_and_stack_in_agreement() {
    kill_at_every_step_of_an_apply(
        &batch_files(),
        "a_batched_apply_reports_every_step",
        BATCH_CHILD_ENV,
    );
}

/// Undoes the newest applied entry the way `Session::undo` does, with an observer on the
/// commit.
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
    assert_eq!(
        res.text_content(),
        "Undid log entry 1 (AST Edit: 3 replacements in 3 files): 3 files restored."
    );
    assert!(retirement.is_retired());
}

/// Stages and applies the rewrite of the three files; returns the pending id.
fn stage_and_apply(root: &Path) -> String {
    let id = stage(root);
    let ws = WorkspaceSession::open(root).unwrap();
    let res = block_on(ws.session().resolve(
        ResolveParams::apply("first"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "Applied 3 replacements in 3 files.");
    id
}

fn outcomes(ws: &WorkspaceSession) -> Vec<LogOutcome> {
    ws.store().log().unwrap().entries(10, false).unwrap().iter().map(|e| e.record.outcome).collect()
}

fn journal_names(root: &Path) -> Vec<String> {
    staged_test_support::sorted_names(&root.join(".staged/journal"))
}

#[test]
fn undo_reports_every_step() {
    if let Some((root, crash_at)) = child_spec(UNDO_CHILD_ENV) {
        undo_newest(&root, &mut abort_at(crash_at));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    stage_and_apply(dir.path());
    let mut steps = Vec::new();
    undo_newest(dir.path(), &mut |step| steps.push(step));
    assert_eq!(steps, all_steps());
    for p in FILES {
        assert_eq!(std::fs::read_to_string(dir.path().join(p)).unwrap(), old_text(p));
    }
    let ws = WorkspaceSession::open(dir.path()).unwrap();
    assert!(ws.recovery().is_empty(), "{:?}", ws.recovery());
    assert_eq!(outcomes(&ws), [LogOutcome::Undone, LogOutcome::Applied]);
}

#[test]
fn kill_at_every_step_of_an_undo_keeps_files_and_log_in_agreement() {
    let n_steps = all_steps().len();
    let mut undone = Vec::new();
    for crash_at in 0..=n_steps {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        stage_and_apply(&root);
        let status = run_child("undo_reports_every_step", UNDO_CHILD_ENV, &root, crash_at);
        assert_eq!(status.success(), crash_at == n_steps, "step {crash_at}: {status:?}");

        let ws = WorkspaceSession::open(&root).unwrap();
        assert!(ws.recovery().refused.is_empty(), "step {crash_at}: {:?}", ws.recovery());
        let old: Vec<bool> = FILES
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(root.join(p)).unwrap();
                assert!(text == old_text(p) || text == new_text(p), "step {crash_at}: {p} is torn");
                text == old_text(p)
            })
            .collect();
        assert!(old.iter().all(|o| *o == old[0]), "step {crash_at}: files disagree: {old:?}");
        if old[0] {
            assert_eq!(outcomes(&ws), [LogOutcome::Undone, LogOutcome::Applied], "step {crash_at}");
        } else {
            assert_eq!(
                outcomes(&ws),
                [LogOutcome::Applied],
                "step {crash_at}: not undone, not logged"
            );
            let res = block_on(ws.session().undo(
                "again",
                UndoOptions { target: None, front_end: Some(&FrontEnd::Cli) },
                &CancelToken::new(),
            ))
            .unwrap();
            assert!(!res.is_error, "step {crash_at}: {}", res.text_content());
            assert_eq!(outcomes(&ws), [LogOutcome::Undone, LogOutcome::Applied]);
        }
        assert!(ws.store().is_empty().unwrap());
        assert_eq!(journal_names(&root), ["commit.lock", "write.lock"], "step {crash_at}");
        undone.push(old[0]);
    }
    let expected: Vec<bool> = (0..=n_steps).map(|k| k > FILES.len()).collect();
    assert_eq!(undone, expected);
}

/// Applies only the first file of the head, with an observer on the commit.
fn apply_first_file(root: &Path, observer: &mut dyn FnMut(CommitStep)) {
    let ws = WorkspaceSession::open(root).unwrap();
    let store = ws.store().clone();
    let claim = store.claim_head().unwrap().unwrap();
    let payload = claim.entry().action.payload().unwrap();
    let action = AstEditAction::from_payload(ws.workspace().clone(), &payload).unwrap();
    // Logged as `resolve` logs it.
    let base = LogRecord::new(
        claim.entry().id.clone(),
        claim.entry().label(),
        claim.entry().source_tool_name(),
        LogOutcome::Applied,
        LogAction::Apply,
        &FrontEnd::Cli,
    );
    let retirement = Retirement::claimed_logged(store, claim, base);
    let only = Selection::files([FILES[0]]);
    let res = action
        .apply_only_observed(Some(&only), &CancelToken::new(), &retirement, observer)
        .unwrap();
    assert!(
        res.text_content().starts_with("Applied 1 replacement in 1 file. The rest stays pending"),
        "{}",
        res.text_content()
    );
    assert!(retirement.is_retired());
}

#[test]
fn partial_apply_reports_every_step() {
    if let Some((root, crash_at)) = child_spec(PARTIAL_CHILD_ENV) {
        apply_first_file(&root, &mut abort_at(crash_at));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let id = stage(dir.path());
    let mut steps = Vec::new();
    apply_first_file(dir.path(), &mut |step| steps.push(step));
    let expected = [
        CommitStep::Prepared,
        CommitStep::TempWritten(0),
        CommitStep::Committed,
        CommitStep::Replaced(0),
        CommitStep::Retired,
        CommitStep::Finished,
    ];
    assert_eq!(steps, expected);
    let ws = WorkspaceSession::open(dir.path()).unwrap();
    let pending = ws.store().list().unwrap();
    assert_eq!(pending.len(), 1);
    assert_ne!(pending[0].id.as_str(), id);
    assert_eq!(pending[0].label(), "AST Edit: 2 replacements in 2 files");
}

#[test]
fn kill_at_every_step_of_a_partial_apply_leaves_the_rest_pending_exactly_once() {
    let n_steps = 6;
    let mut written = Vec::new();
    for crash_at in 0..=n_steps {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let id = stage(&root);
        let status =
            run_child("partial_apply_reports_every_step", PARTIAL_CHILD_ENV, &root, crash_at);
        assert_eq!(status.success(), crash_at == n_steps, "step {crash_at}: {status:?}");

        let ws = WorkspaceSession::open(&root).unwrap();
        assert!(ws.recovery().refused.is_empty(), "step {crash_at}: {:?}", ws.recovery());
        let first = std::fs::read_to_string(root.join(FILES[0])).unwrap();
        for p in &FILES[1..] {
            assert_eq!(
                std::fs::read_to_string(root.join(p)).unwrap(),
                old_text(p),
                "step {crash_at}"
            );
        }
        let pending = ws.store().list().unwrap();
        assert_eq!(pending.len(), 1, "step {crash_at}");
        if first == new_text(FILES[0]) {
            assert_ne!(pending[0].id.as_str(), id, "step {crash_at}: written, so the rest is new");
            assert_eq!(pending[0].label(), "AST Edit: 2 replacements in 2 files");
            assert_eq!(outcomes(&ws), [LogOutcome::Applied], "step {crash_at}");
            let entry = &ws.store().log().unwrap().entries(1, false).unwrap()[0];
            assert!(
                entry.record.result.ends_with(&format!("({}).", pending[0].id)),
                "step {crash_at}"
            );
        } else {
            assert_eq!(first, old_text(FILES[0]), "step {crash_at}: torn");
            assert_eq!(
                pending[0].id.as_str(),
                id,
                "step {crash_at}: not written, so still pending"
            );
            assert!(outcomes(&ws).is_empty(), "step {crash_at}");
        }
        // Whatever is pending applies cleanly now, and every file ends new.
        let res = block_on(ws.session().resolve(
            ResolveParams::apply("again"),
            ResolveOptions::default(),
            &CancelToken::new(),
        ))
        .unwrap();
        assert!(!res.is_error, "step {crash_at}: {}", res.text_content());
        for p in FILES {
            assert_eq!(
                std::fs::read_to_string(root.join(p)).unwrap(),
                new_text(p),
                "step {crash_at}"
            );
        }
        assert_eq!(journal_names(&root), ["commit.lock", "write.lock"], "step {crash_at}");
        written.push(first == new_text(FILES[0]));
    }
    // The commit point is step 2 (from 0): from it on, the first file is written.
    let expected: Vec<bool> = (0..=n_steps).map(|k| k > 1).collect();
    assert_eq!(written, expected);
}

const HUNK_CHILD_ENV: &str = "STAGED_WORKSPACE_HUNK_CRASH_CHILD";

/// A file whose rewrite has two hunks (`foo` on line 1 and on line 20).
fn two_hunks(name: &str) -> String {
    let middle: String = (2..20).map(|i| format!("keep({i});\n")).collect();
    format!("{name}(1);\n{middle}{name}(2);\n")
}

/// A workspace with `h.ts` (two hunks) and `b.ts`, the rewrite staged; returns the id.
fn stage_hunks(root: &Path) -> String {
    std::fs::write(root.join("h.ts"), two_hunks("foo")).unwrap();
    std::fs::write(root.join("b.ts"), "foo(3);\n").unwrap();
    let ws = WorkspaceSession::open(root).unwrap();
    let res = block_on(ws.ast_edit_tool().execute(
        json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["."], "lang": "typescript"}),
        &CancelToken::new(),
    ))
    .unwrap();
    res.details.unwrap()["pendingId"].as_str().unwrap().to_owned()
}

/// `h.ts` with only its second hunk written.
fn second_hunk_written() -> String {
    two_hunks("foo").replace("foo(2)", "bar(2)")
}

/// Applies only hunk 2 of `h.ts`, with an observer on the commit, logged as `resolve` logs it.
fn apply_second_hunk(root: &Path, observer: &mut dyn FnMut(CommitStep)) {
    let ws = WorkspaceSession::open(root).unwrap();
    let store = ws.store().clone();
    let claim = store.claim_head().unwrap().unwrap();
    let payload = claim.entry().action.payload().unwrap();
    let action = AstEditAction::from_payload(ws.workspace().clone(), &payload).unwrap();
    let base = LogRecord::new(
        claim.entry().id.clone(),
        claim.entry().label(),
        claim.entry().source_tool_name(),
        LogOutcome::Applied,
        LogAction::Apply,
        &FrontEnd::Cli,
    );
    let retirement = Retirement::claimed_logged(store, claim, base);
    let only = Selection::hunks([("h.ts", vec![2])]);
    let res = action
        .apply_only_observed(Some(&only), &CancelToken::new(), &retirement, observer)
        .unwrap();
    assert!(
        res.text_content().starts_with(
            "Applied 1 replacement in 1 file (h.ts: hunk 2 of 2). The rest stays pending"
        ),
        "{}",
        res.text_content()
    );
    assert!(retirement.is_retired());
}

#[test]
fn hunk_apply_reports_every_step() {
    if let Some((root, crash_at)) = child_spec(HUNK_CHILD_ENV) {
        apply_second_hunk(&root, &mut abort_at(crash_at));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let id = stage_hunks(dir.path());
    let mut steps = Vec::new();
    apply_second_hunk(dir.path(), &mut |step| steps.push(step));
    let expected = [
        CommitStep::Prepared,
        CommitStep::TempWritten(0),
        CommitStep::Committed,
        CommitStep::Replaced(0),
        CommitStep::Retired,
        CommitStep::Finished,
    ];
    assert_eq!(steps, expected);
    assert_eq!(std::fs::read_to_string(dir.path().join("h.ts")).unwrap(), second_hunk_written());
    let ws = WorkspaceSession::open(dir.path()).unwrap();
    let pending = ws.store().list().unwrap();
    assert_eq!(pending.len(), 1);
    assert_ne!(pending[0].id.as_str(), id);
    assert_eq!(pending[0].label(), "AST Edit: 2 replacements in 2 files");
}

#[test]
fn kill_at_every_step_of_a_hunk_apply_leaves_the_rest_pending_exactly_once() {
    let n_steps = 6;
    let mut written = Vec::new();
    for crash_at in 0..=n_steps {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let id = stage_hunks(&root);
        let status = run_child("hunk_apply_reports_every_step", HUNK_CHILD_ENV, &root, crash_at);
        assert_eq!(status.success(), crash_at == n_steps, "step {crash_at}: {status:?}");

        let ws = WorkspaceSession::open(&root).unwrap();
        assert!(ws.recovery().refused.is_empty(), "step {crash_at}: {:?}", ws.recovery());
        let h = std::fs::read_to_string(root.join("h.ts")).unwrap();
        assert_eq!(std::fs::read_to_string(root.join("b.ts")).unwrap(), "foo(3);\n");
        let pending = ws.store().list().unwrap();
        assert_eq!(pending.len(), 1, "step {crash_at}");
        if h == second_hunk_written() {
            assert_ne!(pending[0].id.as_str(), id, "step {crash_at}: written, so the rest is new");
            assert_eq!(pending[0].label(), "AST Edit: 2 replacements in 2 files");
            assert_eq!(outcomes(&ws), [LogOutcome::Applied], "step {crash_at}");
            let entry = &ws.store().log().unwrap().entries(1, false).unwrap()[0];
            assert_eq!(entry.record.label, "AST Edit: 1 replacement in 1 file", "step {crash_at}");
        } else {
            assert_eq!(h, two_hunks("foo"), "step {crash_at}: torn");
            assert_eq!(pending[0].id.as_str(), id, "step {crash_at}: not written, still pending");
            assert!(outcomes(&ws).is_empty(), "step {crash_at}");
        }
        // Whatever is pending applies cleanly now, and both files end rewritten.
        let res = block_on(ws.session().resolve(
            ResolveParams::apply("again"),
            ResolveOptions::default(),
            &CancelToken::new(),
        ))
        .unwrap();
        assert!(!res.is_error, "step {crash_at}: {}", res.text_content());
        assert_eq!(std::fs::read_to_string(root.join("h.ts")).unwrap(), two_hunks("bar"));
        assert_eq!(std::fs::read_to_string(root.join("b.ts")).unwrap(), "bar(3);\n");
        assert_eq!(journal_names(&root), ["commit.lock", "write.lock"], "step {crash_at}");
        written.push(h == second_hunk_written());
    }
    // The commit point is step 2 (from 0): from it on, the hunk is written.
    let expected: Vec<bool> = (0..=n_steps).map(|k| k > 1).collect();
    assert_eq!(written, expected);
}
