//! The runs' folder as input someone else may control: `.staged/` is in the workspace, so any
//! name in `.staged/shell/` may be a symlink (to a folder or file outside the workspace), a
//! FIFO or a device. What is read or locked there is opened without following a symlink in
//! its last name and without waiting ([`open_regular`], [`read_regular`], [`open_lock`]); a run
//! folder, its upper layer and its work folder are taken only when they are real folders
//! ([`is_real_dir`]); and a finished run's folder is deleted through descriptors
//! ([`remove_tree`]): each folder opened without following a symlink, each name unlinked
//! relative to its folder, so a symlink (or a folder swapped for one while it is deleted)
//! is removed itself, never what it names.

use std::{
    ffi::{CString, OsStr, OsString},
    fs::File,
    io::{self, Read},
    os::unix::ffi::OsStrExt,
    path::Path,
    sync::Arc,
};

use rustix::{
    fd::{AsFd, BorrowedFd, OwnedFd},
    fs::{AtFlags, FileType, Mode, OFlags},
};

/// Flags of every open here: never through a symlink in the last name, never waiting (a FIFO).
fn safe_flags() -> OFlags {
    OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC
}

fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

/// Opens the regular file `path` for reading (see the module's docs); anything else is an
/// error.
///
/// # Errors
/// When it cannot be opened, or is no regular file.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let file = File::from(rustix::fs::open(path, OFlags::RDONLY | safe_flags(), Mode::empty())?);
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// The bytes of the regular file `path`, at most `limit` of them (a longer file is an error).
///
/// # Errors
/// When it cannot be read, is no regular file, or is longer than `limit`.
pub(crate) fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "the file is too large"));
    }
    Ok(bytes)
}

/// Opens a lock file (made, private, when `create` and it is missing): a regular file, never
/// one a symlink names.
///
/// # Errors
/// When it cannot be opened or made, or is no regular file.
pub(crate) fn open_lock(path: &Path, create: bool) -> io::Result<File> {
    let flags = if create { OFlags::WRONLY | OFlags::CREATE } else { OFlags::RDONLY };
    let file =
        File::from(rustix::fs::open(path, flags | safe_flags(), Mode::from_raw_mode(0o600))?);
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// Writes `bytes` to the file `path`, replacing what it held, never through a symlink and
/// never into a FIFO or device.
///
/// # Errors
/// When it cannot be written, or is no regular file.
pub(crate) fn write_regular(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | safe_flags();
    let mut file = File::from(rustix::fs::open(path, flags, Mode::from_raw_mode(0o600))?);
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    file.set_len(0)?;
    io::Write::write_all(&mut file, bytes)
}

/// Whether `path` is a folder itself (not a symlink to one).
pub(crate) fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Opens the folder `name` of `parent` (the folder `path`, for `None`) without following a
/// symlink.
pub(crate) fn open_dir(parent: Option<BorrowedFd<'_>>, name: &OsStr) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(match parent {
        Some(parent) => rustix::fs::openat(parent, name, flags, Mode::empty())?,
        None => rustix::fs::open(Path::new(name), flags, Mode::empty())?,
    })
}

/// The names in the open folder `dir` with their types (unknown types read with `lstat`),
/// `.` and `..` left out.
pub(crate) fn names(dir: BorrowedFd<'_>) -> io::Result<Vec<(OsString, FileType)>> {
    let mut res = Vec::new();
    // A descriptor of its own (`Dir::read_from` opens `.` anew).
    let entries = rustix::fs::Dir::read_from(dir)?;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let name = OsStr::from_bytes(name).to_owned();
        let kind = match entry.file_type() {
            FileType::Unknown => match rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                Err(_) => continue,
            },
            kind => kind,
        };
        res.push((name, kind));
    }
    Ok(res)
}

/// How deep [`remove_tree`] goes: a folder nested deeper is left in place (each level holds a
/// descriptor).
const MAX_DEPTH: usize = 256;

/// How many folders' files [`remove_tree`] gathers before it unlinks them.
const MAX_HELD: usize = 128;

