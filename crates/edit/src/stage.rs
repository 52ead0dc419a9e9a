//! Staging a text preview: the action on the stack (one pending preview per file), and the
//! text and details the model gets back.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use staged_core::{CancelToken, FrontEnd, PendingAction, Session, StoreError, ToolError};
use staged_journal::{
    ChangeAction, ChangeDetails, ChangeKind, ChangedFile, ConfinedRoot, DiffHeader, Edit, FileOp,
    label_of,
};
use staged_protocol::ToolResult;

use crate::{
    EditError,
    patch_tool::diff,
    text::{line_counts, size},
};

/// The first line of every text preview, as `ast_edit`'s.
pub const PREVIEW_HEADER: &str = "Preview only: files are NOT modified yet. Call `resolve` with action \"apply\" to write these changes, or action \"discard\" to drop them.";

/// The model-facing text shows at most this many lines of the diff; the details hold it whole.
const DIFF_LINES_SHOWN: usize = 400;

/// The most a preview holds, in bytes: its diff, and what its edits remove and add (a new
/// file's text). A preview's change is kept in the stack, shown in the diff and sent whole,
/// each a few times over; past this, one call would take gigabytes (a `replace_all` of `a`
/// by a thousand bytes in a 2 MB file took 7.9 GB). [`EditError::TooLarge`] names the sizes.
pub(crate) const MAX_PREVIEW_BYTES: usize = 32 << 20;

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
    .map_err(|err| ToolError::new(staged_core::worker_failure(tool, err)))?
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
        let source = self.source;
        self.stage_as(session, workspace, source, None)
    }

    /// [`Staging::stage`] as the tool `source`'s preview, labelled `label` (by default as
    /// `source`'s previews are).
    pub(crate) fn stage_as(
        self,
        session: &Session,
        workspace: &ConfinedRoot,
        source: &str,
        label: Option<String>,
    ) -> Result<ToolResult, EditError> {
        self.check_size()?;
        let label = label.unwrap_or_else(|| label_of(source, &self.files));
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
            source,
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

impl Staging {
    /// Stages an update of the file `path` (as the diff names it) from its text `old`, read
    /// with `fingerprint`, by `edits`, its mode kept: the diff, the file's line in the details
    /// (`+A -R`, after `note` when there is one: `replaced whole, +1 -1`) and the operation.
    pub(crate) fn push_update(
        &mut self,
        path: String,
        old: &str,
        fingerprint: String,
        edits: Vec<Edit>,
        note: Option<&str>,
    ) -> Result<(), EditError> {
        let (added, removed) = line_counts(&edits);
        self.diff.push_str(&diff(DiffHeader::Modify { path: &path }, old, &edits)?);
        let counts = format!("+{added} -{removed}");
        self.files.push(ChangedFile {
            path: path.clone(),
            from: None,
            change: ChangeKind::Updated,
            summary: note.map_or_else(|| counts.clone(), |note| format!("{note}, {counts}")),
            lines_added: added,
            lines_removed: removed,
        });
        self.ops.push(FileOp::Update { path, fingerprint, edits, executable: None });
        Ok(())
    }

    /// Refuses a preview larger than [`MAX_PREVIEW_BYTES`], before it is copied into the
    /// stack, the details and the answer.
    fn check_size(&self) -> Result<(), EditError> {
        let changed = self.ops.iter().fold(0usize, |sum, op| {
            sum.saturating_add(match op {
                FileOp::Create { content, .. } => content.len(),
                FileOp::Update { edits, .. } | FileOp::Move { edits, .. } => edits
                    .iter()
                    .fold(0usize, |n, e| n.saturating_add(e.before.len() + e.after.len())),
                FileOp::Delete { .. } => 0,
            })
        });
        if changed <= MAX_PREVIEW_BYTES && self.diff.len() <= MAX_PREVIEW_BYTES {
            return Ok(());
        }
        let what = match self.ops.as_slice() {
            [op] => op.path().to_owned(),
            ops => format!("{} files", ops.len()),
        };
        Err(EditError::TooLarge(format!(
            "its edits of {what} would remove and add {} and its diff would be {}",
            size(changed),
            size(self.diff.len())
        )))
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

#[cfg(test)]
mod tests {
    use staged_journal::Edit;

    use super::*;

    fn staging(ops: Vec<FileOp>, diff: String) -> Staging {
        Staging { source: "write", ops, files: Vec::new(), diff }
    }

    #[test]
    fn a_preview_larger_than_the_cap_is_refused_with_its_sizes() {
        let update = |after: String| FileOp::Update {
            path: "a.txt".to_owned(),
            fingerprint: String::new(),
            edits: vec![Edit { start: 0, before: "a\n".to_owned(), after }],
            executable: None,
        };
        assert!(staging(vec![update("b\n".to_owned())], "diff".to_owned()).check_size().is_ok());
        let at_cap = "x".repeat(MAX_PREVIEW_BYTES - 2);
        assert!(staging(vec![update(at_cap.clone())], at_cap).check_size().is_ok());
        let err = staging(vec![update("x".repeat(MAX_PREVIEW_BYTES))], "diff".to_owned())
            .check_size()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Refusing to stage this change: its edits of a.txt would remove and add 32 MiB and its diff would be 1 KiB, and a preview holds at most 32 MiB of changes (they are kept, shown and sent whole). Make the change in smaller parts."
        );
        // A small edit whose diff is large (a change in a huge one-line file).
        let create = FileOp::Create {
            path: "b.txt".to_owned(),
            content: "b\n".to_owned(),
            executable: false,
        };
        let err = staging(vec![update("b\n".to_owned()), create], "x".repeat(33 << 20))
            .check_size()
            .unwrap_err();
        assert!(
            err.to_string().starts_with("Refusing to stage this change: its edits of 2 files would remove and add 1 KiB and its diff would be 33 MiB,"),
            "{err}"
        );
    }
}
