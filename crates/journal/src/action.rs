//! `ChangeAction`: the pending action of a text preview (`edit`, `write`, `apply_patch`).
//!
//! It holds the preview's [`FileOp`]s. Applying checks every file against what the preview
//! read ([`crate::change::check`]: byte-identical, and a file to create still absent), then
//! writes everything or nothing through the journal, retiring the preview at the commit point
//! and handing the resolve log what it wrote. `extra.files` applies some of the files (a move
//! counts as one file, named by either path); the rest stays pending as a new preview, pushed
//! in the transaction that retires this one. Its payload is replayable, so a durable store in
//! another process rebuilds it with [`ChangeAction::from_payload`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{
    ActionError, ActionFile, AppliedChange, CancelToken, FrontEnd, JsonObject, PendingAction,
    Retirement, ToolError, ToolResult, remainder_text,
};

use crate::{
    JournalError, Workspace,
    change::{CheckError, FileOp, check},
    details::{ChangeDetails, ChangedFile},
    journal::{CommitOptions, CommitStep, commit_with},
};

/// The payload format version.
const PAYLOAD_VERSION: u64 = 1;

/// The key of `resolve`'s `extra` that names the files of a partial apply.
pub const FILES_EXTRA_KEY: &str = "files";

/// A staged text preview.
#[derive(Debug, Clone)]
pub struct ChangeAction {
    workspace: Workspace,
    source: String,
    label: String,
    ops: Vec<FileOp>,
    details: ChangeDetails,
    /// `details` as JSON, for listings.
    details_json: Value,
}

/// The replayable payload, as the durable stack stores it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangePayload {
    /// The source tool: `edit`, `write` or `apply_patch`.
    tool: String,
    /// [`PAYLOAD_VERSION`].
    version: u64,
    /// The canonical workspace root it was staged in.
    root: String,
    /// The label.
    label: String,
    /// What it does.
    ops: Vec<FileOp>,
    /// The preview's details.
    details: ChangeDetails,
}

impl ChangeAction {
    /// The action of a preview by `source` that does `ops`, labelled `label`, with the
    /// preview's details (its files and diff).
    pub fn new(
        workspace: Workspace,
        source: &str,
        label: String,
        ops: Vec<FileOp>,
        details: ChangeDetails,
    ) -> ChangeAction {
        let details_json = details.to_value();
        ChangeAction { workspace, source: source.to_owned(), label, ops, details, details_json }
    }

    /// Rebuilds an action from [`PendingAction::payload`] output.
    ///
    /// # Errors
    /// [`JournalError::Journal`] when the payload is malformed, of another version or tool, or
    /// recorded for another workspace root, or names a path outside it.
    pub fn from_payload(
        workspace: Workspace,
        source: &str,
        payload: &Value,
    ) -> Result<ChangeAction, JournalError> {
        let bad = |why: String| JournalError::Journal(format!("invalid {source} payload: {why}"));
        let payload: ChangePayload =
            serde_json::from_value(payload.clone()).map_err(|err| bad(err.to_string()))?;
        if payload.tool != source || payload.version != PAYLOAD_VERSION {
            return Err(bad(format!("{} payload of version {}", payload.tool, payload.version)));
        }
        if std::path::Path::new(&payload.root) != workspace.root() {
            return Err(bad(format!(
                "recorded for workspace {}, not {}",
                payload.root,
                workspace.root().display()
            )));
        }
        for op in &payload.ops {
            for path in op.paths() {
                workspace.rel(path).map_err(|err| bad(err.to_string()))?;
            }
        }
        Ok(ChangeAction::new(workspace, source, payload.label, payload.ops, payload.details))
    }

    /// What the preview does.
    pub fn ops(&self) -> &[FileOp] {
        &self.ops
    }

    /// The preview's details.
    pub fn change_details(&self) -> &ChangeDetails {
        &self.details
    }

