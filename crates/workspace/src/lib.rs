//! Opens a workspace's durable staged session.
//!
//! Every front end (the `staged` CLI, the MCP server) starts here, so they all see the same
//! pending stack and follow the same start-up order: find the root, finish or roll back any
//! apply a crash interrupted, open the SQLite stack with each built-in tool's rehydrator, and
//! build the tools.
//!
//! Custom tools join through [`WorkspaceSession::builder`]: each is registered with the
//! rehydrator for its source tool name, so a preview it staged survives a restart and can be
//! resolved from another process, like an `ast_edit` preview. The name is given once, at
//! registration: the tool's [`ToolContext::api`] stages its actions under it.
//!
//! # A custom tool in Rust
//! A tool registered with [`WorkspaceSessionBuilder::durable_tool`] stages the action of a
//! typed payload; the same function makes it again from the payload after a restart.
//! ```
//! use std::sync::Arc;
//! use serde::{Deserialize, Serialize};
//! use staged_workspace::core::{CancelToken, FnPendingAction, ResolveOptions, Tool, ToolError};
//! use staged_workspace::protocol::{ResolveParams, ToolResult};
//! use staged_workspace::{ConfinedRoot, Stager, WorkspaceSession};
//!
//! /// The payload: what the preview will do.
//! #[derive(Serialize, Deserialize)]
//! struct Greeting {
//!     name: String,
//! }
//!
//! /// The action of a payload, in the process that staged it or any other.
//! fn greeting(_: &ConfinedRoot, greeting: Greeting) -> FnPendingAction {
//!     let text = format!("Hello, {}!", greeting.name);
//!     FnPendingAction::new(format!("Greet {}", greeting.name), move |_| {
//!         let text = text.clone();
//!         async move { Ok(ToolResult::text(text)) }
//!     })
//! }
//!
//! /// Stages a greeting; applying it returns the greeting.
//! struct Greet(Stager<Greeting>);
//!
//! #[staged_workspace::async_trait]
//! impl Tool for Greet {
//!     fn name(&self) -> &str { self.0.tool_name() }
//!     fn label(&self) -> &str { "Greet" }
//!     fn description(&self) -> &str { "Stages a greeting." }
//!     fn parameters(&self) -> serde_json::Value {
//!         serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}})
//!     }
//!     async fn execute(&self, args: serde_json::Value, _: &CancelToken) -> Result<ToolResult, ToolError> {
//!         let name = args["name"].as_str().unwrap_or("world").to_owned();
//!         let id = self.0.stage(Greeting { name })?;
//!         Ok(ToolResult::text(format!("Staged {id}. Call resolve to apply or discard.")))
//!     }
//! }
//!
//! fn open(root: &std::path::Path) -> WorkspaceSession {
//!     WorkspaceSession::builder()
//!         .durable_tool("greet", greeting, |stager, _| Arc::new(Greet(stager)) as Arc<dyn Tool>)
//!         .open(root)
//!         .unwrap()
//! }
//!
//! # futures::executor::block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let first = open(dir.path());
//! let greet = first.custom_tools()[0].clone();
//! let staged = greet.execute(serde_json::json!({"name": "Ada"}), &CancelToken::new()).await.unwrap();
//! assert!(staged.text_content().starts_with("Staged pending-action:greet:0."));
//! drop((greet, first));
//!
//! // Another process, or this one after a restart: the same `greeting` rebuilds the action.
//! let second = open(dir.path());
//! let (params, options) = (ResolveParams::apply("say it"), ResolveOptions::default());
//! let res = second.session().resolve(params, options, &CancelToken::new()).await.unwrap();
//! assert_eq!(res.text_content(), "Hello, Ada!");
//! # });
//! ```
//!
//! [`WorkspaceSessionBuilder::tool`] registers a tool with a rehydrator of its own (reading a
//! [`StoredAction`]'s payload as JSON), for a tool whose actions are not made from one type.

#![deny(missing_docs)]

mod builder;
mod changes;
mod deferred;
mod durable;
mod error;
mod loading;
mod open;
pub mod sessions;
mod workspace_session;

/// The Rust blocks of the README and of `docs/`, compiled and run as this crate's doctests
/// (`tests/docs_compiled.rs` checks that every Markdown file with a Rust block is here).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
#[doc = include_str!("../../../docs/contract/plugins.md")]
#[doc = include_str!("../../../docs/guide/library.md")]
pub struct DocsCompiled;

/// `staged-core`, the runtime every custom tool is written against.
pub use staged_core as core;

/// `staged-protocol`, the shapes a tool returns and `resolve` takes (`ToolResult`,
/// `ResolveParams`).
pub use staged_protocol as protocol;

/// The attribute a [`staged_core::Tool`] implementation needs:
/// `#[staged_workspace::async_trait]`.
pub use async_trait::async_trait;

pub use staged_ast_edit::{
    ArgNames, AstEditParams, AstGrepParams, DEFAULT_MAX_FILES, DetailsError, LangRequiredDetails,
    Op, PreviewDetails, StaleDetails, Strictness, WarmIndex, compile_glob,
};
pub use staged_journal::{
    ChangeDetails, ConfinedRoot, ModelAccess, RecoveryReport, STATE_DIR_NAME,
    quote as quote_diff_path,
};
pub use staged_store::{FallbackRehydrator, Rehydrator, StoredAction, Unnamed};

pub use staged_edit::{ApplyPatchParams, EditItem, EditParams, FileChanges, WriteParams};

pub(crate) use crate::loading::{BUILTIN_TOOL_NAMES, fold_tool_name};
pub use crate::{
    builder::{ToolContext, WorkspaceSessionBuilder},
    changes::ChangeStager,
    durable::Stager,
    error::{Error, OpenError, Result},
    loading::LoadError,
    open::{find_root, locate_root},
    workspace_session::WorkspaceSession,
};
