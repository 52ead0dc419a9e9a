//! `StagedServer`: the MCP `ServerHandler` that runs the staged tools on one workspace.
//!
//! The server keeps no state of its own between calls: the pending stack lives in the
//! workspace's durable store, which every call reads afresh, so the `staged` CLI (or another
//! MCP session) may stage or resolve previews between two calls.
//!
//! Besides the tools, it serves each pending preview's diff as a resource (`resources.rs`), a
//! preview too big for one result as its summary and a link to that resource (`big.rs`), and
//! tells the client when the stack changes, in any process (`watch.rs`).
//!
//! The reminder rule: a result ends with the resolve reminder while a preview is pending
//! after the call, except a `resolve` result that leaves the same preview on top (a declined
//! or failed apply), whose own text says what to do next (`staged_gate::remind_after_call`).

use std::{sync::Arc, time::SystemTime};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, Implementation, ListResourcesResult,
        ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
        ServerCapabilities, ServerConfig, SubscriptionFilter,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};
use staged_core::{CancelToken, FrontEnd, PendingEntry, RESOLVE_TOOL_NAME, ResolveOptions, Tool};
use staged_protocol::{ResolveAction, ResolveParams, ToolResult};
use staged_workspace::WorkspaceSession;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::{
    Approval,
    approval::{Ask, ask_to_apply},
    catalog::mcp_tools,
    pending::{PENDING_TOOL_NAME, list_pending},
    reply::to_call_result,
};

/// Instructions sent to the client on initialisation. Codex shows them to the model as the
/// description of the tool namespace, so they explain the whole staging contract.
pub(crate) const INSTRUCTIONS: &str = "staged makes code edits safe to review: \
`ast_edit` only stages a preview (a diff) and writes nothing, and so do `edit` (exact-text \
replacements), `write` (a whole file) and `apply_patch` (a patch that adds, deletes, updates \
and moves files). A file with a pending preview cannot be staged again until it is resolved. \
Every preview waits on a stack until you call `resolve` with action \"apply\" (write it) or \
\"discard\" (drop it), and a one-line reason; `resolve` always acts on the newest preview. \
While a preview is pending, every result ends with a reminder to resolve it: do so before \
moving on. `pending` lists the waiting previews, newest first; `ast_grep` searches read-only.";

/// The MCP server of one workspace. Cheap to clone; clones share the workspace session.
#[derive(Clone)]
pub struct StagedServer {
    workspace: Arc<WorkspaceSession>,
    tools: Arc<Vec<Arc<dyn Tool>>>,
    approve: Approval,
    /// Whether calls act for the client's agent session (a stdio server, one client); an
    /// HTTP server's connections share one process and act on the shared stack.
    sessions: bool,
}

impl std::fmt::Debug for StagedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedServer")
            .field("root", &self.workspace.workspace().root())
            .field("approve", &self.approve)
            .finish_non_exhaustive()
    }
}

/// What a `tools/call` produced before it is shaped for MCP.
enum Outcome {
    /// A tool result, to be sent with the stack's head (and the reminder when it applies).
    Result(ToolResult),
    /// An approval question to return as it is (protocol 2026-07-28 and later).
    InputRequired(rmcp::model::InputRequiredResult),
}

impl StagedServer {
    /// A server for the opened `workspace`.
    pub fn new(workspace: WorkspaceSession, approve: Approval) -> StagedServer {
        let tools = Arc::new(workspace.tools());
        StagedServer { workspace: Arc::new(workspace), tools, approve, sessions: false }
    }

