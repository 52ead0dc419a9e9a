//! Claims as OS file locks: `<state>/claims/<seq>.lock`, held exclusively for as long as one
//! resolve runs an entry's callback. The OS drops the lock when the holder exits, however it
//! exits, so a crashed resolve never blocks the entry.

use std::{
    fs::{File, OpenOptions, TryLockError},
    io,
    path::{Path, PathBuf},
};

/// A held claim lock. Dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct ClaimLock {
    _file: File,
    pub(crate) path: PathBuf,
    pub(crate) seq: i64,
}

/// The result of trying to lock an entry.
pub(crate) enum TryClaim {
    Held(ClaimLock),
    Busy,
}

pub(crate) fn lock_path(claims_dir: &Path, seq: i64) -> PathBuf {
    claims_dir.join(format!("{seq}.lock"))
}

/// Tries to take the entry's lock without waiting.
pub(crate) fn try_claim(claims_dir: &Path, seq: i64) -> io::Result<TryClaim> {
    let path = lock_path(claims_dir, seq);
    let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(TryClaim::Held(ClaimLock { _file: file, path, seq })),
        Err(TryLockError::WouldBlock) => Ok(TryClaim::Busy),
        Err(TryLockError::Error(err)) => Err(err),
    }
}
