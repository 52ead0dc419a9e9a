//! Undo (and redo) of an applied change: the log entry's undo data, inverted, written through
//! the journal like an apply, and only onto files that are still exactly what the entry wrote.
//!
//! The undo data says what the apply did to each file ([`Applied`]): edits made (as
//! `(start, before, after)` with `start` a byte offset in the text before), a file created, a
//! file deleted (with its bytes and mode), a file moved. Inverting each gives what restores the
//! earlier state: the edits with offsets moved into the written text and `before` and `after`
//! swapped, a created file deleted, a deleted file created again with its bytes and mode, a
//! moved file moved back. The undo records what it did the same way, so undoing an undo (a
//! redo) is the same operation.
//!
//! Before writing, every file must hash to what the entry wrote (a file it deleted must still
//! be absent), and every restored text must hash to what the entry read; and the diff the
//! entry shows (`staged log show`) must be the diff its undo data stands for, so that what an
//! undo writes back is what a person was shown. Otherwise nothing is written and the result
//! says why.

use std::collections::HashMap;

use serde::Deserialize;
use staged_core::{
    ActionError, AppliedChange, CancelToken, FileChange, LogEntry, LogOutcome, Retirement,
    UndoHandler,
};
use staged_fs::RelPath;
use staged_protocol::ToolResult;

use crate::{
    ConfinedRoot, DiffHeader, JournalError, LineIndex,
    change::{
        Applied, CheckError, Edit, ModeChange, NEW_FILE_MODE, UndoData, deleted_file_diff, invert,
        new_file_diff, replay,
    },
    diff::file_diff_indexed,
    fingerprint::fingerprint,
    folder_ops::{CheckedFolders, FolderChange, check_folders, folder_lines},
    journal::{
        CommitStep, Expect, Step, StepChange, StepMode,
        commit::{CommitOptions, commit},
    },
};

/// What an undo will write, worked out before it writes.
#[derive(Debug)]
pub struct UndoPlan {
    /// The entry's number.
    pub seq: u64,
    /// The unified diff of what the undo writes.
    pub diff: String,
    steps: Vec<Step>,
    files: Vec<FileChange>,
    undo: UndoData,
    prune: Vec<RelPath>,
    /// Folders to make (those the entry removed).
    make: Vec<RelPath>,
    /// How many files and folders it writes.
    written: (usize, usize),
    /// The text of each file read, before the undo writes it.
    texts: Vec<String>,
}

/// Format 1 of the undo data: what `ast_edit` wrote before format 2, edits only.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoDataV1 {
    #[allow(dead_code, reason = "read to be refused when it is not 1")]
    version: u64,
    files: Vec<UndoFileV1>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoFileV1 {
    path: String,
    edits: Vec<Edit>,
}

/// Works out what undoing `entry` writes, checking every file against what the entry wrote.
/// The error is the reason it cannot be undone, as the rest of a sentence.
///
/// # Errors
/// The reason: no or malformed undo data, a file that changed since, a diff that does not
/// match the undo data.
pub fn plan(workspace: &ConfinedRoot, entry: &LogEntry) -> Result<UndoPlan, String> {
    plan_noting(workspace, entry, &mut false)
}

/// Why an entry cannot be undone as it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// Its files are not what it wrote (the reason, as the rest of a sentence): its own lines
    /// may still be intact, for an out-of-order undo to revert.
    Changed(String),
    /// Anything else: no or malformed undo data, a recorded diff that is not its undo data.
    Other(String),
}

/// [`plan`], telling a changed file from every other reason.
///
/// # Errors
/// [`PlanError`].
pub fn plan_or_changed(workspace: &ConfinedRoot, entry: &LogEntry) -> Result<UndoPlan, PlanError> {
    let mut changed = false;
    plan_noting(workspace, entry, &mut changed)
        .map_err(|why| if changed { PlanError::Changed(why) } else { PlanError::Other(why) })
}

