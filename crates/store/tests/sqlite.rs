//! `SqliteStore`: durability across store instances (as two processes see it), rehydration,
//! claims, exactly-once resolve, and clear errors for bad databases.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{
    Arc, Condvar, Mutex,
    atomic::{AtomicUsize, Ordering},
};

use futures::executor::block_on;
use staged_core::{
    ActionError, CancelToken, PendingAction, PendingActionStore, ResolveOptions, Session,
    StoreError,
};
use staged_protocol::{JsonObject, ResolveParams, ToolResult};
use staged_store::{Rehydrators, SqliteStore, StoredAction};

/// A replayable test action: its payload is its text; applying counts, and waits for the
/// other racers when it has a hold.
struct Note {
    text: String,
    applies: Arc<AtomicUsize>,
    hold: Option<Arc<Hold>>,
}

/// Keeps the apply that won a race from finishing until every other racer has returned, so
/// each of them met the claimed head.
#[derive(Default)]
struct Hold {
    others: usize,
    returned: Mutex<usize>,
    changed: Condvar,
}

impl Hold {
    fn new(others: usize) -> Arc<Self> {
        Arc::new(Self { others, ..Default::default() })
    }

    /// A racer's resolve returned.
    fn returned(&self) {
        *self.returned.lock().unwrap() += 1;
        self.changed.notify_all();
    }

    /// Waits until all the other racers have returned.
    fn wait(&self) {
        let returned = self.returned.lock().unwrap();
        drop(self.changed.wait_while(returned, |n| *n < self.others).unwrap());
    }
}

#[async_trait::async_trait]
impl PendingAction for Note {
    fn label(&self) -> &str {
        &self.text
    }
    fn source_tool_name(&self) -> &str {
        "note"
    }
    fn payload(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"text": self.text}))
    }
    async fn apply(
        &self,
        reason: &str,
        _: Option<&JsonObject>,
        _: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        self.applies.fetch_add(1, Ordering::SeqCst);
        if let Some(hold) = &self.hold {
            hold.wait();
        }
        Ok(ToolResult::text(format!("noted {}: {reason}", self.text)))
    }
}

fn rehydrators(applies: &Arc<AtomicUsize>) -> Rehydrators {
    held_rehydrators(applies, None)
}

/// [`rehydrators`] whose notes wait on `hold` when applied.
fn held_rehydrators(applies: &Arc<AtomicUsize>, hold: Option<Arc<Hold>>) -> Rehydrators {
    let applies = Arc::clone(applies);
    let mut res = Rehydrators::new();
    res.register(
        "note",
        Arc::new(move |stored: &StoredAction| {
            let text = stored.payload["text"].as_str().ok_or("payload has no text")?.to_owned();
            let note = Note { text, applies: Arc::clone(&applies), hold: hold.clone() };
            Ok(Arc::new(note) as Arc<dyn PendingAction>)
        }),
    );
    res
}

fn note(text: &str, applies: &Arc<AtomicUsize>) -> Arc<dyn PendingAction> {
    Arc::new(Note { text: text.to_owned(), applies: Arc::clone(applies), hold: None })
}

