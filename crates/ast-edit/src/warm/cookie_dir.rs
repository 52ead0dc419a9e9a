//! The warm index's private folder for cookies, in the system's temporary folder, and the
//! sweep of those a killed process left behind.
//!
//! A process that ends normally deletes its folder (`WarmIndex::close`). One killed (kill -9,
//! a crash, an out-of-memory kill) cannot, and each such run would leave a `staged-watch-*`
//! folder behind for good. So each folder holds `owner.lock`, which its process keeps locked
//! (`flock`) as long as it lives: the kernel lets the lock go with the process, however it
//! ends, and in any PID namespace that shares the folder. Every new index first deletes the
//! folders of this user whose lock it can take. A folder without the file (one a build
//! before this made, or one whose process is between making it and locking it) is deleted
//! only when it holds nothing but cookies and was last changed over an hour ago.

use std::{
    fs::{File, OpenOptions},
    io,
    os::unix::fs::{MetadataExt, OpenOptionsExt},
    path::Path,
    time::{Duration, SystemTime},
};

/// The prefix of every cookie folder's name.
const PREFIX: &str = "staged-watch-";

/// The file its process holds locked.
const OWNER_LOCK: &str = "owner.lock";

/// How long a folder without an owner's lock is left alone.
const LOCKLESS_GRACE: Duration = Duration::from_secs(3600);

/// A cookie folder of this process: deleted when dropped, locked while it lives.
#[derive(Debug)]
pub(super) struct CookieDir {
    dir: tempfile::TempDir,
    /// Held locked: the folder's owner is alive.
    _owner: File,
}

impl CookieDir {
    /// The folder.
    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Makes this process's folder in `tmp`, locked, after deleting those killed processes
    /// left there.
    pub(super) fn make_in(tmp: &Path) -> io::Result<CookieDir> {
        let dir = tempfile::Builder::new().prefix(PREFIX).tempdir_in(tmp)?;
        let owner = File::create_new(dir.path().join(OWNER_LOCK))?;
        owner.try_lock().map_err(io::Error::other)?;
        let uid = std::fs::metadata(dir.path())?.uid();
        sweep(tmp, uid, dir.path());
        Ok(CookieDir { dir, _owner: owner })
    }
}

/// Deletes the cookie folders in `tmp` of user `uid`, other than `mine`, that no live process
/// owns. Best effort: a folder that cannot be read or deleted is left.
fn sweep(tmp: &Path, uid: u32, mine: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with(PREFIX)) {
            continue;
        }
        let path = entry.path();
        // Never through a symlink: another user may plant one in a shared folder.
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if !meta.is_dir() || meta.uid() != uid || path == mine {
            continue;
        }
        if abandoned(&path, &meta) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Whether the cookie folder at `path` has no live owner.
fn abandoned(path: &Path, meta: &std::fs::Metadata) -> bool {
    let lock =
        OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path.join(OWNER_LOCK));
    match lock {
        // Taken: its owner is gone (the lock goes when the process goes); released on drop.
        Ok(file) => file.try_lock().is_ok(),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            let old = meta
                .modified()
                .ok()
                .and_then(|at| SystemTime::now().duration_since(at).ok())
                .is_some_and(|age| age > LOCKLESS_GRACE);
            old && only_cookies(path)
        }
        Err(_) => false,
    }
}

/// Whether the folder holds nothing but cookies (`cookie-<n>`, `stop`).
fn only_cookies(path: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(path) else { return false };
    entries.flatten().all(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        entry.file_type().is_ok_and(|t| t.is_file())
            && (name == "stop"
                || name
                    .strip_prefix("cookie-")
                    .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(tmp: &Path, name: &str, files: &[&str]) -> std::path::PathBuf {
        let path = tmp.join(name);
        std::fs::create_dir(&path).unwrap();
        for file in files {
            std::fs::write(path.join(file), b"").unwrap();
        }
        path
    }

    fn age(path: &Path, by: Duration) {
        let dir = File::open(path).unwrap();
        dir.set_modified(SystemTime::now() - by).unwrap();
    }

    #[test]
    fn a_new_index_deletes_the_folders_of_killed_processes_and_no_other() {
        let tmp = tempfile::tempdir().unwrap();
        let tmp = tmp.path();
        // A killed process's folder: its lock file is there, nobody holds it.
        let killed = folder(tmp, "staged-watch-killed", &[OWNER_LOCK, "cookie-3"]);
        // A live one's: its lock is held (a lock of another open file, as another process's).
        let live = folder(tmp, "staged-watch-live", &[OWNER_LOCK]);
        let held = File::open(live.join(OWNER_LOCK)).unwrap();
        held.try_lock().unwrap();
        // An older build's, empty and old; another, as old but holding something else; a
        // third, empty but new (a process between making its folder and locking it).
        let old_empty = folder(tmp, "staged-watch-oldbuild", &["cookie-1", "stop"]);
        age(&old_empty, Duration::from_secs(7200));
        let old_other = folder(tmp, "staged-watch-other", &["notes.txt"]);
        age(&old_other, Duration::from_secs(7200));
        let fresh = folder(tmp, "staged-watch-fresh", &[]);
        // Not a cookie folder; a symlink planted with the prefix.
        let unrelated = folder(tmp, "unrelated", &[OWNER_LOCK]);
        std::os::unix::fs::symlink(&unrelated, tmp.join("staged-watch-link")).unwrap();

        let mine = CookieDir::make_in(tmp).unwrap();

        assert!(!killed.exists(), "a killed process's folder is left");
        assert!(!old_empty.exists(), "an old build's empty folder is left");
        for kept in [&live, &old_other, &fresh, &unrelated] {
            assert!(kept.exists(), "{} was deleted", kept.display());
        }
        assert!(unrelated.join(OWNER_LOCK).exists(), "the sweep followed a symlink");
        assert!(tmp.join("staged-watch-link").symlink_metadata().is_ok());
        assert!(mine.dir.path().join(OWNER_LOCK).exists());
        // Its own folder is locked: another index's sweep leaves it.
        let other = CookieDir::make_in(tmp).unwrap();
        assert!(mine.dir.path().exists(), "a live index's folder was swept");
        drop(held);
        drop(other);
        // Once its owner is gone, the next sweep takes it.
        let path = mine.dir.path().to_owned();
        std::mem::forget(mine.dir);
        drop(mine._owner);
        let _next = CookieDir::make_in(tmp).unwrap();
        assert!(!path.exists(), "the folder of an owner gone was left");
        assert!(!live.exists(), "a folder whose owner let go was left");
    }
}
