//! `Retirement`: how an apply (or an undo) that writes durably takes its own entry off the
//! stack, and makes its log record final, at its commit point.
//!
//! `resolve` normally removes an entry after its `apply` returned, recording the outcome in the
//! same transaction. An action whose writes are recorded somewhere a crash-recovery can find
//! them (a journal) needs a stricter order: the entry must leave the stack, and its record
//! become final, *before* that journal is deleted. Otherwise a crash between the two leaves
//! the files written and the preview still pending (or unlogged), and recovery no longer
//! knows. Such an action calls [`Retirement::prepare`] once its journal exists (the record and
//! any remainder are stored under the journal's id, not yet shown), then
//! [`Retirement::retire`] once its writes are in place and before it deletes its journal;
//! recovery finishes a prepared commit by the same id. `resolve` then sees the entry is
//! already retired.

use std::{
    fmt,
    sync::{Arc, Mutex, MutexGuard},
};

use crate::{
    AppliedChange, Claim, LogOutcome, LogRecord, PendingAction, PendingActionStore, PendingId,
    StoreError,
};

/// The entry an apply runs for, and the means to retire it early. Cloning shares the state.
#[derive(Clone)]
pub struct Retirement {
    inner: Arc<Inner>,
}

struct Inner {
    id: Option<PendingId>,
    store: Option<Arc<dyn PendingActionStore>>,
    /// The record's decision part (who, what, why), when the outcome is to be logged.
    base: Option<LogRecord>,
    state: Mutex<State>,
    /// The label of what the prepared commit writes, when it is not the entry's (a partial
    /// apply).
    applied_label: Mutex<Option<String>>,
}

enum State {
    /// Nothing is retired yet: the claim (none for an undo), and the key of the prepared
    /// commit, if any.
    Held { claim: Option<Claim>, prepared: Option<String> },
    /// Retired (or, for a detached retirement, nothing to retire); the id of the remainder a
    /// partial apply left pending.
    Done { remainder: Option<PendingId> },
    /// Retiring failed; the claim is gone and the entry may still be listed.
    Failed(StoreError),
}

fn lock(mutex: &Mutex<State>) -> MutexGuard<'_, State> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn lock_label(mutex: &Mutex<Option<String>>) -> MutexGuard<'_, Option<String>> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl fmt::Debug for Retirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retirement")
            .field("id", &self.inner.id)
            .field("retired", &self.is_retired())
            .finish()
    }
}

impl Retirement {
    /// A retirement for a claimed entry of `store`, logging nothing.
    pub fn claimed(store: Arc<dyn PendingActionStore>, claim: Claim) -> Self {
        Self::new(Some(store), Some(claim), None)
    }

    /// A retirement for a claimed entry of `store` whose outcome is recorded as `base` (the
    /// decision; the action fills in what it wrote).
    pub fn claimed_logged(
        store: Arc<dyn PendingActionStore>,
        claim: Claim,
        base: LogRecord,
    ) -> Self {
        Self::new(Some(store), Some(claim), Some(base))
    }

    /// A retirement for an undo recorded as `base`: there is no pending entry, only the
    /// record to make final.
    pub fn for_undo(store: Arc<dyn PendingActionStore>, base: LogRecord) -> Self {
        Self::new(Some(store), None, Some(base))
    }

    /// A retirement with no entry behind it (a standing handler, a test): retiring does
    /// nothing.
    pub fn detached() -> Self {
        Self {
            inner: Arc::new(Inner {
                id: None,
                store: None,
                base: None,
                state: Mutex::new(State::Done { remainder: None }),
                applied_label: Mutex::new(None),
            }),
        }
    }

