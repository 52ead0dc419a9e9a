//! `AstEditAction`: the pending action an `ast_edit` preview stages.
//!
//! Applying re-runs the same rewrite and writes only if every touched file is byte-identical to
//! what the preview read and the recomputed edits equal the previewed ones; otherwise nothing
//! is written and the result is the stale error. Its payload is replayable, so a durable store
//! in another process can rebuild it with [`AstEditAction::from_payload`].
//!
//! `resolve` with `extra: {"files": [...]}` applies only those whole files, and with
//! `extra: {"hunks": {"path": [n, ...]}}` only those hunks of a file (a partial apply): the
//! rest stays pending as a new preview, pushed in the transaction that retires this one. The
//! rest of whole files is the same rewrite over them; once a file was split by hunk, the rest
//! is the previewed edits themselves ([`staged_journal::ChangeAction::replacements`]), since
//! the rewrite run again on a partly rewritten file need not find exactly them.
//! Every apply hands the resolve log what it wrote (the diff, each file's SHA-256 before and
//! after, and the edits an undo inverts) at its commit point.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{
    ActionError, AppliedChange, CancelToken, FileChange, PendingAction, Retirement, remainder_text,
};
use staged_journal::{
    Applied, CommitStep, ConfinedRoot, DiffKind, Edit as ByteEdit, PartFile, Selection, Step,
    UndoData, apply_in_worker, choose_parts, commit_applied, fingerprint, part_files,
};
use staged_protocol::{JsonObject, ToolResult, preview_diff};

use crate::{
    details::{AppliedDetails, RemainderDetails, StaleDetails},
    edits::RawEdit,
    engine::{EditPreview, EngineOptions, LeftOut, Scan, compute_preview_with, replayed_file},
    error::AstEditError,
    lang::Lang,
    params::{AstEditParams, ValidatedEdit},
    render::{ArgNames, capped_label, count, file_replacements, left_out_details, plural},
    scope::collect_for_lang,
};

mod listed;
mod partial;
mod payload;

pub use listed::ListedAstEdit;

use partial::{Divided, Rest, divide};
use payload::{AstEditPayload, PAYLOAD_VERSION};

/// The name of the tool that stages these actions.
pub const AST_EDIT_TOOL_NAME: &str = "ast_edit";

/// What the preview saw in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpectedFile {
    /// Display path.
    pub path: String,
    /// SHA-256 of the bytes the preview read.
    pub fingerprint: String,
    /// Replacements in this file.
    pub count: usize,
}

impl ExpectedFile {
    /// The file as a preview lists it (`staged_core::PendingAction::files`): its path and
    /// its count of replacements, for the full action and the listed one alike.
    pub(crate) fn listed(&self) -> staged_core::ActionFile {
        staged_core::ActionFile {
            path: self.path.clone(),
            from: None,
            summary: plural(self.count, "replacement"),
        }
    }
}

/// What the preview promised: the apply must find exactly this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Expected {
    /// Total replacements.
    pub total_replacements: usize,
    /// Touched files, sorted by path.
    pub files: Vec<ExpectedFile>,
    /// [`EditPreview::edits_digest`] of the preview.
    pub edits_digest: String,
}

impl Expected {
    /// What `preview` promises.
    pub fn of(preview: &EditPreview) -> Expected {
        Expected {
            total_replacements: preview.total_replacements(),
            files: preview
                .files
                .iter()
                .map(|f| ExpectedFile {
                    path: f.path.clone(),
                    fingerprint: f.fingerprint.clone(),
                    count: crate::edits::replacements(&f.edits),
                })
                .collect(),
            edits_digest: preview.edits_digest(),
        }
    }
}

/// A staged `ast_edit` rewrite.
#[derive(Debug, Clone)]
pub struct AstEditAction {
    workspace: ConfinedRoot,
    params: AstEditParams,
    expected: Expected,
    /// What a cap left out of the preview (said in the label; not part of the stale check:
    /// files left out are not written, so their changing does not make the preview stale).
    left_out: Option<LeftOut>,
    /// How the label names the cap's argument.
    names: ArgNames,
    label: String,
    details: Value,
    /// The preview's edits and walk, when its walk can prove at apply time that nothing
    /// changed.
    replay: Option<Arc<Replay>>,
}

