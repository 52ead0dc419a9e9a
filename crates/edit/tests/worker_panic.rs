//! A panic in a text tool's blocking worker (staging a preview, applying it, undoing it) reaches
//! the model as `<what> worker failed: it panicked (<at most 200 characters>…)`, never with the
//! panic's whole message: the stack below is one whose writes panic on demand, with a message
//! far longer than a model should read.
// See: issue 38 (`worker_failure` at every spawn site).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use staged_core::{
    CancelToken, Claim, InMemoryStore, LogRecord, PendingAction, PendingActionStore, PendingEntry,
    PendingId, ResolveOptions, Session, StoreError, StoreListener, Subscription, Tool, UndoOptions,
};
use staged_edit::WriteTool;
use staged_journal::{ChangeUndo, ConfinedRoot};
use staged_protocol::ResolveParams;

/// Where [`PanickingStore`] panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PanicAt {
    Nowhere,
    /// Pushing a preview (a tool's staging worker).
    Push,
    /// Recording an apply or an undo at its commit point (an apply's or undo's worker).
    Prepare,
}

/// An in-memory stack that panics where it is told to, with a long message.
struct PanickingStore {
    inner: InMemoryStore,
    at: Mutex<PanicAt>,
}

/// The panic's message: far longer than the 200 characters a worker failure quotes.
fn long_message() -> String {
    format!("{}THE-END", "x".repeat(5_000))
}

impl PanickingStore {
    fn panic_if(&self, here: PanicAt) {
        if *self.at.lock().unwrap() == here {
            panic!("{}", long_message());
        }
    }
}

impl PendingActionStore for PanickingStore {
    fn push(&self, action: Arc<dyn PendingAction>) -> Result<PendingId, StoreError> {
        self.panic_if(PanicAt::Push);
        self.inner.push(action)
    }
    fn push_unless(
        &self,
        action: Arc<dyn PendingAction>,
        refuse: &staged_core::PushCheck<'_>,
    ) -> Result<PendingId, StoreError> {
        self.panic_if(PanicAt::Push);
        self.inner.push_unless(action, refuse)
    }
    fn peek(&self) -> Result<Option<PendingEntry>, StoreError> {
        self.inner.peek()
    }
    fn pop(&self) -> Result<Option<PendingEntry>, StoreError> {
        self.inner.pop()
    }
    fn len(&self) -> Result<usize, StoreError> {
        self.inner.len()
    }
    fn list(&self) -> Result<Vec<PendingEntry>, StoreError> {
        self.inner.list()
    }
    fn subscribe(&self, listener: StoreListener) -> Subscription {
        self.inner.subscribe(listener)
    }
    fn claim_head(&self) -> Result<Option<Claim>, StoreError> {
        self.inner.claim_head()
    }
    fn complete(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        self.inner.complete(claim, record)
    }
    fn release(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        self.inner.release(claim, record)
    }
    fn clear_stale(&self) -> Result<usize, StoreError> {
        self.inner.clear_stale()
    }
    fn log(&self) -> Option<&dyn staged_core::ResolveLog> {
        self.inner.log()
    }
    fn log_record(&self, record: LogRecord) -> Result<(), StoreError> {
        self.inner.log_record(record)
    }
    fn prepare_logged(
        &self,
        key: &str,
        record: Option<LogRecord>,
        remainder: Option<Arc<dyn PendingAction>>,
    ) -> Result<(), StoreError> {
        self.panic_if(PanicAt::Prepare);
        self.inner.prepare_logged(key, record, remainder)
    }
    fn finish_logged(
        &self,
        claim: Option<Claim>,
        key: &str,
    ) -> Result<Option<PendingId>, StoreError> {
        self.inner.finish_logged(claim, key)
    }
    fn abandon_logged(&self, key: &str) -> Result<(), StoreError> {
        self.inner.abandon_logged(key)
    }
}

/// `message` is a worker failure of `what` that quotes the panic cut short.
#[track_caller]
fn assert_cut_short(message: &str, what: &str) {
    let start = format!("{what} worker failed: it panicked (");
    assert!(message.contains(&start), "no `{start}` in: {message}");
    assert!(!message.contains("THE-END"), "the panic's whole message reached the model");
    assert!(message.len() < 1_000, "{} bytes: {message}", message.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_worker_reaches_the_model_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    let store =
        Arc::new(PanickingStore { inner: InMemoryStore::new(), at: Mutex::new(PanicAt::Nowhere) });
    let session = Arc::new(Session::new(store.clone()));
    session.register_undo("write", Arc::new(ChangeUndo::new(workspace.clone())));
    let write = WriteTool::new(session.clone(), workspace.clone());
    let args = serde_json::json!({"path": "a.txt", "content": "one\n"});
    let cancel = CancelToken::new();

    // The staging worker.
    *store.at.lock().unwrap() = PanicAt::Push;
    let err = write.execute(args.clone(), &cancel).await.unwrap_err();
    assert_cut_short(&err.to_string(), "write");

    // The apply worker.
    *store.at.lock().unwrap() = PanicAt::Nowhere;
    write.execute(args, &cancel).await.unwrap();
    *store.at.lock().unwrap() = PanicAt::Prepare;
    let res = session.resolve(ResolveParams::apply("ok"), ResolveOptions::default(), &cancel).await;
    let shown = match res {
        Ok(res) => res.text_content(),
        Err(err) => err.to_string(),
    };
    assert_cut_short(&shown, "apply");

    // The undo worker, of an apply that went through.
    *store.at.lock().unwrap() = PanicAt::Nowhere;
    let res = session.resolve(ResolveParams::apply("ok"), ResolveOptions::default(), &cancel).await;
    res.unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "one\n");
    *store.at.lock().unwrap() = PanicAt::Prepare;
    let options = UndoOptions { target: None, front_end: None };
    let shown = match session.undo("back", options, &cancel).await {
        Ok(res) => res.text_content(),
        Err(err) => err.to_string(),
    };
    assert_cut_short(&shown, "undo");
}
