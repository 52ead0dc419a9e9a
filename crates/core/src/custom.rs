//! `CustomToolApi`: how a custom tool stages its own pending action.
//!
//! The API a workspace hands a registered tool knows the tool's name
//! ([`CustomToolApi::with_source_tool_name`]) and stamps it as the source tool of every action
//! that names none, so the rehydrator registered under that name finds the preview after a
//! restart without the name being given again.

use std::sync::Arc;

use staged_protocol::{JsonObject, ToolResult};

use crate::{
    ActionError, ActionFile, AppliedChange, CancelToken, FrontEnd, PendingAction, PendingId,
    Retirement, Session, ToolError, pending::DEFAULT_SOURCE_TOOL_NAME,
};

/// The error of [`CustomToolApi::push_pending_action`] when the API is bound to no session
/// (the English seed's text).
pub const STORE_UNAVAILABLE_TEXT: &str =
    "Pending action store unavailable for custom tools in this runtime.";

/// The API handed to each custom tool, bound to one session.
#[derive(Debug, Clone, Default)]
pub struct CustomToolApi {
    session: Option<Arc<Session>>,
    source_tool_name: Option<String>,
}

impl CustomToolApi {
    /// An API bound to `session`, or to nothing (then pushing fails).
    pub fn new(session: Option<Arc<Session>>) -> Self {
        Self { session, source_tool_name: None }
    }

    /// The API of the tool `name`: an action it pushes that names no source tool (its
    /// [`PendingAction::source_tool_name`] is the default `custom_tool`) is staged as `name`'s.
    /// `staged_workspace::WorkspaceSessionBuilder::tool` hands each tool such an API.
    #[must_use]
    pub fn with_source_tool_name(mut self, name: impl Into<String>) -> Self {
        self.source_tool_name = Some(name.into());
        self
    }

    /// The session pushes go to, if the API is bound to one.
    pub fn session(&self) -> Option<&Arc<Session>> {
        self.session.as_ref()
    }

    /// The tool name this API stamps on the actions it stages, if it was given one.
    pub fn source_tool_name(&self) -> Option<&str> {
        self.source_tool_name.as_deref()
    }

    /// Stages `action` on the session's store, so `resolve` can apply or discard it.
    ///
    /// Without a session: `Pending action store unavailable for custom tools in this runtime.`
    pub fn push_pending_action(
        &self,
        action: impl PendingAction + 'static,
    ) -> Result<PendingId, ToolError> {
        self.push_arc(Arc::new(action))
    }

    /// [`CustomToolApi::push_pending_action`] for an action already shared.
    pub fn push_arc(&self, action: Arc<dyn PendingAction>) -> Result<PendingId, ToolError> {
        let session =
            self.session.as_ref().ok_or_else(|| ToolError::new(STORE_UNAVAILABLE_TEXT))?;
        let action = match &self.source_tool_name {
            Some(name) => stamp_source_tool_name(action, name),
            None => action,
        };
        session.push_pending_action(action).map_err(|err| ToolError::new(err.to_string()))
    }
}

/// `action` as the tool `name`'s when it names no source tool (its
/// [`PendingAction::source_tool_name`] is the default `custom_tool`); otherwise `action` itself.
/// What [`CustomToolApi`] does to the actions it stages, and a workspace to the ones a custom
/// tool's rehydrator rebuilds, so both are logged, undone and rehydrated as that tool's.
pub fn stamp_source_tool_name(
    action: Arc<dyn PendingAction>,
    name: &str,
) -> Arc<dyn PendingAction> {
    if action.source_tool_name() == DEFAULT_SOURCE_TOOL_NAME {
        Arc::new(Stamped { inner: action, source: name.to_owned(), payload: None })
    } else {
        action
    }
}

/// `action` with `payload` as its [`PendingAction::payload`], the replayable record a durable
/// store keeps and the source tool's rehydrator rebuilds it from; everything else is
/// `action`'s. For a producer whose action type carries no payload of its own.
pub fn with_payload(
    action: Arc<dyn PendingAction>,
    payload: serde_json::Value,
) -> Arc<dyn PendingAction> {
    let source = action.source_tool_name().to_owned();
    Arc::new(Stamped { inner: action, source, payload: Some(payload) })
}

/// An action staged under its tool's name (and with a payload of its own, if given);
/// everything else is the inner action's.
struct Stamped {
    inner: Arc<dyn PendingAction>,
    source: String,
    payload: Option<serde_json::Value>,
}

#[async_trait::async_trait]
impl PendingAction for Stamped {
    fn label(&self) -> &str {
        self.inner.label()
    }

    fn source_tool_name(&self) -> &str {
        &self.source
    }

    fn details(&self) -> Option<&serde_json::Value> {
        self.inner.details()
    }

    fn payload(&self) -> Option<serde_json::Value> {
        self.payload.clone().or_else(|| self.inner.payload())
    }

    async fn apply(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        self.inner.apply(reason, extra, cancel).await
    }

    async fn apply_retiring(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
        retirement: &Retirement,
    ) -> Result<ToolResult, ActionError> {
        self.inner.apply_retiring(reason, extra, cancel, retirement).await
    }

    fn staged_by(&self) -> Option<FrontEnd> {
        self.inner.staged_by()
    }

    fn needs_person(&self) -> Option<&str> {
        self.inner.needs_person()
    }

    fn applies_in_part(&self) -> bool {
        self.inner.applies_in_part()
    }

    fn files(&self) -> Vec<ActionFile> {
        self.inner.files()
    }

    fn applied_change(&self, result: &ToolResult) -> Option<AppliedChange> {
        self.inner.applied_change(result)
    }

    async fn reject(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
    ) -> Result<Option<ToolResult>, ActionError> {
        self.inner.reject(reason, extra).await
    }
}
