//! All-or-nothing file changes, with a journal in `<root>/.staged/journal/` so that [`recover`]
//! can finish or roll back a commit that a crash (or kill -9) interrupted.
//!
//! A commit is a list of [`Step`]s: replace a file, create one (with the folders it needs), or
//! delete one; a move is a create and a delete in one commit. The protocol, for one step or
//! many:
//! 1. take the commit lock (shared), then the write lock (exclusive, so that no other staged
//!    commit writes between this one's check and its renames), and check every target is still
//!    what the preview read: a file with the fingerprint it read, or, for a file it creates,
//!    nothing at all;
//! 2. write the journal in state `preparing`, listing every target relative to the root and
//!    the folders it will create, and call the caller's prepare hook with the journal's id (the
//!    resolve log stores the record under it);
//! 3. create the missing folders, then write and fsync every temp file, beside its target and
//!    with its permissions (those of the file it replaces, of a moved file's source, those of
//!    any new file or new executable, or the mode bits the step gives: a mode a diff sets, an
//!    undo's old mode);
//! 4. switch the journal to `committed` (an atomic rename), recording each temp file's
//!    identity: the commit point;
//! 5. rename each new file into place without replacing anything (`RENAME_NOREPLACE`: a file
//!    that appeared since the check is never overwritten; the commit is then undone, as if the
//!    commit point had not been reached), then each replacing temp over its target, then
//!    delete the files to delete (each only if it is still the file the check read);
//! 6. retire the pending preview (the caller's hook), so that it leaves the stack before the
//!    journal that proves it was written;
//! 7. delete the journal.
//!
//! **Files that become folders, and back.** A commit may delete a file and create files below
//! its path (`a` deleted, `a/b` created), or delete every file of a folder and create a file
//! at the folder's path (`a/b` deleted, `a` created). Such a create is *late*: its temp is
//! written before the commit point like any other, in the deepest folder that exists (the
//! folder holding the file that goes, for `a/b`), and after the deletes of step 5 the folders
//! the deletes emptied are removed (deepest first), the folders that take a deleted file's
//! place are made (parents first), and each late temp is renamed into place, none over
//! anything. The check requires a folder that becomes a file to hold only files the commit
//! deletes; the journal lists the late creates, the folders to remove and to make, so a
//! roll forward repeats those steps in that order, each skipped once it is done.
//!
//! Before the commit point no target has been touched, so recovery deletes the temps and the
//! folders the commit created (roll back, telling its hooks, so the prepared record is
//! forgotten). After it every new content is durable in a temp file or already in place, so
//! recovery renames the remaining temps, deletes what is left to delete, and retires the
//! preview, making its record final (roll forward). Either way every file ends wholly old or
//! wholly new, all files agree, and the stack and the log agree with them.
//!
//! **Liveness.** Every commit holds a shared OS lock on `journal/commit.lock` from before its
//! fingerprint check until its journal is gone; recovery runs only under the exclusive lock,
//! so it never acts while any commit in any process is live. The lock file is never deleted,
//! so no process can ever hold a lock on a file that no longer guards anything. The OS drops a
//! dead process's lock, however it died.
//!
//! **Descriptors.** A commit holds no descriptor per file, so that a change of any number of
//! files works under the usual limit on open files (1,024 on Linux, 256 on macOS): it holds
//! one handle per folder for its first 96 folders (so those are written through the handle
//! whatever happens to their names), and keeps any other folder as its path and identity
//! (device and inode), opened again when needed, from the root without following a symlink,
//! and used only if it is still that folder; a folder swapped for another then stops the
//! commit, as any failed write does. Recovery opens folders the same way.
//!
//! **Distrust.** A journal is input like any other file in the workspace. Recovery re-confines
//! every target (a relative path, opened one directory at a time without following a
//! symlink), derives each temp file's name itself from the journal id, and touches only those
//! temps, the targets, and the folders the journal lists (removed only when empty). A file is
//! renamed into place only if it is the temp this commit wrote (its identity, recorded at the
//! commit point), and deleted only if it is the file the commit checked (its identity,
//! recorded before). A journal that names anything else is refused with a message, and nothing
//! is changed.

use std::{
    collections::{BTreeSet, HashMap, HashSet},
    ffi::{OsStr, OsString},
    fs::File,
    io::{self, Read},
    os::unix::{ffi::OsStrExt, fs::PermissionsExt},
    sync::Arc,
};

use serde::{Deserialize, Serialize};
use staged_fs::{DirHandle, FileIdentity, NewFileMode, RelPath};

use crate::{ConfinedRoot, JournalError, fingerprint::fingerprint, par};

/// One file to replace with new contents, as `ast_edit` writes: a [`Step`] that keeps the
/// file's mode.
#[derive(Debug, Clone)]
pub struct FileWrite {
    /// The target, relative to the workspace root.
    pub target: RelPath,
    /// The fingerprint the target must still have (what the preview read).
    pub expected_fingerprint: String,
    /// The new contents.
    pub contents: String,
}

impl From<FileWrite> for Step {
    fn from(write: FileWrite) -> Step {
        Step {
            target: write.target,
            expect: Expect::Fingerprint(write.expected_fingerprint),
            change: StepChange::Write { bytes: write.contents.into_bytes(), mode: StepMode::Keep },
        }
    }
}

/// What a commit must find at a target before it writes anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Nothing at all (not even a symlink): the commit creates the file.
    Absent,
    /// A regular file whose bytes have this fingerprint.
    Fingerprint(String),
}

/// Which permissions a written file gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepMode {
    /// Those of the file it replaces; a new file's default when it replaces none.
    Keep,
    /// What any new file gets (0666 less the umask).
    Default,
    /// Those of another target of the same commit, as the check found it (a moved file's
    /// source).
    Of(RelPath),
    /// These mode bits (an undo restoring a deleted file, a mode a diff changes).
    Bits(u32),
    /// What any new executable gets (0777 less the umask): a new file a diff makes 100755.
    Executable,
}

/// What a commit does to one target.
#[derive(Debug, Clone)]
pub enum StepChange {
    /// Write these bytes: replace the file, or create it (and its folders) when it is absent.
    Write {
        /// The new contents.
        bytes: Vec<u8>,
        /// Its permissions.
        mode: StepMode,
    },
    /// Delete the file.
    Delete,
}

/// One target of a commit: what must be there now, and what to make of it.
#[derive(Debug, Clone)]
pub struct Step {
    /// The target, relative to the workspace root.
    pub target: RelPath,
    /// What the preview read there.
    pub expect: Expect,
    /// What to do.
    pub change: StepChange,
}

/// A point in the commit protocol, reported after it is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitStep {
    /// The journal exists in state `preparing`.
    Prepared,
    /// The n-th folder the commit needs was created.
    DirCreated(usize),
    /// The temp file of the n-th step is durable.
    TempWritten(usize),
    /// The journal is `committed`.
    Committed,
    /// The n-th step's file is in place (replaced or created).
    Replaced(usize),
    /// The n-th step's file is deleted.
    Deleted(usize),
    /// The n-th folder a delete emptied, to make room for a file, is removed (the last
    /// first).
    DirRemoved(usize),
    /// The retire hook ran and succeeded.
    Retired,
    /// The journal is gone.
    Finished,
}

/// What [`recover`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Commits finished (their remaining temps renamed in).
    pub rolled_forward: usize,
    /// Commits rolled back (their temps deleted, targets untouched).
    pub rolled_back: usize,
    /// The origins (see [`CommitOptions::origin`]) of the commits that were finished.
    pub finished_origins: Vec<String>,
    /// Journals left alone because a live process is committing.
    pub in_progress: usize,
    /// Journals refused because they name something recovery must not touch, one message
    /// each. They are left in place and nothing they name was changed.
    pub refused: Vec<String>,
    /// Files a finished commit was to delete but that changed after its check: they were kept,
    /// one message each.
    pub kept: Vec<String>,
}

impl RecoveryReport {
    /// Whether recovery changed or found anything worth reporting.
    pub fn is_empty(&self) -> bool {
        *self == RecoveryReport::default()
    }
}

/// What a finished commit did beyond its steps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitReport {
    /// Targets to delete that changed between the check and the delete (someone wrote them
    /// while the commit ran): they were kept, not deleted.
    pub kept: Vec<RelPath>,
}

