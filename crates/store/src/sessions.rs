//! Agent sessions in `staged.db` (schema 4): who staged each pending preview and whose change
//! each log entry is, and which previews a store instance resolves.
//!
//! A session is one run of one client (a Claude Code or Codex session, a `staged agent` run, an
//! MCP connection), found again by its client and the client's own id. Pending rows and log rows
//! carry the session's number (`NULL`: a person, or a row older than schema 4). A store instance
//! acts for one [`SessionScope`]: what it pushes and records belongs to its session, and when it
//! resolves for a model it sees only that session's previews, while a person's instance sees
//! all of them.
//!
//! The texts a session's history needs (what a logged write left in a file) are kept by their
//! SHA-256, compressed, once each: [`SqliteStore::keep_texts`] and [`SqliteStore::text`]. A
//! text read back is checked against its hash, since the database is as open to tampering as
//! any file of the workspace.
//!
//! What a client's hook remembers of one of its sessions between calls (schema 5:
//! [`SqliteStore::hook_state`], [`SqliteStore::set_hook_state`]) is a row here too, so that
//! saving it is one commit (synced with the hook call's others: [`SqliteStore::defer_syncs`])
//! where its own file cost two syncs and a rename.

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use staged_core::StoreError;

use crate::{
    rows::now_ms,
    sqlite::{SqliteStore, lock},
    wal::Unsynced,
};

/// Which agent session a store instance acts for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionScope {
    /// The session a push or a record belongs to; `None`: a person.
    pub acting: Option<u64>,
    /// Whether the head, the listing and the count are the acting session's own (a model's
    /// view), rather than every session's (a person's).
    pub own_stack: bool,
    /// With `own_stack`: a person's previews (staged with no session) count as its own too,
    /// as for a `staged agent` run a person started to work through what they staged.
    pub with_person: bool,
}

impl SessionScope {
    /// A person's: every session's previews, nothing recorded as a session's.
    pub fn person() -> SessionScope {
        SessionScope::default()
    }

    /// A model's in `session`: its own previews only.
    pub fn model(session: u64) -> SessionScope {
        SessionScope { acting: Some(session), own_stack: true, with_person: false }
    }

    /// A `staged agent` run's, or a stdio `staged mcp`'s, in `session`: its own previews and
    /// the person's (the stack a terminal shares with every front end), never another agent
    /// session's.
    pub fn agent(session: u64) -> SessionScope {
        SessionScope { acting: Some(session), own_stack: true, with_person: true }
    }

    /// The SQL condition on `pending` rows this scope sees (`1` for all).
    pub(crate) fn condition(self) -> String {
        match (self.own_stack, self.acting) {
            (false, _) => "1".to_owned(),
            (true, Some(session)) if self.with_person => {
                format!("(session = {session} OR session IS NULL)")
            }
            (true, Some(session)) => format!("session = {session}"),
            (true, None) => "session IS NULL".to_owned(),
        }
    }
}

/// One session, as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Its number, counting up, never reused: the short id is `S<number>`.
    pub number: u64,
    /// The client: `claude-code`, `codex`, `agent`, `mcp:<name>`.
    pub client: String,
    /// The client's own id of it.
    pub external_id: String,
    /// Its title (the first line of its first prompt), when the client gave one.
    pub title: Option<String>,
    /// The client's process (`<pid>:<start time>`), when known: what ties a client's MCP
    /// server to the hook events of the same client.
    pub process: Option<String>,
    /// When it was first seen, in milliseconds since the Unix epoch.
    pub started_ms: i64,
    /// When it was last seen.
    pub active_ms: i64,
}

impl SessionRow {
    /// `S<number>`.
    pub fn short_id(&self) -> String {
        format!("S{}", self.number)
    }
}

/// The longest part of a mistyped session id that an error repeats, in characters.
const MAX_TYPED_SHOWN: usize = 24;

