//! Files whose bytes a change replaced whole rather than as text (a binary file, one over the
//! text cap), as a shell command's record keeps them: each side's bytes are kept by their
//! SHA-256 in the state folder's `shell/kept/` (the shell wrapper keeps the bytes before by a
//! hard link of the file's old inode; an undo keeps the bytes it replaces by a copy), and the
//! undo data names them ([`KeptChange`]).
//!
//! Undoing one writes the bytes before back (or deletes a file the change created), through
//! the journal with the other files of the same undo, and only onto a file that still holds
//! exactly the bytes after (or, for a file the change deleted, onto nothing). A binary file
//! has no hunks: it is one unit. A kept file is read back only if it hashes to its name,
//! because the state folder is in reach of anyone who writes the workspace; for the same
//! reason the kept folder and its files are opened through handles that never follow a
//! symlink, and read without waiting (a FIFO planted there is refused at once, naming it).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use staged_core::FileChange;
use staged_fs::{DirHandle, NewFileMode, RelPath};

use crate::{
    ConfinedRoot,
    fingerprint::{fingerprint, fingerprint_reader},
    journal::{Expect, Step, StepChange, StepMode},
};

/// Where the kept bytes live, in the state folder.
pub(crate) const KEPT_DIR: &str = "shell/kept";

/// One side of a [`KeptChange`]: a regular file's bytes, by their SHA-256, and its mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeptBytes {
    /// The SHA-256 (hex) of its bytes: their name in `.staged/shell/kept/`.
    pub sha: String,
    /// Its mode bits, when known (else those of the kept file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

/// A file a change replaced whole: what was there before and after (`None`: no file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeptChange {
    /// The file.
    pub path: String,
    /// Why it is not a text change (`binary`, `over 64 MiB`, ...).
    pub why: String,
    /// The file before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<KeptBytes>,
    /// The file after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<KeptBytes>,
}

/// What a log entry's undo data says of the files it replaced whole ([`crate::UndoData`]'s
/// `kept`), read from undo data of any format.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct KeptInUndo {
    /// Whether the undo data has a `kept` member at all.
    #[serde(skip)]
    pub named: bool,
    /// Its files, when `kept` reads as a list of them.
    pub kept: staged_protocol::lenient::Shaped<Vec<KeptChange>>,
}

impl KeptInUndo {
    /// What `undo` (a log entry's undo data) says in `kept`.
    pub fn of(undo: &serde_json::Value) -> Self {
        #[derive(Default, Deserialize)]
        #[serde(default)]
        struct Named {
            kept: staged_protocol::lenient::Present,
        }
        let named = staged_protocol::lenient::view::<Named>(undo).is_some_and(|n| n.kept.0);
        let read: Self = staged_protocol::lenient::view(undo).unwrap_or_default();
        Self { named, ..read }
    }
}

/// What undoing some [`KeptChange`]s writes.
#[derive(Debug, Default)]
pub struct KeptUndo {
    /// The commit's steps: each file's bytes before written back (or the file deleted).
    pub steps: Vec<Step>,
    /// What the undo does, as its own undo data keeps it (so that undoing the undo is the
    /// same operation).
    pub done: Vec<KeptChange>,
    /// Each file's hashes before and after the undo.
    pub files: Vec<FileChange>,
}

/// Why [`undo_kept`] cannot undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeptError {
    /// These files are not what the change left (by path).
    Changed(Vec<String>),
    /// Anything else, as the rest of a sentence.
    Failed(String),
}

/// `.staged/shell/kept`, as a path (for messages only: it is opened by [`kept_dir`]).
fn kept_path(workspace: &ConfinedRoot, sha: &str) -> PathBuf {
    workspace.state_dir().join(KEPT_DIR).join(sha)
}

