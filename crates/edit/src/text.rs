//! What the three tools share: mapping a path a model or a person gives onto the workspace,
//! reading a file as text (binary files refused), turning two texts into edits, and the
//! wording of previews.

use std::{
    collections::HashMap,
    convert::Infallible,
    io,
    time::{Duration, Instant},
};

use similar::algorithms::{DiffHook, myers};
use staged_fs::RelPath;
use staged_journal::{ConfinedRoot, Edit, ModelAccess};

use crate::{EditError, stage::MAX_PREVIEW_BYTES};

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
/// whole, and the lines between are compared (Myers, with a deadline; past it, the lines
/// left become one edit).
///
/// The edits always rebuild `new` exactly: they are made only from runs of lines the diff
/// found equal in both texts (each run checked, in order, in both), the lines between two
/// runs becoming one edit, so no offset of the diff's is trusted; and the result is replayed
/// against `new` before it is returned. Should that check ever fail, the changed middle
/// becomes one edit (checked in turn), and failing that, the whole text: a preview is
/// always exactly the asked text.
pub(crate) fn line_edits(old: &str, new: &str) -> Vec<Edit> {
    if old == new {
        return Vec::new();
    }
    let (prefix, suffix) = common_ends(old, new);
    let diffed = diff_lines(old, new, prefix, suffix, LINE_DIFF_DEADLINE);
    if rebuilds(old, &diffed, new) {
        return diffed;
    }
    let middle = vec![Edit {
        start: prefix,
        before: old[prefix..old.len() - suffix].to_owned(),
        after: new[prefix..new.len() - suffix].to_owned(),
    }];
    if rebuilds(old, &middle, new) {
        return middle;
    }
    vec![Edit { start: 0, before: old.to_owned(), after: new.to_owned() }]
}

/// How many bytes `old` and `new` share at their start and at their end, each cut back to
/// whole lines of both texts (the end starts just after a line ending of each, or at their
/// ends), never overlapping: so the lines between are all the lines that differ, and a
/// minimal diff of them is a minimal diff of the texts.
fn common_ends(old: &str, new: &str) -> (usize, usize) {
    let prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let prefix = old[..prefix].rfind('\n').map_or(0, |i| i + 1);
    let max_suffix = (old.len() - prefix).min(new.len() - prefix);
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let line_start = |text: &str, at: usize| at == 0 || text.as_bytes()[at - 1] == b'\n';
    // Moving the start of the suffix to the next line start of `old` moves it in `new` by as
    // much, over the same bytes: after one move both are just after the same line ending.
    while suffix > 0
        && !(line_start(old, old.len() - suffix) && line_start(new, new.len() - suffix))
    {
        let at = old.len() - suffix;
        suffix = old[at..].find('\n').map_or(0, |i| suffix - i - 1);
    }
    (prefix, suffix)
}

/// The edits between `old` and `new`, whose first `prefix` and last `suffix` bytes are
/// equal: their middles' lines compared by Myers' diff (past `deadline`, what is left is
/// one change), and the lines between two runs of equal lines made one edit.
fn diff_lines(old: &str, new: &str, prefix: usize, suffix: usize, deadline: Duration) -> Vec<Edit> {
    let old_lines: Vec<&str> = old[prefix..old.len() - suffix].split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new[prefix..new.len() - suffix].split_inclusive('\n').collect();
    // Lines as numbers: the diff compares numbers, and equal numbers are equal lines.
    let mut ids: HashMap<&str, u32> = HashMap::with_capacity(old_lines.len());
    let old_ids = intern(&mut ids, &old_lines);
    let old_distinct = ids.len();
    let new_ids = intern(&mut ids, &new_lines);
    drop(ids);
    let runs = equal_runs(&old_ids, &new_ids, old_distinct, deadline);
    let mut res = Vec::new();
    // Where the next edit starts: a line of each text, and its byte offset in `old`.
    let (mut o, mut n, mut at) = (0, 0, prefix);
    let ends = std::iter::once((old_lines.len(), new_lines.len(), 0));
    for (old_index, new_index, len) in runs.into_iter().chain(ends) {
        // A run that goes back, or whose lines differ, is not used: its lines are changed.
        // (The end, last, always fits.)
        let fits = old_index >= o
            && new_index >= n
            && old_index + len <= old_lines.len()
            && new_index + len <= new_lines.len()
            && old_lines[old_index..old_index + len] == new_lines[new_index..new_index + len];
        if !fits {
            continue;
        }
        if old_index > o || new_index > n {
            let before: String = old_lines[o..old_index].concat();
            let after: String = new_lines[n..new_index].concat();
            let start = at;
            at += before.len();
            res.push(Edit { start, before, after });
        }
        at += old_lines[old_index..old_index + len].iter().map(|line| line.len()).sum::<usize>();
        (o, n) = (old_index + len, new_index + len);
    }
    res
}