/// The number of the session a person or a client named: `S3`, `s3` or `3`, ASCII digits
/// only (no sign, space or underscore). Otherwise what was typed, as an error may repeat it:
/// at most its first 24 characters, with control characters escaped.
///
/// ```
/// use staged_store::parse_session_number;
/// assert_eq!(parse_session_number("S12"), Ok(12));
/// assert_eq!(parse_session_number("3"), Ok(3));
/// assert_eq!(parse_session_number("+1"), Err("+1".to_owned()));
/// assert_eq!(parse_session_number("S1\u{1b}[2J"), Err("S1\\u{1b}[2J".to_owned()));
/// assert_eq!(parse_session_number(&"9".repeat(30)), Err(format!("{}…", "9".repeat(24))));
/// ```
pub fn parse_session_number(typed: &str) -> Result<u64, String> {
    let digits = typed.strip_prefix(['S', 's']).unwrap_or(typed);
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(number) = digits.parse::<u64>()
    {
        return Ok(number);
    }
    let mut shown: String =
        typed.chars().take(MAX_TYPED_SHOWN).flat_map(char::escape_debug).collect();
    if typed.chars().nth(MAX_TYPED_SHOWN).is_some() {
        shown.push('…');
    }
    Err(shown)
}

/// The longest title kept, in characters.
const MAX_TITLE_CHARS: usize = 120;

/// Adds schema 4 (sessions) and 5 (the hooks' state of each client session, which schema 4
/// kept in `.staged/hooks/<client>-<session>.json`) to an older (or new) database inside the
/// migration's transaction.
pub(crate) fn migrate(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS sessions (
             seq INTEGER PRIMARY KEY AUTOINCREMENT,
             client TEXT NOT NULL,
             external_id TEXT NOT NULL,
             title TEXT,
             process TEXT,
             started_ms INTEGER NOT NULL,
             active_ms INTEGER NOT NULL,
             UNIQUE (client, external_id)
         );
         CREATE TABLE IF NOT EXISTS texts (
             hash TEXT PRIMARY KEY,
             text BLOB NOT NULL,
             at_ms INTEGER NOT NULL DEFAULT 0
         );
         CREATE TABLE IF NOT EXISTS reviews (
             session INTEGER NOT NULL,
             hunk TEXT NOT NULL,
             state TEXT NOT NULL,
             reason TEXT,
             at_ms INTEGER NOT NULL,
             PRIMARY KEY (session, hunk)
         );
         CREATE TABLE IF NOT EXISTS notices (
             seq INTEGER PRIMARY KEY AUTOINCREMENT,
             session INTEGER NOT NULL,
             text TEXT NOT NULL,
             at_ms INTEGER NOT NULL,
             delivered_ms INTEGER
         );
         CREATE INDEX IF NOT EXISTS notices_session ON notices (session, delivered_ms);
         CREATE TABLE IF NOT EXISTS heads (
             path TEXT PRIMARY KEY,
             hash TEXT
         );
         CREATE TABLE IF NOT EXISTS hook_state (
             client TEXT NOT NULL,
             session TEXT NOT NULL,
             state BLOB NOT NULL,
             at_ms INTEGER NOT NULL,
             PRIMARY KEY (client, session)
         );",
    )?;
    for (table, column) in [("pending", "session"), ("log", "session"), ("remainder", "session")] {
        if !has_column(tx, table, column)? {
            tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} INTEGER;"))?;
        }
    }
    tx.execute_batch("CREATE INDEX IF NOT EXISTS log_session ON log (session);")
}

fn has_column(tx: &Transaction<'_>, table: &str, column: &str) -> rusqlite::Result<bool> {
    let mut stmt = tx.prepare(&format!("PRAGMA table_info({table})"))?;
    let names = stmt.query_map([], |row| row.get::<_, String>(1))?;
    for name in names {
        if name? == column {
            return Ok(true);
        }
    }
    Ok(false)
}

