//! `CustomToolApi`: how a custom tool stages its own pending action.

use std::sync::Arc;

use crate::{PendingAction, PendingId, Session, ToolError};

/// The error of [`CustomToolApi::push_pending_action`] when the API is bound to no session
/// (the English seed's text).
pub const STORE_UNAVAILABLE_TEXT: &str =
    "Pending action store unavailable for custom tools in this runtime.";

/// The API handed to each custom tool, bound to one session.
#[derive(Debug, Clone, Default)]
pub struct CustomToolApi {
    session: Option<Arc<Session>>,
}

impl CustomToolApi {
    /// An API bound to `session`, or to nothing (then pushing fails).
    pub fn new(session: Option<Arc<Session>>) -> Self {
        Self { session }
    }

    /// The session pushes go to, if the API is bound to one.
    pub fn session(&self) -> Option<&Arc<Session>> {
        self.session.as_ref()
    }

    /// Stages `action` on the session's store, so `resolve` can apply or discard it.
    ///
    /// Without a session: `Pending action store unavailable for custom tools in this runtime.`
    pub fn push_pending_action(
        &self,
        action: impl PendingAction + 'static,
    ) -> Result<PendingId, ToolError> {
        let session =
            self.session.as_ref().ok_or_else(|| ToolError::new(STORE_UNAVAILABLE_TEXT))?;
        session.push_pending_action(Arc::new(action)).map_err(|err| ToolError::new(err.to_string()))
    }
}
