//! [`commit`]: the protocol of the journal's module doc, step by step: check (see `check.rs`),
//! prepare, write, the commit point, put in place, retire, finish. A failure before the commit
//! point rolls back ([`Undo`]); after it, what is left is recovery's.

use std::{collections::HashSet, ffi::OsStr, io};

use staged_fs::{DirHandle, RelPath};

use crate::{
    ConfinedRoot, JournalError,
    journal::{
        CommitReport, CommitStep, Step, StepChange,
        check::{OpenTarget, check_targets},
        folders::{
            Folder, FolderRef, Held, OpenFolders, emptied_or_below, make_folder, make_late_dir,
            place_late, remove_emptied, remove_empty_dirs, sorted,
        },
        format::{
            EntryKind, JOURNAL_VERSION, Journal, JournalEntry, JournalState, TempIdentity,
            journal_dir, journal_name, remove_journal, store_journal, temp_name, unique_id,
        },
        journal_err,
        lock::{CommitLock, WriteLock},
        write_err,
    },
    par,
};

/// [`CommitOptions::prepare`]: called with the journal's id; an error message stops the commit.
pub type PrepareHook<'a> = dyn FnMut(&str) -> Result<(), String> + 'a;

/// How a commit runs, beyond its writes.
#[derive(Default)]
pub struct CommitOptions<'a> {
    /// Recorded in the journal; [`crate::recover`] hands it to
    /// [`crate::RecoveryHooks::finished`] when it finishes the commit. A preview records its
    /// pending id.
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

/// How a commit is taken back: its temps, its folders and its journal.
pub(super) struct Undo<'a> {
    pub(super) workspace: &'a ConfinedRoot,
    pub(super) id: &'a str,
    pub(super) journal_dir: &'a DirHandle,
    pub(super) journal: &'a OsStr,
}

impl Undo<'_> {
    /// Deletes the temps of the `targets` marked `written`, then the folders it made
    /// (deepest first, through their parents' handles, each only while empty), then the
    /// journal; best effort, since nothing was replaced yet and a leftover is cleaned by
    /// recovery.
    pub(super) fn roll_back(&self, targets: &[OpenTarget], written: &[bool], folders: &[Folder]) {
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
    pub(super) fn uncommit(
        &self,
        targets: &[OpenTarget],
        created: &[usize],
        journal: &Journal,
    ) -> bool {
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

/// Makes the entries of every folder holding a target, and of the parents of the folders
/// the commit made, durable; on several threads at once (see `par`).
pub(super) fn sync_dirs<'t>(
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
