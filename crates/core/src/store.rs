//! `PendingActionStore`: the LIFO stack of pending actions, its entries, events and claims.
//!
//! A store is the single source of truth for what is pending. `resolve` *claims* the head
//! before it runs the head's callback, so two concurrent resolves can never run the same
//! action; completing the claim removes the entry, releasing it keeps the entry pending (on
//! top, under the same id).

use std::{
    any::Any,
    collections::BTreeMap,
    fmt,
    sync::{Arc, Mutex, MutexGuard, Weak},
    time::SystemTime,
};

use crate::{LogRecord, PendingAction, ResolveLog};

/// The id of a pending entry: `pending-action:<sourceToolName>:<seq>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PendingId(String);

impl PendingId {
    /// Wraps an id string as read back from storage.
    pub fn from_string(id: String) -> Self {
        Self(id)
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PendingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Builds the id of the `seq`-th entry a store creates for `source_tool_name`.
pub fn pending_id(source_tool_name: &str, seq: u64) -> PendingId {
    PendingId(format!("pending-action:{source_tool_name}:{seq}"))
}

/// One pending action on a store, with its id and when it was staged.
#[derive(Clone)]
pub struct PendingEntry {
    /// The entry's unique id.
    pub id: PendingId,
    /// The live action.
    pub action: Arc<dyn PendingAction>,
    /// When it was staged.
    pub created_at: SystemTime,
}

/// An entry as a listing shows it: no details and no payload, which can be big (a preview's
/// details hold its whole diff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSummary {
    /// The entry's id.
    pub id: PendingId,
    /// Its label.
    pub label: String,
    /// The tool that staged it.
    pub source_tool_name: String,
    /// When it was staged.
    pub created_at: SystemTime,
    /// The agent session that staged it (its number in the store), `None` for a person's.
    pub session: Option<u64>,
}

impl PendingSummary {
    /// The summary of `entry`, staged by no session.
    pub fn of(entry: &PendingEntry) -> Self {
        Self {
            id: entry.id.clone(),
            label: entry.label().to_owned(),
            source_tool_name: entry.source_tool_name().to_owned(),
            created_at: entry.created_at,
            session: None,
        }
    }
}

impl PendingEntry {
    /// The action's label.
    pub fn label(&self) -> &str {
        self.action.label()
    }

    /// The action's source tool name.
    pub fn source_tool_name(&self) -> &str {
        self.action.source_tool_name()
    }
}

impl fmt::Debug for PendingEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingEntry")
            .field("id", &self.id)
            .field("label", &self.label())
            .field("source_tool_name", &self.source_tool_name())
            .field("created_at", &self.created_at)
            .finish()
    }
}

/// A change to a store, delivered to subscribers after it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreEvent {
    /// An entry was pushed on top.
    Pushed {
        /// Its id.
        id: PendingId,
        /// Its label.
        label: String,
        /// The number of entries afterwards.
        len: usize,
    },
    /// An entry was removed (applied, discarded or popped).
    Removed {
        /// Its id.
        id: PendingId,
        /// The number of entries afterwards.
        len: usize,
    },
    /// A claimed entry was released and is back on top, under the same id.
    Requeued {
        /// Its id.
        id: PendingId,
        /// The number of entries afterwards.
        len: usize,
    },
}

/// A subscriber's callback.
pub type StoreListener = Arc<dyn Fn(&StoreEvent) + Send + Sync>;

/// Keeps a subscription alive; dropping it unsubscribes.
pub struct Subscription {
    _guard: Box<dyn Any + Send + Sync>,
}

impl Subscription {
    /// Wraps whatever keeps a store's listener registered; dropping `guard` must unregister it.
    pub fn new(guard: Box<dyn Any + Send + Sync>) -> Self {
        Self { _guard: guard }
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Subscription")
    }
}

/// The subscribers of one store: what every `PendingActionStore` implementation uses for
/// [`PendingActionStore::subscribe`].
#[derive(Clone, Default)]
pub struct StoreListeners {
    inner: Arc<Mutex<ListenerMap>>,
}

#[derive(Default)]
struct ListenerMap {
    next_key: u64,
    by_key: BTreeMap<u64, StoreListener>,
}

struct Unsubscribe {
    listeners: Weak<Mutex<ListenerMap>>,
    key: u64,
}

impl Drop for Unsubscribe {
    fn drop(&mut self) {
        if let Some(listeners) = self.listeners.upgrade() {
            lock_listeners(&listeners).by_key.remove(&self.key);
        }
    }
}

