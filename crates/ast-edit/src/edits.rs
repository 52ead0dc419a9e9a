//! Byte-range edits: normalising (sort, drop byte-identical duplicates, refuse overlaps) and
//! applying them to a file's text.

use serde::{Deserialize, Serialize};
use staged_journal::LineIndex;

use crate::error::AstEditError;

/// One replacement in one file. Byte offsets index the original text; lines and columns are
/// 1-based (columns count characters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    /// First byte replaced.
    pub byte_start: usize,
    /// One past the last byte replaced.
    pub byte_end: usize,
    /// The replaced text.
    pub before: String,
    /// The inserted text.
    pub after: String,
    /// Line of `byte_start`.
    pub start_line: usize,
    /// Column of `byte_start`.
    pub start_column: usize,
    /// Line of `byte_end`.
    pub end_line: usize,
    /// Column of `byte_end`.
    pub end_column: usize,
    /// How many replacements this edit stands for: 1, plus the matches nested inside its
    /// metavariable captures that were rewritten within it.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub replacements: usize,
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

/// Total replacements of `edits` (nested rewrites counted).
pub(crate) fn replacements(edits: &[Edit]) -> usize {
    edits.iter().map(|e| e.replacements).sum()
}

/// Keeps the first edits whose replacements fit in `room`; says whether any was cut.
pub(crate) fn truncate_to_replacements(edits: &mut Vec<Edit>, room: usize) -> bool {
    let mut used = 0usize;
    let keep = edits
        .iter()
        .take_while(|e| {
            used += e.replacements;
            used <= room
        })
        .count();
    let cut = keep < edits.len();
    edits.truncate(keep);
    cut
}

/// `replacement` with every line it ends that holds only spaces and tabs made empty (its line
/// break kept). ast-grep re-indents the lines of a multi-line capture or template, blank ones
/// included, so a blank line would come back as indentation whitespace, which `git diff
/// --check` flags. The first line continues the text before the match, and the last one
/// (no line break in the replacement) goes on with the text after it, so neither is touched.
pub(crate) fn blank_lines_stay_blank(replacement: String) -> String {
    let needs = |line: &str| {
        let line = line.strip_suffix('\r').unwrap_or(line);
        !line.is_empty() && line.bytes().all(|b| b == b' ' || b == b'\t')
    };
    let mut lines = replacement.split_inclusive('\n').skip(1);
    if !lines.any(|l| l.ends_with('\n') && needs(&l[..l.len() - 1])) {
        return replacement;
    }
    let mut res = String::with_capacity(replacement.len());
    for (i, line) in replacement.split_inclusive('\n').enumerate() {
        match line.strip_suffix('\n') {
            Some(body) if i > 0 && needs(body) => {
                if body.ends_with('\r') {
                    res.push('\r');
                }
                res.push('\n');
            }
            _ => res.push_str(line),
        }
    }
    res
}

/// A raw edit before normalisation: a range and its replacement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RawEdit {
    /// First byte replaced.
    pub start: usize,
    /// One past the last byte replaced.
    pub end: usize,
    /// The inserted text.
    pub text: String,
    /// How many replacements it stands for (see [`Edit::replacements`]).
    pub replacements: usize,
}

impl RawEdit {
    /// One replacement of `start..end` with `text`.
    pub fn new(start: usize, end: usize, text: impl Into<String>) -> RawEdit {
        RawEdit { start, end, text: text.into(), replacements: 1 }
    }
}

/// Sorts edits, drops byte-identical duplicates, and returns the index of the first edit that
/// overlaps its predecessor, if any.
///
/// Two edits overlap when one starts before the other ends, or when two different edits
/// start at the same place (their order would be ambiguous).
pub(crate) fn normalize(edits: &mut Vec<RawEdit>) -> Option<usize> {
    edits.sort();
    edits.dedup();
    edits.windows(2).position(|w| w[1].start < w[0].end || w[1].start == w[0].start).map(|i| i + 1)
}