/// Opens `.staged/shell/kept` without following a symlink in any of its components (the
/// state folder is in reach of anyone who writes the workspace: a symlink planted there must
/// not send a kept file elsewhere), creating it when `create` is set; `Ok(None)` when it is
/// not there and `create` is not set.
///
/// # Errors
/// Why it cannot be opened, naming the folder, as the rest of a sentence.
fn kept_dir(workspace: &ConfinedRoot, create: bool) -> Result<Option<DirHandle>, String> {
    let (runs, kept) = KEPT_DIR.split_once('/').unwrap_or((KEPT_DIR, ""));
    let shell = workspace.state_subdir(runs, create).map_err(|err| err.to_string())?;
    let Some(shell) = shell else { return Ok(None) };
    let res = if create { shell.create_dir(kept) } else { shell.open_dir(kept) };
    match res {
        Ok(dir) => Ok(Some(dir)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !create => Ok(None),
        Err(err) => {
            let path = workspace.state_dir().join(KEPT_DIR);
            let why = match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    "it is a symlink, and staged never follows one out of its own folder".to_owned()
                }
                Ok(meta) if !meta.is_dir() => "it is not a folder".to_owned(),
                _ => err.to_string(),
            };
            Err(format!("staged's folder of kept bytes {} cannot be used: {why}", path.display()))
        }
    }
}

fn is_sha(sha: &str) -> bool {
    sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The kept bytes `sha` and the kept file's mode bits, checked to hash to `sha`. The kept
/// file is opened without following a symlink and without waiting (a FIFO planted there is
/// refused at once, never read), and must be a regular file.
///
/// # Errors
/// Why they cannot be had, naming the kept file, as the rest of a sentence.
pub fn read_kept(
    workspace: &ConfinedRoot,
    sha: &str,
    path: &str,
) -> Result<(Vec<u8>, u32), String> {
    use std::{io::Read, os::unix::fs::MetadataExt};
    let missing = || format!("staged kept no copy of the bytes of `{path}` ({sha})");
    if !is_sha(sha) {
        return Err(missing());
    }
    let Some(dir) = kept_dir(workspace, false)? else { return Err(missing()) };
    let refused = |err: std::io::Error| {
        format!(
            "the kept copy of the bytes of `{path}` ({}) is not a regular file staged made ({err}), so staged does not read it",
            kept_path(workspace, sha).display()
        )
    };
    let mut file = match dir.open_file(sha) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(err) => return Err(refused(err)),
    };
    let meta = file.metadata().map_err(refused)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(refused)?;
    if fingerprint(&bytes) != sha {
        return Err(format!("the kept copy of the bytes of `{path}` ({sha}) was changed"));
    }
    Ok((bytes, meta.mode() & 0o7777))
}

/// Keeps `bytes` (whose SHA-256 is `sha`) in the state folder, durably, unless a copy that
/// hashes to it is there already. Whatever else is at its name (a symlink, a FIFO, other
/// bytes) is replaced, never followed.
///
/// # Errors
/// Why they could not be kept.
pub fn keep_bytes(workspace: &ConfinedRoot, sha: &str, bytes: &[u8]) -> Result<(), String> {
    let dir = kept_dir(workspace, true)?.ok_or_else(|| "no folder of kept bytes".to_owned())?;
    let _lock = lock_kept(&dir, false)?;
    if read_kept(workspace, sha, "").is_ok() {
        refresh(&dir, sha);
        return Ok(());
    }
    dir.write_replace(sha, bytes, &NewFileMode::Default)
        .map_err(|err| format!("{}: {err}", kept_path(workspace, sha).display()))
}

/// Whether the kept bytes `sha` are still there (a regular file at their name: a look, not a
/// read), marked kept again now as [`keep_bytes`] marks bytes it finds kept already, so that a
/// [`prune_kept`] within the grace leaves them (a shell command's snapshot reuses the copy its
/// last snapshot made of an unchanged file).
pub fn kept_again(workspace: &ConfinedRoot, sha: &str) -> bool {
    if !is_sha(sha) {
        return false;
    }
    let Ok(Some(dir)) = kept_dir(workspace, false) else { return false };
    let Ok(_lock) = lock_kept(&dir, false) else { return false };
    if !matches!(dir.entry_metadata(sha), Ok(Some(meta)) if meta.is_file()) {
        return false;
    }
    refresh(&dir, sha);
    true
}

/// Marks the kept file `sha`, kept already, as kept again now (its change time), so that a
/// [`prune_kept`] before the entry that names it again is logged leaves it. Best effort: a
/// kept file this user cannot change (another's) is still kept; it is only pruned sooner.
fn refresh(dir: &DirHandle, sha: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(file) = dir.open_file(sha)
        && let Ok(meta) = file.metadata()
    {
        let _ = file.set_permissions(std::fs::Permissions::from_mode(meta.permissions().mode()));
    }
}

