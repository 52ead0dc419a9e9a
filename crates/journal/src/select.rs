//! What part of a preview an apply writes: `resolve`'s `extra.files` (whole files) and
//! `extra.hunks` (hunks of files, numbered as `staged show` prints them), read and checked
//! against the preview's files before anything is read from disk.
//!
//! Every refusal is a model-facing [`ToolError`] that ends with
//! [`NOTHING_APPLIED`]: a bad selection writes nothing and leaves the preview pending
//! (`docs/contract/ast-edit.md#part-of-a-preview`).

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;
use staged_core::{ActionError, ToolError};
use staged_protocol::JsonObject;

use crate::hunks::{DiffKind, hunk_list};

/// The key of `resolve`'s `extra` that names the files of a partial apply.
pub const FILES_EXTRA_KEY: &str = "files";

/// The key of `resolve`'s `extra` that names hunks of a partial apply: an object from a file's
/// path to its hunk numbers.
pub const HUNKS_EXTRA_KEY: &str = "hunks";

/// How every refusal of a selection ends.
pub(crate) const NOTHING_APPLIED: &str = "Nothing was applied; the preview is still pending.";

/// What an apply's `extra` asks it to write, as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Whole files, by path (a move by either path).
    pub files: Option<Vec<String>>,
    /// Hunks (1-based) by file path, in the order given.
    pub hunks: Option<Vec<(String, Vec<u64>)>>,
}

impl Selection {
    /// A selection of whole files.
    pub fn files<S: Into<String>>(files: impl IntoIterator<Item = S>) -> Selection {
        Selection { files: Some(files.into_iter().map(Into::into).collect()), hunks: None }
    }

    /// A selection of hunks of files.
    pub fn hunks<S: Into<String>>(hunks: impl IntoIterator<Item = (S, Vec<u64>)>) -> Selection {
        Selection {
            files: None,
            hunks: Some(hunks.into_iter().map(|(path, numbers)| (path.into(), numbers)).collect()),
        }
    }

    /// `extra.files` and `extra.hunks`, if `extra` names either.
    ///
    /// # Errors
    /// [`ActionError::Tool`] when either is not of its shape.
    pub(crate) fn of_extra(extra: Option<&JsonObject>) -> Result<Option<Selection>, ActionError> {
        let Some(extra) = extra else { return Ok(None) };
        let files = match extra.get(FILES_EXTRA_KEY) {
            None => None,
            Some(files) => Some(string_array(files).ok_or_else(|| {
                refuse("`extra.files` must be an array of paths of the preview's files.")
            })?),
        };
        let hunks = match extra.get(HUNKS_EXTRA_KEY) {
            None => None,
            Some(hunks) => Some(hunk_map(hunks).ok_or_else(|| {
                refuse(
                    "`extra.hunks` must map files of the preview to arrays of hunk numbers, as `staged show` numbers them: {\"src/a.ts\": [1, 3]}.",
                )
            })?),
        };
        if files.is_none() && hunks.is_none() {
            return Ok(None);
        }
        Ok(Some(Selection { files, hunks }))
    }