/// The runs of equal lines, `(old index, new index, length)`, of a minimal diff of `old` and
/// `new` (line numbers; those below `old_distinct` are the lines `old` holds) by Myers' diff,
/// past `deadline` what is left one change. A line found on one side only can never be
/// equal to a line of the other, so the diff runs on the other lines alone and stays
/// minimal: a text whose every line changed costs no diff at all (Myers' takes time in the
/// product of the lines and the changes: a 1 MB file of 16,384 lines, every one changed,
/// took 0.7 s), and one whose lines mostly changed costs as little as its common lines.
fn equal_runs(
    old: &[u32],
    new: &[u32],
    old_distinct: usize,
    deadline: Duration,
) -> Vec<(usize, usize, usize)> {
    let mut in_new = vec![false; old_distinct];
    for &id in new {
        if let Some(seen) = in_new.get_mut(id as usize) {
            *seen = true;
        }
    }
    let kept = |ids: &[u32], keep: &dyn Fn(u32) -> bool| -> (Vec<u32>, Vec<usize>) {
        ids.iter().enumerate().filter(|(_, id)| keep(**id)).map(|(i, id)| (*id, i)).unzip()
    };
    let (old_kept, old_at) = kept(old, &|id| in_new.get(id as usize).copied().unwrap_or(false));
    let (new_kept, new_at) = kept(new, &|id| (id as usize) < old_distinct);
    if old_kept.is_empty() || new_kept.is_empty() {
        return Vec::new();
    }
    let mut runs = EqualRuns::default();
    let Ok(()) = myers::diff_deadline(
        &mut runs,
        &old_kept,
        0..old_kept.len(),
        &new_kept,
        0..new_kept.len(),
        Some(Instant::now() + deadline),
    );
    // Back to the texts' line numbers: a run of the kept lines is split where a line left out
    // stood between two of its lines.
    let mut res: Vec<(usize, usize, usize)> = Vec::with_capacity(runs.0.len());
    for (o, n, len) in runs.0 {
        for k in 0..len {
            let (Some(&at_old), Some(&at_new)) = (old_at.get(o + k), new_at.get(n + k)) else {
                continue;
            };
            match res.last_mut() {
                Some((ro, rn, rlen)) if *ro + *rlen == at_old && *rn + *rlen == at_new => {
                    *rlen += 1;
                }
                _ => res.push((at_old, at_new, 1)),
            }
        }
    }
    res
}

/// The number of each of `lines` in `ids` (a new line gets the next number).
fn intern<'a>(ids: &mut HashMap<&'a str, u32>, lines: &[&'a str]) -> Vec<u32> {
    lines
        .iter()
        .map(|line| {
            let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
            *ids.entry(line).or_insert(next)
        })
        .collect()
}

/// A [`DiffHook`] that keeps only the runs of equal lines, `(old index, new index, length)`.
#[derive(Default)]
struct EqualRuns(Vec<(usize, usize, usize)>);

impl DiffHook for EqualRuns {
    type Error = Infallible;

