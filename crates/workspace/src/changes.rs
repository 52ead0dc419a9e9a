//! Journaled writes for custom tools: [`ChangeStager`] stages a tool's
//! [`staged_edit::FileChanges`] under the tool's name, and the workspace rebuilds
//! and undoes those previews like the built-in tools' (the rehydrator and the undo handler
//! registered here, for each Rust custom tool's name).

use std::{collections::HashSet, sync::Arc};

use serde_json::Value;
use staged_core::{
    ActionError, CancelToken, CustomToolApi, LogEntry, PendingAction, Retirement, ToolError,
    UndoHandler,
};
use staged_edit::FileChanges;
use staged_journal::{ChangeAction, ChangeUndo, ConfinedRoot};
use staged_protocol::{ToolResult, lenient::Header};
use staged_store::{Rehydrator, StoredAction};

/// Stages a custom tool's file changes as one preview under its name (see
/// [`ToolContext::changes`](crate::ToolContext::changes)).
#[derive(Debug, Clone)]
pub struct ChangeStager {
    pub(crate) api: CustomToolApi,
    pub(crate) workspace: ConfinedRoot,
}

impl ChangeStager {
    /// Plans `changes` against the disk and stages them as one preview of the tool, which
    /// `resolve` applies all or none (each file checked again first), whose log entry keeps
    /// the diff and undoes; returns what a model sees (the preview header, the staged id and
    /// label, the diff), as `apply_patch` does. It reads the files on this thread.
    ///
    /// # Errors
    /// The [`FileChanges::stage`] errors (a path outside the workspace, a file that is not as
    /// described, no change), as the message a model sees; and
    /// `Pending action store unavailable for custom tools in this runtime.` without a session.
    pub fn stage(&self, changes: &FileChanges) -> Result<ToolResult, ToolError> {
        let session = self
            .api
            .session()
            .ok_or_else(|| ToolError::new(staged_core::STORE_UNAVAILABLE_TEXT))?;
        let source = self.api.source_tool_name().unwrap_or(CUSTOM_SOURCE);
        changes.stage(session, &self.workspace, source).map_err(|err| err.to_tool_error())
    }
}

/// The source of an action no tool name was given for.
const CUSTOM_SOURCE: &str = "custom_tool";

/// Whether `payload` is a [`ChangeAction`]'s staged by `tool`.
fn is_change_payload(payload: &Value, tool: &str) -> bool {
    let header = Header::of(payload);
    header.ops.0 && header.tool.0 == Some(tool)
}

/// The rehydrator of the Rust custom tool `name`: its [`ChangeStager`] previews are rebuilt as
/// [`ChangeAction`]s; anything else goes to `own`, the tool's own rehydrator, if it has one.
pub(crate) fn custom_rehydrator(
    workspace: &ConfinedRoot,
    name: &str,
    own: Option<Rehydrator>,
) -> Rehydrator {
    let (workspace, name) = (workspace.clone(), name.to_owned());
    Arc::new(move |stored: &StoredAction| {
        if is_change_payload(&stored.payload, &name) {
            return ChangeAction::from_payload(workspace.clone(), &name, &stored.payload)
                .map(|action| Arc::new(action) as Arc<dyn PendingAction>)
                .map_err(|err| err.to_string());
        }
        match &own {
            Some(own) => own(stored),
            None => Err(format!("no tool in this process can replay `{name}` previews")),
        }
    })
}

/// Undoes the entries of the Rust custom tools' [`ChangeStager`] previews (those that
/// recorded the journal's undo data); other entries of those tools have no undo.
pub(crate) struct CustomChangeUndo {
    pub(crate) names: HashSet<String>,
    pub(crate) undo: ChangeUndo,
}

#[async_trait::async_trait]
impl UndoHandler for CustomChangeUndo {
    fn accepts(&self, entry: &LogEntry) -> bool {
        self.names.contains(&entry.record.source_tool_name)
            && entry.record.undo.as_ref().is_some_and(|undo| Header::of(undo).version.present)
    }

    async fn undo(
        &self,
        entry: &LogEntry,
        retirement: &Retirement,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        self.undo.undo(entry, retirement, cancel).await
    }
}
