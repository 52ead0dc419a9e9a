//! Unified diffs in the form `git apply` accepts (`a/` and `b/` prefixes, and the `new file
//! mode`, `deleted file mode` and `rename from`/`rename to` headers of git's extended diffs),
//! built from the edits' byte ranges in time linear in the file and the edits.
//!
//! Diffing the whole file before and after (Myers) cost time quadratic in the changed lines of a
//! big file, though the edits already say where every change is. So the edits that share a line
//! are grouped into a *block*: the whole lines they touch, before and after. A block is compared
//! line by line on its own (a Myers diff of its few lines, so that a multi-line rewrite that
//! keeps some lines shows only the lines it changes), and the lines between blocks are context.
//! Hunks get 3 lines of context and are cut and merged exactly as `similar`'s unified diff (which
//! this replaced) cuts and merges them, and every change between two context lines lists its
//! removed lines first: the output is the same as before wherever the changed lines were not
//! ambiguous (a test compares the two on random files).
//!
//! A line ends after `\n`, as in git: a `\r` is part of its line, so CRLF files keep their line
//! endings byte for byte, and a last line without a line ending gets the
//! `\ No newline at end of file` marker.
//!
//! Paths are written as git writes them: a path with a control character, a `"`, a `\\` or a
//! byte outside ASCII is quoted, C-style (`"a/t\tb"`), and a `---`/`+++` name with a space ends
//! with a tab.

use std::{collections::HashSet, fmt::Write as _, ops::Range as Span};

use similar::{Algorithm, DiffOp, capture_diff_slices};

use crate::{JournalError, LineIndex};

/// One replacement in a text: a byte range of the text read, and what takes its place.
pub trait Splice {
    /// The bytes replaced.
    fn span(&self) -> Span<usize>;
    /// The text put in their place.
    fn replacement(&self) -> &str;
}

/// What a file's diff says happened to the file, for its header lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffHeader<'a> {
    /// The file at `path` changed.
    Modify {
        /// The path, `/`-separated, relative to the root.
        path: &'a str,
    },
    /// The file at `path` is new, with these Unix mode bits.
    Create {
        /// The path.
        path: &'a str,
        /// Its mode bits.
        mode: u32,
    },
    /// The file at `path`, with these Unix mode bits, is deleted.
    Delete {
        /// The path.
        path: &'a str,
        /// Its mode bits.
        mode: u32,
    },
    /// The file at `from` moved to `to` (and its text may have changed).
    Rename {
        /// Where it was.
        from: &'a str,
        /// Where it is now.
        to: &'a str,
    },
    /// The file at `from`, now at `to` (the same path when it did not move), changed its
    /// mode bits (and its text may have changed): `old mode`/`new mode`.
    Chmod {
        /// Where it was.
        from: &'a str,
        /// Where it is now.
        to: &'a str,
        /// Its mode bits before.
        old: u32,
        /// Its mode bits after.
        new: u32,
    },
}

impl DiffHeader<'_> {
    /// The `diff --git` line and the extended header lines before `---`.
    fn git_lines(&self) -> String {
        let (a, b) = self.names();
        let mut res = format!("diff --git {} {}\n", quote("a/", a), quote("b/", b));
        match self {
            DiffHeader::Modify { .. } => {}
            DiffHeader::Create { mode, .. } => {
                let _ = writeln!(res, "new file mode {}", git_mode(*mode));
            }
            DiffHeader::Delete { mode, .. } => {
                let _ = writeln!(res, "deleted file mode {}", git_mode(*mode));
            }
            DiffHeader::Rename { from, to } => {
                let _ = writeln!(res, "rename from {}", quote("", from));
                let _ = writeln!(res, "rename to {}", quote("", to));
            }
            DiffHeader::Chmod { from, to, old, new } => {
                let _ = writeln!(res, "old mode {}", git_mode(*old));
                let _ = writeln!(res, "new mode {}", git_mode(*new));
                if from != to {
                    let _ = writeln!(res, "rename from {}", quote("", from));
                    let _ = writeln!(res, "rename to {}", quote("", to));
                }
            }
        }
        res
    }

    /// The `---` and `+++` lines.
    fn file_lines(&self) -> String {
        let side = |prefix: &str, path: Option<&str>| match path {
            None => "/dev/null".to_owned(),
            Some(path) => {
                let name = quote(prefix, path);
                if path.contains(' ') { format!("{name}\t") } else { name }
            }
        };
        let (old, new) = match self {
            DiffHeader::Modify { path } => (Some(*path), Some(*path)),
            DiffHeader::Create { path, .. } => (None, Some(*path)),
            DiffHeader::Delete { path, .. } => (Some(*path), None),
            DiffHeader::Rename { from, to } | DiffHeader::Chmod { from, to, .. } => {
                (Some(*from), Some(*to))
            }
        };
        format!("--- {}\n+++ {}\n", side("a/", old), side("b/", new))
    }

    fn names(&self) -> (&str, &str) {
        match self {
            DiffHeader::Modify { path }
            | DiffHeader::Create { path, .. }
            | DiffHeader::Delete { path, .. } => (path, path),
            DiffHeader::Rename { from, to } | DiffHeader::Chmod { from, to, .. } => (from, to),
        }
    }
}