    /// What to write of each of `files` (the preview's, in order).
    ///
    /// # Errors
    /// [`ActionError::Tool`] naming the first problem: a path that is not a file of the
    /// preview, an empty list, a hunk number the file does not have, a hunk of a file that
    /// applies whole, a file named both whole and by hunk.
    pub fn resolve(&self, files: &[PartFile]) -> Result<Vec<Choice>, ActionError> {
        let listed = || files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", ");
        let find = |given: &str| {
            let normal = given.trim().trim_start_matches("./");
            files
                .iter()
                .position(|f| f.path == normal || f.from.as_deref() == Some(normal))
                .ok_or_else(|| {
                    refuse(&format!(
                        "`{given}` is not a file of this preview, whose files are: {}.",
                        listed()
                    ))
                })
        };
        let mut res = vec![Choice::Skip; files.len()];
        if let Some(named) = &self.files {
            if named.is_empty() && self.hunks.is_none() {
                return Err(refuse(&format!(
                    "`extra.files` is empty: name the files of the preview to apply ({}).",
                    listed()
                )));
            }
            for given in named {
                res[find(given)?] = Choice::Whole;
            }
        }
        if let Some(hunks) = &self.hunks {
            if hunks.is_empty() && self.files.as_ref().is_none_or(Vec::is_empty) {
                return Err(refuse(&format!(
                    "`extra.hunks` is empty: name files of the preview ({}) with their hunk numbers.",
                    listed()
                )));
            }
            for (given, numbers) in hunks {
                let idx = find(given)?;
                let file = &files[idx];
                if res[idx] == Choice::Whole {
                    return Err(refuse(&format!(
                        "`{}` is named in both `extra.files` and `extra.hunks`: name it once.",
                        file.path
                    )));
                }
                if !file.kind.splits() {
                    return Err(refuse(&format!(
                        "`{}` is {} in this preview: it applies whole and cannot be split into hunks; name it in `extra.files` instead.",
                        file.path,
                        file.kind.noun()
                    )));
                }
                if numbers.is_empty() {
                    return Err(refuse(&format!(
                        "`extra.hunks` gives no hunk number for `{}`: name its hunks, or leave it out.",
                        file.path
                    )));
                }
                let mut chosen = match std::mem::replace(&mut res[idx], Choice::Skip) {
                    Choice::Hunks(chosen) => chosen,
                    Choice::Skip | Choice::Whole => Vec::new(),
                };
                // A set, so that a selection of many hunks is checked in linear time.
                let mut named: HashSet<usize> = chosen.iter().copied().collect();
                for &n in numbers {
                    match file.hunks {
                        Some(count) => check_hunk(&file.path, n, count)?,
                        None if n == 0 => {
                            return Err(refuse(&format!(
                                "Hunks are numbered from 1, as `staged show` prints them; there is no hunk 0 of `{}`.",
                                file.path
                            )));
                        }
                        None => {}
                    }
                    let n = usize::try_from(n).unwrap_or(usize::MAX);
                    if !named.insert(n - 1) {
                        return Err(refuse(&format!(
                            "Hunk {n} of `{}` is named twice in `extra.hunks`: name each hunk once.",
                            file.path
                        )));
                    }
                    chosen.push(n - 1);
                }
                chosen.sort_unstable();
                res[idx] = match file.hunks {
                    Some(count) if chosen.len() == count => Choice::Whole,
                    _ => Choice::Hunks(chosen),
                };
            }
        }
        Ok(res)
    }
}

/// One file of a preview, as a selection sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartFile {
    /// Its path (for a move, where it goes).
    pub path: String,
    /// For a move, where it was.
    pub from: Option<String>,
    /// What happens to it.
    pub kind: DiffKind,
    /// How many hunks its diff has, when the preview's diff says (else the apply counts them
    /// once it has read the file).
    pub hunks: Option<usize>,
}

/// What an apply writes of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Nothing: it stays pending.
    Skip,
    /// All of it.
    Whole,
    /// These hunks (0-based, sorted, not all of them); the rest stays pending.
    Hunks(Vec<usize>),
}

/// The refusal of hunk `n` (1-based) of `path`, which has `count` hunks, if it has no such hunk.
///
/// # Errors
/// [`ActionError::Tool`] naming the file's hunk count.
pub(crate) fn check_hunk(path: &str, n: u64, count: usize) -> Result<(), ActionError> {
    if n >= 1 && usize::try_from(n).is_ok_and(|n| n <= count) {
        return Ok(());
    }
    Err(refuse(&format!(
        "`{path}` has {count} hunk{} (numbered from 1, as `staged show` prints them); there is no hunk {n}.",
        if count == 1 { "" } else { "s" }
    )))
}

/// The refusal of a selection that names some, not all, of hunks that one edit binds
/// (`group`, 0-based) in `path`.
pub(crate) fn bound_hunks(path: &str, group: std::ops::RangeInclusive<usize>) -> ActionError {
    let numbers: Vec<usize> = group.map(|h| h + 1).collect();
    refuse(&format!(
        "Hunks {} of `{path}` are one edit, which is written whole: name all of them, or none.",
        hunk_list(&numbers)
    ))
}

/// The preview's files as a selection sees them: `files` (path, move source, kind) and the
/// preview's `diff`, whose parts follow the files in order (when they do not, as a diff that
/// is missing, the hunk counts are left for the apply to find).
pub fn part_files<'a>(
    files: impl IntoIterator<Item = (&'a str, Option<&'a str>, DiffKind)>,
    diff: Option<&str>,
) -> Vec<PartFile> {
    let mut res: Vec<PartFile> = files
        .into_iter()
        .map(|(path, from, kind)| PartFile {
            path: path.to_owned(),
            from: from.map(str::to_owned),
            kind,
            hunks: None,
        })
        .collect();
    if let Some(diff) = diff {
        let parts = crate::hunks::diff_files(diff);
        if parts.len() == res.len() {
            for (file, part) in res.iter_mut().zip(parts) {
                file.hunks = Some(part.hunks.len());
            }
        }
    }
    res
}

