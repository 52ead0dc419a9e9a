//! `ChangeAction`: the pending action of a text preview (`edit`, `write`, `apply_patch`), and of
//! the rest of an `ast_edit` preview applied hunk by hunk.
//!
//! It holds the preview's [`FileOp`]s. Applying checks every file against what the preview
//! read ([`crate::change::check`]: byte-identical, and a file to create still absent), then
//! writes everything or nothing through the journal, retiring the preview at the commit point
//! and handing the resolve log what it wrote. A [`Selection`] (`extra.files`, `extra.hunks`)
//! applies part of it: some files (a move counts as one file, named by either path), and some
//! hunks of a changed file (the edits that show in them); the rest stays pending as a new
//! preview, pushed in the transaction that retires this one, its files promising exactly the
//! bytes the partial apply leaves. Its payload is replayable, so a durable store in another
//! process rebuilds it with [`ChangeAction::from_payload`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{
    ActionError, ActionFile, AppliedChange, CancelToken, FrontEnd, PendingAction, Retirement,
    remainder_text,
};
use staged_protocol::{JsonObject, ToolResult};

use crate::{
    ConfinedRoot, Edit, JournalError, LineIndex,
    change::{CheckError, FileOp, LastFolder, check, read_checked, replay},
    details::{ChangeDetails, ChangeKind, ChangedFile},
    diff::{edit_hunks, file_diff},
    fingerprint::fingerprint,
    folder_ops::{FolderChange, add_folders},
    hunks::{DiffKind, diff_line_counts, hunk_list},
    journal::CommitStep,
    part_apply::{apply_in_worker, choose_parts, commit_applied_folders},
    select::{Choice, PartFile, Selection, bound_hunks, check_hunk, part_files},
};

/// The payload format version.
const PAYLOAD_VERSION: u64 = 1;

/// A staged text preview.
#[derive(Debug, Clone)]
pub struct ChangeAction {
    workspace: ConfinedRoot,
    source: String,
    label: String,
    ops: Vec<FileOp>,
    details: ChangeDetails,
    /// `details` as JSON, for listings.
    details_json: Value,
    /// For the rest of an `ast_edit` preview: how many replacements each edit of each op
    /// stands for (a nested rewrite counts more than one), which its labels count.
    counts: Option<Vec<Vec<usize>>>,
    /// The folders it makes or removes as changes of their own (a shell command's).
    folders: Vec<FolderChange>,
}

/// One file of a preview of fixed replacements (see [`ChangeAction::replacements`]).
#[derive(Debug, Clone)]
pub struct ReplacementFile {
    /// The file, relative to the root.
    pub path: String,
    /// SHA-256 of the bytes the edits were made on.
    pub fingerprint: String,
    /// The edits, on those bytes.
    pub edits: Vec<Edit>,
    /// How many replacements each edit stands for.
    pub counts: Vec<usize>,
    /// The file's diff.
    pub diff: String,
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
    /// Replacements per edit of each op (the rest of an `ast_edit` preview).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    counts: Option<Vec<Vec<usize>>>,
    /// The folders it makes or removes (a shell command's preview).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    folders: Vec<FolderChange>,
}

impl ChangeAction {
    /// The action of a preview by `source` that does `ops`, labelled `label`, with the
    /// preview's details (its files and diff).
    pub fn new(
        workspace: ConfinedRoot,
        source: &str,
        label: String,
        ops: Vec<FileOp>,
        details: ChangeDetails,
    ) -> ChangeAction {
        let details_json = details.to_value();
        ChangeAction {
            workspace,
            source: source.to_owned(),
            label,
            ops,
            details,
            details_json,
            counts: None,
            folders: Vec::new(),
        }
    }

    /// The same action, also making or removing `folders` (parents first), each as a change of
    /// its own: shown before the files' diffs, checked against the disk and written by the
    /// same commit (see [`add_folders`]).
    #[must_use]
    pub fn with_folders(mut self, folders: Vec<FolderChange>) -> ChangeAction {
        self.folders = folders;
        self
    }

    /// The folders it makes or removes.
    pub fn folders(&self) -> &[FolderChange] {
        &self.folders
    }

