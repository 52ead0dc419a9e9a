//! The schema of `staged.db` and the settings of each connection to it: the tables a new
//! database gets, the migration of an older one (each module adds its tables: the codec module
//! compresses schema 1's rows, the log and sessions modules add theirs), WAL mode and when
//! the WAL is checkpointed.

use std::time::{Duration, Instant};

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::codec;

/// The schema version this build reads and writes. Schema 2 stores details and payloads
/// compressed (see the codec module); schema 3 adds the resolve log (see the log module);
/// schema 4 adds agent sessions (see the sessions module); schema 5 the hooks' state of each
/// client session (see the sessions module); schema 6 the reservation of pending ids that a
/// hook call may hand out before its commit is synced (see the ids module). An older database
/// is migrated on open.
pub(crate) const SCHEMA_VERSION: i64 = 6;

/// How many WAL pages trigger a checkpoint.
const WAL_CHECKPOINT_PAGES: i64 = 256;

/// What the WAL file is cut back to after a checkpoint; a WAL this long is checkpointed and
/// truncated when a store closes (`SqliteStore::reset_long_wal`).
pub(crate) const WAL_SIZE_LIMIT_BYTES: u64 = 1 << 20;

/// How long a store that closes waits for other processes' readers to truncate a long WAL.
pub(crate) const RESET_WAIT: Duration = Duration::from_millis(20);

/// How long a write waits for another process's write transaction.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Creates the schema in a new database. An up-to-date database is only read, so that
/// opening a store (as every read-only command does) never takes the write lock.
pub(crate) fn init(conn: &Connection, version: i64) -> rusqlite::Result<()> {
    switch_to_wal(conn)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    // Closing does not checkpoint: the WAL (synced at every commit) stays for the next
    // process, which reads it as this one did. Most of staged's processes are short (a hook
    // call, a command), and a checkpoint on each close cost two more syncs, a rewrite of the
    // pages into the database, and a new WAL (its header synced again) for the next one. The
    // WAL is still checkpointed every `WAL_CHECKPOINT_PAGES` pages, by the commit that
    // reaches them, and truncated by the store that closes with it that long
    // (`SqliteStore::reset_long_wal`); nothing is less durable or less atomic.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    // Checkpoint the WAL every 256 pages (1 MiB) and cut it back to 1 MiB afterwards, so that
    // the database and its side files stay small however many resolves the log has seen
    // (SQLite's defaults let the WAL file stay at 4 MiB for good).
    conn.pragma_update(None, "wal_autocheckpoint", WAL_CHECKPOINT_PAGES)?;
    let _: i64 = conn.query_row(
        &format!("PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}"),
        [],
        |row| row.get(0),
    )?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    // The version is read again inside the write transaction, so that two processes opening
    // a schema-1 database never both migrate it.
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
    crate::log::create_tables(&tx)?;
    crate::sessions::migrate(&tx)?;
    crate::ids::migrate(&tx)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    if version == 1 {
        // The rows shrank, but the file keeps its pages until vacuumed; best effort, since the
        // store works either way (another process may hold the database).
        let _ = conn.execute_batch("VACUUM");
    }
    Ok(())
}

/// Puts the database in WAL mode, which it keeps for good once one connection has switched.
///
/// The switch needs the database to itself, and SQLite answers `SQLITE_BUSY` at once, without
/// calling the busy handler, when another connection holds it at that moment: for example
/// when several processes open a workspace's new database together. So a busy switch is
/// tried again, for as long as a write would wait, and usually finds the database already
/// switched by the other connection.
fn switch_to_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(1);
    loop {
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
        if mode.eq_ignore_ascii_case("wal") {
            return Ok(());
        }
        match conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get::<_, String>(0)) {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(rusqlite::Error::InvalidParameterName(format!(
                    "could not switch to WAL mode (got `{mode}`)"
                )));
            }
            Err(err)
                if err.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(err) => return Err(err),
        }
    }
}
