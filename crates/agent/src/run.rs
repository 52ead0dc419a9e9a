//! `Agent::run`: the loop that drives a model through the resolve gate
//! (`docs/contract/agent-loop.md`).
//!
//! Per turn: ask the session for the directive (a queued hard choice first, then the soft
//! requirement for the pending head), let the gate plan the turn (the reminder once per head,
//! a forced `resolve` after a non-compliant turn), call the model, and let the gate judge the
//! reply. A compliant batch runs in order; a batch that is not all `resolve` runs not at all,
//! and every call in it gets the synthetic error result, so each call stays paired with a
//! result. Bare text ends the run only when nothing is required.

use std::sync::Arc;

use staged_core::{
    CancelToken, PendingId, RESOLVE_TOOL_NAME, ResolveTool, Session, Tool, ToolResult,
};
use staged_protocol::{ContentPart, ResolveAction};

use staged_protocol::ToolChoice;

use crate::{
    AgentEvent, ApplyDecision, AssistantMessage, Directives, Message, ModelClient, ModelError,
    ModelRequest, PlanMode, RejectReason, ResolveGate, SkippedCall, StandingAction, StreamDelta,
    Supervisor, ToolCall, ToolCallRef, ToolChoiceDirective, ToolResultMessage, ToolSpec,
    TurnOutcome, tools::WritePlanTool,
};

/// The system prompt of every run.
pub const SYSTEM_PROMPT: &str = include_str!("prompts/system.md");
/// What plan mode adds to the system prompt.
pub const PLAN_PROMPT: &str = include_str!("prompts/plan.md");
/// The reminder a planning turn that ends in bare text gets, once.
pub const PLAN_DECISION_REMINDER: &str = include_str!("prompts/plan_reminder.md");

/// The default turn limit.
pub const DEFAULT_MAX_TURNS: u32 = 50;

/// Who decides a `resolve apply`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Approval {
    /// The model resolves.
    #[default]
    Model,
    /// Each `resolve apply` waits for the person (`--approve human`).
    Human,
}

/// How a run behaves.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The most model calls a run makes.
    pub max_turns: u32,
    /// Who decides a `resolve apply`.
    pub approval: Approval,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self { max_turns: DEFAULT_MAX_TURNS, approval: Approval::Model }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// The model finished: it answered without tool calls and nothing was required.
    Done,
    /// The gate gave up after three forced turns; the message is the gate's exact text.
    GateAborted(String),
    /// The model finished, but its last apply failed and that preview is still pending.
    ApplyLeftPending {
        /// The preview's id.
        id: String,
        /// Its label.
        label: String,
    },
    /// The turn limit was reached.
    MaxTurns(u32),
    /// The run was cancelled (Ctrl-C); anything in flight was stopped cooperatively.
    Cancelled,
    /// A model call failed.
    Model(ModelError),
    /// The pending stack could not be read.
    Store(String),
}

