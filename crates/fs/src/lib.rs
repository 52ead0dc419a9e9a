//! Confined filesystem access for a staged workspace.
//!
//! Everything staged reads or writes under a workspace goes through this crate, and this crate
//! never opens a path by name from the process's current directory or from `/`: it holds a
//! directory handle on the root ([`Root`], a [`cap_std::fs::Dir`]) and resolves every path
//! relative to a handle. Handles refer to directories, not names, so once one is open, renaming
//! or swapping the directory's name for a symlink does not move what the handle points at.
//!
//! Two strengths of confinement:
//!
//! * **Reads** ([`Root::read`], [`Root::open_file`]) resolve beneath the root (`openat2` with
//!   `RESOLVE_BENEATH` on Linux, through cap-std): a symlink may be followed only if it stays
//!   inside the root, and the last component must be a regular file, not a symlink. A read
//!   never waits: a FIFO or a device where a file should be is refused, not opened for good.
//! * **Writes** ([`Root::dir`], [`Root::parent`], [`Root::create_dir_all`]) open the target's
//!   directory one component at a time without following symlinks ([`DirHandle`]), and every
//!   file operation in that directory refuses a symlink as its last component. So a write
//!   happens only where every component of the path is a real directory inside the root, at
//!   the moment it is opened, whatever another process does to the names meanwhile.
//!
//! Paths are [`RelPath`]s: relative, with normal components only. A `..`, an absolute path, or
//! an empty path cannot be expressed, so it cannot be opened: `RelPath::new` refuses it with an
//! `InvalidRelPath` (library API, for a caller that reports why).

#![deny(missing_docs)]

use std::{
    ffi::{OsStr, OsString},
    fmt, io,
    path::{Component, Path, PathBuf},
    sync::Arc,
};

use cap_fs_ext::{
    DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsMaybeDirExt, OpenOptionsSyncExt,
};
use cap_std::{
    ambient_authority,
    fs::{Dir, OpenOptions},
};

pub use cap_std::fs::Metadata;
pub use sync_batch::SyncBatch;
#[doc(hidden)]
pub use sync_batch::{SyncBatchPolicy, set_sync_batch_policy, sync_batches_finished};

mod sync_batch;

/// A relative path with normal components only: never absolute, never empty, no `.` or `..`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(PathBuf);

/// Why a path is not a [`RelPath`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{path}` is not a path inside the workspace: {reason}")]
pub struct InvalidRelPath {
    /// The path as given (lossy).
    pub path: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl RelPath {
    /// Checks and wraps `path`. `a//b` and `a/b/` read as `a/b`.
    ///
    /// # Errors
    /// [`InvalidRelPath`] when `path` is empty, absolute, contains `.` or `..` components, or
    /// contains a NUL byte.
    pub fn new(path: impl AsRef<Path>) -> Result<RelPath, InvalidRelPath> {
        let path = path.as_ref();
        let bad = |reason| InvalidRelPath { path: path.to_string_lossy().into_owned(), reason };
        if path.as_os_str().as_encoded_bytes().contains(&0) {
            return Err(bad("it contains a NUL byte"));
        }
        let mut res = PathBuf::new();
        for component in path.components() {
            match component {
                Component::Normal(name) => res.push(name),
                Component::CurDir => return Err(bad("`.` components are not allowed")),
                Component::ParentDir => return Err(bad("`..` components are not allowed")),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(bad("it is absolute"));
                }
            }
        }
        if res.as_os_str().is_empty() {
            return Err(bad("it is empty"));
        }
        Ok(RelPath(res))
    }

    /// The path.
    pub fn as_path(&self) -> &Path {
        &self.0
    }

    /// The path as UTF-8, if it is.
    pub fn to_str(&self) -> Option<&str> {
        self.0.to_str()
    }

    /// The `/`-separated display form (lossy for names that are not UTF-8).
    pub fn display(&self) -> String {
        let parts: Vec<_> = self.0.iter().map(OsStr::to_string_lossy).collect();
        parts.join("/")
    }

    /// The last component.
    pub fn file_name(&self) -> &OsStr {
        // A RelPath has at least one normal component, so it always has a file name.
        self.0.file_name().unwrap_or_default()
    }

