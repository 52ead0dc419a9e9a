//! Shared fixtures of the gate tests (moved from staged-core with the gate): sessions and
//! counting actions (the store wrapper that counts stale clears is
//! `staged_test_support::CountingStore`).

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use crate::{Directives, ToolChoiceDirective};

use staged_core::{FnPendingAction, InMemoryStore, PendingAction, Session, StoreError};
use staged_gate::ToolChoiceQueue;
use staged_protocol::ToolResult;

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

pub(crate) fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    futures::executor::block_on(fut)
}