impl RunOutcome {
    /// A short name: `done`, `aborted`, `apply_left_pending`, `max_turns`, `cancelled`,
    /// `model_error`, `store_error`.
    pub fn name(&self) -> &'static str {
        match self {
            RunOutcome::Done => "done",
            RunOutcome::GateAborted(_) => "aborted",
            RunOutcome::ApplyLeftPending { .. } => "apply_left_pending",
            RunOutcome::MaxTurns(_) => "max_turns",
            RunOutcome::Cancelled => "cancelled",
            RunOutcome::Model(_) => "model_error",
            RunOutcome::Store(_) => "store_error",
        }
    }

    /// What went wrong, for a person; `None` when the run is done.
    pub fn message(&self) -> Option<String> {
        match self {
            RunOutcome::Done => None,
            RunOutcome::GateAborted(message) | RunOutcome::Store(message) => Some(message.clone()),
            RunOutcome::ApplyLeftPending { id, label } => Some(format!(
                "the last apply failed; `{label}` ({id}) is still pending: resolve it with `staged resolve` or `staged review`"
            )),
            RunOutcome::MaxTurns(turns) => {
                Some(format!("stopped after {turns} turns (--max-turns)"))
            }
            RunOutcome::Cancelled => Some("interrupted; nothing was half-written".to_owned()),
            RunOutcome::Model(err) => Some(err.to_string()),
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// How it ended.
    pub outcome: RunOutcome,
    /// Model calls made (turns).
    pub turns: u32,
    /// The whole conversation.
    pub messages: Vec<Message>,
    /// Every event except the streamed deltas.
    pub events: Vec<AgentEvent>,
}

/// An agent: a model, a session, and the tools the model may call.
pub struct Agent {
    client: Arc<dyn ModelClient>,
    session: Arc<Session>,
    directives: Arc<Directives>,
    tools: Vec<Arc<dyn Tool>>,
    plan: Option<PlanMode>,
    supervisor: Option<Arc<dyn Supervisor>>,
    options: AgentOptions,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.client.describe())
            .field("tools", &self.tools.iter().map(|t| t.name().to_owned()).collect::<Vec<_>>())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent calling `client`, staging on `session`, with `tools` (`resolve` is added, last).
    ///
    /// It attaches its own [`Directives`] to `session` (replacing any attached before), so the
    /// session's `resolve` consults this agent's hard directives and standing handler.
    pub fn new(
        client: Arc<dyn ModelClient>,
        session: Arc<Session>,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Self {
        let tools = tools.into_iter().filter(|t| t.name() != RESOLVE_TOOL_NAME).collect();
        let directives = Directives::attach(&session);
        Self {
            client,
            session,
            directives,
            tools,
            plan: None,
            supervisor: None,
            options: AgentOptions::default(),
        }
    }

    /// The session's hard directive queue and standing handler (e.g. to queue a forced
    /// choice before a run).
    #[cfg(test)]
    pub(crate) fn directives(&self) -> &Arc<Directives> {
        &self.directives
    }

    /// Sets the options.
    #[must_use]
    pub fn with_options(mut self, options: AgentOptions) -> Self {
        self.options = options;
        self
    }

    /// Sets the person who approves applies under [`Approval::Human`].
    #[must_use]
    pub fn with_supervisor(mut self, supervisor: Arc<dyn Supervisor>) -> Self {
        self.supervisor = Some(supervisor);
        self
    }

    /// Starts the run in plan mode: the model gets `write` for plan files instead of the tools
    /// that stage changes, and `resolve apply` asks the person to approve the plan.
    #[must_use]
    pub fn with_plan_mode(mut self, plan: PlanMode) -> Self {
        self.plan = Some(plan);
        self
    }

    /// The tools of the current mode, `resolve` last.
    fn active_tools(&self) -> Vec<Arc<dyn Tool>> {
        let planning = self.plan.as_ref().filter(|p| p.is_active());
        let mut res: Vec<Arc<dyn Tool>> = match planning {
            Some(plan) => {
                let mut tools: Vec<Arc<dyn Tool>> =
                    self.tools.iter().filter(|t| !t.deferrable()).cloned().collect();
                tools.push(Arc::new(WritePlanTool::new(plan.clone())));
                tools
            }
            None => self.tools.clone(),
        };
        res.push(Arc::new(ResolveTool::new(Arc::clone(&self.session))));
        res
    }

    fn system_prompt(&self) -> String {
        match &self.plan {
            Some(plan) if plan.is_active() => format!("{SYSTEM_PROMPT}\n{PLAN_PROMPT}"),
            _ => SYSTEM_PROMPT.to_owned(),
        }
    }

    /// Runs `task` to the end. `on_event` sees every event as it happens, deltas included.
    /// Cancelling `cancel` stops the model call in flight and any apply, cooperatively.
    pub async fn run(
        &self,
        task: &str,
        on_event: &mut (dyn FnMut(&AgentEvent) + Send),
        cancel: &CancelToken,
    ) -> RunReport {
        let mut run =
            RunState { sink: on_event, events: Vec::new(), messages: vec![Message::user(task)] };
        let planning = self.plan.as_ref().filter(|p| p.is_active());
        if let Some(plan) = planning {
            let handler = StandingAction(Arc::new(plan.approval_action()));
            self.directives.set_standing_resolve_handler(Some(Arc::new(handler)));
        }
        let (outcome, turns) = self.turns(&mut run, cancel).await;
        if planning.is_some() {
            self.directives.set_standing_resolve_handler(None);
        }
        let end = AgentEvent::RunEnd {
            outcome: outcome.name().to_owned(),
            turns,
            message: outcome.message(),
        };
        run.emit(end);
        RunReport { outcome, turns, messages: run.messages, events: run.events }
    }

    async fn turns(&self, run: &mut RunState<'_>, cancel: &CancelToken) -> (RunOutcome, u32) {
        let mut gate = ResolveGate::new(None);
        let mut tools = self.active_tools();
        let mut specs = specs(&tools);
        let mut system = self.system_prompt();
        let mut forced_rejected = false;
        let mut plan_reminded = false;
        let mut failed_apply: Option<PendingId> = None;
        run.emit(AgentEvent::RunStart {
            model: self.client.describe(),
            plan: self.plan.as_ref().is_some_and(PlanMode::is_active),
            tools: tools.iter().map(|t| t.name().to_owned()).collect(),
        });
        let mut turn = 0;
        loop {
            if cancel.is_cancelled() {
                return (RunOutcome::Cancelled, turn);
            }
            if turn >= self.options.max_turns {
                return (RunOutcome::MaxTurns(turn), turn);
            }
            turn += 1;
            let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
            let directive = match self.directives.next_tool_choice_directive(&self.session, &names)
            {
                Ok(directive) => directive,
                Err(err) => return (RunOutcome::Store(err.to_string()), turn),
            };
            let head_id = match &directive {
                Some(ToolChoiceDirective::Soft(soft)) => Some(soft.id.clone()),
                _ => None,
            };
            let plan = gate.begin_turn(directive);
            for reminder in &plan.inject {
                run.messages.push(Message::reminder(reminder.content.clone()));
                run.emit(AgentEvent::ReminderInjected {
                    turn,
                    pending_id: head_id.clone().unwrap_or_default(),
                    text: reminder.content.clone(),
                });
            }
            let mut choice = plan.tool_choice.clone();
            if forced_rejected && choice.as_ref().is_some_and(ToolChoice::forces_tool_use) {
                choice = Some(ToolChoice::Auto);
            }
            run.emit(AgentEvent::TurnStart { turn, tool_choice: choice.clone() });
            if let (Some(forced), Some(_)) = (&plan.tool_choice, &plan.required_tool)
                && forced.forces_tool_use()
                && gate.escalations() > 0
            {
                run.emit(AgentEvent::ToolChoiceForced {
                    turn,
                    tool_choice: forced.clone(),
                    escalation: gate.escalations(),
                });
            }
            let reply = self
                .call_model(run, turn, &system, &specs, choice, &mut forced_rejected, cancel)
                .await;
            // The in-flight hard directive is settled at the end of the turn, once its tools
            // have run: a directive whose invoker a `resolve` call in this turn reaches is
            // served, one whose invoker no call reached is rejected as not invoked.
            let reply = match reply {
                Ok(reply) => reply,
                Err(ModelError::Cancelled) => {
                    self.directives.with_tool_choice_queue(|q| q.reject(RejectReason::Aborted));
                    return (RunOutcome::Cancelled, turn);
                }
                Err(err) => {
                    self.directives.with_tool_choice_queue(|q| q.reject(RejectReason::Error));
                    return (RunOutcome::Model(err), turn);
                }
            };
            let calls: Vec<ToolCall> = reply.tool_calls().cloned().collect();
            run.emit(AgentEvent::TurnEnd {
                turn,
                text: reply.text(),
                tool_calls: calls.len(),
                stop_reason: reply.stop_reason.clone(),
            });
            run.messages.push(Message::Assistant(reply));
            let refs: Vec<ToolCallRef> =
                calls.iter().map(|c| ToolCallRef::new(&c.id, &c.name)).collect();
            match gate.end_turn(&plan, &refs) {
                Err(abort) => {
                    self.directives.with_tool_choice_queue(|q| q.reject(RejectReason::Aborted));
                    let message = abort.to_string();
                    run.emit(AgentEvent::Abort { turn, message: message.clone() });
                    return (RunOutcome::GateAborted(message), turn);
                }
                Ok(TurnOutcome::Escalate { skipped }) => {
                    let text = skipped.first().map(|(_, r)| r.text_content()).unwrap_or_default();
                    for ((call_id, result), call) in skipped.into_iter().zip(&calls) {
                        run.push_result(call_id, &call.name, result);
                    }
                    let calls = calls
                        .iter()
                        .map(|c| SkippedCall { id: c.id.clone(), name: c.name.clone() })
                        .collect();
                    run.emit(AgentEvent::CallsSkipped { turn, calls, text });
                    self.directives.with_tool_choice_queue(|q| q.resolve());
                }
                Ok(TurnOutcome::Proceed) if calls.is_empty() => {
                    self.directives.with_tool_choice_queue(|q| q.resolve());
                    if self.plan.as_ref().is_some_and(PlanMode::is_active) && !plan_reminded {
                        plan_reminded = true;
                        run.messages.push(Message::reminder(PLAN_DECISION_REMINDER));
                        continue;
                    }
                    return (self.finish(failed_apply.as_ref()), turn);
                }
                Ok(TurnOutcome::Proceed) => {
                    plan_reminded = false;
                    let was_planning = self.plan.as_ref().is_some_and(PlanMode::is_active);
                    for (idx, call) in calls.iter().enumerate() {
                        if cancel.is_cancelled() {
                            for rest in &calls[idx..] {
                                let result =
                                    staged_core::ToolError::aborted(cancel.reason()).to_result();
                                run.push_result(rest.id.clone(), &rest.name, result);
                            }
                            self.directives
                                .with_tool_choice_queue(|q| q.reject(RejectReason::Aborted));
                            return (RunOutcome::Cancelled, turn);
                        }
                        let result =
                            self.execute(run, turn, call, &tools, &mut failed_apply, cancel).await;
                        run.push_result(call.id.clone(), &call.name, result);
                    }
                    self.directives.with_tool_choice_queue(|q| q.resolve());
                    if let Some(plan) =
                        self.plan.as_ref().filter(|p| was_planning && !p.is_active())
                    {
                        self.directives.set_standing_resolve_handler(None);
                        tools = self.active_tools();
                        specs = self::specs(&tools);
                        system = self.system_prompt();
                        let path = plan.approved().map(|p| plan.display(&p)).unwrap_or_default();
                        run.emit(AgentEvent::PlanApproved { turn, path });
                    }
                    if cancel.is_cancelled() {
                        return (RunOutcome::Cancelled, turn);
                    }
                }
            }
        }
    }

    /// The outcome of a run the model ended: done, unless its last apply failed and that
    /// preview is still pending.
    fn finish(&self, failed_apply: Option<&PendingId>) -> RunOutcome {
        let Some(id) = failed_apply else { return RunOutcome::Done };
        match self.session.store().list() {
            Ok(entries) => match entries.iter().find(|e| &e.id == id) {
                Some(entry) => RunOutcome::ApplyLeftPending {
                    id: id.to_string(),
                    label: entry.label().to_owned(),
                },
                None => RunOutcome::Done,
            },
            Err(err) => RunOutcome::Store(err.to_string()),
        }
    }

    /// One model call, streamed into `MessageDelta` events. A forced choice the provider
    /// rejects with HTTP 400 is retried once with `auto`; later forced turns then go as `auto`.
    #[allow(clippy::too_many_arguments)]
    async fn call_model(
        &self,
        run: &mut RunState<'_>,
        turn: u32,
        system: &str,
        specs: &[ToolSpec],
        mut choice: Option<ToolChoice>,
        forced_rejected: &mut bool,
        cancel: &CancelToken,
    ) -> Result<AssistantMessage, ModelError> {
        loop {
            let request = ModelRequest {
                system,
                messages: &run.messages,
                tools: specs,
                tool_choice: choice.as_ref(),
            };
            let sink = &mut *run.sink;
            let mut on_delta = |delta: StreamDelta<'_>| {
                let event = match delta {
                    StreamDelta::Text(text) => {
                        AgentEvent::MessageDelta { turn, text: text.to_owned() }
                    }
                    StreamDelta::Thinking(text) => {
                        AgentEvent::ThinkingDelta { turn, text: text.to_owned() }
                    }
                };
                sink(&event);
            };
            let res = self.client.complete(request, &mut on_delta, cancel).await;
            match res {
                Err(err)
                    if err.is_bad_request()
                        && !*forced_rejected
                        && choice.as_ref().is_some_and(ToolChoice::forces_tool_use) =>
                {
                    *forced_rejected = true;
                    run.emit(AgentEvent::ToolChoiceRejected { turn, message: err.to_string() });
                    choice = Some(ToolChoice::Auto);
                }
                res => return res,
            }
        }
    }

    /// Runs one call of a compliant batch and returns its result.
    async fn execute(
        &self,
        run: &mut RunState<'_>,
        turn: u32,
        call: &ToolCall,
        tools: &[Arc<dyn Tool>],
        failed_apply: &mut Option<PendingId>,
        cancel: &CancelToken,
    ) -> ToolResult {
        let args = match call.parsed_arguments() {
            Ok(args) => args,
            Err(message) => {
                run.emit(AgentEvent::ToolCall {
                    turn,
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: serde_json::Value::String(call.arguments.clone()),
                });
                let result = staged_core::ToolError::new(message).to_result();
                run.emit_result(turn, call, &result);
                return result;
            }
        };
        run.emit(AgentEvent::ToolCall {
            turn,
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: args.clone(),
        });
        let Some(tool) = tools.iter().find(|t| t.name() == call.name) else {
            let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
            let result = staged_core::ToolError::new(format!(
                "Unknown tool `{}`. Available tools: {}.",
                call.name,
                names.join(", ")
            ))
            .to_result();
            run.emit_result(turn, call, &result);
            return result;
        };
        if call.name != RESOLVE_TOOL_NAME {
            let result = run_tool(tool.as_ref(), args, cancel).await;
            run.emit_result(turn, call, &result);
            return result;
        }
        let action = args
            .get("action")
            .and_then(|a| serde_json::from_value::<ResolveAction>(a.clone()).ok());
        let reason =
            args.get("reason").and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
        let head = self.session.store().peek().ok().flatten();
        let mut approved_by = None;
        if action == Some(ResolveAction::Apply)
            && self.options.approval == Approval::Human
            && let (Some(head), Some(supervisor)) = (&head, &self.supervisor)
        {
            match self.ask_person(supervisor.as_ref(), head, &reason, cancel).await {
                Ok(person_reason) => approved_by = Some(person_reason),
                Err(result) => {
                    run.emit_resolve(turn, call, action, &reason, &result);
                    return result;
                }
            }
        }
        let mut result = tool.execute(args, cancel).await.unwrap_or_else(|err| err.to_result());
        if let Some(person) = approved_by {
            result.content.push(ContentPart::Text {
                text: format!("The person approved the apply: {}", person.trim()),
            });
        }
        if action == Some(ResolveAction::Apply)
            && let Some(head) = &head
        {
            let still_pending =
                self.session.store().peek().ok().flatten().is_some_and(|h| h.id == head.id);
            *failed_apply = (result.is_error && still_pending).then(|| head.id.clone());
        }
        run.emit_resolve(turn, call, action, &reason, &result);
        result
    }
}