    /// Applies the ops `only` names (display paths; a move by either path; `None`: all),
    /// retiring the entry at the commit point, calling `observer` after each durable step.
    ///
    /// # Errors
    /// [`ActionError::Cancelled`] when `cancel` fired before anything was written;
    /// [`ActionError::Tool`] when `only` names a file the preview does not write;
    /// [`ActionError::Other`] when a write failed.
    pub fn apply_only_observed(
        &self,
        only: Option<&[String]>,
        cancel: &CancelToken,
        retirement: &Retirement,
        observer: &mut dyn FnMut(CommitStep),
    ) -> Result<ToolResult, ActionError> {
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let selected = self.selection(only)?;
        let partial = selected.iter().any(|chosen| !chosen);
        if partial && !retirement.has_store() {
            return Err(ActionError::other(
                "a partial apply needs the pending stack, to keep the rest of the preview on it",
            ));
        }
        // The stale check covers every file of the preview, chosen or not.
        let all: Vec<&FileOp> = self.ops.iter().collect();
        let whole = match check(&self.workspace, &all) {
            Ok(checked) => checked,
            Err(CheckError::Stale(stale)) => return Ok(self.stale(&stale.to_string())),
            Err(CheckError::Failed(err)) => {
                return Err(ActionError::other(err.model_message(self.workspace.root())));
            }
        };
        let chosen: Vec<&FileOp> =
            self.ops.iter().zip(&selected).filter(|(_, c)| **c).map(|(op, _)| op).collect();
        let checked = if partial {
            match check(&self.workspace, &chosen) {
                Ok(checked) => checked,
                Err(CheckError::Stale(stale)) => return Ok(self.stale(&stale.to_string())),
                Err(CheckError::Failed(err)) => {
                    return Err(ActionError::other(err.model_message(self.workspace.root())));
                }
            }
        } else {
            whole
        };
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let rest: Vec<FileOp> = self
            .ops
            .iter()
            .zip(&selected)
            .filter(|(_, c)| !**c)
            .map(|(op, _)| op.clone())
            .collect();
        let written: Vec<&ChangedFile> =
            self.details.files.iter().zip(&selected).filter(|(_, c)| **c).map(|(f, _)| f).collect();
        let text = if partial {
            format!(
                "Applied {} of {} ({}).",
                plural(chosen.len(), "file"),
                self.label,
                written.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", ")
            )
        } else {
            format!("Applied {}.", self.label)
        };
        let remainder = (!rest.is_empty()).then(|| self.remainder(rest));
        let prune: Vec<staged_fs::RelPath> = Vec::new();
        let change = AppliedChange {
            result: text.clone(),
            diff: Some(if partial { checked.diff.clone() } else { self.details.diff.clone() }),
            files: checked.files.clone(),
            undo: Some(checked.undo.to_value()),
            remainder: remainder.map(|action| Arc::new(action) as Arc<dyn PendingAction>),
        };
        let origin = retirement.id().map(ToString::to_string);
        let mut prepare = |key: &str| {
            retirement.prepare(key, &change).map_err(|err| {
                format!("the resolve log could not record the apply, so nothing was written: {err}")
            })
        };
        let mut abandon = |_: &str| retirement.abandon();
        let mut retire = || retirement.retire().is_ok();
        let options = CommitOptions {
            origin: origin.as_deref(),
            prune: &prune,
            prepare: Some(&mut prepare),
            abandon: Some(&mut abandon),
            retire: Some(&mut retire),
            observer: Some(observer),
        };
        let report = match commit_with(&self.workspace, &checked.steps, options) {
            Ok(report) => report,
            Err(JournalError::Drifted(path)) => {
                return Ok(self.stale(&format!("{path} changed since the preview")));
            }
            Err(JournalError::Appeared(path)) => {
                return Ok(self.stale(&format!("{path} was created since the preview")));
            }
            Err(err) => return Err(ActionError::other(err.model_message(self.workspace.root()))),
        };
        let mut text = text;
        if !report.kept.is_empty() {
            let kept: Vec<String> = report.kept.iter().map(ToString::to_string).collect();
            text.push_str(&format!(
                " {} changed while the apply ran and {} kept, not deleted: {}.",
                plural(kept.len(), "file"),
                if kept.len() == 1 { "was" } else { "were" },
                kept.join(", ")
            ));
        }
        let mut details = ChangeDetails {
            label: self.label.clone(),
            files: written.into_iter().cloned().collect(),
            applied: true,
            diff: String::new(),
            pending_id: None,
            remainder: None,
            staged_by: None,
        };
        if let (Some(id), Some(rest)) = (retirement.remainder(), &change.remainder) {
            text = format!("{text} {}", remainder_text(rest.label(), &id));
            details.remainder = Some(crate::details::Remainder {
                id: id.to_string(),
                label: rest.label().to_owned(),
            });
        }
        Ok(ToolResult::text(text).with_details(details.to_value()))
    }

    /// Which ops `only` chooses, in order; all when `None`.
    fn selection(&self, only: Option<&[String]>) -> Result<Vec<bool>, ActionError> {
        let Some(only) = only else { return Ok(vec![true; self.ops.len()]) };
        let listed =
            || self.ops.iter().map(|op| op.path().to_owned()).collect::<Vec<_>>().join(", ");
        if only.is_empty() {
            return Err(ActionError::Tool(ToolError::new(format!(
                "`extra.files` is empty: name the files of the preview to apply ({}). Nothing was applied; the preview is still pending.",
                listed()
            ))));
        }
        let mut res = vec![false; self.ops.len()];
        for given in only {
            let normal = given.trim().trim_start_matches("./");
            match self.ops.iter().position(|op| op.paths().any(|p| p == normal)) {
                Some(idx) => res[idx] = true,
                None => {
                    return Err(ActionError::Tool(ToolError::new(format!(
                        "`{given}` is not a file of this preview, whose files are: {}. Nothing was applied; the preview is still pending.",
                        listed()
                    ))));
                }
            }
        }
        Ok(res)
    }

    /// The preview of the ops a partial apply leaves: the same changes of exactly those files,
    /// promising the same bytes as before.
    fn remainder(&self, rest: Vec<FileOp>) -> ChangeAction {
        let files: Vec<ChangedFile> = self
            .details
            .files
            .iter()
            .filter(|f| rest.iter().any(|op| op.path() == f.path))
            .cloned()
            .collect();
        let diff = self
            .details
            .file_diffs()
            .filter(|(path, _)| rest.iter().any(|op| op.path() == *path))
            .map(|(_, diff)| diff)
            .collect::<String>();
        let label = crate::details::label_of(&self.source, &files);
        let details = ChangeDetails {
            label: label.clone(),
            files,
            applied: false,
            diff,
            pending_id: None,
            remainder: None,
            staged_by: self.details.staged_by.clone(),
        };
        ChangeAction::new(self.workspace.clone(), &self.source, label, rest, details)
    }

    fn stale(&self, cause: &str) -> ToolResult {
        let text = format!(
            "Preview is stale / no longer matches; nothing was written. Preview expected to change {}. Why: {cause}. The preview was dropped from the pending stack; to stage it again, call {} again: it is computed against the files as they are now.",
            self.details.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", "),
            self.source
        );
        let details = serde_json::json!({
            "applied": false,
            "stale": true,
            "cause": cause,
            "files": self.details.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        });
        ToolResult::error(text).with_details(details)
    }
}

