//! What the loop sends on each wire: the `tool_choice` shapes, thinking removed only on
//! forced turns, every call paired with its result, thinking and reasoning echoed unchanged.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use staged_agent::SKIPPED_CALL_TEXT;
use staged_agent::{AgentEvent, RunOutcome, SYSTEM_PROMPT};
use staged_agent_test_support::{MockWire, Reply, Turn};
use staged_core::{RESOLVE_REMINDER, Tool};
use staged_protocol::WireFormat;

use super::harness::{Peek, agent, mock, provider, run, staged_session};

/// The text of every reminder message in a request body, in order.
fn reminders(wire: WireFormat, body: &Value) -> Vec<String> {
    let items = match wire {
        WireFormat::OpenaiResponses => &body["input"],
        WireFormat::OpenaiChat | WireFormat::AnthropicMessages => &body["messages"],
    };
    let mut res = Vec::new();
    for item in items.as_array().unwrap() {
        let texts: Vec<&str> = match &item["content"] {
            Value::String(text) => vec![text.as_str()],
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => Vec::new(),
        };
        res.extend(
            texts.into_iter().filter(|t| t.contains("This is a preview")).map(str::to_owned),
        );
    }
    res
}

#[tokio::test]
async fn escalation_sends_each_wire_formats_exact_tool_choice_and_nothing_before() {
    for wire in WireFormat::ALL {
        let script = vec![
            Reply::Turn(Turn::text("I will look first.")),
            Reply::Turn(Turn::resolve("r1", "apply", "looks right")),
            Reply::Turn(Turn::text("Done.")),
        ];
        let mock = mock(wire, script);
        let applies = Arc::new(AtomicUsize::new(0));
        let session = staged_session(&applies);
        let agent = agent(&provider(wire, &mock, ""), &session, vec![Arc::new(Peek::default())]);
        let (report, events) = run(&agent, "task").await;
        assert_eq!(report.outcome, RunOutcome::Done, "{wire:?}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 3, "{wire:?}");
        assert_eq!(requests[0].path, wire.mock_path());
        assert_eq!(requests[0].tool_choice(), None, "{wire:?}");
        assert_eq!(requests[1].tool_choice(), Some(&wire.forced_resolve()), "{wire:?}");
        assert_eq!(requests[2].tool_choice(), None, "{wire:?}");
        assert_eq!(applies.load(Ordering::SeqCst), 1);
        // The reminder was injected once, as a developer message on OpenAI and a user text
        // block on Anthropic, and stays in the history.
        for request in &requests {
            assert_eq!(reminders(wire, &request.body), [RESOLVE_REMINDER], "{wire:?}");
        }
        let reminder_item = match wire {
            WireFormat::OpenaiResponses => requests[0].body["input"][1].clone(),
            WireFormat::OpenaiChat => requests[0].body["messages"][2].clone(),
            WireFormat::AnthropicMessages => requests[0].body["messages"][0]["content"][1].clone(),
        };
        match wire {
            WireFormat::OpenaiResponses => assert_eq!(reminder_item["role"], "developer"),
            WireFormat::OpenaiChat => assert_eq!(reminder_item["role"], "developer"),
            WireFormat::AnthropicMessages => {
                assert_eq!(reminder_item, json!({"type": "text", "text": RESOLVE_REMINDER}))
            }
        }
        // The system prompt and the tools, `resolve` last.
        let tools = requests[0].body["tools"].as_array().unwrap();
        let names: Vec<&str> = tools
            .iter()
            .map(|t| t["name"].as_str().or(t["function"]["name"].as_str()).unwrap())
            .collect();
        assert_eq!(names, ["peek", "resolve"], "{wire:?}");
        let system = match wire {
            WireFormat::OpenaiResponses => requests[0].body["instructions"].clone(),
            WireFormat::OpenaiChat => requests[0].body["messages"][0]["content"].clone(),
            WireFormat::AnthropicMessages => requests[0].body["system"].clone(),
        };
        assert_eq!(system, json!(SYSTEM_PROMPT));
        let forced =
            events.iter().filter(|e| matches!(e, AgentEvent::ToolChoiceForced { .. })).count();
        assert_eq!(forced, 1);
    }
}

#[tokio::test]
async fn a_detour_batch_is_skipped_with_every_call_paired_to_the_exact_result() {
    for wire in WireFormat::ALL {
        let script = vec![
            Reply::Turn(Turn::call("p1", "peek", json!({})).and_call("p2", "peek", json!({}))),
            Reply::Turn(Turn::resolve("r1", "apply", "ok")),
            Reply::Turn(Turn::text("Done.")),
        ];
        let mock = mock(wire, script);
        let applies = Arc::new(AtomicUsize::new(0));
        let session = staged_session(&applies);
        let peek = Arc::new(Peek::default());
        let agent =
            agent(&provider(wire, &mock, ""), &session, vec![peek.clone() as Arc<dyn Tool>]);
        let (report, _) = run(&agent, "task").await;
        assert_eq!(report.outcome, RunOutcome::Done);
        assert_eq!(peek.0.load(Ordering::SeqCst), 0, "a skipped call never runs");
        let requests = mock.requests();
        let second = &requests[1].body;
        let results: Vec<(String, String)> = match wire {
            WireFormat::OpenaiResponses => second["input"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["type"] == "function_call_output")
                .map(|i| {
                    (i["call_id"].as_str().unwrap().into(), i["output"].as_str().unwrap().into())
                })
                .collect(),
            WireFormat::OpenaiChat => second["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| {
                    (
                        m["tool_call_id"].as_str().unwrap().into(),
                        m["content"].as_str().unwrap().into(),
                    )
                })
                .collect(),
            WireFormat::AnthropicMessages => second["messages"][2]["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    assert_eq!(b["is_error"], true);
                    (
                        b["tool_use_id"].as_str().unwrap().into(),
                        b["content"].as_str().unwrap().into(),
                    )
                })
                .collect(),
        };
        let expected = vec![
            ("p1".to_owned(), SKIPPED_CALL_TEXT.to_owned()),
            ("p2".to_owned(), SKIPPED_CALL_TEXT.to_owned()),
        ];
        assert_eq!(results, expected, "{wire:?}");
    }
}

