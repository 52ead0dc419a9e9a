//! `AstEditError`: every failure of this crate, with the exact model-facing message.
//!
//! The messages are the contract's, word for word (`docs/contract/ast-edit.md`); the tools pass
//! them to the model unchanged.

use std::path::PathBuf;

use crate::details::{LANG_REQUIRED, LangCount, LangRequiredDetails};

impl AstEditError {
    /// Structured facts a front end can phrase in its own terms (the CLI names `--lang`, not
    /// the tool's `lang` argument): `{"error": "langRequired", "languages": [{"lang", "files"}],
    /// "uninferred": [..]}` for the three "`lang` is required" errors, `None` otherwise.
    pub fn details(&self) -> Option<serde_json::Value> {
        let details = |languages: Option<Vec<LangCount>>, uninferred: Option<Vec<String>>| {
            LangRequiredDetails { error: LANG_REQUIRED.to_owned(), languages, uninferred }
                .to_value()
        };
        match self {
            AstEditError::LangRequiredMixed(found) => Some(details(
                Some(
                    found
                        .iter()
                        .map(|(lang, files)| LangCount { lang: lang.clone(), files: *files as u64 })
                        .collect(),
                ),
                None,
            )),
            AstEditError::LangRequiredNoFiles { .. } => Some(details(Some(Vec::new()), None)),
            AstEditError::LangNotInferred { list, .. } => Some(details(
                None,
                Some(list.lines().map(|l| l.trim_start_matches("- ").to_owned()).collect()),
            )),
            _ => None,
        }
    }

    /// The message for a model: as [`Display`](std::fmt::Display), but a file that could not
    /// be read, or a state folder that was refused, is named from the workspace root (`src/a.ts`,
    /// `.staged/journal`), not by its absolute path, which tells the model nothing it needs.
    /// The messages the contract pins with an absolute path (`Failed to write <abs>: <e>`,
    /// `Path is outside the workspace: <entry> (workspace root: <root>)`) keep it.
    pub fn model_message(&self, root: &std::path::Path) -> String {
        let shown = |path: &std::path::Path| match path.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
            _ => path.display().to_string(),
        };
        match self {
            AstEditError::Read { path, message, .. } => {
                format!("Failed to read {}: {message}", shown(path))
            }
            AstEditError::StateDir { path, message } => {
                format!("Refusing the state folder {}: {message}", shown(path))
            }
            other => other.to_string(),
        }
    }

    /// The [`ToolError`](staged_core::ToolError) a tool reports: the message, with
    /// [`AstEditError::details`] when there are any.
    pub fn to_tool_error(&self) -> staged_core::ToolError {
        let err = staged_core::ToolError::new(self.to_string());
        match self.details() {
            Some(details) => err.with_details(details),
            None => err,
        }
    }
}

impl From<staged_journal::JournalError> for AstEditError {
    fn from(err: staged_journal::JournalError) -> Self {
        use staged_journal::JournalError as J;
        match err {
            J::PathNotFound(path) => AstEditError::PathNotFound(path),
            J::OutsideWorkspace { path, root } => AstEditError::OutsideWorkspace { path, root },
            J::EditOutOfBounds => AstEditError::EditOutOfBounds,
            J::Read { path, message, source } => AstEditError::Read { path, message, source },
            J::Write { path, message, source } => AstEditError::Write { path, message, source },
            J::Drifted(path) | J::Appeared(path) => AstEditError::Drifted(path),
            J::Journal(message) => AstEditError::Journal(message),
            J::StateDir { path, message } => AstEditError::StateDir { path, message },
            J::InvalidWorkspace { path, message } => {
                AstEditError::InvalidWorkspace { path, message }
            }
            J::StatePath(path) => AstEditError::StatePath(path),
            err @ J::ProtectedPath { .. } => AstEditError::ProtectedPath(err.to_string()),
        }
    }
}