/// The journal formats this build reads; it writes the newest.
const JOURNAL_VERSION: u32 = 4;
const OLDEST_JOURNAL_VERSION: u32 = 2;

/// The lock every commit holds shared and recovery holds exclusive. Never deleted.
const LOCK_FILE_NAME: &str = "commit.lock";

/// The lock a commit holds exclusive from its fingerprint check to its last rename, so that
/// two staged commits (an apply and an undo, say) never interleave their writes. Never
/// deleted.
const WRITE_LOCK_FILE_NAME: &str = "write.lock";

/// A journal bigger than this is not one staged wrote (about 600k files' worth).
const MAX_JOURNAL_BYTES: u64 = 64 << 20;

/// File names longer than this get a temp file name without them, to stay under NAME_MAX.
const MAX_NAME_IN_TEMP: usize = 128;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum JournalState {
    Preparing,
    Committed,
}

/// What a journal entry does to its target.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum EntryKind {
    /// A temp file replaces the target (journal format 2 knew only this).
    #[default]
    Replace,
    /// A temp file becomes the target, which must not exist.
    Create,
    /// The target is deleted.
    Delete,
}

impl EntryKind {
    fn is_default(&self) -> bool {
        *self == EntryKind::Replace
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JournalEntry {
    /// The target, relative to the root, `/`-separated.
    target: String,
    #[serde(default, skip_serializing_if = "EntryKind::is_default")]
    kind: EntryKind,
    /// Which file the temp is, recorded at the commit point: a committed journal is rolled
    /// forward only onto temps that are still exactly the files this commit wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    temp: Option<TempIdentity>,
    /// For a delete: which file the check found at the target. Only that file is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    victim: Option<TempIdentity>,
    /// For a create: whether it waits for the deletes, the removal of the folders they
    /// emptied and the folders made where files were (a path that changes kind).
    #[serde(default, skip_serializing_if = "is_false")]
    late: bool,
    /// For a late create: how many folders above the target's folder its temp file is (the
    /// target's folder does not exist before the commit point).
    #[serde(default, skip_serializing_if = "is_zero")]
    up: u32,
}

#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde's skip_serializing_if")]
fn is_false(b: &bool) -> bool {
    !*b
}

#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde's skip_serializing_if")]
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A file's [`FileIdentity`], as the journal stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TempIdentity {
    dev: u64,
    ino: u64,
    ctime: i64,
    ctime_nsec: i64,
}

impl From<FileIdentity> for TempIdentity {
    fn from(id: FileIdentity) -> Self {
        TempIdentity { dev: id.dev, ino: id.ino, ctime: id.ctime, ctime_nsec: id.ctime_nsec }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Journal {
    version: u32,
    state: JournalState,
    entries: Vec<JournalEntry>,
    /// The folders the commit creates, parents first, relative to the root: a roll back
    /// removes those that are empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dirs: Vec<String>,
    /// The folders to remove, if empty, once the deletes are done (a roll forward does too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    prune: Vec<String>,
    /// The folders the deletes empty for a late create at their path, parents first: removed
    /// after the deletes, deepest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    emptied: Vec<String>,
    /// The folders made where deleted files were, parents first: made after the deletes and
    /// the removals, before the late creates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    late_dirs: Vec<String>,
    /// Who committed: for a preview, its pending id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    origin: Option<String>,
}

/// [`CommitOptions::prepare`]: called with the journal's id; an error message stops the commit.
pub type PrepareHook<'a> = dyn FnMut(&str) -> Result<(), String> + 'a;

/// How a commit runs, beyond its writes.
#[derive(Default)]
pub struct CommitOptions<'a> {
    /// Recorded in the journal; [`recover`] hands it to [`RecoveryHooks::finished`] when it
    /// finishes the commit. A preview records its pending id.
    pub origin: Option<&'a str>,
    /// Folders to remove once the commit's deletes are done, if they are empty then (an undo
    /// of new files removes the folders their apply created).
    pub prune: &'a [RelPath],
    /// Called with the journal's id once the journal exists (state `preparing`) and before
    /// any temp file is written: the resolve log records the commit under that id, so that
    /// recovery can finish or forget the record with the journal. An error rolls the commit
    /// back.
    pub prepare: Option<&'a mut PrepareHook<'a>>,
    /// Called with the journal's id when the commit is rolled back after `prepare` succeeded.
    pub abandon: Option<&'a mut dyn FnMut(&str)>,
    /// Called once every target is replaced and before the journal is deleted. It returns
    /// whether the preview left the stack; if not, the journal stays, and a later recovery
    /// retires it.
    pub retire: Option<&'a mut dyn FnMut() -> bool>,
    /// Called after each durable step (tests use it to crash at every step).
    pub observer: Option<&'a mut dyn FnMut(CommitStep)>,
}

impl std::fmt::Debug for CommitOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitOptions").field("origin", &self.origin).finish_non_exhaustive()
    }
}

