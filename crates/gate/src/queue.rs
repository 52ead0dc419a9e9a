//! `ToolChoiceQueue`: the consuming queue of *hard* tool-choice directives
//! (`docs/contract/agent-loop.md#hard-directive-queue`).
//!
//! Pending previews do not live here (they are on the `PendingActionStore` and reach the model
//! as a soft requirement); the queue serves forced choices such as a user's `/force`.

use std::{
    collections::VecDeque,
    fmt,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use staged_core::{CancelToken, ResolveHandler, ToolError};
use staged_protocol::{ResolveParams, ToolChoice, ToolResult};

/// Why an in-flight directive was not resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// The turn was aborted.
    Aborted,
    /// The turn ended in an error.
    Error,
    /// The queue was cleared.
    Cleared,
    /// The directive was removed by label.
    Removed,
    /// The named tool is not active.
    Unavailable,
    /// The directive waits for its tool to run, and it did not.
    NotInvoked,
}

impl RejectReason {
    /// The documented spelling, e.g. `not_invoked`.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::Aborted => "aborted",
            RejectReason::Error => "error",
            RejectReason::Cleared => "cleared",
            RejectReason::Removed => "removed",
            RejectReason::Unavailable => "unavailable",
            RejectReason::NotInvoked => "not_invoked",
        }
    }
}

/// What to do with a rejected choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectOutcome {
    /// Replay the same choice next, as a one-shot directive at the head.
    Requeue,
    /// Drop it.
    Drop,
}

/// Called when a served choice is resolved.
pub type OnResolved = Arc<dyn Fn(&ToolChoice) + Send + Sync>;
/// Called when a served choice is rejected; decides whether it is replayed.
pub type OnRejected = Arc<dyn Fn(&ToolChoice, RejectReason) -> RejectOutcome + Send + Sync>;

/// Options of a pushed directive.
#[derive(Clone, Default)]
pub struct DirectiveOptions {
    /// The label; `anonymous` when absent.
    pub label: Option<String>,
    /// Push at the head instead of the tail.
    pub now: bool,
    /// Called when a served choice is resolved.
    pub on_resolved: Option<OnResolved>,
    /// Called when a served choice is rejected.
    pub on_rejected: Option<OnRejected>,
    /// Handles a `resolve` call while this directive is in flight; the directive then resolves
    /// only after the handler was invoked.
    pub on_invoked: Option<Arc<dyn ResolveHandler>>,
}

impl fmt::Debug for DirectiveOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectiveOptions")
            .field("label", &self.label)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Default)]
struct Callbacks {
    on_resolved: Option<OnResolved>,
    on_rejected: Option<OnRejected>,
    on_invoked: Option<Arc<dyn ResolveHandler>>,
}

struct Directive {
    choices: Box<dyn Iterator<Item = ToolChoice> + Send>,
    label: String,
    callbacks: Callbacks,
}

struct InFlight {
    label: String,
    callbacks: Callbacks,
    yielded: ToolChoice,
    invoked: Arc<AtomicBool>,
}

/// A FIFO queue of hard tool-choice directives, each yielding one or more choices.
///
/// Callbacks run while the caller holds the queue; they must not call back into it.
#[derive(Default)]
pub struct ToolChoiceQueue {
    directives: VecDeque<Directive>,
    in_flight: Option<InFlight>,
    last_served_label: Option<String>,
}

impl fmt::Debug for ToolChoiceQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolChoiceQueue")
            .field("queued", &self.inspect())
            .field("in_flight", &self.in_flight.as_ref().map(|i| &i.label))
            .finish()
    }
}

