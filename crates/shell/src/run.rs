//! One command's run folder, `.staged/shell/<id>/`: `run.json` (who ran what, and in which
//! boot), `upper/` (the overlay's upper layer: what the command wrote), `work/` (the overlay's
//! work folder), and `run.lock`, locked (an OS lock, `flock`) by the wrapper for as long as it
//! lives. Nothing else is made before the command: each file made on the call's path is an
//! inode allocated (and later freed), which on an ext4 without a journal scans past every inode
//! freed in the last minutes (see `bench/RESULTS.md`). The folder
//! is on the workspace's filesystem, so a file the command wrote moves into the tree by a
//! rename. A run whose lock can be taken has lost its wrapper (the command was killed, or the
//! wrapper was): [`Run::leftovers`] finds those of a session for its next hook call. A
//! finished run's folder is renamed as going (`gone-<id>`) and deleted, at once or, for the
//! wrapper, after it answered ([`Run::remove_later`], [`delete_gone`]).
//!
//! A command can outlive its wrapper: a process it left running in the background (`cmd &`,
//! a dev server) keeps the lock (it inherited it) and keeps writing into the upper layer. The
//! wrapper then finds the lock still held once its shell ended ([`Run::settle`]), harvests
//! what was written so far and leaves the run *outliving*: its `harvested.json` (the
//! [`Manifest`](crate::harvest::Manifest) of what was recorded or staged) says so, and each
//! hook call of the session harvests what was written since ([`Run::leftovers`] returns it),
//! until no process holds the lock any more. Whoever harvests holds the run's harvest lock (an
//! OS lock on the run folder itself, through a descriptor never inherited), so one process
//! harvests a run at a time.

use std::{
    fs::File,
    io,
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use rustix::{
    fd::AsFd,
    fs::{FlockOperation, flock},
};
use serde::{Deserialize, Serialize};

use crate::{RUNS_DIR, confined};

/// Who ran a command, and how its writes are handled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    /// The client (`claude-code`, `codex`).
    pub client: String,
    /// The client's session id.
    pub session: String,
    /// The tool call, when the client named it.
    #[serde(default)]
    pub call: Option<String>,
    /// `record` or `gate`.
    pub mode: String,
    /// The command, as the model sent it.
    pub command: String,
    /// The folder it ran in.
    pub cwd: PathBuf,
}

/// One command's run folder, locked while this value lives.
#[derive(Debug)]
pub struct Run {
    dir: PathBuf,
    info: RunInfo,
    _lock: File,
    /// Whether [`Run::remove`] leaves the deleting to [`delete_gone`] (the wrapper's, after
    /// it answered).
    later: bool,
    /// The run folder's harvest lock, held while this process harvests the run.
    harvest: Option<File>,
    /// Whether no process of the command holds the run's lock any more.
    ended: bool,
}

const INFO_FILE: &str = "run.json";
const LOCK_FILE: &str = "run.lock";
const DONE_FILE: &str = "done";
/// What was harvested so far ([`crate::harvest::Manifest`]); there only while the run
/// outlives its wrapper.
const MANIFEST_FILE: &str = "harvested.json";
/// The boot a run made by an earlier staged was made in (one now names it in `run.json`'s
/// `boot`): read when `run.json` names none.
const BOOT_FILE: &str = "boot";
const NEW_PREFIX: &str = "new-";
/// A finished run's folder is renamed to this prefix before it is deleted: a wrapper killed
/// while deleting it (or the child a wrapper leaves to delete it, killed) leaves a folder that
/// says it is finished, which the next wrapper's [`delete_gone`] or the next sweep deletes
/// (deleted in place, a half-deleted folder without its `run.json` would be no run at all, and
/// stay for ever).
pub const GONE_PREFIX: &str = "gone-";

/// How long a run folder being made may lack its lock before a sweep takes it for one whose
/// wrapper died at once.
const UNMADE_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Deletes a run folder whose wrapper died while making it (its lock free; or no lock yet and
/// no process by its maker's id, or none after a minute): its command never ran.
fn forget_unmade(dir: &Path) {
    let dead = match confined::open_lock(&dir.join(LOCK_FILE), false) {
        Ok(lock) => flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok(),
        // No lock yet: its maker was killed before making it, or is about to. The name says
        // which process makes it (`new-<time>-<pid>-<n>`): none by that id is alive, so it
        // died; else (the id taken again, or another PID namespace's) after a while.
        Err(_) => {
            maker_gone(dir)
                || std::fs::metadata(dir)
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > UNMADE_AFTER))
        }
    };
    if dead {
        let _ = delete(dir);
    }
}

