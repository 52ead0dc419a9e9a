//! `SqliteStore`: the pending stack as rows of `<state>/staged.db`.
//!
//! Order is a `position` column (the head has the largest); ids come from an AUTOINCREMENT
//! sequence, so they are never reused, even across processes. Every write is one IMMEDIATE
//! transaction; readers never block writers (WAL).

use std::{
    fmt, fs,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use staged_core::{
    Claim, PendingAction, PendingActionStore, PendingEntry, PendingId, StoreError, StoreEvent,
    StoreListener, StoreListeners, Subscription, pending_id,
};

use crate::{
    Rehydrators, StoredAction,
    claim::{ClaimLock, TryClaim, lock_path, try_claim},
    codec,
};

/// The database's file name inside the state folder.
pub const DB_FILE_NAME: &str = "staged.db";

/// The schema version this build reads and writes. Schema 2 stores details and payloads
/// compressed (see the codec module); a schema-1 database is migrated on open.
const SCHEMA_VERSION: i64 = 2;

/// How long a write waits for another process's write transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How often `claim_head` retries when the head changes under it.
const CLAIM_ATTEMPTS: usize = 16;

/// The durable pending stack of one workspace.
pub struct SqliteStore {
    state_dir: PathBuf,
    claims_dir: PathBuf,
    conn: Mutex<Connection>,
    rehydrators: Rehydrators,
    listeners: StoreListeners,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One row, before rehydration.
struct Row {
    seq: i64,
    stored: StoredAction,
}

/// An entry as a listing shows it.
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
}

const SUMMARY_COLUMNS: &str = "id, label, source_tool, created_at_ms";

const ROW_COLUMNS: &str =
    "seq, id, source_tool, label, created_at_ms, details, payload, details_in_payload";

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("state_dir", &self.state_dir)
            .field("rehydrators", &self.rehydrators)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the store in `state_dir`, e.g. `<workspace>/.staged`.
    ///
    /// Fails with a message naming the path when the folder cannot be created (a read-only
    /// workspace), the file is not a staged database, or another process keeps it locked.
    pub fn open(state_dir: &Path, rehydrators: Rehydrators) -> Result<Self, StoreError> {
        let claims_dir = state_dir.join("claims");
        fs::create_dir_all(&claims_dir).map_err(|err| {
            StoreError::Backend(format!(
                "cannot create the state folder {}: {err}",
                state_dir.display()
            ))
        })?;
        let ignore = state_dir.join(".gitignore");
        if !ignore.exists() {
            // Keep the state folder out of the user's repository; best effort, since the
            // store works without it.
            let _ =
                fs::write(&ignore, "# Created by staged: pending previews are local state.\n*\n");
        }
        let db_path = state_dir.join(DB_FILE_NAME);
        let conn = Connection::open(&db_path).map_err(|err| db_error(&db_path, &err))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|err| db_error(&db_path, &err))?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|err| db_error(&db_path, &err))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::Backend(format!(
                "{} was written by a newer staged (schema {version}, this build reads {SCHEMA_VERSION})",
                db_path.display()
            )));
        }
        init(&conn).map_err(|err| db_error(&db_path, &err))?;
        Ok(Self {
            state_dir: state_dir.to_path_buf(),
            claims_dir,
            conn: Mutex::new(conn),
            rehydrators,
            listeners: StoreListeners::new(),
        })
    }

    /// The state folder this store lives in.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The entry with `id`, if it is pending.
    pub fn get(&self, id: &str) -> Result<Option<PendingEntry>, StoreError> {
        let row = {
            let conn = lock(&self.conn);
            conn.query_row(
                &format!("SELECT {ROW_COLUMNS} FROM pending WHERE id = ?1"),
                [id],
                read_row,
            )
            .optional()
            .map_err(|err| self.err(&err))?
        };
        Ok(row.map(|row| self.entry(row)))
    }

    /// The entries, newest first, read without their details and payloads (which can hold a
    /// big diff each): what a listing shows.
    pub fn summaries(&self) -> Result<Vec<PendingSummary>, StoreError> {
        let conn = lock(&self.conn);
        let mut stmt = conn
            .prepare(&format!("SELECT {SUMMARY_COLUMNS} FROM pending ORDER BY position DESC"))
            .map_err(|err| self.err(&err))?;
        stmt.query_map([], read_summary)
            .map_err(|err| self.err(&err))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| self.err(&err))
    }

    /// The head, read without its details and payload: what a command shows of the stack
    /// after it changed it.
    pub fn head_summary(&self) -> Result<Option<PendingSummary>, StoreError> {
        let conn = lock(&self.conn);
        conn.query_row(
            &format!("SELECT {SUMMARY_COLUMNS} FROM pending ORDER BY position DESC LIMIT 1"),
            [],
            read_summary,
        )
        .optional()
        .map_err(|err| self.err(&err))
    }

    /// Removes every entry of `source_tool_name` for which `finished` holds, and returns their
    /// ids. Start-up recovery uses it for applies that a crash interrupted after their commit
    /// point: the files are written, so the preview must not stay pending.
    pub fn remove_finished(
        &self,
        source_tool_name: &str,
        finished: impl Fn(&StoredAction) -> bool,
    ) -> Result<Vec<PendingId>, StoreError> {
        let rows = {
            let conn = lock(&self.conn);
            let mut stmt = conn
                .prepare(&format!("SELECT {ROW_COLUMNS} FROM pending WHERE source_tool = ?1"))
                .map_err(|err| self.err(&err))?;
            stmt.query_map([source_tool_name], read_row)
                .map_err(|err| self.err(&err))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|err| self.err(&err))?
        };
        let mut removed = Vec::new();
        for row in rows.into_iter().filter(|row| finished(&row.stored)) {
            if let Some((id, len)) = self.delete(row.seq)? {
                removed.push(id.clone());
                self.emit(StoreEvent::Removed { id, len });
            }
        }
        Ok(removed)
    }

    fn err(&self, err: &rusqlite::Error) -> StoreError {
        db_error(&self.state_dir.join(DB_FILE_NAME), err)
    }

    fn entry(&self, row: Row) -> PendingEntry {
        PendingEntry {
            id: row.stored.id.clone(),
            created_at: row.stored.created_at,
            action: self.rehydrators.rehydrate(&row.stored),
        }
    }

    fn head_row(&self) -> Result<Option<Row>, StoreError> {
        let conn = lock(&self.conn);
        conn.query_row(
            &format!("SELECT {ROW_COLUMNS} FROM pending ORDER BY position DESC LIMIT 1"),
            [],
            read_row,
        )
        .optional()
        .map_err(|err| self.err(&err))
    }

    fn emit(&self, event: StoreEvent) {
        self.listeners.emit(&event);
    }

    fn count(&self) -> Result<usize, StoreError> {
        let conn = lock(&self.conn);
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM pending", [], |row| row.get(0))
            .map_err(|err| self.err(&err))?;
        Ok(usize::try_from(n).unwrap_or_default())
    }

    /// Claims the head, retrying when another process changes the head in between.
    fn claim_top(&self) -> Result<Option<(Row, ClaimLock)>, StoreError> {
        for _ in 0..CLAIM_ATTEMPTS {
            let Some(row) = self.head_row()? else { return Ok(None) };
            let claim = try_claim(&self.claims_dir, row.seq).map_err(|err| {
                StoreError::Backend(format!(
                    "cannot lock {}: {err}",
                    lock_path(&self.claims_dir, row.seq).display()
                ))
            })?;
            match claim {
                TryClaim::Busy => {
                    return Err(StoreError::Busy { id: row.stored.id, label: row.stored.label });
                }
                TryClaim::Held(held) => {
                    // The head may have been resolved or covered while we took the lock.
                    match self.head_row()? {
                        Some(now) if now.seq == row.seq => return Ok(Some((now, held))),
                        _ => continue,
                    }
                }
            }
        }
        Err(StoreError::Backend(
            "the pending stack kept changing while claiming its head; try again".to_owned(),
        ))
    }

    fn claim_lock<'c>(&self, claim: &'c Claim) -> Result<&'c ClaimLock, StoreError> {
        claim
            .token()
            .downcast_ref::<ClaimLock>()
            .filter(|held| held.path.starts_with(&self.claims_dir))
            .ok_or_else(|| StoreError::UnknownClaim { id: claim.entry().id.clone() })
    }

    fn delete(&self, seq: i64) -> Result<Option<(PendingId, usize)>, StoreError> {
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(&err))?;
        let id: Option<String> = tx
            .query_row("SELECT id FROM pending WHERE seq = ?1", [seq], |row| row.get(0))
            .optional()
            .map_err(|err| self.err(&err))?;
        let Some(id) = id else { return Ok(None) };
        tx.execute("DELETE FROM pending WHERE seq = ?1", [seq]).map_err(|err| self.err(&err))?;
        let len: i64 = tx
            .query_row("SELECT COUNT(*) FROM pending", [], |row| row.get(0))
            .map_err(|err| self.err(&err))?;
        tx.commit().map_err(|err| self.err(&err))?;
        Ok(Some((PendingId::from_string(id), usize::try_from(len).unwrap_or_default())))
    }
}