/// Keeps the bytes of the regular file `rel` of the workspace as they are now, before a
/// change replaces them: by a hard link of its inode into `.staged/shell/kept/<sha256>` (no
/// copy), or, when the name no longer holds the file that was read (it was swapped
/// meanwhile), by a copy of the bytes read. The file is opened without following a symlink
/// and without waiting; the kept folder is never followed through a symlink, and whatever is
/// at the kept file's name is replaced, never followed. Returns the bytes' SHA-256 and the
/// file's mode bits; `None` when no regular file is at `rel`.
///
/// # Errors
/// Why the bytes could not be kept, naming the file, as the rest of a sentence.
pub fn keep_file(workspace: &ConfinedRoot, rel: &RelPath) -> Result<Option<(String, u32)>, String> {
    use std::{io::Read, os::unix::fs::MetadataExt};
    let name = rel.display();
    let fail = |err: std::io::Error| format!("the bytes of {name} could not be kept: {err}");
    let Some((dir, file_name)) = parent_if_there(workspace, rel).map_err(fail)? else {
        return Ok(None);
    };
    match dir.entry_metadata(&file_name) {
        Ok(Some(meta)) if meta.is_file() => {}
        Ok(_) => return Ok(None),
        Err(err) => return Err(fail(err)),
    }
    let mut file =
        dir.open_file(&file_name).map_err(|err| format!("{name} cannot be read: {err}"))?;
    let meta = file.metadata().map_err(fail)?;
    // Hashed as it is read: a file of any size is never held in memory here.
    let sha =
        fingerprint_reader(&mut file).map_err(|err| format!("{name} cannot be read: {err}"))?;
    let mode = meta.mode() & 0o7777;
    let kept = kept_dir(workspace, true)?.ok_or_else(|| "no folder of kept bytes".to_owned())?;
    let lock = lock_kept(&kept, false)?;
    if read_kept(workspace, &sha, &name).is_ok() {
        refresh(&kept, &sha);
        return Ok(Some((sha, mode)));
    }
    let temp = format!(".{sha}.{}.link", std::process::id());
    let _ = kept.remove_file(&temp);
    let linked = dir.hard_link(&file_name, &kept, &temp).and_then(|()| {
        // The very inode that was read, or the name was swapped meanwhile.
        let same = kept.entry_metadata(&temp)?.is_some_and(|m| {
            let id = staged_fs::FileIdentity::of_cap(&m);
            id.dev == meta.dev() && id.ino == meta.ino()
        });
        if same {
            kept.rename(&temp, &sha).and_then(|()| kept.sync())
        } else {
            Err(std::io::ErrorKind::Other.into())
        }
    });
    if linked.is_err() {
        // The name was swapped meanwhile: the bytes read are copied from the file still open
        // (read again, checked to hash as they did).
        let _ = kept.remove_file(&temp);
        drop(lock);
        let mut bytes = Vec::new();
        std::io::Seek::rewind(&mut file)
            .and_then(|()| file.read_to_end(&mut bytes))
            .map_err(|err| format!("{name} cannot be read: {err}"))?;
        if fingerprint(&bytes) != sha {
            return Err(format!("the bytes of {name} could not be kept: it changed while read"));
        }
        keep_bytes(workspace, &sha, &bytes)?;
    }
    Ok(Some((sha, mode)))
}

/// The lock file of the kept folder: held shared while bytes are kept (so a kept file that
/// is reused has its change time refreshed before a prune can look at it) and exclusive by
/// [`prune_kept`].
const KEPT_LOCK: &str = ".lock";

/// How long a kept file no log entry or preview names is left before [`prune_kept`] deletes
/// it: its entry is logged seconds after the bytes are kept (a record, an undo, a revert),
/// and this leaves those a wide margin.
pub const KEPT_GRACE: std::time::Duration = std::time::Duration::from_secs(3600);

/// The file whose change time says when [`prune_kept`] last ran.
const PRUNED_MARK: &str = ".pruned";