    /// A preview by `source` of fixed replacements in `files` (the rest of an `ast_edit`
    /// preview that was applied hunk by hunk): its label counts replacements as `ast_edit`'s
    /// does, `AST Edit: <N> replacement<s> in <M> file<s>`, and applying it writes exactly
    /// these edits, once every file is byte-identical to what they were made on.
    pub fn replacements(
        workspace: ConfinedRoot,
        source: &str,
        files: Vec<ReplacementFile>,
        staged_by: Option<String>,
    ) -> ChangeAction {
        let mut ops = Vec::with_capacity(files.len());
        let mut changed = Vec::with_capacity(files.len());
        let mut counts = Vec::with_capacity(files.len());
        let mut diff = String::new();
        for file in files {
            changed.push(replaced_file(&file.path, &file.diff, file.counts.iter().sum()));
            diff.push_str(&file.diff);
            counts.push(file.counts);
            ops.push(FileOp::Update {
                path: file.path,
                fingerprint: file.fingerprint,
                edits: file.edits,
                executable: None,
            });
        }
        let label = replacements_label(counts.iter().flatten().sum(), changed.len());
        let details = ChangeDetails {
            label: label.clone(),
            files: changed,
            applied: false,
            diff,
            pending_id: None,
            remainder: None,
            staged_by,
            needs_person: None,
        };
        let mut action = ChangeAction::new(workspace, source, label, ops, details);
        action.counts = Some(counts);
        action
    }

    /// Rebuilds an action from [`PendingAction::payload`] output.
    ///
    /// # Errors
    /// [`JournalError::Journal`] when the payload is malformed, of another version or tool, or
    /// recorded for another workspace root, or names a path outside it.
    pub fn from_payload(
        workspace: ConfinedRoot,
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
        if payload.details.files.len() != payload.ops.len() {
            return Err(bad("its details do not list one file per change".to_owned()));
        }
        if let Some(counts) = &payload.counts {
            let fits = counts.len() == payload.ops.len()
                && payload.ops.iter().zip(counts).all(|(op, counts)| match op {
                    FileOp::Update { edits, .. } => edits.len() == counts.len(),
                    _ => false,
                });
            if !fits {
                return Err(bad("its replacement counts do not match its edits".to_owned()));
            }
        }
        for folder in &payload.folders {
            workspace.rel(&folder.path).map_err(|err| bad(err.to_string()))?;
        }
        let mut action =
            ChangeAction::new(workspace, source, payload.label, payload.ops, payload.details);
        action.counts = payload.counts;
        action.folders = payload.folders;
        Ok(action)
    }

    /// What the preview does.
    pub fn ops(&self) -> &[FileOp] {
        &self.ops
    }

    /// The preview's details.
    pub fn change_details(&self) -> &ChangeDetails {
        &self.details
    }

    /// The preview's files as a selection sees them: each one's path, kind and hunk count.
    pub fn part_files(&self) -> Vec<PartFile> {
        let kinds = self.details.files.iter().map(|f| {
            let kind = match f.change {
                ChangeKind::Updated => DiffKind::Modify,
                ChangeKind::Added => DiffKind::Create,
                ChangeKind::Deleted => DiffKind::Delete,
                ChangeKind::Moved => DiffKind::Rename,
            };
            (f.path.as_str(), f.from.as_deref(), kind)
        });
        part_files(kinds, Some(&self.details.diff))
    }

    /// Applies what `selection` names (`None`: all), retiring the entry at the commit point,
    /// calling `observer` after each durable step.
    ///
    /// # Errors
    /// [`ActionError::Cancelled`] when `cancel` fired before anything was written;
    /// [`ActionError::Tool`] when `selection` names something the preview does not have;
    /// [`ActionError::Other`] when a write failed.
    pub fn apply_only_observed(
        &self,
        selection: Option<&Selection>,
        cancel: &CancelToken,
        retirement: &Retirement,
        observer: &mut dyn FnMut(CommitStep),
    ) -> Result<ToolResult, ActionError> {
        self.apply_only_with(selection, cancel, retirement, Some(observer))
    }

