//! The journal file and its names: the format a commit writes to `.staged/journal/<id>.json`
//! (its state, its entries, the folders it makes and removes), read back by recovery as
//! untrusted input; the temp files' names, derived from the journal's id; the ids.

use std::{
    ffi::{OsStr, OsString},
    io,
    os::unix::ffi::OsStrExt,
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
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
    let tmp = write_journal_temp(dir, name, journal)?;
    place_journal(dir, name, &tmp)
}

/// The first half of [`store_journal`]: `journal` written and fsynced as `<name>.tmp` (a name
/// recovery deletes, never reads); returns that name.
pub(super) fn write_journal_temp(
    dir: &DirHandle,
    name: &OsStr,
    journal: &Journal,
) -> io::Result<OsString> {
    let text = serde_json::to_vec_pretty(journal).map_err(io::Error::other)?;
    let mut tmp = name.to_owned();
    tmp.push(".tmp");
    let _ = dir.remove_file(&tmp);
    dir.create_new(&tmp, &text, &NewFileMode::Private)?;
    Ok(tmp)
}

/// The second half of [`store_journal`]: the journal's temp `tmp` renamed over `name`, the
/// folder synced.
pub(super) fn place_journal(dir: &DirHandle, name: &OsStr, tmp: &OsStr) -> io::Result<()> {
    // The journal it replaces (the prepared one, at the commit point) keeps its blocks until
    // this process's cleaner deletes its link (see `free_later`); none to keep at the first.
    if frees_later() {
        let _ = dir.hard_link(name, dir, freed_name(name));
    }
    dir.rename(tmp, name)?;
    dir.sync()
}

pub(super) fn remove_journal(dir: &DirHandle, name: &OsStr) -> io::Result<()> {
    remove_journal_unsynced(dir, name)?;
    dir.sync()
}

/// Deletes a finished journal without syncing its folder, for a commit whose roll forward
/// would change nothing were the journal found again after a power loss (see
/// `Run::finish`): the deletion is made durable by the next sync of the journal folder (the
/// next commit's first step), or by the filesystem's own writeback. Where this process frees
/// later (see `free_later`), the journal is renamed to a freed name instead, which is no
/// journal to recovery either.
pub(super) fn remove_journal_unsynced(dir: &DirHandle, name: &OsStr) -> io::Result<()> {
    if frees_later() && dir.rename_noreplace(name, freed_name(name)).is_ok() {
        return Ok(());
    }
    dir.remove_file(name)
}

/// Whether this process's commits free no file's blocks themselves (see `free_later`).
static FREES_LATER: AtomicBool = AtomicBool::new(false);

/// Makes every later commit of this process free no file's blocks on its way: the journal it
/// replaces or deletes, and the file each replacing temp takes the place of, are linked (or
/// renamed) under a freed name in the journal folder (`<id>.freed-<n>`: no journal, no temp,
/// never read), and [`delete_freed`] deletes them, off the commit's time. For a process
/// whose work is followed by such a cleaner (the shell wrapper, whose child deletes its run
/// folder after it answered): on a filesystem mounted with `discard`, each file whose blocks
/// are freed waits for the disk as long as an `fsync` does (1 to 5 ms), three of them in a
/// one-file commit. Freeing later changes nothing that is durable: a freed name is a link to
/// bytes nothing uses any more, and a link that a kill or a power loss leaves behind is
/// deleted by the next [`delete_freed`] or recovery. A link that cannot be made (another
/// filesystem, a file not this user's) is skipped: that file is freed at once, as without.
pub fn free_later() {
    FREES_LATER.store(true, Ordering::Relaxed);
}

pub(super) fn frees_later() -> bool {
    FREES_LATER.load(Ordering::Relaxed)
}

/// A new freed name for something of the journal `name` (`<id>.json`): `<id>.freed-<n>`.
pub(super) fn freed_name(name: &OsStr) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let id = name.as_bytes().strip_suffix(b".json").unwrap_or(name.as_bytes());
    let mut res = OsStr::from_bytes(id).to_owned();
    res.push(format!(".freed-{}", COUNTER.fetch_add(1, Ordering::Relaxed)));
    res
}

/// Whether `name` is a freed name (see [`free_later`]).
pub(super) fn is_freed_name(name: &OsStr) -> bool {
    name.to_str().and_then(|n| n.split_once(".freed-")).is_some_and(|(id, n)| {
        is_journal_id(id) && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Deletes the freed names in the journal folder `dir` (see [`free_later`]), on several
/// threads (each deletion waits for the disk where it frees blocks); best effort.
pub(super) fn delete_freed_in(dir: &DirHandle, names: &[OsString]) {
    let freed: Vec<&OsString> = names.iter().filter(|name| is_freed_name(name)).collect();
    // Each deletion's error is its own: the others go on.
    let _ = crate::par::try_map(freed.len(), crate::par::Work::Disk, |i| {
        let _ = dir.remove_file(freed[i]);
        Ok(())
    });
}

/// Deletes what commits that free later (see [`free_later`]) left in the workspace's journal
/// folder: links to bytes nothing uses any more. Best effort; nothing else is touched.
pub fn delete_freed(workspace: &ConfinedRoot) {
    if let Ok(Some(dir)) = workspace.journal(false)
        && let Ok(names) = dir.names()
    {
        delete_freed_in(&dir, &names);
    }
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