/// A pending preview's files as a partial apply names them (path, move source, kind, hunk
/// count), from its [`files`](staged_core::PendingAction::files) and the diff in its details.
/// `staged resolve --only`, `staged review` and `staged ui` pick from these.
pub fn preview_parts(entry: &staged_core::PendingEntry) -> Vec<PartFile> {
    let files = entry.action.files();
    let diff = entry.action.details().and_then(staged_protocol::preview_diff);
    let sections = diff.map(crate::hunks::diff_files).unwrap_or_default();
    let kinds: Vec<DiffKind> = if sections.len() == files.len() {
        sections.iter().map(|s| s.kind).collect()
    } else {
        files
            .iter()
            .map(|f| if f.from.is_some() { DiffKind::Rename } else { DiffKind::Modify })
            .collect()
    };
    part_files(
        files.iter().zip(kinds).map(|(f, kind)| (f.path.as_str(), f.from.as_deref(), kind)),
        diff,
    )
}

fn refuse(what: &str) -> ActionError {
    ActionError::Tool(ToolError::new(format!("{what} {NOTHING_APPLIED}")))
}

fn string_array(value: &Value) -> Option<Vec<String>> {
    value.as_array()?.iter().map(|v| v.as_str().map(str::to_owned)).collect()
}

fn hunk_map(value: &Value) -> Option<Vec<(String, Vec<u64>)>> {
    let map = value.as_object()?;
    let mut res = Vec::with_capacity(map.len());
    // serde_json's map keeps keys sorted unless `preserve_order`; either is fine here.
    let sorted: BTreeMap<&String, &Value> = map.iter().collect();
    for (path, numbers) in sorted {
        let numbers: Vec<u64> =
            numbers.as_array()?.iter().map(Value::as_u64).collect::<Option<_>>()?;
        res.push((path.clone(), numbers));
    }
    Some(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<PartFile> {
        vec![
            PartFile { path: "a.ts".into(), from: None, kind: DiffKind::Modify, hunks: Some(3) },
            PartFile { path: "n.ts".into(), from: None, kind: DiffKind::Create, hunks: Some(1) },
            PartFile {
                path: "to.ts".into(),
                from: Some("from.ts".into()),
                kind: DiffKind::Rename,
                hunks: Some(1),
            },
        ]
    }

    fn message(err: ActionError) -> String {
        match err {
            ActionError::Tool(err) => err.message().to_owned(),
            other => panic!("not a tool error: {other}"),
        }
    }

    #[test]
    fn hunks_and_files_combine() {
        let sel = Selection {
            files: Some(vec!["./n.ts".into()]),
            hunks: Some(vec![("a.ts".into(), vec![3, 1])]),
        };
        assert_eq!(
            sel.resolve(&files()).unwrap(),
            [Choice::Hunks(vec![0, 2]), Choice::Whole, Choice::Skip]
        );
        // Every hunk of a file is the whole file.
        let sel = Selection::hunks([("a.ts", vec![1, 2, 3])]);
        assert_eq!(sel.resolve(&files()).unwrap()[0], Choice::Whole);
    }

    #[test]
    fn bad_selections_say_why() {
        let err = |sel: Selection| message(sel.resolve(&files()).unwrap_err());
        assert_eq!(
            err(Selection::hunks([("a.ts", vec![4])])),
            "`a.ts` has 3 hunks (numbered from 1, as `staged show` prints them); there is no hunk 4. Nothing was applied; the preview is still pending."
        );
        assert!(err(Selection::hunks([("a.ts", vec![0])])).contains("there is no hunk 0."));
        assert!(err(Selection::hunks([("from.ts", vec![1])])).starts_with(
            "`to.ts` is a moved file in this preview: it applies whole and cannot be split into hunks"
        ));
        assert!(err(Selection::hunks([("x.ts", vec![1])])).starts_with(
            "`x.ts` is not a file of this preview, whose files are: a.ts, n.ts, to.ts."
        ));
        let both = Selection {
            files: Some(vec!["a.ts".into()]),
            hunks: Some(vec![("a.ts".into(), vec![1])]),
        };
        assert!(err(both).contains("named in both"));
        assert!(
            err(Selection::hunks([("a.ts", vec![2, 2])]))
                .starts_with("Hunk 2 of `a.ts` is named twice in `extra.hunks`")
        );
    }

    #[test]
    fn extra_must_have_the_shape() {
        let extra = |v: Value| v.as_object().cloned().unwrap();
        let bad = Selection::of_extra(Some(&extra(serde_json::json!({"hunks": {"a": [1.5]}}))));
        assert!(matches!(bad, Err(ActionError::Tool(_))));
        let bad = Selection::of_extra(Some(&extra(serde_json::json!({"hunks": ["a"]}))));
        assert!(matches!(bad, Err(ActionError::Tool(_))));
        let good = Selection::of_extra(Some(&extra(serde_json::json!({"hunks": {"a": [2]}}))));
        assert_eq!(good.unwrap(), Some(Selection::hunks([("a", vec![2])])));
        assert_eq!(
            Selection::of_extra(Some(&extra(serde_json::json!({"ticket": 1})))).unwrap(),
            None
        );
    }
}