/// [`SqliteStore::open_session`] on `conn`, whose commit of a session it already knows (the
/// activity time and the process of every later event) is not synced on its own: the WAL is
/// synced by the next commit that must be durable (a preview's, a log entry's), which makes
/// this one durable with it, and losing it to a power cut loses only an activity time. A new
/// session's row is synced before its number is handed out. Leaves `synchronous` at `NORMAL`
/// when it lowered it: the caller restores it. While syncs are deferred (a hook call), every
/// commit is made unsynced anyway, so the row is written at once, in one transaction: a new
/// row's commit is made durable by the deferred sync before its number is handed out, and a
/// known row's is one the deferred sync may skip ([`SqliteStore::losable`]).
fn open_session_in(
    conn: &mut rusqlite::Connection,
    client: &str,
    external_id: &str,
    process: Option<&str>,
    deferred: Option<&Unsynced>,
) -> rusqlite::Result<SessionRow> {
    if let Some(unsynced) = deferred {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (row, known) = upsert_session(&tx, client, external_id, process)?;
        // A known session's activity time may be lost; a new session's number is handed out,
        // so its row is synced by the deferred sync.
        if known {
            unsynced.losable(|| tx.commit())?
        } else {
            tx.commit()?
        }
        return Ok(row);
    }
    let exists = |conn: &rusqlite::Connection| -> rusqlite::Result<bool> {
        conn.query_row(
            "SELECT 1 FROM sessions WHERE client = ?1 AND external_id = ?2",
            params![client, external_id],
            |_| Ok(()),
        )
        .optional()
        .map(|found| found.is_some())
    };
    // SQLite changes the safety level only outside a transaction: the row is looked for
    // first, and again inside it (a prune may have taken it in between, and then the row is
    // a new one, whose commit must be synced).
    let mut known = exists(conn)?;
    loop {
        let synced = !known;
        conn.pragma_update(None, "synchronous", if synced { "FULL" } else { "NORMAL" })?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if known && !exists(&tx)? {
            drop(tx);
            known = false;
            continue;
        }
        let (row, _) = upsert_session(&tx, client, external_id, process)?;
        tx.commit()?;
        return Ok(row);
    }
}

/// Makes or updates the row of session `external_id` of `client` (its activity time now, its
/// process when given), inside the caller's transaction, and returns it and whether it was
/// there already. A known row is updated, not upserted: an `INSERT` that ends in an update
/// still takes a number from the AUTOINCREMENT sequence, and the next new session's number
/// would jump by one per event of every session before it.
fn upsert_session(
    tx: &Transaction<'_>,
    client: &str,
    external_id: &str,
    process: Option<&str>,
) -> rusqlite::Result<(SessionRow, bool)> {
    let now = now_ms();
    let known = tx
        .query_row(
            &format!(
                "UPDATE sessions SET active_ms = ?3, process = COALESCE(?4, process)
                 WHERE client = ?1 AND external_id = ?2
                 RETURNING {SESSION_COLUMNS}"
            ),
            params![client, external_id, now, process],
            read_session,
        )
        .optional()?;
    if let Some(row) = known {
        return Ok((row, true));
    }
    let row = tx.query_row(
        &format!(
            "INSERT INTO sessions (client, external_id, process, started_ms, active_ms)
             VALUES (?1, ?2, ?3, ?4, ?4)
             RETURNING {SESSION_COLUMNS}"
        ),
        params![client, external_id, process, now],
        read_session,
    )?;
    Ok((row, false))
}

fn read_session(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        number: u64::try_from(row.get::<_, i64>(0)?).unwrap_or_default(),
        client: row.get(1)?,
        external_id: row.get(2)?,
        title: row.get(3)?,
        process: row.get(4)?,
        started_ms: row.get(5)?,
        active_ms: row.get(6)?,
    })
}

const SESSION_COLUMNS: &str = "seq, client, external_id, title, process, started_ms, active_ms";

impl SqliteStore {
    /// The session of `client` with the client's id `external_id`: found, or made; its last
    /// activity is now, and its process is `process` when given (the newest process seen).
    ///
    /// # Errors
    /// A database error.
    pub fn open_session(
        &self,
        client: &str,
        external_id: &str,
        process: Option<&str>,
    ) -> Result<SessionRow, StoreError> {
        let mut conn = lock(&self.conn);
        let deferred = self.deferred.load(std::sync::atomic::Ordering::SeqCst);
        let res = open_session_in(
            &mut conn,
            client,
            external_id,
            process,
            deferred.then_some(&*self.unsynced),
        );
        // Whatever happened, every later commit of this connection is synced again (or, while
        // syncs are deferred, by `sync_deferred`).
        // (A deferred call leaves it at `NORMAL`, where `defer_syncs` put it.)
        let restored =
            if deferred { Ok(()) } else { conn.pragma_update(None, "synchronous", "FULL") };
        let row = res.map_err(|err| self.err(err))?;
        restored.map_err(|err| self.err(err))?;
        Ok(row)
    }

