//! `PendingAction`: a staged change waiting for `resolve`, and `FnPendingAction`, one backed by
//! closures.
//!
//! The trait is async and object-safe so that an action may be a Rust closure, a record read
//! back from a durable store, or a proxy for a plugin in another process.

use std::{fmt, future::Future, sync::Arc};

use futures::future::BoxFuture;
use staged_protocol::{JsonObject, ToolResult};

use crate::{ActionError, CancelToken, Retirement};

/// The source tool name of an action that does not name one.
pub(crate) const DEFAULT_SOURCE_TOOL_NAME: &str = "custom_tool";

/// A staged change that `resolve` applies or discards, exactly once.
///
/// `apply` may be called again after it failed (the action stays pending), but never twice
/// concurrently and never again after it succeeded: the store's claim guarantees that.
#[async_trait::async_trait]
pub trait PendingAction: Send + Sync {
    /// A short human summary, e.g. `AST Edit: 2 replacements in 1 file`.
    fn label(&self) -> &str;

    /// The tool that staged this action.
    fn source_tool_name(&self) -> &str {
        DEFAULT_SOURCE_TOOL_NAME
    }

    /// Optional details describing the staged change (for listings and renderers).
    fn details(&self) -> Option<&serde_json::Value> {
        None
    }

    /// The replayable payload a durable store persists, from which the source tool's
    /// rehydrator rebuilds a live action in another process. `None` means the action lives
    /// only in this process.
    fn payload(&self) -> Option<serde_json::Value> {
        None
    }

    /// Makes the change. `reason` and `extra` are informative and should not change what is
    /// written. An action that sees `cancel` before it starts writing returns
    /// [`ActionError::Cancelled`] and changes nothing.
    async fn apply(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError>;

    /// [`PendingAction::apply`] for an action that takes its entry off the stack itself, at
    /// its commit point (see [`Retirement`]): it calls [`Retirement::retire`] once its writes
    /// are in place and before it deletes what lets a crash-recovery find them. The default
    /// runs `apply`, and `resolve` removes the entry after it returned.
    async fn apply_retiring(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
        retirement: &Retirement,
    ) -> Result<ToolResult, ActionError> {
        let _ = retirement;
        self.apply(reason, extra, cancel).await
    }

    /// The front end that staged this action, when it was not a model's tool call: a client's
    /// hook ([`FrontEnd::Hook`](crate::FrontEnd::Hook)) that held back an edit of the client's
    /// own tools. When that client's model then resolves it over MCP, the log records the
    /// hook as the front end, so `staged log` tells a gated edit of Claude Code's from a call
    /// of `mcp__staged__ast_edit`.
    fn staged_by(&self) -> Option<crate::FrontEnd> {
        None
    }

    /// Why only a person may apply this action, if only a person may: it was staged while its
    /// client would have asked the person (`Claude Code is in its default permission mode,
    /// ...`). A model's `resolve` then refuses to apply it and names `staged review`; a discard,
    /// and an apply from the CLI, `staged review` or an approval the person gave, go through
    /// ([`crate::ResolveOptions::by_person`]).
    fn needs_person(&self) -> Option<&str> {
        None
    }

    /// Whether this action can apply some of its files and leave the rest pending, when
    /// `resolve`'s `extra` names them under `files` (as `ast_edit`'s previews do). Front ends
    /// that offer "apply only these files" check it first: an action that says `false` would
    /// apply everything.
    fn applies_in_part(&self) -> bool {
        false
    }

    /// The workspace files this action writes, for the front ends that list them (the files to
    /// mark for a partial apply) and for the producers that stage one preview per file (see
    /// [`Session::push_exclusive`](crate::Session::push_exclusive)). Empty when it does not
    /// say (a plugin's preview).
    fn files(&self) -> Vec<ActionFile> {
        Vec::new()
    }

    /// What a successful apply that did not retire itself wrote, for the resolve log: the
    /// diff, each file's hashes and the data its source tool's
    /// [`UndoHandler`](crate::UndoHandler) needs. `result` is what the apply returned. The
    /// default records none of it (the log then keeps the preview's diff). A remainder
    /// returned here is ignored: leaving part of a preview pending needs the journaled path
    /// ([`Retirement::prepare`]).
    fn applied_change(&self, result: &ToolResult) -> Option<crate::AppliedChange> {
        let _ = result;
        None
    }

    /// Cleans up after a discard. `Ok(Some(result))` replaces the default
    /// `Discarded: <label>. Reason: <reason>` result.
    async fn reject(
        &self,
        _reason: &str,
        _extra: Option<&JsonObject>,
    ) -> Result<Option<ToolResult>, ActionError> {
        Ok(None)
    }
}

/// One file a pending action writes, as a front end lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionFile {
    /// The path, relative to the workspace root, `/`-separated (for a move, where it goes).
    pub path: String,
    /// For a move: where the file was.
    pub from: Option<String>,
    /// What happens to it, for a person: `3 replacements`, `new file, 40 lines`, `deleted`.
    pub summary: String,
}

