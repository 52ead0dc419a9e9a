//! Every tool's parameter schema, pinned in one snapshot (`tests/snapshots/tool_schemas.json`),
//! so that a change to what a model is shown is visible in review.
//!
//! `STAGED_UPDATE_SCHEMAS=1 cargo test -p staged-cli --test tool_schemas` rewrites the snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{collections::BTreeMap, path::PathBuf, sync::Arc};

use serde_json::Value;
use staged_agent::{
    ApplyDecision, FindTool, PlanDecision, PlanMode, PlanReview, ReadTool, Supervisor,
    WritePlanTool,
};
use staged_core::{PendingEntry, Tool};
use staged_workspace::WorkspaceSession;

struct NoPerson;

#[async_trait::async_trait]
impl Supervisor for NoPerson {
    async fn approve_apply(&self, _head: &PendingEntry, _reason: &str) -> ApplyDecision {
        ApplyDecision::Decline { reason: String::new() }
    }

    async fn review_plan(&self, _plan: PlanReview<'_>) -> PlanDecision {
        PlanDecision::Refine(String::new())
    }
}

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/tool_schemas.json")
}

/// `{name: schema}` for the agent runtime's tools (plan mode's `write` as `write (plan)`), the
/// workspace's staged tools and MCP's `pending`.
fn every_schema() -> BTreeMap<String, Value> {
    let dir = tempfile::tempdir().unwrap();
    let session = WorkspaceSession::open(dir.path()).unwrap();
    let root = session.workspace().clone();
    let plan = PlanMode::new(root.clone(), Arc::new(NoPerson));
    let tools: Vec<(String, Arc<dyn Tool>)> = vec![
        ("ast_edit".into(), Arc::new(session.ast_edit_tool())),
        ("ast_grep".into(), Arc::new(session.ast_grep_tool())),
        ("edit".into(), Arc::new(session.edit_tool())),
        ("write".into(), Arc::new(session.write_tool())),
        ("apply_patch".into(), Arc::new(session.apply_patch_tool())),
        ("resolve".into(), Arc::new(session.resolve_tool())),
        ("find".into(), Arc::new(FindTool::new(root.clone()))),
        ("read".into(), Arc::new(ReadTool::new(root))),
        ("write (plan)".into(), Arc::new(WritePlanTool::new(plan))),
    ];
    let mut schemas: BTreeMap<String, Value> =
        tools.into_iter().map(|(name, tool)| (name, tool.parameters())).collect();
    schemas.insert(staged_mcp::PENDING_TOOL_NAME.to_owned(), staged_mcp::pending_schema());
    schemas
}

#[test]
fn every_tool_schema_matches_its_snapshot() {
    let schemas = every_schema();
    let path = snapshot_path();
    if std::env::var_os("STAGED_UPDATE_SCHEMAS").is_some_and(|v| v == "1") {
        let text = serde_json::to_string_pretty(&schemas).unwrap();
        std::fs::write(&path, format!("{text}\n")).unwrap();
        return;
    }
    let pinned: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        pinned.keys().collect::<Vec<_>>(),
        schemas.keys().collect::<Vec<_>>(),
        "the tools changed: rerun with STAGED_UPDATE_SCHEMAS=1 and review the diff"
    );
    for (name, schema) in &schemas {
        pretty_assertions::assert_eq!(
            &pinned[name],
            schema,
            "{name}'s schema changed: rerun with STAGED_UPDATE_SCHEMAS=1 and review the diff"
        );
    }
}

#[test]
fn no_tool_schema_has_a_reference_or_a_meta_key() {
    for (name, schema) in every_schema() {
        let text = schema.to_string();
        for key in ["$ref", "$defs", "$schema", "definitions"] {
            assert!(!text.contains(key), "{name}'s schema holds {key}: {text}");
        }
        assert_eq!(schema["type"], "object", "{name}: {text}");
    }
}
