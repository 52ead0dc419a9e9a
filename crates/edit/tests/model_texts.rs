//! The model-facing texts of `edit`, `write` and `apply_patch`: their names, descriptions and
//! argument schemas, and the preview's first line. A change here changes what every model
//! sees, so it shows up as a snapshot diff.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use staged_core::{InMemoryStore, Session, Tool};
use staged_edit::{ApplyPatchTool, EditTool, PREVIEW_HEADER, WriteTool};
use staged_journal::ConfinedRoot;

#[test]
fn tool_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    let session = Arc::new(Session::new(Arc::new(InMemoryStore::new())));
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(EditTool::new(session.clone(), workspace.clone())),
        Arc::new(WriteTool::new(session.clone(), workspace.clone())),
        Arc::new(ApplyPatchTool::new(session, workspace)),
    ];
    let defs: Vec<serde_json::Value> = tools
        .iter()
        .map(|t| serde_json::json!({"name": t.name(), "description": t.description(), "parameters": t.parameters()}))
        .collect();
    insta::assert_json_snapshot!("tool_definitions", defs);
}

#[test]
fn preview_header() {
    insta::assert_snapshot!("preview_header", PREVIEW_HEADER);
}