#[async_trait::async_trait]
impl PendingAction for ChangeAction {
    fn label(&self) -> &str {
        &self.label
    }

    fn source_tool_name(&self) -> &str {
        &self.source
    }

    fn details(&self) -> Option<&Value> {
        Some(&self.details_json)
    }

    fn files(&self) -> Vec<ActionFile> {
        self.details
            .files
            .iter()
            .map(|f| ActionFile {
                path: f.path.clone(),
                from: f.from.clone(),
                summary: f.summary.clone(),
            })
            .collect()
    }

    fn applies_in_part(&self) -> bool {
        true
    }

    fn staged_by(&self) -> Option<FrontEnd> {
        let client = self.details.staged_by.as_deref()?.strip_prefix("hook:")?;
        Some(FrontEnd::Hook(client.to_owned()))
    }

    fn payload(&self) -> Option<Value> {
        let payload = ChangePayload {
            tool: self.source.clone(),
            version: PAYLOAD_VERSION,
            root: self.workspace.root().to_string_lossy().into_owned(),
            label: self.label.clone(),
            ops: self.ops.clone(),
            details: self.details.clone(),
        };
        serde_json::to_value(payload).ok()
    }

    async fn apply(
        &self,
        reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        self.apply_retiring(reason, extra, cancel, &Retirement::detached()).await
    }

    async fn apply_retiring(
        &self,
        _reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
        retirement: &Retirement,
    ) -> Result<ToolResult, ActionError> {
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let only = files_of(extra)?;
        let this = self.clone();
        let cancel = cancel.clone();
        let retirement = retirement.clone();
        tokio::task::spawn_blocking(move || {
            this.apply_only_observed(only.as_deref(), &cancel, &retirement, &mut |_| {})
        })
        .await
        .map_err(|err| ActionError::other(format!("apply worker failed: {err}")))?
    }
}

/// The files `extra.files` names, if it names any.
pub fn files_of(extra: Option<&JsonObject>) -> Result<Option<Vec<String>>, ActionError> {
    let Some(files) = extra.and_then(|extra| extra.get(FILES_EXTRA_KEY)) else { return Ok(None) };
    let bad = || {
        ActionError::Tool(ToolError::new(
            "`extra.files` must be an array of paths of the preview's files. Nothing was applied; the preview is still pending.",
        ))
    };
    let files = files.as_array().ok_or_else(bad)?;
    files
        .iter()
        .map(|f| f.as_str().map(str::to_owned).ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}