/// [`plan`], setting `changed_since` when it refuses because a file changed since.
fn plan_noting(
    workspace: &ConfinedRoot,
    entry: &LogEntry,
    changed_since: &mut bool,
) -> Result<UndoPlan, String> {
    let record = &entry.record;
    let data = record.undo.as_ref().ok_or("it keeps no undo data")?;
    let UndoData { ops, dirs: created, modes, kept, folders, .. } = parse(data)?;
    // The modes the apply changed, by the path each file ends at.
    let mut mode_of: HashMap<&str, &ModeChange> = HashMap::new();
    for change in &modes {
        if mode_of.insert(change.path.as_str(), change).is_some() {
            return Err(format!("its undo data changes the mode of `{}` twice", change.path));
        }
    }
    // The log is input like any other file: every path is confined to the root, and every
    // file must be exactly what the entry wrote.
    let hashes: HashMap<&str, &FileChange> =
        record.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let hash_of = |path: &str| {
        hashes
            .get(path)
            .copied()
            .ok_or_else(|| format!("its undo data names `{path}`, which it did not write"))
    };
    let mut changed = Vec::new();
    let read = read_written(workspace, &ops, &hash_of, &mut changed)?;
    // The files it replaced whole: their bytes before written back, onto exactly the bytes
    // after.
    let kept = match crate::kept::undo_kept(workspace, &kept) {
        Ok(kept) => kept,
        Err(crate::kept::KeptError::Changed(paths)) => {
            changed.extend(paths);
            crate::kept::KeptUndo::default()
        }
        Err(crate::kept::KeptError::Failed(why)) => return Err(why),
    };
    if !changed.is_empty() {
        *changed_since = true;
        return Err(format!(
            "{} changed since it was written: {}",
            plural(changed.len(), "file"),
            changed.join(", ")
        ));
    }
    let mut inversion = Inversion::default();
    let mut modes_used = 0;
    let folder = |dir: &String| {
        RelPath::new(dir).map_err(|_| format!("`{dir}` is not a folder inside the workspace"))
    };
    let mut prune = created.iter().map(folder).collect::<Result<Vec<_>, _>>()?;
    let before_of = |path: &str| hash_of(path).map(|h| h.before.clone());
    let mut texts = Vec::new();
    for (op, current) in ops.iter().zip(read) {
        if let Some((text, _)) = &current {
            texts.push(text.clone());
        }
        let (text, mode) = current.unwrap_or_default();
        match op {
            Applied::Update { path, edits } => {
                let chmod = mode_of.get(path.as_str()).copied();
                modes_used += usize::from(chmod.is_some());
                let before = before_of(path)?;
                inversion.update(path, edits, &text, before.as_deref(), chmod)?;
            }
            Applied::Create { path, content, mode: created_mode } => {
                let before = before_of(path)?;
                inversion.create(path, content, *created_mode, (text, mode), before.as_deref())?;
            }
            Applied::Delete { path, content, mode } => {
                let before = before_of(path)?;
                inversion.delete(workspace, path, content, *mode, before.as_deref())?;
            }
            Applied::Move { from, to, edits } => {
                let chmod = mode_of.get(to.as_str()).copied();
                modes_used += usize::from(chmod.is_some());
                let before = before_of(from)?;
                inversion.moved(workspace, from, to, edits, &text, before.as_deref(), chmod)?;
            }
        }
    }
    if modes_used != modes.len() {
        return Err("its undo data changes the mode of a file it did not update or move".to_owned());
    }
    let folders_done =
        invert_folders(workspace, &folders, (&mut inversion, changed_since), &kept.done)?;
    prune.extend(folders_done.remove);
    // An entry that replaced files only whole may record no diff.
    let shown =
        record.diff.as_deref().or_else(|| (ops.is_empty() && folders.is_empty()).then_some(""));
    if shown != Some(inversion.shown.as_str()) {
        return Err(
            "its recorded diff is not what its undo data would write back (the log entry was changed outside staged); `staged log show` would not show what an undo writes"
                .to_owned(),
        );
    }
    let written = (ops.len() + kept.done.len(), folders_done.done.len());
    let mut steps = inversion.steps;
    steps.extend(kept.steps);
    let mut files = inversion.files;
    files.extend(kept.files);
    Ok(UndoPlan {
        seq: entry.seq,
        diff: inversion.diff,
        steps,
        files,
        undo: UndoData {
            dirs: inversion.dirs,
            modes: inversion.inverse_modes,
            kept: kept.done,
            ..UndoData::of(inversion.inverse_ops)
        }
        .with_folders(folders_done.done),
        prune,
        make: folders_done.make,
        written,
        texts,
    })
}

