//! What the three tools share: mapping a path a model or a person gives onto the workspace,
//! reading a file as text (binary files refused), turning two texts into edits, and the
//! wording of previews.

use std::{io, time::Duration};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};
use staged_fs::RelPath;
use staged_journal::{ConfinedRoot, Edit, ModelAccess};

use crate::EditError;

/// How many leading bytes are checked for a NUL to call a file binary (as git does).
const BINARY_SNIFF_LEN: usize = 8000;

/// A line diff that takes longer than this falls back to one edit over the changed lines.
const LINE_DIFF_DEADLINE: Duration = Duration::from_secs(2);

/// A file as a tool found it.
#[derive(Debug)]
pub(crate) enum Found {
    /// Nothing is there.
    Absent,
    /// A text file: its text and the fingerprint of its bytes.
    Text { text: String, fingerprint: String },
}

/// Maps `given` (relative to the root, or absolute inside it) onto the workspace: the path of
/// an existing file with its symlinks resolved (never leaving the root), or, for a file that
/// does not exist yet, its deepest existing folder resolved and the rest appended. The state
/// folder (`.staged`) is refused: it is staged's own, not a workspace file; so is a protected
/// path (`.git/`, a coding agent's control files: [`staged_journal::PROTECTED_PATHS`]), which
/// no tool stages an edit of.
///
/// # Errors
/// [`EditError::Path`] when `given` is empty, outside the root, in the state folder, or
/// protected.
pub(crate) fn resolve_path(workspace: &ConfinedRoot, given: &str) -> Result<RelPath, EditError> {
    if given.trim().is_empty() {
        return Err(EditError::Path("`path` must name a file: it is empty".to_owned()));
    }
    if given.contains('\0') {
        return Err(EditError::Path(format!(
            "`{}` is not a file name: it holds a NUL byte",
            given.escape_debug()
        )));
    }
    let outside = || {
        EditError::Path(format!(
            "Path is outside the workspace: {given} (workspace root: {})",
            workspace.root().display()
        ))
    };
    let lexical = workspace.lexical(given).map_err(|_| outside())?;
    // The deepest existing ancestor decides where the path really is.
    let mut tail = Vec::new();
    let mut cursor = lexical.as_path();
    let base = loop {
        if std::fs::symlink_metadata(cursor).is_ok() {
            break cursor;
        }
        let Some(name) = cursor.file_name() else { return Err(outside()) };
        tail.push(name.to_owned());
        let Some(parent) = cursor.parent() else { return Err(outside()) };
        cursor = parent;
    };
    let canonical = base.canonicalize().map_err(|_| outside())?;
    let rel_base = canonical.strip_prefix(workspace.root()).map_err(|_| outside())?.to_path_buf();
    let mut rel = rel_base;
    for name in tail.iter().rev() {
        rel.push(name);
    }
    let rel = RelPath::new(&rel).map_err(|_| {
        EditError::Path(format!("`{given}` names the workspace root itself, not a file"))
    })?;
    workspace
        .check_model_path(&rel, given, ModelAccess::Any)
        .map_err(|err| EditError::Path(err.to_string()))?;
    workspace.check_writable(&rel, given).map_err(|err| EditError::Path(err.to_string()))?;
    Ok(rel)
}

/// Reads `rel` as text: absent, or its text. A folder, a special file, a binary file or one
/// that is not UTF-8 is an error naming it.
pub(crate) fn read_text(workspace: &ConfinedRoot, rel: &RelPath) -> Result<Found, EditError> {
    let display = rel.display();
    match workspace.fs().symlink_metadata(rel) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Found::Absent),
        Err(err) if err.raw_os_error() == Some(libc::ENOTDIR) => {
            return Err(EditError::Path(format!("{display}: a folder on its path is a file")));
        }
        Err(err) => return Err(EditError::Read(format!("Failed to read {display}: {err}"))),
        Ok(meta) if meta.is_dir() => {
            return Err(EditError::Path(format!("{display} is a directory, not a file")));
        }
        Ok(meta) if !meta.is_file() && !meta.file_type().is_symlink() => {
            return Err(EditError::Path(format!("{display} is not a regular file")));
        }
        Ok(_) => {}
    }
    let bytes = workspace
        .fs()
        .read(rel)
        .map_err(|err| EditError::Read(format!("Failed to read {display}: {err}")))?;
    let fingerprint = staged_journal::fingerprint(&bytes);
    if is_binary(&bytes) {
        return Err(EditError::Binary(display));
    }
    let text = String::from_utf8(bytes).map_err(|_| EditError::Binary(display))?;
    Ok(Found::Text { text, fingerprint })
}

