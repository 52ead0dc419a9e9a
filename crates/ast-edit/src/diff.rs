//! Unified diffs of a preview, in the form `git apply` accepts (`a/` and `b/` prefixes), built
//! from the edits' byte ranges in time linear in the file and the edits.
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

use std::{collections::HashSet, fmt::Write as _};

use similar::{Algorithm, DiffOp, capture_diff_slices};

use crate::{AstEditError, Edit, EditPreview, edits::LineIndex};

/// Unchanged lines shown before and after each change.
const CONTEXT: usize = 3;

/// A block whose lines (before and after) add up to more than this is not diffed inside: its
/// changed lines are listed as removed and added, so that one huge rewrite cannot make the diff
/// quadratic.
const MAX_BLOCK_DIFF_LINES: usize = 2_000;

/// The marker after a line that has no line ending.
const NO_NEWLINE: &str = "\n\\ No newline at end of file\n";

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
    let text = index.text();
    check(text, edits)?;
    let n_lines = index.count();
    let line_end = |offset: usize| (index.line_of(offset) + 1).min(n_lines);
    let mut hunks = Hunks::new(index, path);
    let mut updated = String::new();
    let mut blocks = Vec::new();
    let mut next = 0;
    while next < edits.len() {
        // A run of blocks with no unchanged line between them, and the text they become.
        let run_first = index.line_of(edits[next].byte_start);
        let mut run_end = run_first;
        updated.clear();
        blocks.clear();
        while next < edits.len() && index.line_of(edits[next].byte_start) <= run_end {
            // A block: the edits whose lines overlap, and the whole lines they touch. A block
            // that reaches the end of the text takes every edit left: they can only be
            // insertions at its very end, on the line its last line may have lost its ending to.
            let first = index.line_of(edits[next].byte_start);
            let mut end = line_end(edits[next].byte_end);
            let mut last = next + 1;
            while last < edits.len()
                && (index.line_of(edits[last].byte_start) < end || end == n_lines)
            {
                end = end.max(line_end(edits[last].byte_end));
                last += 1;
            }
            let new_start = updated.len();
            let mut cursor = index.start_of(first);
            for edit in &edits[next..last] {
                updated.push_str(&text[cursor..edit.byte_start]);
                updated.push_str(&edit.after);
                cursor = edit.byte_end;
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
    }
    hunks.equal(n_lines - hunks.old_pos);
    Ok(hunks.finish())
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

/// Refuses edits that do not fit `text`, split a character, or are out of order.
fn check(text: &str, edits: &[Edit]) -> Result<(), AstEditError> {
    let mut prev_end = 0;
    for edit in edits {
        if edit.byte_start < prev_end
            || edit.byte_start > edit.byte_end
            || edit.byte_end > text.len()
            || !text.is_char_boundary(edit.byte_start)
            || !text.is_char_boundary(edit.byte_end)
        {
            return Err(AstEditError::EditOutOfBounds);
        }
        prev_end = edit.byte_end;
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
    /// Where `out`'s `---`/`+++` headers start: a diff with no hunk has only its first line.
    file_header_end: usize,
    /// The next line of the text read, and of the text after the edits, not yet fed.
    old_pos: usize,
    new_pos: usize,
    /// Unchanged lines fed since the last change (they end at `old_pos`).
    unchanged: usize,
    hunk: Option<Hunk>,
    /// The added lines of the current change: they follow its removed lines.
    added: String,
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

/// `prefix` and `path` as a diff header names them, quoted as git quotes an unusual path (its
/// `core.quotePath = false` form): a path with a control character, a `"` or a backslash (or
/// a Unicode direction override, which would reorder the line on screen) is written in double
/// quotes, with C escapes (`\n`, `\t`, `\"`, ...) and octal escapes for the rest, as
/// `git apply` reads it; any other path is written as it is. So a file name with a newline
/// cannot forge a header line.
///
/// ```
/// use staged_ast_edit::quote_diff_path;
/// assert_eq!(quote_diff_path("a/", "src/x.ts"), "a/src/x.ts");
/// assert_eq!(quote_diff_path("b/", "evil\n+++ b/x"), "\"b/evil\\n+++ b/x\"");
/// assert_eq!(quote_diff_path("a/", "caf\u{e9}\t\x1b.ts"), "\"a/caf\u{e9}\\t\\033.ts\"");
/// ```
pub fn quote_diff_path(prefix: &str, path: &str) -> String {
    let unusual = |c: char| {
        c.is_control()
            || c == '"'
            || c == '\\'
            || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    let text = format!("{prefix}{path}");
    if !text.chars().any(unusual) {
        return text;
    }
    let mut res = String::with_capacity(text.len() + 8);
    res.push('"');
    for c in text.chars() {
        match c {
            '\x07' => res.push_str("\\a"),
            '\x08' => res.push_str("\\b"),
            '\t' => res.push_str("\\t"),
            '\n' => res.push_str("\\n"),
            '\x0b' => res.push_str("\\v"),
            '\x0c' => res.push_str("\\f"),
            '\r' => res.push_str("\\r"),
            '"' => res.push_str("\\\""),
            '\\' => res.push_str("\\\\"),
            c if unusual(c) => {
                let mut buf = [0u8; 4];
                for byte in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(res, "\\{byte:03o}");
                }
            }
            c => res.push(c),
        }
    }
    res.push('"');
    res
}

impl<'i, 'a> Hunks<'i, 'a> {
    fn new(index: &'i LineIndex<'a>, path: &str) -> Hunks<'i, 'a> {
        let (old, new) = (quote_diff_path("a/", path), quote_diff_path("b/", path));
        let mut out = format!("diff --git {old} {new}\n");
        let file_header_end = out.len();
        let _ = write!(out, "--- {old}\n+++ {new}\n");
        Hunks {
            index,
            out,
            file_header_end,
            old_pos: 0,
            new_pos: 0,
            unchanged: 0,
            hunk: None,
            added: String::new(),
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
        self.hunk.insert(hunk)
    }

    /// A hunk that starts with the `context` unchanged lines before the current position.
    fn open(&mut self, context: usize) -> Hunk {
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
            // As before: the `diff --git` line of a touched file whose edits changed nothing.
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