    /// The directory holding this path, or `None` when it sits directly under the root.
    pub fn parent(&self) -> Option<RelPath> {
        self.0.parent().filter(|p| !p.as_os_str().is_empty()).map(|p| RelPath(p.to_path_buf()))
    }

    /// `self/name`.
    ///
    /// # Errors
    /// [`InvalidRelPath`] when `name` is not a single normal component.
    pub fn join(&self, name: impl AsRef<Path>) -> Result<RelPath, InvalidRelPath> {
        let tail = RelPath::new(name)?;
        Ok(RelPath(self.0.join(tail.0)))
    }

    /// Its components.
    pub fn components(&self) -> impl Iterator<Item = &OsStr> {
        self.0.iter()
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RelPath({:?})", self.display())
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

/// An open handle on a workspace root, and its canonical path (for messages only: nothing is
/// ever opened through the path after [`Root::open`]).
#[derive(Clone)]
pub struct Root {
    dir: Arc<Dir>,
    path: Arc<PathBuf>,
}

impl fmt::Debug for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Root").field("path", &self.path).finish_non_exhaustive()
    }
}

impl PartialEq for Root {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for Root {}

impl Root {
    /// Opens the directory at `path`, which is canonicalised first.
    ///
    /// # Errors
    /// The I/O error when `path` does not exist or is not a directory.
    pub fn open(path: &Path) -> io::Result<Root> {
        let canonical = path.canonicalize()?;
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority())?;
        Ok(Root { dir: Arc::new(dir), path: Arc::new(canonical) })
    }

    /// The canonical path of the root, as it was when opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens a regular file for reading, beneath the root. A symlink in a directory component
    /// is followed only while it stays inside the root; the last component must not be a
    /// symlink.
    ///
    /// # Errors
    /// The I/O error; an attempt to leave the root is `PermissionDenied`, a symlink as the last
    /// component `FilesystemLoop`, and anything but a regular file `InvalidInput`.
    pub fn open_file(&self, rel: &RelPath) -> io::Result<std::fs::File> {
        let file = self.dir.open_with(rel.as_path(), &read_options())?.into_std();
        ensure_regular(&file.metadata()?)?;
        Ok(file)
    }

    /// Opens the regular file `rel` for reading with no symlink anywhere in its path: every
    /// directory is opened without following one (see [`Root::dir`]), and so is the file. What
    /// is opened is exactly the path that was checked, whatever another process swaps in.
    ///
    /// # Errors
    /// As [`Root::dir`] and [`DirHandle::open_file`].
    pub fn open_file_strict(&self, rel: &RelPath) -> io::Result<std::fs::File> {
        let (dir, name) = self.parent(rel)?;
        dir.open_file(name)
    }

    /// Reads a whole regular file (see [`Root::open_file`]).
    ///
    /// # Errors
    /// As [`Root::open_file`], or a read error.
    pub fn read(&self, rel: &RelPath) -> io::Result<Vec<u8>> {
        let file = self.dir.open_with(rel.as_path(), &read_options())?.into_std();
        let meta = file.metadata()?;
        ensure_regular(&meta)?;
        read_sized(file, meta.len())
    }

    /// The metadata of `rel` without following a symlink in its last component, beneath the
    /// root.
    ///
    /// # Errors
    /// The I/O error.
    pub fn symlink_metadata(&self, rel: &RelPath) -> io::Result<Metadata> {
        self.dir.symlink_metadata(rel.as_path())
    }

    /// A handle on the root itself.
    ///
    /// # Errors
    /// When the root's handle cannot be duplicated.
    pub fn handle(&self) -> io::Result<DirHandle> {
        Ok(DirHandle { dir: self.dir.try_clone()? })
    }

    /// Opens the directory `rel` (or the root, for `None`) one component at a time, refusing
    /// any component that is a symlink.
    ///
    /// # Errors
    /// `NotFound` when a component is missing, `FilesystemLoop`/`NotADirectory` when one is a
    /// symlink or not a directory.
    pub fn dir(&self, rel: Option<&RelPath>) -> io::Result<DirHandle> {
        let mut dir = self.dir.try_clone()?;
        if let Some(rel) = rel {
            for name in rel.components() {
                dir = dir.open_dir_nofollow(name)?;
            }
        }
        Ok(DirHandle { dir })
    }

