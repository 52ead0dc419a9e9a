//! Undo (and redo) of an `ast_edit` apply: the log entry's edits, inverted, written through the
//! journal like an apply, and only onto files that are byte-identical to what the entry wrote.
//!
//! An apply records, for each file it wrote, its edits as `(start, before, after)` with
//! `start` a byte offset in the text before the write. Inverting them (offsets shifted into
//! the written text, `before` and `after` swapped) gives the edits that restore the earlier
//! text, and the undo records those inverted edits as its own undo data, so undoing an undo
//! (a redo) is the same operation. Before writing, every file must hash to the entry's
//! `after`, and the restored text must hash to its `before`; otherwise nothing is written and
//! the result names the files that changed.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{
    ActionError, AppliedChange, CancelToken, FileChange, LogEntry, LogOutcome, Retirement,
    ToolResult, UndoHandler,
};
use staged_fs::RelPath;

use crate::{
    AstEditError, EditPreview, Workspace,
    diff::file_diff,
    edits::Edit,
    fingerprint::fingerprint,
    journal::{CommitOptions, CommitStep, FileWrite, commit_with},
    render::plural,
};

/// The undo data format this build writes and reads.
const UNDO_DATA_VERSION: u64 = 1;

/// What an `ast_edit` log entry keeps to be undone.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoData {
    version: u64,
    files: Vec<UndoFile>,
}

/// One file's edits, as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoFile {
    path: String,
    edits: Vec<UndoEdit>,
}

/// At byte `start` of the text before the write, `before` was replaced by `after`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoEdit {
    start: usize,
    before: String,
    after: String,
}

/// The undo data of an apply that wrote `preview`'s files.
pub(crate) fn undo_data(preview: &EditPreview) -> Value {
    let data = UndoData {
        version: UNDO_DATA_VERSION,
        files: preview
            .files
            .iter()
            .map(|file| UndoFile {
                path: file.path.clone(),
                edits: file
                    .edits
                    .iter()
                    .map(|edit| UndoEdit {
                        start: edit.byte_start,
                        before: edit.before.clone(),
                        after: edit.after.clone(),
                    })
                    .collect(),
            })
            .collect(),
    };
    serde_json::to_value(data).unwrap_or(Value::Null)
}

/// The edits that turn the written text back into the text before: offsets moved into the
/// written text, `before` and `after` swapped.
fn invert(edits: &[UndoEdit]) -> Option<Vec<UndoEdit>> {
    let mut shift: isize = 0;
    let mut res = Vec::with_capacity(edits.len());
    for edit in edits {
        let start = edit.start.checked_add_signed(shift)?;
        shift +=
            isize::try_from(edit.after.len()).ok()? - isize::try_from(edit.before.len()).ok()?;
        res.push(UndoEdit { start, before: edit.after.clone(), after: edit.before.clone() });
    }
    Some(res)
}

/// `text` with `edits` made, each checked to replace exactly its `before`; `None` when one
/// does not fit (the data does not belong to this text).
fn replay(text: &str, edits: &[UndoEdit]) -> Option<String> {
    let mut res = String::with_capacity(text.len());
    let mut cursor = 0;
    for edit in edits {
        let end = edit.start.checked_add(edit.before.len())?;
        if edit.start < cursor || text.get(edit.start..end)? != edit.before {
            return None;
        }
        res.push_str(text.get(cursor..edit.start)?);
        res.push_str(&edit.after);
        cursor = end;
    }
    res.push_str(text.get(cursor..)?);
    Some(res)
}

/// The unified diff of `edits` on `text` (the file at `path`).
fn diff_of(path: &str, text: &str, edits: &[UndoEdit]) -> Result<String, AstEditError> {
    let edits: Vec<Edit> = edits
        .iter()
        .map(|edit| Edit {
            byte_start: edit.start,
            byte_end: edit.start + edit.before.len(),
            before: edit.before.clone(),
            after: edit.after.clone(),
            start_line: 0,
            start_column: 0,
            end_line: 0,
            end_column: 0,
            replacements: 1,
        })
        .collect();
    file_diff(path, text, &edits)
}

