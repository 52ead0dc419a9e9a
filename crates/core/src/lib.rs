//! The stage-then-resolve runtime.
//!
//! A tool that wants an explicit decision before it changes anything *stages* a
//! [`PendingAction`] on a [`PendingActionStore`]. The hidden `resolve` tool ([`ResolveTool`])
//! then applies or discards the newest one. The agent loop's side (the resolve gate, the hard
//! directive queue and the standing handler) lives in `staged-agent`, and reaches `resolve`
//! through [`ResolveRoutes`].
//!
//! # Library API
//!
//! A custom tool is written against `PendingAction`, `Tool` and `Session`; a closure's action
//! is a `FnPendingAction`, whose callbacks take an `ApplyInput` (and, with
//! `FnPendingAction::with_reject`, a `RejectInput`). A tool's error says what kind it is
//! (`ToolErrorKind`), and a host that tells `resolve`'s outcomes apart compares its texts
//! (`BLANK_REASON_TEXT`, `NOTHING_TO_UNDO_TEXT`, `NOTHING_TO_REDO_TEXT`, the contract's).
//!
//! # Example
//! ```
//! use std::sync::Arc;
//! use staged_core::{CancelToken, FnPendingAction, InMemoryStore, ResolveOptions, Session};
//! use staged_protocol::{ResolveParams, ToolResult};
//!
//! # futures::executor::block_on(async {
//! let session = Session::new(Arc::new(InMemoryStore::new()));
//! session.push_pending_action(Arc::new(FnPendingAction::new(
//!     "Rename: 3 files",
//!     |input| async move { Ok(ToolResult::text(format!("Renamed. Reason: {}", input.reason))) },
//! ))).unwrap();
//!
//! let params = ResolveParams::apply("Names match");
//! let res = session.resolve(params, ResolveOptions::default(), &CancelToken::new()).await.unwrap();
//! assert_eq!(res.text_content(), "Renamed. Reason: Names match");
//! assert!(session.store().is_empty().unwrap());
//! # });
//! ```

#![deny(missing_docs)]

mod cancel;
mod custom;
mod error;
mod log;
mod memory_store;
mod pending;
mod progress;
mod resolve;
mod retire;
mod schema;
mod session;
mod store;
mod tools;
mod worker;

pub use crate::{
    cancel::CancelToken,
    custom::{CustomToolApi, STORE_UNAVAILABLE_TEXT, stamp_source_tool_name, with_payload},
    error::{ActionError, ToolError, ToolErrorKind},
    log::{
        AppliedChange, DEFAULT_LOG_KEEP, FileChange, FrontEnd, LogAction, LogEntry, LogOutcome,
        LogRecord, ResolveLog, Reversal, UndoHandler, UndoLock, remainder_text,
    },
    memory_store::InMemoryStore,
    pending::{ActionFile, ApplyInput, FnPendingAction, PendingAction, RejectInput},
    progress::{Phase, Progress},
    resolve::{
        BLANK_REASON_TEXT, MAX_LABEL_CHARS, MAX_REASON_CHARS, NO_PENDING_APPLY_TEXT,
        RESOLVE_DESCRIPTION, RESOLVE_REMINDER, RESOLVE_TOOL_NAME, ResolveHandler, ResolveRoutes,
        ResolveTool, run_resolve_invocation,
    },
    retire::Retirement,
    schema::parameters_schema,
    session::{
        NOTHING_TO_REDO_TEXT, NOTHING_TO_UNDO_TEXT, ResolveOptions, Session, UndoOptions,
        needs_person_text,
    },
    store::{
        Claim, ErrorCause, PendingActionStore, PendingEntry, PendingId, PendingSummary, PushCheck,
        StoreError, StoreEvent, StoreListener, StoreListeners, Subscription, pending_id,
    },
    tools::{Tool, assemble_tools},
    worker::worker_failure,
};
