//! The resolve log in `staged.db`: durable across store instances, written with the stack's
//! change in one transaction, prepared records that only a finished commit shows (a remainder
//! pushed once), rolled-back ones forgotten, retention, and the migration from schema 2.
// See: issue 13.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use staged_core::{
    ActionError, AppliedChange, CancelToken, FileChange, FrontEnd, LogAction, LogOutcome,
    LogRecord, PendingAction, PendingActionStore, ResolveOptions, Retirement, Session,
};
use staged_protocol::{JsonObject, ResolveParams, ToolResult};
use staged_store::{Rehydrators, SqliteStore, StoredAction};

/// A replayable action: its payload is its label.
struct Note(String);

#[async_trait::async_trait]
impl PendingAction for Note {
    fn label(&self) -> &str {
        &self.0
    }
    fn source_tool_name(&self) -> &str {
        "note"
    }
    fn details(&self) -> Option<&serde_json::Value> {
        None
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

fn rehydrators() -> Rehydrators {
    let mut res = Rehydrators::new();
    res.register(
        "note",
        Arc::new(|stored: &StoredAction| {
            let text = stored.payload["text"].as_str().ok_or("no text")?.to_owned();
            Ok(Arc::new(Note(text)) as Arc<dyn PendingAction>)
        }),
    );
    res
}

fn open(dir: &std::path::Path) -> Arc<SqliteStore> {
    Arc::new(SqliteStore::open(dir, rehydrators()).unwrap())
}

fn outcomes(store: &SqliteStore) -> Vec<(LogOutcome, String)> {
    use staged_core::ResolveLog as _;
    store
        .entries(100, false)
        .unwrap()
        .into_iter()
        .map(|e| (e.record.outcome, e.record.label))
        .collect()
}

fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    futures::executor::block_on(fut)
}

#[test]
fn the_log_is_durable_and_shared_by_every_instance() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(dir.path());
    let session = Session::new(first.clone());
    session.push_pending_action(Arc::new(Note("a".into()))).unwrap();
    block_on(session.resolve(
        ResolveParams::apply("yes"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    session.push_pending_action(Arc::new(Note("b".into()))).unwrap();
    drop(session);
    drop(first);

    let second = open(dir.path());
    let session = Session::new(second.clone());
    block_on(session.resolve(
        ResolveParams::discard("no"),
        ResolveOptions {
            front_end: Some(&FrontEnd::Mcp(Some("codex".into()))),
            ..Default::default()
        },
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(
        outcomes(&second),
        [(LogOutcome::Discarded, "b".to_owned()), (LogOutcome::Applied, "a".to_owned())]
    );
    let log = second.log().unwrap();
    let entries = log.entries(10, true).unwrap();
    assert_eq!(entries[0].record.front_end, "mcp:codex");
    assert_eq!(entries[1].record.result, "noted a: yes");
    assert_eq!(entries[1].record.id.as_str(), "pending-action:note:0");
    assert_eq!(log.entry(entries[1].seq).unwrap().unwrap().record, entries[1].record);
}

fn record(label: &str) -> LogRecord {
    let mut res = LogRecord::new(
        staged_core::PendingId::from_string(format!("pending-action:note:{label}")),
        label,
        "note",
        LogOutcome::Applied,
        LogAction::Apply,
        &FrontEnd::Cli,
    );
    res.reason = "because".to_owned();
    res
}

fn change_with_rest(rest: &str) -> AppliedChange {
    AppliedChange {
        result: "half".to_owned(),
        label: None,
        diff: Some("-x\n+y\n".to_owned()),
        files: vec![FileChange {
            path: "x".to_owned(),
            before: Some("aa".to_owned()),
            after: Some("bb".to_owned()),
        }],
        undo: Some(serde_json::json!({"any": "data"})),
        remainder: Some(Arc::new(Note(rest.to_owned()))),
        texts: Vec::new(),
    }
}

#[test]
fn a_prepared_commit_shows_only_once_finished_and_pushes_its_remainder_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let original = store.push(Arc::new(Note("whole".into()))).unwrap();
    let claim = store.claim_head().unwrap().unwrap();
    let retirement = Retirement::claimed_logged(store.clone(), claim, record("whole"));
    retirement.prepare("1-2-3", &change_with_rest("rest")).unwrap();
    // Prepared: neither the record nor the remainder shows, and the preview is still there.
    assert!(outcomes(&store).is_empty());
    assert_eq!(store.len().unwrap(), 1);
    // A crash here: the claim dies with the process; recovery finishes the commit by key.
    drop(retirement);
    let other = open(dir.path());
    assert!(other.finish_recovered("1-2-3", Some(original.as_str())).unwrap());
    let head = other.peek().unwrap().unwrap();
    assert_eq!(head.label(), "rest");
    assert_ne!(head.id, original);
    assert_eq!(other.len().unwrap(), 1);
    let entry = &other.log().unwrap().entries(1, true).unwrap()[0];
    assert_eq!(
        entry.record.result,
        format!("half The rest stays pending as the newest preview: rest ({}).", head.id)
    );
    assert_eq!(entry.record.diff.as_deref(), Some("-x\n+y\n"));
    assert_eq!(entry.record.undo, Some(serde_json::json!({"any": "data"})));
    assert_eq!(entry.record.files[0].before.as_deref(), Some("aa"));
    // Finishing again (a recovery after a crash before the journal was deleted) changes nothing.
    assert!(other.finish_recovered("1-2-3", Some(original.as_str())).unwrap());
    assert_eq!(other.len().unwrap(), 1);
    assert_eq!(outcomes(&other).len(), 1);
}

#[test]
fn a_rolled_back_commit_is_forgotten_and_a_held_claim_decides() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let id = store.push(Arc::new(Note("whole".into()))).unwrap();
    let claim = store.claim_head().unwrap().unwrap();
    let retirement = Retirement::claimed_logged(store.clone(), claim, record("whole"));
    retirement.prepare("4-5-6", &change_with_rest("rest")).unwrap();
    // While a live resolve holds the claim, recovery leaves the preview to it.
    let other = open(dir.path());
    assert!(!other.finish_recovered("4-5-6", Some(id.as_str())).unwrap());
    drop(retirement);
    other.abandon_prepared("4-5-6").unwrap();
    // A later finish of the same key finds nothing prepared: no remainder, no record.
    assert!(other.finish_recovered("4-5-6", None).unwrap());
    assert_eq!(other.list().unwrap().iter().map(|e| e.id.clone()).collect::<Vec<_>>(), [id]);
    assert!(outcomes(&other).is_empty());
}

#[test]
fn retention_is_kept_per_workspace_and_bounds_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let log = store.log().unwrap();
    assert_eq!(log.keep().unwrap(), staged_core::DEFAULT_LOG_KEEP);
    log.set_keep(10).unwrap();
    assert!(log.set_keep(0).is_err());
    let session = Session::new(store.clone());
    for i in 0..25 {
        session.push_pending_action(Arc::new(Note(format!("n{i}")))).unwrap();
        block_on(session.resolve(
            ResolveParams::apply("yes"),
            ResolveOptions::default(),
            &CancelToken::new(),
        ))
        .unwrap();
    }
    let reopened = open(dir.path());
    let log = reopened.log().unwrap();
    assert_eq!(log.keep().unwrap(), 10);
    let seqs: Vec<u64> = log.entries(100, false).unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (16..=25).rev().collect::<Vec<u64>>());
    assert!(log.entry(15).unwrap().is_none());
}

#[test]
fn a_schema_2_database_gets_the_log_and_keeps_its_stack() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.push(Arc::new(Note("kept".into()))).unwrap();
    drop(store);
    {
        // Back to schema 2: no log tables.
        let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
        conn.execute_batch(
            "DROP TABLE log; DROP TABLE remainder; DROP TABLE settings; PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    let store = open(dir.path());
    let conn = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, 6);
    assert_eq!(store.peek().unwrap().unwrap().label(), "kept");
    let session = Session::new(store.clone());
    block_on(session.resolve(
        ResolveParams::apply("now"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(outcomes(&store), [(LogOutcome::Applied, "kept".to_owned())]);
}

#[test]
fn a_small_log_column_is_stored_plain_a_large_one_compressed_and_both_forms_read_back() {
    use staged_core::PendingActionStore as _;
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut small = record("small");
    small.diff = Some("-x\n+y\n".to_owned());
    small.undo = Some(serde_json::json!({"ops": [{"path": "x", "edits": []}]}));
    small.extra = Some(serde_json::json!({"why": "short"}).as_object().unwrap().clone());
    small.files = vec![FileChange {
        path: "x".to_owned(),
        before: Some("aa".to_owned()),
        after: Some("bb".to_owned()),
    }];
    let mut large = record("large");
    let body: String = (0..5_000).map(|i| format!("+line {i}\n")).collect();
    large.diff = Some(body.clone());
    large.undo = Some(serde_json::json!({"content": body}));
    large.files = (0..100)
        .map(|i| FileChange {
            path: format!("f{i}"),
            before: None,
            after: Some(format!("{i:064}")),
        })
        .collect();
    store.log_record(small.clone()).unwrap();
    store.log_record(large.clone()).unwrap();

    let db = rusqlite::Connection::open(dir.path().join("staged.db")).unwrap();
    let kinds = |label: &str| -> Vec<String> {
        db.query_row(
            "SELECT typeof(extra), typeof(diff), typeof(files), typeof(undo) FROM log WHERE label = ?1",
            [label],
            |row| Ok((0..4).map(|i| row.get::<_, String>(i).unwrap()).collect()),
        )
        .unwrap()
    };
    assert_eq!(kinds("small"), ["text", "text", "text", "text"]);
    assert_eq!(kinds("large")[1..], ["blob", "blob", "blob"]);
    let read = |label: &str| {
        let log = store.log().unwrap();
        log.entries(10, true).unwrap().into_iter().find(|e| e.record.label == label).unwrap().record
    };
    assert_eq!(read("small"), small);
    assert_eq!(read("large"), large);

    // A small value an older build stored compressed still reads back.
    let undo = serde_json::to_vec(small.undo.as_ref().unwrap()).unwrap();
    let packed = zstd::bulk::compress(&undo, 1).unwrap();
    db.execute("UPDATE log SET undo = ?1 WHERE label = 'small'", [packed]).unwrap();
    assert_eq!(read("small"), small);
}

/// A record of `label` carrying a notice for session `number` (`extra.notice`, as a session
/// revert's record does).
fn record_with_notice(label: &str, number: u64) -> LogRecord {
    let mut res = record(label);
    let mut extra = JsonObject::new();
    extra.insert(
        staged_store::NOTICE_FIELD.to_owned(),
        serde_json::json!({"session": format!("S{number}"), "text": format!("told of {label}")}),
    );
    res.extra = Some(extra);
    res
}

#[test]
fn a_records_notice_is_left_when_the_record_is_final_and_only_then() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let s = store.open_session("claude-code", "k", None).unwrap().number;
    let change = AppliedChange { remainder: None, ..change_with_rest("unused") };
    // Prepared, then rolled back (a kill before the commit point): nobody is told.
    let rolled_back = Retirement::for_undo(store.clone(), record_with_notice("rolled back", s));
    rolled_back.prepare("7-0-1", &change).unwrap();
    assert!(store.take_notices(s).unwrap().is_empty(), "told before the commit point");
    drop(rolled_back);
    store.abandon_prepared("7-0-1").unwrap();
    assert!(store.take_notices(s).unwrap().is_empty(), "told of a rolled-back commit");
    // Prepared, then finished by recovery (a kill after the commit point): told once.
    let finished = Retirement::for_undo(store.clone(), record_with_notice("finished", s));
    finished.prepare("7-0-2", &change).unwrap();
    drop(finished);
    let other = open(dir.path());
    assert!(other.finish_recovered("7-0-2", None).unwrap());
    assert!(other.finish_recovered("7-0-2", None).unwrap(), "finishing twice");
    assert_eq!(store.take_notices(s).unwrap(), ["told of finished"]);
    assert!(store.take_notices(s).unwrap().is_empty());
    // A live commit: told when it retires its record.
    let live = Retirement::for_undo(store.clone(), record_with_notice("live", s));
    live.prepare("7-0-3", &change).unwrap();
    assert!(store.take_notices(s).unwrap().is_empty());
    assert!(live.retire().is_ok());
    assert_eq!(store.take_notices(s).unwrap(), ["told of live"]);
    // A record whose notice names no session tells nobody, and finishes.
    let mut odd = record("odd");
    let mut extra = JsonObject::new();
    extra.insert(
        staged_store::NOTICE_FIELD.to_owned(),
        serde_json::json!({"session": "not a session", "text": "x"}),
    );
    odd.extra = Some(extra);
    let odd = Retirement::for_undo(store.clone(), odd);
    odd.prepare("7-0-4", &change).unwrap();
    assert!(odd.retire().is_ok());
    assert!(store.take_notices(s).unwrap().is_empty());
    assert_eq!(outcomes(&store).len(), 3);
}