/// Makes every step or none; `options` adds an origin, hooks and an observer
/// ([`CommitOptions::default`] has none).
///
/// # Errors
/// [`JournalError::Drifted`] (nothing written) when a target changed since the preview,
/// [`JournalError::Appeared`] when a file to create exists; [`JournalError::Write`] and
/// [`JournalError::Journal`] on I/O failure, or when a target is not a regular file reached
/// without symlinks.
pub fn commit(
    workspace: &ConfinedRoot,
    steps: &[Step],
    mut options: CommitOptions<'_>,
) -> Result<CommitReport, JournalError> {
    let mut observe = |step| {
        if let Some(observer) = options.observer.as_mut() {
            observer(step);
        }
    };
    let journal_dir = journal_dir(workspace)?;
    let _lock = CommitLock::shared(&journal_dir, workspace)?;
    let _write_lock = WriteLock::exclusive(&journal_dir, workspace)?;
    let held = Held::default();
    let plan = check_targets(workspace, steps, &held)?;
    let mut targets = plan.targets;

    let id = unique_id();
    let mut journal = Journal {
        version: JOURNAL_VERSION,
        state: JournalState::Preparing,
        entries: targets
            .iter()
            .map(|t| JournalEntry {
                target: t.display.clone(),
                kind: t.kind,
                temp: None,
                victim: t.victim.map(TempIdentity::from),
                late: t.late,
                up: t.up,
            })
            .collect(),
        dirs: plan.dirs.iter().map(RelPath::display).collect(),
        prune: options.prune.iter().map(RelPath::display).collect(),
        emptied: plan.emptied.iter().map(RelPath::display).collect(),
        late_dirs: plan.late_dirs.iter().map(RelPath::display).collect(),
        origin: options.origin.map(str::to_owned),
    };
    let name = journal_name(&id);
    store_journal(&journal_dir, &name, &journal).map_err(|err| journal_err(workspace, &err))?;
    let undo = Undo { workspace, id: &id, journal_dir: &journal_dir, journal: &name };
    if let Some(prepare) = options.prepare.as_mut()
        && let Err(why) = prepare(&id)
    {
        undo.roll_back(&targets, &[], &[]);
        return Err(JournalError::Journal(why));
    }
    // Which targets have a temp file, for a roll back to delete.
    let mut written = vec![false; targets.len()];
    let mut abandon = |targets: &[OpenTarget], written: &[bool], folders: &[Folder]| {
        undo.roll_back(targets, written, folders);
        if let Some(abandon) = options.abandon.as_mut() {
            abandon(&id);
        }
    };
    observe(CommitStep::Prepared);

    // The folders new files need, parents first, each made through its parent's handle; then
    // each new file's folder, the handle of the folder made for it. A roll back removes them
    // through the same handles, wherever their names point by then.
    let mut folders: Vec<Folder> = Vec::with_capacity(plan.dirs.len());
    for (k, dir) in plan.dirs.iter().enumerate() {
        match make_folder(workspace, dir, &folders, &held) {
            Ok(folder) => folders.push(folder),
            Err(err) => {
                abandon(&targets, &written, &folders);
                return Err(write_err(workspace, dir, err));
            }
        }
        observe(CommitStep::DirCreated(k));
    }
    for i in 0..targets.len() {
        if targets[i].dir.is_none() {
            let parent = targets[i].rel.parent();
            let found = folders.iter().find(|f| Some(&f.rel) == parent.as_ref());
            match found {
                Some(folder) => targets[i].dir = Some(folder.this.clone()),
                None => {
                    abandon(&targets, &written, &folders);
                    return Err(JournalError::Journal(format!(
                        "the folder of {} was not made",
                        targets[i].display
                    )));
                }
            }
        }
    }
    // Every temp file, written and fsynced on several threads at once (see `par`): all of them
    // are durable before the journal says `committed`.
    let progress = workspace.progress();
    if let Some(progress) = progress {
        progress.begin(staged_core::Phase::Writing, targets.len() as u64);
    }
    let temps = par::try_map(targets.len(), par::IO_THREADS, |i| {
        let (StepChange::Write { bytes, .. }, Some(dir)) = (&steps[i].change, &targets[i].dir)
        else {
            if let Some(progress) = progress {
                progress.advance(1);
            }
            return Ok(None);
        };
        let temp = temp_name(&targets[i].name, &id, i);
        let written = dir
            .open(workspace)
            .and_then(|dir| dir.create_new(&temp, bytes, &targets[i].new_mode))
            .map(Some);
        if let Some(progress) = progress {
            progress.advance(1);
        }
        written
    });
    let temps = match temps {
        Ok(temps) => temps,
        Err(failed) => {
            // A temp that failed removed itself; only those written are deleted.
            let written: Vec<bool> =
                failed.done.iter().map(|d| matches!(d, Some(Some(_)))).collect();
            abandon(&targets, &written, &folders);
            return Err(write_err(workspace, &targets[failed.index].rel, failed.error));
        }
    };
    for (i, identity) in temps.into_iter().enumerate() {
        if let Some(identity) = identity {
            journal.entries[i].temp = Some(identity.into());
            written[i] = true;
            observe(CommitStep::TempWritten(i));
        }
    }
    if let Err(err) = sync_dirs(workspace, &targets, &folders) {
        abandon(&targets, &written, &folders);
        return Err(journal_err(workspace, &err));
    }
    let journal = Journal { state: JournalState::Committed, ..journal };
    if let Err(err) = store_journal(&journal_dir, &name, &journal) {
        // The journal still says `preparing` (the switch is one rename): roll back.
        abandon(&targets, &written, &folders);
        return Err(journal_err(workspace, &err));
    }
    observe(CommitStep::Committed);

    // New files first, none over anything: a file that appeared since the check undoes the
    // commit before any target was touched.
    let mut open = OpenFolders::new(workspace);
    let mut created = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        if target.kind != EntryKind::Create || target.late {
            continue;
        }
        let Some(dir) = &target.dir else { continue };
        let renamed = open
            .get(dir)
            .and_then(|dir| dir.rename_noreplace(temp_name(&target.name, &id, i), &target.name));
        match renamed {
            Ok(()) => created.push(i),
            Err(err) => {
                let appeared = err.kind() == io::ErrorKind::AlreadyExists;
                let uncommitted = undo.uncommit(&targets, &created, &journal);
                if uncommitted {
                    abandon(&targets, &written, &folders);
                }
                return Err(if appeared {
                    JournalError::Appeared(target.rel.display())
                } else {
                    write_err(workspace, &target.rel, err)
                });
            }
        }
        observe(CommitStep::Replaced(i));
    }
    for (i, target) in targets.iter().enumerate() {
        if target.kind != EntryKind::Replace {
            continue;
        }
        let Some(dir) = &target.dir else { continue };
        open.get(dir)
            .and_then(|dir| dir.rename(temp_name(&target.name, &id, i), &target.name))
            .map_err(|err| write_err(workspace, &target.rel, err))?;
        observe(CommitStep::Replaced(i));
    }
    let mut report = CommitReport::default();
    for (i, target) in targets.iter().enumerate() {
        if target.kind != EntryKind::Delete {
            continue;
        }
        let Some(dir) = &target.dir else { continue };
        let dir = open.get(dir).map_err(|err| write_err(workspace, &target.rel, err))?;
        let found =
            dir.identity(&target.name).map_err(|err| write_err(workspace, &target.rel, err))?;
        match found {
            Some(found) if Some(found) == target.victim => dir
                .remove_file(&target.name)
                .map_err(|err| write_err(workspace, &target.rel, err))?,
            Some(_) => report.kept.push(target.rel.clone()),
            None => {}
        }
        observe(CommitStep::Deleted(i));
    }
    // Paths that change kind: the folders the deletes emptied go, the folders that take a
    // deleted file's place are made, and the late files are put in place.
    for (k, dir) in plan.emptied.iter().enumerate().rev() {
        remove_emptied(workspace, dir)?;
        observe(CommitStep::DirRemoved(k));
    }
    for (k, dir) in plan.late_dirs.iter().enumerate() {
        make_late_dir(workspace, dir)?;
        observe(CommitStep::DirCreated(plan.dirs.len() + k));
    }
    for (i, target) in targets.iter().enumerate() {
        if !target.late {
            continue;
        }
        let Some(stage) = &target.dir else { continue };
        let stage = open.get(stage).map_err(|err| write_err(workspace, &target.rel, err))?;
        place_late(workspace, stage, &temp_name(&target.name, &id, i), &target.rel)
            .map_err(|err| write_err(workspace, &target.rel, err))?;
        observe(CommitStep::Replaced(i));
    }
    drop(open);
    // The folders' entries first: pruning may remove some of those folders. A folder the
    // deletes emptied is gone (a file may have its name): its parent was synced then.
    let kept: Vec<&OpenTarget> = targets
        .iter()
        .filter(|t| !t.dir.as_ref().is_some_and(|dir| emptied_or_below(&dir.rel, &plan.emptied)))
        .collect();
    sync_dirs(workspace, kept, &[]).map_err(|err| journal_err(workspace, &err))?;
    remove_empty_dirs(workspace, &sorted(options.prune));
    if let Some(retire) = options.retire.as_mut() {
        if !retire() {
            // The preview may still be listed: keep the journal so that recovery retires it.
            return Ok(report);
        }
        observe(CommitStep::Retired);
    }
    remove_journal(&journal_dir, &name).map_err(|err| journal_err(workspace, &err))?;
    observe(CommitStep::Finished);
    Ok(report)
}

/// A target, checked and opened for the commit.
struct OpenTarget {
    rel: RelPath,
    display: String,
    kind: EntryKind,
    /// The folder of its temp file: its own folder (`None` until the folders the commit
    /// creates exist), or for a late create under a file that becomes a folder, the deepest
    /// folder above it that exists, `up` folders above its own.
    dir: Option<FolderRef>,
    name: OsString,
    /// The permissions its temp file gets.
    new_mode: NewFileMode,
    /// For a delete: the file the check found.
    victim: Option<FileIdentity>,
    /// A create put in place after the deletes (its path changes kind).
    late: bool,
    up: u32,
}

/// The checked targets, the folders to create for them (parents first), and for paths that
/// change kind, the folders the deletes empty and those made where files were (parents
/// first).
struct Plan {
    targets: Vec<OpenTarget>,
    dirs: Vec<RelPath>,
    emptied: Vec<RelPath>,
    late_dirs: Vec<RelPath>,
}

/// Where a file to create goes, as the check found its path.
struct Place {
    /// The folder of its temp file; `None` when its folder is yet to be made.
    dir: Option<FolderRef>,
    late: bool,
    up: u32,
}