    /// Like [`Root::dir`], creating each missing component as a directory.
    ///
    /// # Errors
    /// As [`Root::dir`], and when a directory cannot be created.
    pub fn create_dir_all(&self, rel: &RelPath) -> io::Result<DirHandle> {
        let mut dir = self.dir.try_clone()?;
        for name in rel.components() {
            dir = match dir.open_dir_nofollow(name) {
                Ok(next) => next,
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    match dir.create_dir(name) {
                        Ok(()) => {}
                        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(err) => return Err(err),
                    }
                    dir.open_dir_nofollow(name)?
                }
                Err(err) => return Err(err),
            };
        }
        Ok(DirHandle { dir })
    }

    /// The strict handle on `rel`'s directory (see [`Root::dir`]) and `rel`'s file name.
    ///
    /// # Errors
    /// As [`Root::dir`].
    pub fn parent(&self, rel: &RelPath) -> io::Result<(DirHandle, OsString)> {
        let dir = self.dir(rel.parent().as_ref())?;
        Ok((dir, rel.file_name().to_owned()))
    }
}

/// An open directory. Every operation takes a single file name (no `/`), and none follows a
/// symlink in it.
pub struct DirHandle {
    dir: Dir,
}

impl fmt::Debug for DirHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirHandle").finish_non_exhaustive()
    }
}

/// Which file an entry is: its device, inode and change time. The change time is set by the
/// kernel (never by a user), so a file that someone else put at a name, even a copy of the
/// original, does not have the identity the original had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    /// The device.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
    /// The change time, seconds.
    pub ctime: i64,
    /// The change time, nanoseconds.
    pub ctime_nsec: i64,
}

impl FileIdentity {
    /// The identity of the file `meta` describes.
    pub fn of(meta: &std::fs::Metadata) -> FileIdentity {
        use std::os::unix::fs::MetadataExt;
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
        }
    }

    /// The identity of the file `meta` (from a [`Root`] or a [`DirHandle`]) describes.
    pub fn of_cap(meta: &Metadata) -> FileIdentity {
        use cap_std::fs::MetadataExt;
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
        }
    }
}

/// How [`DirHandle::create_new`] sets the new file's permissions.
#[derive(Debug, Clone)]
pub enum NewFileMode {
    /// Only the owner may read and write it (0600).
    Private,
    /// These Unix permission bits (those of the file it will replace). Only the permission
    /// bits (0777) are applied: set-user-id, set-group-id and sticky bits are dropped, so that
    /// no mode recorded somewhere (a preview, the resolve log's undo data, which anyone who can
    /// write `.staged/` can change) makes staged create a set-id file.
    Mode(u32),
    /// What any new file gets: 0666 less the process's umask, applied by the kernel.
    Default,
    /// What any new executable gets: 0777 less the process's umask, applied by the kernel (a
    /// diff's `new file mode 100755`).
    Executable,
}

impl DirHandle {
    /// Another handle on the same directory.
    ///
    /// # Errors
    /// When the handle cannot be duplicated.
    pub fn try_clone(&self) -> io::Result<DirHandle> {
        Ok(DirHandle { dir: self.dir.try_clone()? })
    }

    /// Which directory this handle is on: its device and inode (its change time moves with
    /// every entry added or removed, so it is not part of it).
    ///
    /// # Errors
    /// The I/O error.
    pub fn dir_id(&self) -> io::Result<(u64, u64)> {
        use cap_std::fs::MetadataExt;
        let meta = self.dir.dir_metadata()?;
        Ok((meta.dev(), meta.ino()))
    }

    /// Opens the subdirectory `name`, refusing a symlink.
    ///
    /// # Errors
    /// The I/O error.
    pub fn open_dir(&self, name: impl AsRef<OsStr>) -> io::Result<DirHandle> {
        let name = single(name.as_ref())?;
        Ok(DirHandle { dir: self.dir.open_dir_nofollow(name)? })
    }

