//! `Workspace`: the root every path is confined to, and the state folder beside the files.
//!
//! Nothing is read or written outside the root: a path is normalised lexically first (so
//! `..` cannot climb out), then canonicalised (so a symlink cannot point out), and both results
//! must lie under the canonical root.

use std::path::{Component, Path, PathBuf};

use crate::AstEditError;

/// The name of the state folder under the workspace root.
pub const STATE_DIR_NAME: &str = ".staged";

/// A canonicalised workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// A workspace rooted at `root`, which must be an existing directory.
    ///
    /// # Errors
    /// [`AstEditError::InvalidWorkspace`] when the root cannot be canonicalised or is not a
    /// directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Workspace, AstEditError> {
        let given = root.as_ref();
        let root = given.canonicalize().map_err(|err| AstEditError::InvalidWorkspace {
            path: given.to_path_buf(),
            message: err.to_string(),
        })?;
        if !root.is_dir() {
            return Err(AstEditError::InvalidWorkspace {
                path: given.to_path_buf(),
                message: "not a directory".to_owned(),
            });
        }
        Ok(Workspace { root })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/.staged`.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR_NAME)
    }

    /// `<root>/.staged/journal`, where multi-file applies keep their journals.
    pub fn journal_dir(&self) -> PathBuf {
        self.state_dir().join("journal")
    }

    /// Joins `given` to the root (unless absolute) and normalises `.`/`..` lexically.
    ///
    /// # Errors
    /// [`AstEditError::OutsideWorkspace`] when the result is not under the root.
    pub fn lexical(&self, given: &str) -> Result<PathBuf, AstEditError> {
        let joined = self.root.join(given);
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
        if !res.starts_with(&self.root) {
            return Err(self.outside(given));
        }
        Ok(res)
    }

    /// Resolves an existing path inside the workspace to its canonical form.
    ///
    /// # Errors
    /// [`AstEditError::OutsideWorkspace`] when it lies (or its symlinks point) outside the
    /// root, [`AstEditError::PathNotFound`] when it does not exist.
    pub fn resolve_existing(&self, given: &str) -> Result<PathBuf, AstEditError> {
        let lexical = match self.lexical(given) {
            Ok(path) => path,
            // An absolute path may reach the root through a symlinked prefix (e.g. a
            // symlinked /tmp); its canonical form decides.
            Err(err) if Path::new(given).is_absolute() => match Path::new(given).canonicalize() {
                Ok(canonical) => {
                    self.confine(&canonical, given)?;
                    return Ok(canonical);
                }
                Err(_) => return Err(err),
            },
            Err(err) => return Err(err),
        };
        if std::fs::symlink_metadata(&lexical).is_err() {
            return Err(AstEditError::PathNotFound(given.to_owned()));
        }
        let canonical =
            lexical.canonicalize().map_err(|_| AstEditError::PathNotFound(given.to_owned()))?;
        self.confine(&canonical, given)?;
        Ok(canonical)
    }

    /// Checks that an absolute, canonical path lies under the root.
    ///
    /// # Errors
    /// [`AstEditError::OutsideWorkspace`] naming `given` otherwise.
    pub fn confine(&self, canonical: &Path, given: &str) -> Result<(), AstEditError> {
        if canonical.starts_with(&self.root) { Ok(()) } else { Err(self.outside(given)) }
    }

    /// The path relative to the root with `/` separators, as shown to the model.
    pub fn display_path(&self, abs: &Path) -> String {
        let rel = abs.strip_prefix(&self.root).unwrap_or(abs);
        let parts: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        parts.join("/")
    }

    /// The absolute path of a display path, confined to the root.
    ///
    /// # Errors
    /// [`AstEditError::OutsideWorkspace`] when `display` climbs out.
    pub fn absolute(&self, display: &str) -> Result<PathBuf, AstEditError> {
        self.lexical(display)
    }

    fn outside(&self, given: &str) -> AstEditError {
        AstEditError::OutsideWorkspace { path: given.to_owned(), root: self.root.clone() }
    }
}
