//! Step 3 of [`super::commit`], the temp files: written, and made durable with their names,
//! each with its own `fsync` or all with one [`SyncBatch`].

use std::io;

use staged_fs::SyncBatch;

use super::{Run, observe, sync_dirs};
use crate::{
    CommitOptions, JournalError,
    journal::{CommitStep, Step, StepChange, format::temp_name, journal_err, write_err},
    par,
};

/// The temps written: each target's temp's identity (`None`: the target gets none), and
/// whether one sync of their filesystem made their names durable with them.
pub(super) struct Temps {
    pub(super) written: Vec<Option<staged_fs::FileIdentity>>,
    pub(super) folders_synced: bool,
}

/// The temps that failed: the first error, and those written, for a roll back.
pub(super) type TempsFailed = par::Failed<Option<staged_fs::FileIdentity>>;

impl Run<'_> {
    /// Step 3, the temp files: every one written and made durable ([`Run::temps_now`]), and
    /// their folders synced, so that all are durable before the journal says `committed`.
    pub(super) fn write_temps(
        &mut self,
        steps: &[Step],
        options: &mut CommitOptions<'_>,
    ) -> Result<(), JournalError> {
        match self.temps_now(steps) {
            Ok(temps) => {
                self.took_temps(temps, options);
                self.sync_temps(options)
            }
            Err(failed) => Err(self.temps_failed(failed, options)),
        }
    }

    /// The temp files written and made durable, on several threads: with one sync of their
    /// filesystem where a [`SyncBatch`] fits (the temps' folders then need no sync of their
    /// own: [`Temps::folders_synced`]), else each with its own `fsync`.
    pub(super) fn temps_now(&self, steps: &[Step]) -> Result<Temps, TempsFailed> {
        self.temps_with(steps, self.sync_batch(steps))
    }

    /// [`Run::temps_now`] with `batch`, the one sync of their filesystem, if any.
    pub(super) fn temps_with(
        &self,
        steps: &[Step],
        batch: Option<SyncBatch>,
    ) -> Result<Temps, TempsFailed> {
        let kind = if batch.is_some() {
            // Creating files in one folder takes its lock: more threads than cores only
            // spin on it. The waits for the disk are the batch's, later.
            par::Work::Cpu
        } else {
            par::Work::Disk
        };
        let written = self.write_temps_with(steps, kind, batch.is_none())?;
        let Some(batch) = batch else {
            return Ok(Temps { written, folders_synced: false });
        };
        match batch.finish() {
            Ok(()) => Ok(Temps { written, folders_synced: true }),
            Err(err) => Err(par::Failed {
                index: 0,
                error: io::Error::new(
                    err.kind(),
                    format!(
                        "the new files could not be made durable (syncing their filesystem: {err})"
                    ),
                ),
                done: written.into_iter().map(Some).collect(),
            }),
        }
    }

    /// One sync for all the temps, when they are enough and all in folders of one filesystem
    /// (see [`SyncBatch`]).
    pub(super) fn sync_batch(&self, steps: &[Step]) -> Option<SyncBatch> {
        let mut dirs = self.targets.iter().filter_map(|target| target.dir.as_ref());
        let first = dirs.next()?;
        if dirs.any(|dir| dir.id.0 != first.id.0) {
            return None;
        }
        let temps =
            steps.iter().filter(|step| matches!(step.change, StepChange::Write { .. })).count();
        SyncBatch::begin(&*first.open(self.workspace).ok()?, temps)
    }

    /// The temp files written on the threads `kind` gives, each fsynced if `sync`.
    pub(super) fn write_temps_with(
        &self,
        steps: &[Step],
        kind: par::Work,
        sync: bool,
    ) -> Result<Vec<Option<staged_fs::FileIdentity>>, TempsFailed> {
        let (workspace, id, targets) = (self.workspace, &self.id, &self.targets);
        let progress = workspace.progress();
        if let Some(progress) = progress {
            progress.begin(staged_core::Phase::Writing, targets.len() as u64);
        }
        par::try_map(targets.len(), kind, |i| {
            let (StepChange::Write { bytes, .. }, Some(dir)) = (&steps[i].change, &targets[i].dir)
            else {
                if let Some(progress) = progress {
                    progress.advance(1);
                }
                return Ok(None);
            };
            let temp = temp_name(&targets[i].name, id, i);
            let written = dir
                .open(workspace)
                .and_then(|dir| {
                    if sync {
                        dir.create_new(&temp, bytes, &targets[i].new_mode)
                    } else {
                        dir.create_new_unsynced(&temp, bytes, &targets[i].new_mode)
                    }
                })
                .map(Some);
            if let Some(progress) = progress {
                progress.advance(1);
            }
            written
        })
    }

    /// Rolls back after a temp failed (a temp that failed removed itself; only those written
    /// are deleted); the error to return.
    pub(super) fn temps_failed(
        &mut self,
        failed: TempsFailed,
        options: &mut CommitOptions<'_>,
    ) -> JournalError {
        self.written = failed.done.iter().map(|d| matches!(d, Some(Some(_)))).collect();
        self.abandon(options);
        write_err(self.workspace, &self.targets[failed.index].rel, failed.error)
    }

    /// Records the temps written, for the journal and a roll back, and whether their folders
    /// are durable already.
    pub(super) fn took_temps(&mut self, temps: Temps, options: &mut CommitOptions<'_>) {
        self.folders_synced = temps.folders_synced;
        for (i, identity) in temps.written.into_iter().enumerate() {
            if let Some(identity) = identity {
                self.journal.entries[i].temp = Some(identity.into());
                self.written[i] = true;
                observe(options, CommitStep::TempWritten(i));
            }
        }
    }

    /// The temps' folders synced, so that their names are durable too.
    pub(super) fn sync_temps(&self, options: &mut CommitOptions<'_>) -> Result<(), JournalError> {
        if let Err(err) = self.sync_temp_folders() {
            self.abandon(options);
            return Err(journal_err(self.workspace, &err));
        }
        Ok(())
    }

    /// The temps' folders synced, unless the temps' [`SyncBatch`] synced them already.
    pub(super) fn sync_temp_folders(&self) -> io::Result<()> {
        if self.folders_synced {
            return Ok(());
        }
        sync_dirs(self.workspace, &self.targets, &self.folders)
    }
}
