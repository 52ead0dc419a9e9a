//! Shared fixtures: sessions, counting actions, and a store wrapper that counts stale clears.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use staged_core::{
    ActionError, Claim, FnPendingAction, InMemoryStore, LogRecord, PendingAction,
    PendingActionStore, PendingEntry, PendingId, Session, StoreError, StoreListener, Subscription,
    ToolResult,
};

pub(crate) fn session() -> Arc<Session> {
    Arc::new(Session::new(Arc::new(InMemoryStore::new())))
}

/// An action that counts its applies and rejects and answers with fixed texts.
pub(crate) fn counting_action(
    label: &str,
    source: &str,
    applies: Arc<AtomicUsize>,
) -> Arc<dyn PendingAction> {
    let label_for_apply = label.to_owned();
    Arc::new(
        FnPendingAction::new(label, move |input| {
            let applies = Arc::clone(&applies);
            let label = label_for_apply.clone();
            async move {
                applies.fetch_add(1, Ordering::SeqCst);
                Ok(ToolResult::text(format!("applied {label}: {}", input.reason)))
            }
        })
        .with_source_tool_name(source),
    )
}

/// An action whose apply always fails with a non-tool error.
pub(crate) fn failing_action(label: &str) -> Arc<dyn PendingAction> {
    Arc::new(FnPendingAction::new(label, |_| async { Err(ActionError::other("disk full")) }))
}

/// A store that forwards to an in-memory one and counts `clear_stale` calls.
#[derive(Default)]
pub(crate) struct CountingStore {
    pub(crate) inner: InMemoryStore,
    pub(crate) stale_clears: AtomicUsize,
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

pub(crate) fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    futures::executor::block_on(fut)
}