/// Applies normalised edits to `source`.
///
/// # Errors
/// [`AstEditError::Overlap`] when edits overlap, [`AstEditError::EditOutOfBounds`] when a range
/// does not fit `source` or splits a character.
pub fn apply_edits(source: &str, edits: &[RawEdit]) -> Result<String, AstEditError> {
    let mut sorted = edits.to_vec();
    if let Some(idx) = normalize(&mut sorted) {
        return Err(AstEditError::Overlap { location: format!("byte {}", sorted[idx].start) });
    }
    let mut res = String::with_capacity(source.len());
    let mut cursor = 0usize;
    for edit in &sorted {
        if edit.start > edit.end
            || edit.end > source.len()
            || !source.is_char_boundary(edit.start)
            || !source.is_char_boundary(edit.end)
        {
            return Err(AstEditError::EditOutOfBounds);
        }
        res.push_str(&source[cursor..edit.start]);
        res.push_str(&edit.text);
        cursor = edit.end;
    }
    res.push_str(&source[cursor..]);
    Ok(res)
}

/// Lines and columns of increasing byte offsets, counted from the previous offset rather than
/// from the line's start, so that many edits on one long line (a minified file) cost time
/// linear in the line, not quadratic.
#[derive(Debug)]
pub(crate) struct PositionCursor<'i, 'a> {
    index: &'i LineIndex<'a>,
    /// The last offset asked for, its 0-based line, and its 1-based column.
    last: (usize, usize, usize),
}

impl<'i, 'a> PositionCursor<'i, 'a> {
    /// A cursor at the start of the text.
    pub(crate) fn new(index: &'i LineIndex<'a>) -> PositionCursor<'i, 'a> {
        PositionCursor { index, last: (0, 0, 1) }
    }

    /// 1-based line and character column of `offset`; offsets must not decrease between
    /// calls (a smaller one is answered from the line's start).
    pub(crate) fn position(&mut self, offset: usize) -> (usize, usize) {
        let (last_offset, last_line, last_col) = self.last;
        let line = self.index.line_of(offset);
        let (from, col) = if line == last_line && offset >= last_offset {
            (last_offset, last_col)
        } else {
            (self.index.start_of(line), 1)
        };
        let Some(between) = self.index.text().get(from..offset) else {
            // Not a character boundary: answered as `LineIndex::position` does.
            return self.index.position(offset);
        };
        let col = col + between.chars().count();
        self.last = (offset, line, col);
        (line + 1, col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(start: usize, len: usize, text: &str) -> RawEdit {
        RawEdit::new(start, start + len, text)
    }

    #[test]
    fn apply_edits_rejects_overlaps() {
        let err = apply_edits("abcdef", &[raw(1, 3, "x"), raw(2, 1, "y")]);
        assert!(matches!(err, Err(AstEditError::Overlap { .. })));
    }

    #[test]
    fn apply_edits_dedupes_identical_edits() {
        let res = apply_edits("abcdef", &[raw(1, 3, "x"), raw(1, 3, "x")]).ok();
        assert_eq!(res.as_deref(), Some("axef"));
    }

    #[test]
    fn applies_non_overlapping_edits() {
        let src = "const answer = 41;";
        let res = apply_edits(src, &[raw(6, 6, "value"), raw(15, 2, "42")]).ok();
        assert_eq!(res.as_deref(), Some("const value = 42;"));
    }

    #[test]
    fn rejects_out_of_bounds() {
        assert!(matches!(apply_edits("ab", &[raw(1, 5, "x")]), Err(AstEditError::EditOutOfBounds)));
    }

    #[test]
    fn blank_lines_stay_blank_but_first_and_last_lines_are_untouched() {
        let fix = |s: &str| blank_lines_stay_blank(s.to_owned());
        assert_eq!(
            fix("f(async {\n    a();\n    \n    b();\n  })"),
            "f(async {\n    a();\n\n    b();\n  })"
        );
        assert_eq!(fix("x  \n\t\r\nend\n  "), "x  \n\r\nend\n  ");
        assert_eq!(fix("no change\n  y\n"), "no change\n  y\n");
    }
}
