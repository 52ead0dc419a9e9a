//! Staging a text preview: the action on the stack (one pending preview per file), and the
//! text and details the model gets back.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use staged_core::{
    CancelToken, FrontEnd, PendingAction, Session, StoreError, ToolError, ToolResult,
};
use staged_journal::{ChangeAction, ChangeDetails, ChangedFile, ConfinedRoot, FileOp, label_of};

use crate::EditError;

/// The first line of every text preview, as `ast_edit`'s.
pub const PREVIEW_HEADER: &str = "Preview only: files are NOT modified yet. Call `resolve` with action \"apply\" to write these changes, or action \"discard\" to drop them.";

/// The model-facing text shows at most this many lines of the diff; the details hold it whole.
const DIFF_LINES_SHOWN: usize = 400;

/// A text tool's `execute`: parses `args` as `P`, then, off the async runtime, plans the
/// change against the disk and stages it on `session`. `tool` names the worker in the error
/// when that thread fails.
pub(crate) async fn execute<P: DeserializeOwned + Send + 'static>(
    tool: &'static str,
    session: &Arc<Session>,
    workspace: &ConfinedRoot,
    args: Value,
    cancel: &CancelToken,
    plan: fn(&ConfinedRoot, &P) -> Result<Staging, EditError>,
) -> Result<ToolResult, ToolError> {
    if cancel.is_cancelled() {
        return Err(ToolError::aborted(cancel.reason()));
    }
    let params: P = serde_json::from_value(args)
        .map_err(|err| EditError::InvalidArguments(err.to_string()).to_tool_error())?;
    let workspace = workspace.clone();
    let session = session.clone();
    tokio::task::spawn_blocking(move || {
        plan(&workspace, &params).and_then(|staging| staging.stage(&session, &workspace))
    })
    .await
    .map_err(|err| ToolError::new(format!("{tool} worker failed: {err}")))?
    .map_err(|err| err.to_tool_error())
}

/// A preview ready to stage: what it does, file by file, and its diff.
#[derive(Debug)]
pub(crate) struct Staging {
    pub(crate) source: &'static str,
    pub(crate) ops: Vec<FileOp>,
    pub(crate) files: Vec<ChangedFile>,
    pub(crate) diff: String,
}

impl Staging {
    /// Pushes the preview, unless a pending preview already writes one of its files, and
    /// returns what the model sees.
    pub(crate) fn stage(
        self,
        session: &Session,
        workspace: &ConfinedRoot,
    ) -> Result<ToolResult, EditError> {
        let label = label_of(self.source, &self.files);
        let details = ChangeDetails {
            label: label.clone(),
            files: self.files,
            applied: false,
            diff: self.diff,
            pending_id: None,
            remainder: None,
            staged_by: match session.front_end() {
                hook @ FrontEnd::Hook(_) => Some(hook.to_string()),
                _ => None,
            },
            needs_person: session.needs_person(),
        };
        let action = Arc::new(ChangeAction::new(
            workspace.clone(),
            self.source,
            label.clone(),
            self.ops,
            details,
        ));
        let id =
            session.push_exclusive(action.clone() as Arc<dyn PendingAction>).map_err(|err| {
                match err {
                    StoreError::Refused(why) => EditError::Stage(why),
                    other => EditError::Stage(format!("Could not stage the preview: {other}")),
                }
            })?;
        let mut details = action.change_details().clone();
        details.pending_id = Some(id.to_string());
        let text = preview_text(&id.to_string(), &label, &details.diff);
        Ok(ToolResult::text(text).with_details(details.to_value()))
    }
}

/// The preview text: the header, the staged id and label, and the diff (its first lines).
pub(crate) fn preview_text(id: &str, label: &str, diff: &str) -> String {
    let mut res = format!("{PREVIEW_HEADER}\n\nStaged {id}: {label}\n\n");
    let mut shown = 0;
    let mut rest = 0;
    for line in diff.split_inclusive('\n') {
        if shown < DIFF_LINES_SHOWN {
            res.push_str(line);
            shown += 1;
        } else {
            rest += 1;
        }
    }
    if rest > 0 {
        res.push_str(&format!(
            "... {rest} more diff line{} (the whole diff is in the result's details, and `staged show {id}` prints it)\n",
            if rest == 1 { "" } else { "s" }
        ));
    }
    res.truncate(res.trim_end().len());
    res
}
