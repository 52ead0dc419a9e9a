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

use serde::Deserialize as _;
use staged_core::{CancelToken, PendingId, RESOLVE_TOOL_NAME, ResolveTool, Session, Tool};
use staged_protocol::ToolResult;
use staged_protocol::{ContentPart, ResolveAction, ResolveDetails, ResolveParams};

use staged_protocol::ToolChoice;

use crate::{
    AgentEvent, AssistantMessage, Directives, Message, ModelClient, ModelError, ModelRequest,
    PlanMode, RejectReason, ResolveGate, SkippedCall, StandingHandler, StreamDelta, Supervisor,
    ToolCall, ToolCallRef, ToolChoiceDirective, ToolResultMessage, ToolSpec, TurnOutcome, TurnPlan,
    supervisor::ask_to_apply, tools::WritePlanTool,
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
    /// choice before a run, through [`Directives::with_tool_choice_queue`]).
    pub fn directives(&self) -> &Arc<Directives> {
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
        let run =
            RunState { sink: on_event, events: Vec::new(), messages: vec![Message::user(task)] };
        let planning = self.plan.as_ref().filter(|p| p.is_active());
        if let Some(plan) = planning {
            let handler = StandingHandler(Arc::new(plan.approval_action()));
            self.directives.set_standing_resolve_handler(Some(Arc::new(handler)));
        }
        let mut turns = Turns::new(self, run, cancel);
        let outcome = turns.run_to_end().await;
        let Turns { mut run, turn: turns, .. } = turns;
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
}

/// A run between its steps: the conversation, the gate, the tools of the current mode, and
/// what one turn leaves the next. Each turn is [`Turns::plan_turn`], [`Turns::call_model`],
/// [`Turns::judge`] and, for a compliant batch, [`Turns::run_batch`].
struct Turns<'a> {
    agent: &'a Agent,
    cancel: &'a CancelToken,
    run: RunState<'a>,
    gate: ResolveGate,
    /// The tools of the current mode, `resolve` last, and what the model is told of them.
    tools: Vec<Arc<dyn Tool>>,
    specs: Vec<ToolSpec>,
    system: String,
    /// The provider refused a forced tool choice: the run's later forced turns go as `auto`.
    forced_rejected: bool,
    /// The plan-decision reminder was sent since the last batch ran.
    plan_reminded: bool,
    /// The preview whose last apply failed (it may still be pending).
    failed_apply: Option<PendingId>,
    /// Model calls made so far.
    turn: u32,
}

/// A turn as planned: the gate's plan, and the tool choice to send.
struct Planned {
    plan: TurnPlan,
    choice: Option<ToolChoice>,
}

/// What the gate made of a reply.
enum Judged {
    /// A compliant batch of calls, to run in order.
    Batch(Vec<ToolCall>),
    /// On to the next turn (a skipped batch, or the plan-decision reminder).
    Next,
    /// The run is over.
    End(RunOutcome),
}

impl<'a> Turns<'a> {
    fn new(agent: &'a Agent, run: RunState<'a>, cancel: &'a CancelToken) -> Self {
        let tools = agent.active_tools();
        Turns {
            agent,
            cancel,
            run,
            gate: ResolveGate::new(None),
            specs: specs(&tools),
            tools,
            system: agent.system_prompt(),
            forced_rejected: false,
            plan_reminded: false,
            failed_apply: None,
            turn: 0,
        }
    }

    /// Runs turns until the run ends.
    async fn run_to_end(&mut self) -> RunOutcome {
        self.run.emit(AgentEvent::RunStart {
            model: self.agent.client.describe(),
            plan: self.agent.plan.as_ref().is_some_and(PlanMode::is_active),
            tools: self.tools.iter().map(|t| t.name().to_owned()).collect(),
        });
        loop {
            let planned = match self.plan_turn() {
                Ok(planned) => planned,
                Err(outcome) => return outcome,
            };
            let reply = self.call_model(planned.choice.clone()).await;
            // The in-flight hard directive is settled at the end of the turn, once its tools
            // have run: a directive whose invoker a `resolve` call in this turn reaches is
            // served, one whose invoker no call reached is rejected as not invoked.
            let reply = match reply {
                Ok(reply) => reply,
                Err(ModelError::Cancelled) => {
                    self.settle_directive(|q| q.reject(RejectReason::Aborted));
                    return RunOutcome::Cancelled;
                }
                Err(err) => {
                    self.settle_directive(|q| q.reject(RejectReason::Error));
                    return RunOutcome::Model(err);
                }
            };
            match self.judge(&planned.plan, reply) {
                Judged::Batch(calls) => {
                    if let Some(outcome) = self.run_batch(&calls).await {
                        return outcome;
                    }
                }
                Judged::Next => {}
                Judged::End(outcome) => return outcome,
            }
        }
    }

