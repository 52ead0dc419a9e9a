//! Picking part of a preview on the command line: `--only` and `--except` take files,
//! folders, globs and `FILE:HUNKS` (hunk numbers as `staged show` prints them, `2`, `1,3`,
//! `2-4`), intersected with the preview's files, and become the `extra.files` and
//! `extra.hunks` of a partial apply. Also the hunk numbers `staged show` and `staged review`
//! put on a preview's diff.
//!
//! Every mistake is an input error, found before anything is resolved: a pattern that matches
//! none of the preview's files, a hunk the file does not have, a hunk of a file that applies
//! whole.

use std::collections::BTreeSet;

use anyhow::bail;
use serde_json::Value;
use staged_core::{ActionError, PendingEntry};
use staged_journal::{
    Choice, DiffKind, FILES_EXTRA_KEY, HUNKS_EXTRA_KEY, PartFile, Selection, diff_files,
};
use staged_protocol::JsonObject;

/// How many of the preview's files an error lists.
const FILES_LISTED: usize = 10;

/// The preview's files as a partial apply names them: path, move source, kind, hunk count.
pub(crate) fn preview_parts(entry: &PendingEntry) -> Vec<PartFile> {
    staged_journal::preview_parts(entry)
}

/// One `--only` or `--except` argument.
struct Pattern<'a> {
    /// As typed, for messages.
    typed: &'a str,
    /// The files it matches, by index.
    files: Vec<usize>,
    /// The hunks it names (1-based), for `FILE:HUNKS`.
    hunks: Option<Vec<u64>>,
}

/// The `extra` members (`files`, `hunks`) that apply what `only` keeps and `except` leaves
/// out of `files` (the head's), or `None` when that is the whole preview. `only` and `except`
/// are relative to the workspace root; `typed_*` are the same, as typed.
///
/// # Errors
/// An input error: a pattern that matches none of the files, a bad hunk list, hunks of a
/// folder or glob, or a selection the preview refuses (a hunk it does not have).
pub(crate) fn extra_of(
    files: &[PartFile],
    only: &[String],
    typed_only: &[String],
    except: &[String],
    typed_except: &[String],
    id: &str,
) -> anyhow::Result<Option<JsonObject>> {
    let keep = keep_of(files, only, typed_only, except, typed_except, &Source::preview(id))?;
    if keep.iter().all(Option::is_none) {
        bail!("--except leaves nothing of the preview to apply; to drop it all, discard it");
    }
    extra_of_kept(files, &keep)
}

/// What a selection picks from, as its messages name it: a pending preview (`staged resolve
/// --only`) or a session's change (`staged session keep|revert --only`).
pub(crate) struct Source<'a> {
    /// Its name: the preview's id, `session S3`.
    name: &'a str,
    /// The command that lists its files.
    show: String,
    /// What a refused selection leaves as it was, as the end of a sentence.
    untouched: &'static str,
}

impl<'a> Source<'a> {
    /// The pending preview `id`.
    pub(crate) fn preview(id: &'a str) -> Self {
        Self { name: id, show: format!("staged show {id}"), untouched: "nothing was applied" }
    }

    /// The change `name` reverts or keeps: a session's (`S3`, shown by `staged session show
    /// S3`) or part of one log entry's (`log entry 14`, shown by `staged log show 14`).
    pub(crate) fn change(name: &'a str) -> Self {
        let show = match name.strip_prefix("log entry ") {
            Some(number) => format!("staged log show {number}"),
            None => format!("staged session show {name}"),
        };
        Self { name, show, untouched: "nothing was written" }
    }

    /// A refusal of the preview's own checks, reworded for a session's change.
    fn refusal(&self, err: ActionError) -> anyhow::Error {
        let text = match err {
            ActionError::Tool(err) => err.message().to_owned(),
            other => other.to_string(),
        };
        if self.untouched == "nothing was applied" {
            return anyhow::anyhow!("{text}");
        }
        let text = text
            .replace("as `staged show` prints them", &format!("as `{}` prints them", self.show))
            .replace("Nothing was applied; the preview is still pending.", "Nothing was written.");
        anyhow::anyhow!("{text}")
    }
}