    /// [`ChangeAction::apply_only_observed`] with nobody observing: the replacing renames run
    /// on several threads at once, as a preview's apply does (a shell command's recorded
    /// writes).
    ///
    /// # Errors
    /// As [`ChangeAction::apply_only_observed`].
    pub fn apply_only(
        &self,
        selection: Option<&Selection>,
        cancel: &CancelToken,
        retirement: &Retirement,
    ) -> Result<ToolResult, ActionError> {
        self.apply_only_with(selection, cancel, retirement, None)
    }

    /// [`ChangeAction::apply_only_observed`], with an observer or none (the apply of a
    /// preview, whose replacing renames then run at once).
    fn apply_only_with(
        &self,
        selection: Option<&Selection>,
        cancel: &CancelToken,
        retirement: &Retirement,
        observer: Option<&mut dyn FnMut(CommitStep)>,
    ) -> Result<ToolResult, ActionError> {
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let (choices, partial) = choose_parts(selection, &self.part_files(), retirement)?;
        // The stale check covers every file of the preview, chosen or not.
        let all: Vec<&FileOp> = self.ops.iter().collect();
        let whole = match check(&self.workspace, &all) {
            Ok(checked) => checked,
            Err(CheckError::Stale(stale)) => return Ok(self.stale(&stale.to_string())),
            Err(CheckError::Failed(err)) => {
                return Err(ActionError::other(err.model_message(self.workspace.root())));
            }
        };
        let split = if partial {
            match self.split(&choices)? {
                Ok(split) => split,
                Err(stale) => return Ok(stale),
            }
        } else {
            // A whole apply writes `whole`'s steps: the ops are not needed again (a copy of a
            // 50 MB rewrite's edits would be 100 MB more).
            Split {
                ops: Vec::new(),
                files: self.details.files.clone(),
                counts: self.counts.clone(),
                hunks: Vec::new(),
                rest: None,
            }
        };
        let mut checked = if partial {
            let chosen: Vec<&FileOp> = split.ops.iter().collect();
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
        let folders = match add_folders(&self.workspace, &mut checked, &self.folders) {
            Ok(folders) => folders,
            Err(CheckError::Stale(stale)) => return Ok(self.stale(&stale.to_string())),
            Err(CheckError::Failed(err)) => {
                return Err(ActionError::other(err.model_message(self.workspace.root())));
            }
        };
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let label = if partial {
            self.label_of(&split.files, split.counts.as_deref())
        } else {
            self.label.clone()
        };
        let text = self.applied_text(&split, partial);
        let mut change = AppliedChange {
            result: text.clone(),
            label: partial.then(|| label.clone()),
            diff: Some(self.logged_diff(&mut checked.diff, partial)),
            files: std::mem::take(&mut checked.files),
            undo: Some(checked.undo.take().into_value()),
            remainder: split.rest.map(|action| Arc::new(action) as Arc<dyn PendingAction>),
            texts: std::mem::take(&mut checked.texts),
        };
        let committed = commit_applied_folders(
            &self.workspace,
            &checked.steps,
            (&folders.make, &folders.remove),
            &mut change,
            retirement,
            observer,
        );
        let report = match committed {
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
            label,
            files: split.files,
            applied: true,
            diff: String::new(),
            pending_id: None,
            remainder: None,
            staged_by: None,
            needs_person: None,
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

    /// The diff an apply logs: the one its check wrote (`checked`, moved), when it is the
    /// preview's, or the preview has none (a shell command's record, whose diff only the apply
    /// computes) or has folders (which the check may have found made or removed already).
    fn logged_diff(&self, checked: &mut String, partial: bool) -> String {
        let own = partial || self.details.diff.is_empty() || !self.folders.is_empty();
        if own || *checked == self.details.diff {
            std::mem::take(checked)
        } else {
            self.details.diff.clone()
        }
    }

    /// What a partial apply writes and what it leaves, file by file; `Err` with the stale
    /// result when a file split by hunk is no longer what the preview read.
    fn split(&self, choices: &[Choice]) -> Result<Result<Split, ToolResult>, ActionError> {
        let parts = self.part_files();
        let diffs: Vec<&str> = crate::details::split_diff(&self.details.diff).collect();
        let mut split = Split {
            ops: Vec::new(),
            files: Vec::new(),
            counts: None,
            hunks: Vec::new(),
            rest: None,
        };
        let mut chosen_counts = Vec::new();
        let mut rest_ops = Vec::new();
        let mut rest_files = Vec::new();
        let mut rest_counts = Vec::new();
        let mut rest_diff = String::new();
        for (idx, (op, choice)) in self.ops.iter().zip(choices).enumerate() {
            let (Some(file), Some(part)) = (self.details.files.get(idx), parts.get(idx)) else {
                return Err(ActionError::other("the preview does not list one file per change"));
            };
            let counts = self.counts.as_ref().and_then(|c| c.get(idx)).cloned().unwrap_or_default();
            let chosen_hunks = match choice {
                Choice::Whole => {
                    split.ops.push(op.clone());
                    split.files.push(file.clone());
                    chosen_counts.push(counts);
                    continue;
                }
                Choice::Skip => {
                    rest_ops.push(op.clone());
                    rest_files.push(file.clone());
                    rest_counts.push(counts);
                    rest_diff.push_str(diffs.get(idx).copied().unwrap_or_default());
                    continue;
                }
                Choice::Hunks(hunks) => hunks,
            };
            let FileOp::Update { path, fingerprint: read_as, edits, executable } = op else {
                return Err(ActionError::other(format!("{} does not split into hunks", part.path)));
            };
            let text =
                match read_checked(&self.workspace, path, read_as, &mut LastFolder::default()) {
                    Ok((text, _)) => text,
                    Err(CheckError::Stale(stale)) => {
                        return Ok(Err(self.stale(&stale.to_string())));
                    }
                    Err(CheckError::Failed(err)) => {
                        return Err(ActionError::other(err.model_message(self.workspace.root())));
                    }
                };
            let cut = cut_hunks(path, &text, edits, chosen_hunks, part.hunks)?;
            let Some(cut) = cut else {
                // Every hunk: the whole file.
                split.ops.push(op.clone());
                split.files.push(file.clone());
                chosen_counts.push(counts);
                continue;
            };
            let (mine_counts, left_counts) = split_counts(&counts, &cut.picks);
            let diff_of = |text: &str, edits: &[Edit]| {
                file_diff(path, text, edits).map_err(|err| ActionError::other(err.to_string()))
            };
            let mine_diff = diff_of(&text, &cut.mine)?;
            let left_diff = diff_of(&cut.text, &cut.left)?;
            let is_replacements = self.counts.is_some();
            split.files.push(part_file(file, &mine_diff, is_replacements.then_some(&mine_counts)));
            rest_files.push(part_file(file, &left_diff, is_replacements.then_some(&left_counts)));
            // A mode change goes with the hunks applied.
            split.ops.push(FileOp::Update {
                path: path.clone(),
                fingerprint: read_as.clone(),
                edits: cut.mine,
                executable: *executable,
            });
            rest_ops.push(FileOp::Update {
                path: path.clone(),
                fingerprint: fingerprint(cut.text.as_bytes()),
                edits: cut.left,
                executable: None,
            });
            chosen_counts.push(mine_counts);
            rest_counts.push(left_counts);
            rest_diff.push_str(&left_diff);
            split.hunks.push((path.clone(), chosen_hunks.iter().map(|h| h + 1).collect(), cut.of));
        }
        if self.counts.is_some() {
            split.counts = Some(chosen_counts);
        }
        if !rest_ops.is_empty() {
            let counts = self.counts.is_some().then_some(rest_counts);
            let label = self.label_of(&rest_files, counts.as_deref());
            let details = ChangeDetails {
                label: label.clone(),
                files: rest_files,
                applied: false,
                diff: rest_diff,
                pending_id: None,
                remainder: None,
                staged_by: self.details.staged_by.clone(),
                needs_person: self.details.needs_person.clone(),
            };
            let mut rest =
                ChangeAction::new(self.workspace.clone(), &self.source, label, rest_ops, details);
            rest.counts = counts;
            split.rest = Some(rest);
        }
        Ok(Ok(split))
    }

    /// The label of `files` of this preview (with `counts`, its replacements).
    fn label_of(&self, files: &[ChangedFile], counts: Option<&[Vec<usize>]>) -> String {
        match counts {
            Some(counts) => replacements_label(counts.iter().flatten().sum(), files.len()),
            None => crate::details::label_of(&self.source, files),
        }
    }

    /// The result text of an apply of `split`.
    fn applied_text(&self, split: &Split, partial: bool) -> String {
        let hunks = |path: &str| {
            split.hunks.iter().find(|(p, _, _)| p == path).map(|(_, hunks, of)| {
                format!(
                    "{path}: hunk{} {} of {of}",
                    if hunks.len() == 1 { "" } else { "s" },
                    hunk_list(hunks)
                )
            })
        };
        if let Some(counts) = &split.counts {
            let total: usize = counts.iter().flatten().sum();
            let mut text = format!(
                "Applied {} in {}",
                plural(total, "replacement"),
                plural(split.files.len(), "file")
            );
            let parts: Vec<String> = split.files.iter().filter_map(|f| hunks(&f.path)).collect();
            if !parts.is_empty() {
                text.push_str(&format!(" ({})", parts.join(", ")));
            }
            text.push('.');
            return text;
        }
        if !partial {
            return format!("Applied {}.", self.label);
        }
        let parts: Vec<String> =
            split.files.iter().map(|f| hunks(&f.path).unwrap_or_else(|| f.path.clone())).collect();
        format!(
            "Applied {} of {} ({}).",
            plural(split.files.len(), "file"),
            self.label,
            parts.join(", ")
        )
    }
    fn stale(&self, cause: &str) -> ToolResult {
        let text = format!(
            "Preview is stale / no longer matches; nothing was written. Preview expected to change {}. Why: {cause}. The preview was dropped from the pending stack; to stage it again, call {} again: it is computed against the files as they are now.",
            self.details.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", "),
            self.source
        );
        let details = Stale {
            applied: false,
            stale: true,
            cause,
            files: self.details.files.iter().map(|f| f.path.as_str()).collect(),
        };
        ToolResult::error(text).with_details_of(&details)
    }
}

/// The details of a stale preview's apply: nothing applied, why, and the files it expected to
/// change.
#[derive(serde::Serialize)]
struct Stale<'a> {
    applied: bool,
    stale: bool,
    cause: &'a str,
    files: Vec<&'a str>,
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

    fn needs_person(&self) -> Option<&str> {
        self.details.needs_person.as_deref()
    }

    fn payload(&self) -> Option<Value> {
        let payload = ChangePayload {
            tool: self.source.clone(),
            version: PAYLOAD_VERSION,
            root: self.workspace.root().to_string_lossy().into_owned(),
            label: self.label.clone(),
            ops: self.ops.clone(),
            details: self.details.clone(),
            counts: self.counts.clone(),
            folders: self.folders.clone(),
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
        // Nobody observes the steps of a preview's apply: its renames run at once.
        let apply: crate::ApplyOnly<ChangeAction> = |action, selection, cancel, retirement, _| {
            action.apply_only_with(selection, cancel, retirement, None)
        };
        apply_in_worker(self, "apply", apply, extra, cancel, retirement).await
    }
}

/// What a partial apply writes: the ops and files chosen (a file split by hunk as its chosen
/// part), their replacement counts, the hunks chosen of each split file (1-based, and how many
/// it has), and the preview of the rest.
struct Split {
    ops: Vec<FileOp>,
    files: Vec<ChangedFile>,
    counts: Option<Vec<Vec<usize>>>,
    hunks: Vec<(String, Vec<usize>, usize)>,
    rest: Option<ChangeAction>,
}

/// A file's edits cut by hunk: those of the chosen hunks, the others moved into the text the
/// chosen ones leave, that text, which edits were chosen, and how many hunks the file has.
#[derive(Debug)]
pub struct HunkCut {
    /// The edits of the chosen hunks, on the text read.
    pub mine: Vec<Edit>,
    /// The other edits, on [`HunkCut::text`].
    pub left: Vec<Edit>,
    /// The text with the chosen edits made.
    pub text: String,
    /// For each edit: whether it was chosen.
    pub picks: Vec<bool>,
    /// How many hunks the file's diff has.
    pub of: usize,
}

/// Cuts `edits` of `text` (the file `path`) by the hunks `chosen` (0-based) of its diff;
/// `expected` is the hunk count the preview's diff shows, when known. `None` when `chosen` is
/// every hunk.
///
/// # Errors
/// [`ActionError::Tool`] when a hunk number is not one of the file's, or `chosen` names some,
/// not all, of the hunks one edit shows in; [`ActionError::Other`] when the edits do not make
/// the diff the preview showed (the preview was changed outside staged) or do not fit `text`.
pub fn cut_hunks(
    path: &str,
    text: &str,
    edits: &[Edit],
    chosen: &[usize],
    expected: Option<usize>,
) -> Result<Option<HunkCut>, ActionError> {
    let map = edit_hunks(&LineIndex::new(text), edits)
        .map_err(|err| ActionError::other(err.to_string()))?;
    if let Some(expected) = expected
        && expected != map.hunks
    {
        return Err(ActionError::other(format!(
            "the preview's diff of {path} has {expected} hunks, but its edits make {}; the preview was changed outside staged, so nothing was written",
            map.hunks
        )));
    }
    // Which hunks are chosen, by number: each question below is then answered at once, so a
    // cut is linear in the hunks and edits (a list search made 320k hunks take minutes).
    let mut is_chosen = vec![false; map.hunks];
    for &hunk in chosen {
        check_hunk(path, hunk as u64 + 1, map.hunks)?;
        is_chosen[hunk] = true;
    }
    if chosen.len() >= map.hunks {
        return Ok(None);
    }
    for group in map.groups() {
        let n = group.clone().filter(|&h| is_chosen[h]).count();
        if n > 0 && n < group.clone().count() {
            return Err(bound_hunks(path, group));
        }
    }
    let picks: Vec<bool> = map
        .of_edit
        .iter()
        .map(|hunks| hunks.is_none_or(|(first, _)| is_chosen.get(first).copied().unwrap_or(false)))
        .collect();
    let (mine, left) = crate::change::split_edits(edits, &picks)
        .ok_or_else(|| ActionError::other(JournalError::EditOutOfBounds.to_string()))?;
    let written = replay(text, &mine)
        .ok_or_else(|| ActionError::other(JournalError::EditOutOfBounds.to_string()))?;
    Ok(Some(HunkCut { mine, left, text: written, picks, of: map.hunks }))
}

/// `counts` (one per edit) cut as `picks` cut the edits.
fn split_counts(counts: &[usize], picks: &[bool]) -> (Vec<usize>, Vec<usize>) {
    if counts.len() != picks.len() {
        return (Vec::new(), Vec::new());
    }
    let mine = counts.iter().zip(picks).filter(|(_, p)| **p).map(|(c, _)| *c).collect();
    let left = counts.iter().zip(picks).filter(|(_, p)| !**p).map(|(c, _)| *c).collect();
    (mine, left)
}

/// The part of `file` whose diff is `diff`: its summary counts lines (`+3 -1`), or with
/// `counts`, replacements.
fn part_file(file: &ChangedFile, diff: &str, counts: Option<&Vec<usize>>) -> ChangedFile {
    let (added, removed) = diff_line_counts(diff);
    let summary = match counts {
        Some(counts) => plural(counts.iter().sum(), "replacement"),
        None => format!("+{added} -{removed}"),
    };
    ChangedFile { summary, lines_added: added, lines_removed: removed, ..file.clone() }
}

/// A file of fixed replacements whose diff is `diff`.
fn replaced_file(path: &str, diff: &str, replacements: usize) -> ChangedFile {
    let (added, removed) = diff_line_counts(diff);
    ChangedFile {
        path: path.to_owned(),
        from: None,
        change: ChangeKind::Updated,
        summary: plural(replacements, "replacement"),
        lines_added: added,
        lines_removed: removed,
    }
}

/// `ast_edit`'s label: `AST Edit: <N> replacement<s> in <M> file<s>`.
pub(crate) fn replacements_label(replacements: usize, files: usize) -> String {
    format!("AST Edit: {} in {}", plural(replacements, "replacement"), plural(files, "file"))
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}
