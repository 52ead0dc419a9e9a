//! The session's directive for a staged preview
//! (`docs/contract/agent-loop.md#the-directive-for-the-next-call`).

use std::sync::Arc;

use crate::ToolChoiceDirective;
use staged_core::{
    CancelToken, PendingActionStore, RESOLVE_REMINDER, ResolveOptions, ResolveTool, Session, Tool,
};
use staged_protocol::ResolveParams;

use staged_test_support::CountingStore;

use super::harness::{LoopSession, block_on, counting_action, session};

const ACTIVE: &[&str] = &["read", "ast_edit", "resolve"];

#[test]
fn delivers_the_resolve_reminder_via_a_non_forcing_soft_requirement() {
    let session = session();
    session
        .push_pending_action(counting_action(
            "AST Edit: 1 replacement in 1 file",
            "ast_edit",
            Default::default(),
        ))
        .unwrap();
    // Staging queued no hard choice.
    assert_eq!(session.with_tool_choice_queue(|q| q.next_tool_choice()), None);
    let Some(ToolChoiceDirective::Soft(soft)) = session.next_tool_choice_directive(ACTIVE).unwrap()
    else {
        panic!("expected a soft requirement");
    };
    assert_eq!(soft.tool_name, "resolve");
    assert_eq!(soft.id, "pending-action:ast_edit:0");
    assert_eq!(soft.reminder.len(), 1);
    assert_eq!(soft.reminder[0].custom_type, "resolve-reminder");
    assert_eq!(soft.reminder[0].content, RESOLVE_REMINDER);
    assert_eq!(soft.reminder[0].source_tool_name, "ast_edit");
    assert!(!soft.reminder[0].display);
    // Peeking twice does not consume anything.
    assert!(matches!(
        session.next_tool_choice_directive(ACTIVE).unwrap(),
        Some(ToolChoiceDirective::Soft(_))
    ));
}

#[test]
fn dispatches_a_staged_preview_through_the_resolve_tool_and_drains_the_gate() {
    let session = session();
    let applies = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    session
        .push_pending_action(counting_action(
            "AST Edit: 1 replacement in 1 file",
            "ast_edit",
            applies.clone(),
        ))
        .unwrap();
    assert!(matches!(
        session.next_tool_choice_directive(ACTIVE).unwrap(),
        Some(ToolChoiceDirective::Soft(_))
    ));
    block_on(
        ResolveTool::new(session.session.clone())
            .execute(serde_json::json!({"action": "apply", "reason": "ok"}), &CancelToken::new()),
    )
    .unwrap();
    assert_eq!(applies.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(session.next_tool_choice_directive(ACTIVE).unwrap(), None);
}

#[test]
fn drains_a_phantom_pending_gate_when_resolve_cannot_dispatch() {
    let store = Arc::new(CountingStore::default());
    let session = LoopSession::new(Arc::new(Session::new(store.clone())));
    block_on(session.resolve(
        ResolveParams::discard("nothing here"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(store.stale_clears.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(session.next_tool_choice_directive(ACTIVE).unwrap(), None);
    assert!(store.is_empty().unwrap());
}

#[test]
fn no_soft_requirement_when_resolve_is_not_active() {
    let session = session();
    session.push_pending_action(counting_action("x", "t", Default::default())).unwrap();
    assert_eq!(session.next_tool_choice_directive(&["read"]).unwrap(), None);
}

#[test]
fn hard_choice_for_an_inactive_tool_is_rejected_as_unavailable_and_skipped() {
    use staged_gate::{DirectiveOptions, RejectOutcome, RejectReason};
    use staged_protocol::ToolChoice;
    let session = session();
    let reasons = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&reasons);
    session.with_tool_choice_queue(|q| {
        q.push_once(
            ToolChoice::tool("lsp"),
            DirectiveOptions {
                on_rejected: Some(Arc::new(move |_, reason| {
                    seen.lock().unwrap().push(reason);
                    RejectOutcome::Drop
                })),
                ..Default::default()
            },
        );
        q.push_once(ToolChoice::tool("read"), DirectiveOptions::default());
    });
    assert_eq!(
        session.next_tool_choice_directive(ACTIVE).unwrap(),
        Some(ToolChoiceDirective::Hard(ToolChoice::tool("read")))
    );
    assert_eq!(*reasons.lock().unwrap(), [RejectReason::Unavailable]);
}
