//! The HTTP behaviour under the loop: retries on 429 and 5xx honouring `Retry-After`, the
//! stream idle timeout, the one retry with `auto` after a provider rejects a forced choice,
//! cancellation of the request in flight, and an unreachable provider.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use pretty_assertions::assert_eq;
use serde_json::json;
use staged_agent::{AgentEvent, ModelError, RunOutcome};
use staged_agent_test_support::{MockWire, Reply, Turn};
use staged_core::{CancelToken, InMemoryStore, Session};
use staged_protocol::WireFormat;

use super::harness::{agent, mock, provider, run, run_with, staged_session};

fn empty_session() -> Arc<Session> {
    Arc::new(Session::new(Arc::new(InMemoryStore::new())))
}

fn status(code: u16, retry_after: Option<&str>) -> Reply {
    let headers =
        retry_after.map(|v| vec![("retry-after".to_owned(), v.to_owned())]).unwrap_or_default();
    Reply::Status(code, headers, format!("{{\"error\": {{\"message\": \"status {code}\"}}}}"))
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_honouring_retry_after() {
    for wire in WireFormat::ALL {
        let script =
            vec![status(429, Some("0")), status(503, Some("0")), Reply::Turn(Turn::text("Done."))];
        let mock = mock(wire, script);
        let agent = agent(&provider(wire, &mock, ""), &empty_session(), Vec::new());
        let (report, _) = run(&agent, "task").await;
        assert_eq!(report.outcome, RunOutcome::Done, "{wire:?}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[0].body, requests[2].body, "a retry resends the same request");
    }
}

#[tokio::test]
async fn retries_stop_after_max_retries_with_the_last_status() {
    let script = vec![
        status(500, Some("0")),
        status(500, Some("0")),
        status(502, Some("0")),
        Reply::Turn(Turn::text("never")),
    ];
    let mock = mock(WireFormat::OpenaiChat, script);
    let agent = agent(&provider(WireFormat::OpenaiChat, &mock, ""), &empty_session(), Vec::new());
    let (report, _) = run(&agent, "task").await;
    match report.outcome {
        RunOutcome::Model(ModelError::Status { status, attempts, .. }) => {
            assert_eq!((status, attempts), (502, 3))
        }
        other => panic!("expected the last status, got {other:?}"),
    }
    assert_eq!(mock.remaining(), 1);
}

#[tokio::test]
async fn an_unauthorized_key_is_not_retried() {
    let mock = mock(
        WireFormat::AnthropicMessages,
        vec![status(401, None), Reply::Turn(Turn::text("never"))],
    );
    let agent =
        agent(&provider(WireFormat::AnthropicMessages, &mock, ""), &empty_session(), Vec::new());
    let (report, _) = run(&agent, "task").await;
    assert!(
        matches!(report.outcome, RunOutcome::Model(ModelError::Auth { status: 401, .. })),
        "{:?}",
        report.outcome
    );
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_silent_stream_is_given_up_after_the_idle_timeout() {
    for wire in WireFormat::ALL {
        let mock = mock(wire, vec![Reply::Stall]);
        let agent = agent(
            &provider(wire, &mock, "stream_idle_timeout = \"200ms\""),
            &empty_session(),
            Vec::new(),
        );
        let (report, _) = run(&agent, "task").await;
        match &report.outcome {
            RunOutcome::Model(err @ ModelError::IdleTimeout { idle, .. }) => {
                assert_eq!(*idle, Duration::from_millis(200));
                assert_eq!(
                    err.to_string(),
                    "mock sent nothing for 200ms while streaming; gave up (stream_idle_timeout)"
                );
            }
            other => panic!("{wire:?}: expected an idle timeout, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_rejected_forced_choice_is_retried_once_with_auto() {
    for wire in WireFormat::ALL {
        let script = vec![
            Reply::Turn(Turn::text("Let me think.")),
            status(400, None),
            Reply::Turn(Turn::resolve("r1", "apply", "ok")),
            Reply::Turn(Turn::text("Done.")),
        ];
        let mock = mock(wire, script);
        let applies = Arc::new(AtomicUsize::new(0));
        let session = staged_session(&applies);
        let agent = agent(&provider(wire, &mock, ""), &session, Vec::new());
        let (report, events) = run(&agent, "task").await;
        assert_eq!(report.outcome, RunOutcome::Done, "{wire:?}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 4);
        assert_eq!(requests[1].tool_choice(), Some(&wire.forced_resolve()));
        let auto = if wire == WireFormat::AnthropicMessages {
            json!({"type": "auto"})
        } else {
            json!("auto")
        };
        assert_eq!(requests[2].tool_choice(), Some(&auto), "{wire:?}");
        assert_eq!(applies.load(Ordering::SeqCst), 1);
        assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolChoiceRejected { turn: 2, .. })));
    }
}

#[tokio::test]
async fn a_second_rejection_stops_the_run_instead_of_looping() {
    let script = vec![
        Reply::Turn(Turn::text("Hmm.")),
        status(400, None),
        status(400, None),
        Reply::Turn(Turn::text("never")),
    ];
    let mock = mock(WireFormat::OpenaiResponses, script);
    let session = staged_session(&Arc::new(AtomicUsize::new(0)));
    let agent = agent(&provider(WireFormat::OpenaiResponses, &mock, ""), &session, Vec::new());
    let (report, _) = run(&agent, "task").await;
    assert!(
        matches!(report.outcome, RunOutcome::Model(ModelError::BadRequest { .. })),
        "{:?}",
        report.outcome
    );
    assert_eq!(mock.requests().len(), 3);
    assert_eq!(session.store().len().unwrap(), 1, "the preview is still pending");
}

#[tokio::test]
async fn cancelling_stops_the_request_in_flight() {
    let mock = Arc::new(mock(WireFormat::AnthropicMessages, vec![Reply::Stall]));
    let agent =
        agent(&provider(WireFormat::AnthropicMessages, &mock, ""), &empty_session(), Vec::new());
    let cancel = CancelToken::new();
    let watcher = {
        let (mock, cancel) = (Arc::clone(&mock), cancel.clone());
        std::thread::spawn(move || {
            mock.wait_for_requests(1, Duration::from_secs(30));
            cancel.cancel_with("Interrupted");
        })
    };
    let (report, _) = run_with(&agent, "task", &cancel).await;
    watcher.join().unwrap();
    assert_eq!(report.outcome, RunOutcome::Cancelled);
    assert_eq!(report.outcome.message().as_deref(), Some("interrupted; nothing was half-written"));
}

#[tokio::test]
async fn an_unreachable_provider_is_reported_with_its_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut config = staged_agent::ProvidersConfig::builtin();
    config.apply_toml("t", &format!("[providers.gone]\nwire = \"openai-chat\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"")).unwrap();
    let config = config
        .resolve(&staged_agent::ProviderOverrides {
            provider: Some("gone".into()),
            ..Default::default()
        })
        .unwrap();
    let agent = agent(&config, &empty_session(), Vec::new());
    let (report, _) = run(&agent, "task").await;
    match report.outcome {
        RunOutcome::Model(err @ ModelError::Unreachable { .. }) => {
            assert!(
                err.to_string().starts_with(&format!(
                    "cannot reach gone at http://127.0.0.1:{port}/v1/chat/completions: "
                )),
                "{err}"
            );
        }
        other => panic!("expected unreachable, got {other:?}"),
    }
}
