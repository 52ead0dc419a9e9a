//! `InMemoryStore`: the process-local `PendingActionStore`, for library users and tests. It
//! keeps a resolve log too, with the same rules as the durable store's.

use std::{
    any::Any,
    fmt,
    sync::{
        Arc, Condvar, Mutex, MutexGuard, Weak,
        atomic::{AtomicU64, Ordering},
    },
    time::SystemTime,
};

use crate::{
    Claim, DEFAULT_LOG_KEEP, LogEntry, LogOutcome, LogRecord, PendingAction, PendingActionStore,
    PendingEntry, PendingId, ResolveLog, Reversal, StoreError, StoreEvent, StoreListener,
    StoreListeners, Subscription, UndoLock, pending_id, remainder_text,
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
    undo_lock: Arc<UndoGate>,
}

#[derive(Default)]
struct Inner {
    /// Bottom first; the head is the last element.
    entries: Vec<Slot>,
    /// Oldest first.
    log: Vec<LogRow>,
    next_log_seq: u64,
    /// `None`: [`DEFAULT_LOG_KEEP`].
    keep: Option<usize>,
}

/// One log record: final, or prepared under a commit's key.
struct LogRow {
    seq: u64,
    key: Option<String>,
    done: bool,
    at: SystemTime,
    /// `None` for a prepared commit that logs nothing (it may still carry a remainder).
    record: Option<LogRecord>,
    remainder: Option<Arc<dyn PendingAction>>,
}

/// The undo lock: a flag and a condition variable.
#[derive(Default)]
struct UndoGate {
    held: Mutex<bool>,
    freed: Condvar,
}

/// Holds the [`UndoGate`] until dropped.
struct UndoGuard(Arc<UndoGate>);

impl Drop for UndoGuard {
    fn drop(&mut self) {
        *self.0.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = false;
        self.0.freed.notify_one();
    }
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

    fn push_locked(&self, inner: &mut Inner, action: Arc<dyn PendingAction>) -> (PendingId, usize) {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        let id = pending_id(action.source_tool_name(), seq);
        inner.entries.push(Slot {
            entry: PendingEntry { id: id.clone(), action, created_at: SystemTime::now() },
            claim: None,
        });
        (id, inner.entries.len())
    }

    fn add_log(inner: &mut Inner, record: LogRecord) {
        let seq = inner.next_log_seq;
        inner.next_log_seq += 1;
        inner.log.push(LogRow {
            seq,
            key: None,
            done: true,
            at: SystemTime::now(),
            record: Some(record),
            remainder: None,
        });
        Self::prune(inner);
    }

    fn prune(inner: &mut Inner) {
        let keep = inner.keep.unwrap_or(DEFAULT_LOG_KEEP);
        let n_done = inner.log.iter().filter(|row| row.done).count();
        let mut excess = n_done.saturating_sub(keep);
        inner.log.retain(|row| {
            if excess > 0 && row.done {
                excess -= 1;
                return false;
            }
            true
        });
    }

    /// Whether a finished entry reverts the entry `seq`.
    fn reverted(inner: &Inner, seq: u64) -> bool {
        inner
            .log
            .iter()
            .any(|other| other.done && other.record.as_ref().and_then(|r| r.reverts) == Some(seq))
    }

    fn log_entry(inner: &Inner, row: &LogRow, with_diff: bool) -> Option<LogEntry> {
        let mut record = row.record.clone()?;
        if !with_diff {
            record.diff = None;
        }
        let reverted_by = inner
            .log
            .iter()
            .find(|other| {
                other.done && other.record.as_ref().and_then(|r| r.reverts) == Some(row.seq)
            })
            .map(|other| other.seq);
        Some(LogEntry { seq: row.seq, at: row.at, record, reverted_by, session: None })
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
        let label = action.label().to_owned();
        let (id, len) = self.push_locked(&mut lock(&self.inner), action);
        self.emit(StoreEvent::Pushed { id: id.clone(), label, len });
        Ok(id)
    }

