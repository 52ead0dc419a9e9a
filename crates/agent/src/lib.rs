//! The agent runtime: `staged agent` drives a model through the resolve gate.
//!
//! The loop's side of `resolve` lives in `staged-gate` (re-exported here), which a host takes
//! without this crate's providers and HTTP stack: [`ResolveGate`] (the reminder once per head,
//! the skipped detours, the forced turn, the abort), the hard directive queue
//! ([`ToolChoiceQueue`], filled through [`Agent::directives`]) and the standing handler
//! ([`StandingHandler`]), held per session by [`Directives`], which `resolve` consults through
//! `staged_core::ResolveRoutes`.
//!
//! A [`ModelClient`] speaks one wire format (OpenAI Responses, OpenAI Chat Completions or
//! Anthropic Messages, all streamed over SSE; see [`connect`]). [`Agent::run`] is the loop of
//! `docs/contract/agent-loop.md`: before each model call it asks the [`Directives`] for the
//! directive, lets the [`ResolveGate`] inject the reminder once per pending head and force
//! `resolve` after a non-compliant turn, and after the call runs a compliant batch or skips a
//! non-compliant one with the exact synthetic result. Plan mode ([`PlanMode`]) and human approval
//! ([`Supervisor`]) plug into the same loop.
//!
//! # Library API
//!
//! An agent builder brings its own model through `ModelClient` (`ModelRequest` in, with the
//! `ToolSpec`s offered; `StreamDelta`s streamed; an `AssistantMessage` of `AssistantPart`s out,
//! or a `ModelError`), or configures a provider (`ProviderConfig`, `ProviderConfig::endpoint_url`,
//! its `ReminderRole`; `AgentDefaults`; `ConfigError`) and reads what a run did (`RunReport`,
//! `SkippedCall`, `ToolResultMessage`, `PlanMode::is_active`; a reply's calls through
//! `AssistantMessage::tool_calls`). A plan's file name comes from `normalize_plan_title` (or a
//! `PlanTitleError`). The prompts are the contract's:
//! `SYSTEM_PROMPT`, `PLAN_PROMPT`, `PLAN_DECISION_REMINDER`; `responses_body` is the OpenAI
//! Responses request a `ModelRequest` becomes.
//!
//! # A loop driven by hand
//! The gate is pure, so a loop is a few lines: ask for the directive, plan the turn, call the
//! model, judge the reply.
//! ```
//! use std::sync::Arc;
//! use staged_agent::{AssistantMessage, AssistantPart, Directives, Message, ModelClient, ModelError, ModelRequest, ResolveGate, StreamDelta, ToolCall, ToolCallRef, TurnOutcome};
//! use staged_core::{CancelToken, FnPendingAction, InMemoryStore, ResolveOptions, Session};
//! use staged_protocol::{ResolveParams, ToolResult};
//!
//! /// A model that resolves whatever is pending.
//! struct Resolver;
//! #[async_trait::async_trait]
//! impl ModelClient for Resolver {
//!     fn describe(&self) -> String { "resolver".into() }
//!     async fn complete(&self, _: ModelRequest<'_>, _: &mut (dyn for<'d> FnMut(StreamDelta<'d>) + Send), _: &CancelToken) -> Result<AssistantMessage, ModelError> {
//!         let call = ToolCall { id: "c1".into(), name: "resolve".into(), arguments: r#"{"action":"apply","reason":"ok"}"#.into() };
//!         Ok(AssistantMessage { parts: vec![AssistantPart::ToolCall(call)], stop_reason: None })
//!     }
//! }
//!
//! # futures::executor::block_on(async {
//! let session = Session::new(Arc::new(InMemoryStore::new()));
//! session.push_pending_action(Arc::new(FnPendingAction::new("Rename: 1 file", |_| async { Ok(ToolResult::text("Renamed.")) }))).unwrap();
//! let directives = Directives::attach(&session);
//! let mut gate = ResolveGate::new(None);
//! let mut messages = vec![Message::user("rename it")];
//! let cancel = CancelToken::new();
//!
//! let plan = gate.begin_turn(directives.next_tool_choice_directive(&session, &["resolve"]).unwrap());
//! messages.extend(plan.inject.iter().map(|r| Message::reminder(r.content.clone())));
//! let request = ModelRequest { system: "", messages: &messages, tools: &[], tool_choice: plan.tool_choice.as_ref() };
//! let reply = Resolver.complete(request, &mut |_| {}, &cancel).await.unwrap();
//! let calls: Vec<ToolCallRef> = reply.tool_calls().map(|c| ToolCallRef::new(&c.id, &c.name)).collect();
//! assert_eq!(gate.end_turn(&plan, &calls).unwrap(), TurnOutcome::Proceed);
//! let res = session.resolve(ResolveParams::apply("ok"), ResolveOptions::default(), &cancel).await.unwrap();
//! assert_eq!(res.text_content(), "Renamed.");
//! # });
//! ```
//! [`Agent::run`] does the same with tools, streaming, events and the error paths.

#![deny(missing_docs)]

mod client;
mod config;
mod error;
mod events;
mod http;
mod message;
mod plan;
mod providers;
mod run;
mod supervisor;
mod tools;
mod transcript;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]
mod gate_tests;

pub use staged_gate::{
    DirectiveOptions, Directives, GateAbort, OnRejected, OnResolved, RejectOutcome, RejectReason,
    ReminderMessage, ResolveGate, SKIPPED_CALL_TEXT, SoftToolRequirement, StandingHandler,
    ToolCallRef, ToolChoiceDirective, ToolChoiceQueue, TurnOutcome, TurnPlan,
};

pub use crate::{
    client::{ModelClient, ModelRequest, StreamDelta, ToolSpec},
    config::{AgentDefaults, ProviderConfig, ProviderOverrides, ProvidersConfig, ReminderRole},
    error::{ConfigError, ModelError},
    events::{AgentEvent, SkippedCall},
    message::{AssistantMessage, AssistantPart, Message, ToolCall, ToolResultMessage},
    plan::{PlanDetails, PlanMode, PlanTitleError, normalize_plan_title},
    providers::{connect, responses_body},
    run::{
        Agent, AgentOptions, Approval, DEFAULT_MAX_TURNS, PLAN_DECISION_REMINDER, PLAN_PROMPT,
        RunOutcome, RunReport, SYSTEM_PROMPT,
    },
    supervisor::{ApplyDecision, PlanDecision, PlanReview, Supervisor},
    tools::{FindTool, ReadTool, WritePlanTool},
    transcript::save_transcript,
};
