//! Snapshots of every model-facing text of the agent: the prompts, the tool definitions the
//! model sees, the skipped-call result and the gate's abort. A change to what the model reads shows up as a snapshot diff.

use std::sync::Arc;

use staged_agent::{
    Directives, FindTool, PLAN_DECISION_REMINDER, PLAN_PROMPT, PlanMode, ReadTool, ResolveGate,
    SKIPPED_CALL_TEXT, SYSTEM_PROMPT, ToolCallRef, TurnOutcome, WritePlanTool,
};
use staged_core::{FnPendingAction, InMemoryStore, Session, Tool};
use staged_journal::ConfinedRoot;
use staged_protocol::ToolResult;

use super::harness::ScriptedPerson;

#[test]
fn prompts() {
    insta::assert_snapshot!("system_prompt", SYSTEM_PROMPT);
    insta::assert_snapshot!("plan_prompt", PLAN_PROMPT);
    insta::assert_snapshot!("plan_decision_reminder", PLAN_DECISION_REMINDER);
}

#[test]
fn tool_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    let plan = PlanMode::new(workspace.clone(), Arc::new(ScriptedPerson::default()));
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(ReadTool::new(workspace.clone())),
        Arc::new(FindTool::new(workspace)),
        Arc::new(WritePlanTool::new(plan)),
    ];
    let defs: Vec<serde_json::Value> = tools
        .iter()
        .map(|t| serde_json::json!({"name": t.name(), "description": t.description(), "parameters": t.parameters()}))
        .collect();
    insta::assert_json_snapshot!("tool_definitions", defs);
}

#[test]
fn skipped_call_text() {
    insta::assert_snapshot!("skipped_call", SKIPPED_CALL_TEXT);
}

#[test]
fn gate_abort_text() {
    let session = Session::new(Arc::new(InMemoryStore::new()));
    let action = FnPendingAction::new("x", |_| async { Ok(ToolResult::text("applied")) });
    session.push_pending_action(Arc::new(action)).unwrap();
    let directives = Directives::attach(&session);
    let mut gate = ResolveGate::new(None);
    let calls = [ToolCallRef::new("p", "read")];
    let err = loop {
        let directive =
            directives.next_tool_choice_directive(&session, &["resolve", "read"]).unwrap();
        let plan = gate.begin_turn(directive);
        match gate.end_turn(&plan, &calls) {
            Ok(TurnOutcome::Escalate { .. }) => continue,
            Ok(TurnOutcome::Proceed) => panic!("a detour must not proceed"),
            Err(err) => break err,
        }
    };
    insta::assert_snapshot!("gate_abort", err.to_string());
}

#[tokio::test]
async fn read_and_find_refusals() {
    use staged_core::CancelToken;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".staged/plans")).unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join(".staged/mcp-1.token"), "secret").unwrap();
    let status = std::process::Command::new("mkfifo").arg(dir.path().join("pipe")).status();
    assert!(status.unwrap().success());
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    let read = ReadTool::new(workspace.clone());
    let find = FindTool::new(workspace);
    let cancel = CancelToken::new();
    let mut texts = Vec::new();
    for args in [
        serde_json::json!({"path": ""}),
        serde_json::json!({"path": "src"}),
        serde_json::json!({"path": "pipe"}),
        serde_json::json!({"path": ".staged/mcp-1.token"}),
    ] {
        let err = read.execute(args.clone(), &cancel).await.unwrap_err();
        texts.push(format!("read {args}: {}", err.message()));
    }
    for args in [
        serde_json::json!({"pattern": "*", "path": ".staged"}),
        serde_json::json!({"pattern": "*".repeat(5000)}),
    ] {
        let err = find.execute(args.clone(), &cancel).await.unwrap_err();
        let shown: String = args.to_string().chars().take(60).collect();
        texts.push(format!("find {shown}: {}", err.message()));
    }
    insta::assert_snapshot!("read_and_find_refusals", texts.join("\n"));
}