    /// Starts a turn: stops at a cancel or the turn limit, asks the session for the
    /// directive, lets the gate plan the turn, injects its reminders and picks the tool
    /// choice (`auto` for a forced one once the provider refused forcing).
    fn plan_turn(&mut self) -> Result<Planned, RunOutcome> {
        if self.cancel.is_cancelled() {
            return Err(RunOutcome::Cancelled);
        }
        if self.turn >= self.agent.options.max_turns {
            return Err(RunOutcome::MaxTurns(self.turn));
        }
        self.turn += 1;
        let turn = self.turn;
        let names: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
        let directive = self
            .agent
            .directives
            .next_tool_choice_directive(&self.agent.session, &names)
            .map_err(|err| RunOutcome::Store(err.to_string()))?;
        let head_id = match &directive {
            Some(ToolChoiceDirective::Soft(soft)) => Some(soft.id.clone()),
            _ => None,
        };
        if let Some(supervisor) = &self.agent.supervisor {
            for notice in supervisor.notices() {
                self.run.messages.push(Message::user(notice));
            }
        }
        let plan = self.gate.begin_turn(directive);
        for reminder in &plan.inject {
            self.run.messages.push(Message::reminder(reminder.content.clone()));
            self.run.emit(AgentEvent::ReminderInjected {
                turn,
                pending_id: head_id.clone().unwrap_or_default(),
                text: reminder.content.clone(),
            });
        }
        let mut choice = plan.tool_choice.clone();
        if self.forced_rejected && choice.as_ref().is_some_and(ToolChoice::forces_tool_use) {
            choice = Some(ToolChoice::Auto);
        }
        self.run.emit(AgentEvent::TurnStart { turn, tool_choice: choice.clone() });
        if let (Some(forced), Some(_)) = (&plan.tool_choice, &plan.required_tool)
            && forced.forces_tool_use()
            && self.gate.escalations() > 0
        {
            self.run.emit(AgentEvent::ToolChoiceForced {
                turn,
                tool_choice: forced.clone(),
                escalation: self.gate.escalations(),
            });
        }
        Ok(Planned { plan, choice })
    }

    /// One model call, streamed into `MessageDelta` events. A forced choice the provider
    /// rejects with HTTP 400 is retried once with `auto`; later forced turns then go as `auto`.
    async fn call_model(
        &mut self,
        mut choice: Option<ToolChoice>,
    ) -> Result<AssistantMessage, ModelError> {
        let turn = self.turn;
        loop {
            let request = ModelRequest {
                system: &self.system,
                messages: &self.run.messages,
                tools: &self.specs,
                tool_choice: choice.as_ref(),
            };
            let sink = &mut *self.run.sink;
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
            let res = self.agent.client.complete(request, &mut on_delta, self.cancel).await;
            match res {
                Err(err)
                    if err.is_bad_request()
                        && !self.forced_rejected
                        && choice.as_ref().is_some_and(ToolChoice::forces_tool_use) =>
                {
                    self.forced_rejected = true;
                    self.run
                        .emit(AgentEvent::ToolChoiceRejected { turn, message: err.to_string() });
                    choice = Some(ToolChoice::Auto);
                }
                res => return res,
            }
        }
    }

    /// Records the reply and lets the gate judge it: an abort ends the run, a batch that is
    /// not all `resolve` is skipped (each call gets the synthetic result), bare text ends the
    /// run (once plan mode has reminded the model to decide), and a compliant batch runs.
    fn judge(&mut self, plan: &TurnPlan, reply: AssistantMessage) -> Judged {
        let turn = self.turn;
        let calls: Vec<ToolCall> = reply.tool_calls().cloned().collect();
        self.run.emit(AgentEvent::TurnEnd {
            turn,
            text: reply.text(),
            tool_calls: calls.len(),
            stop_reason: reply.stop_reason.clone(),
        });
        self.run.messages.push(Message::Assistant(reply));
        let refs: Vec<ToolCallRef> =
            calls.iter().map(|c| ToolCallRef::new(&c.id, &c.name)).collect();
        match self.gate.end_turn(plan, &refs) {
            Err(abort) => {
                self.settle_directive(|q| q.reject(RejectReason::Aborted));
                let message = abort.to_string();
                self.run.emit(AgentEvent::Abort { turn, message: message.clone() });
                Judged::End(RunOutcome::GateAborted(message))
            }
            Ok(TurnOutcome::Escalate { skipped }) => {
                let text = skipped.first().map(|(_, r)| r.text_content()).unwrap_or_default();
                for ((call_id, result), call) in skipped.into_iter().zip(&calls) {
                    self.run.push_result(call_id, &call.name, result);
                }
                let calls = calls
                    .iter()
                    .map(|c| SkippedCall { id: c.id.clone(), name: c.name.clone() })
                    .collect();
                self.run.emit(AgentEvent::CallsSkipped { turn, calls, text });
                self.settle_directive(|q| q.mark_served());
                Judged::Next
            }
            Ok(TurnOutcome::Proceed) if calls.is_empty() => {
                self.settle_directive(|q| q.mark_served());
                if self.agent.plan.as_ref().is_some_and(PlanMode::is_active) && !self.plan_reminded
                {
                    self.plan_reminded = true;
                    self.run.messages.push(Message::reminder(PLAN_DECISION_REMINDER));
                    return Judged::Next;
                }
                Judged::End(self.agent.finish(self.failed_apply.as_ref()))
            }
            Ok(TurnOutcome::Proceed) => Judged::Batch(calls),
        }
    }