/// Opens every target's directory without following symlinks and checks that each target is
/// still what the preview read.
fn check_targets(
    workspace: &ConfinedRoot,
    steps: &[Step],
    held: &Held,
) -> Result<Plan, JournalError> {
    let mut seen = HashSet::new();
    let mut targets = Vec::with_capacity(steps.len());
    let mut modes: HashMap<RelPath, u32> = HashMap::new();
    let mut dirs = BTreeSet::new();
    let mut kinds = KindChanges::default();
    // The files the commit deletes: their paths may become folders, and a folder holding
    // only such files may become a file.
    let deleting: HashSet<RelPath> = steps
        .iter()
        .filter(|s| matches!(s.change, StepChange::Delete) && s.expect != Expect::Absent)
        .map(|s| s.target.clone())
        .collect();
    // The files to compare, read and hashed on several threads at once (the expensive part);
    // each step's verdict is then taken in order, so the error reported is the first one.
    let found = par::try_map(steps.len(), par::cpu_threads(), |i| {
        Ok(match &steps[i].expect {
            Expect::Fingerprint(_) => Some(read_target(workspace, &steps[i].target, held)),
            Expect::Absent => None,
        })
    })
    .map_err(|failed| JournalError::Journal(failed.error.to_string()))?;
    for (step, found) in steps.iter().zip(found) {
        let rel = &step.target;
        let Some(display) = rel.to_str().map(str::to_owned) else {
            return Err(write_err(
                workspace,
                rel,
                io::Error::new(io::ErrorKind::InvalidInput, "the file name is not UTF-8"),
            ));
        };
        if !seen.insert(rel.clone()) {
            return Err(JournalError::Journal(format!("{display} is written twice")));
        }
        let name = rel.file_name().to_owned();
        let mut place = (false, 0);
        let (kind, dir, mode, victim) = match &step.expect {
            Expect::Fingerprint(expected) => {
                let Some(found) = found else {
                    return Err(JournalError::Journal(format!("{display} was not read")));
                };
                let ReadTarget { dir, fingerprint: current, mode, identity } = found?;
                if current != *expected {
                    return Err(JournalError::Drifted(rel.display()));
                }
                modes.insert(rel.clone(), mode);
                let (kind, victim) = match step.change {
                    StepChange::Write { .. } => (EntryKind::Replace, None),
                    StepChange::Delete => (EntryKind::Delete, Some(identity)),
                };
                (kind, Some(dir), Some(mode), victim)
            }
            Expect::Absent => {
                if matches!(step.change, StepChange::Delete) {
                    return Err(JournalError::Journal(format!(
                        "{display} cannot be deleted: the preview found no file there"
                    )));
                }
                let found = absent_target(workspace, rel, &mut dirs, &mut kinds, &deleting, held)?;
                place = (found.late, found.up);
                (EntryKind::Create, found.dir, None, None)
            }
        };
        targets.push((
            OpenTarget {
                rel: rel.clone(),
                display,
                kind,
                dir,
                name,
                new_mode: NewFileMode::Default,
                victim,
                late: place.0,
                up: place.1,
            },
            mode,
        ));
    }
    // Modes last: a move takes its source's, which may come later in the list.
    let mut res = Vec::with_capacity(targets.len());
    for ((mut target, mode), step) in targets.into_iter().zip(steps) {
        if let StepChange::Write { mode: wanted, .. } = &step.change {
            target.new_mode = match (wanted, mode) {
                (StepMode::Keep, Some(mode)) => NewFileMode::Mode(mode),
                (StepMode::Keep | StepMode::Default, _) => NewFileMode::Default,
                (StepMode::Executable, _) => NewFileMode::Executable,
                (StepMode::Bits(bits), _) => NewFileMode::Mode(*bits),
                (StepMode::Of(source), _) => match modes.get(source) {
                    Some(mode) => NewFileMode::Mode(*mode),
                    None => {
                        return Err(JournalError::Journal(format!(
                            "{} takes the mode of {}, which the commit does not read",
                            target.display,
                            source.display()
                        )));
                    }
                },
            };
        }
        res.push(target);
    }
    // A file the commit writes must not also be the folder of another file it writes (a
    // deleted file's path may become a folder, and an emptied folder's a file).
    let written: HashSet<&RelPath> =
        res.iter().filter(|t| t.kind != EntryKind::Delete).map(|t| &t.rel).collect();
    for target in res.iter().filter(|t| t.kind != EntryKind::Delete) {
        let mut cursor = target.rel.parent();
        while let Some(dir) = cursor {
            if written.contains(&dir) {
                return Err(JournalError::Journal(format!(
                    "{} is both a file and a folder of this change",
                    dir.display()
                )));
            }
            cursor = dir.parent();
        }
    }
    let by_depth = |set: BTreeSet<RelPath>| {
        let mut res: Vec<RelPath> = set.into_iter().collect();
        res.sort_by_key(|dir| dir.components().count());
        res
    };
    Ok(Plan {
        targets: res,
        dirs: by_depth(dirs),
        emptied: by_depth(kinds.emptied),
        late_dirs: by_depth(kinds.late_dirs),
    })
}

/// The folders of the paths that change kind in one commit.
#[derive(Default)]
struct KindChanges {
    /// Folders the deletes empty, for a file to take their place.
    emptied: BTreeSet<RelPath>,
    /// Folders made where deleted files were.
    late_dirs: BTreeSet<RelPath>,
}

/// A target as the check found it: its folder, and the fingerprint, mode bits and identity of
/// the file there.
struct ReadTarget {
    dir: FolderRef,
    fingerprint: String,
    mode: u32,
    identity: FileIdentity,
}

/// Opens `rel`'s folder without following a symlink and reads the file.
fn read_target(
    workspace: &ConfinedRoot,
    rel: &RelPath,
    held: &Held,
) -> Result<ReadTarget, JournalError> {
    let (dir, name) = workspace.fs().parent(rel).map_err(|err| write_err(workspace, rel, err))?;
    let (current, mode, identity) = read_with_mode(&dir, &name).map_err(|err| {
        let path = workspace.root().join(rel.as_path());
        JournalError::Read { path, message: err.to_string(), source: err }
    })?;
    let folder = FolderRef::of(rel.parent(), dir, Some(held))
        .map_err(|err| write_err(workspace, rel, err))?;
    Ok(ReadTarget { dir: folder, fingerprint: fingerprint(&current), mode, identity })
}

/// Checks that nothing is at `rel` (or a folder holding only files in `deleting`), and
/// collects the folders above it that are missing (or are files in `deleting`, to become
/// folders). Returns where its temp file goes.
fn absent_target(
    workspace: &ConfinedRoot,
    rel: &RelPath,
    missing: &mut BTreeSet<RelPath>,
    kinds: &mut KindChanges,
    deleting: &HashSet<RelPath>,
    held: &Held,
) -> Result<Place, JournalError> {
    let parent = rel.parent();
    // The deepest folder above `rel` that exists, then everything below it is missing.
    let mut prefixes = Vec::new();
    let mut cursor = parent.clone();
    while let Some(dir) = cursor {
        cursor = dir.parent();
        prefixes.push(dir);
    }
    prefixes.reverse();
    let mut open = workspace.fs().handle().map_err(|err| write_err(workspace, rel, err))?;
    for (k, prefix) in prefixes.iter().enumerate() {
        match open.open_dir(prefix.file_name()) {
            Ok(next) => open = next,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if open
                    .entry_metadata(prefix.file_name())
                    .map_err(|err| write_err(workspace, prefix, err))?
                    .is_some()
                {
                    // A dangling symlink, say: never followed, never replaced.
                    return Err(not_a_folder(workspace, prefix));
                }
                missing.extend(prefixes[k..].iter().cloned());
                return Ok(Place { dir: None, late: false, up: 0 });
            }
            Err(_) => {
                let is_file = open
                    .entry_metadata(prefix.file_name())
                    .map_err(|err| write_err(workspace, prefix, err))?
                    .is_some_and(|meta| meta.is_file());
                if !(is_file && deleting.contains(prefix)) {
                    return Err(not_a_folder(workspace, prefix));
                }
                // A file the commit deletes, whose path becomes a folder: the temp waits in
                // the folder that holds it.
                kinds.late_dirs.extend(prefixes[k..].iter().cloned());
                let up = u32::try_from(prefixes.len() - k).unwrap_or(u32::MAX);
                let dir = FolderRef::of(prefix.parent(), open, Some(held))
                    .map_err(|err| write_err(workspace, rel, err))?;
                return Ok(Place { dir: Some(dir), late: true, up });
            }
        }
    }
    let late =
        match open.entry_metadata(rel.file_name()).map_err(|err| write_err(workspace, rel, err))? {
            None => false,
            Some(meta) if meta.is_dir() => {
                // A folder that becomes a file: every file in it must be one the commit deletes.
                let folder =
                    open.open_dir(rel.file_name()).map_err(|err| write_err(workspace, rel, err))?;
                let mut folders = Vec::new();
                if let Some(kept) = emptied_by(&folder, rel, deleting, &mut folders)
                    .map_err(|err| write_err(workspace, rel, err))?
                {
                    return Err(JournalError::Appeared(kept.display()));
                }
                kinds.emptied.extend(folders);
                true
            }
            Some(_) => return Err(JournalError::Appeared(rel.display())),
        };
    let dir =
        FolderRef::of(parent, open, Some(held)).map_err(|err| write_err(workspace, rel, err))?;
    Ok(Place { dir: Some(dir), late, up: 0 })
}

