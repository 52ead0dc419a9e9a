//! The library as an agent builder uses it (issue 39): a custom tool's name is given once, at
//! registration, and its previews still apply after a restart; a durable tool's typed payload
//! and the one function that makes its action.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{path::Path, sync::Arc};

use serde_json::json;
use staged_workspace::{
    ConfinedRoot, Stager, StoredAction, ToolContext, WorkspaceSession,
    core::{
        CancelToken, CustomToolApi, FnPendingAction, PendingAction, ResolveOptions, ResolveParams,
        Tool, ToolError, ToolResult,
    },
};

fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(fut)
}

/// `shout`: stages an upper-cased echo; its action names no source tool.
struct Shout(CustomToolApi);

fn shout(text: &str) -> FnPendingAction {
    let loud = text.to_uppercase();
    FnPendingAction::new(format!("Shout {text}"), move |_| {
        let loud = loud.clone();
        async move { Ok(ToolResult::text(loud)) }
    })
    .with_payload(json!({"text": text}))
}

#[staged_workspace::async_trait]
impl Tool for Shout {
    fn name(&self) -> &str {
        "shout"
    }
    fn label(&self) -> &str {
        "Shout"
    }
    fn description(&self) -> &str {
        "Stages a shout."
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    }
    async fn execute(
        &self,
        args: serde_json::Value,
        _: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let id = self.0.push_pending_action(shout(args["text"].as_str().unwrap_or("")))?;
        Ok(ToolResult::text(format!("Staged {id}")))
    }
}

fn open_shout(root: &Path) -> WorkspaceSession {
    WorkspaceSession::builder()
        .tool(
            "shout",
            |ctx: &ToolContext<'_>| Arc::new(Shout(ctx.api())) as Arc<dyn Tool>,
            Some(Arc::new(|stored: &StoredAction| {
                let text = stored.payload["text"].as_str().ok_or("no text")?;
                Ok(Arc::new(shout(text)) as Arc<dyn PendingAction>)
            })),
        )
        .open(root)
        .unwrap()
}

fn apply(ws: &WorkspaceSession, reason: &str) -> Result<ToolResult, ToolError> {
    block_on(ws.session().resolve(
        ResolveParams::apply(reason),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
}

#[test]
fn a_tools_name_given_once_stamps_its_previews_which_apply_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let ws = open_shout(dir.path());
    let tool = ws.custom_tools()[0].clone();
    let staged = block_on(tool.execute(json!({"text": "hi"}), &CancelToken::new())).unwrap();
    assert_eq!(staged.text_content(), "Staged pending-action:shout:0");
    drop((tool, ws));

    let again = open_shout(dir.path());
    let listed = again.store().list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].action.source_tool_name(), "shout");
    assert_eq!(apply(&again, "say it").unwrap().text_content(), "HI");
    assert!(again.store().is_empty().unwrap());
    let log = again.store().log().unwrap().entries(10, false).unwrap();
    assert_eq!(log[0].record.source_tool_name, "shout");
}

/// A typed payload.
#[derive(serde::Serialize, serde::Deserialize)]
struct Bump {
    counter: String,
    by: u32,
}

fn bump(_: &ConfinedRoot, bump: Bump) -> FnPendingAction {
    let text = format!("{} + {}", bump.counter, bump.by);
    FnPendingAction::new(format!("Bump {}", bump.counter), move |input| {
        let text = format!("{text}. Reason: {}", input.reason);
        async move { Ok(ToolResult::text(text)) }
    })
}

/// `bump`: its name is written once, at registration.
struct BumpTool(Stager<Bump>);

#[staged_workspace::async_trait]
impl Tool for BumpTool {
    fn name(&self) -> &str {
        self.0.tool_name()
    }
    fn label(&self) -> &str {
        "Bump"
    }
    fn description(&self) -> &str {
        "Stages bumping a counter."
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        args: serde_json::Value,
        _: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let payload: Bump =
            serde_json::from_value(args).map_err(|e| ToolError::new(e.to_string()))?;
        let id = self.0.stage(payload)?;
        Ok(ToolResult::text(format!("Staged {id}")))
    }
}

fn open_bump(root: &Path) -> WorkspaceSession {
    WorkspaceSession::builder()
        .durable_tool("bump", bump, |stager, _| Arc::new(BumpTool(stager)) as Arc<dyn Tool>)
        .open(root)
        .unwrap()
}

#[test]
fn a_typed_payload_survives_a_restart_with_its_action_made_by_one_function() {
    let dir = tempfile::tempdir().unwrap();
    let ws = open_bump(dir.path());
    assert!(ws.load_errors().is_empty(), "{:?}", ws.load_errors());
    let tool = ws.custom_tools()[0].clone();
    assert_eq!(tool.name(), "bump");
    let staged =
        block_on(tool.execute(json!({"counter": "hits", "by": 2}), &CancelToken::new())).unwrap();
    assert_eq!(staged.text_content(), "Staged pending-action:bump:0");
    assert_eq!(
        ws.store().list().unwrap()[0].action.payload(),
        Some(json!({"counter": "hits", "by": 2}))
    );
    drop((tool, ws));

    let again = open_bump(dir.path());
    assert_eq!(apply(&again, "more").unwrap().text_content(), "hits + 2. Reason: more");
    let log = again.store().log().unwrap().entries(10, false).unwrap();
    assert_eq!(log[0].record.source_tool_name, "bump");
}

#[test]
fn a_payload_of_another_shape_reads_back_unavailable_and_discards() {
    let dir = tempfile::tempdir().unwrap();
    let ws = open_shout(dir.path());
    let tool = ws.custom_tools()[0].clone();
    block_on(tool.execute(json!({"text": "hi"}), &CancelToken::new())).unwrap();
    drop((tool, ws));

    // The same workspace, where `shout` is now a durable tool of another payload type.
    let changed = WorkspaceSession::builder()
        .durable_tool("shout", bump, |stager, _| Arc::new(BumpTool(stager)) as Arc<dyn Tool>)
        .open(dir.path())
        .unwrap();
    let err = apply(&changed, "try").unwrap_err();
    assert!(
        err.message().contains("invalid shout payload: missing field `counter`"),
        "{}",
        err.message()
    );
    assert_eq!(changed.store().len().unwrap(), 1);
    let discarded = block_on(changed.session().resolve(
        ResolveParams::discard("gone"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(discarded.text_content(), "Discarded: Shout hi. Reason: gone");
}
