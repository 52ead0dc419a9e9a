//! `Supervisor`: the person watching a run. The loop asks them before a `resolve apply` under
//! `--approve human`, and plan mode asks them to approve or refine a plan. The CLI implements it
//! at the terminal; tests script it.

use serde::Serialize;
use staged_core::{CancelToken, PendingEntry, Session};
use staged_protocol::{ResolveAction, ToolResult};

/// What the person decided about an apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyDecision {
    /// Apply it; the reason is recorded in the result the model sees.
    Approve {
        /// The person's reason.
        reason: String,
    },
    /// Keep it pending; the reason goes back to the model.
    Decline {
        /// The person's reason.
        reason: String,
    },
}

/// What the person decided about a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanDecision {
    /// Approve it: the run switches to implementing.
    Approve,
    /// Ask for changes; the text goes back to the model. A dismissed prompt is a refinement
    /// with no text, never an approval.
    Refine(String),
}

/// The plan the person is asked about.
#[derive(Debug, Clone, Copy)]
pub struct PlanReview<'a> {
    /// The plan's path, relative to the workspace root.
    pub path: &'a str,
    /// Its title (slug).
    pub title: &'a str,
    /// Its text.
    pub content: &'a str,
}

/// The person supervising a run.
#[async_trait::async_trait]
pub trait Supervisor: Send + Sync {
    /// Asks whether to apply `head`, for which the model gave `reason`.
    async fn approve_apply(&self, head: &PendingEntry, reason: &str) -> ApplyDecision;

    /// Asks whether to approve a plan.
    async fn review_plan(&self, plan: PlanReview<'_>) -> PlanDecision;

    /// What the person told the model since the last turn (a revert's reason, from `staged
    /// session revert` in another terminal): each is sent once, as a user message at the start
    /// of the next turn. None by default.
    fn notices(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Asks `supervisor` about applying `head`, for which the model gave `reason`: `Ok(their
/// reason)` to go ahead, or the error result the model gets when they decline (or the run is
/// interrupted, or the head changed on `session` while they decided).
pub(crate) async fn ask_to_apply(
    supervisor: &dyn Supervisor,
    session: &Session,
    head: &PendingEntry,
    reason: &str,
    cancel: &CancelToken,
) -> Result<String, ToolResult> {
    let decision = tokio::select! {
        () = cancel.cancelled() => ApplyDecision::Decline { reason: "the run was interrupted".to_owned() },
        decision = supervisor.approve_apply(head, reason) => decision,
    };
    let person_reason = match decision {
        ApplyDecision::Approve { reason } => reason,
        ApplyDecision::Decline { reason: declined } => {
            return Err(ToolResult::error(format!(
                "The person declined to apply `{}`: {}. Nothing was applied; the preview is still pending. Discard it with `resolve` (action \"discard\") or change the approach.",
                head.label(),
                declined.trim()
            ))
            .with_details_of(&Declined {
                action: ResolveAction::Apply,
                reason,
                label: head.label(),
                source_tool_name: head.source_tool_name(),
                approved: false,
                pending_id: head.id.as_str(),
            }));
        }
    };
    if session.store().peek().ok().flatten().map(|h| h.id) != Some(head.id.clone()) {
        return Err(ToolResult::error(
            "The pending stack changed while waiting for approval; nothing was applied. Call `resolve` again to review the current head.",
        ));
    }
    Ok(person_reason)
}

/// The details of an apply the person declined: `resolve`'s own (the action, the model's
/// reason, the preview), with `approved: false` and the preview's id.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Declined<'a> {
    action: ResolveAction,
    reason: &'a str,
    label: &'a str,
    source_tool_name: &'a str,
    approved: bool,
    pending_id: &'a str,
}