/// Whether the deletes of `deleting` empty the folder `dir` (at `rel`): `None` when every
/// entry below it is a regular file in `deleting` or a folder so emptied (collected in
/// `folders`, parents first); else the first entry that stays.
fn emptied_by(
    dir: &DirHandle,
    rel: &RelPath,
    deleting: &HashSet<RelPath>,
    folders: &mut Vec<RelPath>,
) -> io::Result<Option<RelPath>> {
    folders.push(rel.clone());
    let mut names = dir.names()?;
    names.sort();
    for name in names {
        let child = rel.join(&name).map_err(io::Error::other)?;
        match dir.entry_metadata(&name)? {
            Some(meta) if meta.is_dir() => {
                if let Some(kept) = emptied_by(&dir.open_dir(&name)?, &child, deleting, folders)? {
                    return Ok(Some(kept));
                }
            }
            Some(meta) if meta.is_file() && deleting.contains(&child) => {}
            Some(_) => return Ok(Some(child)),
            None => {}
        }
    }
    Ok(None)
}

/// Removes a folder the deletes emptied, for a file to take its place. Gone already, or
/// already a file (a roll forward after the late create): done.
fn remove_emptied(workspace: &ConfinedRoot, rel: &RelPath) -> Result<(), JournalError> {
    let done = |err: &io::Error| {
        matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
    };
    let (parent, name) = match workspace.fs().parent(rel) {
        Ok(found) => found,
        Err(err) if done(&err) => return Ok(()),
        Err(err) => return Err(write_err(workspace, rel, err)),
    };
    match parent.remove_dir(&name) {
        Ok(()) => parent.sync().map_err(|err| write_err(workspace, rel, err)),
        Err(err) if done(&err) => Ok(()),
        Err(err) => Err(write_err(workspace, rel, err)),
    }
}

/// Makes a folder where a deleted file was (or opens it, made already), never through a
/// symlink.
fn make_late_dir(workspace: &ConfinedRoot, rel: &RelPath) -> Result<(), JournalError> {
    let (parent, name) =
        workspace.fs().parent(rel).map_err(|err| write_err(workspace, rel, err))?;
    parent.create_dir(&name).map_err(|err| write_err(workspace, rel, err))?;
    parent.sync().map_err(|err| write_err(workspace, rel, err))
}

/// Renames a late create's temp (in `stage`) to its target, over nothing, durably.
fn place_late(
    workspace: &ConfinedRoot,
    stage: &DirHandle,
    temp: &OsStr,
    rel: &RelPath,
) -> io::Result<()> {
    let (dir, name) = workspace.fs().parent(rel)?;
    stage.rename_noreplace_into(temp, &dir, &name)?;
    dir.sync()?;
    stage.sync()
}

fn not_a_folder(workspace: &ConfinedRoot, rel: &RelPath) -> JournalError {
    write_err(
        workspace,
        rel,
        io::Error::other(
            "it is not a folder staged can write into (a file, or a symlink, which staged never follows)",
        ),
    )
}

/// The bytes, mode bits and identity of the regular file `name`, all of the one file opened.
fn read_with_mode(dir: &DirHandle, name: &OsStr) -> io::Result<(Vec<u8>, u32, FileIdentity)> {
    use std::os::unix::fs::MetadataExt;
    let mut file: File = dir.open_file(name)?;
    let meta = file.metadata()?;
    let identity = FileIdentity {
        dev: meta.dev(),
        ino: meta.ino(),
        ctime: meta.ctime(),
        ctime_nsec: meta.ctime_nsec(),
    };
    let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut buf)?;
    Ok((buf, meta.permissions().mode(), identity))
}

/// How a commit is taken back: its temps, its folders and its journal.
struct Undo<'a> {
    workspace: &'a ConfinedRoot,
    id: &'a str,
    journal_dir: &'a DirHandle,
    journal: &'a OsStr,
}

impl Undo<'_> {
    /// Deletes the temps of the `targets` marked `written`, then the folders it made
    /// (deepest first, through their parents' handles, each only while empty), then the
    /// journal; best effort, since nothing was replaced yet and a leftover is cleaned by
    /// recovery.
    fn roll_back(&self, targets: &[OpenTarget], written: &[bool], folders: &[Folder]) {
        let mut open = OpenFolders::new(self.workspace);
        for (i, target) in targets.iter().enumerate() {
            if !written.get(i).copied().unwrap_or(false) {
                continue;
            }
            if let Some(dir) = &target.dir
                && let Ok(dir) = open.get(dir)
            {
                let _ = dir.remove_file(temp_name(&target.name, self.id, i));
            }
        }
        for folder in folders.iter().rev().filter(|f| f.made) {
            if let Ok(parent) = open.get(&folder.parent) {
                let _ = parent.remove_dir(&folder.name);
                let _ = parent.sync();
            }
        }
        let _ = remove_journal(self.journal_dir, self.journal);
    }

    /// Takes back the files `created` put in place after the commit point (each back to its
    /// temp name, only if it is still the temp this commit wrote), then switches the journal
    /// back to `preparing`, so that the commit rolls back as if its commit point had never
    /// been reached. Returns whether it did; if not, the journal stays committed and a later
    /// recovery settles it.
    fn uncommit(&self, targets: &[OpenTarget], created: &[usize], journal: &Journal) -> bool {
        let mut open = OpenFolders::new(self.workspace);
        for &i in created {
            let target = &targets[i];
            let Some(dir) = &target.dir else { return false };
            let Ok(dir) = open.get(dir) else { return false };
            let ours = journal.entries[i].temp;
            let found = dir.identity(&target.name).ok().flatten().map(TempIdentity::from);
            if found.is_none() || found != ours {
                return false;
            }
            if dir.rename_noreplace(&target.name, temp_name(&target.name, self.id, i)).is_err() {
                return false;
            }
        }
        let back = Journal {
            version: journal.version,
            state: JournalState::Preparing,
            entries: journal
                .entries
                .iter()
                .map(|e| JournalEntry {
                    target: e.target.clone(),
                    kind: e.kind,
                    temp: None,
                    victim: e.victim,
                    late: e.late,
                    up: e.up,
                })
                .collect(),
            dirs: journal.dirs.clone(),
            prune: journal.prune.clone(),
            emptied: journal.emptied.clone(),
            late_dirs: journal.late_dirs.clone(),
            origin: journal.origin.clone(),
        };
        store_journal(self.journal_dir, self.journal, &back).is_ok()
    }
}

/// `dirs`, parents first.
fn sorted(dirs: &[RelPath]) -> Vec<RelPath> {
    let mut res = dirs.to_vec();
    res.sort_by_key(|dir| dir.components().count());
    res
}

/// Removes the folders of `dirs` (parents first) that are empty, deepest first, never through
/// a symlink.
fn remove_empty_dirs(workspace: &ConfinedRoot, dirs: &[RelPath]) {
    for dir in dirs.iter().rev() {
        if let Ok((parent, name)) = workspace.fs().parent(dir) {
            // Fails, and so keeps it, when it holds anything or is not a folder.
            let _ = parent.remove_dir(&name);
            let _ = parent.sync();
        }
    }
}

/// Whether the folder `rel` is one of `emptied` or below one (removed by the commit).
fn emptied_or_below(rel: &Option<RelPath>, emptied: &[RelPath]) -> bool {
    let mut cursor = rel.clone();
    while let Some(dir) = cursor {
        if emptied.contains(&dir) {
            return true;
        }
        cursor = dir.parent();
    }
    false
}

