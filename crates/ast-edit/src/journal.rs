//! All-or-nothing writes, with a journal in `<root>/.staged/journal/` so that [`recover`] can
//! finish or roll back a commit that a crash (or kill -9) interrupted.
//!
//! The protocol, for one file or many:
//! 1. take the commit lock (shared), then the write lock (exclusive, so that no other staged
//!    commit writes between this one's check and its renames), and check every target still
//!    has the fingerprint the preview read;
//! 2. write the journal in state `preparing`, listing every target relative to the root, and
//!    call the caller's prepare hook with the journal's id (the resolve log stores the record
//!    under it);
//! 3. write and fsync every temp file, beside its target and with its permissions;
//! 4. switch the journal to `committed` (an atomic rename): the commit point;
//! 5. rename each temp over its target;
//! 6. retire the pending preview (the caller's hook), so that it leaves the stack before the
//!    journal that proves it was written;
//! 7. delete the journal.
//!
//! Before the commit point no target has been touched, so recovery deletes the temps (roll
//! back, telling its hooks, so the prepared record is forgotten). After it every new content
//! is durable in a temp file or already in place, so recovery renames the remaining temps and
//! retires the preview, making its record final (roll forward). Either way every file ends
//! wholly old or wholly new, all files agree, and the stack and the log agree with them.
//!
//! **Liveness.** Every commit holds a shared OS lock on `journal/commit.lock` from before its
//! fingerprint check until its journal is gone; recovery runs only under the exclusive lock,
//! so it never acts while any commit in any process is live. The lock file is never deleted,
//! so no process can ever hold a lock on a file that no longer guards anything. The OS drops a
//! dead process's lock, however it died.
//!
//! **Distrust.** A journal is input like any other file in the workspace. Recovery re-confines
//! every target (a relative path, opened one directory at a time without following a
//! symlink), derives each temp file's name itself from the journal id, and touches only those
//! temps and targets. A journal that names anything else is refused with a message, and
//! nothing is changed.

use std::{
    collections::HashSet,
    ffi::{OsStr, OsString},
    fs::File,
    io::{self, Read},
    os::unix::{ffi::OsStrExt, fs::PermissionsExt},
};

use serde::{Deserialize, Serialize};
use staged_fs::{DirHandle, FileIdentity, NewFileMode, RelPath};

use crate::{AstEditError, Workspace, fingerprint::fingerprint};

/// One file to replace.
#[derive(Debug, Clone)]
pub struct FileWrite {
    /// The target, relative to the workspace root.
    pub target: RelPath,
    /// The fingerprint the target must still have (what the preview read).
    pub expected_fingerprint: String,
    /// The new contents.
    pub contents: String,
}

/// A point in the commit protocol, reported after it is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitStep {
    /// The journal exists in state `preparing`.
    Prepared,
    /// The temp file of the n-th write is durable.
    TempWritten(usize),
    /// The journal is `committed`.
    Committed,
    /// The n-th target has been replaced.
    Replaced(usize),
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
}

impl RecoveryReport {
    /// Whether recovery changed or found anything worth reporting.
    pub fn is_empty(&self) -> bool {
        *self == RecoveryReport::default()
    }
}

/// The journal format this build writes and reads.
const JOURNAL_VERSION: u32 = 2;

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

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JournalEntry {
    /// The target, relative to the root, `/`-separated.
    target: String,
    /// Which file the temp is, recorded at the commit point: a committed journal is rolled
    /// forward only onto temps that are still exactly the files this commit wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    temp: Option<TempIdentity>,
}

/// A temp file's [`FileIdentity`], as the journal stores it.
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
    /// Who committed: for `ast_edit`, the pending id of the preview.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    origin: Option<String>,
}

/// [`CommitOptions::prepare`]: called with the journal's id; an error message stops the commit.
pub type PrepareHook<'a> = dyn FnMut(&str) -> Result<(), String> + 'a;

/// How a commit runs, beyond its writes.
#[derive(Default)]
pub struct CommitOptions<'a> {
    /// Recorded in the journal; [`recover`] hands it to its retire hook when it finishes the
    /// commit. `ast_edit` records the preview's pending id.
    pub origin: Option<&'a str>,
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

