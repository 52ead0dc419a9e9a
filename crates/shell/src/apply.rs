//! What becomes of a command's writes ([`Plan`]).
//!
//! - [`record`]: the text changes are written to the real tree through the journal (all or
//!   none, each file checked byte for byte against what the command's lower layer showed: the
//!   tree as it is now) and logged as one entry of the session (`shell`, the command as its
//!   label, hashes before and after, the diff, undo data), so `staged session show` and
//!   `staged session revert` cover them. The other files are then moved in from the upper
//!   layer (a rename), each one's bytes before kept whole by a hard link in
//!   `.staged/shell/kept/<sha256>` and named in the entry (`extra.shell.notInDiff`).
//! - [`gate`]: the text changes are staged as one preview of the session; nothing of them
//!   reaches the tree until it is applied. The other files are not written, and named.
//!
//! In both modes ignored files are moved in as the command left them, unrecorded, and
//! counted (`extra.shell.ignoredChanged`).
//!
//! While a process of the command still runs (the run outlives its wrapper), files are copied
//! in ([`MoveIn::Copy`]) rather than renamed: the upper layer is what that process reads its
//! own writes back from, and must stay as it is.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use serde::Serialize;
use serde_json::{Value, json};
use staged_core::{CancelToken, LogRecord, PendingAction, Retirement, Session};
use staged_journal::{
    ChangeAction, ChangeDetails, ChangedFile, ConfinedRoot, FileOp, FolderChange,
    fingerprint_reader, folder_lines,
};
use staged_protocol::JsonObject;

use crate::{
    SHELL_SOURCE,
    plan::{Other, Plan},
    upper::{After, Written},
};

/// How files are taken out of the upper layer into the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveIn {
    /// Renamed (no copy): the command's processes are gone, the run is deleted after.
    Rename,
    /// Copied (a new file synced, renamed into place): a process of the command still runs
    /// over the upper layer.
    Copy,
}

/// What [`record`] did.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Whether a log entry was written.
    pub logged: bool,
    /// The files not in the diff, with why.
    pub others: Vec<(String, String)>,
    /// How many ignored paths changed.
    pub ignored: usize,
    /// What could not be moved in, one line each.
    pub failures: Vec<String>,
}

/// What [`gate`] staged.
#[derive(Debug)]
pub struct Gated {
    /// The preview's id, when there were text changes to stage.
    pub id: Option<String>,
    /// The preview's label.
    pub label: String,
    /// The files it writes.
    pub files: Vec<String>,
    /// The files not staged, with why.
    pub others: Vec<(String, String)>,
    /// How many ignored paths changed.
    pub ignored: usize,
    /// What could not be moved in, one line each.
    pub failures: Vec<String>,
}

/// The `extra.shell` of an entry: the command, how it was attributed, what is not in the diff.
pub(crate) fn extra(
    command: &str,
    attribution: &str,
    kept: &[Value],
    ignored: Option<usize>,
    caveat: Option<&str>,
) -> JsonObject {
    /// A shell entry's `extra.shell` (`docs/contract/shell.md`).
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct ShellExtra<'a> {
        command: &'a str,
        attribution: &'a str,
        not_in_diff: &'a [Value],
        #[serde(skip_serializing_if = "Option::is_none")]
        ignored_changed: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        caveat: Option<&'a str>,
    }
    let shell =
        ShellExtra { command, attribution, not_in_diff: kept, ignored_changed: ignored, caveat };
    let mut extra = JsonObject::new();
    extra.insert("shell".to_owned(), serde_json::to_value(shell).unwrap_or(Value::Null));
    extra
}

