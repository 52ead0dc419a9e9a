//! Snapshots of every model-facing text of the agent: the prompts, the tool definitions the
//! model sees, the skipped-call result and the gate's abort. A change to what the model reads shows up as a snapshot diff.

use std::sync::Arc;

use staged_agent::{
    Directives, FindTool, PLAN_DECISION_REMINDER, PLAN_PROMPT, PlanMode, ReadTool, ResolveGate,
    SKIPPED_CALL_TEXT, SYSTEM_PROMPT, ToolCallRef, TurnOutcome, WritePlanTool,
};
use staged_ast_edit::Workspace;
use staged_core::{FnPendingAction, InMemoryStore, Session, Tool, ToolResult};

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
    let workspace = Workspace::new(dir.path()).unwrap();
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
