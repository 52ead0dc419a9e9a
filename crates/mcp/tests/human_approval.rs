//! `--approve human`: `resolve apply` asks the person through MCP elicitation, both as an
//! input-required result (protocol 2026-07-28) and as a server-to-client request (older
//! protocols). Decline or cancel keeps the preview pending; a client without elicitation is
//! told to resolve from a terminal; discard needs no approval; and a preview staged while the
//! person decides is never applied in place of the one they approved; a preview only a person
//! may apply is refused to the model and applied once the person approves it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{
    Answer, ClientSetup, Connection, Fixture, RENAMED, SOURCE, is_error, rename_args, text,
};
use rmcp::model::{CallToolResponse, ProtocolVersion};
use serde_json::{Value, json};
use staged_core::NO_PENDING_APPLY_TEXT;
use staged_mcp::Approval;

const PROTOCOLS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25];

async fn staged(fx: &Fixture, protocol: ProtocolVersion, answer: Option<Answer>) -> Connection {
    let conn = fx
        .connect_with(Approval::Human, ClientSetup { protocol, answer, stage_while_asked: None })
        .await;
    let res = conn.call("ast_edit", rename_args(&["a.ts"])).await;
    assert!(!is_error(&res), "{}", text(&res));
    conn
}

fn pending_count(fx: &Fixture) -> usize {
    fx.open_session().store().len().unwrap()
}

#[tokio::test]
async fn accepted_apply_shows_label_and_diff_then_writes() {
    for protocol in PROTOCOLS {
        let fx = Fixture::new(&[("a.ts", SOURCE)]);
        let conn = staged(&fx, protocol.clone(), Some(Answer::Accept)).await;
        let label = fx.open_session().store().peek().unwrap().unwrap().label().to_owned();
        let res = conn.call("resolve", json!({"action": "apply", "reason": "rename it"})).await;
        assert!(!is_error(&res), "{protocol}: {}", text(&res));
        assert_eq!(text(&res), "Applied 2 replacements in 1 file.");
        assert_eq!(fx.read("a.ts"), RENAMED);
        let asked = conn.asked();
        assert_eq!(asked.len(), 1, "{protocol}: asked once");
        let question = &asked[0];
        assert!(question.contains(&label), "{question}");
        assert!(question.contains("Reason: rename it"), "{question}");
        assert!(question.contains("a.ts: 2 replacements"), "{question}");
        assert!(question.contains("+newApi(1);"), "{question}");
        assert_eq!(pending_count(&fx), 0);
        conn.close().await;
    }
}

#[tokio::test]
async fn declined_or_cancelled_apply_keeps_the_preview_pending() {
    for protocol in PROTOCOLS {
        for answer in [Answer::Decline, Answer::AcceptNo, Answer::Cancel] {
            let fx = Fixture::new(&[("a.ts", SOURCE)]);
            let conn = staged(&fx, protocol.clone(), Some(answer)).await;
            let res = conn.call("resolve", json!({"action": "apply", "reason": "go"})).await;
            assert!(is_error(&res), "{protocol} {answer:?}: {}", text(&res));
            assert!(text(&res).contains("Nothing was applied"), "{}", text(&res));
            assert!(text(&res).contains("still pending"), "{}", text(&res));
            if answer != Answer::Cancel {
                assert!(text(&res).contains("declined"), "{}", text(&res));
            }
            assert_eq!(common::details(&res)["applied"], false);
            assert!(!common::ends_with_reminder(&res), "the same preview stays on top");
            assert_eq!(fx.read("a.ts"), SOURCE);
            assert_eq!(pending_count(&fx), 1);
            conn.close().await;
        }
    }
}