/// What an apply needs to make a preview's edits without searching again: the digest of its
/// walk (see `engine::Scan`), the language it used, how many files it searched, and the
/// edits of each touched file, in the order of [`Expected::files`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Replay {
    scan: String,
    lang: String,
    files_searched: usize,
    /// Per touched file, each edit as `[start, end, replacements, text]`.
    edits: Vec<Vec<(usize, usize, usize, String)>>,
}

impl Replay {
    fn of(preview: &EditPreview) -> Option<Replay> {
        let scan = preview.scan.as_ref()?;
        Some(Replay {
            scan: scan.digest.clone(),
            lang: preview.lang.name().to_owned(),
            files_searched: preview.files_searched,
            edits: preview
                .files
                .iter()
                .map(|f| {
                    f.edits
                        .iter()
                        .map(|e| (e.byte_start, e.byte_end, e.replacements, e.after.clone()))
                        .collect()
                })
                .collect(),
        })
    }
}

/// Why an apply cannot make its preview's edits as they are.
enum Replayed {
    /// They are made: the preview as a search would recompute it.
    Made(EditPreview),
    /// The walk differs (or there is nothing to replay): search again.
    SearchAgain,
    /// A touched file changed: the preview is stale.
    Stale(String),
}

impl AstEditAction {
    /// The action for a preview of `params`, with the preview's details.
    pub fn new(
        workspace: ConfinedRoot,
        params: AstEditParams,
        preview: &EditPreview,
        details: Value,
    ) -> AstEditAction {
        AstEditAction::named(workspace, params, preview, details, ArgNames::Tool)
    }

    /// [`AstEditAction::new`], whose label names the cap's argument as `names` says.
    pub fn named(
        workspace: ConfinedRoot,
        params: AstEditParams,
        preview: &EditPreview,
        details: Value,
        names: ArgNames,
    ) -> AstEditAction {
        let expected = Expected::of(preview);
        let left_out = preview.left_out;
        let label = capped_label(
            expected.total_replacements,
            expected.files.len(),
            left_out.as_ref(),
            names,
        );
        let replay = Replay::of(preview).map(Arc::new);
        AstEditAction { workspace, params, expected, left_out, names, label, details, replay }
    }

    /// Rebuilds an action from [`PendingAction::payload`] output.
    ///
    /// # Errors
    /// [`AstEditError::InvalidPayload`] when the payload is malformed, of another version, or
    /// recorded for another workspace root.
    pub fn from_payload(
        workspace: ConfinedRoot,
        payload: &Value,
    ) -> Result<AstEditAction, AstEditError> {
        let payload = AstEditPayload::parse_in(&workspace, payload)?;
        payload.params.validate()?;
        payload.check_files(&workspace)?;
        let label = payload.label();
        Ok(AstEditAction {
            workspace,
            params: payload.params,
            expected: payload.expected,
            left_out: payload.left_out,
            names: payload.names,
            label,
            details: payload.details.unwrap_or_else(|| Value::Object(JsonObject::new())),
            replay: payload.replay.map(Arc::new),
        })
    }

    /// The preview's details, given up.
    pub(crate) fn into_details(self) -> Value {
        self.details
    }

    /// The arguments this action re-runs.
    pub fn params(&self) -> &AstEditParams {
        &self.params
    }

    /// What the preview promised.
    pub fn expected(&self) -> &Expected {
        &self.expected
    }

