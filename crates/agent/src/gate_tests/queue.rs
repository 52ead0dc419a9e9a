//! The hard directive queue (`docs/contract/agent-loop.md#hard-directive-queue`).

use std::sync::{Arc, Mutex};

use staged_core::{CancelToken, ResolveHandler, ToolError};
use staged_gate::{DirectiveOptions, OnRejected, RejectOutcome, RejectReason, ToolChoiceQueue};
use staged_protocol::{ResolveParams, ToolChoice, ToolResult};

use super::harness::block_on;

fn force(name: &str) -> ToolChoice {
    ToolChoice::tool(name)
}

fn recording_rejects(
    outcomes: Vec<RejectOutcome>,
) -> (OnRejected, Arc<Mutex<Vec<(ToolChoice, RejectReason)>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let outcomes = Mutex::new(outcomes.into_iter());
    let callback: OnRejected = Arc::new(move |choice, reason| {
        log.lock().unwrap().push((choice.clone(), reason));
        outcomes.lock().unwrap().next().unwrap_or(RejectOutcome::Drop)
    });
    (callback, seen)
}

#[test]
fn returns_none_when_empty() {
    assert_eq!(ToolChoiceQueue::new().next_tool_choice(), None);
}

#[test]
fn push_once_yields_once_then_exhausts() {
    let mut q = ToolChoiceQueue::new();
    q.push_once(force("a"), DirectiveOptions::default());
    assert_eq!(q.next_tool_choice(), Some(force("a")));
    assert_eq!(q.next_tool_choice(), None);
}

#[test]
fn push_sequence_yields_in_order_and_now_prepends_to_head() {
    let mut q = ToolChoiceQueue::new();
    q.push_sequence(vec![force("a"), ToolChoice::None], DirectiveOptions::default());
    q.push_once(force("b"), DirectiveOptions::default());
    q.push_once(force("first"), DirectiveOptions { now: true, ..Default::default() });
    let served: Vec<_> = std::iter::from_fn(|| q.next_tool_choice()).collect();
    assert_eq!(served, [force("first"), force("a"), ToolChoice::None, force("b")]);
}

#[test]
fn fires_on_resolved_with_the_served_choice() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let mut q = ToolChoiceQueue::new();
    q.push_once(
        force("a"),
        DirectiveOptions {
            on_resolved: Some(Arc::new(move |choice| log.lock().unwrap().push(choice.clone()))),
            ..Default::default()
        },
    );
    q.mark_served(); // nothing in flight: no callback
    q.next_tool_choice();
    q.mark_served();
    assert_eq!(*seen.lock().unwrap(), [force("a")]);
}

#[test]
fn on_rejected_returning_requeue_replays_the_lost_yield() {
    let (on_rejected, seen) = recording_rejects(vec![RejectOutcome::Requeue]);
    let mut q = ToolChoiceQueue::new();
    q.push_sequence(
        vec![force("a"), ToolChoice::None],
        DirectiveOptions { on_rejected: Some(on_rejected), ..Default::default() },
    );
    assert_eq!(q.next_tool_choice(), Some(force("a")));
    q.reject(RejectReason::Aborted);
    assert_eq!(*seen.lock().unwrap(), [(force("a"), RejectReason::Aborted)]);
    assert_eq!(q.next_tool_choice(), Some(force("a")));
    assert_eq!(q.next_tool_choice(), Some(ToolChoice::None));
}

#[test]
fn on_rejected_returning_drop_discards_the_yield_and_no_callback_drops_by_default() {
    let (on_rejected, _) = recording_rejects(vec![RejectOutcome::Drop]);
    let mut q = ToolChoiceQueue::new();
    q.push_once(
        force("a"),
        DirectiveOptions { on_rejected: Some(on_rejected), ..Default::default() },
    );
    q.push_once(force("b"), DirectiveOptions::default());
    q.next_tool_choice();
    q.reject(RejectReason::Error);
    assert_eq!(q.next_tool_choice(), Some(force("b")));
    q.reject(RejectReason::Error);
    assert_eq!(q.next_tool_choice(), None);
    q.reject(RejectReason::Error); // a no-op when nothing is in flight
}