/// Runs a tool other than `resolve`: Ctrl-C (`cancel`) ends the call at once, whatever the
/// tool is waiting for (a read tool's work runs on a thread the call stops waiting for; a
/// plugin's answer arrives to nobody), and a panic in the tool is an error result, so no tool
/// call can hold or end the run. `resolve` is not run this way: an apply stops cooperatively,
/// before it writes or after its commit, never in between.
async fn run_tool(tool: &dyn Tool, args: serde_json::Value, cancel: &CancelToken) -> ToolResult {
    use futures::FutureExt as _;
    let call = std::panic::AssertUnwindSafe(tool.execute(args, cancel)).catch_unwind();
    tokio::select! {
        () = cancel.cancelled() => staged_core::ToolError::aborted(cancel.reason()).to_result(),
        res = call => match res {
            Ok(res) => res.unwrap_or_else(|err| err.to_result()),
            Err(_) => staged_core::ToolError::new(format!(
                "`{}` failed: it panicked (a bug in staged or the tool)",
                tool.name()
            ))
            .to_result(),
        },
    }
}

impl Agent {
    /// Asks the person about applying `head`: `Ok(their reason)` to go ahead, or the error
    /// result the model gets when they decline (or the head changed while they decided).
    async fn ask_person(
        &self,
        supervisor: &dyn Supervisor,
        head: &staged_core::PendingEntry,
        reason: &str,
        cancel: &CancelToken,
    ) -> Result<String, ToolResult> {
        let decision = tokio::select! {
            () = cancel.cancelled() => ApplyDecision::Decline { reason: "the run was interrupted".to_owned() },
            decision = supervisor.approve_apply(head, reason) => decision,
        };
        let person_reason = match decision {
            ApplyDecision::Approve { reason } => reason,
            ApplyDecision::Decline { reason: declined } => {
                return Err(ToolResult::error(format!(
                    "The person declined to apply `{}`: {}. Nothing was applied; the preview is still pending. Discard it with `resolve` (action \"discard\") or change the approach.",
                    head.label(),
                    declined.trim()
                ))
                .with_details(serde_json::json!({
                    "action": "apply",
                    "reason": reason,
                    "label": head.label(),
                    "sourceToolName": head.source_tool_name(),
                    "approved": false,
                    "pendingId": head.id.as_str(),
                })));
            }
        };
        if self.session.store().peek().ok().flatten().map(|h| h.id) != Some(head.id.clone()) {
            return Err(ToolResult::error(
                "The pending stack changed while waiting for approval; nothing was applied. Call `resolve` again to review the current head.",
            ));
        }
        Ok(person_reason)
    }
}