/// The undo of an entry's `folders` (the other way round, the last first: a folder it made is
/// removed once empty, and one that holds anything the undo does not delete is left; a folder
/// it removed is made again), checked against the disk and the files the undo deletes; their
/// lines put before the diffs the entry showed and the undo writes. A folder that is not what
/// the entry left refuses, setting `changed_since`.
fn invert_folders(
    workspace: &ConfinedRoot,
    folders: &[FolderChange],
    (inversion, changed_since): (&mut Inversion, &mut bool),
    kept: &[crate::kept::KeptChange],
) -> Result<CheckedFolders, String> {
    let inverse: Vec<FolderChange> = folders.iter().rev().map(FolderChange::inverse).collect();
    let deleted: Vec<&str> = inversion
        .inverse_ops
        .iter()
        .filter_map(|op| match op {
            Applied::Delete { path, .. } => Some(path.as_str()),
            Applied::Move { from, .. } => Some(from.as_str()),
            _ => None,
        })
        .chain(kept.iter().filter(|k| k.after.is_none()).map(|k| k.path.as_str()))
        .collect();
    let done = match check_folders(workspace, &inverse, &deleted) {
        Ok(done) => done,
        Err(CheckError::Stale(stale)) => {
            *changed_since = true;
            return Err(format!("1 folder changed since it was written: {stale}"));
        }
        Err(CheckError::Failed(err)) => return Err(err.to_string()),
    };
    inversion.shown.insert_str(0, &folder_lines(folders));
    inversion.diff.insert_str(0, &folder_lines(&done.done));
    Ok(done)
}

/// What each op of an entry's undo data left on disk: the text (and mode) of the file it wrote,
/// `None` for one it deleted, checked to be what it wrote (`hash_of` names its hashes); the
/// files that changed since are added to `changed`.
fn read_written<'h>(
    workspace: &ConfinedRoot,
    ops: &[Applied],
    hash_of: &dyn Fn(&str) -> Result<&'h FileChange, String>,
    changed: &mut Vec<String>,
) -> Result<Vec<Option<(String, u32)>>, String> {
    let mut read = Vec::with_capacity(ops.len());
    for op in ops {
        let current = match op {
            Applied::Update { path, .. } | Applied::Create { path, .. } => {
                let after = hash_of(path)?.after.clone();
                Some(read_as(workspace, path, after.as_deref(), changed)?)
            }
            Applied::Delete { path, .. } => {
                let hashes = hash_of(path)?;
                if hashes.after.is_some() {
                    return Err(format!("its undo data deletes `{path}`, which it wrote"));
                }
                absent(workspace, path, changed)?;
                None
            }
            Applied::Move { from, to, .. } => {
                let after = hash_of(to)?.after.clone();
                if hash_of(from)?.after.is_some() {
                    return Err(format!("its undo data moves `{from}`, which it wrote"));
                }
                absent(workspace, from, changed)?;
                Some(read_as(workspace, to, after.as_deref(), changed)?)
            }
        };
        read.push(current);
    }
    Ok(read)
}

/// The undo of a log entry as it is built, op by op: the diff the entry recorded (`shown`,
/// checked against it), the diff the undo writes, its commit steps, its files, and its own undo
/// data.
#[derive(Default)]
struct Inversion {
    shown: String,
    diff: String,
    steps: Vec<Step>,
    files: Vec<FileChange>,
    inverse_ops: Vec<Applied>,
    dirs: Vec<String>,
    inverse_modes: Vec<ModeChange>,
}