/// Claude Code sends a declined form without its content, so the form has a reason field
/// that travels in an accepted answer whose decision is no: the model reads the person's words.
#[tokio::test]
async fn a_decline_tells_the_model_the_persons_reason() {
    for protocol in PROTOCOLS {
        let fx = Fixture::new(&[("a.ts", SOURCE)]);
        let answer = Answer::AcceptNoBecause("keep the old name until the release");
        let conn = staged(&fx, protocol.clone(), Some(answer)).await;
        let label = fx.open_session().store().peek().unwrap().unwrap().label().to_owned();
        let res = conn.call("resolve", json!({"action": "apply", "reason": "go"})).await;
        assert!(is_error(&res), "{protocol}: {}", text(&res));
        assert_eq!(
            text(&res),
            format!(
                "The person declined to apply `{label}`: \"keep the old name until the release\". Nothing was applied; the preview is still pending. Discard it with `resolve` (action \"discard\") or ask the person what to change."
            )
        );
        assert_eq!(fx.read("a.ts"), SOURCE);
        assert_eq!(pending_count(&fx), 1);
        conn.close().await;
    }
}

#[tokio::test]
async fn client_without_elicitation_is_told_to_resolve_from_a_terminal() {
    for protocol in PROTOCOLS {
        let fx = Fixture::new(&[("a.ts", SOURCE)]);
        let conn = staged(&fx, protocol.clone(), None).await;
        let res = conn.call("resolve", json!({"action": "apply", "reason": "go"})).await;
        assert!(is_error(&res), "{protocol}: {}", text(&res));
        let msg = text(&res);
        assert!(msg.contains("does not support elicitation"), "{msg}");
        assert!(msg.contains("staged resolve apply --reason"), "{msg}");
        assert!(msg.contains("staged review"), "{msg}");
        assert!(msg.contains("the review page `staged ui`"), "{msg}");
        assert_eq!(fx.read("a.ts"), SOURCE);
        assert_eq!(pending_count(&fx), 1);
        conn.close().await;
    }
}

#[tokio::test]
async fn discard_and_empty_apply_need_no_approval() {
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = staged(&fx, ProtocolVersion::V_2026_07_28, None).await;
    let res = conn.call("resolve", json!({"action": "discard", "reason": "no"})).await;
    assert!(!is_error(&res), "{}", text(&res));
    assert_eq!(pending_count(&fx), 0);
    let res = conn.call("resolve", json!({"action": "apply", "reason": "go"})).await;
    assert!(is_error(&res));
    assert_eq!(text(&res), NO_PENDING_APPLY_TEXT);
    assert!(conn.asked().is_empty());
    assert_eq!(fx.read("a.ts"), SOURCE);
    conn.close().await;
}

#[tokio::test]
async fn latest_protocol_asks_with_an_input_required_result() {
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = staged(&fx, ProtocolVersion::V_2026_07_28, Some(Answer::Accept)).await;
    let head = fx.open_session().store().peek().unwrap().unwrap();
    let Value::Object(args) = json!({"action": "apply", "reason": "go"}) else { unreachable!() };
    let response = conn
        .client
        .call_tool_once(rmcp::model::CallToolRequestParams::new("resolve").with_arguments(args))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(input) = response else {
        panic!("expected an input-required result, got {response:?}")
    };
    assert_eq!(input.request_state.as_deref(), Some(head.id.as_str()));
    let requests = input.input_requests.unwrap();
    assert_eq!(requests.len(), 1);
    let request = serde_json::to_value(requests.values().next().unwrap()).unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert!(request["params"]["message"].as_str().unwrap().contains(head.label()));
    assert_eq!(fx.read("a.ts"), SOURCE, "nothing is applied before the answer");
    assert_eq!(pending_count(&fx), 1);
    conn.close().await;
}

