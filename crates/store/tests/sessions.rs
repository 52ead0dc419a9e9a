//! Agent sessions in `staged.db` (schema 4): each preview and log entry carries the session that
//! staged it; a model's store instance resolves only its own session's previews, a person's sees
//! them all; a file pending in one session is refused to another; schema 3 databases migrate.
// See: issue 34.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use futures::executor::block_on;
use staged_core::{
    ActionError, CancelToken, LogOutcome, PendingAction, PendingActionStore, ResolveLog,
    ResolveOptions, Session, StoreError,
};
use staged_protocol::{JsonObject, ResolveParams, ToolResult};
use staged_store::{Rehydrators, SessionScope, SqliteStore, StoredAction};

struct Note(String);

#[async_trait::async_trait]
impl PendingAction for Note {
    fn label(&self) -> &str {
        &self.0
    }
    fn source_tool_name(&self) -> &str {
        "note"
    }
    fn payload(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"text": self.0}))
    }
    async fn apply(
        &self,
        reason: &str,
        _: Option<&JsonObject>,
        _: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        Ok(ToolResult::text(format!("noted {}: {reason}", self.0)))
    }
}

fn open(dir: &std::path::Path) -> Arc<SqliteStore> {
    let mut rehydrators = Rehydrators::new();
    rehydrators.register(
        "note",
        Arc::new(|stored: &StoredAction| {
            let text = stored.payload["text"].as_str().ok_or("no text")?.to_owned();
            Ok(Arc::new(Note(text)) as Arc<dyn PendingAction>)
        }),
    );
    Arc::new(SqliteStore::open(dir, rehydrators).unwrap())
}

fn apply(store: &Arc<SqliteStore>, reason: &str) -> String {
    let session = Session::new(store.clone());
    block_on(session.resolve(
        ResolveParams::apply(reason),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap()
    .text_content()
}

/// `(label, reason, session)` of each log entry, newest first.
fn entries(store: &SqliteStore) -> Vec<(String, String, Option<u64>)> {
    store
        .log()
        .unwrap()
        .entries(100, false)
        .unwrap()
        .into_iter()
        .map(|e| (e.record.label, e.record.reason, e.session))
        .collect()
}

#[test]
fn sessions_are_found_again_while_syncs_are_deferred_as_a_hook_call_does() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.defer_syncs().unwrap();
    let a = store.open_session("claude-code", "d1", Some("41:100")).unwrap();
    let again = store.open_session("claude-code", "d1", None).unwrap();
    assert_eq!((again.number, again.process.as_deref()), (a.number, Some("41:100")));
    assert!(again.active_ms >= a.active_ms);
    let moved = store.open_session("claude-code", "d1", Some("42:7")).unwrap();
    assert_eq!((moved.number, moved.process.as_deref()), (a.number, Some("42:7")));
    assert_ne!(store.open_session("codex", "d1", None).unwrap().number, a.number);
    store.sync_deferred().unwrap();
    let other = open(dir.path());
    assert_eq!(other.session(a.number).unwrap().unwrap().process.as_deref(), Some("42:7"));
    assert_eq!(other.sessions().unwrap().len(), 2);
}

#[test]
fn sessions_are_found_again_by_client_and_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let a = store.open_session("claude-code", "7650c999", Some("41:100")).unwrap();
    let b = store.open_session("codex", "7650c999", None).unwrap();
    assert_ne!(a.number, b.number, "the same id from another client is another session");
    let again = store.open_session("claude-code", "7650c999", None).unwrap();
    assert_eq!((again.number, again.process.as_deref()), (a.number, Some("41:100")));
    assert_eq!(a.short_id(), format!("S{}", a.number));
    store.title_session(a.number, "\n  Rename the API\nand more").unwrap();
    store.title_session(a.number, "a later prompt").unwrap();
    assert_eq!(store.session(a.number).unwrap().unwrap().title.as_deref(), Some("Rename the API"));
    assert_eq!(
        store.session_of_process("claude-code", "41:100").unwrap().map(|s| s.number),
        Some(a.number)
    );
    // Another process opening the same workspace sees them.
    let other = open(dir.path());
    assert_eq!(other.sessions().unwrap().len(), 2);
}