    /// Applies synchronously (the async `apply` runs this on a blocking thread), calling
    /// `observer` after each durable step of the commit (for progress reports, and for tests
    /// that crash at every step). For a claimed entry, the journal records the entry's id, and
    /// `retirement` retires the entry once every file is replaced and before the journal is
    /// deleted, so a crash at any point leaves a stack that agrees with the files.
    ///
    /// # Errors
    /// [`ActionError::Cancelled`] when `cancel` fired before anything was written;
    /// [`ActionError::Other`] when a write failed.
    pub fn apply_observed(
        &self,
        cancel: &CancelToken,
        retirement: &Retirement,
        observer: &mut dyn FnMut(CommitStep),
    ) -> Result<ToolResult, ActionError> {
        self.apply_only_observed(None, cancel, retirement, observer)
    }

    /// [`AstEditAction::apply_observed`] for part of the preview: `selection` names files by
    /// their display paths, and hunks of files as `staged show` numbers them (`None`: all).
    /// The rest stays pending as a new preview, pushed on top in the transaction that retires
    /// this one. The stale check covers every file of the preview, so a stale preview writes
    /// nothing.
    ///
    /// # Errors
    /// As [`AstEditAction::apply_observed`]; [`ActionError::Tool`] when `selection` names a
    /// file that is not in the preview, or a hunk its file does not have.
    pub fn apply_only_observed(
        &self,
        selection: Option<&Selection>,
        cancel: &CancelToken,
        retirement: &Retirement,
        observer: &mut dyn FnMut(CommitStep),
    ) -> Result<ToolResult, ActionError> {
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let parts = self.part_files();
        let (choices, partial) = choose_parts(selection, &parts, retirement)?;
        let mut preview = match self.recompute(cancel, partial)? {
            Ok(preview) => preview,
            Err(stale) => return Ok(stale),
        };
        if cancel.is_cancelled() {
            return Err(ActionError::Cancelled);
        }
        let Divided { rest, pinned, hunk_notes } = divide(&mut preview, &choices, &parts)?;
        let Some(writes) = preview.writes() else {
            return Err(ActionError::other("ast_edit apply lost the rewritten contents"));
        };
        let total = preview.total_replacements();
        let files = preview.files_touched();
        let mut text =
            format!("Applied {} in {}", plural(total, "replacement"), plural(files, "file"));
        if !hunk_notes.is_empty() {
            text.push_str(&format!(" ({})", hunk_notes.join(", ")));
        }
        text.push('.');
        let remainder: Option<Arc<dyn PendingAction>> = if rest.is_empty() {
            None
        } else if pinned.is_empty() {
            let rest = rest.into_iter().filter_map(Rest::into_whole).collect();
            Some(Arc::new(self.remainder(&preview, rest)))
        } else {
            Some(Arc::new(self.pinned_remainder(rest)?))
        };
        let diff = if partial {
            Some(crate::preview_diff::unified_diff(&preview))
        } else {
            preview_diff(&self.details).map(str::to_owned)
        };
        let change = AppliedChange {
            result: text.clone(),
            label: partial.then(|| capped_label(total, files, None, self.names)),
            diff,
            files: writes
                .iter()
                .zip(&preview.files)
                .map(|(write, file)| FileChange {
                    path: file.path.clone(),
                    before: Some(write.expected_fingerprint.clone()),
                    after: Some(fingerprint(write.contents.as_bytes())),
                })
                .collect(),
            undo: Some(undo_data(&preview)),
            remainder,
            texts: preview
                .files
                .iter()
                .filter_map(|f| f.contents.as_ref().map(|c| c.original.clone()))
                .collect(),
        };
        let steps: Vec<Step> = writes.into_iter().map(Step::from).collect();
        match commit_applied(&self.workspace, &steps, &[], &change, retirement, observer) {
            Ok(_) => {}
            Err(staged_journal::JournalError::Drifted(path)) => {
                return Ok(self.stale(&format!("{path} changed since the preview")));
            }
            Err(err) => {
                return Err(ActionError::other(
                    AstEditError::from(err).model_message(self.workspace.root()),
                ));
            }
        }
        let mut details = AppliedDetails {
            total_replacements: count(total),
            files_touched: count(files),
            files_searched: count(preview.files_searched),
            applied: true,
            limit_reached: preview.limit_reached,
            file_replacements: file_replacements(&preview),
            left_out: self
                .left_out
                .as_ref()
                .filter(|_| !partial)
                .map(|left| left_out_details(left, self.names)),
            remainder: None,
        };
        if let (Some(id), Some(rest)) = (retirement.remainder(), &change.remainder) {
            text = format!("{text} {}", remainder_text(rest.label(), &id));
            details.remainder = Some(RemainderDetails {
                id: id.as_str().to_owned(),
                label: rest.label().to_owned(),
            });
        }
        Ok(ToolResult::text(text).with_details(details.to_value()))
    }