    fn new(
        store: Option<Arc<dyn PendingActionStore>>,
        claim: Option<Claim>,
        base: Option<LogRecord>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                id: claim.as_ref().map(|claim| claim.entry().id.clone()),
                store,
                base,
                state: Mutex::new(State::Held { claim, prepared: None }),
                applied_label: Mutex::new(None),
            }),
        }
    }

    /// The id of the entry being applied, if there is one.
    pub fn id(&self) -> Option<&PendingId> {
        self.inner.id.as_ref()
    }

    /// Whether a store stands behind this retirement, so that a remainder can be kept.
    pub fn has_store(&self) -> bool {
        self.inner.store.is_some()
    }

    /// The record's decision part, if the outcome is logged.
    pub fn base(&self) -> Option<&LogRecord> {
        self.inner.base.as_ref()
    }

    /// Stores what the commit `key` (its journal's id) is about to write: the record, and the
    /// remainder a partial apply leaves pending. Neither shows before [`Retirement::retire`];
    /// a recovery that finishes the journal makes them final by the same key, and one that
    /// rolls it back forgets them.
    ///
    /// # Errors
    /// The store's error; nothing was recorded, and the caller must not commit.
    pub fn prepare(&self, key: &str, change: &AppliedChange) -> Result<(), StoreError> {
        let (label, remainder) = (change.label.clone(), change.remainder.clone());
        self.prepare_record(key, label, remainder, |base| base.with_change(change))
    }

    /// [`Retirement::prepare`], moving `change`'s diff, undo data and texts into the record
    /// rather than copying them: the caller needs no more than its result, label, files and
    /// remainder afterwards (an apply of a 50 MB rewrite holds each once, not twice).
    ///
    /// # Errors
    /// As [`Retirement::prepare`].
    pub fn prepare_taking(&self, key: &str, change: &mut AppliedChange) -> Result<(), StoreError> {
        let (label, remainder) = (change.label.clone(), change.remainder.clone());
        self.prepare_record(key, label, remainder, |base| base.taking_change(change))
    }

    /// Stores the record `record_of` makes of the base, and `remainder`.
    fn prepare_record(
        &self,
        key: &str,
        label: Option<String>,
        remainder: Option<Arc<dyn PendingAction>>,
        record_of: impl FnOnce(LogRecord) -> LogRecord,
    ) -> Result<(), StoreError> {
        *lock_label(&self.inner.applied_label) = label;
        let mut state = lock(&self.inner.state);
        let State::Held { prepared, .. } = &mut *state else { return Ok(()) };
        let Some(store) = &self.inner.store else { return Ok(()) };
        let record = self.inner.base.clone().map(record_of);
        store.prepare_logged(key, record, remainder)?;
        *prepared = Some(key.to_owned());
        Ok(())
    }

    /// Forgets a prepared commit that did not reach its commit point (nothing was written).
    pub fn abandon(&self) {
        lock_label(&self.inner.applied_label).take();
        let mut state = lock(&self.inner.state);
        if let State::Held { prepared, .. } = &mut *state
            && let (Some(key), Some(store)) = (prepared.take(), &self.inner.store)
        {
            // Best effort: a leftover is never shown, and recovery forgets it too.
            let _ = store.abandon_logged(&key);
        }
    }

    /// Removes the entry from the stack now and makes the prepared record final, pushing the
    /// prepared remainder, all in one transaction. Calling it again after it succeeded does
    /// nothing.
    ///
    /// # Errors
    /// The store's error. The claim is then given up, and the caller must keep whatever lets
    /// a later recovery retire the entry (the journal), since the entry may still be listed.
    pub fn retire(&self) -> Result<(), StoreError> {
        let mut state = lock(&self.inner.state);
        match std::mem::replace(&mut *state, State::Done { remainder: None }) {
            State::Held { claim, prepared } => {
                let Some(store) = &self.inner.store else { return Ok(()) };
                let res = match (prepared, claim) {
                    (Some(key), claim) => store.finish_logged(claim, &key),
                    (None, Some(claim)) => match &self.inner.base {
                        // An action that retires without preparing: its record says only
                        // that it applied.
                        Some(base) => {
                            let record = LogRecord { outcome: LogOutcome::Applied, ..base.clone() };
                            store.complete(claim, Some(record)).map(|()| None)
                        }
                        None => store.complete(claim, None).map(|()| None),
                    },
                    (None, None) => Ok(None),
                };
                match res {
                    Ok(remainder) => {
                        *state = State::Done { remainder };
                        Ok(())
                    }
                    Err(err) => {
                        *state = State::Failed(err.clone());
                        Err(err)
                    }
                }
            }
            State::Done { remainder } => {
                *state = State::Done { remainder };
                Ok(())
            }
            State::Failed(err) => {
                *state = State::Failed(err.clone());
                Err(err)
            }
        }
    }

    /// The label of what the prepared commit writes, when it is not the entry's own (a
    /// partial apply): the result block shows it.
    pub(crate) fn applied_label(&self) -> Option<String> {
        lock_label(&self.inner.applied_label).clone()
    }

    /// Whether the entry has left the stack.
    pub fn is_retired(&self) -> bool {
        matches!(*lock(&self.inner.state), State::Done { .. })
    }

    /// The id of the preview a partial apply left pending, once retired.
    pub fn remainder(&self) -> Option<PendingId> {
        match &*lock(&self.inner.state) {
            State::Done { remainder } => remainder.clone(),
            State::Held { .. } | State::Failed(_) => None,
        }
    }

    /// What is left to do once the callback returned ([`Settled`]), or the error of a failed
    /// early retirement. A prepared commit that never retired is left as it is: either the
    /// action abandoned it (rolled back), or its journal is past the commit point and the next
    /// recovery finishes it.
    pub(crate) fn settle(&self) -> Result<Settled, StoreError> {
        let mut state = lock(&self.inner.state);
        match std::mem::replace(&mut *state, State::Done { remainder: None }) {
            State::Held { claim, .. } => Ok(Settled::NotRetired(claim)),
            State::Done { remainder } => {
                *state = State::Done { remainder };
                Ok(Settled::Retired)
            }
            State::Failed(err) => Err(err),
        }
    }
}

/// What [`Retirement::settle`] leaves to the caller once the callback returned.
#[derive(Debug)]
pub(crate) enum Settled {
    /// Nothing retired the entry yet: the caller completes or releases it, with the claim when
    /// it holds one.
    NotRetired(Option<Claim>),
    /// The action retired its entry itself (at its commit point): nothing is left to do.
    Retired,
}