impl Inversion {
    /// An update of `path` whose file reads `text` now, its SHA-256 before being `before`.
    fn update(
        &mut self,
        path: &str,
        edits: &[Edit],
        text: &str,
        before: Option<&str>,
        chmod: Option<&ModeChange>,
    ) -> Result<(), String> {
        let (inverse, restored) = restore(text, edits, path)?;
        expect_hash(&restored, before, path)?;
        let (was, now) = headers(path, path, chmod);
        self.shown.push_str(&diff_of(was, &restored, edits)?);
        self.diff.push_str(&diff_of(now, text, &inverse)?);
        self.files.push(change(path, Some(text), Some(&restored)));
        self.steps.push(Step {
            target: rel(path)?,
            expect: Expect::Fingerprint(fingerprint(text.as_bytes())),
            change: StepChange::Write {
                bytes: restored.into_bytes(),
                mode: chmod.map_or(StepMode::Keep, |c| StepMode::Bits(c.old)),
            },
        });
        self.inverse_modes.extend(chmod.map(|c| ModeChange {
            path: path.to_owned(),
            old: c.new,
            new: c.old,
        }));
        self.inverse_ops.push(Applied::Update { path: path.to_owned(), edits: inverse });
        Ok(())
    }

    /// A create of `path` (with `content`, shown with `created_mode`), whose file reads `text`
    /// with `mode` now.
    fn create(
        &mut self,
        path: &str,
        content: &str,
        created_mode: Option<u32>,
        (text, mode): (String, u32),
        before: Option<&str>,
    ) -> Result<(), String> {
        if before.is_some() {
            return Err(format!("its undo data creates `{path}`, which was there before"));
        }
        if *content != text {
            return Err(format!(
                "its undo data does not give back the earlier contents of `{path}`"
            ));
        }
        let shown_mode = created_mode.unwrap_or(NEW_FILE_MODE);
        self.shown.push_str(&new_file_diff(path, content, shown_mode).map_err(|e| e.to_string())?);
        self.diff.push_str(&deleted_file_diff(path, &text, mode).map_err(|e| e.to_string())?);
        self.files.push(change(path, Some(&text), None));
        self.steps.push(Step {
            target: rel(path)?,
            expect: Expect::Fingerprint(fingerprint(text.as_bytes())),
            change: StepChange::Delete,
        });
        self.inverse_ops.push(Applied::Delete { path: path.to_owned(), content: text, mode });
        Ok(())
    }

    /// A delete of `path`, which held `content` with `mode`.
    fn delete(
        &mut self,
        workspace: &ConfinedRoot,
        path: &str,
        content: &str,
        mode: u32,
        before: Option<&str>,
    ) -> Result<(), String> {
        expect_hash(content, before, path)?;
        self.shown.push_str(&deleted_file_diff(path, content, mode).map_err(|e| e.to_string())?);
        self.diff.push_str(&new_file_diff(path, content, mode).map_err(|e| e.to_string())?);
        self.files.push(change(path, None, Some(content)));
        let target = rel(path)?;
        note_missing_dirs(workspace, &target, &mut self.dirs);
        self.steps.push(Step {
            target,
            expect: Expect::Absent,
            change: StepChange::Write {
                bytes: content.as_bytes().to_vec(),
                mode: StepMode::Bits(mode),
            },
        });
        self.inverse_ops.push(Applied::Create {
            path: path.to_owned(),
            content: content.to_owned(),
            mode: Some(mode),
        });
        Ok(())
    }

    /// A move of `from` to `to` with `edits`, whose file at `to` reads `text` now.
    #[allow(clippy::too_many_arguments, reason = "the move's facts, each used once")]
    fn moved(
        &mut self,
        workspace: &ConfinedRoot,
        from: &str,
        to: &str,
        edits: &[Edit],
        text: &str,
        before: Option<&str>,
        chmod: Option<&ModeChange>,
    ) -> Result<(), String> {
        let (inverse, restored) = restore(text, edits, to)?;
        expect_hash(&restored, before, from)?;
        let (was, now) = headers(from, to, chmod);
        self.shown.push_str(&diff_of(was, &restored, edits)?);
        self.diff.push_str(&diff_of(now, text, &inverse)?);
        self.inverse_modes.extend(chmod.map(|c| ModeChange {
            path: from.to_owned(),
            old: c.new,
            new: c.old,
        }));
        self.files.push(change(to, Some(text), None));
        self.files.push(change(from, None, Some(&restored)));
        let (source, target) = (rel(to)?, rel(from)?);
        note_missing_dirs(workspace, &target, &mut self.dirs);
        self.steps.push(Step {
            target,
            expect: Expect::Absent,
            change: StepChange::Write {
                bytes: restored.into_bytes(),
                mode: chmod.map_or(StepMode::Of(source.clone()), |c| StepMode::Bits(c.old)),
            },
        });
        self.steps.push(Step {
            target: source,
            expect: Expect::Fingerprint(fingerprint(text.as_bytes())),
            change: StepChange::Delete,
        });
        self.inverse_ops.push(Applied::Move {
            from: to.to_owned(),
            to: from.to_owned(),
            edits: inverse,
        });
        Ok(())
    }
}

