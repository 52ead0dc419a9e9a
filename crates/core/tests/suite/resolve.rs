//! The `resolve` tool (`docs/contract/resolve.md`), including our stronger guarantees (exactly
//! once, cancellation, dispatch order).

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use pretty_assertions::assert_eq;
use serde_json::json;
use staged_core::{
    ActionError, CancelToken, FnPendingAction, ResolveOptions, ResolveTool, Session, Tool,
    ToolError, ToolErrorKind,
};
use staged_protocol::{ResolveParams, ToolResult};

use super::harness::{CountingStore, block_on, counting_action, failing_action, session};

fn apply_args(reason: &str) -> serde_json::Value {
    json!({"action": "apply", "reason": reason})
}

#[test]
fn requires_action_and_reason_in_schema() {
    let schema = ResolveTool::schema();
    let mut required: Vec<&str> =
        schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    required.sort_unstable();
    assert_eq!(required, ["action", "reason"]);
    assert_eq!(schema["properties"]["action"]["enum"], json!(["apply", "discard"]));
    assert_eq!(schema["properties"]["extra"]["type"], "object");
    assert_eq!(schema["additionalProperties"], json!(false));
}

#[test]
fn errors_and_clears_stale_pending_markers_when_apply_has_no_invoker() {
    let store = Arc::new(CountingStore::default());
    let tool = ResolveTool::new(Arc::new(Session::new(store.clone())));
    let err = block_on(tool.execute(apply_args("ship it"), &CancelToken::new())).unwrap_err();
    assert_eq!(err.message(), "No pending action to resolve. Nothing to apply or discard.");
    assert_eq!(store.stale_clears.load(Ordering::SeqCst), 1);
    assert!(err.to_result().is_error);
}

#[test]
fn treats_discard_with_no_pending_action_as_a_successful_cancellation_and_clears_stale_markers() {
    let store = Arc::new(CountingStore::default());
    let tool = ResolveTool::new(Arc::new(Session::new(store.clone())));
    let res = block_on(tool.execute(
        json!({"action": "discard", "reason": "Abandoning the staged edit."}),
        &CancelToken::new(),
    ))
    .unwrap();
    assert!(!res.is_error);
    assert!(res.text_content().contains("Nothing to discard"));
    assert_eq!(
        res.details,
        Some(json!({"action": "discard", "reason": "Abandoning the staged edit."}))
    );
    assert_eq!(store.stale_clears.load(Ordering::SeqCst), 1);
}

#[test]
fn discards_pending_action_and_clears_store() {
    let session = session();
    let rejected = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&rejected);
    session
        .push_pending_action(Arc::new(
            FnPendingAction::new("AST Edit: 2 replacements in 1 file", |_| async {
                panic!("apply must not run on discard")
            })
            .with_source_tool_name("ast_edit")
            .with_reject(move |input| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock().unwrap().push(input.reason);
                    Ok(Some(ToolResult::text("Rejected pending preview.")))
                }
            }),
        ))
        .unwrap();
    let res = block_on(ResolveTool::new(session.clone()).execute(
        json!({"action": "discard", "reason": "Preview changed wrong callsites"}),
        &CancelToken::new(),
    ))
    .unwrap();
    assert!(res.text_content().contains("Rejected pending preview."));
    assert_eq!(
        res.details,
        Some(json!({
            "action": "discard",
            "reason": "Preview changed wrong callsites",
            "sourceToolName": "ast_edit",
            "label": "AST Edit: 2 replacements in 1 file"
        }))
    );
    assert_eq!(*rejected.lock().unwrap(), ["Preview changed wrong callsites"]);
    assert!(session.store().is_empty().unwrap());
}

