//! The resolve log as the session writes it (on the in-memory store): every outcome with its
//! decision and front end, undo through a source's handler, undo of an undo as a redo, one
//! undo per entry even when two race, a remainder pushed at the commit point, and retention.
// See: issue 13.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use pretty_assertions::assert_eq;
use staged_core::{
    ActionError, AppliedChange, CancelToken, FileChange, FnPendingAction, FrontEnd, InMemoryStore,
    LogEntry, LogOutcome, PendingAction, ResolveOptions, Retirement, Session, UndoHandler,
    UndoOptions,
};
use staged_protocol::{JsonObject, ResolveParams, ToolResult};

use super::harness::{block_on, counting_action, failing_action};

fn logged(session: &Session) -> Vec<(LogOutcome, String, String, String)> {
    session
        .store()
        .log()
        .unwrap()
        .entries(100, true)
        .unwrap()
        .into_iter()
        .map(|e| (e.record.outcome, e.record.label, e.record.reason, e.record.front_end))
        .collect()
}

fn stale_action(label: &str) -> Arc<dyn PendingAction> {
    Arc::new(FnPendingAction::new(label, |_| async {
        Ok(ToolResult::error("stale: nothing written"))
    }))
}

#[test]
fn every_outcome_is_logged_with_its_decision_and_front_end() {
    let session = Session::new(Arc::new(InMemoryStore::new()));
    let applies = Arc::new(AtomicUsize::new(0));
    let cancel = CancelToken::new();
    session.push_pending_action(counting_action("A", "tool_a", Arc::clone(&applies))).unwrap();
    let mut extra = JsonObject::new();
    extra.insert("ticket".to_owned(), 7.into());
    block_on(session.resolve(
        ResolveParams::apply("yes").with_extra(extra.clone()),
        ResolveOptions::default(),
        &cancel,
    ))
    .unwrap();
    session.push_pending_action(counting_action("B", "tool_b", Arc::clone(&applies))).unwrap();
    block_on(session.resolve(
        ResolveParams::discard("no"),
        ResolveOptions {
            front_end: Some(&FrontEnd::Mcp(Some("claude-code".to_owned()))),
            ..Default::default()
        },
        &cancel,
    ))
    .unwrap();
    session.push_pending_action(failing_action("C")).unwrap();
    session.set_front_end(FrontEnd::Agent);
    block_on(session.resolve(ResolveParams::apply("try"), ResolveOptions::default(), &cancel))
        .unwrap_err();
    assert_eq!(session.store().len().unwrap(), 1, "a failed apply stays pending");
    session.store().pop().unwrap();
    session.push_pending_action(stale_action("D")).unwrap();
    block_on(session.resolve(ResolveParams::apply("late"), ResolveOptions::default(), &cancel))
        .unwrap();
    assert!(session.store().is_empty().unwrap(), "a stale preview is dropped");

    assert_eq!(
        logged(&session),
        [
            (LogOutcome::Stale, "D".into(), "late".into(), "agent".into()),
            (LogOutcome::Failed, "C".into(), "try".into(), "agent".into()),
            (LogOutcome::Discarded, "B".into(), "no".into(), "mcp:claude-code".into()),
            (LogOutcome::Applied, "A".into(), "yes".into(), "cli".into()),
        ]
    );
    let entries = session.store().log().unwrap().entries(100, true).unwrap();
    assert_eq!(entries[3].record.extra, Some(extra));
    assert_eq!(entries[3].record.result, "applied A: yes");
    assert_eq!(entries[3].record.source_tool_name, "tool_a");
    assert_eq!(entries[2].record.result, "Discarded: B. Reason: no");
    assert_eq!(entries[1].record.result, "Apply failed: disk full");
    assert_eq!(entries[0].record.result, "stale: nothing written");
    let numbers: Vec<u64> = entries.iter().map(|e| e.seq).collect();
    assert_eq!(numbers, [3, 2, 1, 0]);
}

/// An undo handler that "writes" nothing and counts its calls.
struct CountingUndo(Arc<AtomicUsize>);

#[async_trait::async_trait]
impl UndoHandler for CountingUndo {
    async fn undo(
        &self,
        entry: &LogEntry,
        _retirement: &Retirement,
        _cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(20));
        Ok(ToolResult::text(format!("reverted {}", entry.seq)))
    }
}