/// Reverts `entry` (an `ast_edit` apply, undo or redo) in `workspace`, through the journal,
/// calling `observer` after each durable step of the commit. Writes nothing, and returns an
/// error result, when a file changed since the entry wrote it or its undo data does not fit.
///
/// # Errors
/// [`ActionError::Cancelled`] when `cancel` fired before anything was written;
/// [`ActionError::Other`] when a write failed.
pub fn undo_observed(
    workspace: &Workspace,
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
    let Some(data) = record.undo.as_ref() else {
        return Ok(refuse("it keeps no undo data"));
    };
    let data = match serde_json::from_value::<UndoData>(data.clone()) {
        Ok(data) if data.version == UNDO_DATA_VERSION => data,
        Ok(data) => {
            return Ok(refuse(&format!("its undo data is of format {}", data.version)));
        }
        Err(err) => return Ok(refuse(&format!("its undo data is malformed ({err})"))),
    };
    if cancel.is_cancelled() {
        return Err(ActionError::Cancelled);
    }
    // Every file first: the log is input like any other, so each path is confined to the root
    // and each file must be exactly what the entry wrote.
    let mut changed = Vec::new();
    let mut plans = Vec::with_capacity(data.files.len());
    for file in &data.files {
        let Some(hashes) = record.files.iter().find(|f| f.path == file.path) else {
            return Ok(refuse(&format!(
                "its undo data names `{}`, which it did not write",
                file.path
            )));
        };
        let (Some(before), Some(after)) = (&hashes.before, &hashes.after) else {
            return Ok(refuse(&format!(
                "`{}` was created or deleted, which undo does not handle",
                file.path
            )));
        };
        let Ok(rel) = RelPath::new(&file.path) else {
            return Ok(refuse(&format!("`{}` is not a path inside the workspace", file.path)));
        };
        let current = workspace.fs().read(&rel).ok();
        match current {
            Some(bytes) if fingerprint(&bytes) == *after => plans.push((file, rel, bytes, before)),
            _ => changed.push(file.path.clone()),
        }
    }
    if !changed.is_empty() {
        return Ok(refuse(&format!(
            "{} changed since it was written: {}",
            plural(changed.len(), "file"),
            changed.join(", ")
        )));
    }
    let mut writes = Vec::with_capacity(plans.len());
    let mut files = Vec::with_capacity(plans.len());
    let mut inverse_files = Vec::with_capacity(plans.len());
    let mut diff = String::new();
    for (file, rel, bytes, before) in plans {
        let Ok(text) = String::from_utf8(bytes) else {
            return Ok(refuse(&format!("`{}` is not UTF-8 text", file.path)));
        };
        let restored = invert(&file.edits)
            .and_then(|inverse| replay(&text, &inverse).map(|restored| (inverse, restored)));
        let Some((inverse, restored)) = restored else {
            return Ok(refuse(&format!("its undo data does not fit `{}`", file.path)));
        };
        let restored_hash = fingerprint(restored.as_bytes());
        if restored_hash != *before {
            return Ok(refuse(&format!(
                "its undo data does not give back the earlier contents of `{}`",
                file.path
            )));
        }
        diff.push_str(&diff_of(&file.path, &text, &inverse).map_err(ActionError::other)?);
        files.push(FileChange {
            path: file.path.clone(),
            before: Some(fingerprint(text.as_bytes())),
            after: Some(restored_hash),
        });
        inverse_files.push(UndoFile { path: file.path.clone(), edits: inverse });
        writes.push(FileWrite {
            target: rel,
            expected_fingerprint: fingerprint(text.as_bytes()),
            contents: restored,
        });
    }
    let n_files = plural(writes.len(), "file");
    let text = match retirement.base().map(|base| base.outcome) {
        Some(LogOutcome::Redone) => {
            format!("Redid log entry {seq}'s change ({}): {n_files} written again.", record.label)
        }
        _ => format!("Undid log entry {seq} ({}): {n_files} restored.", record.label),
    };
    let undo = UndoData { version: UNDO_DATA_VERSION, files: inverse_files };
    let change = AppliedChange {
        result: text.clone(),
        diff: Some(diff),
        files,
        undo: serde_json::to_value(undo).ok(),
        remainder: None,
    };
    if cancel.is_cancelled() {
        return Err(ActionError::Cancelled);
    }
    let mut prepare = |key: &str| {
        retirement.prepare(key, &change).map_err(|err| {
            format!("the resolve log could not record the undo, so nothing was written: {err}")
        })
    };
    let mut abandon = |_: &str| retirement.abandon();
    let mut retire = || retirement.retire().is_ok();
    let options = CommitOptions {
        origin: None,
        prepare: Some(&mut prepare),
        abandon: Some(&mut abandon),
        retire: Some(&mut retire),
        observer: Some(observer),
    };
    match commit_with(workspace, &writes, options) {
        Ok(()) => Ok(ToolResult::text(text)),
        Err(AstEditError::Drifted(path)) => {
            Ok(refuse(&format!("1 file changed since it was written: {path}")))
        }
        Err(err) => Err(ActionError::other(err)),
    }
}

/// The [`UndoHandler`] of `ast_edit` entries in one workspace.
#[derive(Debug, Clone)]
pub struct AstEditUndo {
    workspace: Workspace,
}

impl AstEditUndo {
    /// The handler for `workspace`.
    pub fn new(workspace: Workspace) -> AstEditUndo {
        AstEditUndo { workspace }
    }
}

#[async_trait::async_trait]
impl UndoHandler for AstEditUndo {
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
        .map_err(|err| ActionError::other(format!("ast_edit undo worker failed: {err}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, before: &str, after: &str) -> UndoEdit {
        UndoEdit { start, before: before.to_owned(), after: after.to_owned() }
    }

    #[test]
    fn inverted_edits_restore_the_text_and_invert_back() {
        let before = "foo(1); foo(22); x";
        let edits = [edit(0, "foo(1)", "barbaz(1)"), edit(8, "foo(22)", "b(22)")];
        let after = replay(before, &edits).unwrap();
        assert_eq!(after, "barbaz(1); b(22); x");
        let inverse = invert(&edits).unwrap();
        assert_eq!(replay(&after, &inverse).unwrap(), before);
        let again = invert(&inverse).unwrap();
        assert_eq!(replay(before, &again).unwrap(), after);
    }

    #[test]
    fn edits_that_do_not_fit_the_text_are_refused() {
        assert!(replay("abc", &[edit(1, "x", "y")]).is_none());
        assert!(replay("abc", &[edit(2, "cd", "y")]).is_none());
        assert!(replay("abc", &[edit(1, "b", "y"), edit(0, "a", "z")]).is_none());
        assert!(replay("é", &[edit(1, "", "x")]).is_none());
    }
}