/// Writes every file or none.
///
/// # Errors
/// [`AstEditError::Drifted`] (nothing written) when a target changed since the preview;
/// [`AstEditError::Write`]/[`AstEditError::Journal`] on I/O failure, or when a target is not a
/// regular file reached without symlinks.
pub fn commit(workspace: &Workspace, writes: &[FileWrite]) -> Result<(), AstEditError> {
    commit_with(workspace, writes, CommitOptions::default())
}

/// [`commit`], calling `observer` after each durable step.
///
/// # Errors
/// As [`commit`].
pub fn commit_observed(
    workspace: &Workspace,
    writes: &[FileWrite],
    observer: &mut dyn FnMut(CommitStep),
) -> Result<(), AstEditError> {
    commit_with(workspace, writes, CommitOptions { observer: Some(observer), ..Default::default() })
}

/// [`commit`] with an origin, a retire hook and an observer.
///
/// # Errors
/// As [`commit`].
pub fn commit_with(
    workspace: &Workspace,
    writes: &[FileWrite],
    mut options: CommitOptions<'_>,
) -> Result<(), AstEditError> {
    let mut observe = |step| {
        if let Some(observer) = options.observer.as_mut() {
            observer(step);
        }
    };
    let journal_dir = journal_dir(workspace)?;
    let _lock = CommitLock::shared(&journal_dir, workspace)?;
    let _write_lock = WriteLock::exclusive(&journal_dir, workspace)?;
    let targets = open_targets(workspace, writes)?;

    let id = unique_id();
    let journal = Journal {
        version: JOURNAL_VERSION,
        state: JournalState::Preparing,
        entries: targets
            .iter()
            .map(|t| JournalEntry { target: t.display.clone(), temp: None })
            .collect(),
        origin: options.origin.map(str::to_owned),
    };
    let name = journal_name(&id);
    store_journal(&journal_dir, &name, &journal).map_err(|err| journal_err(workspace, &err))?;
    if let Some(prepare) = options.prepare.as_mut()
        && let Err(why) = prepare(&id)
    {
        roll_back(&[], &id, &journal_dir, &name);
        return Err(AstEditError::Journal(why));
    }
    let mut abandon = |targets: &[OpenTarget]| {
        roll_back(targets, &id, &journal_dir, &name);
        if let Some(abandon) = options.abandon.as_mut() {
            abandon(&id);
        }
    };
    observe(CommitStep::Prepared);
    let mut journal = journal;
    for (i, (target, write)) in targets.iter().zip(writes).enumerate() {
        let temp = temp_name(&target.name, &id, i);
        let mode = NewFileMode::Mode(target.mode);
        match target.dir.create_new(&temp, write.contents.as_bytes(), &mode) {
            Ok(identity) => journal.entries[i].temp = Some(identity.into()),
            Err(err) => {
                abandon(&targets[..i]);
                return Err(write_err(workspace, &target.rel, &err));
            }
        }
        observe(CommitStep::TempWritten(i));
    }
    if let Err(err) = sync_dirs(&targets) {
        abandon(&targets);
        return Err(journal_err(workspace, &err));
    }
    let journal = Journal { state: JournalState::Committed, ..journal };
    if let Err(err) = store_journal(&journal_dir, &name, &journal) {
        // The journal still says `preparing` (the switch is one rename): roll back.
        abandon(&targets);
        return Err(journal_err(workspace, &err));
    }
    observe(CommitStep::Committed);
    for (i, target) in targets.iter().enumerate() {
        target
            .dir
            .rename(temp_name(&target.name, &id, i), &target.name)
            .map_err(|err| write_err(workspace, &target.rel, &err))?;
        observe(CommitStep::Replaced(i));
    }
    sync_dirs(&targets).map_err(|err| journal_err(workspace, &err))?;
    if let Some(retire) = options.retire.as_mut() {
        if !retire() {
            // The preview may still be listed: keep the journal so that recovery retires it.
            return Ok(());
        }
        observe(CommitStep::Retired);
    }
    remove_journal(&journal_dir, &name).map_err(|err| journal_err(workspace, &err))?;
    observe(CommitStep::Finished);
    Ok(())
}

/// A target, opened for the commit.
struct OpenTarget {
    rel: RelPath,
    display: String,
    dir: DirHandle,
    name: OsString,
    mode: u32,
}