#[test]
fn each_model_resolves_its_own_sessions_newest_preview() {
    let dir = tempfile::tempdir().unwrap();
    let (a_store, b_store, person) = (open(dir.path()), open(dir.path()), open(dir.path()));
    let a = a_store.open_session("claude-code", "a", None).unwrap().number;
    let b = b_store.open_session("claude-code", "b", None).unwrap().number;
    a_store.set_scope(SessionScope::model(a));
    b_store.set_scope(SessionScope::model(b));
    // A stages, then B stages after it, then A resolves: A's own preview, under A's reason.
    a_store.push(Arc::new(Note("a.txt".into()))).unwrap();
    b_store.push(Arc::new(Note("b.txt".into()))).unwrap();
    assert_eq!(a_store.peek().unwrap().unwrap().label(), "a.txt");
    assert_eq!(a_store.len().unwrap(), 1);
    assert_eq!(person.len().unwrap(), 2);
    assert_eq!(person.peek().unwrap().unwrap().label(), "b.txt");
    assert_eq!(apply(&a_store, "A's reason"), "noted a.txt: A's reason");
    assert_eq!(apply(&b_store, "B's reason"), "noted b.txt: B's reason");
    let entries = entries(&person);
    assert_eq!(
        entries,
        vec![
            ("b.txt".to_owned(), "B's reason".to_owned(), Some(b)),
            ("a.txt".to_owned(), "A's reason".to_owned(), Some(a)),
        ]
    );
    let summaries = person.summaries().unwrap();
    assert!(summaries.is_empty());
}

#[test]
fn a_person_resolving_a_sessions_preview_logs_it_as_that_sessions_change() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, person) = (open(dir.path()), open(dir.path()));
    let s = agent.open_session("codex", "x", None).unwrap().number;
    agent.set_scope(SessionScope::model(s));
    agent.push(Arc::new(Note("theirs".into()))).unwrap();
    person.push(Arc::new(Note("mine".into()))).unwrap();
    let listed: Vec<Option<u64>> = person.summaries().unwrap().iter().map(|p| p.session).collect();
    assert_eq!(listed, vec![None, Some(s)]);
    assert_eq!(apply(&person, "mine first"), "noted mine: mine first");
    assert_eq!(apply(&person, "then theirs"), "noted theirs: then theirs");
    let entries = entries(&person);
    assert_eq!(entries[0].2, Some(s));
    assert_eq!(entries[1].2, None);
    assert_eq!(agent.len().unwrap(), 0);
    assert!(matches!(
        person.log().unwrap().entries(10, false).unwrap()[0].record.outcome,
        LogOutcome::Applied
    ));
}

#[test]
fn a_push_is_checked_against_every_sessions_previews() {
    let dir = tempfile::tempdir().unwrap();
    let (a_store, b_store) = (open(dir.path()), open(dir.path()));
    let a = a_store.open_session("claude-code", "a", None).unwrap().number;
    let b = b_store.open_session("claude-code", "b", None).unwrap().number;
    a_store.set_scope(SessionScope::model(a));
    b_store.set_scope(SessionScope::model(b));
    a_store.push(Arc::new(Note("f".into()))).unwrap();
    let refused = b_store.push_unless(Arc::new(Note("f".into())), &|entry| {
        (entry.label() == "f").then(|| "f is pending".to_owned())
    });
    // Another session's preview is named as not the pushing session's to resolve.
    assert_eq!(
        refused,
        Err(StoreError::Refused("f is pending It is session S1's preview, not this session's: do not resolve it; a person resolves it with `staged review`. Make this change again once it is resolved: a new change is always computed against the file on disk.".to_owned()))
    );
    // A person's push is refused with the text as given.
    let person = open(dir.path());
    let refused = person.push_unless(Arc::new(Note("f".into())), &|entry| {
        (entry.label() == "f").then(|| "f is pending".to_owned())
    });
    assert_eq!(refused, Err(StoreError::Refused("f is pending".to_owned())));
}

#[test]
fn a_schema_3_database_gets_sessions_and_keeps_its_stack_and_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.push(Arc::new(Note("old".into()))).unwrap();
    store.push(Arc::new(Note("kept".into()))).unwrap();
    apply(&store, "before the migration");
    drop(store);
    {
        // Back to schema 3: no sessions, no session columns.
        let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
        conn.execute_batch(
            "DROP TABLE sessions; DROP INDEX log_session;
             ALTER TABLE pending DROP COLUMN session; ALTER TABLE log DROP COLUMN session;
             ALTER TABLE remainder DROP COLUMN session; PRAGMA user_version = 3;",
        )
        .unwrap();
    }
    let store = open(dir.path());
    let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, 6);
    assert_eq!(store.peek().unwrap().unwrap().label(), "old");
    assert_eq!(store.summaries().unwrap()[0].session, None);
    assert_eq!(apply(&store, "after it"), "noted old: after it");
    let entries = entries(&store);
    assert_eq!(
        entries,
        vec![
            ("old".to_owned(), "after it".to_owned(), None),
            ("kept".to_owned(), "before the migration".to_owned(), None),
        ]
    );
    assert!(store.sessions().unwrap().is_empty());
}