    /// Gives session `number` the title `title` (its first line, cut to 120 characters) unless
    /// it has one.
    ///
    /// # Errors
    /// A database error.
    pub fn title_session(&self, number: u64, title: &str) -> Result<(), StoreError> {
        let line = title.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
        if line.is_empty() {
            return Ok(());
        }
        let line: String = line.chars().take(MAX_TITLE_CHARS).collect();
        let conn = lock(&self.conn);
        conn.execute(
            "UPDATE sessions SET title = ?1 WHERE seq = ?2 AND title IS NULL",
            params![line, i64::try_from(number).unwrap_or(i64::MAX)],
        )
        .map_err(|err| self.err(err))?;
        Ok(())
    }

    /// Every session, the most recently active first.
    ///
    /// # Errors
    /// A database error.
    pub fn sessions(&self) -> Result<Vec<SessionRow>, StoreError> {
        let conn = lock(&self.conn);
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {SESSION_COLUMNS} FROM sessions ORDER BY active_ms DESC, seq DESC"
            ))
            .map_err(|err| self.err(err))?;
        stmt.query_map([], read_session)
            .map_err(|err| self.err(err))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| self.err(err))
    }

    /// Session `number`, if the store knows it.
    ///
    /// # Errors
    /// A database error.
    pub fn session(&self, number: u64) -> Result<Option<SessionRow>, StoreError> {
        let conn = lock(&self.conn);
        conn.query_row(
            &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE seq = ?1"),
            [i64::try_from(number).unwrap_or(i64::MAX)],
            read_session,
        )
        .optional()
        .map_err(|err| self.err(err))
    }

    /// The most recently active session of `client` whose process is `process`: what an MCP
    /// server started by that process acts for.
    ///
    /// # Errors
    /// A database error.
    pub fn session_of_process(
        &self,
        client: &str,
        process: &str,
    ) -> Result<Option<SessionRow>, StoreError> {
        let conn = lock(&self.conn);
        conn.query_row(
            &format!(
                "SELECT {SESSION_COLUMNS} FROM sessions WHERE client = ?1 AND process = ?2
                 ORDER BY active_ms DESC, seq DESC LIMIT 1"
            ),
            params![client, process],
            read_session,
        )
        .optional()
        .map_err(|err| self.err(err))
    }

    /// Keeps `texts` (each with the SHA-256, lower-case hex, of its bytes), each once.
    ///
    /// # Errors
    /// A text that does not hash to its key, or a database error.
    pub fn keep_texts(&self, texts: &[(&str, &str)]) -> Result<(), StoreError> {
        let mut encoded = Vec::with_capacity(texts.len());
        for (hash, text) in texts {
            if sha256(text.as_bytes()) != *hash {
                return Err(StoreError::backend(format!(
                    "a text given to keep does not hash to {hash}"
                )));
            }
            let bytes = crate::codec::compress_text(text).map_err(|err| {
                StoreError::backend_caused(format!("the text {hash} could not be compressed"), err)
            })?;
            encoded.push((*hash, bytes));
        }
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        for (hash, bytes) in &encoded {
            tx.execute(
                "INSERT INTO texts (hash, text, at_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT (hash) DO UPDATE SET at_ms = ?3",
                params![hash, bytes, now_ms()],
            )
            .map_err(|err| self.err(err))?;
        }
        tx.commit().map_err(|err| self.err(err))
    }

    /// The text kept under `hash`, if there is one that hashes to it.
    ///
    /// # Errors
    /// A database error.
    pub fn text(&self, hash: &str) -> Result<Option<String>, StoreError> {
        let conn = lock(&self.conn);
        let text = conn
            .prepare_cached("SELECT text FROM texts WHERE hash = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([hash], |row| Ok(crate::codec::text(row.get_ref(0)?).ok().flatten()))
                    .optional()
            })
            .map_err(|err| self.err(err))?
            .flatten();
        Ok(text.filter(|text| sha256(text.as_bytes()) == hash))
    }

    /// Marks the hunks `keys` of session `number` reviewed as `state` (`kept`), with a
    /// person's reason if given; a later mark replaces an earlier one.
    ///
    /// # Errors
    /// A database error.
    pub fn mark_reviewed(
        &self,
        number: u64,
        keys: &[&str],
        state: &str,
        reason: Option<&str>,
        notice: Option<&str>,
    ) -> Result<(), StoreError> {
        let session = i64::try_from(number).unwrap_or(i64::MAX);
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        for key in keys {
            tx.execute(
                "INSERT INTO reviews (session, hunk, state, reason, at_ms) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (session, hunk) DO UPDATE SET state = ?3, reason = ?4, at_ms = ?5",
                params![session, key, state, reason, now_ms()],
            )
            .map_err(|err| self.err(err))?;
        }
        if let Some(text) = notice {
            crate::notices::leave_notice(&tx, session, text).map_err(|err| self.err(err))?;
        }
        tx.commit().map_err(|err| self.err(err))
    }

    /// The review state of each reviewed hunk of session `number`: `(hunk key, state)`.
    ///
    /// # Errors
    /// A database error.
    pub fn reviewed(&self, number: u64) -> Result<Vec<(String, String)>, StoreError> {
        let conn = lock(&self.conn);
        let mut stmt = conn
            .prepare("SELECT hunk, state FROM reviews WHERE session = ?1 ORDER BY hunk")
            .map_err(|err| self.err(err))?;
        stmt.query_map([i64::try_from(number).unwrap_or(i64::MAX)], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .map_err(|err| self.err(err))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| self.err(err))
    }

    /// The state a client's hook keeps for one of its sessions (`client`, and the session's id
    /// as the client gives it), as [`SqliteStore::set_hook_state`] stored it; `None` when it
    /// stored none.
    ///
    /// # Errors
    /// A database error, or a stored state that cannot be read back (not text).
    pub fn hook_state(&self, client: &str, session: &str) -> Result<Option<String>, StoreError> {
        let conn = lock(&self.conn);
        let state = conn
            .prepare_cached("SELECT state FROM hook_state WHERE client = ?1 AND session = ?2")
            .and_then(|mut stmt| {
                stmt.query_row(params![client, session], |row| {
                    Ok(crate::codec::text(row.get_ref(0)?))
                })
                .optional()
            })
            .map_err(|err| self.err(err))?;
        match state {
            None => Ok(None),
            Some(Ok(text)) => Ok(text),
            Some(Err(why)) => Err(StoreError::backend(format!(
                "the hook state of {client} session {session} cannot be read: {why}"
            ))),
        }
    }

    /// Stores `state` as the state of `client`'s hook for `session`, in place of what was
    /// there: one commit, which a hook call's deferred sync may leave unsynced, as it may
    /// the preview the state is about (the ids module of this crate).
    ///
    /// # Errors
    /// A database error.
    pub fn set_hook_state(
        &self,
        client: &str,
        session: &str,
        state: &str,
    ) -> Result<(), StoreError> {
        let column = crate::codec::log_text(state).map_err(|err| {
            StoreError::backend_caused("the hook's state could not be compressed", err)
        })?;
        let conn = lock(&self.conn);
        // Lost in a power cut, it is lost with the client's process and what it staged.
        self.losable(|| {
            conn.prepare_cached(
                "INSERT INTO hook_state (client, session, state, at_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (client, session) DO UPDATE SET state = ?3, at_ms = ?4",
            )
            .and_then(|mut stmt| stmt.execute(params![client, session, column, now_ms()]))
        })
        .map_err(|err| self.err(err))?;
        Ok(())
    }

    /// How many finished log entries session `number` has.
    ///
    /// # Errors
    /// A database error.
    pub fn entry_count_of(&self, number: u64) -> Result<usize, StoreError> {
        let conn = lock(&self.conn);
        let n: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM log WHERE done = 1 AND session = ?1",
                [i64::try_from(number).unwrap_or(i64::MAX)],
                |row| row.get(0),
            )
            .map_err(|err| self.err(err))?;
        Ok(usize::try_from(n).unwrap_or_default())
    }

    /// The first finished log entry of session `number`, if it has one.
    ///
    /// # Errors
    /// A database error.
    pub fn first_entry_of(&self, number: u64) -> Result<Option<u64>, StoreError> {
        let conn = lock(&self.conn);
        let seq: Option<i64> = conn
            .query_row(
                "SELECT MIN(seq) FROM log WHERE done = 1 AND session = ?1",
                [i64::try_from(number).unwrap_or(i64::MAX)],
                |row| row.get(0),
            )
            .map_err(|err| self.err(err))?;
        Ok(seq.and_then(|s| u64::try_from(s).ok()))
    }

    /// Acts for `scope` from now on.
    pub fn set_scope(&self, scope: SessionScope) {
        *lock(&self.scope) = scope;
    }

    /// The scope this instance acts for.
    pub fn scope(&self) -> SessionScope {
        *lock(&self.scope)
    }
}

