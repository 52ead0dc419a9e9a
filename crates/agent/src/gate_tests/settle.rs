//! The run loop settles a hard directive (the queue has no producer outside the crate, so this
//! end-to-end test lives here, beside the queue's own tests).

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use staged_agent_test_support::{MockModel, MockWire, Reply, Turn};
use staged_core::{CancelToken, FnPendingAction, InMemoryStore, Session};
use staged_protocol::ToolResult;
use staged_protocol::WireFormat;

use crate::{Agent, AgentEvent, AgentOptions, ProviderOverrides, ProvidersConfig, RunOutcome};

/// A session holding one staged preview whose apply counts its runs.
fn staged_session(applies: &Arc<AtomicUsize>) -> Arc<Session> {
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

/// An agent on a provider named `mock` speaking `wire` at the mock's URL.
fn agent(wire: WireFormat, mock: &MockModel, session: &Arc<Session>) -> Agent {
    let mut config = ProvidersConfig::builtin();
    let toml = format!(
        "[providers.mock]\nwire = \"{}\"\nbase_url = \"{}\"\nmodel = \"mock-model\"\nmax_retries = 2\n",
        wire.toml_name(),
        mock.base_url()
    );
    config.apply_toml("test", &toml).unwrap();
    let provider = config
        .resolve(&ProviderOverrides { provider: Some("mock".into()), ..Default::default() })
        .unwrap();
    let client = crate::connect(&provider, None).unwrap();
    Agent::new(client, Arc::clone(session), vec![]).with_options(AgentOptions::default())
}

/// A hard directive whose invoker the model's `resolve` reaches in the forced turn is served
/// at the end of that turn, after its tools ran: the invoker runs once, `on_resolved` fires,
/// and nothing is rejected as not invoked.
#[tokio::test]
async fn a_hard_directive_is_settled_after_its_turns_tools_run() {
    use staged_core::{ResolveHandler, ToolError};
    use staged_gate::{DirectiveOptions, OnRejected, RejectOutcome};
    use staged_protocol::{ResolveParams, ToolChoice, ToolResult};

    #[derive(Debug, Default)]
    struct Invoker(AtomicUsize);
    #[async_trait::async_trait]
    impl ResolveHandler for Invoker {
        async fn invoke(
            &self,
            params: &ResolveParams,
            _: &staged_core::CancelToken,
        ) -> Result<ToolResult, ToolError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::text(format!("directive handled: {}", params.reason)))
        }
    }

    for wire in WireFormat::ALL {
        let script = vec![
            Reply::Turn(Turn::resolve("r1", "apply", "as asked")),
            Reply::Turn(Turn::resolve("r2", "apply", "the preview")),
            Reply::Turn(Turn::text("Done.")),
        ];
        let mock = MockModel::start(wire, script);
        let applies = Arc::new(AtomicUsize::new(0));
        let session = staged_session(&applies);
        let agent = agent(wire, &mock, &session);
        let invoker = Arc::new(Invoker::default());
        let resolved = Arc::new(AtomicUsize::new(0));
        let rejected = Arc::new(AtomicUsize::new(0));
        let (on_resolved, on_rejected) = (Arc::clone(&resolved), Arc::clone(&rejected));
        let rejects: OnRejected = Arc::new(move |_, _| {
            on_rejected.fetch_add(1, Ordering::SeqCst);
            RejectOutcome::Drop
        });
        agent.directives().with_tool_choice_queue(|q| {
            q.push_once(
                ToolChoice::tool("resolve"),
                DirectiveOptions {
                    on_invoked: Some(Arc::clone(&invoker) as Arc<dyn ResolveHandler>),
                    on_resolved: Some(Arc::new(move |_| {
                        on_resolved.fetch_add(1, Ordering::SeqCst);
                    })),
                    on_rejected: Some(rejects),
                    ..Default::default()
                },
            )
        });
        let report = agent.run("task", &mut |_: &AgentEvent| {}, &CancelToken::new()).await;
        assert_eq!(report.outcome, RunOutcome::Done, "{wire:?}");
        assert_eq!(invoker.0.load(Ordering::SeqCst), 1, "{wire:?}: the invoker ran once");
        assert_eq!(resolved.load(Ordering::SeqCst), 1, "{wire:?}: served");
        assert_eq!(rejected.load(Ordering::SeqCst), 0, "{wire:?}: never rejected");
        // The first turn was the directive's (forced), the second applied the preview.
        let requests = mock.requests();
        assert_eq!(requests[0].tool_choice(), Some(&wire.forced_resolve()), "{wire:?}");
        assert_eq!(applies.load(Ordering::SeqCst), 1, "{wire:?}");
    }
}