fn applied_session(source: &str) -> Arc<Session> {
    let session = Arc::new(Session::new(Arc::new(InMemoryStore::new())));
    let applies = Arc::new(AtomicUsize::new(0));
    session.push_pending_action(counting_action("A", source, applies)).unwrap();
    block_on(session.resolve(
        ResolveParams::apply("yes"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    session
}

#[test]
fn undo_without_a_handler_for_the_source_writes_nothing_and_says_so() {
    let session = applied_session("tool_a");
    let err = block_on(session.undo(
        "",
        UndoOptions { target: None, front_end: Some(&FrontEnd::Cli) },
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Undo is not available for `tool_a` entries: that tool declares no undo. Nothing was written."
    );
    assert_eq!(logged(&session).len(), 1);
    let empty = Session::new(Arc::new(InMemoryStore::new()));
    let err = block_on(empty.undo(
        "",
        UndoOptions { target: None, front_end: Some(&FrontEnd::Cli) },
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(err.message(), staged_core::NOTHING_TO_UNDO_TEXT);
}

#[test]
fn an_entry_is_undone_once_and_an_undo_of_the_undo_is_a_redo() {
    let session = applied_session("tool_a");
    let calls = Arc::new(AtomicUsize::new(0));
    session.register_undo("tool_a", Arc::new(CountingUndo(Arc::clone(&calls))));
    let cancel = CancelToken::new();
    let res = block_on(session.undo(
        "oops",
        UndoOptions { target: None, front_end: Some(&FrontEnd::Review) },
        &cancel,
    ))
    .unwrap();
    assert_eq!(res.text_content(), "reverted 0");
    let err = block_on(session.undo(
        "again",
        UndoOptions { target: Some(0), front_end: Some(&FrontEnd::Cli) },
        &cancel,
    ))
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Log entry 0 (A) was already reverted by entry 1; nothing was written. `staged undo 1` reverts that one."
    );
    block_on(session.undo(
        "redo",
        UndoOptions { target: Some(1), front_end: Some(&FrontEnd::Cli) },
        &cancel,
    ))
    .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(
        logged(&session),
        [
            (LogOutcome::Redone, "A".into(), "redo".into(), "cli".into()),
            (LogOutcome::Undone, "A".into(), "oops".into(), "review".into()),
            (LogOutcome::Applied, "A".into(), "yes".into(), "cli".into()),
        ]
    );
    let log = session.store().log().unwrap();
    assert_eq!(log.entry(1).unwrap().unwrap().record.reverts, Some(0));
    assert_eq!(log.entry(0).unwrap().unwrap().reverted_by, Some(1));
    // The redo is the newest applied state: the default undo reverts it.
    assert_eq!(log.newest_applied().unwrap(), Some(2));
}

#[test]
fn two_undos_of_one_entry_racing_revert_it_once() {
    for _ in 0..20 {
        let session = applied_session("tool_a");
        let calls = Arc::new(AtomicUsize::new(0));
        session.register_undo("tool_a", Arc::new(CountingUndo(Arc::clone(&calls))));
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let session = Arc::clone(&session);
                std::thread::spawn(move || {
                    block_on(session.undo(
                        "race",
                        UndoOptions { target: None, front_end: Some(&FrontEnd::Cli) },
                        &CancelToken::new(),
                    ))
                })
            })
            .collect();
        let results: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(logged(&session).len(), 2);
    }
}

/// An action that applies half of itself: it prepares a record with a remainder, then retires.
struct Halves;

#[async_trait::async_trait]
impl PendingAction for Halves {
    fn label(&self) -> &str {
        "two halves"
    }

    async fn apply(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        self.apply_retiring(reason, extra, cancel, &Retirement::detached()).await
    }

    async fn apply_retiring(
        &self,
        _reason: &str,
        _extra: Option<&JsonObject>,
        _cancel: &CancelToken,
        retirement: &Retirement,
    ) -> Result<ToolResult, ActionError> {
        let rest: Arc<dyn PendingAction> =
            Arc::new(FnPendingAction::new("the other half", |_| async {
                Ok(ToolResult::text("second half"))
            }));
        let change = AppliedChange {
            result: "first half".to_owned(),
            label: None,
            diff: Some("-a\n+b\n".to_owned()),
            files: vec![FileChange {
                path: "a".to_owned(),
                before: Some("00".to_owned()),
                after: Some("11".to_owned()),
            }],
            undo: None,
            remainder: Some(rest),
            texts: Vec::new(),
        };
        retirement
            .prepare("journal-1", &change)
            .map_err(|err| ActionError::other(err.to_string()))?;
        retirement.retire().map_err(|err| ActionError::other(err.to_string()))?;
        let id = retirement.remainder().unwrap();
        Ok(ToolResult::text(format!("first half; rest is {id}")))
    }
}

#[test]
fn a_remainder_is_pushed_on_top_at_the_commit_point_and_named_in_the_record() {
    let session = Session::new(Arc::new(InMemoryStore::new()));
    let first = session.push_pending_action(Arc::new(Halves)).unwrap();
    let res = block_on(session.resolve(
        ResolveParams::apply("half"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    let head = session.store().peek().unwrap().unwrap();
    assert_ne!(head.id, first);
    assert_eq!(head.label(), "the other half");
    assert_eq!(res.text_content(), format!("first half; rest is {}", head.id));
    let entry = &session.store().log().unwrap().entries(1, true).unwrap()[0];
    assert_eq!(entry.record.outcome, LogOutcome::Applied);
    assert_eq!(
        entry.record.result,
        format!(
            "first half The rest stays pending as the newest preview: the other half ({}).",
            head.id
        )
    );
    assert_eq!(entry.record.diff.as_deref(), Some("-a\n+b\n"));
    assert_eq!(entry.record.files[0].after.as_deref(), Some("11"));
}

#[test]
fn retention_keeps_the_newest_entries() {
    let session = Session::new(Arc::new(InMemoryStore::new()));
    let log = session.store().log().unwrap();
    assert_eq!(log.keep().unwrap(), staged_core::DEFAULT_LOG_KEEP);
    log.set_keep(2).unwrap();
    for i in 0..5 {
        let applies = Arc::new(AtomicUsize::new(0));
        session.push_pending_action(counting_action(&format!("A{i}"), "t", applies)).unwrap();
        block_on(session.resolve(
            ResolveParams::apply("yes"),
            ResolveOptions::default(),
            &CancelToken::new(),
        ))
        .unwrap();
    }
    let labels: Vec<String> =
        log.entries(10, false).unwrap().into_iter().map(|e| e.record.label).collect();
    assert_eq!(labels, ["A4", "A3"]);
}

/// An action that reports what it wrote, as a plugin would.
struct Reporting;

#[async_trait::async_trait]
impl PendingAction for Reporting {
    fn label(&self) -> &str {
        "reporting"
    }

    async fn apply(
        &self,
        _reason: &str,
        _extra: Option<&JsonObject>,
        _cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        Ok(ToolResult::text("wrote x"))
    }

    fn applied_change(&self, result: &ToolResult) -> Option<AppliedChange> {
        Some(AppliedChange {
            result: result.text_content(),
            label: None,
            diff: Some("-1\n+2\n".to_owned()),
            files: vec![FileChange {
                path: "x".to_owned(),
                before: None,
                after: Some("22".to_owned()),
            }],
            undo: Some(serde_json::json!({"restore": "x"})),
            remainder: None,
            texts: Vec::new(),
        })
    }
}

#[test]
fn an_action_that_does_not_retire_itself_can_report_what_it_wrote() {
    let session = Session::new(Arc::new(InMemoryStore::new()));
    session.push_pending_action(Arc::new(Reporting)).unwrap();
    block_on(session.resolve(
        ResolveParams::apply("ok"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    let entry = &session.store().log().unwrap().entries(1, true).unwrap()[0];
    assert_eq!(entry.record.result, "wrote x");
    assert_eq!(entry.record.diff.as_deref(), Some("-1\n+2\n"));
    assert_eq!(entry.record.files[0].before, None);
    assert_eq!(entry.record.undo, Some(serde_json::json!({"restore": "x"})));
}

/// A preview a client's hook staged (Claude Code's own Edit, held back).
struct HookStaged;

#[async_trait::async_trait]
impl PendingAction for HookStaged {
    fn label(&self) -> &str {
        "Edit: a.ts"
    }

    fn staged_by(&self) -> Option<FrontEnd> {
        Some(FrontEnd::Hook("claude-code".to_owned()))
    }

    async fn apply(
        &self,
        _reason: &str,
        _extra: Option<&JsonObject>,
        _cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        Ok(ToolResult::text("applied"))
    }
}

#[test]
fn a_hook_staged_preview_resolved_over_mcp_is_logged_as_the_hook() {
    let session = Session::new(Arc::new(InMemoryStore::new()));
    let cancel = CancelToken::new();
    let mcp = FrontEnd::Mcp(Some("claude-code".to_owned()));
    session.push_pending_action(Arc::new(HookStaged)).unwrap();
    block_on(session.resolve(
        ResolveParams::apply("by the model"),
        ResolveOptions { front_end: Some(&mcp), ..Default::default() },
        &cancel,
    ))
    .unwrap();
    // A person who decides in the review keeps their own front end.
    session.push_pending_action(Arc::new(HookStaged)).unwrap();
    block_on(session.resolve(
        ResolveParams::discard("by a person"),
        ResolveOptions { front_end: Some(&FrontEnd::Review), ..Default::default() },
        &cancel,
    ))
    .unwrap();
    // A preview of a model's own tool call stays `mcp:<client>`.
    session
        .push_pending_action(counting_action("B", "tool_b", Arc::new(AtomicUsize::new(0))))
        .unwrap();
    block_on(session.resolve(
        ResolveParams::apply("plain"),
        ResolveOptions { front_end: Some(&mcp), ..Default::default() },
        &cancel,
    ))
    .unwrap();
    let fronts: Vec<String> = logged(&session).into_iter().map(|(_, _, _, front)| front).collect();
    assert_eq!(fronts, ["mcp:claude-code", "review", "hook:claude-code"]);
}

#[test]
fn a_bare_undo_walks_back_and_redo_walks_forward_until_a_new_apply() {
    let session = Arc::new(Session::new(Arc::new(InMemoryStore::new())));
    let applies = Arc::new(AtomicUsize::new(0));
    session.register_undo("tool_a", Arc::new(CountingUndo(Arc::new(AtomicUsize::new(0)))));
    let cancel = CancelToken::new();
    for label in ["A", "B"] {
        session
            .push_pending_action(counting_action(label, "tool_a", Arc::clone(&applies)))
            .unwrap();
        block_on(session.resolve(ResolveParams::apply("yes"), ResolveOptions::default(), &cancel))
            .unwrap();
    }
    // Entries 0 (A) and 1 (B) applied: undo reverts 1, then 0, then has nothing left.
    let undo = || {
        block_on(session.undo(
            "",
            UndoOptions { target: None, front_end: Some(&FrontEnd::Cli) },
            &cancel,
        ))
    };
    let redo = || block_on(session.redo("", &FrontEnd::Cli, &cancel));
    assert_eq!(undo().unwrap().text_content(), "reverted 1");
    assert_eq!(undo().unwrap().text_content(), "reverted 0");
    assert_eq!(undo().unwrap_err().message(), staged_core::NOTHING_TO_UNDO_TEXT);
    // Redo reverts the newest undo (3, of A), then the one before (2, of B).
    assert_eq!(redo().unwrap().text_content(), "reverted 3");
    assert_eq!(redo().unwrap().text_content(), "reverted 2");
    assert_eq!(redo().unwrap_err().message(), staged_core::NOTHING_TO_REDO_TEXT);
    // Undo the redo of B (entry 5), then apply C: redo has nothing left to walk.
    assert_eq!(undo().unwrap().text_content(), "reverted 5");
    session.push_pending_action(counting_action("C", "tool_a", Arc::clone(&applies))).unwrap();
    block_on(session.resolve(ResolveParams::apply("yes"), ResolveOptions::default(), &cancel))
        .unwrap();
    assert_eq!(redo().unwrap_err().message(), staged_core::NOTHING_TO_REDO_TEXT);
    assert_eq!(undo().unwrap().text_content(), "reverted 7");
}
