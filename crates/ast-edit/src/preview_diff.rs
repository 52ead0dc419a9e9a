//! A preview's unified diff: the touched files' diffs (each built by `staged_journal`'s
//! linear-time diff from the file's edits), in path order.

use staged_journal::{DiffHeader, JournalError, LineIndex};

use crate::{edits::Edit, engine::EditPreview, error::AstEditError};

impl staged_journal::Splice for Edit {
    fn span(&self) -> std::ops::Range<usize> {
        self.byte_start..self.byte_end
    }

    fn replacement(&self) -> &str {
        &self.after
    }
}

/// The unified diff of one file, with a `diff --git` header, from the text read and its edits
/// (sorted, not overlapping, as an [`EditPreview`] holds them).
///
/// # Errors
/// [`AstEditError::EditOutOfBounds`] when an edit does not fit `original`, splits a character,
/// or starts before the previous one ends.
pub fn file_diff(path: &str, original: &str, edits: &[Edit]) -> Result<String, AstEditError> {
    file_diff_indexed(path, &LineIndex::new(original), edits)
}

/// [`file_diff`] on an already indexed text.
pub(crate) fn file_diff_indexed(
    path: &str,
    index: &LineIndex<'_>,
    edits: &[Edit],
) -> Result<String, AstEditError> {
    staged_journal::file_diff_indexed(&DiffHeader::Modify { path }, index, edits).map_err(|err| {
        match err {
            JournalError::EditOutOfBounds => AstEditError::EditOutOfBounds,
            other => other.into(),
        }
    })
}

/// The unified diff of every touched file whose diff was computed, in path order.
pub fn unified_diff(preview: &EditPreview) -> String {
    preview.files.iter().filter_map(|f| f.diff.as_deref()).collect()
}

/// [`unified_diff`], moving the files' diffs out instead of copying the only one.
pub(crate) fn take_unified_diff(preview: &mut EditPreview) -> String {
    let mut diffs = preview.files.iter_mut().filter_map(|f| f.diff.take());
    let mut res = diffs.next().unwrap_or_default();
    diffs.for_each(|diff| res.push_str(&diff));
    res
}