/// What `only` and `except` pick of each of `files`: `None` nothing, `Some(None)` the whole
/// file, `Some(Some(hunks))` those hunks (1-based).
///
/// # Errors
/// As [`extra_of`].
pub(crate) fn keep_of(
    files: &[PartFile],
    only: &[String],
    typed_only: &[String],
    except: &[String],
    typed_except: &[String],
    source: &Source<'_>,
) -> anyhow::Result<Vec<Option<Option<BTreeSet<u64>>>>> {
    let only: Vec<Pattern<'_>> = only
        .iter()
        .zip(typed_only)
        .map(|(p, typed)| pattern(files, p, typed, "--only", source))
        .collect::<anyhow::Result<_>>()?;
    let except: Vec<Pattern<'_>> = except
        .iter()
        .zip(typed_except)
        .map(|(p, typed)| pattern(files, p, typed, "--except", source))
        .collect::<anyhow::Result<_>>()?;
    // Each file: what --only keeps of it (all when --only is absent), less what --except
    // takes away. `None`: the whole file; `Some(set)`: those hunks.
    let mut keep: Vec<Option<Option<BTreeSet<u64>>>> =
        vec![if only.is_empty() { Some(None) } else { None }; files.len()];
    for p in &only {
        for &idx in &p.files {
            let path = &files[idx].path;
            keep[idx] = match (keep[idx].take(), &p.hunks) {
                // Paths, folders and globs add up, as they do everywhere else.
                (None | Some(None), None) => Some(None),
                (Some(Some(_)), None) | (Some(None), Some(_)) => {
                    bail!(
                        "`{path}` is named whole and by hunk: name it once; {}",
                        source.untouched
                    );
                }
                (Some(Some(mut set)), Some(hunks)) => {
                    for &hunk in hunks {
                        if !set.insert(hunk) {
                            bail!("{}", named_twice(hunk, path, source.untouched));
                        }
                    }
                    Some(Some(set))
                }
                (None, Some(hunks)) => Some(Some(hunks.iter().copied().collect())),
            };
        }
    }
    for p in &except {
        for &idx in &p.files {
            let Some(hunks) = &p.hunks else {
                keep[idx] = None;
                continue;
            };
            let file = &files[idx];
            check_hunks(file, hunks, source)?;
            let Some(count) = file.hunks else {
                bail!(
                    "--except {}: the preview does not say how many hunks `{}` has; name the hunks to apply with --only instead",
                    p.typed,
                    file.path
                );
            };
            let mut set: BTreeSet<u64> = match keep[idx].take() {
                None => continue,
                Some(None) => (1..=count as u64).collect(),
                Some(Some(set)) => set,
            };
            for hunk in hunks {
                set.remove(hunk);
            }
            keep[idx] = (!set.is_empty()).then_some(Some(set));
        }
    }
    Ok(keep)
}

/// The `extra` of a partial apply that writes `keep` of `files` (see [`keep_of`]).
fn extra_of_kept(
    files: &[PartFile],
    keep: &[Option<Option<BTreeSet<u64>>>],
) -> anyhow::Result<Option<JsonObject>> {
    let mut whole = Vec::new();
    let mut hunks = Vec::new();
    for (file, kept) in files.iter().zip(keep) {
        match kept {
            None => {}
            Some(None) => whole.push(file.path.clone()),
            Some(Some(set)) => {
                hunks.push((file.path.clone(), set.iter().copied().collect::<Vec<u64>>()));
            }
        }
    }
    let selection = Selection {
        files: (!whole.is_empty()).then_some(whole.clone()),
        hunks: (!hunks.is_empty()).then_some(hunks.clone()),
    };
    // The preview's own checks, before anything is resolved: a hunk it does not have, a hunk
    // of a new, deleted or moved file.
    let choices = selection.resolve(files).map_err(refusal)?;
    if choices.iter().all(|c| *c == Choice::Whole) {
        return Ok(None);
    }
    let mut extra = JsonObject::new();
    if !whole.is_empty() {
        extra.insert(FILES_EXTRA_KEY.to_owned(), whole.into());
    }
    if !hunks.is_empty() {
        let map: serde_json::Map<String, Value> =
            hunks.into_iter().map(|(path, numbers)| (path, numbers.into())).collect();
        extra.insert(HUNKS_EXTRA_KEY.to_owned(), Value::Object(map));
    }
    Ok(Some(extra))
}

/// The text of a refusal, as an input error.
fn refusal(err: ActionError) -> anyhow::Error {
    match err {
        ActionError::Tool(err) => anyhow::anyhow!("{}", err.message()),
        other => anyhow::anyhow!("{other}"),
    }
}

