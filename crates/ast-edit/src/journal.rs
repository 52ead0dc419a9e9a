//! All-or-nothing writes of several files, with a journal in `<root>/.staged/journal/` so that
//! [`recover`] can finish or roll back a commit that a crash (or kill -9) interrupted.
//!
//! The protocol:
//! 1. check every target still has the fingerprint the preview read;
//! 2. write the journal in state `preparing`, listing every target and its temp file;
//! 3. write and fsync every temp file (beside its target, with its permissions);
//! 4. switch the journal to `committed` (an atomic rename): the commit point;
//! 5. rename each temp over its target;
//! 6. delete the journal.
//!
//! Before the commit point no target has been touched, so recovery deletes the temps (roll
//! back). After it every new content is durable in a temp file or already in place, so
//! recovery renames the remaining temps (roll forward). Either way every file ends wholly old
//! or wholly new, and all files agree.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{
    AstEditError, Workspace,
    atomic::{replace, sync_dir, temp_path, unique_id, write_atomic, write_temp},
    fingerprint::fingerprint,
};

/// One file to replace.
#[derive(Debug, Clone)]
pub struct FileWrite {
    /// Absolute path of the target, inside the workspace.
    pub target: PathBuf,
    /// The fingerprint the target must still have (what the preview read).
    pub expected_fingerprint: String,
    /// The new contents.
    pub contents: String,
}

/// A point in [`commit_observed`]'s protocol, reported after it is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitStep {
    /// The journal exists in state `preparing`.
    Prepared,
    /// The temp file of the n-th write is durable.
    TempWritten(usize),
    /// The journal is `committed`.
    Committed,
    /// The n-th target has been replaced.
    Replaced(usize),
    /// The journal is gone.
    Finished,
}

/// What [`recover`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Commits finished (their remaining temps renamed in).
    pub rolled_forward: usize,
    /// Commits rolled back (their temps deleted, targets untouched).
    pub rolled_back: usize,
    /// The origins (see [`commit_from`]) of the commits that were finished, so the caller can
    /// retire the pending previews they belong to.
    pub finished_origins: Vec<String>,
    /// Journals left alone because a live process is still committing them.
    pub in_progress: usize,
}

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum JournalState {
    Preparing,
    Committed,
}

#[derive(Debug, Serialize, Deserialize)]
struct JournalEntry {
    target: PathBuf,
    temp: PathBuf,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    state: JournalState,
    entries: Vec<JournalEntry>,
    /// Who committed: for `ast_edit`, the preview's edits digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    origin: Option<String>,
}

/// Writes every file or none.
///
/// # Errors
/// [`AstEditError::Drifted`] (nothing written) when a target changed since the preview;
/// [`AstEditError::Write`]/[`AstEditError::Journal`] on I/O failure.
pub fn commit(workspace: &Workspace, writes: &[FileWrite]) -> Result<(), AstEditError> {
    commit_observed(workspace, writes, &mut |_| {})
}

/// [`commit`], calling `observer` after each durable step (tests use it to crash at every
/// step).
///
/// # Errors
/// As [`commit`].
pub fn commit_observed(
    workspace: &Workspace,
    writes: &[FileWrite],
    observer: &mut dyn FnMut(CommitStep),
) -> Result<(), AstEditError> {
    commit_inner(workspace, writes, None, observer)
}

/// [`commit`], recording `origin` in the journal; [`recover`] reports the origins of the
/// commits it finished.
///
/// # Errors
/// As [`commit`].
pub fn commit_from(
    workspace: &Workspace,
    writes: &[FileWrite],
    origin: &str,
) -> Result<(), AstEditError> {
    commit_inner(workspace, writes, Some(origin), &mut |_| {})
}

fn commit_inner(
    workspace: &Workspace,
    writes: &[FileWrite],
    origin: Option<&str>,
    observer: &mut dyn FnMut(CommitStep),
) -> Result<(), AstEditError> {
    for write in writes {
        workspace.confine(&write.target, &write.target.to_string_lossy())?;
        let current = std::fs::read(&write.target).map_err(|err| AstEditError::Read {
            path: write.target.clone(),
            message: err.to_string(),
        })?;
        if fingerprint(&current) != write.expected_fingerprint {
            return Err(AstEditError::Drifted(workspace.display_path(&write.target)));
        }
    }
    if let [single] = writes {
        write_atomic(&single.target, single.contents.as_bytes())?;
        observer(CommitStep::Finished);
        return Ok(());
    }
    let id = unique_id();
    let journal_dir = workspace.journal_dir();
    std::fs::create_dir_all(&journal_dir).map_err(journal_err)?;
    // Held until this commit is finished or rolled back: `recover` in another process leaves
    // a journal alone while its lock is held, and takes over once its owner is gone.
    let _lock = CommitLock::acquire(&journal_dir, &id)?;
    let journal_path = journal_dir.join(format!("{id}.json"));
    let mut journal = Journal {
        origin: origin.map(str::to_owned),
        state: JournalState::Preparing,
        entries: writes
            .iter()
            .enumerate()
            .map(|(i, w)| JournalEntry {
                target: w.target.clone(),
                temp: temp_path(&w.target, &format!("{id}-{i}")),
            })
            .collect(),
    };
    store_journal(&journal_path, &journal)?;
    observer(CommitStep::Prepared);
    for (i, (write, entry)) in writes.iter().zip(&journal.entries).enumerate() {
        if let Err(err) = write_temp(&write.target, &entry.temp, write.contents.as_bytes()) {
            roll_back(&journal_path, &journal);
            return Err(err);
        }
        observer(CommitStep::TempWritten(i));
    }
    for dir in unique_dirs(&journal) {
        if let Err(err) = sync_dir(&dir) {
            roll_back(&journal_path, &journal);
            return Err(err);
        }
    }
    journal.state = JournalState::Committed;
    store_journal(&journal_path, &journal)?;
    observer(CommitStep::Committed);
    roll_forward(&journal_path, &journal, observer)?;
    observer(CommitStep::Finished);
    Ok(())
}