/// A client session whose hook saved nothing for this long is no longer live: its hooks'
/// state may go with the log's retention.
pub(crate) const HOOK_STATE_IDLE_MS: i64 = 24 * 60 * 60 * 1000;

/// With the log's retention (`staged log --keep`): a session goes when none of its log entries
/// and none of its previews are left (with its review states and notices), and a kept text
/// goes when it is older than every log entry left, since only an entry at least as old
/// reads it. A client session's hooks' state goes when its session is gone and the session
/// is no longer live (its hook saved nothing for [`HOOK_STATE_IDLE_MS`]): a live session's
/// row may be pruned between two of its events (the next one makes it again), its state
/// never is.
pub(crate) fn prune_sessions(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "DELETE FROM sessions WHERE NOT EXISTS (SELECT 1 FROM log WHERE log.session = sessions.seq)
             AND NOT EXISTS (SELECT 1 FROM pending WHERE pending.session = sessions.seq);
         DELETE FROM reviews WHERE session NOT IN (SELECT seq FROM sessions);
         DELETE FROM notices WHERE session NOT IN (SELECT seq FROM sessions);
         DELETE FROM texts WHERE at_ms < (SELECT MIN(at_ms) FROM log);",
    )?;
    tx.execute(
        "DELETE FROM hook_state WHERE at_ms < ?1 AND NOT EXISTS (SELECT 1 FROM sessions
             WHERE sessions.client = hook_state.client AND sessions.external_id = hook_state.session)",
        [now_ms() - HOOK_STATE_IDLE_MS],
    )?;
    Ok(())
}