impl ToolChoiceQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pushes a directive yielding `choices` in order.
    pub fn push<I>(&mut self, choices: I, options: DirectiveOptions)
    where
        I: IntoIterator<Item = ToolChoice>,
        I::IntoIter: Send + 'static,
    {
        let directive = Directive {
            choices: Box::new(choices.into_iter()),
            label: options.label.unwrap_or_else(|| "anonymous".to_owned()),
            callbacks: Callbacks {
                on_resolved: options.on_resolved,
                on_rejected: options.on_rejected,
                on_invoked: options.on_invoked,
            },
        };
        if options.now {
            self.directives.push_front(directive);
        } else {
            self.directives.push_back(directive);
        }
    }

    /// Pushes a directive that yields `choice` once.
    pub fn push_once(&mut self, choice: ToolChoice, options: DirectiveOptions) {
        self.push(std::iter::once(choice), options);
    }

    /// Pushes a directive that yields `choices` in order.
    pub fn push_sequence(&mut self, choices: Vec<ToolChoice>, options: DirectiveOptions) {
        self.push(choices, options);
    }

    /// Serves the next choice, skipping exhausted directives, and records it as in flight.
    pub fn next_tool_choice(&mut self) -> Option<ToolChoice> {
        while let Some(head) = self.directives.front_mut() {
            if let Some(choice) = head.choices.next() {
                self.in_flight = Some(InFlight {
                    label: head.label.clone(),
                    callbacks: head.callbacks.clone(),
                    yielded: choice.clone(),
                    invoked: Arc::new(AtomicBool::new(false)),
                });
                return Some(choice);
            }
            self.directives.pop_front();
        }
        None
    }

    /// Whether a served choice awaits [`ToolChoiceQueue::mark_served`] or
    /// [`ToolChoiceQueue::reject`].
    pub fn has_in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// Marks the in-flight choice as served. A directive with an invoker that was not invoked
    /// is rejected as [`RejectReason::NotInvoked`] instead.
    pub fn mark_served(&mut self) {
        let Some(in_flight) = self.in_flight.take() else { return };
        if in_flight.callbacks.on_invoked.is_some() && !in_flight.invoked.load(Ordering::SeqCst) {
            self.in_flight = Some(in_flight);
            self.reject(RejectReason::NotInvoked);
            return;
        }
        self.last_served_label = Some(in_flight.label);
        if let Some(on_resolved) = &in_flight.callbacks.on_resolved {
            on_resolved(&in_flight.yielded);
        }
    }

    /// Rejects the in-flight choice; `on_rejected` decides whether it is replayed. A no-op when
    /// nothing is in flight. A [`RejectReason::Cleared`] choice is never replayed.
    pub fn reject(&mut self, reason: RejectReason) {
        let Some(in_flight) = self.in_flight.take() else { return };
        let outcome = match &in_flight.callbacks.on_rejected {
            Some(on_rejected) => on_rejected(&in_flight.yielded, reason),
            None => RejectOutcome::Drop,
        };
        if outcome == RejectOutcome::Requeue && reason != RejectReason::Cleared {
            self.directives.push_front(Directive {
                choices: Box::new(std::iter::once(in_flight.yielded)),
                label: format!("{}-requeued", in_flight.label),
                callbacks: in_flight.callbacks,
            });
        }
    }

    /// The in-flight directive's invoker; calling it marks the directive invoked.
    pub fn peek_in_flight_invoker(&self) -> Option<Arc<dyn ResolveHandler>> {
        let in_flight = self.in_flight.as_ref()?;
        let inner = Arc::clone(in_flight.callbacks.on_invoked.as_ref()?);
        Some(Arc::new(MarkInvoked { inner, invoked: Arc::clone(&in_flight.invoked) }))
    }

    /// Removes every queued directive with `label`, rejecting the in-flight one with
    /// [`RejectReason::Removed`] when its label matches.
    pub fn remove_by_label(&mut self, label: &str) {
        if self.in_flight.as_ref().is_some_and(|i| i.label == label) {
            self.reject(RejectReason::Removed);
        }
        self.directives.retain(|d| d.label != label);
    }

    /// Rejects the in-flight choice with [`RejectReason::Cleared`] and empties the queue.
    pub fn clear(&mut self) {
        self.reject(RejectReason::Cleared);
        self.directives.clear();
    }

    /// The label of the last resolved directive, once.
    pub fn consume_last_served_label(&mut self) -> Option<String> {
        self.last_served_label.take()
    }

    /// The labels of the queued directives, head first.
    pub fn inspect(&self) -> Vec<String> {
        self.directives.iter().map(|d| d.label.clone()).collect()
    }
}

struct MarkInvoked {
    inner: Arc<dyn ResolveHandler>,
    invoked: Arc<AtomicBool>,
}

#[async_trait::async_trait]
impl ResolveHandler for MarkInvoked {
    async fn invoke(
        &self,
        params: &ResolveParams,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        self.invoked.store(true, Ordering::SeqCst);
        self.inner.invoke(params, cancel).await
    }
}