// See: issue 10 §7 (`--approve human` approved one preview and applied another).
#[tokio::test]
async fn a_preview_staged_while_the_person_decides_is_not_applied_in_its_place() {
    let fx = Fixture::new(&[("a.ts", SOURCE), ("b.ts", SOURCE)]);
    let setup = ClientSetup {
        protocol: ProtocolVersion::V_2025_11_25,
        answer: Some(Answer::Accept),
        stage_while_asked: Some((fx.root().to_path_buf(), rename_args(&["b.ts"]))),
    };
    let conn = fx.connect_with(Approval::Human, setup).await;
    let staged = conn.call("ast_edit", rename_args(&["a.ts"])).await;
    let seen = common::details(&staged)["pendingId"].as_str().unwrap().to_owned();

    let res = conn.call("resolve", json!({"action": "apply", "reason": "approved a.ts"})).await;
    assert!(is_error(&res), "{}", text(&res));
    let msg = text(&res);
    assert!(msg.starts_with("The newest pending preview is now"), "{msg}");
    assert!(msg.contains(&format!("not {seen}")), "{msg}");
    assert!(msg.contains("Nothing was applied or discarded."), "{msg}");
    assert_eq!(conn.asked().len(), 1);
    assert!(conn.asked()[0].contains("a.ts: 2 replacements"), "{:?}", conn.asked());
    assert_eq!(fx.read("a.ts"), SOURCE);
    assert_eq!(fx.read("b.ts"), SOURCE);
    assert_eq!(pending_count(&fx), 2, "both previews are still pending");
    assert!(common::ends_with_reminder(&res), "a new preview is on top");
    conn.close().await;
}

#[tokio::test]
async fn an_answer_to_a_question_about_another_head_applies_nothing() {
    let fx = Fixture::new(&[("a.ts", SOURCE), ("b.ts", SOURCE)]);
    let conn = staged(&fx, ProtocolVersion::V_2026_07_28, Some(Answer::Accept)).await;
    let Value::Object(args) = json!({"action": "apply", "reason": "go"}) else { unreachable!() };
    let request = rmcp::model::CallToolRequestParams::new("resolve").with_arguments(args);
    let response = conn.client.call_tool_once(request.clone()).await.unwrap();
    let CallToolResponse::InputRequired(input) = response else {
        panic!("expected an input-required result, got {response:?}")
    };
    // Another process stages a preview before the person's answer comes back.
    let other = fx.open_session();
    let res = staged_core::Tool::execute(
        &other.ast_edit_tool(),
        rename_args(&["b.ts"]),
        &staged_core::CancelToken::new(),
    )
    .await
    .unwrap();
    assert!(!res.is_error);
    let key = input.input_requests.unwrap().keys().next().unwrap().clone();
    let answer = json!({"action": "accept", "content": {"approve": true}});
    let retry = request
        .with_input_responses([(key, answer)].into_iter().collect())
        .with_request_state(input.request_state.unwrap());
    let response = conn.client.call_tool_once(retry).await.unwrap();
    let CallToolResponse::Complete(res) = response else {
        panic!("expected a result, got {response:?}")
    };
    assert!(is_error(&res), "{}", text(&res));
    assert!(
        text(&res).contains("The pending stack changed while waiting for approval"),
        "{}",
        text(&res)
    );
    assert_eq!(fx.read("a.ts"), SOURCE);
    assert_eq!(fx.read("b.ts"), SOURCE);
    assert_eq!(pending_count(&fx), 2);
    conn.close().await;
}