/// Reverts `entry` (an applied change, an undo or a redo) in `workspace`, through the journal,
/// calling `observer` after each durable step of the commit. Writes nothing, and returns an
/// error result, when a file changed since the entry wrote it or its undo data does not fit.
///
/// # Errors
/// [`ActionError::Cancelled`] when `cancel` fired before anything was written;
/// [`ActionError::Other`] when a write failed.
pub fn undo_observed(
    workspace: &ConfinedRoot,
    entry: &LogEntry,
    retirement: &Retirement,
    cancel: &CancelToken,
    observer: &mut dyn FnMut(CommitStep),
) -> Result<ToolResult, ActionError> {
    let record = &entry.record;
    let seq = entry.seq;
    let refuse = |why: &str| {
        ToolResult::error(format!(
            "Cannot undo log entry {seq} ({}): {why}. Nothing was written.",
            record.label
        ))
    };
    if cancel.is_cancelled() {
        return Err(ActionError::Cancelled);
    }
    let plan = match plan(workspace, entry) {
        Ok(plan) => plan,
        Err(why) => return Ok(refuse(&why)),
    };
    let n_files = match plan.written {
        (files, 0) => plural(files, "file"),
        (0, folders) => plural(folders, "folder"),
        (files, folders) => format!("{} and {}", plural(files, "file"), plural(folders, "folder")),
    };
    let text = match retirement.base().map(|base| base.outcome) {
        Some(LogOutcome::Redone) => {
            format!("Redid log entry {seq}'s change ({}): {n_files} written again.", record.label)
        }
        _ => format!("Undid log entry {seq} ({}): {n_files} restored.", record.label),
    };
    let mut change = AppliedChange {
        result: text.clone(),
        label: None,
        diff: Some(plan.diff),
        files: plan.files,
        undo: Some(plan.undo.into_value()),
        remainder: None,
        texts: plan.texts,
    };
    commit_logged(
        workspace,
        &plan.steps,
        (&plan.make, &plan.prune),
        &mut change,
        retirement,
        cancel,
        observer,
        &refuse,
    )
}

/// Reverts log entry `seq` (`label`) by writing `checked`: what reverts its own changes on the
/// files as they are now, when later entries or other writers changed other parts of them
/// (worked out by the caller from the log). Recorded as the undo `retirement` holds; nothing
/// is written when a file changed since `checked` read it.
///
/// # Errors
/// As [`undo_observed`].
pub fn undo_checked(
    workspace: &ConfinedRoot,
    seq: u64,
    label: &str,
    mut checked: crate::change::Checked,
    retirement: &Retirement,
    cancel: &CancelToken,
) -> Result<ToolResult, ActionError> {
    let refuse = |why: &str| {
        ToolResult::error(format!(
            "Cannot undo log entry {seq} ({label}): {why}. Nothing was written."
        ))
    };
    let n_files = plural(checked.undo.ops.len() + checked.undo.kept.len(), "file");
    let steps = std::mem::take(&mut checked.steps);
    let text = format!(
        "Undid log entry {seq} ({label}): its own lines in {n_files} restored; later changes to other lines kept."
    );
    let mut change = AppliedChange {
        result: text,
        label: None,
        diff: Some(checked.diff),
        files: checked.files,
        undo: Some(checked.undo.into_value()),
        remainder: None,
        texts: checked.texts,
    };
    let no_folders: (&[RelPath], &[RelPath]) = (&[], &[]);
    commit_logged(
        workspace,
        &steps,
        no_folders,
        &mut change,
        retirement,
        cancel,
        &mut |_| {},
        &refuse,
    )
}

