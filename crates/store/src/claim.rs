//! Claims as OS file locks: `<state>/claims/<seq>.lock`, held exclusively for as long as one
//! resolve runs an entry's callback. The OS drops the lock when the holder exits, however it
//! exits, so a crashed resolve never blocks the entry.

use std::{
    fs::{File, TryLockError},
    io,
    path::{Path, PathBuf},
};

use staged_fs::DirHandle;

/// A held claim lock. Dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct ClaimLock {
    _file: File,
    /// The claims folder's path, which says which store the claim belongs to.
    pub(crate) dir: PathBuf,
    pub(crate) seq: i64,
}

/// The result of trying to lock an entry.
pub(crate) enum TryClaim {
    Held(ClaimLock),
    Busy,
}

/// The lock file's name in the claims folder.
pub(crate) fn lock_name(seq: i64) -> String {
    format!("{seq}.lock")
}

/// Tries to take the entry's lock without waiting. The lock file is opened through the
/// claims folder's handle and never through a symlink.
pub(crate) fn try_claim(claims_dir: &DirHandle, path: &Path, seq: i64) -> io::Result<TryClaim> {
    let file = claims_dir.open_lock_file(lock_name(seq))?;
    match file.try_lock() {
        Ok(()) => Ok(TryClaim::Held(ClaimLock { _file: file, dir: path.to_path_buf(), seq })),
        Err(TryLockError::WouldBlock) => Ok(TryClaim::Busy),
        Err(TryLockError::Error(err)) => Err(err),
    }
}