    fn equal(&mut self, old_index: usize, new_index: usize, len: usize) -> Result<(), Infallible> {
        self.0.push((old_index, new_index, len));
        Ok(())
    }
}

/// Whether `edits` (as [`staged_journal::replay`] takes them: sorted, each where its
/// `before` is in `old`) turn `old` into exactly `new`, without building that text.
pub(crate) fn rebuilds(old: &str, edits: &[Edit], new: &str) -> bool {
    let mut cursor = 0;
    let mut made: usize = 0;
    // `new[made..]` starts with `part`: then it is made.
    let mut take = |part: &str| -> bool {
        let Some(end) = made.checked_add(part.len()) else { return false };
        if new.get(made..end) != Some(part) {
            return false;
        }
        made = end;
        true
    };
    for edit in edits {
        let Some(end) = edit.start.checked_add(edit.before.len()) else { return false };
        if edit.start < cursor || old.get(edit.start..end) != Some(edit.before.as_str()) {
            return false;
        }
        let Some(kept) = old.get(cursor..edit.start) else { return false };
        if !take(kept) || !take(&edit.after) {
            return false;
        }
        cursor = end;
    }
    let Some(rest) = old.get(cursor..) else { return false };
    take(rest) && made == new.len()
}

/// Refuses, before it is diffed, a new text of `path` that no preview could hold: longer than
/// [`MAX_PREVIEW_BYTES`], or longer or shorter than `old` by more (its edits would add or
/// remove at least that much). Then a line diff of the two takes memory in proportion.
pub(crate) fn check_new_text(path: &str, old: &str, new: &str) -> Result<(), EditError> {
    if new.len() > MAX_PREVIEW_BYTES {
        return Err(EditError::TooLarge(format!("the new text of {path} is {}", size(new.len()))));
    }
    let grows = new.len().abs_diff(old.len());
    if grows > MAX_PREVIEW_BYTES {
        return Err(EditError::TooLarge(format!(
            "the new text of {path} is {} and the file {}, so its edits would change at least {}",
            size(new.len()),
            size(old.len()),
            size(grows)
        )));
    }
    Ok(())
}

