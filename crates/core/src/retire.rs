//! `Retirement`: how an apply that writes durably takes its own entry off the stack at its
//! commit point.
//!
//! `resolve` normally removes an entry after its `apply` returned. An action whose writes are
//! recorded somewhere a crash-recovery can find them (a journal) needs a stricter order: the
//! entry must leave the stack *before* that record is deleted. Otherwise a crash between the
//! two leaves the files written and the preview still pending, and recovery no longer knows.
//! Such an action calls [`Retirement::retire`] once its writes are in place and before it
//! deletes its record; `resolve` then sees the entry is already retired.

use std::{
    fmt,
    sync::{Arc, Mutex, MutexGuard},
};

use crate::{Claim, PendingActionStore, PendingId, StoreError};

/// The entry an apply runs for, and the means to retire it early. Cloning shares the state.
#[derive(Clone)]
pub struct Retirement {
    inner: Arc<Inner>,
}

struct Inner {
    id: Option<PendingId>,
    store: Option<Arc<dyn PendingActionStore>>,
    state: Mutex<State>,
}

enum State {
    /// The claim is still held; nothing was retired yet.
    Held(Claim),
    /// Retired (or, for a detached retirement, nothing to retire).
    Done,
    /// Retiring failed; the claim is gone and the entry may still be listed.
    Failed(StoreError),
}

fn lock(mutex: &Mutex<State>) -> MutexGuard<'_, State> {
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
    /// A retirement for a claimed entry of `store`.
    pub fn claimed(store: Arc<dyn PendingActionStore>, claim: Claim) -> Self {
        Self {
            inner: Arc::new(Inner {
                id: Some(claim.entry().id.clone()),
                store: Some(store),
                state: Mutex::new(State::Held(claim)),
            }),
        }
    }

    /// A retirement with no entry behind it (a standing handler, a test): retiring does
    /// nothing.
    pub fn detached() -> Self {
        Self { inner: Arc::new(Inner { id: None, store: None, state: Mutex::new(State::Done) }) }
    }

    /// The id of the entry being applied, if there is one.
    pub fn id(&self) -> Option<&PendingId> {
        self.inner.id.as_ref()
    }

    /// Removes the entry from the stack now. Calling it again after it succeeded does
    /// nothing.
    ///
    /// # Errors
    /// The store's error. The claim is then given up, and the caller must keep whatever lets
    /// a later recovery retire the entry (the journal), since the entry may still be listed.
    pub fn retire(&self) -> Result<(), StoreError> {
        let mut state = lock(&self.inner.state);
        match std::mem::replace(&mut *state, State::Done) {
            State::Held(claim) => {
                let Some(store) = &self.inner.store else { return Ok(()) };
                if let Err(err) = store.complete(claim) {
                    *state = State::Failed(err.clone());
                    return Err(err);
                }
                Ok(())
            }
            State::Done => Ok(()),
            State::Failed(err) => {
                *state = State::Failed(err.clone());
                Err(err)
            }
        }
    }

    /// Whether the entry has left the stack.
    pub fn is_retired(&self) -> bool {
        matches!(*lock(&self.inner.state), State::Done)
    }

    /// What is left to do once the callback returned: the claim, if nothing retired the entry
    /// yet, or the error of a failed early retirement.
    pub(crate) fn settle(&self) -> Result<Option<Claim>, StoreError> {
        let mut state = lock(&self.inner.state);
        match std::mem::replace(&mut *state, State::Done) {
            State::Held(claim) => Ok(Some(claim)),
            State::Done => Ok(None),
            State::Failed(err) => Err(err),
        }
    }
}