/// Makes the entries of every folder holding a target, and of the parents of the folders
/// the commit made, durable; on several threads at once (see `par`).
fn sync_dirs<'t>(
    workspace: &ConfinedRoot,
    targets: impl IntoIterator<Item = &'t OpenTarget>,
    folders: &[Folder],
) -> io::Result<()> {
    let mut synced = HashSet::new();
    let mut dirs: Vec<&FolderRef> = Vec::new();
    for target in targets {
        if let Some(dir) = &target.dir
            && synced.insert(dir)
        {
            dirs.push(dir);
        }
    }
    // A made folder's own entry lives in its parent.
    for folder in folders.iter().filter(|f| f.made) {
        if synced.insert(&folder.parent) {
            dirs.push(&folder.parent);
        }
    }
    par::try_map(dirs.len(), par::IO_THREADS, |i| dirs[i].open(workspace)?.sync())
        .map(drop)
        .map_err(|f| f.error)
}

/// A folder a commit needs for its new files.
struct Folder {
    rel: RelPath,
    /// Its parent, and its name there.
    parent: FolderRef,
    name: OsString,
    /// The folder itself.
    this: FolderRef,
    /// Whether this commit made it (one that appeared meanwhile is used, never removed).
    made: bool,
}

/// Makes the folder `rel` inside its parent: one made just before (`folders`), or one that
/// exists, opened from the root without following a symlink.
fn make_folder(
    workspace: &ConfinedRoot,
    rel: &RelPath,
    folders: &[Folder],
    held: &Held,
) -> io::Result<Folder> {
    let parent_rel = rel.parent();
    let parent = match folders.iter().find(|f| Some(&f.rel) == parent_rel.as_ref()) {
        Some(folder) => folder.this.clone(),
        None => {
            let dir = workspace.fs().dir(parent_rel.as_ref())?;
            FolderRef::of(parent_rel, dir, Some(held))?
        }
    };
    let dir = parent.open(workspace)?;
    let name = rel.file_name().to_owned();
    let made = dir.entry_metadata(&name)?.is_none();
    let this = FolderRef::of(Some(rel.clone()), dir.create_dir(&name)?, Some(held))?;
    Ok(Folder { rel: rel.clone(), parent, name, this, made })
}

/// The most folders a commit, or a recovery, opens again and keeps open at once.
const OPEN_FOLDERS: usize = 32;

/// The most folders a commit holds a handle on from its check to its end (see [`Held`]).
const HELD_FOLDERS: usize = 96;

/// A folder of a commit: its path and which folder it was when the commit first opened it,
/// and, for the first [`HELD_FOLDERS`] folders of a commit, the handle opened then.
///
/// A held folder is written through its handle, whatever happens to the names meanwhile. A
/// change of many thousand files in as many folders cannot hold a descriptor for each (the
/// usual limit is 1,024, and 256 on macOS), so a folder beyond those is opened again when
/// needed, from the root one component at a time without following a symlink, and used only
/// if it is still that very folder: a commit writes only into the folders it checked, and a
/// folder swapped meanwhile stops it.
#[derive(Debug, Clone)]
struct FolderRef {
    /// `None` for the root.
    rel: Option<RelPath>,
    /// Its device and inode.
    id: (u64, u64),
    held: Option<Arc<DirHandle>>,
}

impl PartialEq for FolderRef {
    fn eq(&self, other: &Self) -> bool {
        self.rel == other.rel && self.id == other.id
    }
}

impl Eq for FolderRef {}

impl std::hash::Hash for FolderRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.rel.hash(state);
        self.id.hash(state);
    }
}

impl FolderRef {
    /// The folder `dir` is, at `rel`; `held` keeps its handle while it has room.
    fn of(rel: Option<RelPath>, dir: DirHandle, held: Option<&Held>) -> io::Result<FolderRef> {
        let id = dir.dir_id()?;
        let held = held.and_then(|held| held.keep(&rel, id, dir));
        Ok(FolderRef { rel, id, held })
    }

    /// Its handle: the one held, or the folder opened again if it is still this folder.
    fn open(&self, workspace: &ConfinedRoot) -> io::Result<Arc<DirHandle>> {
        if let Some(held) = &self.held {
            return Ok(Arc::clone(held));
        }
        let dir = workspace.fs().dir(self.rel.as_ref())?;
        if dir.dir_id()? != self.id {
            return Err(io::Error::other(format!(
                "the folder {} was replaced by another while staged was writing",
                self.rel.as_ref().map_or_else(|| ".".to_owned(), RelPath::display)
            )));
        }
        Ok(Arc::new(dir))
    }
}

/// A folder's path and its device and inode.
type FolderKey = (Option<RelPath>, (u64, u64));

/// The folder handles a commit holds, one per folder, [`HELD_FOLDERS`] at most.
#[derive(Default)]
struct Held {
    handles: std::sync::Mutex<HashMap<FolderKey, Arc<DirHandle>>>,
}

impl Held {
    /// The handle held on folder `id` at `rel`: the one held already, else `dir` while there
    /// is room, else none.
    fn keep(
        &self,
        rel: &Option<RelPath>,
        id: (u64, u64),
        dir: DirHandle,
    ) -> Option<Arc<DirHandle>> {
        let mut handles = self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (rel.clone(), id);
        if let Some(handle) = handles.get(&key) {
            return Some(Arc::clone(handle));
        }
        if handles.len() >= HELD_FOLDERS {
            return None;
        }
        let handle = Arc::new(dir);
        handles.insert(key, Arc::clone(&handle));
        Some(handle)
    }
}

/// The folders opened last (at most [`OPEN_FOLDERS`]), for the steps taken one after another.
struct OpenFolders<'a> {
    workspace: &'a ConfinedRoot,
    open: HashMap<FolderRef, Arc<DirHandle>>,
}

impl<'a> OpenFolders<'a> {
    fn new(workspace: &'a ConfinedRoot) -> Self {
        OpenFolders { workspace, open: HashMap::new() }
    }

    fn get(&mut self, folder: &FolderRef) -> io::Result<&DirHandle> {
        if self.open.len() >= OPEN_FOLDERS && !self.open.contains_key(folder) {
            self.open.clear();
        }
        match self.open.entry(folder.clone()) {
            std::collections::hash_map::Entry::Occupied(entry) => Ok(entry.into_mut()),
            std::collections::hash_map::Entry::Vacant(entry) => {
                Ok(entry.insert(folder.open(self.workspace)?))
            }
        }
    }
}

/// What recovery tells the pending stack and the resolve log about each journal it settles.
pub trait RecoveryHooks {
    /// A committed journal `journal` (its id) was rolled forward; `origin` is what its commit
    /// recorded ([`CommitOptions::origin`]). Called before the journal is deleted; returns
    /// whether the preview left the stack and the record is final. If not, the journal stays
    /// for a later recovery.
    fn finished(&mut self, journal: &str, origin: Option<&str>) -> bool;

    /// A journal that had not reached its commit point was rolled back (its temps are gone;
    /// no target was touched). Called before the journal is deleted; returns whether what was
    /// prepared under its id is forgotten. If not, the journal stays and a later recovery
    /// rolls it back again.
    fn rolled_back(&mut self, journal: &str, origin: Option<&str>) -> bool;
}

/// How [`recover`] runs, beyond the workspace.
#[derive(Default)]
pub struct RecoverOptions<'a> {
    /// Told about each journal recovery finishes or rolls back, by the journal's id, before
    /// it is deleted; without hooks every journal is deleted once settled.
    pub hooks: Option<&'a mut dyn RecoveryHooks>,
}

impl std::fmt::Debug for RecoverOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecoverOptions").field("hooks", &self.hooks.is_some()).finish()
    }
}