/// Keeps, in `tx`, the texts of `record` its log cannot rebuild: a file's text before the entry
/// when it is not what the log last wrote to that path (the file's first write, or one after a
/// change made outside staged). `heads` holds, per path, the hash the log last left there; a
/// commit that is rolled back leaves a head the disk does not have, which only makes the next
/// write keep a text it might not have needed.
pub(crate) fn keep_before_texts(
    tx: &Transaction<'_>,
    record: &staged_core::LogRecord,
) -> Result<(), String> {
    let e = |err: rusqlite::Error| err.to_string();
    // One statement each, prepared once for the record's files (a session revert's are 300).
    let mut head_of = tx.prepare_cached("SELECT hash FROM heads WHERE path = ?1").map_err(e)?;
    let mut set_head = tx
        .prepare_cached(
            "INSERT INTO heads (path, hash) VALUES (?1, ?2) ON CONFLICT (path) DO UPDATE SET hash = ?2",
        )
        .map_err(e)?;
    // The texts by their hash, hashed only once a file's text before is not its head (most
    // records' files are each what the log last wrote there, and need none kept).
    let mut by_hash: Option<std::collections::HashMap<String, &str>> = None;
    for file in &record.files {
        if let Some(before) = &file.before {
            let head: Option<Option<String>> =
                head_of.query_row([&file.path], |row| row.get(0)).optional().map_err(e)?;
            if head.flatten().as_deref() != Some(before.as_str()) {
                let texts = by_hash.get_or_insert_with(|| {
                    record
                        .texts
                        .iter()
                        .map(|text| (sha256(text.as_bytes()), text.as_str()))
                        .collect()
                });
                if let Some(text) = texts.get(before) {
                    let bytes = crate::codec::compress_text(text).map_err(|err| err.to_string())?;
                    tx.execute(
                        "INSERT INTO texts (hash, text, at_ms) VALUES (?1, ?2, ?3)
                         ON CONFLICT (hash) DO UPDATE SET at_ms = ?3",
                        params![before, bytes, now_ms()],
                    )
                    .map_err(e)?;
                }
            }
        }
        set_head.execute(params![file.path, file.after]).map_err(e)?;
    }
    Ok(())
}

