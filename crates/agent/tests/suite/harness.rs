//! Shared set-up: a mock model for a wire format, a provider configured to reach it, an
//! in-memory session with a staged preview, and an agent run that records its events.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicUsize, Ordering},
};

use staged_agent::{
    Agent, AgentEvent, AgentOptions, ApplyDecision, PlanDecision, PlanReview, ProviderConfig,
    ProviderOverrides, ProvidersConfig, RunReport, Supervisor,
};
use staged_agent_test_support::{MockModel, MockWire, Reply};
use staged_core::{CancelToken, FnPendingAction, InMemoryStore, PendingEntry, Session, Tool};
use staged_protocol::ToolResult;
use staged_protocol::WireFormat;

/// A provider named `mock` speaking `wire` at the mock's URL, with `extra` TOML lines.
pub(crate) fn provider(wire: WireFormat, mock: &MockModel, extra: &str) -> ProviderConfig {
    let mut config = ProvidersConfig::builtin();
    let toml = format!(
        "[providers.mock]\nwire = \"{}\"\nbase_url = \"{}\"\nmodel = \"mock-model\"\nmax_retries = 2\n{extra}\n",
        wire.toml_name(),
        mock.base_url()
    );
    config.apply_toml("test", &toml).unwrap();
    config
        .resolve(&ProviderOverrides { provider: Some("mock".into()), ..Default::default() })
        .unwrap()
}

/// A session holding one staged preview whose apply counts its runs.
pub(crate) fn staged_session(applies: &Arc<AtomicUsize>) -> Arc<Session> {
    let session = Arc::new(Session::new(Arc::new(InMemoryStore::new())));
    let counter = Arc::clone(applies);
    session
        .push_pending_action(Arc::new(
            FnPendingAction::new("AST Edit: 1 replacement in 1 file", move |_| {
                let counter = Arc::clone(&counter);
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok(ToolResult::text("Applied 1 replacement in 1 file."))
                }
            })
            .with_source_tool_name("ast_edit"),
        ))
        .unwrap();
    session
}

/// A read-only tool that counts its runs.
#[derive(Debug, Default)]
pub(crate) struct Peek(pub(crate) AtomicUsize);

#[async_trait::async_trait]
impl Tool for Peek {
    fn name(&self) -> &str {
        "peek"
    }
    fn label(&self) -> &str {
        "Peek"
    }
    fn description(&self) -> &str {
        "Peeks."
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {}})
    }
    async fn execute(
        &self,
        _: serde_json::Value,
        _: &CancelToken,
    ) -> Result<ToolResult, staged_core::ToolError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(ToolResult::text("peeked"))
    }
}

/// A scripted person: answers from queues, and records what they were shown.
#[derive(Debug, Default)]
pub(crate) struct ScriptedPerson {
    pub(crate) applies: Mutex<Vec<ApplyDecision>>,
    pub(crate) plans: Mutex<Vec<PlanDecision>>,
    pub(crate) shown: Mutex<Vec<String>>,
    /// Notices handed to the model, one list per turn asked.
    pub(crate) notices: Mutex<Vec<Vec<String>>>,
}

#[async_trait::async_trait]
impl Supervisor for ScriptedPerson {
    async fn approve_apply(&self, head: &PendingEntry, reason: &str) -> ApplyDecision {
        self.shown.lock().unwrap().push(format!("apply {} because {reason}", head.label()));
        let mut applies = self.applies.lock().unwrap();
        if applies.is_empty() {
            ApplyDecision::Decline { reason: "no answer".into() }
        } else {
            applies.remove(0)
        }
    }

    fn notices(&self) -> Vec<String> {
        let mut notices = self.notices.lock().unwrap();
        if notices.is_empty() { Vec::new() } else { notices.remove(0) }
    }

    async fn review_plan(&self, plan: PlanReview<'_>) -> PlanDecision {
        self.shown
            .lock()
            .unwrap()
            .push(format!("plan {} titled {}: {}", plan.path, plan.title, plan.content));
        let mut plans = self.plans.lock().unwrap();
        if plans.is_empty() { PlanDecision::Refine(String::new()) } else { plans.remove(0) }
    }
}

/// Starts a mock for `wire` with `script`.
pub(crate) fn mock(wire: WireFormat, script: Vec<Reply>) -> MockModel {
    MockModel::start(wire, script)
}

/// Runs `agent` on `task` and returns the report and every event (deltas included).
pub(crate) async fn run(agent: &Agent, task: &str) -> (RunReport, Vec<AgentEvent>) {
    run_with(agent, task, &CancelToken::new()).await
}

/// Like [`run`], with a cancel token.
pub(crate) async fn run_with(
    agent: &Agent,
    task: &str,
    cancel: &CancelToken,
) -> (RunReport, Vec<AgentEvent>) {
    let mut events = Vec::new();
    let report =
        agent.run(task, &mut |event: &AgentEvent| events.push(event.clone()), cancel).await;
    (report, events)
}

/// An agent on `config` (connected without a key), `session` and `tools`.
pub(crate) fn agent(
    config: &ProviderConfig,
    session: &Arc<Session>,
    tools: Vec<Arc<dyn Tool>>,
) -> Agent {
    let client = staged_agent::connect(config, None).unwrap();
    Agent::new(client, Arc::clone(session), tools).with_options(AgentOptions::default())
}