/// Opens every target's directory without following symlinks and checks that the target is
/// still the regular file the preview read.
fn open_targets(
    workspace: &Workspace,
    writes: &[FileWrite],
) -> Result<Vec<OpenTarget>, AstEditError> {
    let mut seen = HashSet::new();
    let mut res = Vec::with_capacity(writes.len());
    for write in writes {
        let rel = &write.target;
        let Some(display) = rel.to_str().map(str::to_owned) else {
            return Err(write_err(
                workspace,
                rel,
                &io::Error::new(io::ErrorKind::InvalidInput, "the file name is not UTF-8"),
            ));
        };
        if !seen.insert(rel.clone()) {
            return Err(AstEditError::Journal(format!("{display} is written twice")));
        }
        let (dir, name) =
            workspace.fs().parent(rel).map_err(|err| write_err(workspace, rel, &err))?;
        let (current, mode) = read_with_mode(&dir, &name).map_err(|err| AstEditError::Read {
            path: workspace.root().join(rel.as_path()),
            message: err.to_string(),
        })?;
        if fingerprint(&current) != write.expected_fingerprint {
            return Err(AstEditError::Drifted(rel.display()));
        }
        res.push(OpenTarget { rel: rel.clone(), display, dir, name, mode });
    }
    Ok(res)
}

fn read_with_mode(dir: &DirHandle, name: &OsStr) -> io::Result<(Vec<u8>, u32)> {
    let mut file: File = dir.open_file(name)?;
    let mode = file.metadata()?.permissions().mode();
    let mut buf = Vec::new();
    file.read_to_end(&mut buf)?;
    Ok((buf, mode))
}

/// Deletes the temps of the first `targets` and the journal; best effort, since nothing was
/// replaced yet and a leftover is cleaned by recovery.
fn roll_back(targets: &[OpenTarget], id: &str, journal_dir: &DirHandle, journal: &OsStr) {
    for (i, target) in targets.iter().enumerate() {
        let _ = target.dir.remove_file(temp_name(&target.name, id, i));
    }
    let _ = remove_journal(journal_dir, journal);
}

fn sync_dirs(targets: &[OpenTarget]) -> io::Result<()> {
    let mut synced = HashSet::new();
    for target in targets {
        if synced.insert(target.rel.parent()) {
            target.dir.sync()?;
        }
    }
    Ok(())
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

/// Finishes or rolls back every interrupted commit in the workspace's journal folder. Call it
/// on start, before anything else touches the workspace.
///
/// # Errors
/// As [`recover_with`].
pub fn recover(workspace: &Workspace) -> Result<RecoveryReport, AstEditError> {
    recover_with(workspace, &mut |_| true)
}

/// [`recover`], calling `retire(origin)` for each finished commit that recorded an origin,
/// before its journal is deleted. `retire` returns whether the preview left the stack; if
/// not, the journal stays for a later recovery.
///
/// # Errors
/// As [`recover_hooked`].
pub fn recover_with(
    workspace: &Workspace,
    retire: &mut dyn FnMut(&str) -> bool,
) -> Result<RecoveryReport, AstEditError> {
    struct Retire<'a>(&'a mut dyn FnMut(&str) -> bool);
    impl RecoveryHooks for Retire<'_> {
        fn finished(&mut self, _journal: &str, origin: Option<&str>) -> bool {
            origin.is_none_or(&mut *self.0)
        }
        fn rolled_back(&mut self, _journal: &str, _origin: Option<&str>) -> bool {
            true
        }
    }
    recover_hooked(workspace, &mut Retire(retire))
}

