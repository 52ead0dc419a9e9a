//! Plan mode through the loop: the title's slug and its fallbacks, the exact errors and
//! texts, refinement going back to the model, a discard keeping plan mode on, and approval
//! switching the same run to implementing.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use staged_agent::{
    AgentEvent, PLAN_DECISION_REMINDER, PlanDecision, PlanMode, ReadTool, RunOutcome,
};
use staged_agent_test_support::{Recorded, Reply, Turn};
use staged_ast_edit::AstEditTool;
use staged_core::{InMemoryStore, Session, Tool};
use staged_journal::ConfinedRoot;
use staged_protocol::WireFormat;

use super::harness::{ScriptedPerson, mock, provider, run};

fn tool_names(request: &Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The text of the function_call_output answering `call_id`.
fn output(request: &Recorded, call_id: &str) -> String {
    let items = request.body["input"].as_array().unwrap();
    let item = items
        .iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == call_id)
        .unwrap();
    item["output"].as_str().unwrap().to_owned()
}

fn plan_agent(
    root: &std::path::Path,
    mock: &staged_agent_test_support::MockModel,
    person: Arc<ScriptedPerson>,
) -> (staged_agent::Agent, PlanMode) {
    let session = Arc::new(Session::new(Arc::new(InMemoryStore::new())));
    let workspace = ConfinedRoot::new(root).unwrap();
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(ReadTool::new(workspace.clone())),
        Arc::new(AstEditTool::new(Arc::clone(&session), workspace.clone())),
    ];
    let plan = PlanMode::new(workspace, person.clone());
    let client =
        staged_agent::connect(&provider(WireFormat::OpenaiResponses, mock, ""), None).unwrap();
    let agent = staged_agent::Agent::new(client, session, tools)
        .with_supervisor(person)
        .with_plan_mode(plan.clone());
    (agent, plan)
}

