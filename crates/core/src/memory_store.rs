//! `InMemoryStore`: the process-local `PendingActionStore`, for library users and tests.

use std::{
    any::Any,
    fmt,
    sync::{
        Arc, Mutex, MutexGuard, Weak,
        atomic::{AtomicU64, Ordering},
    },
    time::SystemTime,
};

use crate::{
    Claim, PendingAction, PendingActionStore, PendingEntry, StoreError, StoreEvent, StoreListener,
    StoreListeners, Subscription, pending_id,
};

/// A thread-safe, in-memory LIFO stack of pending actions.
///
/// Entries live as long as the store; nothing survives the process. Ids count up from 0 per
/// store. A claim dropped without being handed back releases itself, because the store only
/// holds a weak reference to the claim's token.
#[derive(Default)]
pub struct InMemoryStore {
    inner: Mutex<Inner>,
    listeners: StoreListeners,
    next_seq: AtomicU64,
}

#[derive(Default)]
struct Inner {
    /// Bottom first; the head is the last element.
    entries: Vec<Slot>,
}

struct Slot {
    entry: PendingEntry,
    claim: Option<Weak<dyn Any + Send + Sync>>,
}

impl Slot {
    fn is_claimed(&self) -> bool {
        self.claim.as_ref().is_some_and(|weak| weak.strong_count() > 0)
    }
}

/// Locks a mutex, recovering from poisoning: the store's invariants hold between statements,
/// so a panic in another thread never leaves it half-updated.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn emit(&self, event: StoreEvent) {
        self.listeners.emit(&event);
    }

    fn position_of_claim(inner: &Inner, claim: &Claim) -> Result<usize, StoreError> {
        let token = claim.token_weak();
        inner
            .entries
            .iter()
            .position(|slot| slot.claim.as_ref().is_some_and(|weak| Weak::ptr_eq(weak, &token)))
            .ok_or_else(|| StoreError::UnknownClaim { id: claim.entry().id.clone() })
    }
}

impl fmt::Debug for InMemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = lock(&self.inner);
        f.debug_struct("InMemoryStore")
            .field("entries", &inner.entries.iter().map(|s| &s.entry).collect::<Vec<_>>())
            .finish()
    }
}

impl PendingActionStore for InMemoryStore {
    fn push(&self, action: Arc<dyn PendingAction>) -> Result<crate::PendingId, StoreError> {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        let id = pending_id(action.source_tool_name(), seq);
        let label = action.label().to_owned();
        let len = {
            let mut inner = lock(&self.inner);
            inner.entries.push(Slot {
                entry: PendingEntry { id: id.clone(), action, created_at: SystemTime::now() },
                claim: None,
            });
            inner.entries.len()
        };
        self.emit(StoreEvent::Pushed { id: id.clone(), label, len });
        Ok(id)
    }

    fn peek(&self) -> Result<Option<PendingEntry>, StoreError> {
        Ok(lock(&self.inner).entries.last().map(|slot| slot.entry.clone()))
    }

    fn pop(&self) -> Result<Option<PendingEntry>, StoreError> {
        let (entry, len) = {
            let mut inner = lock(&self.inner);
            match inner.entries.last() {
                None => return Ok(None),
                Some(slot) if slot.is_claimed() => {
                    return Err(StoreError::Busy {
                        id: slot.entry.id.clone(),
                        label: slot.entry.label().to_owned(),
                    });
                }
                Some(_) => {}
            }
            let slot = inner.entries.pop();
            (slot.map(|s| s.entry), inner.entries.len())
        };
        if let Some(entry) = &entry {
            self.emit(StoreEvent::Removed { id: entry.id.clone(), len });
        }
        Ok(entry)
    }

    fn len(&self) -> Result<usize, StoreError> {
        Ok(lock(&self.inner).entries.len())
    }

    fn list(&self) -> Result<Vec<PendingEntry>, StoreError> {
        Ok(lock(&self.inner).entries.iter().rev().map(|slot| slot.entry.clone()).collect())
    }

    fn subscribe(&self, listener: StoreListener) -> Subscription {
        self.listeners.subscribe(listener)
    }

    fn claim_head(&self) -> Result<Option<Claim>, StoreError> {
        let mut inner = lock(&self.inner);
        let Some(slot) = inner.entries.last_mut() else { return Ok(None) };
        if slot.is_claimed() {
            return Err(StoreError::Busy {
                id: slot.entry.id.clone(),
                label: slot.entry.label().to_owned(),
            });
        }
        let token: Arc<dyn Any + Send + Sync> = Arc::new(());
        slot.claim = Some(Arc::downgrade(&token));
        Ok(Some(Claim::new(slot.entry.clone(), token)))
    }

    fn complete(&self, claim: Claim) -> Result<(), StoreError> {
        let (id, len) = {
            let mut inner = lock(&self.inner);
            let idx = Self::position_of_claim(&inner, &claim)?;
            let slot = inner.entries.remove(idx);
            (slot.entry.id, inner.entries.len())
        };
        drop(claim);
        self.emit(StoreEvent::Removed { id, len });
        Ok(())
    }

    fn release(&self, claim: Claim) -> Result<(), StoreError> {
        let (id, len) = {
            let mut inner = lock(&self.inner);
            let idx = Self::position_of_claim(&inner, &claim)?;
            let mut slot = inner.entries.remove(idx);
            slot.claim = None;
            let id = slot.entry.id.clone();
            inner.entries.push(slot);
            (id, inner.entries.len())
        };
        drop(claim);
        self.emit(StoreEvent::Requeued { id, len });
        Ok(())
    }

    fn clear_stale(&self) -> Result<usize, StoreError> {
        // A claim whose token died (its resolve was dropped mid-flight) is already inert; clear
        // the marker so the slot reads as unclaimed.
        let mut inner = lock(&self.inner);
        let mut n_cleared = 0;
        for slot in &mut inner.entries {
            if slot.claim.is_some() && !slot.is_claimed() {
                slot.claim = None;
                n_cleared += 1;
            }
        }
        Ok(n_cleared)
    }
}