#[test]
fn a_stack_staged_by_one_instance_is_seen_and_resolved_by_another() {
    let dir = tempfile::tempdir().unwrap();
    let applies = Arc::new(AtomicUsize::new(0));
    let first = SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap();
    let a = first.push(note("first", &applies)).unwrap();
    let b = first.push(note("second", &applies)).unwrap();
    assert_eq!(a.as_str(), "pending-action:note:0");
    assert_eq!(b.as_str(), "pending-action:note:1");
    drop(first);

    let second = Arc::new(SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap());
    let labels: Vec<_> = second.list().unwrap().iter().map(|e| e.label().to_owned()).collect();
    assert_eq!(labels, ["second", "first"]);
    let session = Session::new(second.clone());
    let res = futures::executor::block_on(session.resolve(
        ResolveParams::apply("ok"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "noted second: ok");
    assert_eq!(second.peek().unwrap().unwrap().id, a);
    assert_eq!(applies.load(Ordering::SeqCst), 1);
    // Ids are never reused, even after the top was removed.
    let c = second.push(note("third", &applies)).unwrap();
    assert_eq!(c.as_str(), "pending-action:note:2");
    assert_eq!(second.pop().unwrap().unwrap().id, c);
    assert_eq!(second.len().unwrap(), 1);
    assert!(dir.path().join(".gitignore").exists());
}

/// A store that closes leaves its WAL for the next process (no checkpoint on close, which
/// cost every short process, a hook call above all, two more syncs and a new WAL), and what
/// it committed is read back from there, and by a plain SQLite connection too.
#[test]
fn a_closed_store_leaves_its_wal_and_the_next_one_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let applies = Arc::new(AtomicUsize::new(0));
    let first = SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap();
    first.push(note("kept in the WAL", &applies)).unwrap();
    drop(first);
    let wal = dir.path().join("staged.db-wal");
    assert!(wal.exists(), "closing checkpointed and removed the WAL");
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    let second = SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap();
    let labels: Vec<String> = second.summaries().unwrap().into_iter().map(|s| s.label).collect();
    assert_eq!(labels, ["kept in the WAL"]);
    drop(second);
    let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    let rows: i64 = conn.query_row("SELECT count(*) FROM pending", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 1);
}

#[test]
fn an_entry_without_a_rehydrator_lists_and_discards_but_refuses_to_apply() {
    let dir = tempfile::tempdir().unwrap();
    let applies = Arc::new(AtomicUsize::new(0));
    SqliteStore::open(dir.path(), rehydrators(&applies))
        .unwrap()
        .push(note("orphan", &applies))
        .unwrap();
    let store = Arc::new(SqliteStore::open(dir.path(), Rehydrators::new()).unwrap());
    assert_eq!(store.peek().unwrap().unwrap().label(), "orphan");
    let session = Session::new(store.clone());
    let err = futures::executor::block_on(session.resolve(
        ResolveParams::apply("x"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed: cannot apply `orphan` here: no tool in this process can replay `note` previews; discard it, or resolve it where its tool runs"
    );
    assert_eq!(store.len().unwrap(), 1, "a failed apply keeps the entry");
    let res = futures::executor::block_on(session.resolve(
        ResolveParams::discard("stale"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "Discarded: orphan. Reason: stale");
    assert_eq!(store.len().unwrap(), 0);
}

#[test]
fn a_claim_held_by_one_instance_makes_the_head_busy_for_another() {
    let dir = tempfile::tempdir().unwrap();
    let applies = Arc::new(AtomicUsize::new(0));
    let one = SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap();
    let two = SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap();
    let id = one.push(note("x", &applies)).unwrap();
    let claim = one.claim_head().unwrap().unwrap();
    assert!(matches!(two.claim_head(), Err(StoreError::Busy { id: busy, .. }) if busy == id));
    assert!(matches!(two.pop(), Err(StoreError::Busy { .. })));
    // A claim from another store is refused.
    let three_dir = tempfile::tempdir().unwrap();
    let three = SqliteStore::open(three_dir.path(), rehydrators(&applies)).unwrap();
    three.push(note("y", &applies)).unwrap();
    drop(claim); // a dropped claim (or a dead process) releases the lock
    let claim = two.claim_head().unwrap().unwrap();
    assert!(matches!(three.complete(claim, None), Err(StoreError::UnknownClaim { .. })));
    let claim = one.claim_head().unwrap().unwrap();
    one.release(claim, None).unwrap();
    let claim = two.claim_head().unwrap().unwrap();
    two.complete(claim, None).unwrap();
    assert_eq!(one.len().unwrap(), 0);
    assert_eq!(one.clear_stale().unwrap(), 0);
}

#[test]
fn concurrent_resolves_from_two_instances_apply_exactly_once() {
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let applies = Arc::new(AtomicUsize::new(0));
        SqliteStore::open(dir.path(), rehydrators(&applies))
            .unwrap()
            .push(note("once", &applies))
            .unwrap();
        let n_racers = 4;
        let hold = Hold::new(n_racers - 1);
        let handles: Vec<_> = (0..n_racers)
            .map(|_| {
                let path = dir.path().to_path_buf();
                let applies = Arc::clone(&applies);
                let hold = Arc::clone(&hold);
                std::thread::spawn(move || {
                    let rehydrators = held_rehydrators(&applies, Some(Arc::clone(&hold)));
                    let store = Arc::new(SqliteStore::open(&path, rehydrators).unwrap());
                    let session = Session::new(store);
                    let res = futures::executor::block_on(session.resolve(
                        ResolveParams::apply("race"),
                        ResolveOptions::default(),
                        &CancelToken::new(),
                    ));
                    hold.returned();
                    res
                })
            })
            .collect();
        let n_ok = handles.into_iter().map(|h| h.join().unwrap()).filter(Result::is_ok).count();
        assert_eq!(n_ok, 1);
        assert_eq!(applies.load(Ordering::SeqCst), 1);
    }
}

/// Processes that start together in a new workspace all open its new database: the first
/// switch to WAL mode must not turn the others away with "database is locked".
#[test]
fn instances_opening_a_new_database_at_the_same_moment_all_succeed() {
    const INSTANCES: usize = 8;
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let start = Arc::new(std::sync::Barrier::new(INSTANCES));
        let applies = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..INSTANCES)
            .map(|t| {
                let path = dir.path().to_path_buf();
                let start = Arc::clone(&start);
                let applies = Arc::clone(&applies);
                std::thread::spawn(move || {
                    let at = |err: StoreError| format!("round {round}, instance {t}: {err}");
                    start.wait();
                    let store = SqliteStore::open(&path, rehydrators(&applies)).map_err(at)?;
                    store.push(note(&format!("{round}-{t}"), &applies)).map_err(at)
                })
            })
            .collect();
        let errors: Vec<String> =
            handles.into_iter().filter_map(|h| h.join().unwrap().err()).collect();
        assert_eq!(errors, Vec::<String>::new());
        let store = SqliteStore::open(dir.path(), Rehydrators::new()).unwrap();
        assert_eq!(store.len().unwrap(), INSTANCES);
    }
}

#[test]
fn concurrent_pushes_from_many_instances_get_unique_ids() {
    let dir = tempfile::tempdir().unwrap();
    let applies = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let path = dir.path().to_path_buf();
            let applies = Arc::clone(&applies);
            std::thread::spawn(move || {
                let store = SqliteStore::open(&path, rehydrators(&applies)).unwrap();
                (0..25)
                    .map(|i| store.push(note(&format!("{t}-{i}"), &applies)).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<_> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 100);
    assert_eq!(SqliteStore::open(dir.path(), Rehydrators::new()).unwrap().len().unwrap(), 100);
}

#[test]
fn an_action_without_a_payload_applies_in_its_process_and_reads_back_unavailable_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path(), Rehydrators::new()).unwrap());
    let closure = staged_core::FnPendingAction::new("in-memory only", |input| async move {
        Ok(ToolResult::text(format!("ran: {}", input.reason)))
    });
    let first = store.push(Arc::new(closure.clone())).unwrap();
    let second = store.push(Arc::new(closure)).unwrap();
    assert_eq!(first.as_str(), "pending-action:custom_tool:0");

    // The process that staged them runs them.
    let session = Session::new(store.clone());
    let res = block_on(session.resolve(
        ResolveParams::apply("here"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "ran: here");
    assert_eq!(store.len().unwrap(), 1);
    drop(session);
    drop(store);

    // Another process (or this one after a restart) lists it, cannot apply it, can discard it.
    let other = Arc::new(SqliteStore::open(dir.path(), Rehydrators::new()).unwrap());
    let listed = other.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].id.as_str(), listed[0].label()), (first.as_str(), "in-memory only"));
    let session = Session::new(other.clone());
    let err = block_on(session.resolve(
        ResolveParams::apply("there"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed: cannot apply `in-memory only` here: `custom_tool` staged it without a replayable payload, so only the process that staged it could apply it; discard it, or resolve it where its tool runs"
    );
    assert_eq!(other.peek().unwrap().unwrap().id, first, "a failed apply keeps it pending");
    let res = block_on(session.resolve(
        ResolveParams::discard("stale"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "Discarded: in-memory only. Reason: stale");
    assert!(other.is_empty().unwrap());
    assert_ne!(second, first);
}

#[test]
fn a_corrupt_database_is_a_clear_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("staged.db");
    std::fs::write(&db, vec![0x42u8; 8192]).unwrap();
    let err = SqliteStore::open(dir.path(), Rehydrators::new()).unwrap_err().to_string();
    assert!(err.contains(&db.display().to_string()), "{err}");
    assert!(err.contains("not a database"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), vec![0x42u8; 8192], "nothing was overwritten");
}

#[test]
fn a_database_from_a_newer_staged_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(SqliteStore::open(dir.path(), Rehydrators::new()).unwrap());
    let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    conn.pragma_update(None, "user_version", 7).unwrap();
    drop(conn);
    let err = SqliteStore::open(dir.path(), Rehydrators::new()).unwrap_err().to_string();
    assert!(err.contains("written by a newer staged (schema 7, this build reads 6)"), "{err}");
}

#[test]
fn a_state_folder_that_cannot_be_created_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "file").unwrap();
    let err =
        SqliteStore::open(&blocker.join(".staged"), Rehydrators::new()).unwrap_err().to_string();
    assert!(err.contains("cannot create the state folder"), "{err}");
}

