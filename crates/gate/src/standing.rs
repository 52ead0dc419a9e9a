//! `StandingHandler`: a standing resolve handler built from a pending action that is never
//! consumed, such as plan approval (`docs/contract/agent-loop.md#standing-handler`).

use std::sync::Arc;

use staged_core::{CancelToken, PendingAction, ResolveHandler, ToolError, run_resolve_invocation};
use staged_protocol::{ResolveParams, ToolResult};

/// A standing handler: every `resolve` that finds nothing else pending runs its action through
/// the shared runner, so a discard reads `Discarded: <label>. Reason: <reason>`.
pub struct StandingHandler(pub Arc<dyn PendingAction>);

impl std::fmt::Debug for StandingHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StandingHandler").field(&self.0.label()).finish()
    }
}

#[async_trait::async_trait]
impl ResolveHandler for StandingHandler {
    async fn invoke(
        &self,
        params: &ResolveParams,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        run_resolve_invocation(params, self.0.as_ref(), cancel).await
    }
}