/// SHA-256 of `bytes`, lower-case hex (as the journal's fingerprints).
fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut res = String::with_capacity(64);
    for byte in sha2::Sha256::digest(bytes) {
        res.push(char::from(HEX[usize::from(byte >> 4)]));
        res.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    res
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::Rehydrators;

    #[test]
    fn sha256_is_lower_case_hex_as_the_journals_fingerprints() {
        // `printf abc | sha256sum`, and `printf 'one\n' | sha256sum`.
        assert_eq!(
            sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256(b"one\n"),
            "2c8b08da5ce60398e1f19af0e5dccc744df274b826abe585eaba68c525434806"
        );
    }

    #[test]
    fn a_texts_before_is_kept_only_where_the_log_did_not_leave_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join(".staged"), Rehydrators::new()).unwrap();
        let (one, two, three) = ("one\n".to_owned(), "two\n".to_owned(), "three\n".to_owned());
        let record = |before: &str, after: &str| {
            let mut record = staged_core::LogRecord::new(
                staged_core::PendingId::from_string("p".to_owned()),
                "write a",
                "write",
                staged_core::LogOutcome::Applied,
                staged_core::LogAction::Apply,
                &staged_core::FrontEnd::Cli,
            );
            record.files.push(staged_core::FileChange {
                path: "a".into(),
                before: Some(sha256(before.as_bytes())),
                after: Some(sha256(after.as_bytes())),
            });
            record.texts.push(before.to_owned());
            record
        };
        let keep = |record: &staged_core::LogRecord| {
            let mut conn = lock(&store.conn);
            let tx = conn.transaction().unwrap();
            keep_before_texts(&tx, record).unwrap();
            tx.commit().unwrap();
        };
        // The file's first write: its text before is kept.
        keep(&record(&one, &two));
        assert_eq!(store.text(&sha256(one.as_bytes())).unwrap(), Some(one.clone()));
        // The next write starts from what the log left: nothing is kept.
        keep(&record(&two, &three));
        assert_eq!(store.text(&sha256(two.as_bytes())).unwrap(), None);
        // A write after a change made outside staged: the text it started from is kept.
        let outside = "changed outside\n".to_owned();
        keep(&record(&outside, &one));
        assert_eq!(store.text(&sha256(outside.as_bytes())).unwrap(), Some(outside));
    }

    fn synchronous(store: &SqliteStore) -> i64 {
        lock(&store.conn).pragma_query_value(None, "synchronous", |row| row.get(0)).unwrap()
    }

    #[test]
    fn a_known_sessions_unsynced_update_leaves_every_later_commit_synced() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join(".staged"), Rehydrators::new()).unwrap();
        const FULL: i64 = 2;
        let new = store.open_session("claude-code", "a", Some("1:2")).unwrap();
        assert_eq!(synchronous(&store), FULL);
        // The update of a known session is committed with `NORMAL`, then `FULL` again for
        // the preview its hook pushes next.
        let again = store.open_session("claude-code", "a", None).unwrap();
        assert_eq!((again.number, again.process.as_deref()), (new.number, Some("1:2")));
        assert!(again.active_ms >= new.active_ms);
        assert_eq!(synchronous(&store), FULL);
        // And read back by another connection: the update is committed, only not synced.
        let other = SqliteStore::open(&dir.path().join(".staged"), Rehydrators::new()).unwrap();
        assert_eq!(other.session(new.number).unwrap().unwrap().active_ms, again.active_ms);
    }
}