fn lock_listeners(map: &Mutex<ListenerMap>) -> MutexGuard<'_, ListenerMap> {
    map.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl StoreListeners {
    /// No subscribers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `listener` until the returned subscription is dropped.
    pub fn subscribe(&self, listener: StoreListener) -> Subscription {
        let mut map = lock_listeners(&self.inner);
        let key = map.next_key;
        map.next_key += 1;
        map.by_key.insert(key, listener);
        Subscription::new(Box::new(Unsubscribe { listeners: Arc::downgrade(&self.inner), key }))
    }

    /// Calls every listener with `event`. Call it after the change, outside the store's own
    /// lock, so a listener may read the store.
    pub fn emit(&self, event: &StoreEvent) {
        let listeners: Vec<StoreListener> =
            lock_listeners(&self.inner).by_key.values().cloned().collect();
        for listener in listeners {
            listener(event);
        }
    }
}

impl fmt::Debug for StoreListeners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreListeners")
            .field("count", &lock_listeners(&self.inner).by_key.len())
            .finish()
    }
}

/// Exclusive permission to run the head entry's callback.
///
/// Hand it back with [`PendingActionStore::complete`] (the entry is removed) or
/// [`PendingActionStore::release`] (the entry stays pending, on top). A claim dropped
/// without either is released by the store.
pub struct Claim {
    entry: PendingEntry,
    token: Arc<dyn Any + Send + Sync>,
}

impl Claim {
    /// Creates a claim on `entry`. The store keeps a weak reference to `token` to know whether
    /// the claim is still held.
    pub fn new(entry: PendingEntry, token: Arc<dyn Any + Send + Sync>) -> Self {
        Self { entry, token }
    }

    /// The claimed entry.
    pub fn entry(&self) -> &PendingEntry {
        &self.entry
    }

    /// The store-specific token.
    pub fn token(&self) -> &Arc<dyn Any + Send + Sync> {
        &self.token
    }

    /// A weak handle on the token, which dies when the claim is handed back or dropped.
    pub(crate) fn token_weak(&self) -> Weak<dyn Any + Send + Sync> {
        Arc::downgrade(&self.token)
    }
}

impl fmt::Debug for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Claim").field("entry", &self.entry).finish_non_exhaustive()
    }
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Another resolve holds the head; it must finish first.
    #[error("`{label}` ({id}) is already being resolved by another call; wait for it to finish")]
    Busy {
        /// The claimed entry's id.
        id: PendingId,
        /// Its label.
        label: String,
    },
    /// The claim does not belong to this store, or its entry is gone.
    #[error("the claim on {id} is not held on this store")]
    UnknownClaim {
        /// The entry's id.
        id: PendingId,
    },
    /// The store's backing storage failed (a durable store's IO or database error).
    #[error("pending-action store failed: {message}")]
    Backend {
        /// What failed, as the message shows it.
        message: String,
        /// The error underneath, when there is one, kept for the cause chain.
        #[source]
        source: Option<ErrorCause>,
    },
    /// [`PendingActionStore::push_unless`] refused the push; the message says why.
    #[error("{0}")]
    Refused(String),
}

impl StoreError {
    /// A [`StoreError::Backend`] with `message` and no underlying error.
    pub fn backend(message: impl Into<String>) -> Self {
        StoreError::Backend { message: message.into(), source: None }
    }

    /// A [`StoreError::Backend`] with `message`, keeping `source` as its cause.
    pub fn backend_caused(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StoreError::Backend { message: message.into(), source: Some(ErrorCause::new(source)) }
    }
}

/// The error underneath another, shared so that the error holding it stays `Clone`. It shows
/// as the error it wraps, and two causes are equal when they show the same text.
#[derive(Clone)]
pub struct ErrorCause(Arc<dyn std::error::Error + Send + Sync>);

impl ErrorCause {
    /// Wraps `err`.
    pub fn new(err: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Arc::new(err))
    }
}

impl fmt::Debug for ErrorCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for ErrorCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for ErrorCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for ErrorCause {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for ErrorCause {}

/// [`PendingActionStore::push_unless`]'s check: the objection to a pending entry, if any.
pub type PushCheck<'a> = dyn Fn(&PendingEntry) -> Option<String> + 'a;

/// A LIFO stack of pending actions. Implementations are thread-safe.
///
/// Ids are unique per store. `list` is newest first. Subscribers hear of every change after
/// it happened, outside the store's lock, so a listener may read the store.
pub trait PendingActionStore: Send + Sync {
    /// Pushes an action on top and returns its new id.
    fn push(&self, action: Arc<dyn PendingAction>) -> Result<PendingId, StoreError>;