/// Records `plan` (the writes of `command`) in the session `session` acts for: `base` is the
/// log record to complete (its id, label, front end and reason).
///
/// # Errors
/// When the text changes cannot be written (a file changed since the command read it, a
/// write failed): nothing of the plan was written then.
pub fn record(
    session: &Session,
    workspace: &ConfinedRoot,
    mut plan: Plan,
    command: &str,
    mut base: LogRecord,
    how: MoveIn,
) -> Result<Recorded, String> {
    let root = workspace.root();
    let mut kept = Vec::new();
    for other in &plan.others {
        kept.push(keep_before(workspace, other)?);
    }
    base.extra = Some(extra(command, "exact", &kept, Some(plan.ignored.len()), None));
    let mut res = Recorded {
        others: plan.others.iter().map(|o| (o.written.path.clone(), o.why.clone())).collect(),
        ignored: plan.ignored.len(),
        ..Recorded::default()
    };
    if !plan.ops.is_empty() || !plan.folders.is_empty() {
        // No diff beforehand: the apply's own check writes the one the log keeps.
        let ops = std::mem::take(&mut plan.ops);
        let files = std::mem::take(&mut plan.files);
        let action = action(workspace, &base.label, (ops, files), None, None, None)
            .with_folders(std::mem::take(&mut plan.folders));
        let retirement = Retirement::for_undo(session.store().clone(), base);
        // Nobody observes the steps: the replacing renames run at once (1,000 files renamed
        // one after the other waited ~1 ms each on the filesystem).
        let result = action
            .apply_only(None, &CancelToken::new(), &retirement)
            .map_err(|err| err.to_string())?;
        if result.is_error {
            return Err(result.text_content());
        }
        res.logged = true;
    } else if !plan.others.is_empty() {
        base.result = format!("Recorded {}.", base.label);
        session.store().log_record(base).map_err(|err| err.to_string())?;
        res.logged = true;
    }
    let others: Vec<&Written> = plan.others.iter().map(|o| &o.written).collect();
    // The overlay syncs nothing (it is mounted `volatile`): a file moved in whole is made
    // durable first, as the journal makes the text changes (a copy is synced as it is made).
    if how == MoveIn::Rename {
        for w in others.iter().filter(|w| matches!(w.after, After::File { .. })) {
            if let Err(err) = open_regular(&w.upper).and_then(|f| f.sync_all()) {
                res.failures.push(format!("{}: {err}", w.path));
            }
        }
    }
    res.failures.extend(move_in(
        root,
        others.into_iter().chain(&plan.ignored).chain(&plan.dirs),
        how,
    ));
    Ok(res)
}

/// Stages the text changes of `plan` as one preview of the session `session` acts for,
/// labelled `label`, and moves the ignored files in.
///
/// # Errors
/// Why the preview could not be staged (a file pending in another preview): nothing was
/// written then.
pub fn gate(
    session: &Session,
    workspace: &ConfinedRoot,
    mut plan: Plan,
    label: &str,
    how: MoveIn,
) -> Result<Gated, String> {
    let mut files: Vec<String> = plan.ops.iter().map(|op| op.path().to_owned()).collect();
    files.extend(plan.folders.iter().map(|f| format!("{}/", f.path)));
    let mut res = Gated {
        id: None,
        label: label.to_owned(),
        files,
        others: plan.others.iter().map(|o| (o.written.path.clone(), o.why.clone())).collect(),
        ignored: plan.ignored.len(),
        failures: Vec::new(),
    };
    if !plan.ops.is_empty() || !plan.folders.is_empty() {
        let staged_by = match session.front_end() {
            hook @ staged_core::FrontEnd::Hook(_) => Some(hook.to_string()),
            _ => None,
        };
        let changes = (std::mem::take(&mut plan.ops), std::mem::take(&mut plan.files));
        let needs_person = session.needs_person();
        let folders = std::mem::take(&mut plan.folders);
        let action = action(workspace, label, changes, staged_by, needs_person, Some(&folders))
            .with_folders(folders);
        let action = Arc::new(action);
        let id =
            session.push_exclusive(action as Arc<dyn PendingAction>).map_err(|err| match err {
                staged_core::StoreError::Refused(why) => why,
                other => format!("Could not stage the preview: {other}"),
            })?;
        res.id = Some(id.to_string());
    }
    res.failures = move_in(workspace.root(), plan.ignored.iter(), how);
    Ok(res)
}

/// The preview (or the apply) of a plan's text changes (its ops and their files), with its
/// diff when `diff_with` holds the folders it makes and removes (a preview shows it: the
/// folders' lines, then the files'; a record's apply writes its own).
fn action(
    workspace: &ConfinedRoot,
    label: &str,
    (ops, files): (Vec<FileOp>, Vec<ChangedFile>),
    staged_by: Option<String>,
    needs_person: Option<String>,
    diff_with: Option<&[FolderChange]>,
) -> ChangeAction {
    let diff = match diff_with {
        Some(folders) => {
            let mut diff = staged_journal::check(workspace, &ops.iter().collect::<Vec<_>>())
                .map(|checked| checked.diff)
                .unwrap_or_default();
            if !folders.is_empty() {
                diff.insert_str(0, &folder_lines(folders));
            }
            diff
        }
        None => String::new(),
    };
    let details = ChangeDetails {
        label: label.to_owned(),
        files,
        applied: false,
        diff,
        pending_id: None,
        remainder: None,
        staged_by,
        needs_person,
    };
    ChangeAction::new(workspace.clone(), SHELL_SOURCE, label.to_owned(), ops, details)
}