/// Whether `bytes` look binary: a NUL among the first bytes, as git decides.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_LEN)]).is_some()
}

/// The edits that turn `old` into `new`, line by line: the common start and end are kept
/// whole, and the lines between are compared (Myers, with a deadline; past it, the changed
/// lines become one edit).
pub(crate) fn line_edits(old: &str, new: &str) -> Vec<Edit> {
    if old == new {
        return Vec::new();
    }
    // Common prefix and suffix, cut back to whole lines.
    let prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let prefix = old[..prefix].rfind('\n').map_or(0, |i| i + 1);
    let max_suffix = (old.len() - prefix).min(new.len() - prefix);
    let suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    // The suffix starts at a line start: just after a line ending, or at the end.
    let mut at = old.len() - suffix;
    if at < old.len() && at > 0 && old.as_bytes()[at - 1] != b'\n' {
        at = old[at..].find('\n').map_or(old.len(), |i| at + i + 1);
    }
    let suffix = old.len() - at;
    let old_mid = &old[prefix..old.len() - suffix];
    let new_mid = &new[prefix..new.len() - suffix];
    let old_lines: Vec<&str> = old_mid.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new_mid.split_inclusive('\n').collect();
    let deadline = std::time::Instant::now() + LINE_DIFF_DEADLINE;
    let ops =
        capture_diff_slices_deadline(Algorithm::Myers, &old_lines, &new_lines, Some(deadline));
    let mut offsets = Vec::with_capacity(old_lines.len() + 1);
    let mut at = prefix;
    for line in &old_lines {
        offsets.push(at);
        at += line.len();
    }
    offsets.push(at);
    let mut res: Vec<Edit> = Vec::new();
    for op in ops {
        if matches!(op, DiffOp::Equal { .. }) {
            continue;
        }
        let (_, old_range, new_range) = op.as_tag_tuple();
        let start = offsets[old_range.start];
        let before: String = old_lines[old_range.clone()].concat();
        let after: String = new_lines[new_range].concat();
        // Adjacent changes (a delete then an insert) become one edit.
        if let Some(last) = res.last_mut()
            && last.start + last.before.len() == start
        {
            last.before.push_str(&before);
            last.after.push_str(&after);
            continue;
        }
        res.push(Edit { start, before, after });
    }
    res
}

/// `n word(s)`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}

/// How many lines `text` has (a final line ending does not start another).
pub(crate) fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.matches('\n').count() + usize::from(!text.ends_with('\n'))
    }
}

/// Lines added and removed by `edits` on a text.
pub(crate) fn line_counts(edits: &[Edit]) -> (usize, usize) {
    edits.iter().fold((0, 0), |(added, removed), e| {
        (added + line_count(&e.after), removed + line_count(&e.before))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(old: &str, edits: &[Edit]) -> String {
        staged_journal::replay(old, edits).unwrap()
    }

    #[test]
    fn line_edits_rebuild_the_new_text() {
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("a\nb\nc\n", "a\nb\nc\nd\n"),
            ("a\nb\nc", "a\nb\nc\n"),
            ("", "x\n"),
            ("x\n", ""),
            ("one\ntwo\nthree\nfour\n", "zero\none\nthree\nfour!\n"),
            ("same\nsame\n", "same\n"),
            ("a\r\nb\r\n", "a\r\nc\r\n"),
        ];
        for (old, new) in cases {
            let edits = line_edits(old, new);
            assert_eq!(apply(old, &edits), new, "{old:?} -> {new:?}: {edits:?}");
            for edit in &edits {
                assert!(edit.start == 0 || old.as_bytes()[edit.start - 1] == b'\n', "{edit:?}");
            }
        }
        assert!(line_edits("same", "same").is_empty());
    }

    #[test]
    fn counts_lines() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\nb"), 2);
    }
}