impl PendingActionStore for SqliteStore {
    fn push(&self, action: Arc<dyn PendingAction>) -> Result<PendingId, StoreError> {
        let label = action.label().to_owned();
        let source = action.source_tool_name().to_owned();
        let payload = action.payload().ok_or_else(|| {
            StoreError::Backend(format!(
                "`{label}` cannot be staged durably: `{source}` gives no replayable payload"
            ))
        })?;
        let encoded = codec::encode(action.details(), payload).map_err(|err| {
            StoreError::Backend(format!("`{label}` could not be encoded for storage: {err}"))
        })?;
        let created_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let (id, len) = {
            let mut conn = lock(&self.conn);
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|err| self.err(&err))?;
            tx.execute(
                "INSERT INTO pending (id, source_tool, label, created_at_ms, details, payload, details_in_payload, position)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT COALESCE(MAX(position), 0) + 1 FROM pending))",
                params![
                    format!("staging:{created_ms}"),
                    source,
                    label,
                    created_ms,
                    encoded.details,
                    encoded.payload,
                    encoded.details_in_payload
                ],
            )
            .map_err(|err| self.err(&err))?;
            let seq = tx.last_insert_rowid();
            // AUTOINCREMENT starts at 1; ids count from 0, like the in-memory store's.
            let id = pending_id(&source, u64::try_from(seq - 1).unwrap_or_default());
            tx.execute("UPDATE pending SET id = ?1 WHERE seq = ?2", params![id.as_str(), seq])
                .map_err(|err| self.err(&err))?;
            let len: i64 = tx
                .query_row("SELECT COUNT(*) FROM pending", [], |row| row.get(0))
                .map_err(|err| self.err(&err))?;
            tx.commit().map_err(|err| self.err(&err))?;
            (id, usize::try_from(len).unwrap_or_default())
        };
        self.emit(StoreEvent::Pushed { id: id.clone(), label, len });
        Ok(id)
    }

    fn peek(&self) -> Result<Option<PendingEntry>, StoreError> {
        Ok(self.head_row()?.map(|row| self.entry(row)))
    }

    fn pop(&self) -> Result<Option<PendingEntry>, StoreError> {
        let Some((row, held)) = self.claim_top()? else { return Ok(None) };
        let removed = self.delete(row.seq)?;
        let _ = fs::remove_file(&held.path);
        drop(held);
        let Some((id, len)) = removed else { return Ok(None) };
        self.emit(StoreEvent::Removed { id, len });
        Ok(Some(self.entry(row)))
    }

    fn len(&self) -> Result<usize, StoreError> {
        self.count()
    }

    fn list(&self) -> Result<Vec<PendingEntry>, StoreError> {
        let rows = {
            let conn = lock(&self.conn);
            let mut stmt = conn
                .prepare(&format!("SELECT {ROW_COLUMNS} FROM pending ORDER BY position DESC"))
                .map_err(|err| self.err(&err))?;
            stmt.query_map([], read_row)
                .map_err(|err| self.err(&err))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|err| self.err(&err))?
        };
        Ok(rows.into_iter().map(|row| self.entry(row)).collect())
    }

    fn subscribe(&self, listener: StoreListener) -> Subscription {
        self.listeners.subscribe(listener)
    }

    fn claim_head(&self) -> Result<Option<Claim>, StoreError> {
        Ok(self.claim_top()?.map(|(row, held)| Claim::new(self.entry(row), Arc::new(held))))
    }

    fn complete(&self, claim: Claim) -> Result<(), StoreError> {
        let held = self.claim_lock(&claim)?;
        let (seq, path) = (held.seq, held.path.clone());
        let Some((id, len)) = self.delete(seq)? else {
            return Err(StoreError::UnknownClaim { id: claim.entry().id.clone() });
        };
        let _ = fs::remove_file(path);
        drop(claim);
        self.emit(StoreEvent::Removed { id, len });
        Ok(())
    }

    fn release(&self, claim: Claim) -> Result<(), StoreError> {
        let seq = self.claim_lock(&claim)?.seq;
        let len = {
            let mut conn = lock(&self.conn);
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|err| self.err(&err))?;
            let n = tx
                .execute(
                    "UPDATE pending SET position = (SELECT MAX(position) + 1 FROM pending) WHERE seq = ?1",
                    [seq],
                )
                .map_err(|err| self.err(&err))?;
            if n == 0 {
                return Err(StoreError::UnknownClaim { id: claim.entry().id.clone() });
            }
            let len: i64 = tx
                .query_row("SELECT COUNT(*) FROM pending", [], |row| row.get(0))
                .map_err(|err| self.err(&err))?;
            tx.commit().map_err(|err| self.err(&err))?;
            usize::try_from(len).unwrap_or_default()
        };
        let id = claim.entry().id.clone();
        drop(claim);
        self.emit(StoreEvent::Requeued { id, len });
        Ok(())
    }

    fn clear_stale(&self) -> Result<usize, StoreError> {
        let Ok(entries) = fs::read_dir(&self.claims_dir) else { return Ok(0) };
        let mut n_cleared = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(seq) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".lock"))
                .and_then(|n| n.parse::<i64>().ok())
            else {
                continue;
            };
            let exists: bool = {
                let conn = lock(&self.conn);
                conn.query_row(
                    "SELECT EXISTS(SELECT 1 FROM pending WHERE seq = ?1)",
                    [seq],
                    |row| row.get(0),
                )
                .map_err(|err| self.err(&err))?
            };
            if exists {
                continue;
            }
            // Only a lock nobody holds is stale; a live resolve finishing right now keeps its own.
            if let Ok(TryClaim::Held(held)) = try_claim(&self.claims_dir, seq)
                && fs::remove_file(&held.path).is_ok()
            {
                n_cleared += 1;
            }
        }
        Ok(n_cleared)
    }
}