    /// The preview's edits found again on the files as they are now, as an apply writes them
    /// (`partial`: with each file's diff and contents, see [`EngineOptions`]); `Err` holds
    /// the stale answer when they are not the previewed ones.
    fn recompute(
        &self,
        cancel: &CancelToken,
        partial: bool,
    ) -> Result<Result<EditPreview, ToolResult>, ActionError> {
        let validated = match self.params.validate() {
            Ok(v) => v,
            Err(err) => return Ok(Err(self.stale(&err.to_string()))),
        };
        // A partial apply records the diffs of the files it writes and keeps those of the
        // rest; a whole apply's diff is the preview's own.
        let options = if partial { EngineOptions::default() } else { EngineOptions::apply() };
        let preview = match self.replay(&validated, options) {
            Replayed::Made(preview) => preview,
            Replayed::Stale(drifted) => {
                return Ok(Err(self.stale(&format!("{drifted} changed since the preview"))));
            }
            Replayed::SearchAgain => {
                if let Some(drifted) = self.first_drifted_file() {
                    return Ok(Err(self.stale(&format!("{drifted} changed since the preview"))));
                }
                match compute_preview_with(&self.workspace, &validated, options, None, Some(cancel))
                {
                    Ok(p) => p,
                    Err(AstEditError::Cancelled) => return Err(ActionError::Cancelled),
                    Err(err) => return Ok(Err(self.stale(&err.to_string()))),
                }
            }
        };
        if Expected::of(&preview) != self.expected {
            return Ok(Err(self.stale("the recomputed edits differ from the preview")));
        }
        Ok(Ok(preview))
    }

    /// The preview's files as a selection sees them, with the hunk counts of its diff.
    pub fn part_files(&self) -> Vec<PartFile> {
        let files = self.expected.files.iter().map(|f| (f.path.as_str(), None, DiffKind::Modify));
        part_files(files, preview_diff(&self.details))
    }

    /// The preview again without a search, when the walk finds every candidate as the
    /// preview's walk did (see `engine::Scan`): each touched file is read, must have the
    /// fingerprint the preview read, and gets the preview's edits. What a search would find
    /// is then what the preview found, so the stale check that follows compares the same
    /// things. Anything unexpected in the recorded edits means a search.
    fn replay(&self, validated: &ValidatedEdit, options: EngineOptions) -> Replayed {
        let Some(replay) = &self.replay else { return Replayed::SearchAgain };
        let Ok(lang) = Lang::parse(&replay.lang) else { return Replayed::SearchAgain };
        let started = std::time::SystemTime::now();
        let Ok(candidates) =
            collect_for_lang(&self.workspace, &validated.paths, validated.lang, None)
        else {
            return Replayed::SearchAgain;
        };
        if Scan::of(&candidates, started).is_none_or(|scan| scan.digest != replay.scan) {
            return Replayed::SearchAgain;
        }
        let mut files = Vec::with_capacity(self.expected.files.len());
        for (expected, edits) in self.expected.files.iter().zip(&replay.edits) {
            let read = self.workspace.rel(&expected.path).ok().and_then(|rel| {
                let bytes = self.workspace.fs().read(&rel).ok()?;
                Some((rel, bytes))
            });
            let Some((rel, bytes)) = read else { return Replayed::Stale(expected.path.clone()) };
            if fingerprint(&bytes) != expected.fingerprint {
                return Replayed::Stale(expected.path.clone());
            }
            let Ok(original) = String::from_utf8(bytes) else { return Replayed::SearchAgain };
            let raw = edits
                .iter()
                .map(|(start, end, replacements, text)| RawEdit {
                    start: *start,
                    end: *end,
                    text: text.clone(),
                    replacements: *replacements,
                })
                .collect();
            let Some(file) = replayed_file(
                &expected.path,
                rel,
                expected.fingerprint.clone(),
                original,
                raw,
                options,
            ) else {
                return Replayed::SearchAgain;
            };
            files.push(file);
        }
        Replayed::Made(EditPreview::of_files(lang, files, replay.files_searched, self.left_out))
    }

