//! `JournalError`: every failure of this crate, with the message a model or a person sees.
//!
//! The messages of the variants that `ast_edit` also reports are the contract's, word for word
//! (`docs/contract/ast-edit.md`); `staged-ast-edit` maps each variant onto its own error.

use std::path::PathBuf;

/// A failure to confine a path, read or write a file, or keep the journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// A path given by a user or a model does not exist.
    #[error("Path not found: {0}")]
    PathNotFound(String),
    /// A path resolves outside the workspace root.
    #[error("Path is outside the workspace: {path} (workspace root: {root})")]
    OutsideWorkspace {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// An edit range fell outside its file, split a character, or overlapped another.
    #[error("Computed edit range is out of bounds")]
    EditOutOfBounds,
    /// A file could not be read.
    #[error("Failed to read {path}: {message}")]
    Read {
        /// Absolute path.
        path: PathBuf,
        /// The OS error, as shown.
        message: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("Failed to write {path}: {message}")]
    Write {
        /// Absolute path.
        path: PathBuf,
        /// The OS error, as shown.
        message: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A file changed (or went away) between the preview and the write.
    #[error("File changed since the preview: {0}")]
    Drifted(String),
    /// A file the commit creates exists now: something else created it since the preview.
    #[error("File created since the preview: {0}")]
    Appeared(String),
    /// A journal could not be written or replayed.
    #[error("Journal error: {0}")]
    Journal(String),
    /// The state folder (`.staged`) or its journal folder is unusable or untrustworthy.
    #[error("Refusing the state folder {path}: {message}")]
    StateDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A model named a path in the state folder (`.staged`), which no tool reads or changes.
    #[error(
        "Refusing {0}: it is in staged's state folder (.staged/), which holds staged's own state (tokens, transcripts, the database); tools never read or change it"
    )]
    StatePath(String),
    /// A tool was to change a protected path (`.git/`, a coding agent's control files:
    /// [`crate::PROTECTED_PATHS`]), which no tool stages an edit of.
    #[error(
        "Refusing {path}: {pattern} is {what}, and staged stages no edit of it, since a change there could widen what a model may do. A person edits it directly."
    )]
    ProtectedPath {
        /// The path, from the root.
        path: String,
        /// The row it falls under.
        pattern: &'static str,
        /// What that row is.
        what: &'static str,
    },
    /// The workspace root is unusable.
    #[error("Invalid workspace root {path}: {message}")]
    InvalidWorkspace {
        /// The root as given.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

impl JournalError {
    /// The message a model sees: a file staged read or refused is named from the root
    /// (`src/a.ts`, `.staged/journal`), not by its absolute path, which tells the model nothing
    /// it needs. The messages that pin an absolute path keep it.
    pub fn model_message(&self, root: &std::path::Path) -> String {
        let shown = |path: &std::path::Path| match path.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
            _ => path.display().to_string(),
        };
        match self {
            JournalError::Read { path, message, .. } => {
                format!("Failed to read {}: {message}", shown(path))
            }
            JournalError::StateDir { path, message } => {
                format!("Refusing the state folder {}: {message}", shown(path))
            }
            other => other.to_string(),
        }
    }
}
