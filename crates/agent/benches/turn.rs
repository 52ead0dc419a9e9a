//! The agent loop's own cost per turn, against the mock model's round trip (criterion).
//!
//! `round_trip` POSTs the first turn's request body to the mock and reads the whole SSE reply
//! with reqwest, which is what any client pays. `agent_run/1_turn` runs `Agent::run` on the
//! same mock (nothing pending: one model call), and `agent_run/3_turns_gate` runs the gate
//! with a pending preview: the reminder and a bare-text answer (escalated), the forced turn
//! whose `resolve` applies it, and the closing answer (3 model calls). The loop's overhead per turn is (agent time / turns) minus the round trip.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use staged_agent::{
    Agent, Message, ModelRequest, ProviderOverrides, ProvidersConfig, RunOutcome, SYSTEM_PROMPT,
    ToolSpec, responses_body,
};
use staged_agent_test_support::{MockModel, Reply, Turn};
use staged_core::{CancelToken, FnPendingAction, InMemoryStore, Session};
use staged_protocol::ToolResult;
use staged_protocol::WireFormat;

fn provider(mock: &MockModel) -> staged_agent::ProviderConfig {
    let mut config = ProvidersConfig::builtin();
    let toml = format!(
        "[providers.mock]\nwire = \"openai-responses\"\nbase_url = \"{}\"\nmodel = \"m\"\n",
        mock.base_url()
    );
    config.apply_toml("bench", &toml).unwrap();
    config
        .resolve(&ProviderOverrides { provider: Some("mock".into()), ..Default::default() })
        .unwrap()
}

fn session(staged: bool) -> Arc<Session> {
    let session = Arc::new(Session::new(Arc::new(InMemoryStore::new())));
    if staged {
        let action = FnPendingAction::new("AST Edit: 1 replacement in 1 file", |_| async {
            Ok(ToolResult::text("Applied 1 replacement in 1 file."))
        })
        .with_source_tool_name("ast_edit");
        session.push_pending_action(Arc::new(action)).unwrap();
    }
    session
}

fn bench(c: &mut Criterion) {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let text = MockModel::serve_forever(
        WireFormat::OpenaiResponses,
        Reply::Turn(Turn::text("Nothing to change.")),
    );
    let text_provider = provider(&text);
    let mut group = c.benchmark_group("turn");

    // The bare round trip: the same body the agent's first request sends, read to the end.
    let http = reqwest::Client::new();
    let url = text_provider.endpoint_url();
    let messages = [Message::user("task")];
    let tools: Vec<ToolSpec> = Vec::new();
    let request = ModelRequest {
        system: SYSTEM_PROMPT,
        messages: &messages,
        tools: &tools,
        tool_choice: None,
    };
    let body = serde_json::to_vec(&responses_body(&text_provider, "m", request)).unwrap();
    group.bench_function("round_trip", |b| {
        b.to_async(&runtime).iter(|| async {
            let response = http
                .post(&url)
                .header("content-type", "application/json")
                .body(body.clone())
                .send()
                .await
                .unwrap();
            let mut events = response.bytes_stream().eventsource();
            let mut n = 0;
            while let Some(event) = events.next().await {
                event.unwrap();
                n += 1;
            }
            assert!(n > 0);
        });
    });

    let client = staged_agent::connect(&text_provider, None).unwrap();
    group.bench_function("agent_run/1_turn", |b| {
        b.to_async(&runtime).iter_batched(
            || Agent::new(Arc::clone(&client), session(false), Vec::new()),
            |agent| async move {
                let report = agent.run("task", &mut |_| {}, &CancelToken::new()).await;
                assert_eq!((report.outcome, report.turns), (RunOutcome::Done, 1));
            },
            BatchSize::SmallInput,
        );
    });

    // Three turns: bare text (escalated), the forced `resolve`, then the answer the mock
    // serves forever. The first two are queued right before each run.
    let gate_mock =
        MockModel::serve_forever(WireFormat::OpenaiResponses, Reply::Turn(Turn::text("Done.")));
    let gate_client = staged_agent::connect(&provider(&gate_mock), None).unwrap();
    group.bench_function("agent_run/3_turns_gate", |b| {
        b.to_async(&runtime).iter_batched(
            || {
                gate_mock.push([
                    Reply::Turn(Turn::text("Let me look.")),
                    Reply::Turn(Turn::resolve("r1", "apply", "ok")),
                ]);
                Agent::new(Arc::clone(&gate_client), session(true), Vec::new())
            },
            |agent| async move {
                let report = agent.run("task", &mut |_| {}, &CancelToken::new()).await;
                assert_eq!((report.outcome, report.turns), (RunOutcome::Done, 3));
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

use eventsource_stream::Eventsource as _;

criterion_group!(benches, bench);
criterion_main!(benches);
