//! `Session`: one agent session's resolve state — its pending store and the loop's routes (hard
//! directive invoker, standing handler) — and the dispatch order of `resolve`.

use std::{
    fmt,
    sync::{Arc, Mutex, MutexGuard},
};

use staged_protocol::{ResolveAction, ResolveDetails, ResolveParams, ToolResult};

use crate::{
    CancelToken, Claim, PendingAction, PendingActionStore, PendingId, ResolveRoutes, Retirement,
    StoreError, ToolError,
    resolve::{
        NO_PENDING_APPLY_TEXT, NOTHING_TO_DISCARD_TEXT, details_json, run_claimed_invocation,
    },
};

/// The resolve state of one agent session.
///
/// `resolve` dispatches, in order, to (1) the in-flight hard directive's invoker, (2) the head
/// pending action, (3) the standing handler (`docs/contract/resolve.md#dispatch-order`). (1)
/// and (3) belong to the agent loop, which attaches them as [`ResolveRoutes`].
pub struct Session {
    store: Arc<dyn PendingActionStore>,
    routes: Mutex<Option<Arc<dyn ResolveRoutes>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("pending", &self.store.len().ok())
            .field("has_routes", &lock(&self.routes).is_some())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session over `store`, with no loop routes attached.
    pub fn new(store: Arc<dyn PendingActionStore>) -> Self {
        Self { store, routes: Mutex::new(None) }
    }

    /// The pending-action store.
    pub fn store(&self) -> &Arc<dyn PendingActionStore> {
        &self.store
    }

    /// Stages an action on top of the stack.
    pub fn push_pending_action(
        &self,
        action: Arc<dyn PendingAction>,
    ) -> Result<PendingId, StoreError> {
        self.store.push(action)
    }

    /// Attaches (or, with `None`, detaches) the loop's routes: the in-flight hard directive's
    /// invoker and the standing handler.
    pub fn set_resolve_routes(&self, routes: Option<Arc<dyn ResolveRoutes>>) {
        *lock(&self.routes) = routes;
    }

    fn routes(&self) -> Option<Arc<dyn ResolveRoutes>> {
        lock(&self.routes).clone()
    }

    /// Runs one `resolve` call.
    ///
    /// The head is claimed before its callback runs, so concurrent calls never run the same
    /// action twice: the loser gets an error naming the busy action. On success the action is
    /// removed exactly once; on failure it stays pending, on top, under the same id.
    pub async fn resolve(
        &self,
        params: ResolveParams,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        let in_flight = self.routes().and_then(|routes| routes.in_flight_invoker());
        if let Some(invoker) = in_flight {
            return invoker.invoke(&params, cancel).await;
        }
        match self.store.claim_head() {
            Ok(Some(claim)) => self.run_claimed(&params, claim, cancel).await,
            Ok(None) => {
                let standing = self.routes().and_then(|routes| routes.standing_handler());
                if let Some(handler) = standing {
                    return handler.invoke(&params, cancel).await;
                }
                self.store.clear_stale().map_err(store_error)?;
                let details = details_json(ResolveDetails {
                    action: params.action,
                    reason: params.reason,
                    extra: params.extra,
                    source_tool_name: None,
                    label: None,
                    source_result_details: None,
                });
                match params.action {
                    ResolveAction::Apply => {
                        Err(ToolError::new(NO_PENDING_APPLY_TEXT).with_details(details))
                    }
                    ResolveAction::Discard => {
                        Ok(ToolResult::text(NOTHING_TO_DISCARD_TEXT).with_details(details))
                    }
                }
            }
            Err(err) => Err(store_error(err)),
        }
    }
}

impl Session {
    /// Resolves the head only if it is still `expected`, so a person who reviewed one preview
    /// never applies another that was staged meanwhile. Hard directives and the standing
    /// handler are not consulted: this is a decision about one known preview.
    pub async fn resolve_expected(
        &self,
        params: ResolveParams,
        expected: &PendingId,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        let claim = match self.store.claim_head() {
            Ok(Some(claim)) => claim,
            Ok(None) => {
                return Err(ToolError::new(format!(
                    "{expected} is no longer pending; nothing was applied or discarded."
                )));
            }
            Err(err) => return Err(store_error(err)),
        };
        if &claim.entry().id != expected {
            let head = format!("`{}` ({})", claim.entry().label(), claim.entry().id);
            // Dropping the claim leaves the head exactly where it was.
            drop(claim);
            return Err(ToolError::new(format!(
                "The newest pending preview is now {head}, not {expected}; review it first. Nothing was applied or discarded."
            )));
        }
        self.run_claimed(&params, claim, cancel).await
    }

    /// Runs the claimed entry's callback, then removes the entry (unless the apply retired it
    /// itself) or, when the callback failed, keeps it pending on top.
    async fn run_claimed(
        &self,
        params: &ResolveParams,
        claim: Claim,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let action = claim.entry().action.clone();
        let label = claim.entry().label().to_owned();
        let retirement = Retirement::claimed(self.store.clone(), claim);
        let res = run_claimed_invocation(params, action.as_ref(), cancel, &retirement).await;
        let not_removed = |text: &str, err: StoreError| {
            ToolError::new(format!(
                "{text} (but `{label}` could not be removed from the pending stack: {err})"
            ))
        };
        match res {
            Ok(result) => match retirement.settle() {
                Ok(Some(claim)) => match self.store.complete(claim) {
                    Ok(()) => Ok(result),
                    Err(err) => Err(not_removed(&result.text_content(), err)),
                },
                Ok(None) => Ok(result),
                Err(err) => Err(not_removed(&result.text_content(), err)),
            },
            Err(err) => {
                // A failed release leaves the entry claimed until the claim is dropped or
                // cleared as stale; the callback's error is what the model needs.
                if let Ok(Some(claim)) = retirement.settle() {
                    let _ = self.store.release(claim);
                }
                Err(err)
            }
        }
    }
}

fn store_error(err: StoreError) -> ToolError {
    match err {
        StoreError::Busy { .. } => ToolError::new(format!("Cannot resolve now: {err}.")),
        StoreError::UnknownClaim { .. } | StoreError::Backend(_) => ToolError::new(err.to_string()),
    }
}
