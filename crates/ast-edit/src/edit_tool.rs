//! `AstEditTool`: the `ast_edit` tool. It previews a rewrite and, when something matched,
//! stages an [`AstEditAction`] on the session for `resolve` to apply or discard.

use std::sync::Arc;

use serde_json::Value;
use staged_core::{CancelToken, PendingAction, Session, StoreError, Tool, ToolError};
use staged_journal::ConfinedRoot;
use staged_protocol::ToolResult;

use crate::{
    action::{AST_EDIT_TOOL_NAME, AstEditAction},
    details::PreviewDetails,
    engine::{EngineOptions, compute_preview_with},
    params::AstEditParams,
    render::{ArgNames, preview_text_named, take_preview_details},
};

const DESCRIPTION: &str = "Perform AST-aware code edits (structural refactoring) with ast-grep patterns.\n\
Each op rewrites every match of `pat` (metavariables: `$A` one node, `$$$ARGS` many) with the `out` template.\n\
The call only previews: files are not modified until you call `resolve` with action \"apply\" (or \"discard\"), which acts on the newest pending preview.\n\
To apply only some of the files, call `resolve` with action \"apply\" and `extra: {\"files\": [\"path\", ...]}` (paths as the preview shows them): only those whole files are written, and the rest stays pending as a new preview.\n\
Examples: {pat: \"oldApi($$$ARGS)\", out: \"newApi($$$ARGS)\"}; {pat: \"$A && $A()\", out: \"$A?.()\"}.";

/// The `ast_edit` tool.
#[derive(Debug, Clone)]
pub struct AstEditTool {
    session: Arc<Session>,
    workspace: ConfinedRoot,
    names: ArgNames,
    index: Option<crate::warm::WarmIndex>,
}

impl AstEditTool {
    /// A tool staging its previews on `session`, confined to `workspace`.
    pub fn new(session: Arc<Session>, workspace: ConfinedRoot) -> AstEditTool {
        AstEditTool { session, workspace, names: ArgNames::Tool, index: None }
    }

    /// The same tool, whose results and labels name the arguments that lift a cap (or take
    /// in more files) as `names` says: `staged ast-edit` names its flags.
    pub fn naming(mut self, names: ArgNames) -> AstEditTool {
        self.names = names;
        self
    }

    /// The same tool, listing files from a warm index (see [`crate::warm::WarmIndex`]): the same
    /// results, without walking and reading every file each time.
    pub fn with_index(mut self, index: crate::warm::WarmIndex) -> AstEditTool {
        self.index = Some(index);
        self
    }
}

#[async_trait::async_trait]
impl Tool for AstEditTool {
    fn name(&self) -> &str {
        AST_EDIT_TOOL_NAME
    }

    fn label(&self) -> &str {
        "AST Edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        AstEditParams::json_schema()
    }

    fn deferrable(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, cancel: &CancelToken) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        let params =
            AstEditParams::from_json(args).map_err(|err| ToolError::new(err.to_string()))?;
        let validated = params.validate().map_err(|err| err.to_tool_error())?;
        let workspace = self.workspace.clone();
        let index = self.index.clone();
        let worker_cancel = cancel.clone();
        // A preview needs each file's diff, not its contents: those are read again at apply.
        let preview = tokio::task::spawn_blocking(move || {
            compute_preview_with(
                &workspace,
                &validated,
                EngineOptions::preview(),
                index.as_ref(),
                Some(&worker_cancel),
            )
        })
        .await
        .map_err(|err| ToolError::new(staged_core::worker_failure("ast_edit", err)))?;
        let mut preview = match preview {
            Ok(p) => p,
            Err(crate::error::AstEditError::Cancelled) => {
                return Err(ToolError::aborted(cancel.reason()));
            }
            Err(err) => return Err(err.to_tool_error()),
        };
        let text = preview_text_named(&preview, self.names);
        let details = take_preview_details(&mut preview, self.names).into_value();
        if preview.total_replacements() == 0 {
            return Ok(ToolResult::text(text).with_details(details));
        }
        let action = Arc::new(AstEditAction::named(
            self.workspace.clone(),
            params,
            &preview,
            details,
            self.names,
        ));
        // The edits and diffs are in the text and details now; a big file's are big.
        drop(preview);
        // One pending preview per file, as the text tools stage them: a preview is computed
        // against the disk, so a second one of a file would be stale once the first applied.
        let id = self.session.push_exclusive(action.clone()).map_err(|err| match err {
            StoreError::Refused(why) => ToolError::new(why),
            other => ToolError::new(format!("Could not stage the preview: {other}")),
        })?;
        // A durable store has serialized the action and let it go: its details (a big diff)
        // come back without a copy. A store that keeps it shares it, so they are copied.
        let mut details = match Arc::try_unwrap(action) {
            Ok(action) => action.into_details(),
            Err(shared) => shared.details().cloned().unwrap_or_default(),
        };
        PreviewDetails::set_pending_id(&mut details, id.as_str());
        Ok(ToolResult::text(text).with_details(details))
    }
}