/// Finishes or rolls back every interrupted commit in the workspace's journal folder. Call it
/// on start, before anything else touches the workspace.
///
/// # Errors
/// [`AstEditError::Journal`] when a journal cannot be read or replayed; it is then left in
/// place for a later attempt.
pub fn recover(workspace: &Workspace) -> Result<RecoveryReport, AstEditError> {
    let mut report = RecoveryReport::default();
    let dir = workspace.journal_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(report);
    };
    // A commit leaves up to three files: `<id>.lock`, `<id>.json` and, while the journal is
    // being rewritten, `<id>.json.tmp`. Each commit is handled under its lock.
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            [".json.tmp", ".json", ".lock"]
                .iter()
                .find_map(|suffix| name.strip_suffix(suffix).map(str::to_owned))
        })
        .collect();
    ids.sort();
    ids.dedup();
    for id in ids {
        let path = dir.join(format!("{id}.json"));
        let Some(_lock) = CommitLock::try_acquire(&dir, &id)? else {
            // Its owner is alive and still committing.
            report.in_progress += 1;
            continue;
        };
        // A journal rewrite that never reached its rename: the previous state file (if any)
        // is the truth.
        let _ = std::fs::remove_file(dir.join(format!("{id}.json.tmp")));
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            // Its owner finished between the listing and the lock.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => return Err(journal_err(err)),
        };
        let journal: Journal = serde_json::from_str(&text).map_err(journal_err)?;
        for entry in &journal.entries {
            workspace.confine(&entry.target, &entry.target.to_string_lossy())?;
            workspace.confine(&entry.temp, &entry.temp.to_string_lossy())?;
        }
        match journal.state {
            JournalState::Preparing => {
                roll_back(&path, &journal);
                report.rolled_back += 1;
            }
            JournalState::Committed => {
                roll_forward(&path, &journal, &mut |_| {})?;
                report.rolled_forward += 1;
                report.finished_origins.extend(journal.origin.clone());
            }
        }
    }
    Ok(report)
}

fn roll_forward(
    journal_path: &Path,
    journal: &Journal,
    observer: &mut dyn FnMut(CommitStep),
) -> Result<(), AstEditError> {
    for (i, entry) in journal.entries.iter().enumerate() {
        if entry.temp.exists() {
            replace(&entry.temp, &entry.target)?;
        }
        observer(CommitStep::Replaced(i));
    }
    for dir in unique_dirs(journal) {
        sync_dir(&dir)?;
    }
    std::fs::remove_file(journal_path).map_err(journal_err)?;
    if let Some(dir) = journal_path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}

fn roll_back(journal_path: &Path, journal: &Journal) {
    for entry in &journal.entries {
        let _ = std::fs::remove_file(&entry.temp);
    }
    let _ = std::fs::remove_file(journal_path);
}

fn store_journal(path: &Path, journal: &Journal) -> Result<(), AstEditError> {
    let text = serde_json::to_string_pretty(journal).map_err(journal_err)?;
    let tmp = path.with_extension("json.tmp");
    write_temp(path, &tmp, text.as_bytes())?;
    replace(&tmp, path)?;
    match path.parent() {
        Some(dir) => sync_dir(dir),
        None => Ok(()),
    }
}

fn unique_dirs(journal: &Journal) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        journal.entries.iter().filter_map(|e| e.target.parent().map(Path::to_path_buf)).collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// An exclusive OS lock on `<journal>/<id>.lock`, released (and the file removed) on drop. The
/// OS releases it when its process dies, however it dies.
struct CommitLock {
    file: std::fs::File,
    path: PathBuf,
}

impl CommitLock {
    fn open(dir: &Path, id: &str) -> Result<(std::fs::File, PathBuf), AstEditError> {
        let path = dir.join(format!("{id}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(journal_err)?;
        Ok((file, path))
    }

    fn acquire(dir: &Path, id: &str) -> Result<CommitLock, AstEditError> {
        let (file, path) = Self::open(dir, id)?;
        file.lock().map_err(journal_err)?;
        Ok(CommitLock { file, path })
    }

    fn try_acquire(dir: &Path, id: &str) -> Result<Option<CommitLock>, AstEditError> {
        let (file, path) = Self::open(dir, id)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(CommitLock { file, path })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(err)) => Err(journal_err(err)),
        }
    }
}

impl Drop for CommitLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

fn journal_err(err: impl std::fmt::Display) -> AstEditError {
    AstEditError::Journal(err.to_string())
}