/// The tool specs sent to the model.
fn specs(tools: &[Arc<dyn Tool>]) -> Vec<ToolSpec> {
    tools
        .iter()
        .map(|t| ToolSpec {
            name: t.name().to_owned(),
            description: t.description().to_owned(),
            parameters: t.parameters(),
        })
        .collect()
}

/// The conversation and event log of a run in progress.
struct RunState<'a> {
    sink: &'a mut (dyn FnMut(&AgentEvent) + Send),
    events: Vec<AgentEvent>,
    messages: Vec<Message>,
}

impl RunState<'_> {
    fn emit(&mut self, event: AgentEvent) {
        (self.sink)(&event);
        self.events.push(event);
    }

    fn push_result(&mut self, call_id: String, tool_name: &str, result: ToolResult) {
        self.messages.push(Message::Tool(ToolResultMessage {
            call_id,
            tool_name: tool_name.to_owned(),
            result,
        }));
    }

    fn emit_result(&mut self, turn: u32, call: &ToolCall, result: &ToolResult) {
        self.emit(AgentEvent::ToolResult {
            turn,
            id: call.id.clone(),
            name: call.name.clone(),
            is_error: result.is_error,
            text: result.text_content(),
            details: result.details.clone(),
        });
    }

    fn emit_resolve(
        &mut self,
        turn: u32,
        call: &ToolCall,
        action: Option<ResolveAction>,
        reason: &str,
        result: &ToolResult,
    ) {
        let label = result
            .details
            .as_ref()
            .and_then(|d| d.get("label"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        self.emit(AgentEvent::Resolve {
            turn,
            id: call.id.clone(),
            action,
            reason: reason.to_owned(),
            is_error: result.is_error,
            label,
            text: result.text_content(),
            details: result.details.clone(),
        });
    }
}