/// git's file mode: `100755` when anyone may execute the file, else `100644`.
fn git_mode(mode: u32) -> &'static str {
    if mode & 0o111 != 0 { "100755" } else { "100644" }
}

/// `prefix` and `path` as git writes a path: as is, or quoted C-style when it holds a control
/// character, `"`, `\\`, DEL or a byte outside ASCII.
pub fn quote(prefix: &str, path: &str) -> String {
    let plain = |b: u8| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\';
    if path.bytes().all(plain) && prefix.bytes().all(plain) {
        return format!("{prefix}{path}");
    }
    let mut res = String::from("\"");
    for b in prefix.bytes().chain(path.bytes()) {
        match b {
            b'\x07' => res.push_str("\\a"),
            b'\x08' => res.push_str("\\b"),
            b'\t' => res.push_str("\\t"),
            b'\n' => res.push_str("\\n"),
            b'\x0b' => res.push_str("\\v"),
            b'\x0c' => res.push_str("\\f"),
            b'\r' => res.push_str("\\r"),
            b'"' => res.push_str("\\\""),
            b'\\' => res.push_str("\\\\"),
            b if plain(b) => res.push(char::from(b)),
            b => {
                let _ = write!(res, "\\{b:03o}");
            }
        }
    }
    res.push('"');
    res
}

/// Unchanged lines shown before and after each change.
const CONTEXT: usize = 3;

/// A block whose lines (before and after) add up to more than this is not diffed inside: its
/// changed lines are listed as removed and added, so that one huge rewrite cannot make the diff
/// quadratic.
const MAX_BLOCK_DIFF_LINES: usize = 2_000;

/// The marker after a line that has no line ending.
const NO_NEWLINE: &str = "\n\\ No newline at end of file\n";

/// The unified diff of one file, with a `diff --git` header, from the text read and its edits
/// (sorted, not overlapping).
///
/// # Errors
/// [`JournalError::EditOutOfBounds`] when an edit does not fit `original`, splits a character,
/// or starts before the previous one ends.
pub fn file_diff<E: Splice>(
    path: &str,
    original: &str,
    edits: &[E],
) -> Result<String, JournalError> {
    file_diff_indexed(&DiffHeader::Modify { path }, &LineIndex::new(original), edits)
}

/// [`file_diff`] on an already indexed text, under any header: a new file's diff is the
/// empty text with one insertion, a deleted file's the whole text removed.
///
/// # Errors
/// As [`file_diff`].
pub fn file_diff_indexed<E: Splice>(
    header: &DiffHeader<'_>,
    index: &LineIndex<'_>,
    edits: &[E],
) -> Result<String, JournalError> {
    diff_mapped(header, index, edits, None)
}

/// Which hunks of a file's diff each edit shows in: what lets a preview be applied hunk by
/// hunk (see [`edit_hunks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditHunks {
    /// How many hunks the file's diff has.
    pub hunks: usize,
    /// For each edit, in order: the first and last hunk (0-based) its change shows in, or
    /// `None` for an edit whose lines end as they were (it changes no line on its own, and
    /// applying it with any hunk changes nothing more).
    pub of_edit: Vec<Option<(usize, usize)>>,
}