fn init(conn: &Connection) -> rusqlite::Result<()> {
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(rusqlite::Error::InvalidParameterName(format!(
            "could not switch to WAL mode (got `{mode}`)"
        )));
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    // The version is read inside the write transaction, so that two processes opening a
    // schema-1 database never both migrate it.
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS pending (
             seq INTEGER PRIMARY KEY AUTOINCREMENT,
             id TEXT NOT NULL UNIQUE,
             source_tool TEXT NOT NULL,
             label TEXT NOT NULL,
             created_at_ms INTEGER NOT NULL,
             details BLOB,
             payload BLOB NOT NULL,
             position INTEGER NOT NULL,
             details_in_payload INTEGER NOT NULL DEFAULT 0
         );
         CREATE INDEX IF NOT EXISTS pending_position ON pending (position);",
    )?;
    if version == 1 {
        codec::migrate_v1(&tx)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    if version == 1 {
        // The rows shrank, but the file keeps its pages until vacuumed; best effort, since the
        // store works either way (another process may hold the database).
        let _ = conn.execute_batch("VACUUM");
    }
    Ok(())
}

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let (details, payload) = codec::decode(row.get_ref(5)?, row.get_ref(6)?, row.get(7)?);
    let created_ms: i64 = row.get(4)?;
    Ok(Row {
        seq: row.get(0)?,
        stored: StoredAction {
            id: PendingId::from_string(row.get(1)?),
            source_tool_name: row.get(2)?,
            label: row.get(3)?,
            created_at: UNIX_EPOCH
                + Duration::from_millis(u64::try_from(created_ms).unwrap_or_default()),
            details,
            payload,
        },
    })
}

fn read_summary(row: &rusqlite::Row<'_>) -> rusqlite::Result<PendingSummary> {
    let created_ms: i64 = row.get(3)?;
    Ok(PendingSummary {
        id: PendingId::from_string(row.get(0)?),
        label: row.get(1)?,
        source_tool_name: row.get(2)?,
        created_at: UNIX_EPOCH
            + Duration::from_millis(u64::try_from(created_ms).unwrap_or_default()),
    })
}

fn db_error(path: &Path, err: &rusqlite::Error) -> StoreError {
    StoreError::Backend(format!("{}: {err}", path.display()))
}