impl ActionFile {
    /// The paths this file's change writes: its path, and a move's source.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.from.as_deref())
    }
}

/// What an [`FnPendingAction`]'s apply closure receives.
#[derive(Debug, Clone)]
pub struct ApplyInput {
    /// The reason passed to `resolve`.
    pub reason: String,
    /// The `extra` object passed to `resolve`.
    pub extra: Option<JsonObject>,
    /// The resolve call's cancel signal.
    pub cancel: CancelToken,
}

/// What an [`FnPendingAction`]'s reject closure receives.
#[derive(Debug, Clone)]
pub struct RejectInput {
    /// The reason passed to `resolve`.
    pub reason: String,
    /// The `extra` object passed to `resolve`.
    pub extra: Option<JsonObject>,
}

type ApplyFn =
    dyn Fn(ApplyInput) -> BoxFuture<'static, Result<ToolResult, ActionError>> + Send + Sync;
type RejectFn = dyn Fn(RejectInput) -> BoxFuture<'static, Result<Option<ToolResult>, ActionError>>
    + Send
    + Sync;

/// A pending action backed by closures: the custom-tool API's building block.
///
/// Without a payload it lives only in the process that staged it: a durable store keeps it
/// listed, and another process (or this one after a restart) reads it back as unavailable,
/// so it can only be discarded there. With [`FnPendingAction::with_payload`], the source
/// tool's rehydrator (registered with `staged_workspace::WorkspaceSessionBuilder::tool`)
/// rebuilds it from the payload anywhere.
///
/// # Example
/// ```
/// use staged_core::{FnPendingAction, PendingAction};
/// use staged_protocol::ToolResult;
///
/// let action = FnPendingAction::new("Batch rename: 2 files", |input| async move {
///     Ok(ToolResult::text(format!("Applied batch rename. Reason: {}", input.reason)))
/// })
/// .with_source_tool_name("batch_rename_preview")
/// .with_reject(|input| async move {
///     Ok(Some(ToolResult::text(format!("Discarded batch rename. Reason: {}", input.reason))))
/// });
/// assert_eq!(action.source_tool_name(), "batch_rename_preview");
/// ```
#[derive(Clone)]
pub struct FnPendingAction {
    label: String,
    source_tool_name: String,
    details: Option<serde_json::Value>,
    payload: Option<serde_json::Value>,
    apply: Arc<ApplyFn>,
    reject: Option<Arc<RejectFn>>,
}

impl FnPendingAction {
    /// An action with the given label, source `custom_tool`, and apply closure.
    pub fn new<F, Fut>(label: impl Into<String>, apply: F) -> Self
    where
        F: Fn(ApplyInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ActionError>> + Send + 'static,
    {
        Self {
            label: label.into(),
            source_tool_name: DEFAULT_SOURCE_TOOL_NAME.to_owned(),
            details: None,
            payload: None,
            apply: Arc::new(move |input| Box::pin(apply(input))),
            reject: None,
        }
    }

    /// Sets the source tool name.
    #[must_use]
    pub fn with_source_tool_name(mut self, name: impl Into<String>) -> Self {
        self.source_tool_name = name.into();
        self
    }

    /// Sets the details.
    #[must_use]
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Sets the replayable payload a durable store persists; the source tool's rehydrator
    /// turns it back into a live action in another process.
    #[must_use]
    pub fn with_payload(mut self, payload: serde_json::Value) -> Self {
        self.payload = Some(payload);
        self
    }

    /// Sets the reject closure.
    #[must_use]
    pub fn with_reject<F, Fut>(mut self, reject: F) -> Self
    where
        F: Fn(RejectInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<ToolResult>, ActionError>> + Send + 'static,
    {
        self.reject = Some(Arc::new(move |input| Box::pin(reject(input))));
        self
    }
}

impl fmt::Debug for FnPendingAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnPendingAction")
            .field("label", &self.label)
            .field("source_tool_name", &self.source_tool_name)
            .field("has_payload", &self.payload.is_some())
            .field("has_reject", &self.reject.is_some())
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl PendingAction for FnPendingAction {
    fn label(&self) -> &str {
        &self.label
    }

    fn source_tool_name(&self) -> &str {
        &self.source_tool_name
    }

    fn details(&self) -> Option<&serde_json::Value> {
        self.details.as_ref()
    }

    fn payload(&self) -> Option<serde_json::Value> {
        self.payload.clone()
    }

    async fn apply(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        (self.apply)(ApplyInput {
            reason: reason.to_owned(),
            extra: extra.cloned(),
            cancel: cancel.clone(),
        })
        .await
    }

    async fn reject(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
    ) -> Result<Option<ToolResult>, ActionError> {
        match &self.reject {
            Some(reject) => {
                reject(RejectInput { reason: reason.to_owned(), extra: extra.cloned() }).await
            }
            None => Ok(None),
        }
    }
}