/// Refuses hunks of a file that applies whole, or that it does not have.
fn check_hunks(file: &PartFile, hunks: &[u64], source: &Source<'_>) -> anyhow::Result<()> {
    let selection = Selection::hunks([(file.path.clone(), hunks.to_vec())]);
    selection.resolve(std::slice::from_ref(file)).map_err(|err| source.refusal(err))?;
    Ok(())
}

/// `rooted` (`typed`, relative to the root) as a pattern over `files`.
fn pattern<'a>(
    files: &[PartFile],
    rooted: &str,
    typed: &'a str,
    flag: &str,
    source: &Source<'_>,
) -> anyhow::Result<Pattern<'a>> {
    let names = |f: &PartFile, p: &str| f.path == p || f.from.as_deref() == Some(p);
    let (path, hunks) = match rooted.rsplit_once(':') {
        Some((path, list)) if !files.iter().any(|f| names(f, rooted)) && is_hunk_list(list) => {
            let bare = path.trim_start_matches("./");
            let count = files.iter().find(|f| names(f, bare)).and_then(|f| f.hunks);
            (path, Some(parse_hunks(list, typed, flag, count, source.untouched)?))
        }
        _ => (rooted, None),
    };
    let path = path.trim_start_matches("./");
    let matched: Vec<usize> = if path == "." || path.is_empty() {
        (0..files.len()).collect()
    } else if path.contains(['*', '?', '[', '{']) {
        let glob = globset::GlobBuilder::new(path)
            .literal_separator(true)
            .build()
            .map_err(|err| anyhow::anyhow!("{flag} {typed}: not a valid glob: {err}"))?
            .compile_matcher();
        (0..files.len())
            .filter(|&i| {
                glob.is_match(&files[i].path)
                    || files[i].from.as_deref().is_some_and(|f| glob.is_match(f))
            })
            .collect()
    } else if let Some(idx) = files.iter().position(|f| names(f, path)) {
        vec![idx]
    } else {
        let folder = format!("{}/", path.trim_end_matches('/'));
        (0..files.len())
            .filter(|&i| {
                files[i].path.starts_with(&folder)
                    || files[i].from.as_deref().is_some_and(|f| f.starts_with(&folder))
            })
            .collect()
    };
    if matched.is_empty() {
        let mut text = no_match(flag, typed, files, source);
        text.push_str(&from_here(rooted, typed, files));
        bail!("{text}");
    }
    if hunks.is_some() && !(matched.len() == 1 && names(&files[matched[0]], path)) {
        bail!(
            "{flag} {typed}: hunk numbers name hunks of one file (`src/a.ts:2,3`), not of a folder or a glob"
        );
    }
    Ok(Pattern { typed, files: matched, hunks })
}

/// The error of a pattern that matches none of `files`: it lists ten of them at most, and
/// says how to see them all.
fn no_match(flag: &str, typed: &str, files: &[PartFile], source: &Source<'_>) -> String {
    let id = source.name;
    let n = files.len();
    let listed: Vec<&str> = files.iter().take(FILES_LISTED).map(|f| f.path.as_str()).collect();
    let mut text = format!(
        "{flag} {typed} matches none of the {n} file{} of {id}: {}",
        if n == 1 { "" } else { "s" },
        listed.join(", ")
    );
    if n > FILES_LISTED {
        text.push_str(&format!(
            ", and {} more (`{}` lists them all)",
            n - FILES_LISTED,
            source.show
        ));
    }
    text.push_str("; ");
    text.push_str(source.untouched);
    text
}

/// When a pattern typed in a folder below the root names, read from the root, one of `files`
/// (a path copied from a diff or a listing, which name paths from the root): how to name it
/// from here. Empty otherwise.
fn from_here(rooted: &str, typed: &str, files: &[PartFile]) -> String {
    let typed = typed.trim_start_matches("./");
    let Some(here) = rooted.strip_suffix(typed).filter(|here| !here.is_empty()) else {
        return String::new();
    };
    let path = typed.rsplit_once(':').filter(|(_, list)| is_hunk_list(list)).map_or(typed, |p| p.0);
    if !files.iter().any(|f| f.path == path) {
        return String::new();
    }
    let up = "../".repeat(here.matches('/').count());
    let from_here = typed.strip_prefix(here).map_or_else(|| format!("{up}{typed}"), str::to_owned);
    format!(" (paths are relative to the current folder, {here}: from here, type `{from_here}`)")
}

