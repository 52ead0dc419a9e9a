//! `staged mcp`: the Model Context Protocol server of a staged workspace.
//!
//! Any MCP client (Claude Code, Codex, Cursor, goose, …) gets seven tools, and the tools of
//! the workspace's plugins beside them:
//!
//! * `ast_grep`: structural search (read-only);
//! * `ast_edit`: structural rewrite, staged as a preview;
//! * `edit`, `write`, `apply_patch`: an exact-text replacement, a whole file, a patch, each
//!   staged as a preview;
//! * `resolve`: applies or discards the newest preview (destructive);
//! * `pending`: lists the pending stack, newest first (read-only).
//!
//! The stack is the workspace's durable store (`.staged/`), shared with the `staged` CLI: a
//! preview staged over MCP can be resolved at a terminal and the reverse. While anything is
//! pending, results end with the resolve reminder: an MCP server cannot force the client's
//! tool choice, so it nudges instead. With [`Approval::Human`], `resolve apply` first asks the
//! person through MCP elicitation, then applies exactly the preview the person saw; the
//! question links to the preview on the review page when `staged ui` serves the workspace
//! (`page.rs`).
//!
//! Every tool result carries its model-facing text twice, because clients differ in what they
//! hand the model: as text blocks, and inside `structuredContent`, which is the object
//! `staged --json` prints (`{"text", "isError", "details", "pending"}`) and which every tool
//! declares as its `outputSchema`. A tool error is an `isError` result carrying the exact
//! message, never a protocol error.
//!
//! Transports: stdio ([`serve_stdio`]), where every bad frame gets a JSON-RPC error reply,
//! and streamable HTTP ([`HttpEndpoint`]), where every request needs the bearer token and a
//! `Host`/`Origin` that name this server. This crate prints nothing, reads no environment
//! and installs no signal handler or logger: the `staged` CLI does.
//!
//! # Library API
//!
//! Besides the example's: the HTTP endpoint's path (`HTTP_PATH`), the size above which a
//! result's text is served as a resource instead (`MAX_INLINE_RESULT_BYTES`), where a running
//! review page names its port (`PAGE_FILE`, in the state folder) and a preview's address on
//! it (`preview_link`), and the error of an approval mode that is neither `none` nor `human`
//! (`UnknownApproval`).
//!
//! # Example
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use staged_mcp::{Approval, StagedServer};
//! use staged_workspace::WorkspaceSession;
//!
//! let workspace = WorkspaceSession::open(std::path::Path::new("/path/to/repo"))?;
//! staged_mcp::serve_stdio(StagedServer::new(workspace, Approval::None)).await?;
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod approval;
mod auth;
mod big;
mod catalog;
mod error;
mod framing;
mod http;
mod options;
mod page;
mod pending;
mod reply;
mod resources;
mod server;
mod session;
mod transport;
mod watch;

pub use crate::{
    auth::{BearerToken, HostPolicy},
    big::MAX_INLINE_RESULT_BYTES,
    error::McpError,
    framing::MAX_FRAME_BYTES,
    http::{HTTP_PATH, HttpEndpoint},
    options::{Approval, HttpOptions, UnknownApproval},
    page::{PAGE_FILE, PAGE_NO_SESSION_TEXT, PageRecord, preview_link, running_page},
    pending::{PENDING_DESCRIPTION, PENDING_TOOL_LABEL, PENDING_TOOL_NAME, pending_schema},
    server::StagedServer,
    transport::serve_stdio,
};