/// Whether `.staged/shell/kept` exists and was not pruned in the last `every` (a cheap
/// look: two `stat`s), so a front end prunes it at most that often.
pub fn kept_due(workspace: &ConfinedRoot, every: std::time::Duration) -> bool {
    let Ok(Some(dir)) = kept_dir(workspace, false) else { return false };
    match dir.entry_metadata(PRUNED_MARK) {
        Ok(Some(meta)) => meta
            .modified()
            .ok()
            .and_then(|t| t.into_std().elapsed().ok())
            .is_none_or(|age| age >= every),
        _ => true,
    }
}

/// Takes the kept folder's lock, shared or exclusive.
fn lock_kept(dir: &DirHandle, exclusive: bool) -> Result<std::fs::File, String> {
    let file =
        dir.open_lock_file(KEPT_LOCK).map_err(|err| format!("the kept folder's lock: {err}"))?;
    let res = if exclusive { file.lock() } else { file.lock_shared() };
    res.map_err(|err| format!("the kept folder's lock: {err}"))?;
    Ok(file)
}

/// Deletes the kept files of `workspace` that `in_use` does not name (by their SHA-256) and
/// whose inode changed last at least `grace` ago ([`KEPT_GRACE`] unless a person says
/// otherwise: a file kept, or kept again, since is left, as its log entry may not be written
/// yet), and leftover temp files past the same age.
/// Returns how many files were deleted.
///
/// # Errors
/// When the kept folder cannot be opened or listed.
pub fn prune_kept(
    workspace: &ConfinedRoot,
    grace: std::time::Duration,
    in_use: &dyn Fn(&str) -> bool,
) -> Result<usize, String> {
    let Some(dir) = kept_dir(workspace, false)? else { return Ok(0) };
    let _lock = lock_kept(&dir, true)?;
    let names = dir.names().map_err(|err| format!("the kept folder: {err}"))?;
    let now = std::time::SystemTime::now();
    let mut deleted = 0;
    for name in names {
        let Some(text) = name.to_str() else { continue };
        let temp = text.starts_with('.') && text != KEPT_LOCK && text != PRUNED_MARK;
        let unused = is_sha(text) && !in_use(text);
        if !unused && !temp {
            continue;
        }
        let Ok(Some(meta)) = dir.entry_metadata(&name) else { continue };
        let id = staged_fs::FileIdentity::of_cap(&meta);
        let changed = std::time::UNIX_EPOCH
            + std::time::Duration::new(
                u64::try_from(id.ctime).unwrap_or(0),
                u32::try_from(id.ctime_nsec).unwrap_or(0),
            );
        let old = now.duration_since(changed).is_ok_and(|age| age >= grace);
        if old && !meta.is_dir() && dir.remove_file(&name).is_ok() {
            deleted += 1;
        }
    }
    let _ = dir.write_replace(PRUNED_MARK, b"", &NewFileMode::Private);
    Ok(deleted)
}

/// The folder holding `rel` and `rel`'s name in it, `None` when a folder on the way is missing
/// or is not a folder (then nothing is at `rel`).
fn parent_if_there(
    workspace: &ConfinedRoot,
    rel: &RelPath,
) -> std::io::Result<Option<(DirHandle, std::ffi::OsString)>> {
    match workspace.fs().parent(rel) {
        Ok(found) => Ok(Some(found)),
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(err) => Err(err),
    }
}

/// The file at `path` now: its bytes' SHA-256 (hashed as they are read, never held whole)
/// and mode bits, `None` when nothing is there (a folder counts as something).
fn current(workspace: &ConfinedRoot, rel: &RelPath) -> Result<Option<(String, u32)>, String> {
    let Some((dir, name)) =
        parent_if_there(workspace, rel).map_err(|err| format!("{}: {err}", rel.display()))?
    else {
        return Ok(None);
    };
    match dir.entry_metadata(&name) {
        Ok(None) => Ok(None),
        Ok(Some(meta)) if meta.is_file() => {
            let sha = dir
                .open_file(&name)
                .and_then(fingerprint_reader)
                .map_err(|err| format!("{}: {err}", rel.display()))?;
            let mode = dir.file_mode(&name).map_err(|err| format!("{}: {err}", rel.display()))?;
            Ok(Some((sha, mode & 0o7777)))
        }
        // A folder, a symlink: not the file the change left.
        Ok(Some(_)) => Ok(Some((String::new(), u32::MAX))),
        Err(err) => Err(format!("{}: {err}", rel.display())),
    }
}

