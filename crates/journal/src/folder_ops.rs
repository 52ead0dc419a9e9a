//! Folders a change makes or removes as changes of their own (a shell command's `mkdir d`, a
//! folder it emptied and deleted, the folders it made for its new files), beside its files'
//! ops: checked against the disk, shown in the diff, kept in the undo data, and made or
//! removed by the same commit as the files, all or nothing.
//!
//! A folder to make is made before the commit point (a roll back removes it again, as it
//! removes the folders a new file needs); a folder to remove is removed after the commit's
//! deletes, deepest first, and only once empty: a folder that holds anything the change does
//! not delete (a file a person added since) is left in place, never emptied, and the change
//! does not record it as removed.
//!
//! Git has no form for a folder in a diff (it tracks files only), so staged writes one line
//! per folder, before the files' diffs, where `git apply` ignores it: `new folder <path>/` or
//! `deleted folder <path>/`.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use staged_fs::RelPath;

use crate::{
    ConfinedRoot, JournalError,
    change::{CheckError, Stale},
};

/// What a change did to a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FolderOp {
    /// Made (it was not there).
    Made,
    /// Removed (it was there, and empty once the change's files were deleted).
    Removed,
}

/// A folder a change made or removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FolderChange {
    /// The folder, relative to the root, `/`-separated, without a trailing `/`.
    pub path: String,
    /// What was done to it.
    pub op: FolderOp,
}

impl FolderChange {
    /// The same folder, the other way round (what undoes it).
    pub fn inverse(&self) -> FolderChange {
        let op = match self.op {
            FolderOp::Made => FolderOp::Removed,
            FolderOp::Removed => FolderOp::Made,
        };
        FolderChange { path: self.path.clone(), op }
    }
}

/// The diff's lines of `folders`: `new folder <path>/` and `deleted folder <path>/`, one each.
pub fn folder_lines(folders: &[FolderChange]) -> String {
    let mut res = String::new();
    for folder in folders {
        let what = match folder.op {
            FolderOp::Made => "new folder",
            FolderOp::Removed => "deleted folder",
        };
        res.push_str(&format!("{what} {}\n", crate::diff::quote("", &format!("{}/", folder.path))));
    }
    res
}

/// `diff` without the folder lines [`folder_lines`] put before its files' diffs.
pub fn without_folder_lines(diff: &str) -> &str {
    let mut at = 0;
    for line in diff.split_inclusive('\n') {
        if !(line.starts_with("new folder ") || line.starts_with("deleted folder ")) {
            break;
        }
        at += line.len();
    }
    diff.get(at..).unwrap_or(diff)
}

/// Folder changes checked against the disk: what the commit makes and removes, and what it
/// records.
#[derive(Debug, Default)]
pub(crate) struct CheckedFolders {
    /// Folders to make, parents first.
    pub(crate) make: Vec<RelPath>,
    /// Folders to remove once the deletes are done (when empty then), parents first.
    pub(crate) remove: Vec<RelPath>,
    /// What the change does, as its undo data and its diff show it.
    pub(crate) done: Vec<FolderChange>,
}

/// The folders a commit makes and removes, as [`add_folders`] found them.
#[derive(Debug, Default)]
pub struct FolderSteps {
    /// Folders to make, parents first ([`crate::CommitOptions::make`]).
    pub make: Vec<RelPath>,
    /// Folders to remove once empty, parents first ([`crate::CommitOptions::prune`]).
    pub remove: Vec<RelPath>,
}

/// Adds `folders` to `checked` (a change set checked by [`crate::check`]): each checked
/// against the disk and the files `checked` deletes, its line put before the diff, and kept
/// in the undo data; returns what the commit makes and removes.
///
/// # Errors
/// As `check_folders`.
pub fn add_folders(
    workspace: &ConfinedRoot,
    checked: &mut crate::Checked,
    folders: &[FolderChange],
) -> Result<FolderSteps, CheckError> {
    if folders.is_empty() {
        return Ok(FolderSteps::default());
    }
    let deleted: Vec<&str> =
        checked.files.iter().filter(|f| f.after.is_none()).map(|f| f.path.as_str()).collect();
    let done = check_folders(workspace, folders, &deleted)?;
    checked.diff.insert_str(0, &folder_lines(&done.done));
    checked.undo = checked.undo.take().with_folders(done.done);
    Ok(FolderSteps { make: done.make, remove: done.remove })
}

