//! The hunks of a preview's diff, as a person and a model name them: each file's hunks are
//! numbered from 1 in the order its diff lists them (what `staged show` prints), and a file
//! that the preview creates, deletes or moves is one unit that cannot be split.
//!
//! [`diff_files`] reads them from a diff's text; the actions map them onto their edits with
//! [`crate::edit_hunks`], which numbers the hunks of the same diff the same way.

use std::ops::Range;

/// What a file's diff says happens to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffKind {
    /// Its text changes: its hunks can be applied one by one.
    Modify,
    /// It is created.
    Create,
    /// It is deleted.
    Delete,
    /// It moves (and its text may change).
    Rename,
}

impl DiffKind {
    /// Whether a file of this kind can be applied hunk by hunk.
    pub fn splits(self) -> bool {
        self == DiffKind::Modify
    }

    /// What happens to the file, for a sentence: `a new file`, `a deleted file`, `a moved file`.
    pub fn noun(self) -> &'static str {
        match self {
            DiffKind::Modify => "a changed file",
            DiffKind::Create => "a new file",
            DiffKind::Delete => "a deleted file",
            DiffKind::Rename => "a moved file",
        }
    }
}

/// One file's part of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffFile {
    /// Its byte range in the diff, from its `diff --git` line.
    pub span: Range<usize>,
    /// What happens to it.
    pub kind: DiffKind,
    /// Each hunk's byte range in the diff, from its `@@` line, in order: hunk `n` is
    /// `hunks[n - 1]`.
    pub hunks: Vec<Range<usize>>,
}

/// The files of a unified diff in git's form, in order, each with its hunks. A file's part
/// starts at its `diff --git` line (no line inside a hunk starts with `d` or `@`), and a hunk
/// at its `@@ ` line.
pub fn diff_files(diff: &str) -> Vec<DiffFile> {
    let mut res: Vec<DiffFile> = Vec::new();
    let mut offset = 0;
    for line in diff.split_inclusive('\n') {
        let end = offset + line.len();
        if line.starts_with("diff --git ") {
            if let Some(file) = res.last_mut() {
                close_last_hunk(file, offset);
                file.span.end = offset;
            }
            res.push(DiffFile { span: offset..end, kind: DiffKind::Modify, hunks: Vec::new() });
        } else if let Some(file) = res.last_mut() {
            if line.starts_with("@@ ") {
                close_last_hunk(file, offset);
                file.hunks.push(offset..end);
            } else if file.hunks.is_empty() {
                // The extended header lines, before the first hunk.
                if line.starts_with("new file mode ") {
                    file.kind = DiffKind::Create;
                } else if line.starts_with("deleted file mode ") {
                    file.kind = DiffKind::Delete;
                } else if line.starts_with("rename from ") || line.starts_with("rename to ") {
                    file.kind = DiffKind::Rename;
                }
            }
        }
        offset = end;
    }
    if let Some(file) = res.last_mut() {
        close_last_hunk(file, offset);
        file.span.end = offset;
    }
    res
}

fn close_last_hunk(file: &mut DiffFile, at: usize) {
    if let Some(hunk) = file.hunks.last_mut() {
        hunk.end = at;
    }
}

/// Lines added and removed in `diff` (one file's part, or several): the `+` and `-` lines of
/// its hunks.
pub fn diff_line_counts(diff: &str) -> (usize, usize) {
    let mut in_hunk = false;
    let (mut added, mut removed) = (0, 0);
    for line in diff.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            in_hunk = false;
        } else if line.starts_with("@@ ") {
            in_hunk = true;
        } else if in_hunk && line.starts_with('+') {
            added += 1;
        } else if in_hunk && line.starts_with('-') {
            removed += 1;
        }
    }
    (added, removed)
}

/// Hunk numbers (1-based) as a sentence lists them: `2`, `1 and 3`, `1, 2 and 4`; a run of
/// three or more numbers in a row is a range, `2-320000`, `1-3 and 7`, so that the list stays
/// short however many hunks it names.
pub fn hunk_list(numbers: &[usize]) -> String {
    let mut items: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j].checked_add(1) == Some(numbers[j + 1]) {
            j += 1;
        }
        if j - i >= 2 {
            items.push(format!("{}-{}", numbers[i], numbers[j]));
        } else {
            items.extend(numbers[i..=j].iter().map(ToString::to_string));
        }
        i = j + 1;
    }
    match items.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n@@ -9 +9 @@\n--- a/z\n+diff\ndiff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+new file mode 1\ndiff --git a/m b/o\nrename from m\nrename to o\n";

    #[test]
    fn files_and_hunks_are_found_whatever_the_lines_hold() {
        let files = diff_files(DIFF);
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].kind, DiffKind::Modify);
        assert_eq!(files[0].hunks.len(), 2);
        assert_eq!(&DIFF[files[0].hunks[1].clone()], "@@ -9 +9 @@\n--- a/z\n+diff\n");
        assert_eq!(files[1].kind, DiffKind::Create);
        assert_eq!(files[1].hunks.len(), 1);
        assert_eq!(files[2].kind, DiffKind::Rename);
        assert!(files[2].hunks.is_empty());
        assert_eq!(files[2].span.end, DIFF.len());
        assert_eq!(diff_line_counts(&DIFF[files[0].span.clone()]), (2, 2));
    }

    #[test]
    fn hunk_lists_read_as_a_sentence() {
        assert_eq!(hunk_list(&[2]), "2");
        assert_eq!(hunk_list(&[1, 3]), "1 and 3");
        assert_eq!(hunk_list(&[1, 2, 4]), "1, 2 and 4");
        assert_eq!(hunk_list(&[1, 2, 3]), "1-3");
        assert_eq!(hunk_list(&[1, 2, 3, 7]), "1-3 and 7");
        assert_eq!(hunk_list(&[1, 3, 4, 5, 6, 9, 10]), "1, 3-6, 9 and 10");
        let many: Vec<usize> = (2..=320_000).collect();
        assert_eq!(hunk_list(&many), "2-320000");
    }
}
