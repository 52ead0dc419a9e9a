//! `Supervisor`: the person watching a run. The loop asks them before a `resolve apply` under
//! `--approve human`, and plan mode asks them to approve or refine a plan. The CLI implements it
//! at the terminal; tests script it.

use staged_core::PendingEntry;

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
}