#[test]
fn requeued_directive_preserves_on_rejected_so_it_can_re_requeue_across_aborts() {
    use RejectOutcome::*;
    let (on_rejected, seen) = recording_rejects(vec![Requeue, Requeue, Drop]);
    let mut q = ToolChoiceQueue::new();
    q.push_once(
        force("a"),
        DirectiveOptions {
            label: Some("x".into()),
            on_rejected: Some(on_rejected),
            ..Default::default()
        },
    );
    for _ in 0..3 {
        assert_eq!(q.next_tool_choice(), Some(force("a")));
        q.reject(RejectReason::Aborted);
    }
    assert_eq!(q.next_tool_choice(), None);
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[test]
fn removes_targeted_directives_without_affecting_others_and_rejects_in_flight_on_match() {
    let (on_rejected, seen) = recording_rejects(vec![]);
    let mut q = ToolChoiceQueue::new();
    q.push_once(force("a"), DirectiveOptions { label: Some("keep".into()), ..Default::default() });
    q.push_once(
        force("b"),
        DirectiveOptions {
            label: Some("gone".into()),
            on_rejected: Some(on_rejected),
            ..Default::default()
        },
    );
    q.push_once(force("c"), DirectiveOptions { label: Some("gone".into()), ..Default::default() });
    q.remove_by_label("gone");
    assert_eq!(q.inspect(), ["keep"]);

    let (on_rejected, seen2) = recording_rejects(vec![]);
    q.push_once(
        force("d"),
        DirectiveOptions {
            label: Some("fly".into()),
            now: true,
            on_rejected: Some(on_rejected),
            ..Default::default()
        },
    );
    assert_eq!(q.next_tool_choice(), Some(force("d")));
    assert!(q.has_in_flight());
    q.remove_by_label("fly");
    assert!(!q.has_in_flight());
    assert_eq!(*seen2.lock().unwrap(), [(force("d"), RejectReason::Removed)]);
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn clear_empties_the_queue_and_rejects_in_flight_even_when_the_callback_requeues() {
    let (on_rejected, seen) = recording_rejects(vec![RejectOutcome::Requeue]);
    let mut q = ToolChoiceQueue::new();
    q.push_sequence(
        vec![force("a"), force("b")],
        DirectiveOptions { on_rejected: Some(on_rejected), ..Default::default() },
    );
    q.next_tool_choice();
    q.clear();
    assert_eq!(*seen.lock().unwrap(), [(force("a"), RejectReason::Cleared)]);
    assert_eq!(q.next_tool_choice(), None);
    assert!(q.inspect().is_empty());
}

#[test]
fn last_served_label_is_returned_once_then_cleared() {
    let mut q = ToolChoiceQueue::new();
    q.push_once(
        force("a"),
        DirectiveOptions { label: Some("force-a".into()), ..Default::default() },
    );
    assert_eq!(q.consume_last_served_label(), None);
    q.next_tool_choice();
    q.mark_served();
    assert_eq!(q.consume_last_served_label().as_deref(), Some("force-a"));
    assert_eq!(q.consume_last_served_label(), None);
}

#[test]
fn has_in_flight_is_false_when_empty_true_after_next_and_false_after_resolve() {
    let mut q = ToolChoiceQueue::new();
    assert!(!q.has_in_flight());
    q.push_once(force("a"), DirectiveOptions::default());
    q.next_tool_choice();
    assert!(q.has_in_flight());
    q.mark_served();
    assert!(!q.has_in_flight());
}

struct Echo;

#[async_trait::async_trait]
impl ResolveHandler for Echo {
    async fn invoke(
        &self,
        params: &ResolveParams,
        _: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text(serde_json::to_string(params).unwrap()))
    }
}

fn invoked_directive(on_rejected: Option<OnRejected>) -> DirectiveOptions {
    DirectiveOptions { on_invoked: Some(Arc::new(Echo)), on_rejected, ..Default::default() }
}

#[test]
fn exposes_the_in_flight_directives_invoker_and_returns_none_without_one() {
    let mut q = ToolChoiceQueue::new();
    assert!(q.peek_in_flight_invoker().is_none());
    q.push_once(force("resolve"), invoked_directive(None));
    q.next_tool_choice();
    let invoker = q.peek_in_flight_invoker().unwrap();
    let res = block_on(invoker.invoke(&ResolveParams::apply("echo"), &CancelToken::new())).unwrap();
    assert_eq!(res.text_content(), r#"{"action":"apply","reason":"echo"}"#);
}

#[test]
fn does_not_resolve_an_on_invoked_directive_until_the_requested_tool_runs() {
    let (on_rejected, seen) = recording_rejects(vec![RejectOutcome::Requeue]);
    let resolved = Arc::new(Mutex::new(0));
    let count = Arc::clone(&resolved);
    let mut q = ToolChoiceQueue::new();
    let mut options = invoked_directive(Some(on_rejected));
    options.on_resolved = Some(Arc::new(move |_| *count.lock().unwrap() += 1));
    q.push_once(force("resolve"), options);
    q.next_tool_choice();
    q.mark_served();
    assert_eq!(*seen.lock().unwrap(), [(force("resolve"), RejectReason::NotInvoked)]);
    assert_eq!(*resolved.lock().unwrap(), 0);
    // Replayed next, and the replay carries the invoker.
    assert_eq!(q.next_tool_choice(), Some(force("resolve")));
    let invoker = q.peek_in_flight_invoker().expect("replayed directive keeps its invoker");
    block_on(invoker.invoke(&ResolveParams::discard("x"), &CancelToken::new())).unwrap();
    q.mark_served();
    assert_eq!(*resolved.lock().unwrap(), 1);
    assert!(!q.has_in_flight());
}

#[test]
fn reject_reasons_have_the_documented_spellings() {
    // docs/contract/agent-loop.md#hard-directive-queue
    let all = [
        RejectReason::Aborted,
        RejectReason::Error,
        RejectReason::Cleared,
        RejectReason::Removed,
        RejectReason::Unavailable,
        RejectReason::NotInvoked,
    ];
    let spelled: Vec<&str> = all.iter().map(|reason| reason.as_str()).collect();
    assert_eq!(spelled, ["aborted", "error", "cleared", "removed", "unavailable", "not_invoked"]);
}
