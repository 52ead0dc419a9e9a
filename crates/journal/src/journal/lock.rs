//! The two locks of the journal folder (**Liveness** in the journal's module doc): the commit
//! lock, shared by every commit and exclusive for recovery, and the write lock, exclusive for
//! one commit's check and writes. Neither file is ever deleted.

use std::fs::File;

use staged_fs::DirHandle;

use crate::{ConfinedRoot, JournalError, journal::journal_err};

/// The lock every commit holds shared and recovery holds exclusive. Never deleted.
pub(super) const LOCK_FILE_NAME: &str = "commit.lock";

/// The lock a commit holds exclusive from its fingerprint check to its last rename, so that
/// two staged commits (an apply and an undo, say) never interleave their writes. Never
/// deleted.
pub(super) const WRITE_LOCK_FILE_NAME: &str = "write.lock";

/// The commit lock: shared for a commit, exclusive for recovery. Released when dropped or
/// when its process dies; the file itself is never deleted.
pub(super) struct CommitLock {
    pub(super) file: File,
}

impl CommitLock {
    pub(super) fn open(dir: &DirHandle, workspace: &ConfinedRoot) -> Result<File, JournalError> {
        dir.open_lock_file(LOCK_FILE_NAME).map_err(|err| journal_err(workspace, &err))
    }

    pub(super) fn shared(
        dir: &DirHandle,
        workspace: &ConfinedRoot,
    ) -> Result<CommitLock, JournalError> {
        let file = Self::open(dir, workspace)?;
        file.lock_shared().map_err(|err| journal_err(workspace, &err))?;
        Ok(CommitLock { file })
    }

    pub(super) fn try_exclusive(
        dir: &DirHandle,
        workspace: &ConfinedRoot,
    ) -> Result<Option<CommitLock>, JournalError> {
        let file = Self::open(dir, workspace)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(CommitLock { file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(err)) => Err(journal_err(workspace, &err)),
        }
    }
}

impl Drop for CommitLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// The write lock: exclusive for one commit's check and writes. Released when dropped or when
/// its process dies; the file itself is never deleted.
pub(super) struct WriteLock {
    pub(super) file: File,
}

impl WriteLock {
    pub(super) fn exclusive(
        dir: &DirHandle,
        workspace: &ConfinedRoot,
    ) -> Result<WriteLock, JournalError> {
        let file =
            dir.open_lock_file(WRITE_LOCK_FILE_NAME).map_err(|err| journal_err(workspace, &err))?;
        file.lock().map_err(|err| journal_err(workspace, &err))?;
        Ok(WriteLock { file })
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}
