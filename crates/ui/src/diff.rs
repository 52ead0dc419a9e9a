//! A unified diff as the page draws it: files, each with its hunks numbered as
//! `staged show --hunks` and `staged resolve apply --only FILE:N` number them (the hunks of
//! `staged_journal::diff_files`, counted from 1 within a changed file; a new, deleted or
//! moved file applies whole), and each line with its old and new line numbers and its text
//! highlighted ([`crate::highlight`]).

use serde::Serialize;
use staged_journal::{DiffKind, diff_files};

use crate::{
    highlight::{Highlighter, Language},
    syntax::{self, Grammar},
};

/// One file of a diff.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileView {
    /// Its path (for a move, where it goes).
    pub(crate) path: String,
    /// For a move, where it was.
    pub(crate) from: Option<String>,
    /// `modify`, `create`, `delete` or `rename`.
    pub(crate) kind: &'static str,
    /// Whether its hunks can be applied one by one (a changed file of a preview that applies
    /// in part).
    pub(crate) by_hunk: bool,
    /// Its header lines (`diff --git`, `---`, `+++`, modes), as text.
    pub(crate) header: Vec<String>,
    /// Its hunks, in order.
    pub(crate) hunks: Vec<HunkView>,
}

/// One hunk.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HunkView {
    /// Its number within the file, from 1.
    pub(crate) number: usize,
    /// How many hunks the file has.
    pub(crate) of: usize,
    /// Its `@@` line as the CLI numbers it (`@@ -3,7 +3,7 @@ [hunk 2 of 3]`).
    pub(crate) header: String,
    /// Its lines.
    pub(crate) lines: Vec<LineView>,
}

/// One line of a hunk.
#[derive(Debug, Serialize)]
pub(crate) struct LineView {
    /// ` `, `+`, `-` or `\` (`\ No newline at end of file`).
    pub(crate) t: char,
    /// Its line number in the old text, for context and removed lines.
    pub(crate) old: Option<u64>,
    /// Its line number in the new text, for context and added lines.
    pub(crate) new: Option<u64>,
    /// Its text without the marker, as HTML (escaped, with highlight spans).
    pub(crate) html: String,
}

fn kind_name(kind: DiffKind) -> &'static str {
    match kind {
        DiffKind::Modify => "modify",
        DiffKind::Create => "create",
        DiffKind::Delete => "delete",
        DiffKind::Rename => "rename",
    }
}

/// The note the CLI puts after hunk `idx` (from 0) of `n` of a file of `kind`, or `None` for
/// the second and later hunks of a file that applies whole.
fn hunk_note(kind: DiffKind, idx: usize, n: usize) -> Option<String> {
    match kind {
        DiffKind::Modify => Some(format!("[hunk {} of {n}]", idx + 1)),
        _ if idx > 0 => None,
        DiffKind::Create => Some("[new file, applied whole]".to_owned()),
        DiffKind::Delete => Some("[deleted file, applied whole]".to_owned()),
        DiffKind::Rename => Some("[moved file, applied whole]".to_owned()),
    }
}

/// The files of `diff`. `names` are the files' paths and move sources in the diff's order
/// (a preview's files); when there are not as many as the diff has files, each file's name
/// is read from its header. `partial`: whether the preview applies in part. `highlight`:
/// whether lines are highlighted, or only escaped (the page's first, fast draw).
pub(crate) fn files(
    diff: &str,
    names: &[(String, Option<String>)],
    partial: bool,
    highlight: bool,
) -> Vec<FileView> {
    files_noted(diff, names, partial, highlight, &|_, kind, idx, n| hunk_note(kind, idx, n))
}