/// Threads that unlink a run's files: each unlink waits on the filesystem's journal (1 to 4 ms
/// on a busy ext4), and concurrent ones share its commits.
const UNLINK_THREADS: usize = 16;

/// Below this many files, one thread unlinks them.
const UNLINK_SERIAL_BELOW: usize = 64;

/// Deletes `name` of the open folder `parent`, and all it holds when it is a folder, never
/// through a symlink (see the module's docs). A folder the overlay left without permissions
/// (its work folder's `work`) is opened up first; that change too is made only on a real
/// folder below `name`.
///
/// # Errors
/// When something could not be deleted.
pub(crate) fn remove_tree(parent: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir = match rustix::fs::openat(parent, name, flags, Mode::empty()) {
        Ok(dir) => dir,
        // A symlink, a file, a FIFO: the name itself is deleted.
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
            return Ok(rustix::fs::unlinkat(parent, name, AtFlags::empty())?);
        }
        Err(err) => return Err(err.into()),
    };
    open_up_work(dir.as_fd());
    let dir = Arc::new(dir);
    // Folders are opened as they are walked (depth first), and the files found are unlinked
    // each time `MAX_HELD` folders hold some: the descriptors open at once stay bounded (the
    // folders on the way down, and those of the files waiting), however many folders a run
    // holds.
    let mut files: Vec<(Arc<OwnedFd>, OsString)> = Vec::new();
    let mut todo: Vec<(Arc<OwnedFd>, OsString, usize)> = Vec::new();
    list(&dir, 0, &mut todo, &mut files);
    let mut held = 1;
    while let Some((parent, name, depth)) = todo.pop() {
        let Ok(sub) = open_dir(Some(parent.as_fd()), &name) else { continue };
        drop(parent);
        list(&Arc::new(sub), depth, &mut todo, &mut files);
        held += 1;
        if held >= MAX_HELD {
            unlink_all(&files);
            files.clear();
            held = 0;
        }
    }
    unlink_all(&files);
    drop(files);
    remove_below(dir.as_fd(), 0);
    drop(dir);
    Ok(rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?)
}

/// Adds what the open folder `dir` (at `depth` below the one deleted) holds: its folders to
/// `todo` (to open, unless too deep), the rest to `files`.
fn list(
    dir: &Arc<OwnedFd>,
    depth: usize,
    todo: &mut Vec<(Arc<OwnedFd>, OsString, usize)>,
    files: &mut Vec<(Arc<OwnedFd>, OsString)>,
) {
    let Ok(entries) = names(dir.as_fd()) else { return };
    for (entry, kind) in entries {
        if kind == FileType::Directory {
            if depth < MAX_DEPTH {
                todo.push((Arc::clone(dir), entry, depth + 1));
            }
        } else {
            files.push((Arc::clone(dir), entry));
        }
    }
}

/// Unlinks each file (a name in an open folder), on several threads when there are many.
fn unlink_all(files: &[(Arc<OwnedFd>, OsString)]) {
    let unlink = |(dir, name): &(Arc<OwnedFd>, OsString)| {
        let _ = rustix::fs::unlinkat(dir.as_fd(), name, AtFlags::empty());
    };
    if files.len() < UNLINK_SERIAL_BELOW {
        files.iter().for_each(unlink);
        return;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..UNLINK_THREADS {
            scope.spawn(|| {
                while let Some(file) =
                    files.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    unlink(file);
                }
            });
        }
    });
}

/// Deletes what the open folder `dir` still holds (what appeared since, or what the threads
/// could not unlink), depth first, never through a symlink.
fn remove_below(dir: BorrowedFd<'_>, depth: usize) {
    let Ok(entries) = names(dir) else { return };
    for (name, kind) in entries {
        if kind == FileType::Directory {
            if depth < MAX_DEPTH
                && let Ok(sub) = open_dir(Some(dir), &name)
            {
                remove_below(sub.as_fd(), depth + 1);
            }
            let _ = rustix::fs::unlinkat(dir, &name, AtFlags::REMOVEDIR);
        } else {
            let _ = rustix::fs::unlinkat(dir, &name, AtFlags::empty());
        }
    }
}