impl EditHunks {
    /// The hunks that go together, as runs of hunk indexes: one edit whose change shows in
    /// several hunks (a rewrite that keeps many lines in its middle) binds them, since the
    /// edit is written whole or not at all.
    pub fn groups(&self) -> Vec<std::ops::RangeInclusive<usize>> {
        // How far each hunk is bound forward by an edit that starts in it; then one sweep
        // merges every chain of bound hunks (linear: a search per edit was quadratic).
        let mut reach: Vec<usize> = (0..self.hunks).collect();
        for &(first, last) in self.of_edit.iter().flatten() {
            if first < last && last < self.hunks {
                reach[first] = reach[first].max(last);
            }
        }
        let mut res = Vec::new();
        let mut h = 0;
        while h < self.hunks {
            let start = h;
            let mut end = reach[h];
            while h < end {
                h += 1;
                end = end.max(reach[h]);
            }
            res.push(start..=end);
            h += 1;
        }
        res
    }
}

/// The hunks each of `edits` (sorted, not overlapping) shows in, in the diff
/// [`file_diff_indexed`] writes of them: hunk numbers are those of that diff.
///
/// # Errors
/// As [`file_diff`].
pub fn edit_hunks<E: Splice>(
    index: &LineIndex<'_>,
    edits: &[E],
) -> Result<EditHunks, JournalError> {
    let mut of_edit = Vec::with_capacity(edits.len());
    let diff = diff_mapped(&DiffHeader::Modify { path: "" }, index, edits, Some(&mut of_edit))?;
    let hunks = diff.split_inclusive('\n').filter(|line| line.starts_with("@@ ")).count();
    Ok(EditHunks { hunks, of_edit })
}

/// The diff of `edits`; with `map`, each edit's hunks are pushed on it.
fn diff_mapped<E: Splice>(
    header: &DiffHeader<'_>,
    index: &LineIndex<'_>,
    edits: &[E],
    mut map: Option<&mut Vec<Option<(usize, usize)>>>,
) -> Result<String, JournalError> {
    let text = index.text();
    check(text, edits)?;
    let n_lines = index.count();
    let line_end = |offset: usize| (index.line_of(offset) + 1).min(n_lines);
    let mut hunks = Hunks::new(index, header);
    let mut updated = String::new();
    let mut blocks = Vec::new();
    let mut next = 0;
    while next < edits.len() {
        // A run of blocks with no unchanged line between them, and the text they become.
        let run_edits = next;
        hunks.touched = None;
        let run_first = index.line_of(edits[next].span().start);
        let mut run_end = run_first;
        updated.clear();
        blocks.clear();
        while next < edits.len() && index.line_of(edits[next].span().start) <= run_end {
            // A block: the edits whose lines overlap, and the whole lines they touch. A block
            // that reaches the end of the text takes every edit left: they can only be
            // insertions at its very end, on the line its last line may have lost its ending to.
            let first = index.line_of(edits[next].span().start);
            let mut end = line_end(edits[next].span().end);
            let mut last = next + 1;
            while last < edits.len()
                && (index.line_of(edits[last].span().start) < end || end == n_lines)
            {
                end = end.max(line_end(edits[last].span().end));
                last += 1;
            }
            let new_start = updated.len();
            let mut cursor = index.start_of(first);
            for edit in &edits[next..last] {
                let span = edit.span();
                updated.push_str(&text[cursor..span.start]);
                updated.push_str(edit.replacement());
                cursor = span.end;
            }
            updated.push_str(&text[cursor..index.start_of(end).max(cursor)]);
            blocks.push((first, end, new_start..updated.len()));
            run_end = end;
            next = last;
        }
        hunks.equal(run_first - hunks.old_pos);
        // A run is diffed as one block, so that a line may stay though the edits around it
        // moved it from one block to the next; a long run block by block, in linear time.
        let new_lines = updated.split_inclusive('\n').count();
        if blocks.len() == 1 || run_end - run_first + new_lines <= MAX_BLOCK_DIFF_LINES {
            hunks.block(run_first, run_end, &updated);
        } else {
            for (first, end, range) in &blocks {
                hunks.block(*first, *end, &updated[range.clone()]);
            }
        }
        // A run's edits go together: its lines are diffed as one.
        if let Some(map) = map.as_deref_mut() {
            map.extend(std::iter::repeat_n(hunks.touched, next - run_edits));
        }
    }
    hunks.equal(n_lines - hunks.old_pos);
    Ok(hunks.finish())
}

/// Refuses edits that do not fit `text`, split a character, or are out of order.
fn check<E: Splice>(text: &str, edits: &[E]) -> Result<(), JournalError> {
    let mut prev_end = 0;
    for edit in edits {
        let span = edit.span();
        if span.start < prev_end
            || span.start > span.end
            || span.end > text.len()
            || !text.is_char_boundary(span.start)
            || !text.is_char_boundary(span.end)
        {
            return Err(JournalError::EditOutOfBounds);
        }
        prev_end = span.end;
    }
    Ok(())
}