    /// This server, acting for its client's agent session at every call (a stdio server:
    /// `docs/contract/sessions.md#identity`): its model's `resolve` acts on that session's
    /// previews only, and a person's notices for it ride on the next result.
    #[must_use]
    pub fn for_client_session(mut self) -> StagedServer {
        self.sessions = true;
        self
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
        let entered = self.enter(&ctx);
        let mut session = entered.map(|(number, _)| number);
        let is_resolve = name == RESOLVE_TOOL_NAME;
        // A server no client session is tied to resolves what its connection staged, or the
        // previews of the one agent session that holds any; otherwise it says whose they are.
        if is_resolve
            && let (Some((_, tied)), Some(store)) = (entered, self.workspace.sqlite())
            && self.head().is_none()
        {
            match crate::session::other_session_resolve(store, tied) {
                Ok(Some(theirs)) => {
                    store.set_scope(staged_store::SessionScope::agent(theirs));
                    session = Some(theirs);
                }
                Ok(None) => {}
                Err(text) => {
                    return Ok(to_call_result(ToolResult::error(text), None, false).into());
                }
            }
        }
        let before = if is_resolve { self.head() } else { None };
        let outcome = if name == PENDING_TOOL_NAME {
            Outcome::Result(list_pending(self.workspace.store().as_ref(), SystemTime::now()))
        } else if is_resolve {
            self.resolve(&request, &ctx, before.as_ref(), cancel).await?
        } else {
            let Some(tool) = self.tools.iter().find(|tool| tool.name() == name) else {
                return Err(ErrorData::invalid_params(format!("Unknown tool: `{name}`"), None));
            };
            Outcome::Result(self.execute(tool.as_ref(), &request, cancel).await)
        };
        let mut result = match outcome {
            Outcome::Result(result) => result,
            Outcome::InputRequired(input) => return Ok(input.into()),
        };
        if let (Some(number), Some(store)) = (session, self.workspace.sqlite())
            && let Some(text) = crate::session::notices(store, number)
        {
            result.content.push(staged_protocol::ContentPart::Text { text });
        }
        let after = self.head();
        let remind = staged_gate::remind_after_call(
            &name,
            before.as_ref().map(|b| &b.id),
            after.as_ref().map(|a| &a.id),
        );
        Ok(to_call_result(result, after.as_ref(), remind).into())
    }

    /// For a server tied to its client's agent session, makes the store act for that session
    /// (`session.rs`): its number, and whether it is the client's own.
    fn enter(&self, ctx: &RequestContext<RoleServer>) -> Option<(u64, bool)> {
        match (self.sessions, self.workspace.sqlite()) {
            (true, Some(store)) => {
                let client = ctx.peer.peer_info().map(|info| info.client_info.name.clone());
                crate::session::enter(store, client.as_deref())
            }
            _ => None,
        }
    }

    /// Runs `read` on the store, in the scope the server acts in, off the async runtime (a
    /// big preview's details are read and decompressed).
    async fn on_store<T, R>(
        &self,
        ctx: &RequestContext<RoleServer>,
        read: R,
    ) -> Result<T, ErrorData>
    where
        T: Send + 'static,
        R: FnOnce(&dyn staged_core::PendingActionStore) -> Result<T, ErrorData> + Send + 'static,
    {
        self.enter(ctx);
        let workspace = self.workspace.clone();
        tokio::task::spawn_blocking(move || read(workspace.store().as_ref())).await.map_err(
            |err| ErrorData::internal_error(format!("the store read failed: {err}"), None),
        )?
    }

    /// Runs `tool` on the request's arguments.
    async fn execute(
        &self,
        tool: &dyn Tool,
        request: &CallToolRequestParams,
        cancel: &CancelToken,
    ) -> ToolResult {
        let args = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
        match tool.execute(args, cancel).await {
            Ok(result) => result,
            Err(err) => err.to_result(),
        }
    }