/// Finishes or rolls back every interrupted commit in the workspace's journal folder. Call it
/// on start, before anything else touches the workspace.
///
/// # Errors
/// [`JournalError::StateDir`] when `.staged` or its journal folder is a symlink or not a
/// directory; [`JournalError::Journal`] when replaying a valid journal fails (it is then left
/// in place for a later attempt).
pub fn recover(
    workspace: &ConfinedRoot,
    options: RecoverOptions<'_>,
) -> Result<RecoveryReport, JournalError> {
    struct Forget;
    impl RecoveryHooks for Forget {
        fn finished(&mut self, _journal: &str, _origin: Option<&str>) -> bool {
            true
        }
        fn rolled_back(&mut self, _journal: &str, _origin: Option<&str>) -> bool {
            true
        }
    }
    let mut forget = Forget;
    let hooks: &mut dyn RecoveryHooks = match options.hooks {
        Some(hooks) => hooks,
        None => &mut forget,
    };
    let mut report = RecoveryReport::default();
    let Some(dir) = workspace.journal(false)? else { return Ok(report) };
    let names = dir.names().map_err(|err| journal_err(workspace, &err))?;
    let mut ids: Vec<String> = names
        .iter()
        .filter_map(|name| name.to_str())
        .filter_map(|name| name.strip_suffix(".json.tmp").or_else(|| name.strip_suffix(".json")))
        .filter(|id| is_journal_id(id))
        .map(str::to_owned)
        .collect();
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Ok(report);
    }
    let Some(_lock) = CommitLock::try_exclusive(&dir, workspace)? else {
        // A commit is live somewhere; its journal (and any other) waits for a quiet moment.
        report.in_progress = ids.len();
        return Ok(report);
    };
    for id in ids {
        let _ = dir.remove_file(format!("{id}.json.tmp"));
        let name = journal_name(&id);
        let journal = match read_journal(&dir, &name) {
            Ok(Some(journal)) => journal,
            Ok(None) => continue,
            Err(why) => {
                report.refused.push(refusal(workspace, &id, &why));
                continue;
            }
        };
        let checked = match validate(workspace, &journal, &id) {
            Ok(checked) => checked,
            Err(why) => {
                report.refused.push(refusal(workspace, &id, &why));
                continue;
            }
        };
        match journal.state {
            JournalState::Preparing => {
                let mut open = OpenFolders::new(workspace);
                for entry in &checked.entries {
                    if let (true, Some(dir)) = (entry.temp_exists, &entry.dir) {
                        open.get(dir)
                            .and_then(|dir| dir.remove_file(&entry.temp))
                            .map_err(|err| journal_err(workspace, &err))?;
                    }
                }
                remove_empty_dirs(workspace, &checked.dirs);
                report.rolled_back += 1;
                if hooks.rolled_back(&id, journal.origin.as_deref()) {
                    remove_journal(&dir, &name).map_err(|err| journal_err(workspace, &err))?;
                }
            }
            JournalState::Committed => {
                roll_forward(workspace, &checked, &mut report)?;
                remove_empty_dirs(workspace, &checked.prune);
                report.rolled_forward += 1;
                let retired = hooks.finished(&id, journal.origin.as_deref());
                report.finished_origins.extend(journal.origin.clone());
                if retired {
                    remove_journal(&dir, &name).map_err(|err| journal_err(workspace, &err))?;
                }
            }
        }
    }
    Ok(report)
}

/// Puts the temps of a committed journal in place and deletes what it deletes, in the order
/// a commit does.
fn roll_forward(
    workspace: &ConfinedRoot,
    checked: &Checked,
    report: &mut RecoveryReport,
) -> Result<(), JournalError> {
    let entries = &checked.entries;
    let mut open = OpenFolders::new(workspace);
    for kind in [EntryKind::Create, EntryKind::Replace, EntryKind::Delete] {
        for entry in entries.iter().filter(|e| e.kind == kind) {
            let Some(dir) = &entry.dir else { continue };
            let dir = open.get(dir).map_err(|err| write_err(workspace, &entry.rel, err))?;
            match kind {
                EntryKind::Create if entry.late => {}
                EntryKind::Create if entry.temp_exists => dir
                    .rename_noreplace(&entry.temp, &entry.name)
                    .map_err(|err| write_err(workspace, &entry.rel, err))?,
                EntryKind::Replace if entry.temp_exists => dir
                    .rename(&entry.temp, &entry.name)
                    .map_err(|err| write_err(workspace, &entry.rel, err))?,
                EntryKind::Delete => {
                    let meta = dir
                        .entry_metadata(&entry.name)
                        .map_err(|err| write_err(workspace, &entry.rel, err))?;
                    if meta.as_ref().is_some_and(|meta| meta.is_dir())
                        && checked.late_dirs.contains(&entry.rel)
                    {
                        // Deleted, and a folder made in its place already.
                        continue;
                    }
                    let found = meta.map(|meta| TempIdentity::from(FileIdentity::of_cap(&meta)));
                    match found {
                        Some(found) if Some(found) == entry.victim => dir
                            .remove_file(&entry.name)
                            .map_err(|err| write_err(workspace, &entry.rel, err))?,
                        Some(_) => report.kept.push(format!(
                            "{} changed after an interrupted apply checked it; it was kept, not deleted",
                            entry.rel.display()
                        )),
                        None => {}
                    }
                }
                EntryKind::Create | EntryKind::Replace => {}
            }
        }
    }
    for dir in checked.emptied.iter().rev() {
        remove_emptied(workspace, dir)?;
    }
    for dir in &checked.late_dirs {
        make_late_dir(workspace, dir)?;
    }
    for entry in entries.iter().filter(|e| e.late && e.temp_exists) {
        let Some(dir) = &entry.dir else { continue };
        let stage = open.get(dir).map_err(|err| write_err(workspace, &entry.rel, err))?;
        place_late(workspace, stage, &entry.temp, &entry.rel)
            .map_err(|err| write_err(workspace, &entry.rel, err))?;
    }
    let mut synced = HashSet::new();
    for entry in entries {
        if let Some(dir) = &entry.dir
            && !emptied_or_below(&dir.rel, &checked.emptied)
            && synced.insert(dir)
        {
            open.get(dir).and_then(DirHandle::sync).map_err(|err| journal_err(workspace, &err))?;
        }
    }
    Ok(())
}

/// A journal entry recovery may act on.
struct CheckedEntry {
    rel: RelPath,
    kind: EntryKind,
    /// The folder of the temp file: the target's, or a late create's stage, `up` folders
    /// above; `None` when it does not exist (a commit that never created it).
    dir: Option<FolderRef>,
    late: bool,
    name: OsString,
    temp: OsString,
    temp_exists: bool,
    victim: Option<TempIdentity>,
}

/// A journal's entries and folders, checked.
struct Checked {
    entries: Vec<CheckedEntry>,
    dirs: Vec<RelPath>,
    prune: Vec<RelPath>,
    emptied: Vec<RelPath>,
    late_dirs: Vec<RelPath>,
}