#[test]
fn a_schema_4_database_gets_the_hooks_state_and_keeps_its_sessions_and_stack() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let session = store.open_session("qwen-code", "q-1", None).unwrap();
    store.push(Arc::new(Note("kept".into()))).unwrap();
    drop(store);
    {
        // Back to schema 4: the hooks kept their state in files of their own.
        let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
        conn.execute_batch("DROP TABLE hook_state; PRAGMA user_version = 4;").unwrap();
    }
    let store = open(dir.path());
    let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, 6);
    assert_eq!(store.peek().unwrap().unwrap().label(), "kept");
    assert_eq!(store.open_session("qwen-code", "q-1", None).unwrap().number, session.number);
    assert_eq!(store.hook_state("qwen-code", "q-1").unwrap(), None);
    store.set_hook_state("qwen-code", "q-1", "{}").unwrap();
    assert_eq!(store.hook_state("qwen-code", "q-1").unwrap().as_deref(), Some("{}"));
}

#[test]
fn session_numbers_count_sessions_not_events() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let first = store.open_session("claude-code", "a", None).unwrap();
    for _ in 0..4 {
        store.open_session("claude-code", "a", Some("1:2")).unwrap();
    }
    // Every event of a known session, deferred or not, leaves the sequence where it was.
    store.defer_syncs().unwrap();
    store.open_session("claude-code", "a", None).unwrap();
    store.sync_deferred().unwrap();
    let second = store.open_session("codex", "b", None).unwrap();
    assert_eq!(second.number, first.number + 1);
}

#[test]
fn a_schema_5_database_gets_the_reservation_of_ids_and_keeps_its_stack_and_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let first = store.push(Arc::new(Note("kept".into()))).unwrap();
    drop(store);
    {
        // Back to schema 5: no reservation of ids.
        let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
        conn.execute_batch("DROP TABLE reserved; PRAGMA user_version = 5;").unwrap();
    }
    let store = open(dir.path());
    let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, 6);
    assert_eq!(store.peek().unwrap().unwrap().id, first);
    // A hook call's push after the migration takes the next id, never an earlier one.
    store.defer_syncs().unwrap();
    let next = store.push(Arc::new(Note("new".into()))).unwrap();
    store.sync_deferred().unwrap();
    let n = |id: &staged_core::PendingId| id.as_str().rsplit(':').next().unwrap().to_owned();
    assert_eq!((n(&first), n(&next)), ("0".to_owned(), "1".to_owned()));
    assert_eq!(store.len().unwrap(), 2);
}

