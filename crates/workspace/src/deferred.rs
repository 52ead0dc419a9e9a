//! A pending stack whose state folder is created only when something is staged.
//!
//! A command that may stage (`staged ast-edit`, `edit`, `write`, `patch`, `tool`) in a
//! workspace without `.staged` runs on a [`DeferredStore`]: until a push, it reads as the stack
//! on disk if one has appeared meanwhile (another process may create it at any instant), and
//! as an empty stack otherwise; the first push (or log write) creates the state folder, opens
//! the SQLite stack, runs start-up recovery, and from then on every call goes to that store.
//! So a command that fails before it stages (a missing `--lang`, a bad pattern, a path that is
//! not there) leaves no `.staged` behind.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use staged_core::{
    Claim, LogRecord, PendingAction, PendingActionStore, PendingEntry, PendingId, PendingSummary,
    PushCheck, ResolveLog, StoreError, StoreListener, StoreListeners, Subscription,
};
use staged_store::SqliteStore;

use crate::OpenError;

/// Opens the workspace's SQLite stack: `Ok(None)` when there is no state folder and `create`
/// is not set.
pub(crate) type Opener =
    Box<dyn Fn(bool) -> Result<Option<Arc<SqliteStore>>, OpenError> + Send + Sync>;

/// See the module documentation.
pub(crate) struct DeferredStore {
    open: Opener,
    store: OnceLock<Arc<SqliteStore>>,
    /// Held while opening, so two threads open the stack once.
    opening: Mutex<()>,
    /// The subscribers, who hear of the opened store's events too.
    listeners: StoreListeners,
    /// Keeps the opened store forwarding its events to `listeners`.
    forward: OnceLock<Subscription>,
}

impl DeferredStore {
    pub(crate) fn new(open: Opener) -> Self {
        Self {
            open,
            store: OnceLock::new(),
            opening: Mutex::new(()),
            listeners: StoreListeners::new(),
            forward: OnceLock::new(),
        }
    }

    /// The stack on disk: opened already, or opened now if it exists (or, with `create`, after
    /// creating it). `Ok(None)`: there is none, and `create` is not set.
    fn get(&self, create: bool) -> Result<Option<&Arc<SqliteStore>>, StoreError> {
        if let Some(store) = self.store.get() {
            return Ok(Some(store));
        }
        let _opening = lock(&self.opening);
        if let Some(store) = self.store.get() {
            return Ok(Some(store));
        }
        let Some(store) =
            (self.open)(create).map_err(|err| StoreError::backend_caused(err.to_string(), err))?
        else {
            return Ok(None);
        };
        let listeners = self.listeners.clone();
        let forward = store.subscribe(Arc::new(move |event| listeners.emit(event)));
        let _ = self.forward.set(forward);
        let _ = self.store.set(store);
        Ok(self.store.get())
    }

    /// The stack on disk, for a call that needs one (a claim can only come from it).
    fn required(&self) -> Result<&Arc<SqliteStore>, StoreError> {
        self.get(false)?
            .ok_or_else(|| StoreError::backend("this workspace has no pending stack yet"))
    }
}

fn lock(mutex: &Mutex<()>) -> MutexGuard<'_, ()> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl PendingActionStore for DeferredStore {
    fn push(&self, action: Arc<dyn PendingAction>) -> Result<PendingId, StoreError> {
        self.required_created()?.push(action)
    }

    fn push_unless(
        &self,
        action: Arc<dyn PendingAction>,
        refuse: &PushCheck<'_>,
    ) -> Result<PendingId, StoreError> {
        self.required_created()?.push_unless(action, refuse)
    }

    fn peek(&self) -> Result<Option<PendingEntry>, StoreError> {
        match self.get(false)? {
            Some(store) => store.peek(),
            None => Ok(None),
        }
    }

    fn pop(&self) -> Result<Option<PendingEntry>, StoreError> {
        match self.get(false)? {
            Some(store) => store.pop(),
            None => Ok(None),
        }
    }

    fn len(&self) -> Result<usize, StoreError> {
        match self.get(false)? {
            Some(store) => store.len(),
            None => Ok(0),
        }
    }

    fn list(&self) -> Result<Vec<PendingEntry>, StoreError> {
        match self.get(false)? {
            Some(store) => store.list(),
            None => Ok(Vec::new()),
        }
    }

    fn subscribe(&self, listener: StoreListener) -> Subscription {
        self.listeners.subscribe(listener)
    }

    fn claim_head(&self) -> Result<Option<Claim>, StoreError> {
        match self.get(false)? {
            Some(store) => store.claim_head(),
            None => Ok(None),
        }
    }

    fn complete(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        self.required()?.complete(claim, record)
    }

    fn release(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        self.required()?.release(claim, record)
    }

    fn clear_stale(&self) -> Result<usize, StoreError> {
        match self.get(false)? {
            Some(store) => store.clear_stale(),
            None => Ok(0),
        }
    }

    fn summaries(&self) -> Result<Vec<PendingSummary>, StoreError> {
        match self.get(false)? {
            Some(store) => store.summaries(),
            None => Ok(Vec::new()),
        }
    }

    fn head_summary(&self) -> Result<Option<PendingSummary>, StoreError> {
        match self.get(false)? {
            Some(store) => store.head_summary(),
            None => Ok(None),
        }
    }

    fn log(&self) -> Option<&dyn ResolveLog> {
        self.get(false).ok().flatten().and_then(|store| store.log())
    }

    fn log_record(&self, record: LogRecord) -> Result<(), StoreError> {
        self.required_created()?.log_record(record)
    }

    fn prepare_logged(
        &self,
        key: &str,
        record: Option<LogRecord>,
        remainder: Option<Arc<dyn PendingAction>>,
    ) -> Result<(), StoreError> {
        self.required_created()?.prepare_logged(key, record, remainder)
    }

    fn finish_logged(
        &self,
        claim: Option<Claim>,
        key: &str,
    ) -> Result<Option<PendingId>, StoreError> {
        self.required()?.finish_logged(claim, key)
    }

    fn abandon_logged(&self, key: &str) -> Result<(), StoreError> {
        match self.get(false)? {
            Some(store) => store.abandon_logged(key),
            None => Ok(()),
        }
    }
}

impl DeferredStore {
    /// The stack on disk, created if there is none yet: for a call that writes.
    fn required_created(&self) -> Result<&Arc<SqliteStore>, StoreError> {
        self.get(true)?.ok_or_else(|| {
            StoreError::backend("the workspace's pending stack could not be created")
        })
    }
}
