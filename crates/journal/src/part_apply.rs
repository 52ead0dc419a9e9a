//! The partial-apply driver that [`ChangeAction`](crate::ChangeAction) and `staged-ast-edit`'s
//! action share: which parts a [`Selection`] chooses (and the refusal of a partial apply with no
//! pending stack to keep the rest on), the commit that hands the resolve log what it wrote at
//! its commit point and retires the preview, and the apply run on a blocking worker whose
//! failure is told by [`staged_core::worker_failure`]. What is written, and the rest that stays
//! pending, is each action's own.

use staged_core::{ActionError, AppliedChange, CancelToken, Retirement, worker_failure};
use staged_fs::RelPath;
use staged_protocol::{JsonObject, ToolResult};

use crate::{
    ConfinedRoot, JournalError,
    journal::{
        CommitReport, CommitStep, Step,
        commit::{CommitOptions, commit},
    },
    select::{Choice, PartFile, Selection},
};

/// What `selection` chooses of a preview whose files are `parts` (`None`: every file whole),
/// and whether that leaves part of the preview pending.
///
/// # Errors
/// [`ActionError::Tool`] when `selection` names something the preview does not have;
/// [`ActionError::Other`] for a partial apply when `retirement` has no pending stack, to keep
/// the rest of the preview on.
pub fn choose_parts(
    selection: Option<&Selection>,
    parts: &[PartFile],
    retirement: &Retirement,
) -> Result<(Vec<Choice>, bool), ActionError> {
    let choices = match selection {
        None => vec![Choice::Whole; parts.len()],
        Some(selection) => selection.resolve(parts)?,
    };
    let partial = choices.iter().any(|choice| *choice != Choice::Whole);
    if partial && !retirement.has_store() {
        return Err(ActionError::other(
            "a partial apply needs the pending stack, to keep the rest of the preview on it",
        ));
    }
    Ok((choices, partial))
}

/// Commits `steps` for an apply that wrote `change`: the journal records the claimed entry's
/// id, the resolve log prepares `change` under the journal's id before any file is written
/// (and forgets it if the commit rolls back), and the entry is retired once every file is in
/// place, before the journal is deleted; `prune` as [`CommitOptions::prune`]. `observer` sees
/// every durable step, one at a time (see `commit_applied_with` for a commit nobody
/// observes, whose renames run at once).
///
/// # Errors
/// As [`commit`]; [`JournalError::Journal`] when the resolve log could not record the apply
/// (nothing written).
pub fn commit_applied(
    workspace: &ConfinedRoot,
    steps: &[Step],
    prune: &[RelPath],
    change: &AppliedChange,
    retirement: &Retirement,
    observer: &mut dyn FnMut(CommitStep),
) -> Result<CommitReport, JournalError> {
    commit_applied_with(workspace, steps, prune, change, retirement, Some(observer))
}

/// [`commit_applied`] with an optional observer: without one, the replacing renames run on
/// several threads at once, as the temp files are written (a test's observer sees them one
/// at a time, in order).
///
/// # Errors
/// As [`commit_applied`].
pub(crate) fn commit_applied_with(
    workspace: &ConfinedRoot,
    steps: &[Step],
    prune: &[RelPath],
    change: &AppliedChange,
    retirement: &Retirement,
    observer: Option<&mut dyn FnMut(CommitStep)>,
) -> Result<CommitReport, JournalError> {
    let change = Prepared::Shared(change);
    commit_prepared(workspace, steps, (&[], prune), change, retirement, observer)
}

/// `commit_applied_with`, also making the folders `make` (parents first; folders no new
/// file needs: [`CommitOptions::make`]), and moving `change`'s diff, undo data and texts into
/// the log's record rather than copying them ([`Retirement::prepare_taking`]: afterwards
/// `change` keeps its result, label, files and remainder).
///
/// # Errors
/// As `commit_applied_with`.
pub fn commit_applied_folders(
    workspace: &ConfinedRoot,
    steps: &[Step],
    folders: (&[RelPath], &[RelPath]),
    change: &mut AppliedChange,
    retirement: &Retirement,
    observer: Option<&mut dyn FnMut(CommitStep)>,
) -> Result<CommitReport, JournalError> {
    commit_prepared(workspace, steps, folders, Prepared::Taken(change), retirement, observer)
}

/// How the log's record is made of a change: copied, or its big parts moved.
enum Prepared<'a> {
    Shared(&'a AppliedChange),
    Taken(&'a mut AppliedChange),
}

fn commit_prepared(
    workspace: &ConfinedRoot,
    steps: &[Step],
    (make, prune): (&[RelPath], &[RelPath]),
    mut change: Prepared<'_>,
    retirement: &Retirement,
    observer: Option<&mut dyn FnMut(CommitStep)>,
) -> Result<CommitReport, JournalError> {
    // The origin lets start-up recovery retire this preview if a crash interrupts the apply
    // after its commit point; the record is prepared under the journal's id.
    let origin = retirement.id().map(ToString::to_string);
    let mut prepare = |key: &str| {
        let prepared = match &mut change {
            Prepared::Shared(change) => retirement.prepare(key, change),
            Prepared::Taken(change) => retirement.prepare_taking(key, change),
        };
        prepared.map_err(|err| {
            format!("the resolve log could not record the apply, so nothing was written: {err}")
        })
    };
    let mut abandon = |_: &str| retirement.abandon();
    let mut retire = || retirement.retire().is_ok();
    let options = CommitOptions {
        origin: origin.as_deref(),
        prune,
        make,
        prepare: Some(&mut prepare),
        abandon: Some(&mut abandon),
        retire: Some(&mut retire),
        // A shorter-lived borrow of the observer, as the options' other hooks are.
        observer: match observer {
            Some(observer) => Some(observer as &mut dyn FnMut(CommitStep)),
            None => None,
        },
    };
    commit(workspace, steps, options)
}

/// How an action applies the parts a selection names: `apply(action, selection, cancel,
/// retirement, observer)`.
pub(crate) type ApplyOnly<A> = fn(
    &A,
    Option<&Selection>,
    &CancelToken,
    &Retirement,
    &mut dyn FnMut(CommitStep),
) -> Result<ToolResult, ActionError>;

/// Runs `apply` on a blocking worker for what `extra` selects (`extra.files`, `extra.hunks`);
/// a worker that does not return is reported as `<worker> worker failed: ...`.
///
/// # Errors
/// [`ActionError::Cancelled`] when `cancel` fired first; [`ActionError::Tool`] when `extra`'s
/// selection is not of its shape; what `apply` returns; [`ActionError::Other`] when the worker
/// failed.
pub async fn apply_in_worker<A: Clone + Send + Sync + 'static>(
    action: &A,
    worker: &'static str,
    apply: ApplyOnly<A>,
    extra: Option<&JsonObject>,
    cancel: &CancelToken,
    retirement: &Retirement,
) -> Result<ToolResult, ActionError> {
    if cancel.is_cancelled() {
        return Err(ActionError::Cancelled);
    }
    let selection = Selection::of_extra(extra)?;
    let this = action.clone();
    let cancel = cancel.clone();
    let retirement = retirement.clone();
    tokio::task::spawn_blocking(move || {
        apply(&this, selection.as_ref(), &cancel, &retirement, &mut |_| {})
    })
    .await
    .map_err(|err| ActionError::other(worker_failure(worker, err)))?
}