#[tokio::test]
async fn plan_mode_refines_discards_and_approves_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.ts"), "legacyWrap(x, value);\n").unwrap();
    let plan_text = "# Words counter\n\n1. Rename legacyWrap.\n";
    let script = vec![
        Reply::Turn(Turn::call(
            "c1",
            "resolve",
            json!({"action": "apply", "reason": "ready", "extra": {"title": "ghost"}}),
        )),
        Reply::Turn(Turn::call(
            "c2",
            "write",
            json!({"path": "words-counter-plan.md", "content": plan_text}),
        )),
        Reply::Turn(Turn::call(
            "c3",
            "resolve",
            json!({"action": "apply", "reason": "ready", "extra": {"title": "words-counter"}}),
        )),
        Reply::Turn(Turn::call("c4", "resolve", json!({"action": "discard", "reason": "not yet"}))),
        Reply::Turn(Turn::call(
            "c5",
            "resolve",
            json!({"action": "apply", "reason": "ready now", "extra": {"title": {}}}),
        )),
        Reply::Turn(Turn::text("Implementing.")),
    ];
    let mock = mock(WireFormat::OpenaiResponses, script);
    let person = Arc::new(ScriptedPerson::default());
    person
        .plans
        .lock()
        .unwrap()
        .extend([PlanDecision::Refine("split step 1".into()), PlanDecision::Approve]);
    let (agent, plan) = plan_agent(dir.path(), &mock, person.clone());
    let (report, events) = run(&agent, "plan the rename").await;
    assert_eq!(report.outcome, RunOutcome::Done);
    let requests = mock.requests();
    assert_eq!(requests.len(), 6);
    assert_eq!(tool_names(&requests[0]), ["read", "write", "resolve"]);
    assert_eq!(
        output(&requests[1], "c1"),
        "Plan file not found at .staged/plans/ghost-plan.md. Write the finalized plan to .staged/plans/ghost-plan.md before requesting approval."
    );
    assert_eq!(output(&requests[2], "c2"), "Wrote .staged/plans/words-counter-plan.md (3 lines).");
    assert_eq!(
        output(&requests[3], "c3"),
        "Plan refinement requested. Update the plan file, then call `resolve { action: \"apply\" }` again when ready.\n\nThe person asked for: split step 1"
    );
    assert_eq!(output(&requests[4], "c4"), "Discarded: Plan ready for approval. Reason: not yet");
    assert_eq!(
        tool_names(&requests[4]),
        ["read", "write", "resolve"],
        "a discard keeps plan mode on"
    );
    assert_eq!(
        output(&requests[5], "c5"),
        "Plan approved at .staged/plans/words-counter-plan.md. Plan mode exited; proceed with the implementation."
    );
    assert_eq!(
        tool_names(&requests[5]),
        ["read", "ast_edit", "resolve"],
        "approval switches to implementing"
    );
    assert!(!plan.is_active());
    let shown = person.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 2);
    assert_eq!(
        shown[0],
        format!("plan .staged/plans/words-counter-plan.md titled words-counter: {plan_text}")
    );
    assert!(shown[1].contains("titled Words-counter"), "{shown:?}");
    let resolves: Vec<(bool, Value)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Resolve { is_error, details, .. } => {
                Some((*is_error, details.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(resolves.len(), 4);
    assert!(resolves[0].0);
    assert_eq!(resolves[3].1["sourceToolName"], "plan_approval");
    assert_eq!(
        resolves[3].1["sourceResultDetails"]["planFilePath"],
        ".staged/plans/words-counter-plan.md"
    );
    assert!(events.iter().any(|e| matches!(e, AgentEvent::PlanApproved { path, .. } if path == ".staged/plans/words-counter-plan.md")));
}

#[tokio::test]
async fn a_dismissed_review_refines_and_never_approves() {
    let dir = tempfile::tempdir().unwrap();
    let script = vec![
        Reply::Turn(Turn::call(
            "c1",
            "write",
            json!({"path": ".staged/plans/auth-plan.md", "content": "# Auth\n"}),
        )),
        Reply::Turn(Turn::call(
            "c2",
            "resolve",
            json!({"action": "apply", "reason": "ready", "extra": {"title": "auth-plan"}}),
        )),
        Reply::Turn(Turn::text("Waiting for feedback.")),
        Reply::Turn(Turn::text("Still waiting.")),
    ];
    let mock = mock(WireFormat::OpenaiResponses, script);
    let (agent, plan) = plan_agent(dir.path(), &mock, Arc::new(ScriptedPerson::default()));
    let (report, _) = run(&agent, "plan auth").await;
    assert_eq!(report.outcome, RunOutcome::Done);
    assert!(plan.is_active());
    let requests = mock.requests();
    assert!(output(&requests[2], "c2").starts_with("Plan refinement requested."));
    // A planning turn that ends in bare text gets the decision reminder once.
    let input = requests[3].body["input"].as_array().unwrap();
    assert_eq!(input.last().unwrap()["content"][0]["text"], PLAN_DECISION_REMINDER);
    assert_eq!(requests.len(), 4);
}

#[tokio::test]
async fn write_refuses_anything_but_a_plan_file() {
    let dir = tempfile::tempdir().unwrap();
    let script = vec![
        Reply::Turn(
            Turn::call("c1", "write", json!({"path": "src/a.ts", "content": "x"})).and_call(
                "c2",
                "write",
                json!({"path": "../x-plan.md", "content": "x"}),
            ),
        ),
        Reply::Turn(Turn::text("ok")),
        Reply::Turn(Turn::text("ok")),
    ];
    let mock = mock(WireFormat::OpenaiResponses, script);
    let (agent, _) = plan_agent(dir.path(), &mock, Arc::new(ScriptedPerson::default()));
    run(&agent, "plan").await;
    let requests = mock.requests();
    assert_eq!(
        output(&requests[1], "c1"),
        "Plan mode writes only plan files: give a name like `my-change-plan.md` (it goes to .staged/plans/), not `src/a.ts`."
    );
    assert!(output(&requests[1], "c2").starts_with("Plan mode writes only plan files"));
    assert!(!dir.path().join("src").exists());
}
