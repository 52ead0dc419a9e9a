//! Shared fixtures of the gate tests (moved from staged-core with the gate): sessions, counting
//! actions, and a store wrapper that counts stale clears.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use staged_agent::{Directives, ToolChoiceDirective, ToolChoiceQueue};
use staged_core::{
    Claim, FnPendingAction, InMemoryStore, LogRecord, PendingAction, PendingActionStore,
    PendingEntry, PendingId, Session, StoreError, StoreListener, Subscription, ToolResult,
};

/// A session with the loop's directives attached: the session methods these tests used
/// before the queue and the standing handler moved out of `staged-core`.
pub(crate) struct LoopSession {
    pub(crate) session: Arc<Session>,
    pub(crate) directives: Arc<Directives>,
}

impl std::ops::Deref for LoopSession {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

impl LoopSession {
    pub(crate) fn new(session: Arc<Session>) -> Arc<Self> {
        let directives = Directives::attach(&session);
        Arc::new(Self { session, directives })
    }

    pub(crate) fn with_tool_choice_queue<R>(&self, f: impl FnOnce(&mut ToolChoiceQueue) -> R) -> R {
        self.directives.with_tool_choice_queue(f)
    }

    pub(crate) fn next_tool_choice_directive(
        &self,
        active_tools: &[&str],
    ) -> Result<Option<ToolChoiceDirective>, StoreError> {
        self.directives.next_tool_choice_directive(&self.session, active_tools)
    }
}

pub(crate) fn session() -> Arc<LoopSession> {
    LoopSession::new(Arc::new(Session::new(Arc::new(InMemoryStore::new()))))
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