#[tokio::test]
async fn anthropic_drops_thinking_only_on_forced_turns() {
    let extra = r#"body = { thinking = { type = "enabled", budget_tokens = 2048 }, context_management = { edits = [] }, output_config = { effort = "high", format = "text" } }"#;
    let script = vec![
        Reply::Turn(Turn::text("Thinking it over.")),
        Reply::Turn(Turn::resolve("r1", "apply", "ok")),
        Reply::Turn(Turn::text("Done.")),
    ];
    let mock = mock(WireFormat::AnthropicMessages, script);
    let session = staged_session(&Arc::new(AtomicUsize::new(0)));
    let agent = agent(&provider(WireFormat::AnthropicMessages, &mock, extra), &session, Vec::new());
    let (report, _) = run(&agent, "task").await;
    assert_eq!(report.outcome, RunOutcome::Done);
    let requests = mock.requests();
    for idx in [0, 2] {
        let body = &requests[idx].body;
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048}),
            "request {idx}"
        );
        assert_eq!(body["context_management"], json!({"edits": []}), "request {idx}");
        assert_eq!(
            body["output_config"],
            json!({"effort": "high", "format": "text"}),
            "request {idx}"
        );
    }
    let forced = &requests[1].body;
    assert_eq!(forced["tool_choice"], json!({"type": "tool", "name": "resolve"}));
    assert!(forced.get("thinking").is_none());
    assert!(forced.get("context_management").is_none());
    assert_eq!(forced["output_config"], json!({"format": "text"}));
}

#[tokio::test]
async fn a_model_without_forced_choice_support_gets_auto() {
    for (wire, auto) in [
        (WireFormat::AnthropicMessages, json!({"type": "auto"})),
        (WireFormat::OpenaiChat, json!("auto")),
        (WireFormat::OpenaiResponses, json!("auto")),
    ] {
        let script = vec![
            Reply::Turn(Turn::text("Hmm.")),
            Reply::Turn(Turn::resolve("r1", "apply", "ok")),
            Reply::Turn(Turn::text("Done.")),
        ];
        let mock = mock(wire, script);
        let session = staged_session(&Arc::new(AtomicUsize::new(0)));
        let agent = agent(
            &provider(
                wire,
                &mock,
                "forced_tool_choice = false\nbody = { thinking = { type = \"enabled\", budget_tokens = 1024 } }",
            ),
            &session,
            Vec::new(),
        );
        let (report, _) = run(&agent, "task").await;
        assert_eq!(report.outcome, RunOutcome::Done);
        let requests = mock.requests();
        assert_eq!(requests[1].tool_choice(), Some(&auto), "{wire:?}");
        if wire == WireFormat::AnthropicMessages {
            assert!(requests[1].body.get("thinking").is_some(), "auto keeps thinking");
        }
    }
}

