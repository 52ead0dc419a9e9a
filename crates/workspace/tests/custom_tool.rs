//! A custom Rust tool registered through `WorkspaceSession::builder` stages a preview in one
//! process, and another process (this test binary run again as a child) resolves it: the
//! rehydrator registered for the tool's source name rebuilds the action from its payload, and
//! the file changes exactly once. Also: a tool without a rehydrator stages without a payload
//! (after a restart it lists and discards, and applying says why it cannot), a name taken by a
//! built-in or an earlier tool is a load error, and the seed's text when no store is bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{path::Path, process::Command, sync::Arc};

use serde_json::json;
use staged_core::{
    CancelToken, CustomToolApi, FnPendingAction, PendingAction, ResolveOptions, Tool, ToolError,
};
use staged_protocol::{ResolveParams, ToolResult};
use staged_workspace::{ConfinedRoot, LoadError, StoredAction, ToolContext, WorkspaceSession};

const CHILD_ENV: &str = "STAGED_CUSTOM_TOOL_CHILD";

fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(fut)
}

/// `append_line`: stages appending `line` to `path`; the apply writes through the workspace's
/// handles.
struct AppendLine {
    api: CustomToolApi,
    workspace: ConfinedRoot,
    durable: bool,
}

fn append_action(
    workspace: &ConfinedRoot,
    path: &str,
    line: &str,
    durable: bool,
) -> FnPendingAction {
    let (workspace, path_owned, line_owned) = (workspace.clone(), path.to_owned(), line.to_owned());
    let action = FnPendingAction::new(format!("Append to {path}"), move |input| {
        let (workspace, path, line) = (workspace.clone(), path_owned.clone(), line_owned.clone());
        async move {
            let rel = workspace.rel(&path).map_err(staged_core::ActionError::other)?;
            let mut text = workspace.fs().read(&rel)?;
            text.extend_from_slice(format!("{line}\n").as_bytes());
            let (dir, name) = workspace.fs().parent(&rel)?;
            dir.write_replace(name, &text, &staged_fs::NewFileMode::Mode(0o644))?;
            Ok(ToolResult::text(format!("Appended to {path}. Reason: {}", input.reason)))
        }
    })
    .with_source_tool_name(if durable { "append_line" } else { "append_here" })
    .with_details(json!({"path": path, "line": line}));
    if durable { action.with_payload(json!({"path": path, "line": line})) } else { action }
}

#[async_trait::async_trait]
impl Tool for AppendLine {
    fn name(&self) -> &str {
        if self.durable { "append_line" } else { "append_here" }
    }
    fn label(&self) -> &str {
        "Append line"
    }
    fn description(&self) -> &str {
        "Stages appending a line to a file."
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}, "line": {"type": "string"}}})
    }
    async fn execute(
        &self,
        args: serde_json::Value,
        _: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let (path, line) = (args["path"].as_str().unwrap(), args["line"].as_str().unwrap());
        let id = self.api.push_pending_action(append_action(
            &self.workspace,
            path,
            line,
            self.durable,
        ))?;
        Ok(ToolResult::text(format!("Staged {id}")))
    }
}

fn open(root: &Path) -> WorkspaceSession {
    let rehydrate_in = ConfinedRoot::new(root).unwrap();
    WorkspaceSession::builder()
        .tool(
            "append_line",
            |ctx: &ToolContext<'_>| {
                Arc::new(AppendLine {
                    api: ctx.api(),
                    workspace: ctx.workspace().clone(),
                    durable: true,
                }) as Arc<dyn Tool>
            },
            Some(Arc::new(move |stored: &StoredAction| {
                let path = stored.payload["path"].as_str().ok_or("no path")?;
                let line = stored.payload["line"].as_str().ok_or("no line")?;
                Ok(Arc::new(append_action(&rehydrate_in, path, line, true))
                    as Arc<dyn PendingAction>)
            })),
        )
        .tool(
            "append_here",
            |ctx: &ToolContext<'_>| {
                Arc::new(AppendLine {
                    api: ctx.api(),
                    workspace: ctx.workspace().clone(),
                    durable: false,
                }) as Arc<dyn Tool>
            },
            None,
        )
        .open(root)
        .unwrap()
}