/// Whether no process has the id that the unmade run folder `dir`'s name gives its maker.
fn maker_gone(dir: &Path) -> bool {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let Some(pid) = name
        .strip_prefix(NEW_PREFIX)
        .and_then(|rest| rest.split('-').nth(1))
        .and_then(|pid| pid.parse::<i32>().ok())
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
}

/// The file of the workspace's `.staged/` (beside the runs' folder, so that it is never taken
/// for a run or a run's leftover) whose lock a deleter of finished runs' folders holds while
/// it deletes them: one deleter at a time, and one killed lets go of it.
const GONE_LOCK_FILE: &str = "shell-gone.lock";

/// Deletes the folders of finished runs in `state_dir` (the workspace's `.staged/`): those
/// renamed as going (`gone-<id>`), left by [`Run::remove`] after [`Run::remove_later`], or by
/// a deleter (or a wrapper) killed while deleting one. The others are left alone. Only one
/// process deletes at a time (the lock on `gone.lock`, taken without waiting): one that finds
/// another at work leaves the folders to it and returns at once, so a hook call never waits on
/// a wrapper's deleting child; a deleter that was killed has let go of the lock, and the next
/// call deletes what it left.
pub fn delete_gone(state_dir: &Path) {
    // The runs' folder itself, never a symlink put in its place.
    let Ok(runs) = confined::open_dir(None, state_dir.join(RUNS_DIR).as_os_str()) else {
        return;
    };
    let Ok(entries) = confined::names(runs.as_fd()) else { return };
    let gone: Vec<_> = entries
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name.to_string_lossy().starts_with(GONE_PREFIX))
        .collect();
    if gone.is_empty() {
        return;
    }
    // Never through a symlink put in its place (nothing outside the workspace is written),
    // never waiting on a FIFO.
    let Ok(lock) = confined::open_lock(&state_dir.join(GONE_LOCK_FILE), true) else { return };
    if flock(&lock, FlockOperation::NonBlockingLockExclusive).is_err() {
        return;
    }
    for name in gone {
        let _ = confined::remove_tree(runs.as_fd(), &name);
    }
}

/// Opens what a run's harvest lock is taken on: the run folder itself (a descriptor closed on
/// `exec`, so never inherited by a command), which makes no file.
fn open_harvest_lock(dir: &Path) -> io::Result<File> {
    // Never through a symlink put in the folder's place.
    Ok(File::from(confined::open_dir(None, dir.as_os_str())?))
}

/// This boot's id, where the system has one (Linux).
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()
}

/// What `run.json` holds: the run's [`RunInfo`] and the boot it was made in
/// (`/proc/sys/kernel/random/boot_id`; the overlay is mounted `volatile`, so after a system
/// crash what its upper layer holds is undefined).
#[derive(Serialize)]
struct Stored<'a> {
    #[serde(flatten)]
    info: &'a RunInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    boot: Option<String>,
}

/// The boot `run.json` names.
#[derive(Deserialize)]
struct StoredBoot {
    #[serde(default)]
    boot: Option<String>,
}

/// Deletes a run folder that is going (through descriptors: [`confined::remove_tree`]).
fn delete(dir: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no run folder"));
    };
    let parent = confined::open_dir(None, parent.as_os_str())?;
    confined::remove_tree(parent.as_fd(), name)
}

/// The longest `run.json` read (a command is at most the system's argument size).
const MAX_INFO_BYTES: u64 = 16 << 20;

/// The longest manifest read.
const MAX_MANIFEST_BYTES: u64 = 1 << 30;

/// The run folder `dir`'s `run.json`, when `dir` is a run folder staged could have made: a
/// real folder (never a symlink to one), whose upper layer and work folder, where there, are
/// real folders too, and whose `run.json` is a regular file that parses.
fn read_info(dir: &Path) -> Option<RunInfo> {
    if !confined::is_real_dir(dir) {
        return None;
    }
    for layer in ["upper", "work"] {
        if std::fs::symlink_metadata(dir.join(layer)).is_ok_and(|m| !m.is_dir()) {
            return None;
        }
    }
    let bytes = confined::read_regular(&dir.join(INFO_FILE), MAX_INFO_BYTES).ok()?;
    serde_json::from_slice::<RunInfo>(&bytes).ok()
}

