//! An agent host built on `staged-workspace`, the common path end to end: open a workspace,
//! register a custom tool (a file move through the journal), call `ast_edit` as a model would,
//! list what is pending, apply one preview and discard another, restart and apply a preview
//! staged before, read the log, and undo.
//!
//! `cargo run -p staged-workspace --example agent_host` prints what it does;
//! `tests/example.rs` runs it and checks that output.

use std::{error::Error, fmt::Write as _, path::Path, sync::Arc};

use serde::{Deserialize, Serialize};
use staged_workspace::{
    AstEditParams, ChangeStager, FileChanges, Op, ToolContext, WorkspaceSession,
    core::{
        CancelToken, FrontEnd, ResolveOptions, Tool, ToolError, UndoOptions, parameters_schema,
    },
    protocol::{ResolveParams, ToolResult},
};

/// `move_file`: stages moving a file; applying writes it through the journal.
struct MoveFile(ChangeStager);

/// `move_file`'s arguments: its schema is derived from them, and a call is read into them.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct MoveArgs {
    from: String,
    to: String,
}

#[staged_workspace::async_trait]
impl Tool for MoveFile {
    fn name(&self) -> &str {
        "move_file"
    }
    fn label(&self) -> &str {
        "Move file"
    }
    fn description(&self) -> &str {
        "Stages moving a file; nothing moves until resolve applies it."
    }
    fn parameters(&self) -> serde_json::Value {
        parameters_schema::<MoveArgs>()
    }
    async fn execute(
        &self,
        args: serde_json::Value,
        _: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let MoveArgs { from, to } = serde_json::from_value(args)
            .map_err(|err| ToolError::new(format!("Invalid arguments for move_file: {err}")))?;
        let label = format!("Move {from} to {to}");
        self.0.stage(&FileChanges::new().rename(from, to).label(label))
    }
}

/// Opens the workspace as this host does every time it starts.
fn open(root: &Path) -> staged_workspace::Result<WorkspaceSession> {
    let ws = WorkspaceSession::builder()
        .tool(
            "move_file",
            |ctx: &ToolContext<'_>| Arc::new(MoveFile(ctx.changes())) as Arc<dyn Tool>,
            None,
        )
        .open(root)?;
    ws.session().set_front_end(FrontEnd::Host("example-host".to_owned()));
    Ok(ws)
}

/// Calls the tool `name` of `ws` with `args` as JSON, as a model's tool call.
async fn call(
    ws: &WorkspaceSession,
    name: &str,
    args: &impl Serialize,
) -> Result<ToolResult, ToolError> {
    let tool = ws.tools().into_iter().find(|tool| tool.name() == name);
    let tool = tool.ok_or_else(|| ToolError::new(format!("no tool {name}")))?;
    let args = serde_json::to_value(args).map_err(|err| ToolError::new(err.to_string()))?;
    tool.execute(args, &CancelToken::new()).await
}

async fn resolve(ws: &WorkspaceSession, params: ResolveParams) -> Result<ToolResult, ToolError> {
    ws.session().resolve(params, ResolveOptions::default(), &CancelToken::new()).await
}

fn pending(ws: &WorkspaceSession, out: &mut String) -> Result<(), Box<dyn Error>> {
    let entries = ws.store().list()?;
    writeln!(out, "pending: {}", entries.len())?;
    for entry in entries {
        writeln!(out, "  {} {}", entry.id, entry.action.label())?;
    }
    Ok(())
}

/// Runs the host's session in the workspace at `root`, returning what it did, line by line.
pub(crate) async fn run(root: &Path) -> Result<String, Box<dyn Error>> {
    let mut out = String::new();
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::write(root.join("src/lib.rs"), "fn main() {\n    old_call(1);\n}\n")?;
    std::fs::write(root.join("notes.txt"), "notes\n")?;

    let ws = open(root)?;
    let names: Vec<String> = ws.tools().iter().map(|tool| tool.name().to_owned()).collect();
    writeln!(out, "tools: {}", names.join(", "))?;

    // The model rewrites a call structurally, and moves a file: two previews.
    let rewrite = AstEditParams {
        ops: vec![Op { pat: "old_call($A)".to_owned(), out: "new_call($A)".to_owned() }],
        paths: vec!["src".to_owned()],
        lang: Some("rust".to_owned()),
        selector: None,
        strictness: None,
        limit: None,
        max_files: None,
        include_parse_errors: None,
    };
    call(&ws, "ast_edit", &rewrite).await?;
    let move_notes = MoveArgs { from: "notes.txt".to_owned(), to: "docs/notes.txt".to_owned() };
    call(&ws, "move_file", &move_notes).await?;
    pending(&ws, &mut out)?;

    // The newest first: the move is discarded, the rewrite applied.
    let discarded = resolve(&ws, ResolveParams::discard("keep the notes at the root")).await?;
    writeln!(out, "discard: {}", discarded.text_content())?;
    let applied = resolve(&ws, ResolveParams::apply("the new API")).await?;
    writeln!(out, "apply: {}", applied.text_content().lines().next().unwrap_or(""))?;
    writeln!(out, "src/lib.rs: {:?}", std::fs::read_to_string(root.join("src/lib.rs"))?)?;

    // A preview staged before a restart applies after it.
    call(&ws, "move_file", &move_notes).await?;
    drop(ws);
    let ws = open(root)?;
    pending(&ws, &mut out)?;
    let applied = resolve(&ws, ResolveParams::apply("notes belong in docs")).await?;
    writeln!(out, "apply after restart: {}", applied.text_content().lines().next().unwrap_or(""))?;
    writeln!(out, "docs/notes.txt exists: {}", root.join("docs/notes.txt").exists())?;

    // The log, newest first, and an undo of the move.
    let log = ws.store().log().ok_or("no log")?.entries(10, false)?;
    for entry in &log {
        let record = &entry.record;
        writeln!(
            out,
            "log {}: {} {} by {} ({}): {}",
            entry.seq,
            record.outcome,
            record.source_tool_name,
            record.front_end,
            record.reason,
            record.label
        )?;
    }
    let undone =
        ws.session().undo("back to the root", UndoOptions::default(), &CancelToken::new()).await?;
    writeln!(out, "undo: {}", undone.text_content().lines().next().unwrap_or(""))?;
    writeln!(out, "notes.txt exists: {}", root.join("notes.txt").exists())?;
    Ok(out)
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let out = runtime.block_on(run(dir.path()))?;
    #[allow(clippy::print_stdout)]
    {
        print!("{out}");
    }
    Ok(())
}