#[test]
fn applies_pending_action_and_clears_store() {
    let session = session();
    session
        .push_pending_action(Arc::new(
            FnPendingAction::new("AST Edit: 1 replacement in 1 file", |input| async move {
                assert_eq!(input.reason, "Preview is correct");
                Ok(ToolResult::text("Applied 1 replacement in 1 file.")
                    .with_details(json!({"totalReplacements": 1})))
            })
            .with_source_tool_name("ast_edit"),
        ))
        .unwrap();
    let res = block_on(
        ResolveTool::new(session.clone())
            .execute(apply_args("Preview is correct"), &CancelToken::new()),
    )
    .unwrap();
    assert!(!res.is_error);
    assert!(res.text_content().contains("Applied 1 replacement in 1 file."));
    assert_eq!(
        res.details,
        Some(json!({
            "action": "apply",
            "reason": "Preview is correct",
            "sourceToolName": "ast_edit",
            "label": "AST Edit: 1 replacement in 1 file",
            "sourceResultDetails": {"totalReplacements": 1}
        }))
    );
    assert!(session.store().is_empty().unwrap());
}

#[test]
fn discard_without_reject_reports_default_message_and_passes_extra() {
    let session = session();
    session
        .push_pending_action(counting_action("Batch rename: 2 files", "batch", Default::default()))
        .unwrap();
    let extra = json!({"ticket": "ABC-1"}).as_object().unwrap().clone();
    let res = block_on(session.resolve(
        ResolveParams::discard("not needed").with_extra(extra),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "Discarded: Batch rename: 2 files. Reason: not needed");
    assert_eq!(
        res.details,
        Some(json!({
            "action": "discard",
            "reason": "not needed",
            "extra": {"ticket": "ABC-1"},
            "sourceToolName": "batch",
            "label": "Batch rename: 2 files"
        }))
    );
}

#[test]
fn resolves_pending_actions_in_lifo_order() {
    let session = session();
    let applies = Arc::new(AtomicUsize::new(0));
    session.push_pending_action(counting_action("First", "t", applies.clone())).unwrap();
    session.push_pending_action(counting_action("Second", "t", applies.clone())).unwrap();
    let res = block_on(session.resolve(
        ResolveParams::apply("go"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "applied Second: go");
    assert!(!session.store().is_empty().unwrap());
    let res = block_on(session.resolve(
        ResolveParams::apply("go"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "applied First: go");
    assert!(session.store().is_empty().unwrap());
    assert_eq!(applies.load(Ordering::SeqCst), 2);
}

#[test]
fn failed_apply_keeps_the_same_action_pending_on_top_and_wraps_the_message() {
    let session = session();
    let under =
        session.push_pending_action(counting_action("Under", "t", Default::default())).unwrap();
    let id = session.push_pending_action(failing_action("Flaky")).unwrap();
    let err = block_on(session.resolve(
        ResolveParams::apply("try"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(err.message(), "Apply failed: disk full");
    assert_eq!(err.kind(), ToolErrorKind::Failed);
    assert_eq!(err.details().unwrap()["label"], "Flaky");
    let ids: Vec<_> = session.store().list().unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, [id, under]);
}

#[test]
fn tool_error_from_apply_passes_through_unchanged() {
    let session = session();
    session
        .push_pending_action(Arc::new(FnPendingAction::new("Plan", |_| async {
            Err(ActionError::Tool(ToolError::new("Plan mode is not active.")))
        })))
        .unwrap();
    let err = block_on(session.resolve(
        ResolveParams::apply("ok"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(err.message(), "Plan mode is not active.");
    assert_eq!(session.store().len().unwrap(), 1);
}

#[test]
fn reject_errors_pass_through_unwrapped_and_keep_the_action() {
    let session = session();
    session
        .push_pending_action(Arc::new(
            FnPendingAction::new("Lock", |_| async { Ok(ToolResult::text("x")) })
                .with_reject(|_| async { Err(ActionError::other("lock still held")) }),
        ))
        .unwrap();
    let err = block_on(session.resolve(
        ResolveParams::discard("no"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(err.message(), "lock still held");
    assert_eq!(session.store().len().unwrap(), 1);
}

#[test]
fn apply_result_with_is_error_still_consumes_the_action() {
    // A stale preview reports an error *result*; the preview is consumed
    // (`docs/contract/ast-edit.md#apply-and-the-stale-check`).
    let session = session();
    session
        .push_pending_action(Arc::new(FnPendingAction::new(
            "AST Edit: 1 replacement in 1 file",
            |_| async {
                Ok(ToolResult::error(
                    "Preview is stale / no longer matches; no replacements were applied.",
                ))
            },
        )))
        .unwrap();
    let res = block_on(session.resolve(
        ResolveParams::apply("ok"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert!(res.is_error);
    assert!(session.store().is_empty().unwrap());
}

#[test]
fn concurrent_resolves_never_apply_the_same_action_twice() {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    rt.block_on(async {
        let session = session();
        let applies = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&applies);
        // The apply that won the head holds it until every other call has returned, so each
        // of them raced a held claim.
        let finish = Arc::new(tokio::sync::Notify::new());
        let hold = Arc::clone(&finish);
        session
            .push_pending_action(Arc::new(FnPendingAction::new("Slow", move |_| {
                let counter = Arc::clone(&counter);
                let hold = Arc::clone(&hold);
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    hold.notified().await;
                    Ok(ToolResult::text("done"))
                }
            })))
            .unwrap();
        let n_calls = 8;
        let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
        for _ in 0..n_calls {
            let session = Arc::clone(&session);
            let done_tx = done_tx.clone();
            tokio::spawn(async move {
                let res = session
                    .resolve(
                        ResolveParams::apply("race"),
                        ResolveOptions::default(),
                        &CancelToken::new(),
                    )
                    .await;
                done_tx.send(res).unwrap();
            });
        }
        let mut results = Vec::new();
        for _ in 1..n_calls {
            results.push(done_rx.recv().await.unwrap());
        }
        finish.notify_one();
        results.push(done_rx.recv().await.unwrap());
        let mut n_ok = 0;
        for result in results {
            match result {
                Ok(res) => {
                    assert_eq!(res.text_content(), "done");
                    n_ok += 1;
                }
                Err(err) => assert!(
                    err.message().contains("is already being resolved by another call")
                        || err.message()
                            == "No pending action to resolve. Nothing to apply or discard.",
                    "{err}"
                ),
            }
        }
        assert_eq!(n_ok, 1);
        assert_eq!(applies.load(Ordering::SeqCst), 1);
        assert!(session.store().is_empty().unwrap());
    });
}

#[test]
fn cancelled_before_start_aborts_and_runs_nothing() {
    let session = session();
    let applies = Arc::new(AtomicUsize::new(0));
    session.push_pending_action(counting_action("A", "t", applies.clone())).unwrap();
    let cancel = CancelToken::new();
    cancel.cancel_with("user pressed Ctrl-C");
    let err =
        block_on(session.resolve(ResolveParams::apply("go"), ResolveOptions::default(), &cancel))
            .unwrap_err();
    assert_eq!(err.message(), "Aborted: user pressed Ctrl-C");
    assert_eq!(err.kind(), ToolErrorKind::Aborted);
    assert_eq!(applies.load(Ordering::SeqCst), 0);
    assert_eq!(session.store().len().unwrap(), 1);
}

#[test]
fn cancel_reaches_apply_and_an_action_that_stops_stays_pending() {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let session = session();
        // The apply says when it has begun, and only then is the call cancelled: a cancel
        // seen by the check before start would give the same message without reaching apply.
        let started = Arc::new(tokio::sync::Notify::new());
        let signal = Arc::clone(&started);
        let id = session
            .push_pending_action(Arc::new(FnPendingAction::new("Slow write", move |input| {
                let signal = Arc::clone(&signal);
                async move {
                    signal.notify_one();
                    tokio::select! {
                        () = input.cancel.cancelled() => Err(ActionError::Cancelled),
                        () = tokio::time::sleep(Duration::from_secs(30)) => Ok(ToolResult::text("wrote")),
                    }
                }
            })))
            .unwrap();
        let cancel = CancelToken::new();
        let canceller = cancel.clone();
        tokio::spawn(async move {
            started.notified().await;
            canceller.cancel();
        });
        let err = session.resolve(ResolveParams::apply("go"), ResolveOptions::default(), &cancel).await.unwrap_err();
        assert_eq!(err.message(), "Aborted: Cancelled");
        assert_eq!(session.store().peek().unwrap().unwrap().id, id);
        // Still resolvable afterwards.
        let res = session.resolve(ResolveParams::discard("later"), ResolveOptions::default(), &CancelToken::new()).await.unwrap();
        assert_eq!(res.text_content(), "Discarded: Slow write. Reason: later");
    });
}

#[test]
fn invalid_arguments_name_the_problem() {
    let tool = ResolveTool::new(session());
    let err =
        block_on(tool.execute(json!({"action": "maybe", "reason": "x"}), &CancelToken::new()))
            .unwrap_err();
    assert!(
        err.message().starts_with("Invalid resolve arguments: unknown variant `maybe`"),
        "{err}"
    );
    let err = block_on(tool.execute(json!({"action": "apply"}), &CancelToken::new())).unwrap_err();
    assert!(err.message().contains("missing field `reason`"), "{err}");
}

#[test]
fn resolve_expected_refuses_when_another_preview_became_the_head() {
    let session = session();
    let applies = Arc::new(AtomicUsize::new(0));
    let reviewed =
        session.push_pending_action(counting_action("Reviewed", "t", applies.clone())).unwrap();
    let newer =
        session.push_pending_action(counting_action("Newer", "t", applies.clone())).unwrap();
    let err = block_on(session.resolve(
        ResolveParams::apply("ok"),
        ResolveOptions { expected: Some(&reviewed), ..Default::default() },
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(
        err.message(),
        format!(
            "The newest pending preview is now `Newer` ({newer}), not {reviewed}; review it first. Nothing was applied or discarded."
        )
    );
    assert_eq!(applies.load(Ordering::SeqCst), 0);
    let ids: Vec<_> = session.store().list().unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, [newer.clone(), reviewed.clone()]);
    let res = block_on(session.resolve(
        ResolveParams::apply("ok"),
        ResolveOptions { expected: Some(&newer), ..Default::default() },
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "applied Newer: ok");
    block_on(session.resolve(
        ResolveParams::discard("no"),
        ResolveOptions { expected: Some(&reviewed), ..Default::default() },
        &CancelToken::new(),
    ))
    .unwrap();
    let err = block_on(session.resolve(
        ResolveParams::apply("ok"),
        ResolveOptions { expected: Some(&reviewed), ..Default::default() },
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(
        err.message(),
        format!("{reviewed} is no longer pending; nothing was applied or discarded.")
    );
}

/// A deviation from the reference, which never reads `reason` (`docs/contract/resolve.md`): a
/// blank reason runs nothing, through the library as through the CLI.
#[test]
fn a_blank_reason_runs_nothing() {
    let session = session();
    let applies = Arc::new(AtomicUsize::new(0));
    session.push_pending_action(counting_action("Rename", "custom_tool", applies.clone())).unwrap();
    for (reason, params) in [
        ("", ResolveParams::apply("")),
        ("  \n", ResolveParams::apply("  \n")),
        ("\t", ResolveParams::discard("\t")),
    ] {
        let err = block_on(session.resolve(params, ResolveOptions::default(), &CancelToken::new()))
            .unwrap_err();
        assert_eq!(err.message(), staged_core::BLANK_REASON_TEXT, "{reason:?}");
    }
    let err =
        block_on(ResolveTool::new(session.clone()).execute(apply_args(""), &CancelToken::new()))
            .unwrap_err();
    assert_eq!(
        err.message(),
        "`reason` is blank: say in one short sentence why the preview is applied or discarded. Nothing was applied or discarded."
    );
    assert_eq!(applies.load(Ordering::SeqCst), 0);
    assert_eq!(session.store().len().unwrap(), 1);
}