/// Checks everything a journal names before anything is touched.
fn validate(workspace: &ConfinedRoot, journal: &Journal, id: &str) -> Result<Checked, String> {
    if !(OLDEST_JOURNAL_VERSION..=JOURNAL_VERSION).contains(&journal.version) {
        return Err(format!(
            "journal format {} is not one this staged reads ({OLDEST_JOURNAL_VERSION} to {JOURNAL_VERSION})",
            journal.version
        ));
    }
    let folders = |list: &[String]| -> Result<Vec<RelPath>, String> {
        let mut res = Vec::with_capacity(list.len());
        for dir in list {
            res.push(RelPath::new(dir).map_err(|err| err.to_string())?);
        }
        Ok(sorted(&res))
    };
    let emptied = folders(&journal.emptied)?;
    let late_dirs = folders(&journal.late_dirs)?;
    let under_emptied = |rel: &RelPath| {
        let mut cursor = rel.parent();
        while let Some(dir) = cursor {
            if emptied.contains(&dir) {
                return true;
            }
            cursor = dir.parent();
        }
        false
    };
    let mut seen = HashSet::new();
    let mut entries = Vec::with_capacity(journal.entries.len());
    for (i, entry) in journal.entries.iter().enumerate() {
        let rel = RelPath::new(&entry.target).map_err(|err| err.to_string())?;
        if !seen.insert(rel.clone()) {
            return Err(format!("`{}` is listed twice", entry.target));
        }
        if entry.kind == EntryKind::Delete && entry.victim.is_none() {
            return Err(format!("`{}` is to be deleted, but no file is named", entry.target));
        }
        if (entry.late || entry.up > 0) && entry.kind != EntryKind::Create {
            return Err(format!("`{}` waits for the deletes, but is not created", entry.target));
        }
        let Some(stage) = ancestor(&rel, entry.up) else {
            return Err(format!(
                "the temp file of `{}` is said to be above the root",
                entry.target
            ));
        };
        let dir = match workspace.fs().dir(stage.as_ref()) {
            Ok(dir) => Some(dir),
            // A folder a create needed and never got, or one a delete emptied and an undo
            // removed (or one a file took the place of): nothing of this entry is on disk,
            // so nothing is left to do for it.
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) if err.kind() == io::ErrorKind::NotADirectory && under_emptied(&rel) => None,
            Err(err) => {
                return Err(format!(
                    "the folder of `{}` cannot be opened without following a symlink: {err}",
                    entry.target
                ));
            }
        };
        let name = rel.file_name().to_owned();
        let temp = temp_name(&name, id, i);
        let Some(dir) = dir else {
            entries.push(CheckedEntry {
                rel,
                kind: entry.kind,
                dir: None,
                late: entry.late,
                name,
                temp,
                temp_exists: false,
                victim: entry.victim,
            });
            continue;
        };
        // A late create's target is not read: its folder may not be made yet, or it may still
        // be the folder the deletes empty.
        let target_meta = if entry.late {
            None
        } else {
            dir.entry_metadata(&name).map_err(|err| err.to_string())?
        };
        if let Some(meta) = &target_meta
            && !meta.is_file()
            && !(meta.is_dir() && entry.kind == EntryKind::Delete && late_dirs.contains(&rel))
        {
            return Err(format!("`{}` is not a regular file", entry.target));
        }
        let temp_exists = match dir.entry_metadata(&temp).map_err(|err| err.to_string())? {
            Some(meta) if meta.is_file() => true,
            Some(_) => {
                return Err(format!("the temp file of `{}` is not a regular file", entry.target));
            }
            None => false,
        };
        if entry.kind == EntryKind::Delete && temp_exists {
            return Err(format!("`{}` is to be deleted, but has a temp file", entry.target));
        }
        if journal.state == JournalState::Committed && temp_exists {
            let found = dir.identity(&temp).map_err(|err| err.to_string())?.map(TempIdentity::from);
            if entry.temp.is_none() || found != entry.temp {
                return Err(format!(
                    "the temp file of `{}` is not the file staged wrote",
                    entry.target
                ));
            }
            if entry.kind == EntryKind::Create && target_meta.is_some() {
                return Err(format!(
                    "`{}` was to be created, but another file is there now",
                    entry.target
                ));
            }
        }
        let dir = FolderRef::of(stage, dir, None).map_err(|err| err.to_string())?;
        entries.push(CheckedEntry {
            rel,
            kind: entry.kind,
            dir: Some(dir),
            late: entry.late,
            name,
            temp,
            temp_exists,
            victim: entry.victim,
        });
    }
    Ok(Checked {
        entries,
        dirs: folders(&journal.dirs)?,
        prune: folders(&journal.prune)?,
        emptied,
        late_dirs,
    })
}

/// The folder `up` folders above `rel`'s (`Some(None)`: the root); `None` above the root.
fn ancestor(rel: &RelPath, up: u32) -> Option<Option<RelPath>> {
    let mut cursor = rel.parent();
    for _ in 0..up {
        cursor = cursor?.parent();
    }
    Some(cursor)
}

fn refusal(workspace: &ConfinedRoot, id: &str, why: &str) -> String {
    format!(
        "refused the journal {}: {why}. Nothing it names was changed; check those files, then delete the journal.",
        workspace.journal_dir().join(journal_name(id)).display()
    )
}

fn read_journal(dir: &DirHandle, name: &OsStr) -> Result<Option<Journal>, String> {
    let bytes = match dir.read_limited(name, MAX_JOURNAL_BYTES) {
        Ok(bytes) => bytes,
        // Its owner finished between the listing and the lock.
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("it cannot be read: {err}")),
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|err| format!("it is not a journal: {err}"))
}

fn store_journal(dir: &DirHandle, name: &OsStr, journal: &Journal) -> io::Result<()> {
    let text = serde_json::to_vec_pretty(journal).map_err(io::Error::other)?;
    let mut tmp = name.to_owned();
    tmp.push(".tmp");
    let _ = dir.remove_file(&tmp);
    dir.create_new(&tmp, &text, &NewFileMode::Private)?;
    dir.rename(&tmp, name)?;
    dir.sync()
}

fn remove_journal(dir: &DirHandle, name: &OsStr) -> io::Result<()> {
    dir.remove_file(name)?;
    dir.sync()
}

fn journal_dir(workspace: &ConfinedRoot) -> Result<DirHandle, JournalError> {
    workspace.journal(true)?.ok_or_else(|| {
        JournalError::Journal(format!("{} could not be created", workspace.journal_dir().display()))
    })
}

fn journal_name(id: &str) -> OsString {
    OsString::from(format!("{id}.json"))
}

/// The temp file that replaces `name` in commit `id`: `.<name>.staged-<id>-<i>.tmp` beside
/// it. Recovery derives it the same way, and touches no other file.
fn temp_name(name: &OsStr, id: &str, i: usize) -> OsString {
    let mut res = OsString::from(".");
    if name.as_bytes().len() <= MAX_NAME_IN_TEMP {
        res.push(name);
        res.push(".");
    }
    res.push(format!("staged-{id}-{i}.tmp"));
    res
}

/// A commit id: `<pid>-<nanos>-<counter>`.
fn unique_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

fn is_journal_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 40 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The commit lock: shared for a commit, exclusive for recovery. Released when dropped or
/// when its process dies; the file itself is never deleted.
struct CommitLock {
    file: File,
}

impl CommitLock {
    fn open(dir: &DirHandle, workspace: &ConfinedRoot) -> Result<File, JournalError> {
        dir.open_lock_file(LOCK_FILE_NAME).map_err(|err| journal_err(workspace, &err))
    }

    fn shared(dir: &DirHandle, workspace: &ConfinedRoot) -> Result<CommitLock, JournalError> {
        let file = Self::open(dir, workspace)?;
        file.lock_shared().map_err(|err| journal_err(workspace, &err))?;
        Ok(CommitLock { file })
    }

    fn try_exclusive(
        dir: &DirHandle,
        workspace: &ConfinedRoot,
    ) -> Result<Option<CommitLock>, JournalError> {
        let file = Self::open(dir, workspace)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(CommitLock { file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(err)) => Err(journal_err(workspace, &err)),
        }
    }
}

impl Drop for CommitLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// The write lock: exclusive for one commit's check and writes. Released when dropped or when
/// its process dies; the file itself is never deleted.
struct WriteLock {
    file: File,
}

impl WriteLock {
    fn exclusive(dir: &DirHandle, workspace: &ConfinedRoot) -> Result<WriteLock, JournalError> {
        let file =
            dir.open_lock_file(WRITE_LOCK_FILE_NAME).map_err(|err| journal_err(workspace, &err))?;
        file.lock().map_err(|err| journal_err(workspace, &err))?;
        Ok(WriteLock { file })
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

fn journal_err(workspace: &ConfinedRoot, err: &io::Error) -> JournalError {
    JournalError::Journal(format!("{}: {err}", workspace.journal_dir().display()))
}

fn write_err(workspace: &ConfinedRoot, rel: &RelPath, err: io::Error) -> JournalError {
    JournalError::Write {
        path: workspace.root().join(rel.as_path()),
        message: err.to_string(),
        source: err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_derived_and_bounded() {
        assert_eq!(
            temp_name(OsStr::new("a.ts"), "1-2-3", 4),
            OsStr::new(".a.ts.staged-1-2-3-4.tmp")
        );
        let long = "x".repeat(200);
        assert_eq!(temp_name(OsStr::new(&long), "1-2-3", 0), OsStr::new(".staged-1-2-3-0.tmp"));
    }

    #[test]
    fn journal_ids_are_three_numbers() {
        assert!(is_journal_id("12-1700000000000000000-0"));
        for bad in ["", "1-2", "1-2-3-4", "a-b-c", "../1-2-3", "1-2-", "1--3"] {
            assert!(!is_journal_id(bad), "{bad}");
        }
    }

    #[test]
    fn a_format_2_journal_still_reads() {
        let text = r#"{"version": 2, "state": "committed", "entries": [{"target": "a.ts"}], "origin": "x"}"#;
        let journal: Journal = serde_json::from_str(text).unwrap();
        assert_eq!(journal.entries[0].kind, EntryKind::Replace);
        assert!(journal.dirs.is_empty());
    }
}