/// Commits `steps` through the journal, preparing `change` as `retirement`'s record first.
#[allow(clippy::too_many_arguments, reason = "the parts of one commit, each used once")]
fn commit_logged(
    workspace: &ConfinedRoot,
    steps: &[Step],
    (make, prune): (&[RelPath], &[RelPath]),
    change: &mut AppliedChange,
    retirement: &Retirement,
    cancel: &CancelToken,
    observer: &mut dyn FnMut(CommitStep),
    refuse: &dyn Fn(&str) -> ToolResult,
) -> Result<ToolResult, ActionError> {
    if cancel.is_cancelled() {
        return Err(ActionError::Cancelled);
    }
    let mut prepare = |key: &str| {
        retirement.prepare_taking(key, change).map_err(|err| {
            format!("the resolve log could not record the undo, so nothing was written: {err}")
        })
    };
    let mut abandon = |_: &str| retirement.abandon();
    let mut retire = || retirement.retire().is_ok();
    let options = CommitOptions {
        origin: None,
        prune,
        make,
        prepare: Some(&mut prepare),
        abandon: Some(&mut abandon),
        retire: Some(&mut retire),
        observer: Some(observer),
    };
    match commit(workspace, steps, options) {
        Ok(_) => Ok(ToolResult::text(change.result.clone())),
        Err(JournalError::Drifted(path) | JournalError::Appeared(path)) => {
            Ok(refuse(&format!("1 file changed since it was written: {path}")))
        }
        Err(err) => Err(ActionError::other(err)),
    }
}

/// The [`UndoHandler`] of the built-in tools' entries in one workspace.
#[derive(Debug, Clone)]
pub struct ChangeUndo {
    workspace: ConfinedRoot,
}

impl ChangeUndo {
    /// The handler for `workspace`.
    pub fn new(workspace: ConfinedRoot) -> ChangeUndo {
        ChangeUndo { workspace }
    }
}

#[async_trait::async_trait]
impl UndoHandler for ChangeUndo {
    async fn undo(
        &self,
        entry: &LogEntry,
        retirement: &Retirement,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        let workspace = self.workspace.clone();
        let entry = entry.clone();
        let retirement = retirement.clone();
        let cancel = cancel.clone();
        tokio::task::spawn_blocking(move || {
            undo_observed(&workspace, &entry, &retirement, &cancel, &mut |_| {})
        })
        .await
        .map_err(|err| ActionError::other(staged_core::worker_failure("undo", err)))?
    }
}

/// What a log entry's undo data says it did to each file (format 1 or 2).
///
/// # Errors
/// Why the undo data cannot be read.
pub fn undo_ops(data: &serde_json::Value) -> Result<Vec<Applied>, String> {
    parse(data).map(|data| data.ops)
}

/// Undo data in format 1 or 2, as format 2. Read from the value in place, not from a copy of
/// it: a whole-session revert reads the undo data of every entry of the session (1,000 for a
/// long one), and the copy was a third of that reading.
fn parse(data: &serde_json::Value) -> Result<UndoData, String> {
    match staged_protocol::lenient::Header::of(data).version.number {
        Some(1) => {
            let v1 = UndoDataV1::deserialize(data)
                .map_err(|err| format!("its undo data is malformed ({err})"))?;
            Ok(UndoData::of(
                v1.files
                    .into_iter()
                    .map(|f| Applied::Update { path: f.path, edits: f.edits })
                    .collect(),
            ))
        }
        Some(crate::change::UNDO_DATA_VERSION | crate::change::UNDO_DATA_FOLDERS_VERSION) => {
            UndoData::deserialize(data).map_err(|err| format!("its undo data is malformed ({err})"))
        }
        Some(other) => Err(format!("its undo data is of format {other}")),
        None => Err("its undo data is malformed (no version)".to_owned()),
    }
}