/// What undoes `changes` (what a change did to files it replaced whole), on the files as they
/// are now: each must still hold exactly the bytes after (or nothing, for a file the change
/// deleted). The bytes each undo replaces are kept first, so that the undo can be undone.
///
/// # Errors
/// [`KeptError::Changed`] naming the files that are not what the change left;
/// [`KeptError::Failed`] when a path is not one inside the workspace, or bytes before are not
/// kept.
pub fn undo_kept(workspace: &ConfinedRoot, changes: &[KeptChange]) -> Result<KeptUndo, KeptError> {
    let mut changed = Vec::new();
    let mut found = Vec::with_capacity(changes.len());
    for change in changes {
        let rel = RelPath::new(&change.path).map_err(|_| {
            KeptError::Failed(format!("`{}` is not a path inside the workspace", change.path))
        })?;
        // Kept bytes show in no diff: never written back where a file runs commands or
        // holds staged's own state, whatever a log entry names.
        if let Some(protected) = crate::protected::protected_path(rel.as_path()) {
            return Err(KeptError::Failed(format!(
                "`{}` is in {} ({}): staged does not write it back from kept bytes, which no diff shows",
                change.path, protected.pattern, protected.what
            )));
        }
        let now = current(workspace, &rel).map_err(KeptError::Failed)?;
        let intact = match (&change.after, &now) {
            (None, None) => true,
            (Some(after), Some((sha, mode))) => *mode != u32::MAX && *sha == after.sha,
            _ => false,
        };
        if !intact {
            changed.push(change.path.clone());
        }
        found.push((rel, now));
    }
    if !changed.is_empty() {
        return Err(KeptError::Changed(changed));
    }
    let mut res = KeptUndo::default();
    for (change, (rel, now)) in changes.iter().zip(found) {
        let after = match (&change.after, now) {
            (Some(after), Some((_, mode))) => {
                // Kept by a hard link of the file, as a record keeps its bytes before: never
                // read into memory.
                match keep_file(workspace, &rel).map_err(KeptError::Failed)? {
                    Some((sha, _)) if sha == after.sha => {}
                    _ => return Err(KeptError::Changed(vec![change.path.clone()])),
                }
                Some(KeptBytes { sha: after.sha.clone(), mode: Some(mode) })
            }
            _ => None,
        };
        let expect = after.as_ref().map_or(Expect::Absent, |a| Expect::Fingerprint(a.sha.clone()));
        let (step, before) = match &change.before {
            Some(before) => {
                let (bytes, kept_mode) =
                    read_kept(workspace, &before.sha, &change.path).map_err(KeptError::Failed)?;
                let mode = before.mode.unwrap_or(kept_mode);
                (
                    StepChange::Write { bytes, mode: StepMode::Bits(mode) },
                    Some(KeptBytes { sha: before.sha.clone(), mode: Some(mode) }),
                )
            }
            None => (StepChange::Delete, None),
        };
        res.steps.push(Step { target: rel, expect, change: step });
        res.files.push(FileChange {
            path: change.path.clone(),
            before: after.as_ref().map(|a| a.sha.clone()),
            after: before.as_ref().map(|b| b.sha.clone()),
        });
        res.done.push(KeptChange {
            path: change.path.clone(),
            why: change.why.clone(),
            before: after,
            after: before,
        });
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_bytes_are_never_written_back_into_a_protected_path() {
        let dir = tempfile::tempdir().unwrap();
        let ws = ConfinedRoot::new(dir.path()).unwrap();
        for path in [".claude/settings.json", ".staged/staged.db", "sub/.git/config"] {
            let change = KeptChange {
                path: path.to_owned(),
                why: "binary".to_owned(),
                before: Some(KeptBytes { sha: "0".repeat(64), mode: None }),
                after: None,
            };
            match undo_kept(&ws, &[change]) {
                Err(KeptError::Failed(why)) => {
                    assert!(why.contains("does not write it back"), "{why}")
                }
                other => panic!("{path}: {other:?}"),
            }
        }
    }
}
