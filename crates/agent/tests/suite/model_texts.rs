//! Snapshots of every model-facing text of the agent: the prompts and the tool definitions
//! the model sees. A change to what the model reads shows up as a snapshot diff.

use std::sync::Arc;

use staged_agent::{FindTool, PLAN_DECISION_REMINDER, PLAN_PROMPT, PlanMode, ReadTool, SYSTEM_PROMPT, WritePlanTool};
use staged_ast_edit::Workspace;
use staged_core::Tool;

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
    let plan = PlanMode::new(dir.path(), Arc::new(ScriptedPerson::default()));
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
