//! `CancelToken`: a cloneable cancellation signal that carries an optional reason.
//!
//! `resolve` hands the token to `PendingAction::apply`, so a producer that has not started
//! writing can stop, and a cancelled resolve reports `Aborted: <reason>`.

use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// A cancellation signal shared by a caller and the work it started.
///
/// Cloning gives another handle to the same signal. The first reason given wins.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    token: CancellationToken,
    reason: Arc<OnceLock<String>>,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels without a reason; [`CancelToken::reason`] then reads `Cancelled`.
    pub fn cancel(&self) {
        self.token.cancel();
    }

    /// Cancels with a reason, unless a reason was already recorded.
    pub fn cancel_with(&self, reason: impl Into<String>) {
        let _ = self.reason.set(reason.into());
        self.token.cancel();
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// The reason given to [`CancelToken::cancel_with`], or `Cancelled`.
    pub fn reason(&self) -> &str {
        self.reason.get().map_or("Cancelled", String::as_str)
    }

    /// Completes when cancellation is requested.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }

    /// A child token: cancelled when this one is, and cancellable on its own.
    pub fn child(&self) -> Self {
        Self { token: self.token.child_token(), reason: Arc::clone(&self.reason) }
    }
}