/// [`files`] with each hunk's note from `note(file index, kind, hunk index, hunk count)`
/// (a session's hunks are noted as `staged session show` notes them).
pub(crate) fn files_noted(
    diff: &str,
    names: &[(String, Option<String>)],
    partial: bool,
    highlight: bool,
    note: &dyn Fn(usize, DiffKind, usize, usize) -> Option<String>,
) -> Vec<FileView> {
    let sections = diff_files(diff);
    let named = names.len() == sections.len();
    let mut res = Vec::with_capacity(sections.len());
    for (idx, section) in sections.iter().enumerate() {
        let first_hunk = section.hunks.first().map_or(section.span.end, |h| h.start);
        let header_text = &diff[section.span.start..first_hunk];
        let header: Vec<String> = header_text.lines().map(str::to_owned).collect();
        let (path, from) =
            if named { names[idx].clone() } else { header_names(header_text, section.kind) };
        let (lang, grammar) = if highlight {
            (Language::of_path(&path), Grammar::of_path(&path))
        } else {
            (None, None)
        };
        let n = section.hunks.len();
        let hunks = section
            .hunks
            .iter()
            .enumerate()
            .map(|(i, range)| {
                let text = &diff[range.clone()];
                let (first, body) = text.split_once('\n').unwrap_or((text, ""));
                let header = match note(idx, section.kind, i, n) {
                    Some(note) => format!("{first} {note}"),
                    None => first.to_owned(),
                };
                HunkView { number: i + 1, of: n, header, lines: lines(first, body, lang, grammar) }
            })
            .collect();
        res.push(FileView {
            path,
            from,
            kind: kind_name(section.kind),
            by_hunk: partial && section.kind == DiffKind::Modify,
            header,
            hunks,
        });
    }
    res
}

/// A file's path and move source from its header lines: `+++ b/PATH` (or `--- a/PATH` for a
/// deleted file), `rename from`/`rename to`, else the `diff --git a/X b/Y` line.
fn header_names(header: &str, kind: DiffKind) -> (String, Option<String>) {
    let mut plus = None;
    let mut minus = None;
    let mut rename_from = None;
    let mut rename_to = None;
    let mut git = None;
    for line in header.lines() {
        if let Some(rest) = line.strip_prefix("+++ ") {
            plus = rest.strip_prefix("b/").map(str::to_owned);
        } else if let Some(rest) = line.strip_prefix("--- ") {
            minus = rest.strip_prefix("a/").map(str::to_owned);
        } else if let Some(rest) = line.strip_prefix("rename from ") {
            rename_from = Some(rest.to_owned());
        } else if let Some(rest) = line.strip_prefix("rename to ") {
            rename_to = Some(rest.to_owned());
        } else if let Some(rest) = line.strip_prefix("diff --git ") {
            git = rest.rsplit_once(" b/").map(|(_, b)| b.to_owned());
        }
    }
    let path = rename_to
        .or(plus)
        .or_else(|| if kind == DiffKind::Delete { minus.clone() } else { None })
        .or(git)
        .or(minus.clone())
        .unwrap_or_default();
    let from = match kind {
        DiffKind::Rename => rename_from.or(minus),
        _ => None,
    };
    (path, from)
}

