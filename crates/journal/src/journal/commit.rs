//! [`commit`]: the protocol of the journal's module doc, step by step: check (see `check.rs`),
//! prepare, write, the commit point, put in place, retire, finish. A failure before the commit
//! point rolls back ([`Undo`]); after it, what is left is recovery's.

use std::{
    collections::HashSet,
    ffi::{OsStr, OsString},
    io,
};

use staged_fs::{DirHandle, RelPath};

use crate::{
    ConfinedRoot, JournalError,
    journal::{
        CommitReport, CommitStep, Step,
        check::{OpenTarget, Plan, check_targets},
        folders::{
            Folder, FolderRef, Held, OpenFolders, emptied_or_below, make_folder, make_late_dir,
            place_late, remove_emptied, remove_empty_dirs, sorted,
        },
        format::{
            EntryKind, JOURNAL_VERSION, Journal, JournalEntry, JournalState, TempIdentity,
            freed_name, frees_later, journal_dir, journal_name, place_journal, remove_journal,
            remove_journal_unsynced, store_journal, temp_name, unique_id, write_journal_temp,
        },
        journal_err,
        lock::{CommitLock, WriteLock},
        write_err,
    },
    par,
};

mod temps;

/// [`CommitOptions::prepare`]: called with the journal's id; an error message stops the commit.
pub(crate) type PrepareHook<'a> = dyn FnMut(&str) -> Result<(), String> + 'a;

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
    /// Folders to make (parents first) that no new file needs (a change's new empty
    /// folders): made before the commit point with those, and removed again by a roll back.
    pub make: &'a [RelPath],
    /// Called with the journal's id once the journal exists (state `preparing`) and before
    /// the commit point (with no observer, while the temp files are written; with one, before
    /// any is): the resolve log records the commit under that id, so that
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
    let journal_dir = journal_dir(workspace)?;
    let _lock = CommitLock::shared(&journal_dir, workspace)?;
    let _write_lock = WriteLock::exclusive(&journal_dir, workspace)?;
    let held = Held::default();
    // 1. Every target is still what the preview read.
    let mut plan = check_targets(workspace, steps, &held)?;
    for dir in options.make {
        if !plan.dirs.contains(dir) {
            plan.dirs.push(dir.clone());
        }
    }
    // 2. The journal, `preparing`, and the prepare hook; 3. the folders and the temp files,
    // durable. Both only have to be done before the commit point: unobserved, the prepare
    // hook (the resolve log's record) runs while other threads write the temps.
    let mut run = Run::start(workspace, &journal_dir, plan, &options)?;
    if options.observer.is_some() {
        run.call_prepare(&mut options)?;
        run.make_folders(&held, &mut options)?;
        run.write_temps(steps, &mut options)?;
        // 4. The commit point.
        run.switch_to_committed(&mut options)?;
    } else {
        run.make_folders(&held, &mut options)?;
        run.prepare_writing_temps(steps, &mut options)?;
        // 4. The commit point, its journal written while the temps' folders are synced.
        run.sync_temps_then_commit(&mut options)?;
    }
    // 5. Every file in place.
    let report = run.put_in_place(&mut options)?;
    // 6. and 7. Retire the preview, delete the journal.
    run.finish(report, &mut options)
}

/// Tells the observer, if any, that `step` is durable.
fn observe(options: &mut CommitOptions<'_>, step: CommitStep) {
    if let Some(observer) = options.observer.as_mut() {
        observer(step);
    }
}

/// A commit under way, from the first write of its journal to its last step.
struct Run<'a> {
    workspace: &'a ConfinedRoot,
    journal_dir: &'a DirHandle,
    id: String,
    /// The journal's file name.
    name: OsString,
    journal: Journal,
    targets: Vec<OpenTarget>,
    /// The folders to create (parents first), those the deletes empty, and those made where
    /// files were (see `check.rs`).
    dirs: Vec<RelPath>,
    emptied: Vec<RelPath>,
    late_dirs: Vec<RelPath>,
    /// The folders made for new files, with their handles.
    folders: Vec<Folder>,
    /// Which targets have a temp file, for a roll back to delete.
    written: Vec<bool>,
    /// Whether the temps' folders are durable already (a [`staged_fs::SyncBatch`] synced them with the
    /// temps).
    folders_synced: bool,
}