/// The diff of one file, written as the changes are fed in order: unchanged runs, removed
/// lines and added lines. Hunks are written in place (a hunk's header is inserted before its
/// lines once it is closed), so a big diff is never copied.
struct Hunks<'i, 'a> {
    index: &'i LineIndex<'a>,
    /// The file's headers and the hunks so far.
    out: String,
    /// Where `out`'s `---`/`+++` headers start: a diff with no hunk has only the lines before.
    file_header_end: usize,
    /// The next line of the text read, and of the text after the edits, not yet fed.
    old_pos: usize,
    new_pos: usize,
    /// Unchanged lines fed since the last change (they end at `old_pos`).
    unchanged: usize,
    hunk: Option<Hunk>,
    /// The added lines of the current change: they follow its removed lines.
    added: String,
    /// How many hunks were opened so far.
    opened: usize,
    /// The first and last hunk (0-based) changed since this was last reset.
    touched: Option<(usize, usize)>,
}

/// The hunk being written.
struct Hunk {
    /// Where its header goes in the output.
    header_at: usize,
    old_start: usize,
    new_start: usize,
    old_len: usize,
    new_len: usize,
}

impl<'i, 'a> Hunks<'i, 'a> {
    fn new(index: &'i LineIndex<'a>, header: &DiffHeader<'_>) -> Hunks<'i, 'a> {
        let mut out = header.git_lines();
        let file_header_end = out.len();
        out.push_str(&header.file_lines());
        Hunks {
            index,
            out,
            file_header_end,
            old_pos: 0,
            new_pos: 0,
            unchanged: 0,
            hunk: None,
            added: String::new(),
            opened: 0,
            touched: None,
        }
    }

    /// `n` unchanged lines.
    fn equal(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        self.out.push_str(&self.added);
        self.added.clear();
        self.unchanged += n;
        self.old_pos += n;
        self.new_pos += n;
    }

    /// Line `idx` of the text read is removed.
    fn delete(&mut self, idx: usize) {
        self.change().old_len += 1;
        push_line(&mut self.out, '-', self.index.full_line(idx));
        self.old_pos += 1;
    }

    /// `line` is added.
    fn insert(&mut self, line: &str) {
        self.change().new_len += 1;
        push_line(&mut self.added, '+', line);
        self.new_pos += 1;
    }

