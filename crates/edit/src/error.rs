//! `EditError`: every failure of the text tools, with the exact message the model sees.

use staged_protocol::EditErrorDetails;

/// Why an `edit`, `write` or `apply_patch` call staged nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The arguments did not deserialize, or are contradictory.
    #[error("Invalid arguments: {0}")]
    InvalidArguments(String),
    /// The path is empty, outside the workspace, in the state folder, or not a file.
    #[error("{0}")]
    Path(String),
    /// A file could not be read.
    #[error("{0}")]
    Read(String),
    /// A file is binary or not UTF-8.
    #[error("{0} is a binary file (or not UTF-8 text): staged previews changes to text files only")]
    Binary(String),
    /// The new text of a file holds a NUL byte: it would be a binary file.
    #[error(
        "The new text of {0} holds a NUL byte, as a binary file does: staged previews changes to text files only"
    )]
    BinaryText(String),
    /// The preview would be larger than a preview may be (32 MiB of changes): what it would
    /// hold, with the sizes.
    #[error(
        "Refusing to stage this change: {0}, and a preview holds at most {max} MiB of changes (they are kept, shown and sent whole). Make the change in smaller parts.",
        max = crate::stage::MAX_PREVIEW_BYTES >> 20
    )]
    TooLarge(String),
    /// `old_string` was not found.
    #[error("String to replace not found in {path}.{hint}")]
    NotFound {
        /// The file.
        path: String,
        /// What may help, starting with a space, or empty.
        hint: String,
    },
    /// `old_string` was found more than once without `replace_all`.
    #[error(
        "Found {count} matches of the string to replace in {path} (at lines {lines}), but replace_all is false. To replace every match, set replace_all to true; to replace one, make old_string longer, with the lines around it, so that it matches exactly once."
    )]
    Ambiguous {
        /// The file.
        path: String,
        /// How many matches.
        count: usize,
        /// The first lines where they start, `3, 17, 40` (and `and N more`).
        lines: String,
    },
    /// `old_string` equals `new_string`.
    #[error("No changes to make: old_string and new_string are exactly the same (in {0}).")]
    NoChange(String),
    /// A file does not exist and the call does not create it.
    #[error("{0}")]
    Missing(String),
    /// A patch does not parse.
    #[error("{0}")]
    InvalidPatch(String),
    /// A patch does not apply to the files on disk.
    #[error("{0}")]
    PatchConflict(String),
    /// A file already has a pending preview, or the stack failed.
    #[error("{0}")]
    Stage(String),
}

impl EditError {
    /// As the tool error a model sees, with [`EditErrorDetails`] (`{"error": "editNotFound" |
    /// "editAmbiguous" | "editNoChange", "path", ...}`) as details, so that a front end can phrase the error in
    /// its own terms (the CLI names `--old` and `--all`, not `old_string` and `replace_all`).
    pub fn to_tool_error(&self) -> staged_core::ToolError {
        let err = staged_core::ToolError::new(self.to_string());
        let details = match self {
            EditError::NotFound { path, .. } => EditErrorDetails::NotFound { path: path.clone() },
            EditError::Ambiguous { path, count, lines } => EditErrorDetails::Ambiguous {
                path: path.clone(),
                count: *count,
                lines: lines.clone(),
            },
            EditError::NoChange(path) => EditErrorDetails::NoChange { path: path.clone() },
            _ => return err,
        };
        // Serializing strings and a count cannot fail.
        let details = serde_json::to_value(details).unwrap_or_default();
        err.with_details(details)
    }

    /// The "no changes" error of a write whose content is the file's.
    pub(crate) fn rewrite_as_same_content(self) -> EditError {
        match self {
            EditError::NoChange(path) => EditError::Path(format!(
                "No changes to make: {path} already holds exactly this content."
            )),
            other => other,
        }
    }

    /// `edits[i]: <message>`, for one edit of several.
    pub(crate) fn in_edit(self, index: usize, of: usize) -> EditError {
        if of <= 1 {
            return self;
        }
        match self {
            EditError::NotFound { path, hint } => EditError::Path(format!(
                "edits[{index}]: String to replace not found in {path}.{hint}"
            )),
            other => EditError::Path(format!("edits[{index}]: {other}")),
        }
    }
}
