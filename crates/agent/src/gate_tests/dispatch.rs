//! `resolve`'s dispatch through the loop's routes: the in-flight hard directive's invoker,
//! then the head of the stack, then the standing handler
//! (`docs/contract/resolve.md#dispatch-order`).

use std::sync::Arc;

use crate::StandingHandler;
use pretty_assertions::assert_eq;
use serde_json::json;
use staged_core::{CancelToken, FnPendingAction, ResolveHandler, ResolveOptions, ToolError};
use staged_gate::DirectiveOptions;
use staged_protocol::{ResolveParams, ToolChoice, ToolResult};

use super::harness::{block_on, counting_action, session};

struct Echo(&'static str);

#[async_trait::async_trait]
impl ResolveHandler for Echo {
    async fn invoke(
        &self,
        params: &ResolveParams,
        _: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text(format!("{}:{}:{}", self.0, params.action, params.reason)))
    }
}

#[test]
fn dispatch_order_is_hard_invoker_then_head_then_standing_handler() {
    let session = session();
    let directives = &session.directives;
    directives.set_standing_resolve_handler(Some(Arc::new(Echo("standing"))));
    let res = block_on(session.resolve(
        ResolveParams::apply("a"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "standing:apply:a");

    session.push_pending_action(counting_action("Head", "t", Default::default())).unwrap();
    let res = block_on(session.resolve(
        ResolveParams::apply("b"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "applied Head: b");

    session.push_pending_action(counting_action("Head2", "t", Default::default())).unwrap();
    directives.with_tool_choice_queue(|q| {
        q.push_once(
            ToolChoice::tool("resolve"),
            DirectiveOptions { on_invoked: Some(Arc::new(Echo("hard"))), ..Default::default() },
        );
        assert_eq!(q.next_tool_choice(), Some(ToolChoice::tool("resolve")));
    });
    let res = block_on(session.resolve(
        ResolveParams::discard("c"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "hard:discard:c");
    assert_eq!(session.store().len().unwrap(), 1, "the head was not touched");

    directives.set_standing_resolve_handler(None);
    assert!(directives.peek_standing_resolve_handler().is_none());
}

#[test]
fn standing_action_runs_through_the_shared_runner_and_is_never_consumed() {
    let session = session();
    let directives = &session.directives;
    directives.set_standing_resolve_handler(Some(Arc::new(StandingHandler(Arc::new(
        FnPendingAction::new("Plan ready for approval", |_| async {
            Ok(ToolResult::text("Plan ready for approval.")
                .with_details(json!({"planExists": true})))
        })
        .with_source_tool_name("plan_approval"),
    )))));
    let res = block_on(session.resolve(
        ResolveParams::discard("refine"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "Discarded: Plan ready for approval. Reason: refine");
    let res = block_on(session.resolve(
        ResolveParams::apply("ok"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.details.as_ref().unwrap()["sourceToolName"], "plan_approval");
    assert_eq!(res.details.as_ref().unwrap()["sourceResultDetails"], json!({"planExists": true}));
    assert!(directives.peek_standing_resolve_handler().is_some());
}
