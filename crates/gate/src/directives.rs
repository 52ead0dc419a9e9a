//! `Directives`: the agent loop's side of one session's `resolve` — the hard directive queue,
//! the standing handler — and the directive for the next model call
//! (`docs/contract/agent-loop.md#the-directive-for-the-next-call`).
//!
//! Attached to a `Session`, it is what `resolve` consults before the pending stack (the
//! in-flight hard directive's invoker) and after it (the standing handler).

use std::{
    fmt,
    sync::{Arc, Mutex, MutexGuard},
};

use staged_core::{RESOLVE_TOOL_NAME, ResolveHandler, ResolveRoutes, Session, StoreError};
use staged_protocol::ToolChoice;

use crate::{
    RejectReason, ReminderMessage, SoftToolRequirement, ToolChoiceDirective, ToolChoiceQueue,
};

/// The hard directive queue and the standing handler a loop keeps for one session.
#[derive(Default)]
pub struct Directives {
    queue: Mutex<ToolChoiceQueue>,
    standing: Mutex<Option<Arc<dyn ResolveHandler>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl fmt::Debug for Directives {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Directives")
            .field("queue", &*lock(&self.queue))
            .field("has_standing_handler", &lock(&self.standing).is_some())
            .finish()
    }
}

impl Directives {
    /// Empty directives attached to `session`: its `resolve` now consults them.
    pub fn attach(session: &Session) -> Arc<Self> {
        let res = Arc::new(Self::default());
        session.set_resolve_routes(Some(Arc::clone(&res) as Arc<dyn ResolveRoutes>));
        res
    }

    /// Sets (or, with `None`, clears) the standing resolve handler.
    pub fn set_standing_resolve_handler(&self, handler: Option<Arc<dyn ResolveHandler>>) {
        *lock(&self.standing) = handler;
    }

    /// The standing resolve handler, if one is set.
    pub fn peek_standing_resolve_handler(&self) -> Option<Arc<dyn ResolveHandler>> {
        lock(&self.standing).clone()
    }

    /// Runs `f` with the hard directive queue locked. `f` must not call back into it.
    pub fn with_tool_choice_queue<R>(&self, f: impl FnOnce(&mut ToolChoiceQueue) -> R) -> R {
        f(&mut lock(&self.queue))
    }

    /// The directive for `session`'s next model call.
    ///
    /// A queued hard choice comes first (and is consumed); one whose tool is not in
    /// `active_tools` is rejected as unavailable and skipped. Otherwise, when an action is
    /// pending and `resolve` is active, a soft requirement for the head (a peek, never a pop).
    pub fn next_tool_choice_directive(
        &self,
        session: &Session,
        active_tools: &[&str],
    ) -> Result<Option<ToolChoiceDirective>, StoreError> {
        {
            let mut queue = lock(&self.queue);
            while let Some(choice) = queue.next_tool_choice() {
                let available = match &choice {
                    ToolChoice::Tool { name } => active_tools.contains(&name.as_str()),
                    _ => true,
                };
                if available {
                    return Ok(Some(ToolChoiceDirective::Hard(choice)));
                }
                queue.reject(RejectReason::Unavailable);
            }
        }
        if !active_tools.contains(&RESOLVE_TOOL_NAME) {
            return Ok(None);
        }
        Ok(session.store().peek()?.map(|head| {
            ToolChoiceDirective::Soft(SoftToolRequirement {
                id: head.id.to_string(),
                tool_name: RESOLVE_TOOL_NAME.to_owned(),
                reminder: vec![ReminderMessage::resolve(head.source_tool_name())],
            })
        }))
    }
}

impl ResolveRoutes for Directives {
    fn in_flight_invoker(&self) -> Option<Arc<dyn ResolveHandler>> {
        lock(&self.queue).peek_in_flight_invoker()
    }

    fn standing_handler(&self) -> Option<Arc<dyn ResolveHandler>> {
        self.peek_standing_resolve_handler()
    }
}