    /// Opens (creating when missing) the subdirectory `name`, refusing a symlink.
    ///
    /// # Errors
    /// The I/O error.
    pub fn create_dir(&self, name: impl AsRef<OsStr>) -> io::Result<DirHandle> {
        let name = single(name.as_ref())?;
        match self.dir.open_dir_nofollow(name) {
            Ok(dir) => Ok(DirHandle { dir }),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                match self.dir.create_dir(name) {
                    Ok(()) => {}
                    Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(err) => return Err(err),
                }
                Ok(DirHandle { dir: self.dir.open_dir_nofollow(name)? })
            }
            Err(err) => Err(err),
        }
    }

    /// The metadata of `name`, not following a symlink; `None` when it does not exist.
    ///
    /// # Errors
    /// Any other I/O error.
    pub fn entry_metadata(&self, name: impl AsRef<OsStr>) -> io::Result<Option<Metadata>> {
        let name = single(name.as_ref())?;
        match self.dir.symlink_metadata(name) {
            Ok(meta) => Ok(Some(meta)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Opens the regular file `name` for reading (not a symlink).
    ///
    /// # Errors
    /// The I/O error; `InvalidInput` when it is not a regular file.
    pub fn open_file(&self, name: impl AsRef<OsStr>) -> io::Result<std::fs::File> {
        Ok(self.open_file_with_metadata(name)?.0)
    }

    /// Opens the regular file `name` for reading (not a symlink), with its metadata (one
    /// `fstat` of the file opened, which says it is a regular file).
    fn open_file_with_metadata(
        &self,
        name: impl AsRef<OsStr>,
    ) -> io::Result<(std::fs::File, std::fs::Metadata)> {
        let name = single(name.as_ref())?;
        let file = self.dir.open_with(name, &read_options())?.into_std();
        let meta = file.metadata()?;
        ensure_regular(&meta)?;
        Ok((file, meta))
    }

    /// Reads the regular file `name` (not a symlink).
    ///
    /// # Errors
    /// As [`DirHandle::open_file`], or a read error.
    pub fn read(&self, name: impl AsRef<OsStr>) -> io::Result<Vec<u8>> {
        Ok(self.read_with_metadata(name)?.0)
    }

    /// Reads the regular file `name` (not a symlink), with the metadata of the file read (its
    /// mode, identity and times, all of the one file opened): one `open`, one `fstat`, and
    /// the reads, where opening, reading and asking its mode apart take two opens and four
    /// `fstat`s.
    ///
    /// # Errors
    /// As [`DirHandle::read`].
    pub fn read_with_metadata(
        &self,
        name: impl AsRef<OsStr>,
    ) -> io::Result<(Vec<u8>, std::fs::Metadata)> {
        let (file, meta) = self.open_file_with_metadata(name)?;
        Ok((read_sized(file, meta.len())?, meta))
    }

    /// Reads at most `limit` bytes of the regular file `name`; a longer file is an
    /// `InvalidData` error.
    ///
    /// # Errors
    /// As [`DirHandle::read`], and when the file is longer than `limit`.
    pub fn read_limited(&self, name: impl AsRef<OsStr>, limit: u64) -> io::Result<Vec<u8>> {
        use std::io::Read;
        let file = self.open_file(name)?;
        let mut buf = Vec::new();
        file.take(limit.saturating_add(1)).read_to_end(&mut buf)?;
        if buf.len() as u64 > limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("longer than {limit} bytes"),
            ));
        }
        Ok(buf)
    }

    /// The identity of the entry `name` (not following a symlink); `None` when it does not
    /// exist.
    ///
    /// # Errors
    /// Any other I/O error.
    pub fn identity(&self, name: impl AsRef<OsStr>) -> io::Result<Option<FileIdentity>> {
        Ok(self.entry_metadata(name)?.map(|meta| FileIdentity::of_cap(&meta)))
    }

    /// Creates the file `name`, which must not exist, writes `contents`, gives it its
    /// permissions and makes it durable (fsync). Returns the new file's identity. A file of
    /// given bits is created with them, and set again (`fchmod`) only when the umask narrowed
    /// them: one system call less per file in the common case.
    ///
    /// # Errors
    /// `AlreadyExists` when something (even a symlink) is there, or the I/O error.
    pub fn create_new(
        &self,
        name: impl AsRef<OsStr>,
        contents: &[u8],
        mode: &NewFileMode,
    ) -> io::Result<FileIdentity> {
        self.create(name.as_ref(), contents, mode, true)
    }

    /// [`DirHandle::create_new`] without its syncs: the file is durable only once a
    /// [`SyncBatch`] begun before it was written has finished.
    ///
    /// # Errors
    /// As [`DirHandle::create_new`].
    pub fn create_new_unsynced(
        &self,
        name: impl AsRef<OsStr>,
        contents: &[u8],
        mode: &NewFileMode,
    ) -> io::Result<FileIdentity> {
        self.create(name.as_ref(), contents, mode, false)
    }

    fn create(
        &self,
        name: &OsStr,
        contents: &[u8],
        mode: &NewFileMode,
        sync: bool,
    ) -> io::Result<FileIdentity> {
        use std::io::Write;
        let name = single(name)?;
        let mut options = OpenOptions::new();
        options.write(true).create_new(true).follow(FollowSymlinks::No);
        // The permission bits it must end with; `None`: whatever the umask leaves.
        let bits = match mode {
            NewFileMode::Private => Some(0o600),
            NewFileMode::Mode(bits) => Some(*bits & 0o777),
            NewFileMode::Default | NewFileMode::Executable => None,
        };
        {
            use cap_std::fs::OpenOptionsExt;
            // Created with the bits it ends with (never more: nobody else may open it with
            // more than its final permissions), which the kernel narrows by the umask.
            options.mode(match mode {
                NewFileMode::Default => 0o666,
                NewFileMode::Executable => 0o777,
                NewFileMode::Private | NewFileMode::Mode(_) => bits.unwrap_or(0o600),
            });
        }
        let mut file = self.dir.open_with(name, &options)?.into_std();
        let res = (|| {
            use std::os::unix::fs::PermissionsExt;
            file.write_all(contents)?;
            if sync {
                file.sync_all()?;
            }
            let meta = file.metadata()?;
            match bits {
                // The umask took bits away: set them, durably, and take the identity after
                // (the change time moves).
                Some(bits) if meta.permissions().mode() & 0o777 != bits => {
                    file.set_permissions(std::fs::Permissions::from_mode(bits))?;
                    if sync {
                        file.sync_all()?;
                    }
                    Ok(FileIdentity::of(&file.metadata()?))
                }
                _ => Ok(FileIdentity::of(&meta)),
            }
        })();
        if res.is_err() {
            let _ = self.dir.remove_file(name);
        }
        res
    }

    /// Replaces (or creates) the regular file `name` with `contents`, atomically: a fresh temp
    /// file beside it, fsynced, renamed over it. A symlink at `name` is replaced, never
    /// followed.
    ///
    /// # Errors
    /// The I/O error; the temp file is then removed and `name` is unchanged.
    pub fn write_replace(
        &self,
        name: impl AsRef<OsStr>,
        contents: &[u8],
        mode: &NewFileMode,
    ) -> io::Result<()> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = single(name.as_ref())?;
        let mut temp = OsString::from(".");
        temp.push(name);
        temp.push(format!(
            ".{}-{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        self.create_new(&temp, contents, mode)?;
        if let Err(err) = self.rename(&temp, name) {
            let _ = self.remove_file(&temp);
            return Err(err);
        }
        self.sync()
    }

    /// Opens (creating when missing) the regular file `name` for writing without truncating
    /// it, for use as a lock file. Never follows a symlink.
    ///
    /// # Errors
    /// The I/O error; `InvalidInput` when `name` is not a regular file.
    pub fn open_lock_file(&self, name: impl AsRef<OsStr>) -> io::Result<std::fs::File> {
        let name = single(name.as_ref())?;
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false).follow(FollowSymlinks::No);
        let file = self.dir.open_with(name, &options)?.into_std();
        ensure_regular(&file.metadata()?)?;
        Ok(file)
    }

    /// Renames `from` over `to`, both in this directory. A symlink at `to` is replaced, never
    /// followed.
    ///
    /// # Errors
    /// The I/O error.
    pub fn rename(&self, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
        let (from, to) = (single(from.as_ref())?, single(to.as_ref())?);
        self.dir.rename(from, &self.dir, to)
    }

    /// Renames `from` to `to`, both in this directory, only if nothing is at `to`: atomically
    /// (`renameat2` with `RENAME_NOREPLACE`), so a file that appears at `to` meanwhile is never
    /// replaced.
    ///
    /// # Errors
    /// `AlreadyExists` when something (even a symlink) is at `to`, or the I/O error.
    pub fn rename_noreplace(
        &self,
        from: impl AsRef<OsStr>,
        to: impl AsRef<OsStr>,
    ) -> io::Result<()> {
        let (from, to) = (single(from.as_ref())?, single(to.as_ref())?);
        rename_noreplace(&self.dir, from, &self.dir, to)
    }

    /// Renames `from` in this directory to `to` in the directory `into` (on the same file
    /// system), only if nothing is at `to`, atomically, as [`DirHandle::rename_noreplace`].
    ///
    /// # Errors
    /// `AlreadyExists` when something (even a symlink) is at `to`, or the I/O error.
    pub fn rename_noreplace_into(
        &self,
        from: impl AsRef<OsStr>,
        into: &DirHandle,
        to: impl AsRef<OsStr>,
    ) -> io::Result<()> {
        let (from, to) = (single(from.as_ref())?, single(to.as_ref())?);
        rename_noreplace(&self.dir, from, &into.dir, to)
    }

    /// Makes `to` in the directory `into` a hard link of the entry `from` of this directory
    /// (on the same file system). A symlink at `from` is linked itself, never followed; a
    /// `to` that exists is an error.
    ///
    /// # Errors
    /// `AlreadyExists` when something (even a symlink) is at `to`, or the I/O error.
    pub fn hard_link(
        &self,
        from: impl AsRef<OsStr>,
        into: &DirHandle,
        to: impl AsRef<OsStr>,
    ) -> io::Result<()> {
        let (from, to) = (single(from.as_ref())?, single(to.as_ref())?);
        self.dir.hard_link(from, &into.dir, to)
    }

    /// Removes the empty subdirectory `name` (never through a symlink).
    ///
    /// # Errors
    /// The I/O error: `DirectoryNotEmpty` when it holds anything, `NotADirectory` for a
    /// symlink or a file.
    pub fn remove_dir(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = single(name.as_ref())?;
        self.dir.remove_dir(name)
    }

    /// The Unix mode bits of the regular file `name` (not a symlink).
    ///
    /// # Errors
    /// As [`DirHandle::open_file`].
    pub fn file_mode(&self, name: impl AsRef<OsStr>) -> io::Result<u32> {
        use std::os::unix::fs::PermissionsExt;
        Ok(self.open_file(name)?.metadata()?.permissions().mode())
    }

    /// Removes the file (or symlink) `name` from this directory.
    ///
    /// # Errors
    /// The I/O error.
    pub fn remove_file(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = single(name.as_ref())?;
        self.dir.remove_file_or_symlink(name)
    }

    /// The names of this directory's entries.
    ///
    /// # Errors
    /// The I/O error.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let mut res = Vec::new();
        for entry in self.dir.entries()? {
            res.push(entry?.file_name());
        }
        Ok(res)
    }

    /// Makes the renames and creations in this directory durable.
    ///
    /// # Errors
    /// The I/O error.
    pub fn sync(&self) -> io::Result<()> {
        self.open_for_sync()?.sync_all()
    }

    /// The directory itself, opened for reading through the handle: directory handles may be
    /// path-only descriptors, which cannot be synced.
    fn open_for_sync(&self) -> io::Result<std::fs::File> {
        let mut options = OpenOptions::new();
        options.read(true).maybe_dir(true).follow(FollowSymlinks::No);
        Ok(self.dir.open_with(".", &options)?.into_std())
    }
}