#[tokio::test]
async fn anthropic_thinking_blocks_are_echoed_back_byte_for_byte() {
    let thinking = "The pattern \"legacyWrap($A)\" matched one call; \u{e9}t\u{e9} \u{1f600}.";
    let signature = "EqQBCkYIBRgCKkB+sig/with+padding==";
    let script = vec![
        Reply::Turn(Turn::text("Let me check.").with_thinking(thinking, signature).and_call(
            "t1",
            "peek",
            json!({}),
        )),
        Reply::Turn(Turn::text("Done.").with_thinking("second", "sig2")),
    ];
    let mock = mock(WireFormat::AnthropicMessages, script);
    let session = Arc::new(staged_core::Session::new(Arc::new(staged_core::InMemoryStore::new())));
    let agent = agent(
        &provider(WireFormat::AnthropicMessages, &mock, ""),
        &session,
        vec![Arc::new(Peek::default())],
    );
    let (report, _) = run(&agent, "task").await;
    assert_eq!(report.outcome, RunOutcome::Done);
    let requests = mock.requests();
    let assistant = &requests[1].body["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"],
        json!([
            {"type": "thinking", "thinking": thinking, "signature": signature},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "t1", "name": "peek", "input": {}}
        ])
    );
    assert_eq!(requests[1].body["messages"][2]["content"][0]["type"], "tool_result");
}

#[tokio::test]
async fn responses_reasoning_items_are_echoed_as_they_arrived() {
    let script = vec![
        Reply::Turn(
            Turn::call("t1", "peek", json!({})).with_thinking("plan the search", "gAAAA-encrypted"),
        ),
        Reply::Turn(Turn::text("Done.")),
    ];
    let mock = mock(WireFormat::OpenaiResponses, script);
    let session = Arc::new(staged_core::Session::new(Arc::new(staged_core::InMemoryStore::new())));
    let agent = agent(
        &provider(
            WireFormat::OpenaiResponses,
            &mock,
            "body = { reasoning = { effort = \"low\" } }",
        ),
        &session,
        vec![Arc::new(Peek::default())],
    );
    let (report, _) = run(&agent, "task").await;
    assert_eq!(report.outcome, RunOutcome::Done);
    let requests = mock.requests();
    assert_eq!(requests[0].body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(requests[0].body["store"], json!(false));
    assert_eq!(
        requests[1].body["input"][1],
        json!({"type": "reasoning", "id": "rs_0", "summary": [{"type": "summary_text", "text": "plan the search"}], "encrypted_content": "gAAAA-encrypted"})
    );
    assert_eq!(requests[1].body["input"][2]["type"], "function_call");
    assert_eq!(
        requests[1].body["input"][3],
        json!({"type": "function_call_output", "call_id": "t1", "output": "peeked"})
    );
}

#[tokio::test]
async fn message_deltas_stream_in_order_and_add_up_to_the_text() {
    for wire in WireFormat::ALL {
        let mock = mock(wire, vec![Reply::Turn(Turn::text("Nothing to change here."))]);
        let session =
            Arc::new(staged_core::Session::new(Arc::new(staged_core::InMemoryStore::new())));
        let agent = agent(&provider(wire, &mock, ""), &session, Vec::new());
        let (report, events) = run(&agent, "task").await;
        assert_eq!(report.outcome, RunOutcome::Done);
        let streamed: String = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::MessageDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(streamed, "Nothing to change here.", "{wire:?}");
        let deltas = events.iter().filter(|e| matches!(e, AgentEvent::MessageDelta { .. })).count();
        assert!(deltas >= 2, "{wire:?} streamed {deltas} deltas");
        assert!(
            !report.events.iter().any(|e| matches!(e, AgentEvent::MessageDelta { .. })),
            "the log keeps no deltas"
        );
    }
}