#[test]
fn a_hooks_state_is_kept_per_client_and_session_and_replaced_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    assert_eq!(store.hook_state("cursor", "s").unwrap(), None);
    store.set_hook_state("cursor", "s", r#"{"staged":["p-1"]}"#).unwrap();
    store.set_hook_state("cline", "s", r#"{"staged":["p-2"]}"#).unwrap();
    // A big state (record mode's snapshots) is stored compressed and read back whole.
    let big = format!(r#"{{"snapshots":"{}"}}"#, "x".repeat(100_000));
    store.set_hook_state("cursor", "t", &big).unwrap();
    store.set_hook_state("cursor", "s", r#"{"staged":[]}"#).unwrap();
    // Another process (a later hook call) reads what this one stored.
    let other = open(dir.path());
    assert_eq!(other.hook_state("cursor", "s").unwrap().as_deref(), Some(r#"{"staged":[]}"#));
    assert_eq!(other.hook_state("cline", "s").unwrap().as_deref(), Some(r#"{"staged":["p-2"]}"#));
    assert_eq!(other.hook_state("cursor", "t").unwrap(), Some(big));
    assert_eq!(other.hook_state("cline", "t").unwrap(), None);
}

#[test]
fn texts_are_kept_once_by_hash_and_checked_when_read() {
    use sha2::Digest as _;
    let hash = |t: &str| -> String {
        sha2::Sha256::digest(t.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let (a, b) = ("fn a() {}\n".repeat(1000), "b\r\nmixed\n".to_owned());
    store.keep_texts(&[(&hash(&a), &a), (&hash(&b), &b), (&hash(&a), &a)]).unwrap();
    assert_eq!(store.text(&hash(&a)).unwrap().as_deref(), Some(a.as_str()));
    assert_eq!(store.text(&hash(&b)).unwrap().as_deref(), Some(b.as_str()));
    assert_eq!(store.text(&hash("absent")).unwrap(), None);
    assert!(store.keep_texts(&[(&hash(&a), "not a")]).is_err());
    // A row changed outside staged reads as missing, never as another text.
    let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    conn.execute(
        "UPDATE texts SET text = (SELECT text FROM texts WHERE hash = ?1) WHERE hash = ?2",
        [hash(&b), hash(&a)],
    )
    .unwrap();
    assert_eq!(store.text(&hash(&a)).unwrap(), None);
}

#[test]
fn review_states_are_kept_per_hunk_and_replaced_by_a_later_mark() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = store.open_session("claude-code", "r", None).unwrap().number;
    store.mark_reviewed(s, &["h1", "h2"], "kept", Some("fine"), None).unwrap();
    store.mark_reviewed(s, &["h2"], "kept", None, None).unwrap();
    assert_eq!(
        open(dir.path()).reviewed(s).unwrap(),
        vec![("h1".to_owned(), "kept".to_owned()), ("h2".to_owned(), "kept".to_owned())]
    );
    assert!(store.reviewed(s + 1).unwrap().is_empty());
}

#[test]
fn a_notice_reaches_its_session_once_whoever_asks() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (open(dir.path()), open(dir.path()));
    let s = a.open_session("claude-code", "n", None).unwrap().number;
    a.notify_session(s, "A person reverted your change to src/a.ts (lines 12-18): keep 3.")
        .unwrap();
    a.notify_session(s, "second").unwrap();
    let first = b.take_notices(s).unwrap();
    assert_eq!(
        first,
        ["A person reverted your change to src/a.ts (lines 12-18): keep 3.", "second"]
    );
    assert!(a.take_notices(s).unwrap().is_empty());
    // Racing takers: each notice is handed out once.
    for i in 0..20 {
        a.notify_session(s, &format!("n{i}")).unwrap();
    }
    let takers: Vec<_> = (0..4)
        .map(|_| {
            let store = open(dir.path());
            std::thread::spawn(move || store.take_notices(s).unwrap())
        })
        .collect();
    let mut all: Vec<String> = takers.into_iter().flat_map(|t| t.join().unwrap()).collect();
    all.sort();
    let mut expected: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
    expected.sort();
    assert_eq!(all, expected);
}

#[test]
fn a_hooks_state_goes_with_its_session_by_the_logs_retention_but_never_while_live() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.set_keep(1).unwrap();
    // A session that still has a pending preview, one that is gone (nothing of it left in the
    // log or the stack), and one whose row is gone too but whose hook saved its state now.
    let kept = store.open_session("claude-code", "kept", None).unwrap();
    store.set_scope(SessionScope::model(kept.number));
    store.push(Arc::new(Note("kept's".into()))).unwrap();
    store.set_scope(SessionScope::person());
    let gone = store.open_session("claude-code", "gone", None).unwrap();
    store.set_scope(SessionScope::model(gone.number));
    store.push(Arc::new(Note("gone's".into()))).unwrap();
    assert_eq!(apply(&store, "gone's change"), "noted gone's: gone's change");
    store.set_scope(SessionScope::person());
    for session in ["kept", "gone", "live"] {
        store.set_hook_state("claude-code", session, "{\"stopBlocks\": 1}").unwrap();
    }
    let day = 24 * 60 * 60 * 1000;
    let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    conn.execute(
        "UPDATE hook_state SET at_ms = at_ms - ?1 WHERE session IN ('kept', 'gone')",
        [day + 1000],
    )
    .unwrap();
    // A person's entry pushes the gone session's only entry out of the log.
    store.push(Arc::new(Note("a person's".into()))).unwrap();
    store.push(Arc::new(Note("another".into()))).unwrap();
    apply(&store, "a person's change");
    assert!(store.session(gone.number).unwrap().is_none());
    assert_eq!(store.hook_state("claude-code", "gone").unwrap(), None);
    assert!(store.hook_state("claude-code", "kept").unwrap().is_some());
    assert!(store.hook_state("claude-code", "live").unwrap().is_some());
    // Once it is idle too, the live one goes at the next prune.
    conn.execute("UPDATE hook_state SET at_ms = at_ms - ?1 WHERE session = 'live'", [day + 1000])
        .unwrap();
    apply(&store, "another change");
    assert_eq!(store.hook_state("claude-code", "live").unwrap(), None);
    assert!(store.hook_state("claude-code", "kept").unwrap().is_some());
}