impl<'a> Run<'a> {
    /// Step 2: writes the journal in state `preparing`.
    fn start(
        workspace: &'a ConfinedRoot,
        journal_dir: &'a DirHandle,
        plan: Plan,
        options: &CommitOptions<'_>,
    ) -> Result<Run<'a>, JournalError> {
        let id = unique_id();
        let journal = Journal {
            version: JOURNAL_VERSION,
            state: JournalState::Preparing,
            entries: plan
                .targets
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
        store_journal(journal_dir, &name, &journal).map_err(|err| journal_err(workspace, &err))?;
        Ok(Run {
            workspace,
            journal_dir,
            id,
            name,
            journal,
            written: vec![false; plan.targets.len()],
            targets: plan.targets,
            dirs: plan.dirs,
            emptied: plan.emptied,
            late_dirs: plan.late_dirs,
            folders: Vec::new(),
            folders_synced: false,
        })
    }

    /// Step 2, the prepare hook, called with the journal's id; a hook's error rolls back
    /// what is written so far (the journal, and any folders and temps) and stops the commit.
    fn call_prepare(&mut self, options: &mut CommitOptions<'_>) -> Result<(), JournalError> {
        if let Some(prepare) = options.prepare.as_mut()
            && let Err(why) = prepare(&self.id)
        {
            self.undo().roll_back(&self.targets, &self.written, &self.folders);
            return Err(JournalError::Journal(why));
        }
        observe(options, CommitStep::Prepared);
        Ok(())
    }

    /// Steps 2 and 3 at once, for a commit nobody observes: the temps are written on other
    /// threads while this one calls the prepare hook. A failure of either rolls back both
    /// (the abandon hook is told only of a prepared record).
    fn prepare_writing_temps(
        &mut self,
        steps: &[Step],
        options: &mut CommitOptions<'_>,
    ) -> Result<(), JournalError> {
        let this = &*self;
        // Written and synced one by one, the temps wait on the disk; with one batch sync,
        // on the CPU until it.
        let batch = self.sync_batch(steps);
        let kind = if batch.is_some() { par::Work::Cpu } else { par::Work::Disk };
        let (temps, prepared) = par::beside(
            kind,
            self.targets.len(),
            move || this.temps_with(steps, batch),
            || match options.prepare.as_mut() {
                Some(prepare) => prepare(&this.id),
                None => Ok(()),
            },
        );
        let temps = temps.unwrap_or_else(|_| {
            Err(par::Failed {
                index: 0,
                error: io::Error::other("a worker thread panicked"),
                done: (0..self.targets.len()).map(|_| None).collect(),
            })
        });
        match (temps, prepared) {
            (Ok(temps), Ok(())) => {
                self.took_temps(temps, options);
                Ok(())
            }
            (temps, Err(why)) => {
                self.written = match temps {
                    Ok(temps) => temps.written.iter().map(Option::is_some).collect(),
                    Err(failed) => failed.done.iter().map(|d| matches!(d, Some(Some(_)))).collect(),
                };
                self.undo().roll_back(&self.targets, &self.written, &self.folders);
                Err(JournalError::Journal(why))
            }
            (Err(failed), Ok(())) => Err(self.temps_failed(failed, options)),
        }
    }