    /// Runs a compliant batch in order, each call paired with its result (the calls a cancel
    /// cuts off get the aborted result), and switches to implementing once plan mode's plan
    /// was approved. `Some` when the run ends.
    async fn run_batch(&mut self, calls: &[ToolCall]) -> Option<RunOutcome> {
        self.plan_reminded = false;
        let plan = self.agent.plan.as_ref();
        let was_planning = plan.is_some_and(PlanMode::is_active);
        for (idx, call) in calls.iter().enumerate() {
            if self.cancel.is_cancelled() {
                for rest in &calls[idx..] {
                    let result = staged_core::ToolError::aborted(self.cancel.reason()).to_result();
                    self.run.push_result(rest.id.clone(), &rest.name, result);
                }
                self.settle_directive(|q| q.reject(RejectReason::Aborted));
                return Some(RunOutcome::Cancelled);
            }
            let result = self.execute(call).await;
            self.run.push_result(call.id.clone(), &call.name, result);
        }
        self.settle_directive(|q| q.mark_served());
        if let Some(plan) = plan.filter(|p| was_planning && !p.is_active()) {
            self.agent.directives.set_standing_resolve_handler(None);
            self.tools = self.agent.active_tools();
            self.specs = specs(&self.tools);
            self.system = self.agent.system_prompt();
            let path = plan.approved().map(|p| plan.display(&p)).unwrap_or_default();
            self.run.emit(AgentEvent::PlanApproved { turn: self.turn, path });
        }
        self.cancel.is_cancelled().then_some(RunOutcome::Cancelled)
    }

    /// Settles the hard directive in flight, if any.
    fn settle_directive<R>(&self, settle: impl FnOnce(&mut crate::ToolChoiceQueue) -> R) {
        self.agent.directives.with_tool_choice_queue(settle);
    }

    /// Runs one call of a compliant batch and returns its result.
    async fn execute(&mut self, call: &ToolCall) -> ToolResult {
        let turn = self.turn;
        let args = match call.parsed_arguments() {
            Ok(args) => args,
            Err(message) => {
                self.run.emit(AgentEvent::ToolCall {
                    turn,
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: serde_json::Value::String(call.arguments.clone()),
                });
                let result = staged_core::ToolError::new(message).to_result();
                self.run.emit_result(turn, call, &result);
                return result;
            }
        };
        self.run.emit(AgentEvent::ToolCall {
            turn,
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: args.clone(),
        });
        let Some(tool) = self.tools.iter().find(|t| t.name() == call.name).cloned() else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
            let result = staged_core::ToolError::new(format!(
                "Unknown tool `{}`. Available tools: {}.",
                call.name,
                names.join(", ")
            ))
            .to_result();
            self.run.emit_result(turn, call, &result);
            return result;
        };
        if call.name == RESOLVE_TOOL_NAME {
            return self.resolve(call, tool.as_ref(), args).await;
        }
        let result = run_tool(tool.as_ref(), args, self.cancel).await;
        self.run.emit_result(turn, call, &result);
        result
    }

    /// Runs a `resolve` call, asking the person first about an apply under
    /// [`Approval::Human`], and remembers an apply that failed and left its preview pending.
    async fn resolve(
        &mut self,
        call: &ToolCall,
        tool: &dyn Tool,
        args: serde_json::Value,
    ) -> ToolResult {
        let turn = self.turn;
        // Arguments `resolve` refuses name no action here: it answers them with its error.
        let params = serde_json::from_value::<ResolveParams>(args.clone()).ok();
        let action = params.as_ref().map(|p| p.action);
        let reason = params.map(|p| p.reason).unwrap_or_default();
        let session = &self.agent.session;
        let head = session.store().peek().ok().flatten();
        let mut approved_by = None;
        if action == Some(ResolveAction::Apply)
            && self.agent.options.approval == Approval::Human
            && let (Some(head), Some(supervisor)) = (&head, &self.agent.supervisor)
        {
            match ask_to_apply(supervisor.as_ref(), session, head, &reason, self.cancel).await {
                Ok(person_reason) => approved_by = Some(person_reason),
                Err(result) => {
                    self.run.emit_resolve(turn, call, action, &reason, &result);
                    return result;
                }
            }
        }
        let mut result =
            tool.execute(args, self.cancel).await.unwrap_or_else(|err| err.to_result());
        if let Some(person) = approved_by {
            result.content.push(ContentPart::Text {
                text: format!("The person approved the apply: {}", person.trim()),
            });
        }
        if action == Some(ResolveAction::Apply)
            && let Some(head) = &head
        {
            let still_pending =
                session.store().peek().ok().flatten().is_some_and(|h| h.id == head.id);
            self.failed_apply = (result.is_error && still_pending).then(|| head.id.clone());
        }
        self.run.emit_resolve(turn, call, action, &reason, &result);
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
            .and_then(|d| ResolveDetails::deserialize(d).ok())
            .and_then(|d| d.label);
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