    /// Pushes `action` on top unless `refuse` objects to one of the entries pending now,
    /// checked and pushed as one step: no other push or resolve of this stack, in any process,
    /// comes between. [`StoreError::Refused`] carries the objection; nothing was pushed.
    ///
    /// The default checks, then pushes, which is one step only for a store nobody else
    /// changes meanwhile.
    fn push_unless(
        &self,
        action: Arc<dyn PendingAction>,
        refuse: &PushCheck<'_>,
    ) -> Result<PendingId, StoreError> {
        if let Some(why) = self.list()?.iter().find_map(refuse) {
            return Err(StoreError::Refused(why));
        }
        self.push(action)
    }

    /// The top entry, if any.
    fn peek(&self) -> Result<Option<PendingEntry>, StoreError>;

    /// Removes and returns the top entry. Fails with [`StoreError::Busy`] while it is claimed.
    fn pop(&self) -> Result<Option<PendingEntry>, StoreError>;

    /// The number of entries.
    fn len(&self) -> Result<usize, StoreError>;

    /// Whether the stack is empty.
    fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }

    /// All entries, newest first.
    fn list(&self) -> Result<Vec<PendingEntry>, StoreError>;

    /// Calls `listener` after every change until the subscription is dropped.
    fn subscribe(&self, listener: StoreListener) -> Subscription;

    /// Claims the top entry for one resolve. `Ok(None)` when empty; [`StoreError::Busy`] when
    /// another resolve holds it.
    fn claim_head(&self) -> Result<Option<Claim>, StoreError>;

    /// Removes the claimed entry: its callback ran to completion. `record`, if any, is
    /// recorded in the log in the same transaction (a store without a log only removes).
    fn complete(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError>;

    /// Keeps the claimed entry pending, moved to the top under the same id. `record`, if any,
    /// is recorded in the log in the same transaction (a store without a log only requeues).
    fn release(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError>;

    /// Drops markers left behind by resolves that no longer run (for example a claim held by
    /// a process that died). Returns how many were cleared. `resolve` calls it when it finds
    /// nothing to run.
    fn clear_stale(&self) -> Result<usize, StoreError>;

    /// The entries, newest first, as a listing shows them. A store that can list without
    /// reading each entry's details and payload overrides this.
    fn summaries(&self) -> Result<Vec<PendingSummary>, StoreError> {
        Ok(self.list()?.iter().map(PendingSummary::of).collect())
    }

    /// The head, as a listing shows it.
    fn head_summary(&self) -> Result<Option<PendingSummary>, StoreError> {
        Ok(self.peek()?.as_ref().map(PendingSummary::of))
    }

    /// The log of resolve outcomes, if this store keeps one.
    fn log(&self) -> Option<&dyn ResolveLog> {
        None
    }

    /// Records `record` on its own: an outcome that touches no pending entry (an undo whose
    /// handler wrote without a journal).
    fn log_record(&self, record: LogRecord) -> Result<(), StoreError> {
        let _ = record;
        Ok(())
    }

    /// Records a commit that is about to happen under `key` (its journal's id): `record`, and
    /// `remainder`, the preview a partial apply leaves pending. Neither shows until
    /// [`PendingActionStore::finish_logged`] with the same key.
    fn prepare_logged(
        &self,
        key: &str,
        record: Option<LogRecord>,
        remainder: Option<Arc<dyn PendingAction>>,
    ) -> Result<(), StoreError> {
        let _ = (key, record);
        match remainder {
            Some(_) => Err(StoreError::backend(
                "this pending stack cannot keep the rest of a partial apply",
            )),
            None => Ok(()),
        }
    }

    /// The commit point of `key`: in one transaction, removes the claimed entry (if any),
    /// pushes the prepared remainder (if any) on top, and makes the prepared record final.
    /// Returns the remainder's new id. Finishing a key twice changes nothing the second time.
    fn finish_logged(
        &self,
        claim: Option<Claim>,
        key: &str,
    ) -> Result<Option<PendingId>, StoreError> {
        let _ = key;
        if let Some(claim) = claim {
            self.complete(claim, None)?;
        }
        Ok(None)
    }

    /// Forgets what [`PendingActionStore::prepare_logged`] recorded under `key`: that commit
    /// was rolled back.
    fn abandon_logged(&self, key: &str) -> Result<(), StoreError> {
        let _ = key;
        Ok(())
    }
}
