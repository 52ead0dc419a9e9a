//! `AstEditError`: every failure of this crate, with the exact model-facing message.
//!
//! The messages are the contract's, word for word (`docs/contract/ast-edit.md`); the tools pass
//! them to the model unchanged.

use staged_journal::JournalError;

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
        match self {
            AstEditError::Journal(JournalError::Appeared(_)) => self.to_string(),
            AstEditError::Journal(err) => err.model_message(root),
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

/// The message of a journal failure as `ast_edit` words it: a file created since the preview is
/// one that changed since it.
fn journal_message(err: &JournalError) -> String {
    match err {
        JournalError::Appeared(path) => JournalError::Drifted(path.clone()).to_string(),
        other => other.to_string(),
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
    /// A stored payload could not be turned back into an action.
    #[error("Invalid ast_edit payload: {0}")]
    InvalidPayload(String),
    /// The work was cancelled before anything was written.
    #[error("Cancelled")]
    Cancelled,
    /// A failure of `staged-journal` below: a path it confines (not found, outside the root,
    /// in the state folder, protected), a read or a write, the journal, the state folder or the
    /// root. Its message is the journal's, but for a file created since the preview, which
    /// `ast_edit` reports as changed.
    #[error("{}", journal_message(.0))]
    Journal(#[from] JournalError),
}