    /// Lines `first..end` of the text read become `updated` (whole lines).
    ///
    /// The lines the block keeps at its start and end are context. When the lines between
    /// share none, they are all removed and added, as a line diff would list them; otherwise a
    /// Myers diff of the block finds the ones that stay, unless the block is too long for it.
    fn block(&mut self, first: usize, end: usize, updated: &str) {
        let old: Vec<&str> = (first..end).map(|idx| self.index.full_line(idx)).collect();
        let new: Vec<&str> = updated.split_inclusive('\n').collect();
        let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let suffix = old[prefix..]
            .iter()
            .rev()
            .zip(new[prefix..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let old_core = &old[prefix..old.len() - suffix];
        let new_core = &new[prefix..new.len() - suffix];
        let disjoint = old_core.is_empty()
            || new_core.is_empty()
            // The prefix ends where the first lines differ.
            || (old_core.len() == 1 && new_core.len() == 1)
            || {
                let removed: HashSet<&str> = old_core.iter().copied().collect();
                !new_core.iter().any(|line| removed.contains(line))
            };
        if !disjoint && old.len() + new.len() <= MAX_BLOCK_DIFF_LINES {
            for op in capture_diff_slices(Algorithm::Myers, &old, &new) {
                self.op(first, &new, op);
            }
            return;
        }
        self.equal(prefix);
        if !disjoint && old_core.len() + new_core.len() <= MAX_BLOCK_DIFF_LINES {
            for op in capture_diff_slices(Algorithm::Myers, old_core, new_core) {
                self.op(first + prefix, new_core, op);
            }
        } else {
            for idx in 0..old_core.len() {
                self.delete(first + prefix + idx);
            }
            for line in new_core {
                self.insert(line);
            }
        }
        self.equal(suffix);
    }

    /// One op of a block's line diff; `first` is the block's first line in the text read,
    /// `new` its lines after the edits.
    fn op(&mut self, first: usize, new: &[&str], op: DiffOp) {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal => self.equal(old_range.len()),
            similar::DiffTag::Delete | similar::DiffTag::Insert | similar::DiffTag::Replace => {
                for idx in old_range {
                    self.delete(first + idx);
                }
                for line in new.get(new_range).unwrap_or_default() {
                    self.insert(line);
                }
            }
        }
    }

    /// The hunk a change goes into: the unchanged lines before it become context, or end the
    /// current hunk and start the next one when there are more than twice the context.
    fn change(&mut self) -> &mut Hunk {
        let unchanged = std::mem::take(&mut self.unchanged);
        let first_unchanged = self.old_pos - unchanged;
        let hunk = match self.hunk.take() {
            Some(mut hunk) if unchanged <= 2 * CONTEXT => {
                self.context(&mut hunk, first_unchanged..self.old_pos);
                hunk
            }
            Some(mut hunk) => {
                self.context(&mut hunk, first_unchanged..first_unchanged + CONTEXT);
                self.close(&hunk);
                self.open(CONTEXT)
            }
            None => self.open(unchanged.min(CONTEXT)),
        };
        let current = self.opened - 1;
        self.touched = Some(match self.touched {
            Some((first, _)) => (first, current),
            None => (current, current),
        });
        self.hunk.insert(hunk)
    }

    /// A hunk that starts with the `context` unchanged lines before the current position.
    fn open(&mut self, context: usize) -> Hunk {
        self.opened += 1;
        let mut hunk = Hunk {
            header_at: self.out.len(),
            old_start: self.old_pos - context,
            new_start: self.new_pos - context,
            old_len: 0,
            new_len: 0,
        };
        self.context(&mut hunk, self.old_pos - context..self.old_pos);
        hunk
    }

    /// Unchanged lines `lines` of the text read, as context.
    fn context(&mut self, hunk: &mut Hunk, lines: std::ops::Range<usize>) {
        for idx in lines {
            push_line(&mut self.out, ' ', self.index.full_line(idx));
            hunk.old_len += 1;
            hunk.new_len += 1;
        }
    }

    /// Puts the `@@ -a,b +c,d @@` header before the lines of a finished hunk.
    fn close(&mut self, hunk: &Hunk) {
        let header = format!(
            "@@ -{} +{} @@\n",
            Range(hunk.old_start, hunk.old_len),
            Range(hunk.new_start, hunk.new_len)
        );
        self.out.insert_str(hunk.header_at, &header);
    }

    /// The file's diff, once every line was fed.
    fn finish(mut self) -> String {
        match self.hunk.take() {
            Some(mut hunk) => {
                self.out.push_str(&self.added);
                let first_unchanged = self.old_pos - self.unchanged;
                let context = self.unchanged.min(CONTEXT);
                self.context(&mut hunk, first_unchanged..first_unchanged + context);
                self.close(&hunk);
            }
            // The `diff --git` line (and the extended headers) of a file whose text did not
            // change: a touched file whose edits changed nothing, an empty new or deleted
            // file, or a move alone.
            None => self.out.truncate(self.file_header_end),
        }
        self.out
    }
}

/// One diff line: its tag, the line as is, and the marker if it has no line ending.
fn push_line(out: &mut String, tag: char, line: &str) {
    out.push(tag);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str(NO_NEWLINE);
    }
}

/// A hunk's line range as unified diffs write it: `start,len`, 1-based; `start` alone for one
/// line; and for no line, the line before (`0,0` at the top).
struct Range(usize, usize);

impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            0 => write!(f, "{},0", self.0),
            1 => write!(f, "{}", self.0 + 1),
            len => write!(f, "{},{len}", self.0 + 1),
        }
    }
}

#[cfg(test)]
mod group_tests {
    use super::EditHunks;

    #[test]
    fn groups_merge_every_chain_of_bound_hunks() {
        let map = EditHunks {
            hunks: 8,
            of_edit: vec![
                Some((0, 2)),
                Some((1, 1)),
                None,
                Some((4, 5)),
                Some((5, 6)),
                Some((7, 9)),
            ],
        };
        assert_eq!(map.groups(), [0..=2, 3..=3, 4..=6, 7..=7]);
        let many = EditHunks { hunks: 300_000, of_edit: vec![Some((0, 1)); 300_000] };
        assert_eq!(many.groups().len(), 299_999);
    }
}