/// Keeps what the real tree holds at `other`'s path (a file's bytes by a hard link in
/// `.staged/shell/kept/<sha256>`, through [`staged_journal::keep_file`], which follows no
/// symlink and never waits on a FIFO; a symlink's target in the entry), before the command's
/// version replaces it; returns what the entry says of it.
fn keep_before(workspace: &ConfinedRoot, other: &Other) -> Result<Value, String> {
    let root = workspace.root();
    let real = root.join(&other.written.path);
    let after = match &other.written.after {
        // Hashed as it is read: a file over the text cap is never held in memory.
        After::File { .. } => open_regular(&other.written.upper).and_then(fingerprint_reader).ok(),
        _ => None,
    };
    let mut entry = json!({"path": other.written.path, "why": other.why, "after": after});
    if let After::File { mode } = &other.written.after {
        entry["afterMode"] = Value::from(mode & 0o7777);
    }
    entry["existed"] = Value::from(other.existed);
    let Ok(meta) = std::fs::symlink_metadata(&real) else { return Ok(entry) };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&real).map_err(|e| e.to_string())?;
        entry["beforeLink"] = Value::from(target.to_string_lossy().into_owned());
    } else if meta.is_file() {
        let rel = staged_fs::RelPath::new(&other.written.path).map_err(|e| e.to_string())?;
        if let Some((sha, mode)) = staged_journal::keep_file(workspace, &rel)? {
            entry["before"] = Value::from(sha);
            entry["beforeMode"] = Value::from(mode);
        }
    }
    Ok(entry)
}

/// Opens the regular file `path` (of a run's upper layer, which the command's processes can
/// write) without following a symlink in its last component and without waiting: a FIFO put
/// there is refused at once, never opened for good.
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = std::fs::File::from(rustix::fs::open(path, flags, Mode::empty())?);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

/// Puts a copy of `w` (a file or a symlink of the upper layer) at `real`: made beside it,
/// synced, then renamed into place. A FIFO, socket or device is not copied.
fn copy_in(w: &Written, real: &Path) -> std::io::Result<()> {
    let name = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = real.with_file_name(format!(".{name}.staged-copy-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    match &w.after {
        After::File { mode } => {
            let mut from = open_regular(&w.upper)?;
            let made = (|| {
                let mut to = std::fs::File::create(&tmp)?;
                std::io::copy(&mut from, &mut to)?;
                to.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(*mode & 0o7777))?;
                to.sync_all()
            })();
            if let Err(err) = made {
                let _ = std::fs::remove_file(&tmp);
                return Err(err);
            }
        }
        After::Symlink(target) => std::os::unix::fs::symlink(target, &tmp)?,
        _ => return Ok(()),
    }
    std::fs::rename(&tmp, real).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Moves `written` into the real tree at `root` as the upper layer holds it: folders made,
/// files and symlinks renamed (or, [`MoveIn::Copy`], copied) into place, then deleted paths
/// removed (a folder of the workspace only once empty; an ignored one whole). Returns what
/// failed.
fn move_in<'a>(
    root: &Path,
    written: impl Iterator<Item = &'a Written>,
    how: MoveIn,
) -> Vec<String> {
    let written: Vec<&Written> = written.collect();
    let mut failures = Vec::new();
    let mut fail = |w: &Written, err: &std::io::Error| failures.push(format!("{}: {err}", w.path));
    for w in written.iter().filter(|w| w.after != After::Absent) {
        let real = root.join(&w.path);
        let res = match &w.after {
            After::Dir => {
                if std::fs::symlink_metadata(&real).is_ok_and(|m| !m.is_dir()) {
                    let _ = std::fs::remove_file(&real);
                }
                std::fs::create_dir_all(&real)
            }
            _ => {
                if let Some(parent) = real.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                if std::fs::symlink_metadata(&real).is_ok_and(|m| m.is_dir()) {
                    let _ = std::fs::remove_dir_all(&real);
                }
                match how {
                    MoveIn::Rename => std::fs::rename(&w.upper, &real),
                    MoveIn::Copy => copy_in(w, &real),
                }
            }
        };
        if let Err(err) = res {
            fail(w, &err);
        }
    }
    let mut gone: Vec<PathBuf> = Vec::new();
    for w in written.iter().filter(|w| w.after == After::Absent) {
        let real = root.join(&w.path);
        let res = match std::fs::symlink_metadata(&real) {
            Err(_) => Ok(()),
            Ok(meta) if meta.is_dir() => {
                gone.push(real);
                Ok(())
            }
            Ok(_) => std::fs::remove_file(&real),
        };
        if let Err(err) = res {
            fail(w, &err);
        }
    }
    // Deepest first; a folder that still holds something (a file the command did not
    // delete) stays.
    gone.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for dir in gone {
        let _ = std::fs::remove_dir(&dir);
    }
    failures
}