/// [`recover`], telling `hooks` about each journal it finishes or rolls back, by the
/// journal's id, before deleting it.
///
/// # Errors
/// [`AstEditError::StateDir`] when `.staged` or its journal folder is a symlink or not a
/// directory; [`AstEditError::Journal`] when replaying a valid journal fails (it is then left in
/// place for a later attempt).
pub fn recover_hooked(
    workspace: &Workspace,
    hooks: &mut dyn RecoveryHooks,
) -> Result<RecoveryReport, AstEditError> {
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
        let entries = match validate(workspace, &journal, &id) {
            Ok(entries) => entries,
            Err(why) => {
                report.refused.push(refusal(workspace, &id, &why));
                continue;
            }
        };
        match journal.state {
            JournalState::Preparing => {
                for entry in &entries {
                    if entry.temp_exists {
                        entry
                            .dir
                            .remove_file(&entry.temp)
                            .map_err(|err| journal_err(workspace, &err))?;
                    }
                }
                report.rolled_back += 1;
                if hooks.rolled_back(&id, journal.origin.as_deref()) {
                    remove_journal(&dir, &name).map_err(|err| journal_err(workspace, &err))?;
                }
            }
            JournalState::Committed => {
                for entry in &entries {
                    if entry.temp_exists {
                        entry
                            .dir
                            .rename(&entry.temp, &entry.name)
                            .map_err(|err| write_err(workspace, &entry.rel, &err))?;
                    }
                }
                for entry in &entries {
                    entry.dir.sync().map_err(|err| journal_err(workspace, &err))?;
                }
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

/// A journal entry recovery may act on.
struct CheckedEntry {
    rel: RelPath,
    dir: DirHandle,
    name: OsString,
    temp: OsString,
    temp_exists: bool,
}

/// Checks everything a journal names before anything is touched.
fn validate(
    workspace: &Workspace,
    journal: &Journal,
    id: &str,
) -> Result<Vec<CheckedEntry>, String> {
    if journal.version != JOURNAL_VERSION {
        return Err(format!(
            "journal format {} is not the one this staged reads ({JOURNAL_VERSION})",
            journal.version
        ));
    }
    let mut seen = HashSet::new();
    let mut res = Vec::with_capacity(journal.entries.len());
    for (i, entry) in journal.entries.iter().enumerate() {
        let rel = RelPath::new(&entry.target).map_err(|err| err.to_string())?;
        if !seen.insert(rel.clone()) {
            return Err(format!("`{}` is listed twice", entry.target));
        }
        let (dir, name) = workspace.fs().parent(&rel).map_err(|err| {
            format!(
                "the folder of `{}` cannot be opened without following a symlink: {err}",
                entry.target
            )
        })?;
        if let Some(meta) = dir.entry_metadata(&name).map_err(|err| err.to_string())?
            && !meta.is_file()
        {
            return Err(format!("`{}` is not a regular file", entry.target));
        }
        let temp = temp_name(&name, id, i);
        let temp_exists = match dir.entry_metadata(&temp).map_err(|err| err.to_string())? {
            Some(meta) if meta.is_file() => true,
            Some(_) => {
                return Err(format!("the temp file of `{}` is not a regular file", entry.target));
            }
            None => false,
        };
        if journal.state == JournalState::Committed && temp_exists {
            let found = dir.identity(&temp).map_err(|err| err.to_string())?.map(TempIdentity::from);
            if entry.temp.is_none() || found != entry.temp {
                return Err(format!(
                    "the temp file of `{}` is not the file staged wrote",
                    entry.target
                ));
            }
        }
        res.push(CheckedEntry { rel, dir, name, temp, temp_exists });
    }
    Ok(res)
}

fn refusal(workspace: &Workspace, id: &str, why: &str) -> String {
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

fn journal_dir(workspace: &Workspace) -> Result<DirHandle, AstEditError> {
    workspace.journal(true)?.ok_or_else(|| {
        AstEditError::Journal(format!("{} could not be created", workspace.journal_dir().display()))
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
    fn open(dir: &DirHandle, workspace: &Workspace) -> Result<File, AstEditError> {
        dir.open_lock_file(LOCK_FILE_NAME).map_err(|err| journal_err(workspace, &err))
    }

    fn shared(dir: &DirHandle, workspace: &Workspace) -> Result<CommitLock, AstEditError> {
        let file = Self::open(dir, workspace)?;
        file.lock_shared().map_err(|err| journal_err(workspace, &err))?;
        Ok(CommitLock { file })
    }

    fn try_exclusive(
        dir: &DirHandle,
        workspace: &Workspace,
    ) -> Result<Option<CommitLock>, AstEditError> {
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
    fn exclusive(dir: &DirHandle, workspace: &Workspace) -> Result<WriteLock, AstEditError> {
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

fn journal_err(workspace: &Workspace, err: &io::Error) -> AstEditError {
    AstEditError::Journal(format!("{}: {err}", workspace.journal_dir().display()))
}

fn write_err(workspace: &Workspace, rel: &RelPath, err: &io::Error) -> AstEditError {
    AstEditError::Write { path: workspace.root().join(rel.as_path()), message: err.to_string() }
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
}
