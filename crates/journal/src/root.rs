//! `ConfinedRoot`: the root every path is confined to, and the state folder beside the files.
//!
//! The root is held as an open directory handle ([`staged_fs::Root`]); every file is read and
//! written relative to it, so nothing outside the root is read or written, whatever `..`,
//! symlinks or a directory swapped for a symlink mid-apply would point at (see `staged-fs`).
//! Paths given by a user or a model are first mapped onto the root (lexically, then through
//! their canonical form) only to turn them into [`RelPath`]s and to name them in messages.

use std::{
    io,
    path::{Component, Path, PathBuf},
    sync::Arc,
};

use staged_core::Progress;

use staged_fs::{DirHandle, RelPath, Root};

use crate::JournalError;

/// The name of the state folder under the workspace root.
pub const STATE_DIR_NAME: &str = ".staged";

/// The journal folder's name inside the state folder.
pub(crate) const JOURNAL_DIR_NAME: &str = "journal";

/// The root every path is confined to, open as a directory handle, with the state folder beside
/// the files (named for what it is: the crate `staged-workspace` and its `WorkspaceSession` are
/// the session around it).
#[derive(Debug, Clone)]
pub struct ConfinedRoot {
    root: Root,
    /// Where the searches and writes done through this workspace count their progress, for a
    /// front end that shows it.
    progress: Option<Arc<Progress>>,
}

/// Two workspaces are equal when their roots are: the progress counter is only watched.
impl PartialEq for ConfinedRoot {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Eq for ConfinedRoot {}

impl ConfinedRoot {
    /// A workspace rooted at `root`, which must be an existing directory.
    ///
    /// # Errors
    /// [`JournalError::InvalidWorkspace`] when the root cannot be opened as a directory.
    pub fn new(root: impl AsRef<Path>) -> Result<ConfinedRoot, JournalError> {
        let given = root.as_ref();
        let invalid =
            |message: String| JournalError::InvalidWorkspace { path: given.to_path_buf(), message };
        let root = Root::open(given).map_err(|err| match err.raw_os_error() {
            Some(libc::ENOTDIR) => invalid("not a directory".to_owned()),
            _ => invalid(err.to_string()),
        })?;
        Ok(ConfinedRoot { root, progress: None })
    }

    /// The same workspace, counting the progress of its searches and writes on `progress`.
    #[must_use]
    pub fn with_progress(mut self, progress: Arc<Progress>) -> ConfinedRoot {
        self.progress = Some(progress);
        self
    }

    /// The counter the searches and writes through this workspace report to, if any.
    pub fn progress(&self) -> Option<&Progress> {
        self.progress.as_deref()
    }

    /// The canonical root path (for messages and the database; files are opened through
    /// [`ConfinedRoot::fs`]).
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The root's directory handle.
    pub fn fs(&self) -> &Root {
        &self.root
    }

    /// `<root>/.staged`, as a path (for messages).
    pub fn state_dir(&self) -> PathBuf {
        self.root().join(STATE_DIR_NAME)
    }

    /// `<root>/.staged/journal`, as a path (for messages and tests).
    pub fn journal_dir(&self) -> PathBuf {
        self.state_dir().join(JOURNAL_DIR_NAME)
    }

    /// Opens the state folder, creating it when `create` is set. `Ok(None)` when it does not
    /// exist and `create` is not set.
    ///
    /// # Errors
    /// [`JournalError::StateDir`] when `.staged` is a symlink or not a directory (it is never
    /// followed), or cannot be created.
    pub fn state(&self, create: bool) -> Result<Option<DirHandle>, JournalError> {
        let root = self.root.handle().map_err(|err| self.state_error(&self.state_dir(), &err))?;
        let res =
            if create { root.create_dir(STATE_DIR_NAME) } else { root.open_dir(STATE_DIR_NAME) };
        match res {
            Ok(dir) => Ok(Some(dir)),
            Err(err) if err.kind() == io::ErrorKind::NotFound && !create => Ok(None),
            Err(err) => Err(self.state_error(&self.state_dir(), &err)),
        }
    }

    /// Opens `.staged/journal`, creating both when `create` is set.
    ///
    /// # Errors
    /// As [`ConfinedRoot::state`].
    pub fn journal(&self, create: bool) -> Result<Option<DirHandle>, JournalError> {
        self.state_subdir(JOURNAL_DIR_NAME, create)
    }