#[test]
fn retire_finished_removes_that_entry_unless_a_live_resolve_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let applies = Arc::new(AtomicUsize::new(0));
    let store = SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap();
    let keep = store.push(note("keep", &applies)).unwrap();
    let done = store.push(note("done", &applies)).unwrap();
    // A live resolve holds the head: it decides, so recovery leaves it.
    let claim = store.claim_head().unwrap().unwrap();
    assert!(!store.retire_finished(done.as_str()).unwrap());
    drop(claim);
    assert!(store.retire_finished(done.as_str()).unwrap());
    // Already gone counts as retired.
    assert!(store.retire_finished(done.as_str()).unwrap());
    let ids: Vec<_> = store.list().unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, [keep]);
}

#[cfg(unix)]
#[test]
fn a_symlinked_state_folder_or_database_is_refused_and_never_followed() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    // `.staged` itself is a symlink.
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    symlink(&outside, ws.join(".staged")).unwrap();
    let err = SqliteStore::open(&ws.join(".staged"), Rehydrators::new()).unwrap_err().to_string();
    assert!(err.contains("refusing the state folder") && err.contains("symlink"), "{err}");
    // The database, its WAL, or the claims folder is a symlink.
    for planted in ["staged.db", "staged.db-wal", "staged.db-shm", "claims"] {
        let state = dir.path().join(format!("state-{planted}"));
        std::fs::create_dir(&state).unwrap();
        symlink(outside.join(planted), state.join(planted)).unwrap();
        let err = SqliteStore::open(&state, Rehydrators::new()).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{planted}: {err}");
    }
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "something was written outside");
}