#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
fn rename_noreplace(dir: &Dir, from: &OsStr, into: &Dir, to: &OsStr) -> io::Result<()> {
    rustix::fs::renameat_with(dir, from, into, to, rustix::fs::RenameFlags::NOREPLACE)
        .map_err(io::Error::from)
}

/// Without `renameat2`: a hard link fails when the name exists, then the temp name goes.
#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
fn rename_noreplace(dir: &Dir, from: &OsStr, into: &Dir, to: &OsStr) -> io::Result<()> {
    dir.hard_link(from, into, to)?;
    dir.remove_file(from)
}

/// Refuses a name that is not exactly one normal component.
fn single(name: &OsStr) -> io::Result<&OsStr> {
    let mut components = Path::new(name).components();
    match (components.next(), components.next()) {
        (Some(Component::Normal(one)), None) if one == name => Ok(name),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is not a single file name", name.to_string_lossy()),
        )),
    }
}

/// How files are opened for reading: never through a symlink as the last component, and
/// without blocking, so that a FIFO (whose open waits for a writer) or a device is refused by
/// [`ensure_regular`] at once instead of holding the caller forever. `O_NONBLOCK` changes
/// nothing for a regular file.
fn read_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No).nonblock(true);
    options
}

fn ensure_regular(meta: &std::fs::Metadata) -> io::Result<()> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"))
    }
}

