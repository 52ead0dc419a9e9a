//! Test scaffolding shared by the workspace's tests (a dev-dependency only):
//!
//! - [`CountingStore`], an in-memory pending stack that counts `clear_stale` calls;
//! - [`crash`], the harness of the crash tests: run this test binary again as a child that
//!   dies at commit step k, or kill another process once its journal reaches a state;
//! - [`sorted_names`], what a folder (a journal folder, most often) holds.

pub mod crash;

/// The names of the entries of folder `dir`, sorted: what a test compares a journal folder
/// with (`["commit.lock", "write.lock"]` once every commit is done).
///
/// # Panics
/// When the folder cannot be read.
#[must_use]
pub fn sorted_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| {
            let entry = entry.unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
            entry.file_name().to_string_lossy().into_owned()
        })
        .collect();
    names.sort();
    names
}

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use staged_core::{
    Claim, InMemoryStore, LogRecord, PendingAction, PendingActionStore, PendingEntry, PendingId,
    StoreError, StoreListener, Subscription,
};

/// A store that forwards to an in-memory one and counts `clear_stale` calls. It keeps no log
/// of its own ([`PendingActionStore::log`] is `None`).
#[derive(Debug, Default)]
pub struct CountingStore {
    /// The stack every call goes to.
    pub inner: InMemoryStore,
    /// How many times `clear_stale` was called.
    pub stale_clears: AtomicUsize,
}

impl PendingActionStore for CountingStore {
    fn push(&self, action: Arc<dyn PendingAction>) -> Result<PendingId, StoreError> {
        self.inner.push(action)
    }
    fn peek(&self) -> Result<Option<PendingEntry>, StoreError> {
        self.inner.peek()
    }
    fn pop(&self) -> Result<Option<PendingEntry>, StoreError> {
        self.inner.pop()
    }
    fn len(&self) -> Result<usize, StoreError> {
        self.inner.len()
    }
    fn list(&self) -> Result<Vec<PendingEntry>, StoreError> {
        self.inner.list()
    }
    fn subscribe(&self, listener: StoreListener) -> Subscription {
        self.inner.subscribe(listener)
    }
    fn claim_head(&self) -> Result<Option<Claim>, StoreError> {
        self.inner.claim_head()
    }
    fn complete(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        self.inner.complete(claim, record)
    }
    fn release(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        self.inner.release(claim, record)
    }
    fn clear_stale(&self) -> Result<usize, StoreError> {
        self.stale_clears.fetch_add(1, Ordering::SeqCst);
        self.inner.clear_stale()
    }
}