    fn push_unless(
        &self,
        action: Arc<dyn PendingAction>,
        refuse: &crate::PushCheck<'_>,
    ) -> Result<crate::PendingId, StoreError> {
        let label = action.label().to_owned();
        let (id, len) = {
            let mut inner = lock(&self.inner);
            if let Some(why) = inner.entries.iter().rev().find_map(|slot| refuse(&slot.entry)) {
                return Err(StoreError::Refused(why));
            }
            self.push_locked(&mut inner, action)
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

    fn complete(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        let (id, len) = {
            let mut inner = lock(&self.inner);
            let idx = Self::position_of_claim(&inner, &claim)?;
            let slot = inner.entries.remove(idx);
            if let Some(record) = record {
                Self::add_log(&mut inner, record);
            }
            (slot.entry.id, inner.entries.len())
        };
        drop(claim);
        self.emit(StoreEvent::Removed { id, len });
        Ok(())
    }

    fn release(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        let (id, len) = {
            let mut inner = lock(&self.inner);
            let idx = Self::position_of_claim(&inner, &claim)?;
            let mut slot = inner.entries.remove(idx);
            slot.claim = None;
            let id = slot.entry.id.clone();
            inner.entries.push(slot);
            if let Some(record) = record {
                Self::add_log(&mut inner, record);
            }
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
    fn log(&self) -> Option<&dyn ResolveLog> {
        Some(self)
    }

    fn log_record(&self, record: LogRecord) -> Result<(), StoreError> {
        Self::add_log(&mut lock(&self.inner), record);
        Ok(())
    }

    fn prepare_logged(
        &self,
        key: &str,
        record: Option<LogRecord>,
        remainder: Option<Arc<dyn PendingAction>>,
    ) -> Result<(), StoreError> {
        let mut inner = lock(&self.inner);
        let seq = inner.next_log_seq;
        inner.next_log_seq += 1;
        inner.log.retain(|row| row.key.as_deref() != Some(key) || row.done);
        inner.log.push(LogRow {
            seq,
            key: Some(key.to_owned()),
            done: false,
            at: SystemTime::now(),
            record,
            remainder,
        });
        Ok(())
    }

    fn finish_logged(
        &self,
        claim: Option<Claim>,
        key: &str,
    ) -> Result<Option<PendingId>, StoreError> {
        let mut events = Vec::new();
        let remainder_id = {
            let mut inner = lock(&self.inner);
            if let Some(claim) = &claim {
                let idx = Self::position_of_claim(&inner, claim)?;
                let slot = inner.entries.remove(idx);
                events.push(StoreEvent::Removed { id: slot.entry.id, len: inner.entries.len() });
            }
            let Some(row_idx) =
                inner.log.iter().position(|row| row.key.as_deref() == Some(key) && !row.done)
            else {
                drop(inner);
                drop(claim);
                for event in events {
                    self.emit(event);
                }
                return Ok(None);
            };
            let remainder = inner.log[row_idx].remainder.take();
            let remainder_id = remainder.map(|action| {
                let label = action.label().to_owned();
                let (id, len) = self.push_locked(&mut inner, action);
                events.push(StoreEvent::Pushed { id: id.clone(), label: label.clone(), len });
                (id, label)
            });
            let row = &mut inner.log[row_idx];
            row.done = true;
            row.at = SystemTime::now();
            if let (Some(record), Some((id, label))) = (&mut row.record, &remainder_id) {
                record.result = format!("{} {}", record.result, remainder_text(label, id));
            }
            if row.record.is_none() {
                inner.log.remove(row_idx);
            }
            Self::prune(&mut inner);
            remainder_id.map(|(id, _)| id)
        };
        drop(claim);
        for event in events {
            self.emit(event);
        }
        Ok(remainder_id)
    }

    fn abandon_logged(&self, key: &str) -> Result<(), StoreError> {
        lock(&self.inner).log.retain(|row| row.key.as_deref() != Some(key) || row.done);
        Ok(())
    }
}

impl ResolveLog for InMemoryStore {
    fn entries(&self, limit: usize, with_diff: bool) -> Result<Vec<LogEntry>, StoreError> {
        let inner = lock(&self.inner);
        Ok(inner
            .log
            .iter()
            .rev()
            .filter(|row| row.done)
            .filter_map(|row| Self::log_entry(&inner, row, with_diff))
            .take(limit)
            .collect())
    }

    fn entry(&self, seq: u64) -> Result<Option<LogEntry>, StoreError> {
        let inner = lock(&self.inner);
        Ok(inner
            .log
            .iter()
            .find(|row| row.seq == seq && row.done)
            .and_then(|row| Self::log_entry(&inner, row, true)))
    }

    fn newest_applied(&self) -> Result<Option<u64>, StoreError> {
        let inner = lock(&self.inner);
        Ok(inner
            .log
            .iter()
            .rev()
            .filter(|row| row.done && !Self::reverted(&inner, row.seq))
            .find(|row| {
                row.record
                    .as_ref()
                    .is_some_and(|r| matches!(r.outcome, LogOutcome::Applied | LogOutcome::Redone))
            })
            .map(|row| row.seq))
    }

    fn newest_undo(&self) -> Result<Option<u64>, StoreError> {
        let inner = lock(&self.inner);
        let outcome = |row: &LogRow| row.record.as_ref().map(|r| r.outcome);
        Ok(inner
            .log
            .iter()
            .rev()
            .filter(|row| row.done)
            .take_while(|row| outcome(row) != Some(LogOutcome::Applied))
            .find(|row| {
                outcome(row) == Some(LogOutcome::Undone) && !Self::reverted(&inner, row.seq)
            })
            .map(|row| row.seq))
    }

    fn reverted_by(&self, seq: u64) -> Result<Option<Reversal>, StoreError> {
        let inner = lock(&self.inner);
        Ok(inner
            .log
            .iter()
            .find(|row| row.record.as_ref().and_then(|r| r.reverts) == Some(seq))
            .map(|row| Reversal { seq: row.seq, done: row.done }))
    }

    fn lock_undo(&self) -> Result<UndoLock, StoreError> {
        let gate = Arc::clone(&self.undo_lock);
        {
            let mut held = gate.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            while *held {
                held = gate.freed.wait(held).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            *held = true;
        }
        Ok(UndoLock::new(Box::new(UndoGuard(gate))))
    }

    fn keep(&self) -> Result<usize, StoreError> {
        Ok(lock(&self.inner).keep.unwrap_or(DEFAULT_LOG_KEEP))
    }

    fn set_keep(&self, keep: usize) -> Result<(), StoreError> {
        let mut inner = lock(&self.inner);
        inner.keep = Some(keep);
        Self::prune(&mut inner);
        Ok(())
    }
}
