//! The loop side of `resolve`, for any agent host (`docs/contract/agent-loop.md`): what
//! `staged agent` runs around each model call, with no model client, provider or HTTP stack.
//!
//! - [`ResolveGate`]: the reminder once per pending head, the calls of a non-compliant turn
//!   skipped with the exact text ([`SKIPPED_CALL_TEXT`]), `resolve` forced on the next turn,
//!   the abort after three forced turns.
//! - [`Directives`]: one session's hard directive queue ([`ToolChoiceQueue`], which a host
//!   fills through [`Directives::with_tool_choice_queue`]) and standing handler
//!   ([`StandingHandler`]), which `resolve` consults through `staged_core::ResolveRoutes`; and
//!   the directive for the next model call.
//! - [`remind_after_call`]: the rule of a host that cannot force a tool choice (an MCP
//!   server): a result ends with the reminder while a preview is pending.
//!
//! # A host's loop
//! The gate is pure, so a loop is a few lines: ask for the directive, plan the turn, call the
//! model, judge the reply.
//! ```
//! use std::sync::Arc;
//! use staged_core::{CancelToken, FnPendingAction, InMemoryStore, ResolveOptions, Session};
//! use staged_protocol::{ResolveParams, ToolResult};
//! use staged_gate::{Directives, ResolveGate, ToolCallRef, TurnOutcome};
//!
//! # futures::executor::block_on(async {
//! let session = Session::new(Arc::new(InMemoryStore::new()));
//! let rename = FnPendingAction::new("Rename: 1 file", |_| async { Ok(ToolResult::text("Renamed.")) });
//! session.push_pending_action(Arc::new(rename)).unwrap();
//! let directives = Directives::attach(&session);
//! let mut gate = ResolveGate::new(None);
//!
//! // Before the model call: the reminder to add to the context, the tool choice to send.
//! let directive = directives.next_tool_choice_directive(&session, &["read", "resolve"]).unwrap();
//! let plan = gate.begin_turn(directive);
//! assert_eq!(plan.inject.len(), 1);
//!
//! // The model called `read` instead: the turn is skipped, and `resolve` forced next.
//! let outcome = gate.end_turn(&plan, &[ToolCallRef::new("c1", "read")]).unwrap();
//! assert!(matches!(outcome, TurnOutcome::Escalate { .. }));
//! let directive = directives.next_tool_choice_directive(&session, &["read", "resolve"]).unwrap();
//! let plan = gate.begin_turn(directive);
//! assert!(plan.tool_choice.is_some());
//!
//! // It complies: the call runs.
//! let outcome = gate.end_turn(&plan, &[ToolCallRef::new("c2", "resolve")]).unwrap();
//! assert_eq!(outcome, TurnOutcome::Proceed);
//! let cancel = CancelToken::new();
//! let res = session.resolve(ResolveParams::apply("ok"), ResolveOptions::default(), &cancel).await.unwrap();
//! assert_eq!(res.text_content(), "Renamed.");
//! # });
//! ```

#![deny(missing_docs)]

mod directives;
mod gate;
mod queue;
mod standing;

use staged_core::{PendingId, RESOLVE_TOOL_NAME};

pub use crate::{
    directives::Directives,
    gate::{
        GateAbort, ReminderMessage, ResolveGate, SKIPPED_CALL_TEXT, SoftToolRequirement,
        ToolCallRef, ToolChoiceDirective, TurnOutcome, TurnPlan,
    },
    queue::{
        DirectiveOptions, OnRejected, OnResolved, RejectOutcome, RejectReason, ToolChoiceQueue,
    },
    standing::StandingHandler,
};

/// Whether the result of a call of `called` ends with the resolve reminder
/// (`staged_core::RESOLVE_REMINDER`), for a host with no loop to force `resolve` (`staged
/// mcp`, `docs/contract/agent-loop.md#mcp-no-loop-a-reminder-in-every-result`): yes while a
/// preview is pending after the call (`head_after`), except after a `resolve` that left the
/// same preview on top (`head_before`, a declined or failed apply), whose own text says what
/// to do.
pub fn remind_after_call(
    called: &str,
    head_before: Option<&PendingId>,
    head_after: Option<&PendingId>,
) -> bool {
    match head_after {
        None => false,
        Some(after) if called == RESOLVE_TOOL_NAME => head_before != Some(after),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reminder_follows_every_call_while_a_preview_is_pending_but_a_resolve_that_kept_it() {
        let (a, b) = (PendingId::from_string("a".into()), PendingId::from_string("b".into()));
        assert!(!remind_after_call("edit", None, None));
        assert!(remind_after_call("edit", None, Some(&a)));
        assert!(remind_after_call("edit", Some(&a), Some(&a)));
        assert!(!remind_after_call("resolve", Some(&a), None));
        assert!(!remind_after_call("resolve", Some(&a), Some(&a)));
        assert!(remind_after_call("resolve", Some(&b), Some(&a)));
        assert!(remind_after_call("resolve", None, Some(&a)));
    }
}