/// The text and mode of `path` if it hashes to `after`; otherwise it is noted as changed.
fn read_as(
    workspace: &ConfinedRoot,
    path: &str,
    after: Option<&str>,
    changed: &mut Vec<String>,
) -> Result<(String, u32), String> {
    let rel = rel(path)?;
    let found = workspace.fs().parent(&rel).ok().and_then(|(dir, name)| {
        let bytes = dir.read(&name).ok()?;
        let mode = dir.file_mode(&name).ok()?;
        Some((bytes, mode))
    });
    match found {
        Some((bytes, mode)) if Some(fingerprint(&bytes).as_str()) == after => {
            let text =
                String::from_utf8(bytes).map_err(|_| format!("`{path}` is not UTF-8 text"))?;
            Ok((text, mode))
        }
        _ => {
            changed.push(path.to_owned());
            Ok((String::new(), 0))
        }
    }
}

/// Notes `path` as changed unless nothing is there. A folder there, or a file where a folder
/// of its path would be, is left to the commit's check: an undo may delete every file of a
/// folder to put a file back at its path, or a file to put files back below it (an apply that
/// turned a file into a folder, or back), and the commit refuses, naming it, when a file
/// the undo does not delete stays there.
fn absent(workspace: &ConfinedRoot, path: &str, changed: &mut Vec<String>) -> Result<(), String> {
    let rel = rel(path)?;
    let there = match workspace.fs().parent(&rel) {
        Ok((dir, name)) => {
            dir.entry_metadata(&name).map_or(true, |m| m.is_some_and(|m| !m.is_dir()))
        }
        Err(err) => {
            !matches!(err.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory)
        }
    };
    if there {
        changed.push(path.to_owned());
    }
    Ok(())
}

/// The diff headers of a file that went from `from` to `to` (the same path when it stayed),
/// with `chmod`'s mode change: as the apply showed it, and as its undo shows it.
fn headers<'a>(
    from: &'a str,
    to: &'a str,
    chmod: Option<&ModeChange>,
) -> (DiffHeader<'a>, DiffHeader<'a>) {
    match chmod {
        Some(c) => (
            DiffHeader::Chmod { from, to, old: c.old, new: c.new },
            DiffHeader::Chmod { from: to, to: from, old: c.new, new: c.old },
        ),
        None if from == to => (DiffHeader::Modify { path: from }, DiffHeader::Modify { path: to }),
        None => (DiffHeader::Rename { from, to }, DiffHeader::Rename { from: to, to: from }),
    }
}

fn restore(text: &str, edits: &[Edit], path: &str) -> Result<(Vec<Edit>, String), String> {
    invert(edits)
        .and_then(|inverse| replay(text, &inverse).map(|restored| (inverse, restored)))
        .ok_or_else(|| format!("its undo data does not fit `{path}`"))
}

fn expect_hash(text: &str, expected: Option<&str>, path: &str) -> Result<(), String> {
    if Some(fingerprint(text.as_bytes()).as_str()) == expected {
        Ok(())
    } else {
        Err(format!("its undo data does not give back the earlier contents of `{path}`"))
    }
}

fn diff_of(header: DiffHeader<'_>, text: &str, edits: &[Edit]) -> Result<String, String> {
    file_diff_indexed(&header, &LineIndex::new(text), edits)
        .map_err(|_| "its undo data does not fit the files it names".to_owned())
}

fn change(path: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
    FileChange {
        path: path.to_owned(),
        before: before.map(|t| fingerprint(t.as_bytes())),
        after: after.map(|t| fingerprint(t.as_bytes())),
    }
}

/// A path of the undo data: inside the workspace, and never in staged's state folder (undo
/// data someone else edited could name it).
fn rel(path: &str) -> Result<RelPath, String> {
    let rel =
        RelPath::new(path).map_err(|_| format!("`{path}` is not a path inside the workspace"))?;
    if crate::state_guard::in_state_folder(&rel) {
        return Err(JournalError::StatePath(path.to_owned()).to_string());
    }
    Ok(rel)
}

/// Notes the folders above `rel` that do not exist: the undo creates them.
fn note_missing_dirs(workspace: &ConfinedRoot, rel: &RelPath, dirs: &mut Vec<String>) {
    let mut missing = Vec::new();
    let mut cursor = rel.parent();
    while let Some(dir) = cursor {
        if workspace.fs().dir(Some(&dir)).is_ok() {
            break;
        }
        cursor = dir.parent();
        missing.push(dir.display());
    }
    for dir in missing.into_iter().rev() {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}