    /// How this commit is taken back.
    fn undo(&self) -> Undo<'_> {
        Undo {
            workspace: self.workspace,
            id: &self.id,
            journal_dir: self.journal_dir,
            journal: &self.name,
        }
    }

    /// Rolls back what is written so far (before the commit point) and tells the abandon hook.
    fn abandon(&self, options: &mut CommitOptions<'_>) {
        self.undo().roll_back(&self.targets, &self.written, &self.folders);
        if let Some(abandon) = options.abandon.as_mut() {
            abandon(&self.id);
        }
    }

    /// Step 3, the folders: those new files need, parents first, each made through its
    /// parent's handle; then each new file's folder is the handle of the folder made for it.
    /// A roll back removes them through the same handles, wherever their names point by then.
    fn make_folders(
        &mut self,
        held: &Held,
        options: &mut CommitOptions<'_>,
    ) -> Result<(), JournalError> {
        self.folders.reserve(self.dirs.len());
        for (k, dir) in self.dirs.iter().enumerate() {
            match make_folder(self.workspace, dir, &self.folders, held) {
                Ok(folder) => self.folders.push(folder),
                Err(err) => {
                    self.abandon(options);
                    return Err(write_err(self.workspace, dir, err));
                }
            }
            observe(options, CommitStep::DirCreated(k));
        }
        for i in 0..self.targets.len() {
            if self.targets[i].dir.is_none() {
                let parent = self.targets[i].rel.parent();
                let found = self.folders.iter().find(|f| Some(&f.rel) == parent.as_ref());
                match found {
                    Some(folder) => self.targets[i].dir = Some(folder.this.clone()),
                    None => {
                        self.abandon(options);
                        return Err(JournalError::Journal(format!(
                            "the folder of {} was not made",
                            self.targets[i].display
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// The end of step 3 and step 4 for a commit nobody observes: the temps' folders synced
    /// (their names durable) on another thread while this one writes and fsyncs the
    /// committed journal under its temp name (which recovery deletes unread), each waiting on
    /// its own `fsync`; then, both durable, the commit point, the rename, as
    /// [`Run::switch_to_committed`]. A failure of either rolls back.
    fn sync_temps_then_commit(
        &mut self,
        options: &mut CommitOptions<'_>,
    ) -> Result<(), JournalError> {
        self.journal.state = JournalState::Committed;
        let (synced, written) = if self.folders_synced {
            // The temps' batch synced their folders: nothing to wait for beside the journal.
            (Ok(()), write_journal_temp(self.journal_dir, &self.name, &self.journal))
        } else {
            let this = &*self;
            // Two waits for the disk, each on its own thread.
            let (synced, written) = par::beside(
                par::Work::Disk,
                1,
                || this.sync_temp_folders(),
                || write_journal_temp(this.journal_dir, &this.name, &this.journal),
            );
            let synced =
                synced.unwrap_or_else(|_| Err(io::Error::other("a worker thread panicked")));
            (synced, written)
        };
        let placed = match (synced, written) {
            (Ok(()), Ok(tmp)) => {
                place_journal(self.journal_dir, &self.name, &tmp).inspect_err(|_| {
                    let _ = self.journal_dir.remove_file(&tmp);
                })
            }
            (Err(err), written) => {
                if let Ok(tmp) = written {
                    let _ = self.journal_dir.remove_file(&tmp);
                }
                Err(err)
            }
            (Ok(()), Err(err)) => Err(err),
        };
        if let Err(err) = placed {
            // The journal still says `preparing` (the switch is one rename): roll back.
            self.abandon(options);
            return Err(journal_err(self.workspace, &err));
        }
        observe(options, CommitStep::Committed);
        Ok(())
    }

    /// Step 4, the commit point: the journal says `committed`, with each temp's identity.
    fn switch_to_committed(&mut self, options: &mut CommitOptions<'_>) -> Result<(), JournalError> {
        self.journal.state = JournalState::Committed;
        if let Err(err) = store_journal(self.journal_dir, &self.name, &self.journal) {
            // The journal still says `preparing` (the switch is one rename): roll back.
            self.abandon(options);
            return Err(journal_err(self.workspace, &err));
        }
        observe(options, CommitStep::Committed);
        Ok(())
    }

    /// Step 5: the new files, the replacements, the deletes, then the paths that change kind.
    fn put_in_place(&self, options: &mut CommitOptions<'_>) -> Result<CommitReport, JournalError> {
        let mut open = OpenFolders::new(self.workspace);
        self.create_new(&mut open, options)?;
        self.replace(&mut open, options)?;
        let report = self.delete(&mut open, options)?;
        self.change_kinds(&mut open, options)?;
        Ok(report)
    }

    /// New files first, none over anything: a file that appeared since the check undoes the
    /// commit before any target was touched.
    fn create_new(
        &self,
        open: &mut OpenFolders<'_>,
        options: &mut CommitOptions<'_>,
    ) -> Result<(), JournalError> {
        let mut created = Vec::new();
        for (i, target) in self.targets.iter().enumerate() {
            if target.kind != EntryKind::Create || target.late {
                continue;
            }
            let Some(dir) = &target.dir else { continue };
            let renamed = open.get(dir).and_then(|dir| {
                dir.rename_noreplace(temp_name(&target.name, &self.id, i), &target.name)
            });
            match renamed {
                Ok(()) => created.push(i),
                Err(err) => {
                    let appeared = err.kind() == io::ErrorKind::AlreadyExists;
                    let uncommitted = self.undo().uncommit(&self.targets, &created, &self.journal);
                    if uncommitted {
                        self.abandon(options);
                    }
                    return Err(if appeared {
                        JournalError::Appeared(target.rel.display())
                    } else {
                        write_err(self.workspace, &target.rel, err)
                    });
                }
            }
            observe(options, CommitStep::Replaced(i));
        }
        Ok(())
    }

    /// Each replacing temp over its target. The renames are independent, and on ext4 each
    /// one after the temps' fsyncs waits for the filesystem's journal (3 to 5 ms), so they run
    /// on several threads, as the temps are written: 300 files replaced in 0.2 s instead of
    /// 1.1 s. A test's observer, which may stop the commit at any rename, sees them one at a
    /// time, in order.
    fn replace(
        &self,
        open: &mut OpenFolders<'_>,
        options: &mut CommitOptions<'_>,
    ) -> Result<(), JournalError> {
        if options.observer.is_none() {
            let replacing: Vec<(usize, &OpenTarget, &FolderRef)> = self
                .targets
                .iter()
                .enumerate()
                .filter(|(_, target)| target.kind == EntryKind::Replace)
                .filter_map(|(i, target)| Some((i, target, target.dir.as_ref()?)))
                .collect();
            // After the temps' one batch sync, a rename waits for nothing: as many threads as
            // cores. After a sync of each temp, ext4 makes each wait as above.
            let kind = if self.folders_synced { par::Work::Cpu } else { par::Work::Disk };
            return par::try_map(replacing.len(), kind, |k| {
                let (i, target, dir) = replacing[k];
                let dir = dir.open(self.workspace)?;
                self.keep_blocks(&dir, &target.name);
                dir.rename(temp_name(&target.name, &self.id, i), &target.name)
            })
            .map(drop)
            .map_err(|failed| {
                write_err(self.workspace, &replacing[failed.index].1.rel, failed.error)
            });
        }
        for (i, target) in self.targets.iter().enumerate() {
            if target.kind != EntryKind::Replace {
                continue;
            }
            let Some(dir) = &target.dir else { continue };
            open.get(dir)
                .and_then(|dir| {
                    self.keep_blocks(dir, &target.name);
                    dir.rename(temp_name(&target.name, &self.id, i), &target.name)
                })
                .map_err(|err| write_err(self.workspace, &target.rel, err))?;
            observe(options, CommitStep::Replaced(i));
        }
        Ok(())
    }

    /// Where this process frees later (`free_later`): the file a temp is about to replace,
    /// `name` in `dir`, linked under a freed name in the journal folder, so that the rename
    /// frees none of its blocks. Best effort: a link that cannot be made (another
    /// filesystem, a file not this user's) leaves the rename to free them, as without.
    fn keep_blocks(&self, dir: &DirHandle, name: &OsStr) {
        if frees_later() {
            let _ = dir.hard_link(name, self.journal_dir, freed_name(&self.name));
        }
    }

    /// The files to delete, each only if it is still the file the check read: one that
    /// changed since is kept, and reported.
    fn delete(
        &self,
        open: &mut OpenFolders<'_>,
        options: &mut CommitOptions<'_>,
    ) -> Result<CommitReport, JournalError> {
        let workspace = self.workspace;
        let mut report = CommitReport::default();
        for (i, target) in self.targets.iter().enumerate() {
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
            observe(options, CommitStep::Deleted(i));
        }
        Ok(report)
    }

    /// Paths that change kind: the folders the deletes emptied go, the folders that take a
    /// deleted file's place are made, and the late files are put in place.
    fn change_kinds(
        &self,
        open: &mut OpenFolders<'_>,
        options: &mut CommitOptions<'_>,
    ) -> Result<(), JournalError> {
        let workspace = self.workspace;
        for (k, dir) in self.emptied.iter().enumerate().rev() {
            remove_emptied(workspace, dir)?;
            observe(options, CommitStep::DirRemoved(k));
        }
        for (k, dir) in self.late_dirs.iter().enumerate() {
            make_late_dir(workspace, dir)?;
            observe(options, CommitStep::DirCreated(self.dirs.len() + k));
        }
        for (i, target) in self.targets.iter().enumerate() {
            if !target.late {
                continue;
            }
            let Some(stage) = &target.dir else { continue };
            let stage = open.get(stage).map_err(|err| write_err(workspace, &target.rel, err))?;
            place_late(workspace, stage, &temp_name(&target.name, &self.id, i), &target.rel)
                .map_err(|err| write_err(workspace, &target.rel, err))?;
            observe(options, CommitStep::Replaced(i));
        }
        Ok(())
    }

    /// Steps 6 and 7: the folders synced and pruned, the preview retired (the caller's hook;
    /// at once with the folders' sync when nobody observes and nothing is pruned), the journal
    /// deleted. A retire hook that fails keeps the journal, for recovery to retire
    /// the preview.
    fn finish(
        &self,
        report: CommitReport,
        options: &mut CommitOptions<'_>,
    ) -> Result<CommitReport, JournalError> {
        let workspace = self.workspace;
        // The folders' entries first: pruning may remove some of those folders. A folder the
        // deletes emptied is gone (a file may have its name): its parent was synced then.
        let kept: Vec<&OpenTarget> = self
            .targets
            .iter()
            .filter(|t| {
                !t.dir.as_ref().is_some_and(|dir| emptied_or_below(&dir.rel, &self.emptied))
            })
            .collect();
        let retired = if options.observer.is_none()
            && options.prune.is_empty()
            && let Some(retire) = options.retire.as_mut()
        {
            // The folders' sync and the retire's write at once, each waiting on its own
            // `fsync`: the journal, deleted only once both are durable, orders them for
            // recovery (a retire durable before the renames rolls forward to the same end).
            let (synced, retired) = std::thread::scope(|scope| {
                let syncing = scope.spawn(|| sync_dirs(workspace, kept, &[]));
                let retired = retire();
                let synced = syncing
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("a worker thread panicked")));
                (synced, retired)
            });
            synced.map_err(|err| journal_err(workspace, &err))?;
            Some(retired)
        } else {
            sync_dirs(workspace, kept, &[]).map_err(|err| journal_err(workspace, &err))?;
            remove_empty_dirs(workspace, &sorted(options.prune));
            options.retire.as_mut().map(|retire| retire())
        };
        match retired {
            // The preview may still be listed: keep the journal so that recovery retires it.
            Some(false) => return Ok(report),
            Some(true) => observe(options, CommitStep::Retired),
            None => {}
        }
        let removed = if self.replay_changes_nothing(options) {
            remove_journal_unsynced(self.journal_dir, &self.name)
        } else {
            remove_journal(self.journal_dir, &self.name)
        };
        removed.map_err(|err| journal_err(workspace, &err))?;
        observe(options, CommitStep::Finished);
        Ok(report)
    }

    /// Whether a roll forward of this journal, found again after it was deleted (a power
    /// loss before its folder's entries reached the disk), would change nothing: so that its
    /// deletion need not be synced. Every step is a temp renamed into place (a replace, or a
    /// create that is not late), no folder is pruned, emptied or made in a file's place; by
    /// now every rename is durable (the targets' folders were synced above), so no temp of
    /// this journal's id is left, and a roll forward renames nothing (a temp's name is
    /// derived from the journal's id, which no other commit uses), deletes nothing, and
    /// finishes the preview and the log record again, which are already final (the retire
    /// hook returned, its write durable): a no-op. A commit that deletes a file is not one
    /// (its roll forward deletes a file only when it is still the one the commit checked,
    /// by device and inode, which a newer file could reuse), nor one that prunes folders.
    fn replay_changes_nothing(&self, options: &CommitOptions<'_>) -> bool {
        self.journal.entries.iter().all(|e| {
            !e.late && e.up == 0 && matches!(e.kind, EntryKind::Replace | EntryKind::Create)
        }) && options.prune.is_empty()
            && self.emptied.is_empty()
            && self.late_dirs.is_empty()
    }
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
    par::try_map(dirs.len(), par::Work::Disk, |i| dirs[i].open(workspace)?.sync())
        .map(drop)
        .map_err(|f| f.error)
}