/// Checks `folders` against the disk, for a commit whose file ops delete `deleted` and create
/// files in `created`'s folders: a folder to make must not be there as anything but a folder
/// (a folder there already is left out: the change did not make it); a folder to remove that
/// is not there any more is left out, and one that holds anything the commit does not delete
/// or remove is left in place and out of the record.
///
/// # Errors
/// [`CheckError::Stale`] when something other than a folder is where one is to be made or
/// removed; [`CheckError::Failed`] for a path outside the workspace or a read that failed.
pub(crate) fn check_folders(
    workspace: &ConfinedRoot,
    folders: &[FolderChange],
    deleted: &[&str],
) -> Result<CheckedFolders, CheckError> {
    let mut res = CheckedFolders::default();
    let deleted: HashSet<&str> = deleted.iter().copied().collect();
    let removed: HashSet<&str> =
        folders.iter().filter(|f| f.op == FolderOp::Removed).map(|f| f.path.as_str()).collect();
    for folder in folders {
        let rel = RelPath::new(&folder.path).map_err(|_| {
            CheckError::Failed(JournalError::Journal(format!(
                "`{}` is not a folder inside the workspace",
                folder.path
            )))
        })?;
        let there = kind_at(workspace, &rel)?;
        let stale = |why: &str| {
            CheckError::Stale(Stale { path: format!("{}/", folder.path), why: why.to_owned() })
        };
        match (folder.op, there) {
            (FolderOp::Made, There::Nothing) => res.make.push(rel),
            (FolderOp::Made, There::Folder) | (FolderOp::Removed, There::Nothing) => continue,
            (FolderOp::Made, There::Other) => {
                return Err(stale("is there already, and not as a folder"));
            }
            (FolderOp::Removed, There::Other) => return Err(stale("is not a folder any more")),
            (FolderOp::Removed, There::Folder) => {
                if !only_what_goes(workspace, &rel, &deleted, &removed)? {
                    continue;
                }
                res.remove.push(rel);
            }
        }
        res.done.push(folder.clone());
    }
    res.make.sort_by_key(|d| d.components().count());
    res.remove.sort_by_key(|d| d.components().count());
    Ok(res)
}

enum There {
    Nothing,
    Folder,
    Other,
}

fn kind_at(workspace: &ConfinedRoot, rel: &RelPath) -> Result<There, CheckError> {
    let failed = |err: std::io::Error| {
        CheckError::Failed(JournalError::Read {
            path: workspace.root().join(rel.as_path()),
            message: err.to_string(),
            source: err,
        })
    };
    match workspace.fs().parent(rel) {
        Ok((dir, name)) => match dir.entry_metadata(&name).map_err(failed)? {
            None => Ok(There::Nothing),
            Some(meta) if meta.is_dir() => Ok(There::Folder),
            Some(_) => Ok(There::Other),
        },
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(There::Nothing)
        }
        Err(err) => Err(failed(err)),
    }
}

/// Whether the folder `rel` holds only files in `deleted` and folders in `removed` (each of
/// them holding only such things in turn).
fn only_what_goes(
    workspace: &ConfinedRoot,
    rel: &RelPath,
    deleted: &HashSet<&str>,
    removed: &HashSet<&str>,
) -> Result<bool, CheckError> {
    let failed = |err: std::io::Error| {
        CheckError::Failed(JournalError::Read {
            path: workspace.root().join(rel.as_path()),
            message: err.to_string(),
            source: err,
        })
    };
    let dir = workspace.fs().dir(Some(rel)).map_err(failed)?;
    for name in dir.names().map_err(failed)? {
        let Some(name) = name.to_str() else { return Ok(false) };
        let child = format!("{}/{name}", rel.display());
        let is_dir = dir.entry_metadata(name).map_err(failed)?.is_some_and(|m| m.is_dir());
        if is_dir {
            let Ok(child_rel) = RelPath::new(&child) else { return Ok(false) };
            if !removed.contains(&child.as_str())
                || !only_what_goes(workspace, &child_rel, deleted, removed)?
            {
                return Ok(false);
            }
        } else if !deleted.contains(&child.as_str()) {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_lines_come_off_a_diff_and_a_folder_holding_a_file_not_deleted_is_left() {
        let made = FolderChange { path: "a b".into(), op: FolderOp::Made };
        let lines = folder_lines(&[made.clone(), made.inverse()]);
        assert_eq!(lines, "new folder a b/\ndeleted folder a b/\n");
        let diff = format!("{lines}diff --git a/x b/x\n");
        assert_eq!(without_folder_lines(&diff), "diff --git a/x b/x\n");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("gone/sub")).unwrap();
        std::fs::write(dir.path().join("gone/sub/f"), "f").unwrap();
        std::fs::write(dir.path().join("gone/mine"), "a person's").unwrap();
        let ws = ConfinedRoot::new(dir.path()).unwrap();
        let removed = |path: &str| FolderChange { path: path.into(), op: FolderOp::Removed };
        let all = [removed("gone"), removed("gone/sub")];
        let checked = check_folders(&ws, &all, &["gone/sub/f"]).unwrap();
        assert_eq!(checked.done, [removed("gone/sub")]);
        let checked = check_folders(&ws, &all, &["gone/sub/f", "gone/mine"]).unwrap();
        assert_eq!(checked.done, all);
        let new = FolderChange { path: "gone/mine".into(), op: FolderOp::Made };
        assert!(matches!(check_folders(&ws, &[new], &[]), Err(CheckError::Stale(_))));
    }
}