/// The child: opens the workspace given in the environment and applies the head.
#[test]
fn child_resolves_the_head() {
    let Ok(root) = std::env::var(CHILD_ENV) else { return };
    let ws = open(Path::new(&root));
    let res = block_on(ws.session().resolve(
        ResolveParams::apply("from the child"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ));
    match res {
        Ok(result) => println!("CHILD-OK {}", result.text_content()),
        Err(err) => println!("CHILD-ERR {}", err.message()),
    }
}

fn run_child(root: &Path) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_resolves_the_head", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
        .lines()
        .find_map(|l| l.split_once("CHILD-OK ").or_else(|| l.split_once("CHILD-ERR ")))
        .map(|(_, verdict)| verdict.to_owned())
        .unwrap_or_else(|| panic!("no child verdict in {stdout}"))
}

#[test]
fn a_custom_tool_stages_and_another_process_applies_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\n").unwrap();
    let ws = open(dir.path());
    assert!(ws.load_errors().is_empty(), "{:?}", ws.load_errors());
    let tools = ws.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "ast_grep",
            "ast_edit",
            "edit",
            "write",
            "apply_patch",
            "append_line",
            "append_here",
            "resolve"
        ]
    );
    let tool = ws.custom_tools()[0].clone();
    let res =
        block_on(tool.execute(json!({"path": "notes.txt", "line": "two"}), &CancelToken::new()))
            .unwrap();
    assert_eq!(res.text_content(), "Staged pending-action:append_line:0");
    drop(ws);

    assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "one\n");
    assert_eq!(run_child(dir.path()), "Appended to notes.txt. Reason: from the child");
    assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "one\ntwo\n");
    let again = open(dir.path());
    assert!(again.store().is_empty().unwrap());
}

#[test]
fn a_preview_without_a_payload_reads_back_unavailable_in_another_process() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\n").unwrap();
    let ws = open(dir.path());
    let tool = ws.custom_tools()[1].clone();
    block_on(tool.execute(json!({"path": "notes.txt", "line": "two"}), &CancelToken::new()))
        .unwrap();
    drop(ws);

    assert_eq!(
        run_child(dir.path()),
        "Apply failed: cannot apply `Append to notes.txt` here: `append_here` staged it without a replayable payload, so only the process that staged it could apply it; discard it, or resolve it where its tool runs"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "one\n");
    let ws = open(dir.path());
    let head = ws.store().peek().unwrap().unwrap();
    assert_eq!(
        (head.id.as_str(), head.label()),
        ("pending-action:append_here:0", "Append to notes.txt")
    );
    let res = block_on(ws.session().resolve(
        ResolveParams::discard("stale"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "Discarded: Append to notes.txt. Reason: stale");
    assert!(ws.store().is_empty().unwrap());
}

#[test]
fn names_taken_by_built_ins_or_earlier_tools_are_load_errors() {
    let dir = tempfile::tempdir().unwrap();
    let make = |name: &'static str| {
        move |ctx: &ToolContext<'_>| {
            Arc::new(AppendLine {
                api: ctx.api(),
                workspace: ctx.workspace().clone(),
                durable: name == "append_line",
            }) as Arc<dyn Tool>
        }
    };
    let ws = WorkspaceSession::builder()
        .tool("ast_edit", make("append_line"), None)
        .tool("append_line", make("append_line"), None)
        .tool("append_line", make("append_line"), None)
        .tool("append_here", make("append_line"), None)
        .open(dir.path())
        .unwrap();
    let errors: Vec<String> = ws.load_errors().iter().map(LoadError::to_string).collect();
    assert_eq!(
        errors,
        [
            "custom tool: Tool name \"ast_edit\" conflicts with existing tool",
            "custom tool: Tool name \"append_line\" conflicts with existing tool",
            "custom tool: Failed to load tool: the tool registered as \"append_here\" is named \"append_line\"",
        ]
    );
    assert_eq!(ws.custom_tools().len(), 1);
}

#[test]
fn pushing_without_a_session_keeps_the_seed_text() {
    let api = CustomToolApi::new(None);
    let action = FnPendingAction::new("x", |_| async { Ok(ToolResult::text("x")) });
    let err = api.push_pending_action(action).unwrap_err();
    assert_eq!(err.message(), staged_core::STORE_UNAVAILABLE_TEXT);
    assert_eq!(err.message(), "Pending action store unavailable for custom tools in this runtime.");
}
