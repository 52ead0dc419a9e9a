//! `--approve human`: a `resolve apply` waits for the person; a decline keeps the preview
//! pending and tells the model why; an approval applies and records the person's reason.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use pretty_assertions::assert_eq;
use staged_agent::{AgentOptions, ApplyDecision, Approval, RunOutcome};
use staged_agent_test_support::{Reply, Turn};
use staged_protocol::WireFormat;

use super::harness::{ScriptedPerson, mock, provider, run, staged_session};

#[tokio::test]
async fn a_declined_apply_stays_pending_and_the_model_hears_why() {
    let script = vec![
        Reply::Turn(Turn::resolve("r1", "apply", "looks right")),
        Reply::Turn(Turn::resolve("r2", "apply", "try again")),
        Reply::Turn(Turn::text("Done.")),
    ];
    let mock = mock(WireFormat::OpenaiChat, script);
    let applies = Arc::new(AtomicUsize::new(0));
    let session = staged_session(&applies);
    let person = Arc::new(ScriptedPerson::default());
    person.applies.lock().unwrap().extend([
        ApplyDecision::Decline { reason: "wrong call sites".into() },
        ApplyDecision::Approve { reason: "fine now".into() },
    ]);
    let client = staged_agent::connect(&provider(WireFormat::OpenaiChat, &mock, ""), None).unwrap();
    let agent = staged_agent::Agent::new(client, Arc::clone(&session), Vec::new())
        .with_options(AgentOptions { approval: Approval::Human, ..AgentOptions::default() })
        .with_supervisor(person.clone());
    let (report, _) = run(&agent, "task").await;
    assert_eq!(report.outcome, RunOutcome::Done);
    assert_eq!(applies.load(Ordering::SeqCst), 1);
    let requests = mock.requests();
    let tool_text = |idx: usize| {
        requests[idx].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        tool_text(1),
        "The person declined to apply `AST Edit: 1 replacement in 1 file`: wrong call sites. Nothing was applied; the preview is still pending. Discard it with `resolve` (action \"discard\") or change the approach."
    );
    assert_eq!(
        tool_text(2),
        "Applied 1 replacement in 1 file.\nThe person approved the apply: fine now"
    );
    assert_eq!(
        *person.shown.lock().unwrap(),
        [
            "apply AST Edit: 1 replacement in 1 file because looks right",
            "apply AST Edit: 1 replacement in 1 file because try again"
        ]
    );
    assert!(session.store().is_empty().unwrap());
}

#[tokio::test]
async fn a_persons_notice_reaches_the_model_once_at_the_next_turn() {
    let script = vec![
        Reply::Turn(Turn::resolve("r1", "apply", "looks right")),
        Reply::Turn(Turn::text("Done.")),
    ];
    let mock = mock(WireFormat::OpenaiChat, script);
    let applies = Arc::new(AtomicUsize::new(0));
    let session = staged_session(&applies);
    let person = Arc::new(ScriptedPerson::default());
    let notice = "A person reverted your change to src/a.ts (line 3): keep the old name.";
    person.notices.lock().unwrap().extend([Vec::new(), vec![notice.to_owned()]]);
    let client = staged_agent::connect(&provider(WireFormat::OpenaiChat, &mock, ""), None).unwrap();
    let agent = staged_agent::Agent::new(client, Arc::clone(&session), Vec::new())
        .with_supervisor(person.clone());
    let (report, _) = run(&agent, "task").await;
    assert_eq!(report.outcome, RunOutcome::Done);
    let requests = mock.requests();
    let users = |idx: usize| -> Vec<String> {
        requests[idx].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str().map(str::to_owned))
            .collect()
    };
    assert!(!users(0).iter().any(|u| u == notice), "not before it was left");
    assert_eq!(users(1).iter().filter(|u| *u == notice).count(), 1, "{:?}", users(1));
}