#[cfg(unix)]
#[test]
fn planted_symlinks_for_the_gitignore_and_claim_locks_are_not_followed() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(state.join("claims")).unwrap();
    symlink(&victim, state.join(".gitignore")).unwrap();
    for seq in 1..4 {
        symlink(&victim, state.join(format!("claims/{seq}.lock"))).unwrap();
    }
    let applies = Arc::new(AtomicUsize::new(0));
    let store = SqliteStore::open(&state, rehydrators(&applies)).unwrap();
    store.push(note("one", &applies)).unwrap();
    // Claiming the head would open `claims/1.lock`: refused, never followed.
    let err = store.claim_head().unwrap_err().to_string();
    assert!(err.contains("1.lock"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
}

#[test]
fn a_malformed_row_lists_and_discards_but_says_why_it_cannot_apply() {
    let dir = tempfile::tempdir().unwrap();
    let applies = Arc::new(AtomicUsize::new(0));
    let store = Arc::new(SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap());
    store.push(note("fine", &applies)).unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    conn.execute("UPDATE pending SET payload = '{not json'", []).unwrap();
    drop(conn);
    let session = Session::new(store.clone());
    let err = futures::executor::block_on(session.resolve(
        ResolveParams::apply("try"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap_err();
    assert!(err.message().contains("its stored payload is not valid JSON"), "{}", err.message());
    assert_eq!(applies.load(Ordering::SeqCst), 0);
    futures::executor::block_on(session.resolve(
        ResolveParams::discard("junk"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(store.len().unwrap(), 0);
}

/// An action with given details and payload, as a tool's preview would have them.
struct Stored {
    details: serde_json::Value,
    payload: serde_json::Value,
}

#[async_trait::async_trait]
impl PendingAction for Stored {
    fn label(&self) -> &str {
        "stored"
    }
    fn source_tool_name(&self) -> &str {
        "note"
    }
    fn details(&self) -> Option<&serde_json::Value> {
        Some(&self.details)
    }
    fn payload(&self) -> Option<serde_json::Value> {
        Some(self.payload.clone())
    }
    async fn apply(
        &self,
        _: &str,
        _: Option<&JsonObject>,
        _: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        Ok(ToolResult::text("applied"))
    }
}

/// Every row of the store in `dir` as a rehydrator receives it, oldest first.
fn stored_rows(dir: &std::path::Path) -> Vec<StoredAction> {
    let rows = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&rows);
    let mut rehydrators = Rehydrators::new();
    rehydrators.register(
        "note",
        Arc::new(move |stored: &StoredAction| {
            seen.lock().unwrap().push(stored.clone());
            Err("recorded by the test".to_owned())
        }),
    );
    SqliteStore::open(dir, rehydrators).unwrap().list().unwrap();
    let mut rows = rows.lock().unwrap().clone();
    rows.reverse();
    rows
}

/// `(typeof(details), length(details), typeof(payload), length(payload), details_in_payload)`
/// of every row, oldest first.
fn raw_columns(dir: &std::path::Path) -> Vec<(String, i64, String, i64, i64)> {
    let conn = rusqlite::Connection::open(dir.join("staged.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT typeof(details), coalesce(length(details), 0), typeof(payload), length(payload),
                    details_in_payload FROM pending ORDER BY seq",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn big_diff() -> String {
    (0..20_000).map(|i| format!("-foo({i}, \"x\");\n+bar(\"x\", {i});\n")).collect()
}

#[test]
fn a_big_diff_is_stored_compressed_and_once_and_reads_back_as_pushed() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), Rehydrators::new()).unwrap();
    let diff = big_diff();
    let details = serde_json::json!({"diff": diff, "totalReplacements": 20_000});
    let payload = serde_json::json!({"text": "big", "details": details});
    store.push(Arc::new(Stored { details: details.clone(), payload: payload.clone() })).unwrap();
    // A payload whose details are not the row's keeps its own.
    let other = serde_json::json!({"text": "other", "details": {"diff": ""}});
    store.push(Arc::new(Stored { details: details.clone(), payload: other.clone() })).unwrap();

    let columns = raw_columns(dir.path());
    let (details_type, details_len, payload_type, payload_len, once) = &columns[0];
    assert_eq!((details_type.as_str(), payload_type.as_str(), *once), ("blob", "blob", 1));
    assert!(*details_len * 10 < diff.len() as i64, "{details_len} bytes for {}", diff.len());
    assert!(*payload_len < 100, "the payload's copy of the details is not stored: {payload_len}");
    assert_eq!(columns[1].4, 0);

    drop(store);
    let store = SqliteStore::open(dir.path(), Rehydrators::new()).unwrap();
    let rows = stored_rows(dir.path());
    assert_eq!(rows[0].details.as_ref(), Some(&details));
    assert_eq!(rows[0].payload, payload);
    assert_eq!(rows[1].payload, other);
    assert_eq!(store.get(rows[0].id.as_str()).unwrap().unwrap().action.details(), Some(&details));
}

#[test]
fn a_schema_1_database_is_migrated_in_place_and_keeps_its_ids() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("staged.db");
    let details = serde_json::json!({"diff": big_diff()});
    let payload = serde_json::json!({"text": "old", "details": details});
    {
        // The schema and rows as staged's schema 1 wrote them: JSON text.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE pending (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 id TEXT NOT NULL UNIQUE,
                 source_tool TEXT NOT NULL,
                 label TEXT NOT NULL,
                 created_at_ms INTEGER NOT NULL,
                 details TEXT,
                 payload TEXT NOT NULL,
                 position INTEGER NOT NULL
             );
             CREATE INDEX pending_position ON pending (position);
             PRAGMA user_version = 1;",
        )
        .unwrap();
        let insert = "INSERT INTO pending (id, source_tool, label, created_at_ms, details, payload, position)
                      VALUES (?1, 'note', ?2, 0, ?3, ?4, ?5)";
        conn.execute(
            insert,
            rusqlite::params![
                "pending-action:note:0",
                "old",
                details.to_string(),
                payload.to_string(),
                1
            ],
        )
        .unwrap();
        conn.execute(
            insert,
            rusqlite::params![
                "pending-action:note:1",
                "plain",
                None::<String>,
                r#"{"text":"plain"}"#,
                2
            ],
        )
        .unwrap();
        // The newest row was resolved: its id must not come back.
        conn.execute(
            insert,
            rusqlite::params![
                "pending-action:note:2",
                "gone",
                None::<String>,
                r#"{"text":"gone"}"#,
                3
            ],
        )
        .unwrap();
        conn.execute("DELETE FROM pending WHERE label = 'gone'", []).unwrap();
    }
    let stored_bytes = |db: &std::path::Path| -> i64 {
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.query_row(
            "SELECT sum(coalesce(length(details), 0) + length(payload)) FROM pending",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let text_bytes = stored_bytes(&db);
    let text_file_size = std::fs::metadata(&db).unwrap().len();

    let applies = Arc::new(AtomicUsize::new(0));
    let store = SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    // Through schema 2 (compressed rows), 3 (the resolve log), 4 (sessions) and 5 (the
    // hooks' state) to 6 (the reservation of ids).
    assert_eq!(version, 6);
    let columns = raw_columns(dir.path());
    assert_eq!(columns[0].0, "blob");
    assert_eq!(columns[0].4, 1);
    assert_eq!((columns[1].0.as_str(), columns[1].2.as_str()), ("null", "blob"));
    let rows = stored_rows(dir.path());
    assert_eq!(rows[0].details.as_ref(), Some(&details));
    assert_eq!(rows[0].payload, payload);
    assert_eq!(rows[1].details, None);
    assert_eq!(rows[1].payload, serde_json::json!({"text": "plain"}));
    let labels: Vec<_> = store.list().unwrap().iter().map(|e| e.label().to_owned()).collect();
    assert_eq!(labels, ["plain", "old"]);
    assert_eq!(store.push(note("new", &applies)).unwrap().as_str(), "pending-action:note:3");
    // Opening again finds schema 3 and changes nothing.
    drop(store);
    let store = SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap();
    assert_eq!(stored_rows(dir.path())[0].payload, payload);
    assert!(
        stored_bytes(&db) * 10 < text_bytes,
        "{} bytes, {text_bytes} before",
        stored_bytes(&db)
    );
    // The migration vacuumed the file: it shrank with its rows.
    drop((store, conn));
    assert!(std::fs::metadata(&db).unwrap().len() * 5 < text_file_size, "the file shrank");
}

#[test]
fn summaries_list_the_stack_without_reading_details_or_payloads() {
    let dir = tempfile::tempdir().unwrap();
    let applies = Arc::new(AtomicUsize::new(0));
    let store = SqliteStore::open(dir.path(), rehydrators(&applies)).unwrap();
    assert_eq!(store.head_summary().unwrap(), None);
    store.push(note("first", &applies)).unwrap();
    let details = serde_json::json!({"diff": big_diff()});
    store.push(Arc::new(Stored { details: details.clone(), payload: details })).unwrap();
    let summaries = store.summaries().unwrap();
    let entries = store.list().unwrap();
    assert_eq!(summaries.len(), 2);
    for (summary, entry) in summaries.iter().zip(&entries) {
        assert_eq!(summary.id, entry.id);
        assert_eq!(summary.label, entry.label());
        assert_eq!(summary.source_tool_name, entry.source_tool_name());
        assert_eq!(summary.created_at, entry.created_at);
    }
    assert_eq!(store.head_summary().unwrap().as_ref(), summaries.first());
}