/// Gives the run folder `dir`'s `work/work` (which the overlay leaves with no permissions at
/// all) back its owner's, when both are real folders: the change is made through a
/// descriptor of that very folder (`O_PATH`, never through a symlink), by its
/// `/proc/self/fd/` name.
fn open_up_work(dir: BorrowedFd<'_>) {
    let Ok(work) = open_dir(Some(dir), OsStr::new("work")) else { return };
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(inner) = rustix::fs::openat(work.as_fd(), c"work", flags, Mode::empty()) else {
        return;
    };
    let Ok(name) =
        CString::new(format!("/proc/self/fd/{}", rustix::fd::AsRawFd::as_raw_fd(&inner)))
    else {
        return;
    };
    let _ = rustix::fs::chmod(name.as_c_str(), Mode::from_raw_mode(0o700));
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    fn remove(dir: &Path, name: &str) -> io::Result<()> {
        let parent = open_dir(None, dir.as_os_str())?;
        remove_tree(parent.as_fd(), OsStr::new(name))
    }

    #[test]
    fn a_tree_is_deleted_whole_with_its_unreadable_work_folder() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("gone-1");
        std::fs::create_dir_all(run.join("work/work")).unwrap();
        std::fs::create_dir_all(run.join("upper/a/b")).unwrap();
        for i in 0..100 {
            std::fs::write(run.join(format!("upper/a/f{i}")), "x").unwrap();
        }
        std::fs::write(run.join("upper/a/b/c"), "x").unwrap();
        std::fs::set_permissions(run.join("work/work"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
        remove(dir.path(), "gone-1").unwrap();
        assert!(!run.exists());
    }

    #[test]
    fn a_tree_of_more_folders_than_descriptors_is_deleted_whole() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("gone-1");
        for i in 0..1500 {
            std::fs::create_dir_all(run.join(format!("upper/d{i}/e"))).unwrap();
            std::fs::write(run.join(format!("upper/d{i}/e/f")), "x").unwrap();
        }
        remove(dir.path(), "gone-1").unwrap();
        assert!(!run.exists());
    }

    #[test]
    fn symlinks_are_deleted_never_what_they_name() {
        let outside = tempfile::tempdir().unwrap();
        for i in 0..100 {
            std::fs::write(outside.path().join(format!("f{i}")), "keep").unwrap();
        }
        std::fs::create_dir_all(outside.path().join("work")).unwrap();
        std::fs::set_permissions(
            outside.path().join("work"),
            std::fs::Permissions::from_mode(0o750),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        symlink(outside.path(), dir.path().join("gone-1")).unwrap();
        let run = dir.path().join("gone-2");
        std::fs::create_dir_all(run.join("upper")).unwrap();
        symlink(outside.path(), run.join("work")).unwrap();
        symlink(outside.path(), run.join("upper/deep")).unwrap();
        remove(dir.path(), "gone-1").unwrap();
        remove(dir.path(), "gone-2").unwrap();
        assert!(std::fs::symlink_metadata(dir.path().join("gone-1")).is_err());
        assert!(!run.exists());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 101);
        let mode = std::fs::metadata(outside.path().join("work")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
    }

    #[test]
    fn fifos_are_refused_at_once_and_symlinks_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0)
            .unwrap();
        assert!(open_regular(&fifo).is_err());
        assert!(open_lock(&fifo, true).is_err());
        assert!(open_lock(&fifo, false).is_err());
        assert!(write_regular(&fifo, b"x").is_err());
        let outside = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        symlink(outside.path().join("made"), &link).unwrap();
        assert!(open_lock(&link, true).is_err());
        assert!(write_regular(&link, b"x").is_err());
        assert!(!outside.path().join("made").exists());
        std::fs::write(dir.path().join("big"), "0123456789").unwrap();
        assert_eq!(read_regular(&dir.path().join("big"), 10).unwrap(), b"0123456789");
        assert!(read_regular(&dir.path().join("big"), 9).is_err());
    }
}
