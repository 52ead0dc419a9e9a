//! The agent runtime: `staged agent` drives a model through the resolve gate.
//!
//! A [`ModelClient`] speaks one wire format (OpenAI Responses, OpenAI Chat Completions or
//! Anthropic Messages, all streamed over SSE; see [`connect`]). [`Agent::run`] is the loop of
//! the reference's version C: before each model call it asks the [`Session`] for the directive,
//! lets the [`ResolveGate`] inject the reminder once per pending head and force `resolve` after
//! a non-compliant turn, and after the call runs a compliant batch or skips a non-compliant one
//! with the exact synthetic result. Plan mode ([`PlanMode`]) and human approval
//! ([`Supervisor`]) plug into the same loop.
//!
//! # A loop driven by hand
//! The gate is pure, so a loop is a few lines: ask for the directive, plan the turn, call the
//! model, judge the reply.
//! ```
//! use std::sync::Arc;
//! use staged_agent::{AssistantMessage, AssistantPart, Message, ModelClient, ModelError, ModelRequest, StreamDelta, ToolCall};
//! use staged_core::{CancelToken, FnPendingAction, InMemoryStore, ResolveGate, ResolveParams, Session, ToolCallRef, ToolResult, TurnOutcome};
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
//! let mut gate = ResolveGate::new(None);
//! let mut messages = vec![Message::user("rename it")];
//! let cancel = CancelToken::new();
//!
//! let plan = gate.begin_turn(session.next_tool_choice_directive(&["resolve"]).unwrap());
//! messages.extend(plan.inject.iter().map(|r| Message::reminder(r.content.clone())));
//! let request = ModelRequest { system: "", messages: &messages, tools: &[], tool_choice: plan.tool_choice.as_ref() };
//! let reply = Resolver.complete(request, &mut |_| {}, &cancel).await.unwrap();
//! let calls: Vec<ToolCallRef> = reply.tool_calls().map(|c| ToolCallRef::new(&c.id, &c.name)).collect();
//! assert_eq!(gate.end_turn(&plan, &calls).unwrap(), TurnOutcome::Proceed);
//! let res = session.resolve(ResolveParams::apply("ok"), &cancel).await.unwrap();
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

pub use staged_core::{ResolveGate, Session};

pub use crate::{
    client::{ModelClient, ModelRequest, StreamDelta, ToolSpec},
    config::{
        AgentDefaults, DEFAULT_PROVIDER, ProviderConfig, ProviderOverrides, ProvidersConfig,
        ReminderRole, WireFormat,
    },
    error::{ConfigError, ModelError},
    events::{AgentEvent, SkippedCall},
    message::{AssistantMessage, AssistantPart, Message, ToolCall, ToolResultMessage},
    plan::{
        PLAN_LABEL, PLAN_SOURCE_TOOL, PLANS_DIR, PlanApproval, PlanMode, PlanTitleError,
        normalize_plan_title, plan_slug, resolve_plan_title,
    },
    providers::{
        AnthropicClient, ChatClient, ResponsesClient, anthropic_body, chat_body, connect,
        responses_body,
    },
    run::{
        Agent, AgentOptions, Approval, DEFAULT_MAX_TURNS, PLAN_DECISION_REMINDER, PLAN_PROMPT,
        RunOutcome, RunReport, SYSTEM_PROMPT,
    },
    supervisor::{ApplyDecision, PlanDecision, PlanReview, Supervisor},
    tools::{FindTool, ReadTool, WritePlanTool},
    transcript::{TRANSCRIPTS_DIR, save_transcript},
};
