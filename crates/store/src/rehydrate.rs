//! Rehydration: turning a stored entry back into a live `PendingAction`.

use std::{collections::HashMap, fmt, sync::Arc, time::SystemTime};

use staged_core::{ActionError, CancelToken, PendingAction, PendingId};
use staged_protocol::{JsonObject, ToolResult};

/// An entry as read from the database, handed to its tool's rehydrator.
#[derive(Debug, Clone)]
pub struct StoredAction {
    /// The entry's id.
    pub id: PendingId,
    /// The tool that staged it.
    pub source_tool_name: String,
    /// Its label.
    pub label: String,
    /// When it was staged.
    pub created_at: SystemTime,
    /// Its details, if it had any.
    pub details: Option<serde_json::Value>,
    /// The replayable payload its tool wrote (`null` for an action staged without one).
    pub payload: serde_json::Value,
}

/// Rebuilds a live action from a stored one; an `Err` says why it cannot be.
pub type Rehydrator =
    Arc<dyn Fn(&StoredAction) -> Result<Arc<dyn PendingAction>, String> + Send + Sync>;

/// Rebuilds the stored actions it recognises by their payload rather than their tool name:
/// `None` when the entry is not its own (a plugin host, whose tool names are known only once
/// its plugins run, claims its entries this way).
pub type FallbackRehydrator =
    Arc<dyn Fn(&StoredAction) -> Option<Result<Arc<dyn PendingAction>, String>> + Send + Sync>;

/// The rehydrators of one process, by source tool name, and the fallbacks asked about entries
/// no named one claims.
#[derive(Clone, Default)]
pub struct Rehydrators {
    by_tool: HashMap<String, Rehydrator>,
    fallbacks: Vec<FallbackRehydrator>,
}

impl fmt::Debug for Rehydrators {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut tools: Vec<_> = self.by_tool.keys().collect();
        tools.sort();
        f.debug_struct("Rehydrators")
            .field("tools", &tools)
            .field("fallbacks", &self.fallbacks.len())
            .finish()
    }
}

impl Rehydrators {
    /// No rehydrators: every entry reads back as an `UnavailableAction`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the rehydrator for `source_tool_name`, replacing any earlier one.
    pub fn register(&mut self, source_tool_name: impl Into<String>, rehydrator: Rehydrator) {
        self.by_tool.insert(source_tool_name.into(), rehydrator);
    }

    /// Registers a fallback, asked (in registration order) about entries no rehydrator
    /// registered by name claims.
    pub fn register_fallback(&mut self, rehydrator: FallbackRehydrator) {
        self.fallbacks.push(rehydrator);
    }

    /// Whether a rehydrator is registered for `source_tool_name`.
    pub fn contains(&self, source_tool_name: &str) -> bool {
        self.by_tool.contains_key(source_tool_name)
    }

    /// A live action for `stored`. Without a rehydrator, or when it fails, the action can still
    /// be listed and discarded, and its apply explains why it cannot run.
    pub fn rehydrate(&self, stored: &StoredAction) -> Arc<dyn PendingAction> {
        let res = match self.by_tool.get(&stored.source_tool_name) {
            Some(rehydrator) => Some(rehydrator(stored)),
            None => self.fallbacks.iter().find_map(|fallback| fallback(stored)),
        };
        let why = match res {
            Some(Ok(action)) => return action,
            Some(Err(err)) => err,
            None => {
                format!("no tool in this process can replay `{}` previews", stored.source_tool_name)
            }
        };
        Self::unavailable(stored, why)
    }

    /// The action for an entry that cannot be replayed, for the reason `why`.
    pub(crate) fn unavailable(stored: &StoredAction, why: String) -> Arc<dyn PendingAction> {
        Arc::new(UnavailableAction { stored: stored.clone(), why })
    }
}

/// A stored entry that this process cannot replay. It lists and discards normally; its apply
/// fails with an error naming the reason, and changes nothing.
#[derive(Debug, Clone)]
pub(crate) struct UnavailableAction {
    stored: StoredAction,
    why: String,
}

#[async_trait::async_trait]
impl PendingAction for UnavailableAction {
    fn label(&self) -> &str {
        &self.stored.label
    }

    fn source_tool_name(&self) -> &str {
        &self.stored.source_tool_name
    }

    fn details(&self) -> Option<&serde_json::Value> {
        self.stored.details.as_ref()
    }

    fn payload(&self) -> Option<serde_json::Value> {
        Some(self.stored.payload.clone())
    }

    async fn apply(
        &self,
        _reason: &str,
        _extra: Option<&JsonObject>,
        _cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        Err(ActionError::other(format!(
            "cannot apply `{}` here: {}; discard it, or resolve it where its tool runs",
            self.stored.label, self.why
        )))
    }
}
