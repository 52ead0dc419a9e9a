//! `staged mcp`: the Model Context Protocol server of a staged workspace.
//!
//! Any MCP client (Claude Code, Codex, Cursor, goose, …) gets four tools:
//!
//! * `ast_grep`: structural search (read-only);
//! * `ast_edit`: structural rewrite, staged as a preview;
//! * `resolve`: applies or discards the newest preview (destructive);
//! * `pending`: lists the pending stack, newest first (read-only).
//!
//! The stack is the workspace's durable store (`.staged/`), shared with the `staged` CLI: a
//! preview staged over MCP can be resolved at a terminal and the reverse. While anything is
//! pending, every result except `resolve`'s ends with the resolve reminder, as one extra,
//! final text part: an MCP server cannot force the client's tool choice, so it nudges instead.
//! With [`Approval::Human`], `resolve apply` first asks the person through MCP elicitation.
//!
//! Tool results map onto MCP as: text parts → text content, details (a JSON object) →
//! `structuredContent`, and `isError` as the tool reported it. A tool error is an `isError`
//! result carrying the exact message, never a protocol error.
//!
//! # Example
//! ```no_run
//! # async fn demo() -> Result<(), staged_mcp::McpError> {
//! use staged_mcp::{Approval, McpOptions};
//! staged_mcp::run(McpOptions {
//!     workspace_root: ".".into(),
//!     http: None,
//!     allow_remote: false,
//!     approve: Approval::None,
//! })
//! .await
//! # }
//! ```

#![deny(missing_docs)]

mod approval;
mod catalog;
mod error;
mod options;
mod pending;
mod reply;
mod server;
mod transport;

pub use crate::{
    error::McpError,
    options::{Approval, McpOptions, UnknownApproval},
    pending::PENDING_TOOL_NAME,
    server::StagedServer,
    transport::{HTTP_PATH, check_bind_address, run, serve_http, serve_stdio},
};
