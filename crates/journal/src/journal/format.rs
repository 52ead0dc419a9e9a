//! The journal file and its names: the format a commit writes to `.staged/journal/<id>.json`
//! (its state, its entries, the folders it makes and removes), read back by recovery as
//! untrusted input; the temp files' names, derived from the journal's id; the ids.

use std::{
    ffi::{OsStr, OsString},
    io,
    os::unix::ffi::OsStrExt,
};

use serde::{Deserialize, Serialize};
use staged_fs::{DirHandle, FileIdentity, NewFileMode};

use crate::{ConfinedRoot, JournalError};

/// The journal formats this build reads; it writes the newest.
pub(super) const JOURNAL_VERSION: u32 = 4;
pub(super) const OLDEST_JOURNAL_VERSION: u32 = 2;

/// A journal bigger than this is not one staged wrote (about 600k files' worth).
pub(super) const MAX_JOURNAL_BYTES: u64 = 64 << 20;

/// File names longer than this get a temp file name without them, to stay under NAME_MAX.
pub(super) const MAX_NAME_IN_TEMP: usize = 128;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(super) enum JournalState {
    Preparing,
    Committed,
}

/// What a journal entry does to its target.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(super) enum EntryKind {
    /// A temp file replaces the target (journal format 2 knew only this).
    #[default]
    Replace,
    /// A temp file becomes the target, which must not exist.
    Create,
    /// The target is deleted.
    Delete,
}

impl EntryKind {
    pub(super) fn is_default(&self) -> bool {
        *self == EntryKind::Replace
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JournalEntry {
    /// The target, relative to the root, `/`-separated.
    pub(super) target: String,
    #[serde(default, skip_serializing_if = "EntryKind::is_default")]
    pub(super) kind: EntryKind,
    /// Which file the temp is, recorded at the commit point: a committed journal is rolled
    /// forward only onto temps that are still exactly the files this commit wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) temp: Option<TempIdentity>,
    /// For a delete: which file the check found at the target. Only that file is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) victim: Option<TempIdentity>,
    /// For a create: whether it waits for the deletes, the removal of the folders they
    /// emptied and the folders made where files were (a path that changes kind).
    #[serde(default, skip_serializing_if = "is_false")]
    pub(super) late: bool,
    /// For a late create: how many folders above the target's folder its temp file is (the
    /// target's folder does not exist before the commit point).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(super) up: u32,
}

#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde's skip_serializing_if")]
pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde's skip_serializing_if")]
pub(super) fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A file's [`FileIdentity`], as the journal stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct TempIdentity {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) ctime: i64,
    pub(super) ctime_nsec: i64,
}

impl From<FileIdentity> for TempIdentity {
    fn from(id: FileIdentity) -> Self {
        TempIdentity { dev: id.dev, ino: id.ino, ctime: id.ctime, ctime_nsec: id.ctime_nsec }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Journal {
    pub(super) version: u32,
    pub(super) state: JournalState,
    pub(super) entries: Vec<JournalEntry>,
    /// The folders the commit creates, parents first, relative to the root: a roll back
    /// removes those that are empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) dirs: Vec<String>,
    /// The folders to remove, if empty, once the deletes are done (a roll forward does too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) prune: Vec<String>,
    /// The folders the deletes empty for a late create at their path, parents first: removed
    /// after the deletes, deepest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) emptied: Vec<String>,
    /// The folders made where deleted files were, parents first: made after the deletes and
    /// the removals, before the late creates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) late_dirs: Vec<String>,
    /// Who committed: for a preview, its pending id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) origin: Option<String>,
}

pub(super) fn read_journal(dir: &DirHandle, name: &OsStr) -> Result<Option<Journal>, String> {
    let bytes = match dir.read_limited(name, MAX_JOURNAL_BYTES) {
        Ok(bytes) => bytes,
        // Its owner finished between the listing and the lock.
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("it cannot be read: {err}")),
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|err| format!("it is not a journal: {err}"))
}

pub(super) fn store_journal(dir: &DirHandle, name: &OsStr, journal: &Journal) -> io::Result<()> {
    let text = serde_json::to_vec_pretty(journal).map_err(io::Error::other)?;
    let mut tmp = name.to_owned();
    tmp.push(".tmp");
    let _ = dir.remove_file(&tmp);
    dir.create_new(&tmp, &text, &NewFileMode::Private)?;
    dir.rename(&tmp, name)?;
    dir.sync()
}

pub(super) fn remove_journal(dir: &DirHandle, name: &OsStr) -> io::Result<()> {
    dir.remove_file(name)?;
    dir.sync()
}

/// Deletes a finished journal without syncing its folder, for a commit whose roll forward
/// would change nothing were the journal found again after a power loss (see
/// `Run::finish`): the deletion is made durable by the next sync of the journal folder (the
/// next commit's first step), or by the filesystem's own writeback.
pub(super) fn remove_journal_unsynced(dir: &DirHandle, name: &OsStr) -> io::Result<()> {
    dir.remove_file(name)
}

pub(super) fn journal_dir(workspace: &ConfinedRoot) -> Result<DirHandle, JournalError> {
    workspace.journal(true)?.ok_or_else(|| {
        JournalError::Journal(format!("{} could not be created", workspace.journal_dir().display()))
    })
}

pub(super) fn journal_name(id: &str) -> OsString {
    OsString::from(format!("{id}.json"))
}

/// The temp file that replaces `name` in commit `id`: `.<name>.staged-<id>-<i>.tmp` beside
/// it. Recovery derives it the same way, and touches no other file.
pub(super) fn temp_name(name: &OsStr, id: &str, i: usize) -> OsString {
    let mut res = OsString::from(".");
    if name.as_bytes().len() <= MAX_NAME_IN_TEMP {
        res.push(name);
        res.push(".");
    }
    res.push(format!("staged-{id}-{i}.tmp"));
    res
}

/// A commit id: `<pid>-<nanos>-<counter>`.
pub(super) fn unique_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

pub(super) fn is_journal_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 40 && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_derived_and_bounded() {
        assert_eq!(
            temp_name(OsStr::new("a.ts"), "1-2-3", 4),
            OsStr::new(".a.ts.staged-1-2-3-4.tmp")
        );
        let long = "x".repeat(200);
        assert_eq!(temp_name(OsStr::new(&long), "1-2-3", 0), OsStr::new(".staged-1-2-3-0.tmp"));
    }

    #[test]
    fn journal_ids_are_three_numbers() {
        assert!(is_journal_id("12-1700000000000000000-0"));
        for bad in ["", "1-2", "1-2-3-4", "a-b-c", "../1-2-3", "1-2-", "1--3"] {
            assert!(!is_journal_id(bad), "{bad}");
        }
    }

    #[test]
    fn a_format_2_journal_still_reads() {
        let text = r#"{"version": 2, "state": "committed", "entries": [{"target": "a.ts"}], "origin": "x"}"#;
        let journal: Journal = serde_json::from_str(text).unwrap();
        assert_eq!(journal.entries[0].kind, EntryKind::Replace);
        assert!(journal.dirs.is_empty());
    }
}
