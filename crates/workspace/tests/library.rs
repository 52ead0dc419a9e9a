//! The library as an agent builder uses it (issue 39): a custom tool's name is given once, at
//! registration, and its previews still apply after a restart; a durable tool's typed payload
//! and the one function that makes its action; a custom tool's journaled writes (confined,
//! checked for staleness, all or none, logged with their diff, undone).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{path::Path, sync::Arc};

use serde_json::json;
use staged_workspace::{
    ChangeStager, ConfinedRoot, FileChanges, Stager, StoredAction, ToolContext, WorkspaceSession,
    WorkspaceSessionBuilder,
    core::{
        CancelToken, CustomToolApi, FnPendingAction, FrontEnd, LogOutcome, PendingAction,
        ResolveOptions, Tool, ToolError, UndoOptions,
    },
    protocol::{ResolveParams, ToolResult},
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

fn with_shout(builder: WorkspaceSessionBuilder) -> WorkspaceSessionBuilder {
    builder.tool(
        "shout",
        |ctx: &ToolContext<'_>| Arc::new(Shout(ctx.api())) as Arc<dyn Tool>,
        Some(Arc::new(|stored: &StoredAction| {
            let text = stored.payload["text"].as_str().ok_or("no text")?;
            Ok(Arc::new(shout(text)) as Arc<dyn PendingAction>)
        })),
    )
}

fn open_shout(root: &Path) -> WorkspaceSession {
    with_shout(WorkspaceSession::builder()).open(root).unwrap()
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

/// `mv`: moves a file through the journaled builder.
struct Move(ChangeStager);

#[staged_workspace::async_trait]
impl Tool for Move {
    fn name(&self) -> &str {
        "mv"
    }
    fn label(&self) -> &str {
        "Move"
    }
    fn description(&self) -> &str {
        "Stages moving a file."
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        args: serde_json::Value,
        _: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let (from, to) = (args["from"].as_str().unwrap(), args["to"].as_str().unwrap());
        self.0.stage(&FileChanges::new().rename(from, to).label(format!("Move {from} to {to}")))
    }
}

fn open_mv(root: &Path) -> WorkspaceSession {
    WorkspaceSession::builder()
        .tool("mv", |ctx: &ToolContext<'_>| Arc::new(Move(ctx.changes())) as Arc<dyn Tool>, None)
        .open(root)
        .unwrap()
}

fn stage_mv(ws: &WorkspaceSession, from: &str, to: &str) -> Result<ToolResult, ToolError> {
    let tool = ws.custom_tools()[0].clone();
    block_on(tool.execute(json!({"from": from, "to": to}), &CancelToken::new()))
}

#[test]
fn a_journaled_move_is_confined_to_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(dir.path().join("outside.txt"), "secret\n").unwrap();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    let ws = open_mv(&root);
    for (from, to) in [("../outside.txt", "stolen.txt"), ("a.txt", "../escaped.txt")] {
        let err = stage_mv(&ws, from, to).unwrap_err();
        let bad = if from.starts_with("..") { from } else { to };
        assert!(
            err.message().starts_with(&format!("Path is outside the workspace: {bad}")),
            "{}",
            err.message()
        );
    }
    assert!(ws.store().is_empty().unwrap());
    assert!(!root.join("stolen.txt").exists() && !dir.path().join("escaped.txt").exists());
    assert_eq!(std::fs::read_to_string(dir.path().join("outside.txt")).unwrap(), "secret\n");
}

#[test]
fn a_journaled_move_is_stale_after_an_outside_edit_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let ws = open_mv(dir.path());
    let staged = stage_mv(&ws, "a.txt", "b.txt").unwrap();
    assert!(staged.text_content().contains("Staged pending-action:mv:0: Move a.txt to b.txt"));
    std::fs::write(dir.path().join("a.txt"), "edited outside\n").unwrap();
    let stale = apply(&ws, "move it").unwrap();
    assert!(stale.is_error);
    assert!(
        stale.text_content().starts_with("Preview is stale / no longer matches; nothing was written. Preview expected to change b.txt. Why: a.txt changed since the preview."),
        "{}",
        stale.text_content()
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "edited outside\n");
    assert!(!dir.path().join("b.txt").exists());
    let log = ws.store().log().unwrap().entries(10, false).unwrap();
    assert_eq!(log[0].record.outcome, LogOutcome::Stale);
}

#[test]
fn a_journaled_move_applies_after_a_restart_logs_its_diff_and_undoes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let ws = open_mv(dir.path());
    stage_mv(&ws, "a.txt", "b.txt").unwrap();
    assert!(dir.path().join("a.txt").exists() && !dir.path().join("b.txt").exists());
    drop(ws);

    let ws = open_mv(dir.path());
    apply(&ws, "tidy names").unwrap();
    assert!(!dir.path().join("a.txt").exists());
    assert_eq!(std::fs::read_to_string(dir.path().join("b.txt")).unwrap(), "a\n");
    let log = ws.store().log().unwrap().entries(10, true).unwrap();
    let record = &log[0].record;
    assert_eq!((record.source_tool_name.as_str(), record.outcome), ("mv", LogOutcome::Applied));
    let diff = record.diff.as_deref().unwrap();
    assert!(diff.contains("rename from a.txt\nrename to b.txt\n"), "{diff}");

    let undone = block_on(ws.session().undo(
        "put back",
        UndoOptions { target: None, front_end: Some(&FrontEnd::Cli) },
        &CancelToken::new(),
    ));
    assert!(undone.is_ok(), "{undone:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "a\n");
    assert!(!dir.path().join("b.txt").exists());
}

#[test]
fn an_entry_of_a_custom_tool_without_journaled_changes_still_declares_no_undo() {
    let dir = tempfile::tempdir().unwrap();
    let ws = open_shout(dir.path());
    let tool = ws.custom_tools()[0].clone();
    block_on(tool.execute(json!({"text": "hi"}), &CancelToken::new())).unwrap();
    apply(&ws, "say it").unwrap();
    let err = block_on(ws.session().undo(
        "unsay",
        UndoOptions { target: None, front_end: Some(&FrontEnd::Cli) },
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Undo is not available for `shout` entries: that tool declares no undo. Nothing was written."
    );
}

#[test]
fn a_third_party_hosts_resolves_are_logged_by_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let ws = open_shout(dir.path());
    ws.session().set_front_end(FrontEnd::Host("acme-agent".to_owned()));
    let tool = ws.custom_tools()[0].clone();
    block_on(tool.execute(json!({"text": "hi"}), &CancelToken::new())).unwrap();
    apply(&ws, "say it").unwrap();
    let log = ws.store().log().unwrap().entries(10, false).unwrap();
    assert_eq!(log[0].record.front_end, "host:acme-agent");
}

#[test]
fn a_bare_undo_passes_over_newer_entries_whose_tool_declares_no_undo() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let builder = WorkspaceSession::builder().tool(
        "mv",
        |ctx: &ToolContext<'_>| Arc::new(Move(ctx.changes())) as Arc<dyn Tool>,
        None,
    );
    let ws = with_shout(builder).open(dir.path()).unwrap();
    stage_mv(&ws, "a.txt", "b.txt").unwrap();
    apply(&ws, "move").unwrap();
    let shout = ws.custom_tools()[1].clone();
    block_on(shout.execute(json!({"text": "hi"}), &CancelToken::new())).unwrap();
    apply(&ws, "say it").unwrap();

    let undo = || block_on(ws.session().undo("back", UndoOptions::default(), &CancelToken::new()));
    let undone = undo().unwrap();
    assert_eq!(undone.text_content(), "Undid log entry 1 (Move a.txt to b.txt): 1 file restored.");
    assert!(dir.path().join("a.txt").exists() && !dir.path().join("b.txt").exists());
    // Nothing left that can be undone: the newest entry says why.
    let err = undo().unwrap_err();
    assert_eq!(
        err.message(),
        "Undo is not available for `shout` entries: that tool declares no undo. Nothing was written."
    );
}

/// A host's step with one error type: opening, a tool call, `resolve`, the stack and its own
/// reads all go through `?`.
fn host_step(root: &Path) -> staged_workspace::Result<String> {
    std::fs::write(root.join("a.txt"), "a\n")?;
    let ws = WorkspaceSession::builder()
        .tool("mv", |ctx: &ToolContext<'_>| Arc::new(Move(ctx.changes())) as Arc<dyn Tool>, None)
        .open(root)?;
    let tool = ws.custom_tools()[0].clone();
    block_on(tool.execute(json!({"from": "a.txt", "to": "../b.txt"}), &CancelToken::new()))?;
    Ok(format!("{} pending", ws.store().len()?))
}

#[test]
fn one_error_type_carries_a_hosts_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = host_step(dir.path()).unwrap_err();
    assert!(matches!(err, staged_workspace::Error::Tool(_)), "{err:?}");
    assert!(err.to_string().starts_with("Path is outside the workspace: ../b.txt"), "{err}");
    let err = host_step(&dir.path().join("missing")).unwrap_err();
    assert!(matches!(err, staged_workspace::Error::Io(_)), "{err:?}");
}