/// The lines of a hunk whose `@@` line is `header`, numbered from its ranges, highlighted
/// by `grammar`'s syntax tree of each side, else by the line lexer of `lang`.
fn lines(
    header: &str,
    body: &str,
    lang: Option<Language>,
    grammar: Option<Grammar>,
) -> Vec<LineView> {
    let body: Vec<&str> = body.lines().collect();
    let marker = |line: &str| line.chars().next().unwrap_or(' ');
    let rest = |line: &str| -> usize { marker(line).len_utf8().min(line.len()) };
    // Each side's lines, in order: the old side is context and removed lines, the new side
    // context and added lines.
    let old_side: Vec<&str> =
        body.iter().filter(|l| matches!(marker(l), ' ' | '-')).map(|l| &l[rest(l)..]).collect();
    let new_side: Vec<&str> =
        body.iter().filter(|l| !matches!(marker(l), '-' | '\\')).map(|l| &l[rest(l)..]).collect();
    let trees = grammar
        .and_then(|g| Some((syntax::highlight(g, &old_side)?, syntax::highlight(g, &new_side)?)));
    let (old_html, new_html) = match trees {
        Some(both) => both,
        None => {
            let mut old_hl = Highlighter::new(lang);
            let mut new_hl = Highlighter::new(lang);
            (
                old_side.iter().map(|l| old_hl.line(l)).collect(),
                new_side.iter().map(|l| new_hl.line(l)).collect(),
            )
        }
    };
    let (mut old, mut new) = starts(header);
    let (mut old_at, mut new_at) = (0, 0);
    let take = |side: &[String], at: &mut usize| {
        let html = side.get(*at).cloned().unwrap_or_default();
        *at += 1;
        html
    };
    let mut res = Vec::with_capacity(body.len());
    for line in body {
        let view = match marker(line) {
            '+' => {
                let html = take(&new_html, &mut new_at);
                let v = LineView { t: '+', old: None, new: Some(new), html };
                new += 1;
                v
            }
            '-' => {
                let html = take(&old_html, &mut old_at);
                let v = LineView { t: '-', old: Some(old), new: None, html };
                old += 1;
                v
            }
            '\\' => {
                LineView { t: '\\', old: None, new: None, html: crate::highlight::escape(line) }
            }
            _ => {
                let html = take(&new_html, &mut new_at);
                old_at += 1;
                let v = LineView { t: ' ', old: Some(old), new: Some(new), html };
                old += 1;
                new += 1;
                v
            }
        };
        res.push(view);
    }
    res
}

/// The first old and new line numbers of a hunk, from `@@ -A[,B] +C[,D] @@`.
fn starts(header: &str) -> (u64, u64) {
    let mut old = 1;
    let mut new = 1;
    for word in header.split_whitespace().skip(1).take(2) {
        let number = |w: &str| w.split(',').next().and_then(|n| n.parse::<u64>().ok());
        if let Some(rest) = word.strip_prefix('-') {
            old = number(rest).unwrap_or(1).max(1);
        } else if let Some(rest) = word.strip_prefix('+') {
            new = number(rest).unwrap_or(1).max(1);
        }
    }
    (old, new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_are_numbered_as_the_cli_numbers_them() {
        let diff = "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n@@ -1,2 +1,2 @@\n-let x = 1;\n+let x = 2;\n ctx\n@@ -9 +9 @@\n-p\n+q\ndiff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+n\n";
        let files = files(diff, &[], true, true);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, "a.rs");
        assert!(files[0].by_hunk);
        assert_eq!(files[0].hunks[1].header, "@@ -9 +9 @@ [hunk 2 of 2]");
        let first = &files[0].hunks[0].lines;
        assert_eq!((first[0].t, first[0].old, first[0].new), ('-', Some(1), None));
        assert_eq!((first[1].t, first[1].old, first[1].new), ('+', None, Some(1)));
        assert_eq!((first[2].t, first[2].old, first[2].new), (' ', Some(2), Some(2)));
        assert!(first[1].html.contains("<span class=\"k\">let</span>"), "{}", first[1].html);
        assert_eq!(files[1].path, "n");
        assert_eq!(files[1].kind, "create");
        assert!(!files[1].by_hunk);
        assert_eq!(files[1].hunks[0].header, "@@ -0,0 +1 @@ [new file, applied whole]");
        assert!(!super::files(diff, &[], false, true)[0].by_hunk);
        let plain = super::files(diff, &[], true, false);
        assert_eq!(plain[0].hunks[0].lines[1].html, "let x = 2;");
    }

    #[test]
    fn a_deleted_or_moved_file_is_named_from_its_header() {
        let diff = "diff --git a/old b/old\ndeleted file mode 100644\n--- a/old\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\ndiff --git a/p b/q\nrename from p\nrename to q\n";
        let files = files(diff, &[], true, true);
        assert_eq!(files[0].path, "old");
        assert_eq!(files[1].path, "q");
        assert_eq!(files[1].from.as_deref(), Some("p"));
    }
}
