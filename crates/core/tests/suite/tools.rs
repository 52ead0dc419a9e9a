//! Tool-list assembly (`docs/contract/resolve.md#tool-list`) and the custom-tool API
//! (`docs/contract/plugins.md#customtoolapi`).

use std::sync::Arc;

use staged_core::{
    CancelToken, CustomToolApi, FnPendingAction, ResolveOptions, ResolveTool, Tool, ToolError,
    assemble_tools,
};
use staged_protocol::{ResolveParams, ToolResult};

use super::harness::{block_on, session};

struct Named(&'static str);

#[async_trait::async_trait]
impl Tool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn label(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "test tool"
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }
    async fn execute(
        &self,
        _: serde_json::Value,
        _: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text(self.0))
    }
}

fn names(requested: Option<&[&str]>) -> Vec<String> {
    let available: Vec<Arc<dyn Tool>> = ["read", "write", "report_finding", "ast_edit"]
        .into_iter()
        .map(|n| Arc::new(Named(n)) as Arc<dyn Tool>)
        .collect();
    let resolve: Arc<dyn Tool> = Arc::new(ResolveTool::new(session()));
    assemble_tools(&available, requested, resolve).iter().map(|t| t.name().to_owned()).collect()
}

#[test]
fn resolve_is_always_appended_last_and_cannot_be_requested() {
    assert_eq!(names(Some(&["read", "write"])), ["read", "write", "resolve"]);
    assert_eq!(names(Some(&["report_finding"])), ["report_finding", "resolve"]);
    // `ask` is not available here: a requested tool that does not exist is left out.
    assert_eq!(names(Some(&["ask", "read"])), ["read", "resolve"]);
    assert_eq!(names(Some(&["Read", "Write"])), ["read", "write", "resolve"]);
    assert_eq!(names(Some(&["resolve", "read", "read"])), ["read", "resolve"]);
    assert_eq!(names(None), ["read", "write", "report_finding", "ast_edit", "resolve"]);
}

#[test]
fn resolve_tool_identity() {
    let tool = ResolveTool::new(session());
    assert_eq!(tool.name(), "resolve");
    assert_eq!(tool.label(), "Resolve");
    assert!(tool.hidden());
    assert!(tool.strict());
    assert!(!tool.deferrable());
}

#[test]
fn push_pending_action_without_a_store_fails_with_the_reference_message() {
    let api = CustomToolApi::new(None);
    let err = api
        .push_pending_action(FnPendingAction::new("x", |_| async { Ok(ToolResult::text("x")) }))
        .unwrap_err();
    assert_eq!(err.message(), "Pending action store unavailable for custom tools in this runtime.");
}

#[test]
fn each_api_routes_pending_actions_to_its_own_session() {
    let parent = session();
    let subagent = session();
    let parent_api = CustomToolApi::new(Some(parent.clone()));
    let subagent_api = CustomToolApi::new(Some(subagent.clone()));
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    for (api, who) in [(&parent_api, "parent"), (&subagent_api, "subagent")] {
        let log = Arc::clone(&log);
        api.push_pending_action(
            FnPendingAction::new(format!("{who} ping"), move |_| {
                let log = Arc::clone(&log);
                async move {
                    log.lock().unwrap().push(format!("{who}:ping"));
                    Ok(ToolResult::text("pong"))
                }
            })
            .with_source_tool_name("batch_rename_preview"),
        )
        .unwrap();
    }
    block_on(parent.resolve(
        ResolveParams::apply("go"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(*log.lock().unwrap(), ["parent:ping"]);
    block_on(subagent.resolve(
        ResolveParams::apply("go"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(*log.lock().unwrap(), ["parent:ping", "subagent:ping"]);
    assert_eq!(subagent.store().list().unwrap().len(), 0);
}