/// `len` bytes, for a person: `3 MiB`, `12 KiB`.
pub(crate) fn size(len: usize) -> String {
    if len >= 1 << 20 {
        format!("{} MiB", len >> 20)
    } else {
        format!("{} KiB", len.div_ceil(1 << 10))
    }
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
    fn lines_of_one_side_only_are_left_out_of_the_diff_and_the_runs_are_the_texts_own() {
        // Lines as numbers: old a x b c d, new a b y c d e (x only in old; y, e only in new).
        let (a, x, b, c, d, y, e) = (0, 1, 2, 3, 4, 5, 6);
        let runs = equal_runs(&[a, x, b, c, d], &[a, b, y, c, d, e], 5, Duration::from_secs(5));
        assert_eq!(runs, [(0, 0, 1), (2, 1, 1), (3, 3, 2)]);
        // No line in common: no diff, no run.
        assert!(equal_runs(&[0, 0, 0], &[1, 1], 1, Duration::from_secs(5)).is_empty());
        let (old, new) = ("same\n".repeat(1000), "other\n".repeat(900));
        let edits = line_edits(&old, &new);
        assert_eq!(edits.len(), 1, "{:?}", edits.len());
        assert_eq!(apply(&old, &edits), new);
        // The diff of the texts stays minimal: the common lines are kept.
        let old = "a\nx\nb\nc\nd\n";
        let new = "a\nb\ny\nc\nd\ne\n";
        let edits = line_edits(old, new);
        assert_eq!(apply(old, &edits), new);
        let kept: usize = edits.iter().map(|e| e.before.matches('\n').count()).sum();
        assert_eq!(kept, 1, "only x goes: {edits:?}");
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
            // Issue 32, finding 5: the compacted diff put the first `}` in the wrong place.
            (
                "    x();\n}\n}\n    x();\n// c\n",
                "}\nfn f() {\n}\n    return 1;\n}\n    x();\n    return 1;\n",
            ),
            ("a\nb\n", "ab\n"),
            ("x\ny", "x\nzy"),
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
    fn the_edits_of_issue_32_rebuild_the_asked_text_and_stay_line_based() {
        let old = "    x();\n}\n}\n    x();\n// c\n";
        let new = "}\nfn f() {\n}\n    return 1;\n}\n    x();\n    return 1;\n";
        // Without the check that follows it, the diff alone rebuilds the text.
        let (prefix, suffix) = common_ends(old, new);
        let diffed = diff_lines(old, new, prefix, suffix, LINE_DIFF_DEADLINE);
        assert_eq!(apply(old, &diffed), new, "{diffed:?}");
        // A minimal diff: 3 old lines kept of 5, 7 new lines, so 2 removed and 4 added.
        assert_eq!(line_counts(&diffed), (4, 2), "{diffed:?}");
        assert_eq!(line_edits(old, new), diffed);
    }

    #[test]
    fn past_the_deadline_the_changed_lines_are_one_edit() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nD\n";
        let edits = diff_lines(old, new, 2, 0, Duration::ZERO);
        assert_eq!(apply(old, &edits), new, "{edits:?}");
        assert!(rebuilds(old, &edits, new));
    }

    #[test]
    fn rebuilds_is_replay_compared() {
        let old = "a\nb\nc\n";
        let edit = |start: usize, before: &str, after: &str| Edit {
            start,
            before: before.to_owned(),
            after: after.to_owned(),
        };
        assert!(rebuilds(old, &[edit(2, "b\n", "B\n")], "a\nB\nc\n"));
        assert!(rebuilds(old, &[], old));
        // The wrong place, a `before` that is not there, overlapping or unsorted edits, a
        // text too short or too long.
        assert!(!rebuilds(old, &[edit(0, "", "}\n")], "a\n}\nb\nc\n"));
        assert!(!rebuilds(old, &[edit(2, "x\n", "B\n")], "a\nB\nc\n"));
        assert!(!rebuilds(old, &[edit(2, "b\n", ""), edit(2, "b\n", "")], "a\nc\n"));
        assert!(!rebuilds(old, &[edit(4, "c\n", ""), edit(2, "b\n", "")], "a\n"));
        assert!(!rebuilds(old, &[edit(2, "b\n", "B\n")], "a\nB\n"));
        assert!(!rebuilds(old, &[edit(2, "b\n", "B\n")], "a\nB\nc\nd"));
        assert!(!rebuilds(old, &[edit(usize::MAX, "b", "")], old));
        // Inside a character: replay refuses it, and so does the check.
        assert!(rebuilds("é\n", &[edit(0, "é", "é")], "é\n"));
        assert!(!rebuilds("é\n", &[edit(1, "", "")], "é\n"));
    }

    #[test]
    fn a_new_text_no_preview_could_hold_is_refused_before_it_is_diffed() {
        let big = "x\n".repeat(17 << 20);
        assert!(check_new_text("a.txt", "", "x\n").is_ok());
        assert!(check_new_text("a.txt", &big[..MAX_PREVIEW_BYTES], "").is_ok());
        assert_eq!(
            check_new_text("a.txt", "", &big).unwrap_err().to_string(),
            "Refusing to stage this change: the new text of a.txt is 34 MiB, and a preview holds at most 32 MiB of changes (they are kept, shown and sent whole). Make the change in smaller parts."
        );
        assert_eq!(
            check_new_text("a.txt", &big, "x\n").unwrap_err().to_string(),
            "Refusing to stage this change: the new text of a.txt is 1 KiB and the file 34 MiB, so its edits would change at least 33 MiB, and a preview holds at most 32 MiB of changes (they are kept, shown and sent whole). Make the change in smaller parts."
        );
    }

    #[test]
    fn counts_lines() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\nb"), 2);
    }
}