/// A preview a client's hook staged while the client would have asked the person (Claude
/// Code's default mode): the model's apply is refused, and applies once the person approves it.
#[tokio::test]
async fn a_preview_only_a_person_may_apply_applies_only_once_they_approve() {
    use staged_core::{CancelToken, Tool};
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let hook = fx.open_session();
    let why =
        "Claude Code is in its default permission mode, in which it asks the person before an edit";
    hook.session().set_needs_person(Some(why.to_owned()));
    let staged = hook
        .write_tool()
        .execute(json!({"path": "a.ts", "content": RENAMED}), &CancelToken::new())
        .await
        .unwrap();
    assert!(!staged.is_error);
    let id = fx.open_session().store().peek().unwrap().unwrap().id.to_string();
    // No person to ask: refused, and the preview stays pending.
    let conn = fx.connect(Approval::None).await;
    let res =
        conn.call("resolve", json!({"action": "apply", "reason": "the model applies it"})).await;
    assert!(is_error(&res), "{}", text(&res));
    assert_eq!(
        text(&res),
        staged_core::needs_person_text(&id, "Write: a.ts (rewritten, 2 lines)", why)
    );
    assert_eq!(fx.read("a.ts"), SOURCE);
    conn.close().await;
    // The person approves it through the client.
    let conn = fx
        .connect_with(
            Approval::Human,
            ClientSetup {
                protocol: ProtocolVersion::V_2025_11_25,
                answer: Some(Answer::Accept),
                stage_while_asked: None,
            },
        )
        .await;
    let res =
        conn.call("resolve", json!({"action": "apply", "reason": "the person read it"})).await;
    assert!(!is_error(&res), "{}", text(&res));
    assert_eq!(fx.read("a.ts"), RENAMED);
    assert_eq!(pending_count(&fx), 0);
    conn.close().await;
}

/// A stand-in for a running `staged ui` on a free port: it answers every request as the page
/// answers a browser without its session (or, `as_page` false, as some other program).
fn fake_page(as_page: bool) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = if as_page { staged_mcp::PAGE_NO_SESSION_TEXT } else { "hello" };
            let status = if as_page { "401 Unauthorized" } else { "200 OK" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// The question links to the preview on the review page when `staged ui` runs for the
/// workspace, and otherwise says how to start one: never a link to a page that is not there.
#[tokio::test]
async fn the_question_links_to_the_preview_on_a_running_review_page_only() {
    let protocol = ProtocolVersion::V_2025_11_25;
    // No page recorded.
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = staged(&fx, protocol.clone(), Some(Answer::Decline)).await;
    conn.call("resolve", json!({"action": "apply", "reason": "go"})).await;
    let question = conn.asked().remove(0);
    assert!(
        question.ends_with(
            "To see it on a review page, run `staged ui` in the workspace (no page is running now)."
        ),
        "{question}"
    );
    assert!(!question.contains("http://"), "{question}");
    conn.close().await;

    // A page recorded and answering as `staged ui` does.
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = staged(&fx, protocol.clone(), Some(Answer::Decline)).await;
    let id = fx.open_session().store().peek().unwrap().unwrap().id.as_str().to_owned();
    let port = fake_page(true);
    let record = staged_mcp::PageRecord::write(&fx.root().join(".staged"), port).unwrap();
    conn.call("resolve", json!({"action": "apply", "reason": "go"})).await;
    let question = conn.asked().remove(0);
    let link = staged_mcp::preview_link(port, &id);
    assert_eq!(link, format!("http://127.0.0.1:{port}/?preview={id}"));
    assert!(
        question.ends_with(&format!(
            "See it on the review page: {link} (in the browser that opened the address `staged ui` printed)."
        )),
        "{question}"
    );
    drop(record);
    assert!(!fx.root().join(".staged").join(staged_mcp::PAGE_FILE).exists());
    conn.close().await;

    // A record left by a page that is gone: its port closed, or taken by another program.
    for port in [fake_page(false), {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        closed.local_addr().unwrap().port()
    }] {
        let fx = Fixture::new(&[("a.ts", SOURCE)]);
        let conn = staged(&fx, protocol.clone(), Some(Answer::Decline)).await;
        let _record = staged_mcp::PageRecord::write(&fx.root().join(".staged"), port).unwrap();
        conn.call("resolve", json!({"action": "apply", "reason": "go"})).await;
        let question = conn.asked().remove(0);
        assert!(!question.contains("http://"), "{question}");
        assert!(question.contains("run `staged ui`"), "{question}");
        conn.close().await;
    }
}