/// Whether `text` reads as hunk numbers: `2`, `1,3`, `2-4`.
fn is_hunk_list(text: &str) -> bool {
    !text.is_empty()
        && text.split(',').all(|part| {
            let mut ends = part.splitn(2, '-');
            ends.all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// The refusal of hunk `hunk` of `path` named twice (overlapping lists or ranges).
fn named_twice(hunk: u64, path: &str, untouched: &str) -> String {
    format!("hunk {hunk} of `{path}` is named twice: name each hunk once; {untouched}")
}

/// The hunk numbers of `list` (`1,3`, `2-4`), ranges expanded, each once; `count` is how many
/// hunks the file has, when known.
fn parse_hunks(
    list: &str,
    typed: &str,
    flag: &str,
    count: Option<usize>,
    untouched: &str,
) -> anyhow::Result<Vec<u64>> {
    /// A range wider than this, and than the file's hunks, is a typo, not a preview's hunks.
    const MAX_RANGE: u64 = 100_000;
    let max_range = MAX_RANGE.max(count.map_or(0, |n| n as u64));
    let mut res = Vec::new();
    for part in list.split(',') {
        let number = |n: &str| {
            n.parse::<u64>()
                .map_err(|_| anyhow::anyhow!("{flag} {typed}: `{n}` is not a hunk number"))
        };
        match part.split_once('-') {
            None => res.push(number(part)?),
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if a > b || b - a > max_range {
                    bail!(
                        "{flag} {typed}: `{part}` is not a range of hunk numbers (write it low-high)"
                    );
                }
                res.extend(a..=b);
            }
        }
    }
    let mut seen = BTreeSet::new();
    if let Some(twice) = res.iter().find(|n| !seen.insert(**n)) {
        bail!(
            "{flag} {typed}: {}",
            named_twice(*twice, typed.rsplit_once(':').map_or(typed, |(p, _)| p), untouched)
        );
    }
    Ok(res)
}

/// `diff` with each hunk header of a changed file numbered as a partial apply names it
/// (`@@ -3,7 +3,7 @@ [hunk 2 of 3]`), and the first of a new, deleted or moved file marked as
/// applied whole. Text after a hunk header's closing `@@` is free (git puts a function name
/// there), so the result is still a diff `git apply` takes.
pub(crate) fn number_hunks(diff: &str) -> String {
    let files = diff_files(diff);
    let mut res = String::with_capacity(diff.len() + 32 * files.len());
    let mut cursor = 0;
    for file in &files {
        let n = file.hunks.len();
        for (idx, hunk) in file.hunks.iter().enumerate() {
            let note = match file.kind {
                DiffKind::Modify => format!("[hunk {} of {n}]", idx + 1),
                _ if idx > 0 => continue,
                DiffKind::Create => "[new file, applied whole]".to_owned(),
                DiffKind::Delete => "[deleted file, applied whole]".to_owned(),
                DiffKind::Rename => "[moved file, applied whole]".to_owned(),
            };
            // The header line, less its line ending.
            let header_end = diff[hunk.start..].find('\n').map_or(diff.len(), |i| hunk.start + i);
            res.push_str(&diff[cursor..header_end]);
            res.push(' ');
            res.push_str(&note);
            cursor = header_end;
        }
    }
    res.push_str(&diff[cursor..]);
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_lists_and_ranges() {
        assert!(is_hunk_list("2"));
        assert!(is_hunk_list("1,3-5"));
        assert!(!is_hunk_list("a"));
        assert!(!is_hunk_list("1,"));
        assert!(!is_hunk_list("-2"));
        assert_eq!(
            parse_hunks("1,3-5", "x", "--only", None, "nothing was applied").unwrap(),
            [1, 3, 4, 5]
        );
        assert!(parse_hunks("5-3", "x", "--only", None, "nothing was applied").is_err());
        // A file of more hunks than the cap on a range takes a range of all of them.
        assert!(parse_hunks("1-200001", "x", "--only", None, "nothing was applied").is_err());
        assert_eq!(
            parse_hunks("2-200001", "x", "--only", Some(200_001), "nothing was applied")
                .unwrap()
                .len(),
            200_000
        );
    }

    #[test]
    fn numbered_hunks_keep_the_diff_a_diff() {
        let diff = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n@@ -9 +9 @@\n-p\n+q\ndiff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+n\n";
        assert_eq!(
            number_hunks(diff),
            "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@ [hunk 1 of 2]\n-x\n+y\n@@ -9 +9 @@ [hunk 2 of 2]\n-p\n+q\ndiff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@ [new file, applied whole]\n+n\n"
        );
    }
}
