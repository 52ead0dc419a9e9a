//! `StagedServer`: the MCP `ServerHandler` that runs the staged tools on one workspace.
//!
//! The server keeps no state of its own between calls: the pending stack lives in the
//! workspace's durable store, which every call reads afresh, so the `staged` CLI (or another
//! MCP session) may stage or resolve previews between two calls.

use std::{sync::Arc, time::SystemTime};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
        PaginatedRequestParams, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
};
use staged_core::{CancelToken, RESOLVE_TOOL_NAME, Tool};
use staged_workspace::WorkspaceSession;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::{
    Approval,
    approval::{Ask, ask_to_apply, changed_text},
    catalog::mcp_tools,
    pending::{PENDING_TOOL_NAME, list_pending},
    reply::{append_reminder, to_call_result},
};

/// Instructions sent to the client on initialisation.
const INSTRUCTIONS: &str = "staged previews structural code edits before writing them. \
`ast_edit` stages a preview; nothing changes on disk until you call `resolve` with action \
\"apply\" (or \"discard\") and a reason. `pending` lists what is waiting; `ast_grep` searches.";

/// The MCP server of one workspace. Cheap to clone; clones share the workspace session.
#[derive(Clone)]
pub struct StagedServer {
    workspace: Arc<WorkspaceSession>,
    tools: Arc<Vec<Arc<dyn Tool>>>,
    approve: Approval,
}

impl std::fmt::Debug for StagedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedServer")
            .field("root", &self.workspace.workspace().root())
            .field("approve", &self.approve)
            .finish_non_exhaustive()
    }
}

impl StagedServer {
    /// A server for the opened `workspace`.
    pub fn new(workspace: WorkspaceSession, approve: Approval) -> StagedServer {
        let tools = Arc::new(workspace.tools());
        StagedServer { workspace: Arc::new(workspace), tools, approve }
    }

    /// The workspace session the server runs on.
    pub fn workspace(&self) -> &WorkspaceSession {
        &self.workspace
    }

    /// Runs one `tools/call`. Tool failures are error results, never protocol errors; only an
    /// unknown tool name is a protocol error.
    async fn call(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let bridge = cancel_bridge(&ctx);
        let cancel = &bridge.token;
        tracing::debug!(tool = %name, "tools/call");
        let mut result = if name == PENDING_TOOL_NAME {
            to_call_result(list_pending(self.workspace.store().as_ref(), SystemTime::now()))
        } else if name == RESOLVE_TOOL_NAME {
            return self.resolve(request, &ctx, cancel).await;
        } else {
            let Some(tool) = self.tools.iter().find(|tool| tool.name() == name) else {
                return Err(ErrorData::invalid_params(format!("Unknown tool: `{name}`"), None));
            };
            self.execute(tool.as_ref(), &request, cancel).await
        };
        if self.has_pending() {
            append_reminder(&mut result);
        }
        Ok(result.into())
    }

    /// Runs `tool` on the request's arguments.
    async fn execute(
        &self,
        tool: &dyn Tool,
        request: &CallToolRequestParams,
        cancel: &CancelToken,
    ) -> CallToolResult {
        let args = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
        match tool.execute(args, cancel).await {
            Ok(result) => to_call_result(result),
            Err(err) => to_call_result(err.to_result()),
        }
    }

    /// `resolve`, with the person's approval first when `--approve human` asks for it.
    async fn resolve(
        &self,
        request: CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
        cancel: &CancelToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let resolve_tool = self.tools.iter().find(|tool| tool.name() == RESOLVE_TOOL_NAME);
        let Some(resolve_tool) = resolve_tool else {
            return Err(ErrorData::internal_error("the resolve tool is missing", None));
        };
        let args = request.arguments.clone().unwrap_or_default();
        let wants_apply = args.get("action").and_then(serde_json::Value::as_str) == Some("apply");
        let reason = args.get("reason").and_then(serde_json::Value::as_str);
        if self.approve == Approval::Human
            && wants_apply
            && let Some(reason) = reason
        {
            let head = match self.workspace.store().peek() {
                Ok(head) => head,
                Err(err) => {
                    return Ok(to_call_result(staged_core::ToolResult::error(format!(
                        "Could not read the pending stack: {err}"
                    )))
                    .into());
                }
            };
            if let Some(head) = head {
                match ask_to_apply(&head, reason, &request, ctx).await {
                    Ask::Approved => {}
                    Ask::Stop(result) => return Ok(result.into()),
                    Ask::InputRequired(input) => return Ok(input.into()),
                }
                let now_head = self.workspace.store().peek().ok().flatten().map(|h| h.id);
                if now_head.as_ref() != Some(&head.id) {
                    return Ok(
                        to_call_result(staged_core::ToolResult::error(changed_text())).into()
                    );
                }
                tracing::info!(id = %head.id, "the person approved the apply");
            }
        }
        Ok(self.execute(resolve_tool.as_ref(), &request, cancel).await.into())
    }

    /// Whether the durable stack holds anything; a read failure counts as nothing pending.
    fn has_pending(&self) -> bool {
        match self.workspace.store().has_pending() {
            Ok(pending) => pending,
            Err(err) => {
                tracing::warn!(%err, "could not read the pending stack");
                false
            }
        }
    }
}

/// A staged cancel token that fires when the client cancels the request, for as long as the
/// bridge lives (dropping it stops the watcher task).
struct CancelBridge {
    token: CancelToken,
    _done: DropGuard,
}

fn cancel_bridge(ctx: &RequestContext<RoleServer>) -> CancelBridge {
    let token = CancelToken::new();
    let done = CancellationToken::new();
    let request_ct = ctx.ct.clone();
    let (watch_token, watch_done) = (token.clone(), done.clone());
    tokio::spawn(async move {
        tokio::select! {
            () = request_ct.cancelled() => watch_token.cancel_with("the client cancelled the request"),
            () = watch_done.cancelled() => {}
        }
    });
    CancelBridge { token, _done: done.drop_guard() }
}

impl ServerHandler for StagedServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("staged", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(mcp_tools(&self.tools)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, ctx).await
    }
}