/// Reads `file` to its end, `len` (its size when opened) being the first guess of how long it
/// is: the reads alone, without the `fstat` and `lseek` that `read_to_end` of a `File` adds to
/// size its buffer. A file that grew meanwhile is read whole all the same.
fn read_sized(mut file: std::fs::File, len: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    // One byte more than the size, so that the read that finds the end needs no new room.
    let mut buf = vec![0; usize::try_from(len).unwrap_or(0).saturating_add(1).min(1 << 26)];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            let more = buf.len().max(8192);
            buf.resize(buf.len() + more, 0);
        }
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    buf.truncate(filled);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::os::unix::fs::symlink;

    use super::*;

    fn rel(s: &str) -> RelPath {
        RelPath::new(s).unwrap()
    }

    #[test]
    fn rel_paths_refuse_climbing_absolute_and_empty() {
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./a", "a/./b/..", "a\0b"] {
            assert!(RelPath::new(bad).is_err(), "{bad:?} was accepted");
        }
        assert_eq!(rel("a//b/").display(), "a/b");
        assert_eq!(rel("a/b").parent(), Some(rel("a")));
        assert_eq!(rel("a").parent(), None);
    }

    #[test]
    fn reads_never_leave_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, outside) = (tmp.path().join("ws"), tmp.path().join("outside"));
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret").unwrap();
        std::fs::write(ws.join("src/a.ts"), "inside").unwrap();
        symlink(&outside, ws.join("out")).unwrap();
        symlink(outside.join("secret.txt"), ws.join("secret.txt")).unwrap();
        symlink("src", ws.join("alias")).unwrap();
        let root = Root::open(&ws).unwrap();
        assert_eq!(root.read(&rel("src/a.ts")).unwrap(), b"inside");
        // An in-root directory symlink may be read through; an escaping one never.
        assert_eq!(root.read(&rel("alias/a.ts")).unwrap(), b"inside");
        assert!(root.read(&rel("out/secret.txt")).is_err());
        assert!(root.read(&rel("secret.txt")).is_err());
    }

    #[test]
    fn a_written_file_never_gets_set_id_or_sticky_bits() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::open(tmp.path()).unwrap();
        let dir = root.handle().unwrap();
        dir.create_new("tool", b"#!/bin/sh\n", &NewFileMode::Mode(0o7755)).unwrap();
        let mode = std::fs::metadata(tmp.path().join("tool")).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o755);
    }

    #[test]
    fn a_new_file_gets_exactly_its_bits_whatever_the_umask_and_the_identity_it_ends_with() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::open(tmp.path()).unwrap();
        let dir = root.handle().unwrap();
        // Under the usual umask (022), 0666 and 0775 are narrowed at creation and set again;
        // 0640 and 0600 are not.
        for (name, mode, want) in [
            ("wide", NewFileMode::Mode(0o666), 0o666),
            ("group", NewFileMode::Mode(0o775), 0o775),
            ("narrow", NewFileMode::Mode(0o640), 0o640),
            ("private", NewFileMode::Private, 0o600),
        ] {
            let identity = dir.create_new(name, b"x\n", &mode).unwrap();
            let meta = std::fs::symlink_metadata(tmp.path().join(name)).unwrap();
            assert_eq!(meta.permissions().mode() & 0o7777, want, "{name}");
            assert_eq!(identity, FileIdentity::of(&meta), "{name}");
            assert_eq!(std::fs::read(tmp.path().join(name)).unwrap(), b"x\n");
        }
    }

    #[test]
    fn a_fifo_is_refused_not_waited_on() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let made = std::process::Command::new("mkfifo").arg(ws.join("pipe")).status().unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let root = Root::open(&ws).unwrap();
            let dir = root.handle().unwrap();
            let kinds = [
                root.read(&rel("pipe")).err().map(|e| e.kind()),
                dir.read("pipe").err().map(|e| e.kind()),
                dir.read_limited("pipe", 10).err().map(|e| e.kind()),
                dir.file_mode("pipe").err().map(|e| e.kind()),
            ];
            let _ = tx.send(kinds);
        });
        // Opening a FIFO to read blocks until a writer comes; no reader of a file may wait.
        let kinds = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("a read blocked");
        assert_eq!(kinds, [Some(io::ErrorKind::InvalidInput); 4]);
    }

    #[test]
    fn write_handles_refuse_every_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        symlink("src", ws.join("alias")).unwrap();
        let root = Root::open(&ws).unwrap();
        assert!(root.dir(Some(&rel("src"))).is_ok());
        assert!(root.dir(Some(&rel("alias"))).is_err());
        assert!(root.create_dir_all(&rel("alias/new")).is_err());
        assert!(!ws.join("src/new").exists());
        let dir = root.dir(Some(&rel("src"))).unwrap();
        symlink("/etc/passwd", ws.join("src/victim")).unwrap();
        assert!(dir.open_file("victim").is_err());
        assert!(dir.open_lock_file("victim").is_err());
        assert_eq!(
            dir.create_new("victim", b"x", &NewFileMode::Private).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert!(dir.open_dir("../..").is_err());
        assert!(dir.remove_file("a/b").is_err());
    }

    #[test]
    fn a_read_gives_every_byte_and_the_metadata_of_the_file_read() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let root = Root::open(ws).unwrap();
        let dir = root.handle().unwrap();
        for len in [0usize, 1, 4095, 4096, 8192, 100_003] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let name = format!("f{len}");
            std::fs::write(ws.join(&name), &bytes).unwrap();
            std::fs::set_permissions(ws.join(&name), std::fs::Permissions::from_mode(0o751))
                .unwrap();
            let (read, meta) = dir.read_with_metadata(&name).unwrap();
            assert_eq!(read, bytes, "{len} bytes");
            assert_eq!(meta.permissions().mode() & 0o7777, 0o751);
            assert_eq!(meta.len(), len as u64);
            assert_eq!(dir.read(&name).unwrap(), bytes);
            assert_eq!(root.read(&rel(&name)).unwrap(), bytes);
            let before = FileIdentity::of(&meta);
            assert_eq!(dir.identity(&name).unwrap(), Some(before));
        }
        std::fs::create_dir(ws.join("d")).unwrap();
        assert_eq!(dir.read_with_metadata("d").unwrap_err().kind(), io::ErrorKind::InvalidInput);
        symlink("f1", ws.join("link")).unwrap();
        assert!(dir.read_with_metadata("link").is_err());
    }

    #[test]
    fn a_fifo_is_refused_at_once_and_a_strict_open_follows_no_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/a.ts"), "a").unwrap();
        symlink("src", ws.join("alias")).unwrap();
        let status = std::process::Command::new("mkfifo").arg(ws.join("pipe")).status().unwrap();
        assert!(status.success());
        let root = Root::open(ws).unwrap();
        // Without a writer, a blocking open of the FIFO would never return.
        assert_eq!(root.open_file(&rel("pipe")).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        let dir = root.handle().unwrap();
        assert_eq!(dir.open_file("pipe").unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert!(root.open_file_strict(&rel("src/a.ts")).is_ok());
        assert!(root.open_file(&rel("alias/a.ts")).is_ok());
        assert!(root.open_file_strict(&rel("alias/a.ts")).is_err());
        assert!(root.open_file_strict(&rel("pipe")).is_err());
    }

    #[test]
    fn a_handle_keeps_pointing_at_its_directory_after_a_swap() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, outside) = (tmp.path().join("ws"), tmp.path().join("outside"));
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let root = Root::open(&ws).unwrap();
        let dir = root.dir(Some(&rel("sub"))).unwrap();
        std::fs::rename(ws.join("sub"), ws.join("moved")).unwrap();
        symlink(&outside, ws.join("sub")).unwrap();
        let id = dir.create_new("f.txt", b"x", &NewFileMode::Private).unwrap();
        dir.sync().unwrap();
        assert_eq!(dir.identity("f.txt").unwrap(), Some(id));
        // A copy at the same name is another file.
        std::fs::copy(ws.join("moved/f.txt"), ws.join("moved/g.txt")).unwrap();
        std::fs::rename(ws.join("moved/g.txt"), ws.join("moved/f.txt")).unwrap();
        assert_ne!(dir.identity("f.txt").unwrap(), Some(id));
        assert!(ws.join("moved/f.txt").exists());
        assert!(!outside.join("f.txt").exists());
    }
}
