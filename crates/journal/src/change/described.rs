//! The diff and hashes of changes already made ([`describe_applied`]), and the diffs of a
//! whole file created or deleted.

use staged_core::FileChange;

use super::{Applied, Edit, change, replay};
use crate::{DiffHeader, JournalError, LineIndex, diff::file_diff_indexed};

/// The unified diff and each file's hashes of `ops`, changes already made (an edit another tool
/// wrote, recorded after the fact): `before` holds the text each updated or moved file had
/// before, by path.
///
/// # Errors
/// [`JournalError::EditOutOfBounds`] when an op's edits do not fit the text before.
pub fn describe_applied(
    ops: &[Applied],
    before: &std::collections::BTreeMap<String, String>,
) -> Result<(String, Vec<FileChange>), JournalError> {
    let mut diff = String::new();
    let mut files = Vec::new();
    let text_of = |path: &str| before.get(path).map(String::as_str).unwrap_or_default();
    for op in ops {
        match op {
            Applied::Update { path, edits } => {
                let text = text_of(path);
                let new = replay(text, edits).ok_or(JournalError::EditOutOfBounds)?;
                diff.push_str(&file_diff_indexed(
                    &DiffHeader::Modify { path },
                    &LineIndex::new(text),
                    edits,
                )?);
                files.push(change(path, Some(text), Some(&new)));
            }
            Applied::Create { path, content, mode } => {
                diff.push_str(&new_file_diff(path, content, mode.unwrap_or(NEW_FILE_MODE))?);
                files.push(change(path, None, Some(content)));
            }
            Applied::Delete { path, content, mode } => {
                diff.push_str(&deleted_file_diff(path, content, *mode)?);
                files.push(change(path, Some(content), None));
            }
            Applied::Move { from, to, edits } => {
                let text = text_of(from);
                let new = replay(text, edits).ok_or(JournalError::EditOutOfBounds)?;
                diff.push_str(&file_diff_indexed(
                    &DiffHeader::Rename { from, to },
                    &LineIndex::new(text),
                    edits,
                )?);
                files.push(change(from, Some(text), None));
                files.push(change(to, None, Some(&new)));
            }
        }
    }
    Ok((diff, files))
}

/// The mode git shows a new file with, in a preview (the file gets the umask's).
pub const NEW_FILE_MODE: u32 = 0o644;

/// The mode git shows a new executable with (`new file mode 100755`; the file gets 0777 less
/// the umask).
pub const EXECUTABLE_MODE: u32 = 0o755;

/// The diff of a new file at `path` holding `content`.
///
/// # Errors
/// Never, in practice: one insertion always fits the empty text.
pub fn new_file_diff(path: &str, content: &str, mode: u32) -> Result<String, JournalError> {
    let edit = Edit { start: 0, before: String::new(), after: content.to_owned() };
    file_diff_indexed(&DiffHeader::Create { path, mode }, &LineIndex::new(""), &[edit])
}

/// The diff of deleting the file at `path`, which holds `content`.
///
/// # Errors
/// Never, in practice: removing the whole text always fits it.
pub fn deleted_file_diff(path: &str, content: &str, mode: u32) -> Result<String, JournalError> {
    let edit = Edit { start: 0, before: content.to_owned(), after: String::new() };
    file_diff_indexed(&DiffHeader::Delete { path, mode }, &LineIndex::new(content), &[edit])
}