    /// `resolve`. With `--approve human`, an apply first asks the person about `head` (the
    /// newest preview when the call came in) and then applies exactly that preview: if
    /// another was staged meanwhile, nothing is applied.
    async fn resolve(
        &self,
        request: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
        head: Option<&PendingEntry>,
        cancel: &CancelToken,
    ) -> Result<Outcome, ErrorData> {
        let Some(resolve_tool) = self.tools.iter().find(|tool| tool.name() == RESOLVE_TOOL_NAME)
        else {
            return Err(ErrorData::internal_error("the resolve tool is missing", None));
        };
        let args = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
        let Ok(params) = serde_json::from_value::<ResolveParams>(args) else {
            // The tool says what is wrong with the arguments.
            return Ok(Outcome::Result(self.execute(resolve_tool.as_ref(), request, cancel).await));
        };
        let session = self.workspace.session();
        let front_end = front_end(ctx);
        let (Approval::Human, Some(head), ResolveAction::Apply) =
            (self.approve, head, params.action)
        else {
            let options = ResolveOptions { front_end: Some(&front_end), ..Default::default() };
            let res = match session.resolve(params, options, cancel).await {
                Ok(result) => result,
                Err(err) => err.to_result(),
            };
            return Ok(Outcome::Result(res));
        };
        let state_dir = self.workspace.workspace().state_dir();
        match ask_to_apply(head, &params.reason, &state_dir, request, ctx).await {
            Ask::Approved => {}
            Ask::Stop(result) => return Ok(Outcome::Result(result)),
            Ask::InputRequired(input) => return Ok(Outcome::InputRequired(input)),
        }
        tracing::info!(id = %head.id, "the person approved the apply");
        let options = ResolveOptions {
            front_end: Some(&front_end),
            expected: Some(&head.id),
            by_person: true,
        };
        let res = match session.resolve(params, options, cancel).await {
            Ok(result) => result,
            Err(err) => err.to_result(),
        };
        Ok(Outcome::Result(res))
    }

    /// The newest pending preview; a read failure counts as nothing pending.
    fn head(&self) -> Option<PendingEntry> {
        match self.workspace.store().peek() {
            Ok(head) => head,
            Err(err) => {
                tracing::warn!(%err, "could not read the pending stack");
                None
            }
        }
    }
}

/// The front end the log records for this request: `mcp`, with the name the client gave in
/// `initialize` (cut to 64 printable characters, since it is the client's to choose).
fn front_end(ctx: &RequestContext<RoleServer>) -> FrontEnd {
    let name = ctx.peer.peer_info().map(|info| {
        info.client_info
            .name
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_CLIENT_NAME_CHARS)
            .collect::<String>()
    });
    FrontEnd::Mcp(name.filter(|name| !name.trim().is_empty()))
}

/// The most characters of a client's name the log keeps.
const MAX_CLIENT_NAME_CHARS: usize = 64;

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
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_tools()
            .enable_resources_list_changed()
            .build();
        ServerConfig::new(capabilities)
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

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.on_store(&ctx, crate::resources::list).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let res = self.on_store(&ctx, move |store| crate::resources::read(store, &uri)).await?;
        Ok(res.into())
    }

    /// A legacy client (`initialize`): `notifications/resources/list_changed` through the peer
    /// whenever the stack changes, for as long as the connection lives.
    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        let peer = ctx.peer;
        let workspace = self.workspace.clone();
        tokio::spawn(async move {
            let closed = peer.clone();
            let notify = move || {
                let peer = peer.clone();
                async move { peer.notify_resource_list_changed().await.is_ok() }
            };
            let stop = async move {
                while !closed.is_transport_closed() {
                    tokio::time::sleep(crate::watch::POLL_INTERVAL).await;
                }
            };
            crate::watch::watch(workspace, notify, stop).await;
        });
    }

    /// A 2026-07-28 client listens for `resourcesListChanged` on `subscriptions/listen`.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().resources_list_changed().build())
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        if subscription.accepted().resources_list_changed != Some(true) {
            subscription.cancelled().await;
            return Ok(());
        }
        let notify = || async { subscription.sink().notify_resource_list_changed().await.is_ok() };
        crate::watch::watch(self.workspace.clone(), notify, subscription.cancelled()).await;
        Ok(())
    }
}