    /// Opens `.staged/<name>` (a folder of staged's own, such as `plans`), creating both when
    /// `create` is set; neither is ever followed through a symlink.
    ///
    /// # Errors
    /// As [`ConfinedRoot::state`].
    pub fn state_subdir(
        &self,
        name: &str,
        create: bool,
    ) -> Result<Option<DirHandle>, JournalError> {
        let Some(state) = self.state(create)? else { return Ok(None) };
        let res = if create { state.create_dir(name) } else { state.open_dir(name) };
        match res {
            Ok(dir) => Ok(Some(dir)),
            Err(err) if err.kind() == io::ErrorKind::NotFound && !create => Ok(None),
            Err(err) => Err(self.state_error(&self.state_dir().join(name), &err)),
        }
    }

    fn state_error(&self, path: &Path, err: &io::Error) -> JournalError {
        let message = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                "it is a symlink, and staged never follows one out of its own folder".to_owned()
            }
            Ok(meta) if !meta.is_dir() => "it is not a directory".to_owned(),
            _ => err.to_string(),
        };
        JournalError::StateDir { path: path.to_path_buf(), message }
    }

    /// Joins `given` to the root (unless absolute) and normalises `.`/`..` lexically.
    ///
    /// # Errors
    /// [`JournalError::OutsideWorkspace`] when the result is not under the root.
    pub fn lexical(&self, given: &str) -> Result<PathBuf, JournalError> {
        let joined = self.root().join(given);
        let mut res = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    if !res.pop() {
                        return Err(self.outside(given));
                    }
                }
                Component::CurDir => {}
                other => res.push(other.as_os_str()),
            }
        }
        if !res.starts_with(self.root()) {
            return Err(self.outside(given));
        }
        Ok(res)
    }

    /// Maps an existing path given by a user or model onto the root: `None` for the root
    /// itself, else its path relative to the root, with symlinks resolved.
    ///
    /// # Errors
    /// [`JournalError::OutsideWorkspace`] when it lies (or its symlinks point) outside the
    /// root, [`JournalError::PathNotFound`] when it does not exist.
    pub fn resolve_existing(&self, given: &str) -> Result<Option<RelPath>, JournalError> {
        let lexical = match self.lexical(given) {
            Ok(path) => path,
            // An absolute path may reach the root through a symlinked prefix (e.g. a
            // symlinked /tmp); its canonical form decides.
            Err(err) if Path::new(given).is_absolute() => match Path::new(given).canonicalize() {
                Ok(canonical) => return self.relative(&canonical, given),
                Err(_) => return Err(err),
            },
            Err(err) => return Err(err),
        };
        if std::fs::symlink_metadata(&lexical).is_err() {
            return Err(JournalError::PathNotFound(given.to_owned()));
        }
        let canonical =
            lexical.canonicalize().map_err(|_| JournalError::PathNotFound(given.to_owned()))?;
        self.relative(&canonical, given)
    }

    /// `abs` (canonical) relative to the root; `None` for the root itself.
    fn relative(&self, abs: &Path, given: &str) -> Result<Option<RelPath>, JournalError> {
        let rel = abs.strip_prefix(self.root()).map_err(|_| self.outside(given))?;
        if rel.as_os_str().is_empty() {
            return Ok(None);
        }
        RelPath::new(rel).map(Some).map_err(|_| self.outside(given))
    }

    /// A path found under the root by a walk, relative to it.
    pub fn walked(&self, abs: &Path) -> Option<RelPath> {
        RelPath::new(abs.strip_prefix(self.root()).ok()?).ok()
    }

    /// The path relative to the root with `/` separators, as shown to the model.
    pub fn display_path(&self, abs: &Path) -> String {
        let rel = abs.strip_prefix(self.root()).unwrap_or(abs);
        let parts: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        parts.join("/")
    }

    /// The [`RelPath`] of a display path, as recorded in a payload or journal.
    ///
    /// # Errors
    /// [`JournalError::OutsideWorkspace`] when `display` is absolute, climbs out, or is
    /// empty.
    pub fn rel(&self, display: &str) -> Result<RelPath, JournalError> {
        RelPath::new(display).map_err(|_| self.outside(display))
    }

    fn outside(&self, given: &str) -> JournalError {
        JournalError::OutsideWorkspace { path: given.to_owned(), root: self.root().to_path_buf() }
    }
}