    fn first_drifted_file(&self) -> Option<String> {
        self.expected.files.iter().find_map(|file| {
            let same = self
                .workspace
                .rel(&file.path)
                .ok()
                .and_then(|rel| self.workspace.fs().read(&rel).ok())
                .is_some_and(|bytes| fingerprint(&bytes) == file.fingerprint);
            (!same).then(|| file.path.clone())
        })
    }

    fn stale(&self, cause: &str) -> ToolResult {
        // The stale sentence, then what became of the preview and how to get it back
        // (`docs/contract/ast-edit.md#apply-and-the-stale-check`).
        let args = serde_json::to_string(&self.params).unwrap_or_default();
        let text = format!(
            "Preview is stale / no longer matches; no replacements were applied. Preview expected {} in {}. Why: {cause}. The preview was dropped from the pending stack; to stage it again, call ast_edit with the same arguments: {args}",
            plural(self.expected.total_replacements, "replacement"),
            plural(self.expected.files.len(), "file")
        );
        let details = StaleDetails {
            restage: self.params.clone(),
            total_replacements: 0,
            files_touched: 0,
            applied: false,
            stale: true,
            expected_replacements: self.expected.total_replacements as u64,
            expected_files: self.expected.files.len() as u64,
            cause: cause.to_owned(),
        };
        ToolResult::error(text).with_details(details.to_value())
    }
}

#[async_trait::async_trait]
impl PendingAction for AstEditAction {
    fn label(&self) -> &str {
        &self.label
    }

    fn source_tool_name(&self) -> &str {
        AST_EDIT_TOOL_NAME
    }

    fn details(&self) -> Option<&Value> {
        Some(&self.details)
    }

    fn applies_in_part(&self) -> bool {
        true
    }

    fn files(&self) -> Vec<staged_core::ActionFile> {
        self.expected.files.iter().map(ExpectedFile::listed).collect()
    }

    fn payload(&self) -> Option<Value> {
        let payload = AstEditPayload {
            tool: AST_EDIT_TOOL_NAME.to_owned(),
            version: PAYLOAD_VERSION,
            root: self.workspace.root().to_string_lossy().into_owned(),
            params: self.params.clone(),
            expected: self.expected.clone(),
            left_out: self.left_out,
            names: self.names,
            details: Some(self.details.clone()),
            replay: self.replay.as_deref().cloned(),
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
        let apply = AstEditAction::apply_only_observed;
        apply_in_worker(self, "ast_edit apply", apply, extra, cancel, retirement).await
    }
}

/// The undo data of an apply that wrote `preview`'s files: each file's edits, as made.
fn undo_data(preview: &EditPreview) -> Value {
    let ops = preview
        .files
        .iter()
        .map(|file| Applied::Update {
            path: file.path.clone(),
            edits: file.edits.iter().map(byte_edit).collect(),
        })
        .collect();
    UndoData::of(ops).to_value()
}

/// The key of `resolve`'s `extra` that names the files of a partial apply.
pub const FILES_EXTRA_KEY: &str = staged_journal::FILES_EXTRA_KEY;

/// An edit as the journal makes it.
fn byte_edit(edit: &crate::edits::Edit) -> ByteEdit {
    ByteEdit { start: edit.byte_start, before: edit.before.clone(), after: edit.after.clone() }
}