impl Run {
    /// Makes a new run folder in `state_dir` (the workspace's `.staged/`) and locks it.
    ///
    /// # Errors
    /// When the folder or its files cannot be made.
    pub fn create(state_dir: &Path, info: RunInfo) -> io::Result<Run> {
        let runs = state_dir.join(RUNS_DIR);
        std::fs::create_dir_all(&runs)?;
        if !confined::is_real_dir(&runs) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a folder (a symlink?)", runs.display()),
            ));
        }
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let mut n = 0u32;
        // Made whole under a `new-` name, then renamed: a sweep never sees a run half made.
        let (new, dir) = loop {
            let name = format!("{nanos:x}-{}-{n}", std::process::id());
            let (new, dir) = (runs.join(format!("{NEW_PREFIX}{name}")), runs.join(name));
            match std::fs::create_dir(&new) {
                Ok(()) => break (new, dir),
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(err) => return Err(err),
            }
        };
        let lock = File::create(new.join(LOCK_FILE))?;
        flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
        std::fs::create_dir(new.join("upper"))?;
        std::fs::create_dir(new.join("work"))?;
        let stored = Stored { info: &info, boot: boot_id() };
        let json = serde_json::to_vec(&stored).map_err(io::Error::other)?;
        std::fs::write(new.join(INFO_FILE), json)?;
        std::fs::rename(&new, &dir)?;
        Ok(Run { dir, info, _lock: lock, later: false, harvest: None, ended: false })
    }

    /// For the wrapper, once the command's shell ended: takes the run's harvest lock (waiting
    /// for a hook call that harvests it now), lets go of the wrapper's own hold of the run's
    /// lock and tells whether another process still holds it: `true` when every process of
    /// the command ended (the run is this process's alone, and finished as always), `false`
    /// when one the command left running holds it (the run outlives its wrapper).
    ///
    /// The caller must have closed every other copy of the lock's descriptor
    /// ([`Run::inheritable_lock`]'s) first.
    ///
    /// # Errors
    /// When the locks cannot be opened or taken.
    pub fn settle(&mut self) -> io::Result<bool> {
        let harvest = open_harvest_lock(&self.dir)?;
        flock(&harvest, FlockOperation::LockExclusive)?;
        self.harvest = Some(harvest);
        // A new open file description: the old one (which the command's processes share)
        // is closed here, so the lock is free exactly when none of them is left. A hook
        // call that takes it for a moment to look (and lets go, the harvest lock being
        // held) is waited out.
        self._lock = confined::open_lock(&self.dir.join(LOCK_FILE), false)?;
        for _ in 0..5 {
            if flock(&self._lock, FlockOperation::NonBlockingLockExclusive).is_ok() {
                self.ended = true;
                return Ok(true);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        Ok(false)
    }

    /// Whether no process of the command holds the run's lock any more (known after
    /// [`Run::settle`] or for a run [`Run::leftovers`] returned).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Whether the run outlived its wrapper (it was harvested while a process of its command
    /// still ran): what was harvested is in its manifest.
    pub fn is_outliving(&self) -> bool {
        self.dir.join(MANIFEST_FILE).exists()
    }

    /// What was harvested of the run so far (empty before the first harvest).
    ///
    /// # Errors
    /// When the manifest is there but cannot be read.
    pub fn manifest(&self) -> io::Result<crate::harvest::Manifest> {
        match confined::read_regular(&self.dir.join(MANIFEST_FILE), MAX_MANIFEST_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(io::Error::other),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                Ok(crate::harvest::Manifest::default())
            }
            Err(err) => Err(err),
        }
    }

    /// Saves what was harvested, durably and whole (a new file synced, then renamed over the
    /// old one): a kill leaves the old manifest or the new one. From then on the run is
    /// outliving ([`Run::is_outliving`]).
    ///
    /// # Errors
    /// When it cannot be written.
    pub fn save_manifest(&self, manifest: &crate::harvest::Manifest) -> io::Result<()> {
        let json = serde_json::to_vec(manifest).map_err(io::Error::other)?;
        let tmp = self.dir.join(format!("{MANIFEST_FILE}.{}", std::process::id()));
        {
            // Made anew (`O_EXCL`): never a file a symlink planted there names.
            let _ = std::fs::remove_file(&tmp);
            let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            io::Write::write_all(&mut file, &json)?;
            file.sync_all()?;
        }
        std::fs::rename(&tmp, self.dir.join(MANIFEST_FILE))?;
        File::open(&self.dir)?.sync_all()
    }

    /// Marks the run of `client`'s session `session` made for the tool call `call` (every run
    /// of the session, for `None`) as one whose call returned while its wrapper still runs
    /// (Codex's `exec_command` yields a command that runs on): it is saved an empty manifest,
    /// so that [`Run::leftovers`] returns it from now on. A run already outliving, finished,
    /// harvested now, or whose processes are all gone is left as it is.
    pub fn mark_returned(state_dir: &Path, client: &str, session: &str, call: Option<&str>) {
        let runs = state_dir.join(RUNS_DIR);
        // Never a runs' folder a symlink names (outside the workspace, maybe).
        if !confined::is_real_dir(&runs) {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&runs) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(NEW_PREFIX)
                || name.starts_with(GONE_PREFIX)
                || name.starts_with("kept")
            {
                continue;
            }
            let dir = entry.path();
            let Some(info) = read_info(&dir) else { continue };
            if info.client != client
                || info.session != session
                || call.is_some_and(|call| info.call.as_deref() != Some(call))
            {
                continue;
            }
            if dir.join(MANIFEST_FILE).exists() || dir.join(DONE_FILE).exists() {
                continue;
            }
            let Ok(harvest) = open_harvest_lock(&dir) else { continue };
            if flock(&harvest, FlockOperation::NonBlockingLockExclusive).is_err() {
                continue;
            }
            let Ok(lock) = confined::open_lock(&dir.join(LOCK_FILE), false) else { continue };
            // No process of it is left: a run whose wrapper died, finished as such.
            if flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok()
                || !dir.join(INFO_FILE).exists()
            {
                continue;
            }
            let run =
                Run { dir, info, _lock: lock, later: false, harvest: Some(harvest), ended: false };
            let _ = run.save_manifest(&crate::harvest::Manifest::default());
        }
    }

    /// The runs in `state_dir` of `client`'s session `session` that a hook call harvests now,
    /// each with its harvest lock taken by this process: those whose wrapper and command are
    /// gone (the run's lock now held by this process; [`Run::ended`]) and those that outlive
    /// their wrapper ([`Run::is_outliving`]) while a process of the command still runs. A
    /// run that another process harvests now is skipped, and a folder that is not a run (no
    /// readable `run.json`) is left alone.
    pub fn leftovers(state_dir: &Path, client: &str, session: &str) -> Vec<Run> {
        delete_gone(state_dir);
        let runs = state_dir.join(RUNS_DIR);
        // Never a runs' folder a symlink names (outside the workspace, maybe).
        if !confined::is_real_dir(&runs) {
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir(&runs) else { return Vec::new() };
        let mut res = Vec::new();
        for entry in entries.flatten() {
            let dir = entry.path();
            if entry.file_name().to_string_lossy().starts_with(NEW_PREFIX) {
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    forget_unmade(&dir);
                }
                continue;
            }
            if entry.file_name().to_string_lossy().starts_with(GONE_PREFIX) {
                continue;
            }
            let Some(info) = read_info(&dir) else { continue };
            if info.client != client || info.session != session {
                continue;
            }
            let Ok(lock) = confined::open_lock(&dir.join(LOCK_FILE), false) else { continue };
            let ended = flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok();
            if !ended && !dir.join(MANIFEST_FILE).exists() {
                continue;
            }
            let Ok(harvest) = open_harvest_lock(&dir) else { continue };
            if flock(&harvest, FlockOperation::NonBlockingLockExclusive).is_err() {
                continue;
            }
            // Finished (and renamed away) by another process before the lock was taken.
            if !dir.join(INFO_FILE).exists() {
                continue;
            }
            res.push(Run { dir, info, _lock: lock, later: false, harvest: Some(harvest), ended });
        }
        res.sort_by(|a, b| a.dir.cmp(&b.dir));
        res
    }

    /// A descriptor of the run's lock that a child process inherits (no close-on-exec): the
    /// command's processes hold the lock with it, so a run whose wrapper died is finished only
    /// once every process of its command that kept it is gone too, never while one still
    /// writes.
    ///
    /// # Errors
    /// When the descriptor cannot be duplicated.
    pub fn inheritable_lock(&self) -> io::Result<rustix::fd::OwnedFd> {
        Ok(rustix::io::dup(&self._lock)?)
    }

    /// Marks the run finished (its writes recorded or staged), so that a sweep after a kill
    /// between that and the folder's removal only removes it.
    ///
    /// # Errors
    /// When the mark cannot be written.
    pub fn mark_done(&self) -> io::Result<()> {
        confined::write_regular(&self.dir.join(DONE_FILE), b"")
    }

    /// Whether the run was made before the system last started: its command's writes were
    /// never synced (the overlay is `volatile`), so a crash may have left them incomplete,
    /// and they must not be taken for what the command wrote. A run whose boot cannot be
    /// told (no boot file, or no boot id now) counts as made before: it is never recorded.
    pub fn from_earlier_boot(&self) -> bool {
        let named = confined::read_regular(&self.dir.join(INFO_FILE), MAX_INFO_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<StoredBoot>(&bytes).ok())
            .and_then(|stored| stored.boot);
        let then = match named {
            Some(boot) => Some(boot),
            // A run made by an earlier staged, which kept its boot in a file of its own.
            None => confined::read_regular(&self.dir.join(BOOT_FILE), 4096)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok()),
        };
        match (then, boot_id()) {
            (Some(then), Some(now)) => then != now,
            _ => true,
        }
    }

    /// Whether the run was marked finished.
    pub fn is_done(&self) -> bool {
        self.dir.join(DONE_FILE).exists()
    }

    /// The run folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The upper layer: what the command wrote.
    pub fn upper(&self) -> PathBuf {
        self.dir.join("upper")
    }

    /// The overlay's work folder.
    pub fn work(&self) -> PathBuf {
        self.dir.join("work")
    }

    /// Who ran what.
    pub fn info(&self) -> &RunInfo {
        &self.info
    }

    /// Makes [`Run::remove`] only rename the folder as going (`gone-<id>`, which no sweep
    /// takes for a run), leaving the deleting to [`delete_gone`]: the wrapper deletes it after
    /// it answered, off the shell call's time. Deleting a run's folders waits on the
    /// filesystem (each `rmdir` 1 to 4 ms on a busy ext4), which no promise needs before the
    /// call returns: the run's writes are recorded or staged by then, and the folder is
    /// marked finished.
    pub fn remove_later(&mut self) {
        self.later = true;
    }

    /// Deletes the run folder (what is left of the upper layer with it); after
    /// [`Run::remove_later`], only renames it as going.
    ///
    /// # Errors
    /// When it cannot be renamed or deleted.
    pub fn remove(self) -> io::Result<()> {
        let name = self.dir.file_name().map(std::ffi::OsStr::to_string_lossy).unwrap_or_default();
        let gone = self.dir.with_file_name(format!("{GONE_PREFIX}{name}"));
        std::fs::rename(&self.dir, &gone)?;
        if self.later {
            return Ok(());
        }
        delete(&gone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(session: &str) -> RunInfo {
        RunInfo {
            client: "claude-code".to_owned(),
            session: session.to_owned(),
            call: None,
            mode: "record".to_owned(),
            command: "true".to_owned(),
            cwd: PathBuf::from("/"),
        }
    }

    #[test]
    fn a_run_whose_wrapper_died_while_deleting_it_is_deleted_by_a_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::create(dir.path(), info("s1")).unwrap();
        let path = run.dir().to_path_buf();
        drop(run);
        // As `remove` leaves it when killed half-way through deleting: renamed, its
        // `run.json` already gone, the rest still there.
        let gone = path.with_file_name(format!(
            "{GONE_PREFIX}{}",
            path.file_name().unwrap().to_string_lossy()
        ));
        std::fs::rename(&path, &gone).unwrap();
        std::fs::remove_file(gone.join(INFO_FILE)).unwrap();
        assert!(Run::leftovers(dir.path(), "claude-code", "s1").is_empty());
        assert!(!gone.exists(), "the half-deleted run is still there");
        assert_eq!(std::fs::read_dir(dir.path().join(RUNS_DIR)).unwrap().count(), 0);
    }

    #[test]
    fn a_run_removed_later_is_only_renamed_going_until_the_gone_are_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = Run::create(dir.path(), info("s1")).unwrap();
        std::fs::create_dir_all(run.upper().join("d")).unwrap();
        std::fs::write(run.upper().join("d/f"), "x").unwrap();
        let other = Run::create(dir.path(), info("s2")).unwrap();
        let path = run.dir().to_path_buf();
        run.remove_later();
        run.remove().unwrap();
        assert!(!path.exists());
        let runs = dir.path().join(RUNS_DIR);
        let names = || -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(&runs)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        let gone = format!("{GONE_PREFIX}{}", path.file_name().unwrap().to_string_lossy());
        assert!(names().contains(&gone), "{:?}", names());
        // Deleted whole; a live run stays.
        delete_gone(dir.path());
        assert_eq!(names(), [other.dir().file_name().unwrap().to_string_lossy().into_owned()]);
    }

    /// Rewrites `run.json`'s boot (`None`: names none).
    fn set_boot(run: &Run, boot: Option<&str>) {
        let path = run.dir().join(INFO_FILE);
        let mut json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        match boot {
            Some(boot) => json["boot"] = boot.into(),
            None => {
                json.as_object_mut().unwrap().remove("boot");
            }
        }
        std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    }

    #[test]
    fn a_run_of_an_earlier_boot_says_so_and_one_of_this_boot_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::create(dir.path(), info("s1")).unwrap();
        // Where the boot cannot be told, no run is taken for this boot's.
        assert_eq!(run.from_earlier_boot(), boot_id().is_none());
        if boot_id().is_some() {
            set_boot(&run, Some("another boot\n"));
            assert!(run.from_earlier_boot());
        }
    }

    #[test]
    fn a_run_whose_boot_is_not_named_counts_as_an_earlier_boots() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::create(dir.path(), info("s1")).unwrap();
        set_boot(&run, None);
        assert!(run.from_earlier_boot(), "a run of an unknown boot would be recorded");
    }

    #[test]
    fn a_run_made_by_an_earlier_staged_is_told_its_boot_by_its_boot_file() {
        let Some(now) = boot_id() else { return };
        let dir = tempfile::tempdir().unwrap();
        let run = Run::create(dir.path(), info("s1")).unwrap();
        set_boot(&run, None);
        std::fs::write(run.dir().join(BOOT_FILE), &now).unwrap();
        assert!(!run.from_earlier_boot());
        std::fs::write(run.dir().join(BOOT_FILE), "another boot\n").unwrap();
        assert!(run.from_earlier_boot());
    }

    #[test]
    fn a_run_folder_holds_only_its_info_lock_and_layers_before_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = Run::create(dir.path(), info("s1")).unwrap();
        let names = |run: &Run| {
            let mut names: Vec<String> = std::fs::read_dir(run.dir())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(&run), [INFO_FILE, LOCK_FILE, "upper", "work"]);
        let info: RunInfo =
            serde_json::from_slice(&std::fs::read(run.dir().join(INFO_FILE)).unwrap()).unwrap();
        assert_eq!(&info, run.info());
        // Settling (the harvest lock taken) makes no file either.
        drop(run.inheritable_lock().unwrap());
        assert!(run.settle().unwrap());
        assert_eq!(names(&run), [INFO_FILE, LOCK_FILE, "upper", "work"]);
    }

    #[test]
    fn a_run_of_many_files_is_deleted_whole() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::create(dir.path(), info("s1")).unwrap();
        for d in 0..10 {
            let sub = run.upper().join(format!("d{d}"));
            std::fs::create_dir_all(&sub).unwrap();
            for f in 0..20 {
                std::fs::write(sub.join(format!("f{f}")), "x").unwrap();
            }
        }
        let path = run.dir().to_path_buf();
        run.remove().unwrap();
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path().join(RUNS_DIR)).unwrap().count(), 0);
    }

    #[test]
    fn a_live_run_is_no_leftover_and_a_dead_ones_is_its_sessions_only() {
        let dir = tempfile::tempdir().unwrap();
        let live = Run::create(dir.path(), info("s1")).unwrap();
        assert!(Run::leftovers(dir.path(), "claude-code", "s1").is_empty());
        let path = live.dir().to_path_buf();
        drop(live);
        assert!(Run::leftovers(dir.path(), "claude-code", "s2").is_empty());
        let found = Run::leftovers(dir.path(), "claude-code", "s1");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].dir(), path);
        // Taken by this sweep: another sees none until it is dropped.
        assert!(Run::leftovers(dir.path(), "claude-code", "s1").is_empty());
        let run = found.into_iter().next().unwrap();
        run.remove().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn an_outliving_run_is_harvested_by_one_process_at_a_time_until_its_last_process_ends() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = Run::create(dir.path(), info("s1")).unwrap();
        // A process of the command, still holding the run's lock.
        let process = run.inheritable_lock().unwrap();
        assert!(!run.settle().unwrap(), "a process still holds the lock");
        run.save_manifest(&crate::harvest::Manifest::default()).unwrap();
        assert!(run.is_outliving());
        drop(run);
        let first = Run::leftovers(dir.path(), "claude-code", "s1");
        assert_eq!(first.len(), 1);
        assert!(!first[0].ended());
        // Another hook call of the session meanwhile: the run is being harvested.
        assert!(Run::leftovers(dir.path(), "claude-code", "s1").is_empty());
        drop(first);
        drop(process);
        let last = Run::leftovers(dir.path(), "claude-code", "s1");
        assert_eq!(last.len(), 1);
        assert!(last[0].ended(), "no process holds the lock any more");
    }

    #[test]
    fn a_wrapper_whose_command_left_nothing_running_settles_the_run_as_ended() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = Run::create(dir.path(), info("s1")).unwrap();
        drop(run.inheritable_lock().unwrap());
        assert!(run.settle().unwrap());
        assert!(run.ended());
        assert!(Run::leftovers(dir.path(), "claude-code", "s1").is_empty());
    }

    #[test]
    fn a_run_whose_wrapper_died_while_making_it_is_deleted_by_a_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let unmade = dir.path().join(RUNS_DIR).join("new-1-2-0");
        std::fs::create_dir_all(&unmade).unwrap();
        File::create(unmade.join(LOCK_FILE)).unwrap();
        assert!(Run::leftovers(dir.path(), "claude-code", "s1").is_empty());
        assert!(!unmade.exists());
        // One still being made (its lock held) stays.
        std::fs::create_dir_all(&unmade).unwrap();
        let lock = File::create(unmade.join(LOCK_FILE)).unwrap();
        flock(&lock, FlockOperation::NonBlockingLockExclusive).unwrap();
        assert!(Run::leftovers(dir.path(), "claude-code", "s1").is_empty());
        assert!(unmade.exists());
    }

    #[test]
    fn a_run_folder_whose_maker_died_before_its_lock_is_deleted_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join(RUNS_DIR);
        // A process that has ended: its id is free (until the system gives it again).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let orphan = runs.join(format!("new-1-{dead}-0"));
        let live = runs.join(format!("new-1-{}-0", std::process::id()));
        for folder in [&orphan, &live] {
            std::fs::create_dir_all(folder.join("upper")).unwrap();
        }
        assert!(Run::leftovers(dir.path(), "claude-code", "s1").is_empty());
        assert!(!orphan.exists(), "a folder whose maker is gone waits for no one");
        assert!(live.exists(), "a folder a live process may still be making is kept");
    }

    #[test]
    fn gone_folders_wait_for_a_live_deleter_and_are_deleted_once_it_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = Run::create(dir.path(), info("s1")).unwrap();
        std::fs::write(run.upper().join("f"), "x").unwrap();
        let path = run.dir().to_path_buf();
        run.remove_later();
        run.remove().unwrap();
        let gone = path.with_file_name(format!(
            "{GONE_PREFIX}{}",
            path.file_name().unwrap().to_string_lossy()
        ));
        assert!(gone.exists());
        // Another deleter at work: this call does not wait for it, nor delete beside it.
        let held = File::create(dir.path().join(GONE_LOCK_FILE)).unwrap();
        flock(&held, FlockOperation::NonBlockingLockExclusive).unwrap();
        delete_gone(dir.path());
        assert!(gone.exists());
        // That deleter killed: its lock is let go, and the next call deletes what it left.
        drop(held);
        delete_gone(dir.path());
        assert!(!gone.exists());
    }

    #[test]
    fn the_gone_lock_is_never_opened_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let mut run = Run::create(dir.path(), info("s1")).unwrap();
        run.remove_later();
        run.remove().unwrap();
        let target = outside.path().join("made");
        std::os::unix::fs::symlink(&target, dir.path().join(GONE_LOCK_FILE)).unwrap();
        delete_gone(dir.path());
        assert!(!target.exists(), "a file was made outside through the symlink");
    }
}