/// A failure of validation, scope resolution, the engine, or a write.
#[derive(Debug, thiserror::Error)]
pub enum AstEditError {
    /// `ops` was empty.
    #[error("`ops` must include at least one op entry")]
    NoOps,
    /// An op had an empty `pat`.
    #[error("`ops[{index}].pat` must be a non-empty pattern")]
    EmptyPattern {
        /// Index of the op.
        index: usize,
    },
    /// `ast_grep`'s `pattern` was empty.
    #[error("`pattern` must be a non-empty pattern")]
    EmptySearchPattern,
    /// Two ops had the same `pat`.
    #[error("Duplicate rewrite pattern: {0}")]
    DuplicatePattern(String),
    /// `paths` was empty.
    #[error("`paths` must contain at least one path or glob")]
    NoPaths,
    /// A `paths` entry was empty or blank.
    #[error("Search scope entries must be non-empty paths or globs")]
    EmptyScopeEntry,
    /// A `paths` entry was a web URL.
    #[error(
        "Cannot rewrite external URL: {0}. Use `read` or `search` to inspect fetched web content; ast_edit only applies to local files."
    )]
    ExternalUrl(String),
    /// A `paths` entry was an ssh:// URL.
    #[error(
        "Cannot rewrite a remote ssh:// path (no local file): {0}. ast_edit only applies to local files inside the workspace."
    )]
    RemotePath(String),
    /// A `paths` entry was some other URL.
    #[error("Cannot rewrite internal URL without a backing file: {0}")]
    InternalUrl(String),
    /// A `paths` entry does not exist.
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
    /// A path a model gave is in staged's state folder.
    #[error(
        "Refusing {0}: it is in staged's state folder (.staged/), which holds staged's own state (tokens, transcripts, the database); tools never read or change it"
    )]
    StatePath(String),
    /// A rewrite would change a protected path (`.git/`, a coding agent's control files:
    /// [`staged_journal::PROTECTED_PATHS`]); the message names it.
    #[error("{0}")]
    ProtectedPath(String),
    /// The path is neither a regular file nor a directory.
    #[error("Search path must be a file or directory: {0}")]
    NotFileOrDirectory(String),
    /// `limit` was below 1.
    #[error("limit must be a positive number")]
    InvalidLimit,
    /// `max_files` was below 1.
    #[error("max_files must be a positive number")]
    InvalidMaxFiles,
    /// A glob did not compile.
    #[error("Invalid glob pattern: {0}")]
    InvalidGlob(String),

    /// A rewrite or search pattern does not compile for the language.
    #[error("Invalid pattern: {0}")]
    InvalidPattern(String),
    /// The arguments did not deserialize.
    #[error("Invalid arguments: {0}")]
    InvalidArguments(String),
    /// A language name we did not compile in.
    #[error("Unsupported language '{value}'. Supported: {supported}")]
    UnsupportedLanguage {
        /// The name as given.
        value: String,
        /// Every accepted name, sorted, comma-separated.
        supported: String,
    },
    /// No `lang`, and no candidate file.
    #[error("`lang` is required for {tool} when no files match path/glob")]
    LangRequiredNoFiles {
        /// `ast_edit` or `ast_grep`.
        tool: &'static str,
    },
    /// No `lang`, and the candidates have several languages.
    #[error("`lang` is required for ast_edit when path/glob resolves to multiple languages: {}", .0.iter().map(|(lang, _)| lang.as_str()).collect::<Vec<_>>().join(", "))]
    LangRequiredMixed(
        /// Each language found and how many candidate files have it, by name.
        Vec<(String, usize)>,
    ),
    /// No `lang`, and a named file has no recognisable language.
    #[error(
        "`lang` is required for {tool} when language cannot be inferred from all files:\n{list}"
    )]
    LangNotInferred {
        /// `ast_edit` or `ast_grep`.
        tool: &'static str,
        /// `- <path>: <reason>` lines.
        list: String,
    },
    /// Two edits in one file overlap.
    #[error(
        "Overlapping replacements detected; refine pattern to avoid ambiguous edits\n- {location}"
    )]
    Overlap {
        /// `<path>:<line>:<col>` of the second edit.
        location: String,
    },
    /// An edit range fell outside its file.
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
    /// A stored payload could not be turned back into an action.
    #[error("Invalid ast_edit payload: {0}")]
    InvalidPayload(String),
    /// A file changed between the preview and the write.
    #[error("File changed since the preview: {0}")]
    Drifted(String),
    /// The work was cancelled before anything was written.
    #[error("Cancelled")]
    Cancelled,
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
    /// The workspace root is unusable.
    #[error("Invalid workspace root {path}: {message}")]
    InvalidWorkspace {
        /// The root as given.
        path: PathBuf,
        /// Why.
        message: String,
    },
}
