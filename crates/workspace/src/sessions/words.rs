//! How a revert and a keep put what they did into words: the files and folders an answer and
//! a log label name (the first ten of each, the rest counted), the notice a session's model is
//! told, and the hints that follow a refusal or a partial revert.

use std::collections::HashMap;

use staged_journal::{FolderChange, FolderOp, diff_files};
use staged_session::{FileKind, Hunk, Pick, RevertError, SessionFile};

use super::{Loaded, plural};

/// How to revert the rest of `picked` hunks when one of them was changed since: ` `--except
/// a.txt:2` reverts the rest.` Empty for another refusal, or when that hunk was all.
pub(super) fn the_rest(err: &RevertError, picked: usize) -> String {
    match err {
        RevertError::ChangedSince { path, number, .. } if picked > 1 => {
            format!(" `--except {path}:{number}` reverts the rest.")
        }
        _ => String::new(),
    }
}

/// What a revert of some of a file's hunks says of the others: hunks are numbered as the net
/// change shows them now, so a file that keeps some has them numbered anew, and a person
/// picking by the numbers seen before the revert would pick others. Empty when no file keeps
/// any.
pub(super) fn renumbered(loaded: &Loaded, picks: &[Option<Pick>]) -> String {
    let files: Vec<String> = loaded
        .files
        .iter()
        .zip(picks)
        .filter(|(file, pick)| {
            matches!(pick, Some(Pick::Hunks(numbers)) if numbers.len() < file.diff.hunks.len())
        })
        .map(|(file, _)| file.path.clone())
        .collect();
    if files.is_empty() {
        return String::new();
    }
    format!(
        " The hunks left in {} are numbered anew: `staged session show {}` shows them.",
        named(&files, "file"),
        loaded.name
    )
}

/// The files and folders a revert takes back, as its answer and label name them: the first
/// [`NAMED_FILES`] files and the first [`NAMED_FILES`] folders, the rest counted.
pub(super) fn described_revert(
    loaded: &Loaded,
    picks: &[Option<Pick>],
    folders: &[FolderChange],
) -> String {
    let folders: Vec<String> = folders
        .iter()
        .map(|f| match f.op {
            FolderOp::Made => format!("{}/ (folder deleted by the session)", f.path),
            FolderOp::Removed => format!("{}/ (folder made by the session)", f.path),
        })
        .collect();
    [named(&described_picks(loaded, picks), "file"), named(&folders, "folder")]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each picked file as a person reads it: `src/a.ts (hunks 1, 3)`, `new.txt (new file)`.
pub(super) fn described_picks(loaded: &Loaded, picks: &[Option<Pick>]) -> Vec<String> {
    loaded
        .files
        .iter()
        .zip(picks)
        .filter_map(|(file, pick)| Some(described_pick(file, pick.as_ref()?)))
        .collect()
}

/// One picked file as a person reads it (see [`described_picks`]).
pub(super) fn described_pick(file: &SessionFile, pick: &Pick) -> String {
    match (pick, &file.kind) {
        (Pick::Whole, FileKind::Changed) => file.path.clone(),
        (Pick::Whole, kind) => format!(
            "{} ({} file)",
            file.path,
            match kind {
                FileKind::Created => "new",
                FileKind::Deleted => "deleted",
                _ => "moved",
            }
        ),
        (Pick::Hunks(numbers), _) => format!(
            "{} (hunk{} {})",
            file.path,
            if numbers.len() == 1 { "" } else { "s" },
            numbers.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The files picked whole that have no hunk (one the session created or deleted empty, or
/// only moved or changed the mode of), as [`described_picks`] names them: they have no lines
/// to count or to name, so answers count them as files and notices name them.
pub(super) fn bare_picks(loaded: &Loaded, picks: &[Option<Pick>]) -> Vec<String> {
    loaded
        .files
        .iter()
        .zip(picks)
        .filter(|(file, pick)| matches!(pick, Some(Pick::Whole)) && file.diff.hunks.is_empty())
        .map(|(file, _)| described_pick(file, &Pick::Whole))
        .collect()
}

/// At most this many files (and as many folders) are named in a revert's answer and label
/// and in a notice, the rest counted: a whole revert of a session of 1,500 files answered in one line
/// of 21 KB, and handed its model 40 KB of names.
pub(super) const NAMED_FILES: usize = 10;

/// The first [`NAMED_FILES`] of `described`, the rest counted as `what`s: `a.txt, b.txt and
/// 3 more files`.
pub(super) fn named(described: &[String], what: &str) -> String {
    let more = described.len().saturating_sub(NAMED_FILES);
    let mut text = described[..described.len() - more].join(", ");
    if more > 0 {
        text.push_str(&format!(" and {}", plural(more, &format!("more {what}"))));
    }
    text
}

/// What the session's model is told: the files (the first [`NAMED_FILES`]), the hunks'
/// lines (as the session left them), then `bare` (files without hunks, as named), and the
/// person's reason.
pub(super) fn notice_text(
    what: &str,
    hunks: &[(&SessionFile, &Hunk)],
    bare: &[String],
    reason: &str,
) -> String {
    let mut by_file: Vec<(String, Vec<String>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (file, hunk) in hunks {
        let lines = hunk_lines(file, hunk.number);
        match index.get(file.path.as_str()) {
            Some(&i) => by_file[i].1.extend(lines),
            None => {
                index.insert(&file.path, by_file.len());
                by_file.push((file.path.clone(), lines.into_iter().collect()));
            }
        }
    }
    let parts: Vec<String> = by_file
        .into_iter()
        .map(
            |(path, lines)| {
                if lines.is_empty() { path } else { format!("{path} ({})", lines.join(", ")) }
            },
        )
        .chain(bare.iter().cloned())
        .collect();
    let mut text = format!("A person {what} your change to {}", named(&parts, "file"));
    if reason.is_empty() {
        text.push('.');
    } else {
        text.push_str(": ");
        text.push_str(reason);
        if !reason.ends_with(['.', '!', '?']) {
            text.push('.');
        }
    }
    text
}

/// `lines 12-18` for hunk `number` of `file`: the lines the session's change holds (its `+`
/// lines; for a deletion, where the lines were), without the context around them.
pub(super) fn hunk_lines(file: &SessionFile, number: usize) -> Option<String> {
    let diff = &file.diff.diff;
    let section = diff_files(diff).into_iter().next()?;
    let range = section.hunks.get(number.checked_sub(1)?)?.clone();
    let mut body = diff[range].lines();
    let header = body.next()?;
    let deleted = file.kind == FileKind::Deleted;
    let side = if deleted { '-' } else { '+' };
    let spec = header.split_whitespace().find(|w| w.starts_with(side))?.trim_start_matches(side);
    let mut line: u64 = spec.split(',').next()?.parse().ok()?;
    let (mut first, mut last, mut removed_at) = (None, None, None);
    for text in body {
        match text.chars().next() {
            Some(c) if c == side => {
                first.get_or_insert(line);
                last = Some(line);
                line += 1;
            }
            Some('+' | '-') => {
                removed_at.get_or_insert(line);
            }
            Some(' ') => line += 1,
            _ => {}
        }
    }
    Some(match (first, last, removed_at) {
        (Some(a), Some(b), _) if a == b => format!("line {a}"),
        (Some(a), Some(b), _) => format!("lines {a}-{b}"),
        (_, _, Some(at)) => format!("at line {at}"),
        _ => return None,
    })
}
