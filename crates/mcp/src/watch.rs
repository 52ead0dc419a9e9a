//! `notifications/resources/list_changed` when the pending stack changes, in any process.
//!
//! The stack is shared through the workspace's store, so a preview staged or resolved by
//! another process (the CLI, `staged review`, `staged ui`, another MCP server) changes it
//! without this process hearing of it. As the review page does with its `revision`, the
//! server reads the ids of the previews it can see every [`POLL_INTERVAL`], off the async
//! runtime, and tells the client when they changed: to a legacy client (an `initialize`
//! handshake) from `notifications/initialized` on, through the peer, for as long as the
//! connection lives; to a 2026-07-28 client on each `subscriptions/listen` stream that asked
//! for `resourcesListChanged`, until the client cancels it. A failed read is no change.

use std::{future::Future, sync::Arc, time::Duration};

use staged_workspace::WorkspaceSession;

/// How often the stack is read for changes.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The ids of the previews the server can see now, newest first; `None` when the store could
/// not be read.
async fn revision(workspace: &Arc<WorkspaceSession>) -> Option<Vec<String>> {
    let workspace = workspace.clone();
    tokio::task::spawn_blocking(move || {
        workspace
            .store()
            .summaries()
            .map(|rows| rows.into_iter().map(|row| row.id.as_str().to_owned()).collect())
            .ok()
    })
    .await
    .ok()
    .flatten()
}

/// Calls `notify` each time the previews the server can see change, until `notify` returns
/// `false` (the client is gone) or `stop` completes.
pub(crate) async fn watch<N, F, S>(workspace: Arc<WorkspaceSession>, mut notify: N, stop: S)
where
    N: FnMut() -> F,
    F: Future<Output = bool>,
    S: Future<Output = ()>,
{
    let mut last = revision(&workspace).await;
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => return,
            () = tokio::time::sleep(POLL_INTERVAL) => {}
        }
        let Some(now) = revision(&workspace).await else { continue };
        let changed = last.as_ref().is_some_and(|last| *last != now);
        last = Some(now);
        if changed && !notify().await {
            return;
        }
    }
}
