//! The state folder's sync at a deferred sync (`SqliteStore::sync_deferred`): done only while
//! the WAL's name in the folder is not known to be durable.
//!
//! A new file's name is durable once its folder is synced: SQLite syncs the folder at each
//! process's first synced commit, whoever created the WAL, because a WAL whose creator died
//! before that sync may not be in the folder after a power cut, and the commits of every later
//! process with it. Once a folder sync has followed the WAL's creation, a process that syncs it
//! again only waits (a device flush: 0.2 to 0.9 ms of a hook call on an idle disk). So the
//! process that syncs the folder marks the WAL itself: an extended attribute
//! (`user.staged.named`) on the WAL's inode holding the identities (device, inode) of the WAL
//! and of the folder. A later process skips the folder's sync only when the WAL it syncs
//! carries the mark with its own identities: a WAL created again is a new inode without the
//! mark, and a copy (`cp -a`, `tar --xattrs`) carries the mark with another inode's identity,
//! so both get the folder synced. The mark is written after the folder's sync returned, so a
//! mark that survives a power cut means that the name did. Where the filesystem keeps no user
//! attributes (or on a platform without them), nothing is marked and every deferred sync syncs
//! the folder, as before.
//!
//! Which deferred commits need the sync at all is recorded here too ([`Unsynced`]): a commit
//! hook on the store's connection marks every commit as needing it, unless the caller said its
//! loss to a power cut harms nothing (`SqliteStore::losable`, and the ids module).

use std::sync::atomic::{AtomicBool, Ordering};

use staged_fs::DirHandle;

#[cfg(test)]
use crate::sqlite::{DB_FILE_NAME, SqliteStore};

/// The extended attribute that marks a WAL whose name in its folder is durable.
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
const NAMED_ATTR: &str = "user.staged.named";

#[cfg(test)]
impl SqliteStore {
    /// Whether the WAL's name in the state folder is known durable: the WAL carries the mark
    /// of a folder sync made after its creation ([`SqliteStore::sync_deferred`]).
    pub(crate) fn wal_named(&self) -> bool {
        self.state
            .open_file(format!("{DB_FILE_NAME}-wal"))
            .is_ok_and(|wal| named(&wal, &self.state))
    }
}

/// The mark's value for `wal` in `folder`: both identities, so that it holds only for this
/// inode in this folder.
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
fn mark_value(wal: &std::fs::File, folder: &DirHandle) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = wal.metadata().ok()?;
    let (dev, ino) = folder.dir_id().ok()?;
    Some(format!("{}:{} in {dev}:{ino}", meta.dev(), meta.ino()))
}

/// Whether `wal` carries the mark of a folder sync made after its creation, in this folder.
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
pub(crate) fn named(wal: &std::fs::File, folder: &DirHandle) -> bool {
    let mut buf = [0u8; 128];
    let Ok(len) = rustix::fs::fgetxattr(wal, NAMED_ATTR, &mut buf) else { return false };
    let Some(want) = mark_value(wal, folder) else { return false };
    buf.get(..len).is_some_and(|got| got == want.as_bytes())
}

/// Marks `wal` as named durably in `folder`, just synced; best effort (a filesystem without
/// user attributes keeps no mark, and the folder is synced every time).
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
pub(crate) fn mark_named(wal: &std::fs::File, folder: &DirHandle) {
    if let Some(value) = mark_value(wal, folder) {
        let _ = rustix::fs::fsetxattr(
            wal,
            NAMED_ATTR,
            value.as_bytes(),
            rustix::fs::XattrFlags::empty(),
        );
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
pub(crate) fn named(_wal: &std::fs::File, _folder: &DirHandle) -> bool {
    false
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
pub(crate) fn mark_named(_wal: &std::fs::File, _folder: &DirHandle) {}

/// What the commit hook saw of a store's deferred commits.
#[derive(Debug, Default)]
pub(crate) struct Unsynced {
    /// A commit was made that `sync_deferred` must sync.
    pub(crate) must_sync: AtomicBool,
    /// The commit being made may be lost without harm ([`crate::SqliteStore::losable`]).
    losable: AtomicBool,
}

impl Unsynced {
    /// [`crate::SqliteStore::losable`].
    pub(crate) fn losable<T>(
        &self,
        commit: impl FnOnce() -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.losable.store(true, Ordering::SeqCst);
        let res = commit();
        self.losable.store(false, Ordering::SeqCst);
        res
    }

    /// The commit hook: every commit must be synced unless it was said to be losable.
    pub(crate) fn committed(&self) {
        if !self.losable.load(Ordering::SeqCst) {
            self.must_sync.store(true, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::Rehydrators;

    /// Whether the filesystem of `dir` keeps user attributes.
    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    fn keeps_attributes(dir: &std::path::Path) -> bool {
        let probe = std::fs::File::create(dir.join("probe")).unwrap();
        rustix::fs::fsetxattr(&probe, "user.probe", b"1", rustix::fs::XattrFlags::empty()).is_ok()
    }

    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    #[test]
    fn a_deferred_sync_marks_its_wal_as_named_and_no_other_inode_takes_the_mark() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".staged");
        let store = SqliteStore::open(&state, Rehydrators::new()).unwrap();
        store.defer_syncs().unwrap();
        store.open_session("claude-code", "a", None).unwrap();
        let keeps = keeps_attributes(dir.path());
        store.sync_deferred().unwrap();
        // Where the filesystem keeps no attribute, nothing is known and every sync syncs the
        // folder.
        assert_eq!(store.wal_named(), keeps);
        if !keeps {
            return;
        }
        let wal = store.state.open_file(format!("{DB_FILE_NAME}-wal")).unwrap();
        let mut mark = [0u8; 128];
        let len = rustix::fs::fgetxattr(&wal, NAMED_ATTR, &mut mark).unwrap();
        // A copy with its attributes (`cp -a`) is another inode: its name was never synced.
        std::fs::copy(state.join(format!("{DB_FILE_NAME}-wal")), state.join("copy")).unwrap();
        let copy = store.state.open_file("copy").unwrap();
        rustix::fs::fsetxattr(&copy, NAMED_ATTR, &mark[..len], rustix::fs::XattrFlags::empty())
            .unwrap();
        assert!(named(&wal, &store.state));
        assert!(!named(&copy, &store.state));
        // Nor does the WAL count as named in another folder.
        let elsewhere = staged_fs::Root::open(dir.path()).unwrap().handle().unwrap();
        assert!(!named(&wal, &elsewhere));
        // A later deferred sync finds the mark and keeps it.
        store.defer_syncs().unwrap();
        store.open_session("claude-code", "b", None).unwrap();
        store.sync_deferred().unwrap();
        assert!(store.wal_named());
    }
}
