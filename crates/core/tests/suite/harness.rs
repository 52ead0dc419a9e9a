//! Shared fixtures: sessions and counting actions (the store wrapper that counts stale clears
//! is `staged_test_support::CountingStore`).

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use staged_core::{ActionError, FnPendingAction, InMemoryStore, PendingAction, Session};
use staged_protocol::ToolResult;
pub(crate) use staged_test_support::CountingStore;

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

pub(crate) fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    futures::executor::block_on(fut)
}
