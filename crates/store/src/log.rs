//! The resolve log in `staged.db` (schema 3): one row per outcome, written in the same
//! transaction as the change to the pending stack it records.
//!
//! A journaled commit (an `ast_edit` apply, an undo) is recorded in two steps. Once its
//! journal exists, `prepare_logged` stores the record with `done = 0` under the
//! journal's id (its *key*), and, for a partial apply, the preview of what is left in the
//! `remainder` table. At the commit point one transaction deletes the claimed pending row,
//! pushes the remainder as the new head and sets `done = 1`; start-up recovery does the same by
//! key when it finishes a journal, and forgets both when it rolls one back. Rows with
//! `done = 0` are never listed. Diffs, files, `extra` and undo data are stored compressed
//! (the codec module). Retention: the newest `keep` finished rows stay (default
//! [`DEFAULT_LOG_KEEP`], set with [`ResolveLog::set_keep`]); older ones are deleted as new ones
//! arrive, so the database stops growing.

use std::{
    borrow::Cow,
    fs::File,
    time::{Duration, UNIX_EPOCH},
};

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params, types::ValueRef};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{
    Claim, DEFAULT_LOG_KEEP, FileChange, LogEntry, LogOutcome, LogRecord, PendingAction, PendingId,
    ResolveLog, Reversal, StoreError, StoreEvent, UndoLock, remainder_text,
};

use crate::{
    claim::{TryClaim, lock_name, try_claim},
    codec,
    rows::{insert_pending, now_ms, pending_len},
    sqlite::{SqliteStore, lock},
};

/// The undo lock's file in the claims folder (claim locks are `<seq>.lock`).
const UNDO_LOCK_NAME: &str = "undo.lock";

/// The settings row that holds the retention count.
const KEEP_SETTING: &str = "log_keep";

/// A prepared row older than this is a leftover of a journal that recovery refused or that
/// was deleted by hand; retention drops it.
const PREPARED_MAX_AGE_MS: i64 = 7 * 24 * 3600 * 1000;

pub(crate) const LOG_COLUMNS: &str = "seq, pending_id, label, source_tool, outcome, action, reason, extra, result, diff, files, undo, front_end, reverts, at_ms, \
     (SELECT r.seq FROM log AS r WHERE r.reverts = log.seq AND r.done = 1 ORDER BY r.seq LIMIT 1), log.session";

/// Creates the log's tables (schema 3) inside the migration's transaction.
pub(crate) fn create_tables(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS log (
             seq INTEGER PRIMARY KEY AUTOINCREMENT,
             done INTEGER NOT NULL,
             key TEXT UNIQUE,
             pending_id TEXT NOT NULL,
             label TEXT NOT NULL,
             source_tool TEXT NOT NULL,
             outcome TEXT NOT NULL,
             action TEXT NOT NULL,
             reason TEXT NOT NULL,
             extra BLOB,
             result TEXT NOT NULL,
             diff BLOB,
             files BLOB,
             undo BLOB,
             front_end TEXT NOT NULL,
             reverts INTEGER,
             at_ms INTEGER NOT NULL
         );
         CREATE INDEX IF NOT EXISTS log_reverts ON log (reverts);
         CREATE TABLE IF NOT EXISTS remainder (
             key TEXT PRIMARY KEY,
             source_tool TEXT NOT NULL,
             label TEXT NOT NULL,
             details BLOB,
             payload BLOB NOT NULL,
             details_in_payload INTEGER NOT NULL,
             created_at_ms INTEGER NOT NULL
         );
         CREATE TABLE IF NOT EXISTS settings (
             name TEXT PRIMARY KEY,
             value TEXT NOT NULL
         );",
    )
}

/// A record in its stored form, compressed before any transaction starts.
struct EncodedRecord {
    pending_id: String,
    label: String,
    source: String,
    outcome: &'static str,
    action: &'static str,
    reason: String,
    extra: Option<codec::Column>,
    result: String,
    diff: Option<codec::Column>,
    files: codec::Column,
    undo: Option<codec::Column>,
    front_end: String,
    reverts: Option<i64>,
    session: Option<i64>,
}

fn encode_record(record: &LogRecord, session: Option<i64>) -> Result<EncodedRecord, StoreError> {
    let fail = |err: std::io::Error| {
        let message = format!("the log record of {} could not be encoded: {err}", record.id);
        StoreError::backend_caused(message, err)
    };
    let files: Vec<StoredFile<'_>> = record.files.iter().map(StoredFile::of).collect();
    Ok(EncodedRecord {
        pending_id: record.id.as_str().to_owned(),
        label: record.label.clone(),
        source: record.source_tool_name.clone(),
        outcome: record.outcome.as_str(),
        action: record.action.as_str(),
        reason: record.reason.clone(),
        extra: record.extra.as_ref().map(codec::log_json).transpose().map_err(fail)?,
        result: record.result.clone(),
        diff: record.diff.as_deref().map(codec::log_text).transpose().map_err(fail)?,
        files: codec::log_json(&files).map_err(fail)?,
        undo: record.undo.as_ref().map(codec::log_json).transpose().map_err(fail)?,
        front_end: record.front_end.clone(),
        reverts: record.reverts.and_then(|seq| i64::try_from(seq).ok()),
        session,
    })
}

fn insert_record(
    tx: &Transaction<'_>,
    record: &EncodedRecord,
    key: Option<&str>,
    done: bool,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO log (done, key, pending_id, label, source_tool, outcome, action, reason, extra, result, diff, files, undo, front_end, reverts, at_ms, session)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            done,
            key,
            record.pending_id,
            record.label,
            record.source,
            record.outcome,
            record.action,
            record.reason,
            record.extra,
            record.result,
            record.diff,
            record.files,
            record.undo,
            record.front_end,
            record.reverts,
            now_ms(),
            record.session,
        ],
    )?;
    Ok(())
}

/// Deletes finished rows past the retention count, and prepared leftovers past their age.
fn prune(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let keep = i64::try_from(read_keep(tx)?).unwrap_or(i64::MAX);
    // Past the newest `keep` entries, but never from the first entry of a session that still
    // has a later one: its history (every writer's entries since it began) is what its
    // session diff and its revert are read from.
    let pruned = tx.execute(
        "DELETE FROM log WHERE done = 1
             AND seq <= (SELECT seq FROM log WHERE done = 1 ORDER BY seq DESC LIMIT 1 OFFSET ?1)
             AND seq < COALESCE((SELECT MIN(first.seq) FROM log AS first WHERE first.session IN
                 (SELECT kept.session FROM log AS kept WHERE kept.done = 1 AND kept.session IS NOT NULL
                  AND kept.seq > (SELECT seq FROM log WHERE done = 1 ORDER BY seq DESC LIMIT 1 OFFSET ?1))),
                 9223372036854775807)",
        [keep],
    )?;
    if pruned > 0 {
        crate::sessions::prune_sessions(tx)?;
    }
    let cutoff = now_ms() - PREPARED_MAX_AGE_MS;
    tx.execute("DELETE FROM log WHERE done = 0 AND at_ms < ?1", [cutoff])?;
    tx.execute("DELETE FROM remainder WHERE created_at_ms < ?1", [cutoff])?;
    Ok(())
}

fn read_keep(conn: &rusqlite::Connection) -> rusqlite::Result<usize> {
    let value: Option<String> = conn
        .query_row("SELECT value FROM settings WHERE name = ?1", [KEEP_SETTING], |row| row.get(0))
        .optional()?;
    Ok(value.and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(DEFAULT_LOG_KEEP))
}

/// Reads one log row (see [`LOG_COLUMNS`]); a blob that does not decode reads as empty.
pub(crate) fn read_entry(row: &rusqlite::Row<'_>, with_diff: bool) -> rusqlite::Result<LogEntry> {
    read_entry_parts(row, with_diff, false).map(|(entry, _)| entry)
}

/// [`read_entry`]; with `undo_text`, the entry's undo data is not decoded into its
/// `record.undo` but returned as its JSON text.
pub(crate) fn read_entry_parts(
    row: &rusqlite::Row<'_>,
    with_diff: bool,
    undo_text: bool,
) -> rusqlite::Result<(LogEntry, Option<String>)> {
    let seq: i64 = row.get(0)?;
    let outcome: String = row.get(4)?;
    let action: String = row.get(5)?;
    let extra = codec::json_column(row.get_ref(7)?).ok().flatten().and_then(|v| match v {
        Value::Object(map) => Some(map),
        _ => None,
    });
    let diff = if with_diff { codec::text(row.get_ref(9)?).ok().flatten() } else { None };
    let files = read_files(row.get_ref(10)?);
    let (undo, text) = if undo_text {
        (None, codec::text(row.get_ref(11)?).ok().flatten())
    } else {
        (codec::json_column(row.get_ref(11)?).ok().flatten(), None)
    };
    let reverts: Option<i64> = row.get(13)?;
    let at_ms: i64 = row.get(14)?;
    let reverted_by: Option<i64> = row.get(15)?;
    let record = LogRecord {
        id: PendingId::from_string(row.get(1)?),
        label: row.get(2)?,
        source_tool_name: row.get(3)?,
        // A row this build cannot classify reads as failed: it can be listed, never undone.
        outcome: outcome.parse().unwrap_or(LogOutcome::Failed),
        action: action.parse().unwrap_or(staged_core::LogAction::Apply),
        reason: row.get(6)?,
        extra,
        result: row.get(8)?,
        diff,
        files,
        undo,
        front_end: row.get(12)?,
        reverts: reverts.and_then(|s| u64::try_from(s).ok()),
        texts: Vec::new(),
    };
    let entry = LogEntry {
        seq: u64::try_from(seq).unwrap_or_default(),
        at: UNIX_EPOCH + Duration::from_millis(u64::try_from(at_ms).unwrap_or_default()),
        record,
        reverted_by: reverted_by.and_then(|s| u64::try_from(s).ok()),
        session: row.get::<_, Option<i64>>(16)?.and_then(|s| u64::try_from(s).ok()),
    };
    Ok((entry, text))
}

/// A written file as the `files` column stores it: `{"path", "before", "after"}`. Read back, a
/// file without a string `path` is skipped, and a `before` or `after` that is not a string
/// reads as none.
#[derive(Serialize, Deserialize)]
struct StoredFile<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    #[serde(default, deserialize_with = "string_or_none")]
    before: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "string_or_none")]
    after: Option<Cow<'a, str>>,
}

impl<'a> StoredFile<'a> {
    fn of(file: &'a FileChange) -> Self {
        StoredFile {
            path: Cow::Borrowed(&file.path),
            before: file.before.as_deref().map(Cow::Borrowed),
            after: file.after.as_deref().map(Cow::Borrowed),
        }
    }

    fn into_change(self) -> FileChange {
        FileChange {
            path: self.path.into_owned(),
            before: self.before.map(Cow::into_owned),
            after: self.after.map(Cow::into_owned),
        }
    }
}

/// A written file as [`StoredFile`] writes it, read strictly: any other shape fails, and the
/// column is then read leniently.
#[derive(Deserialize)]
struct PlainFile {
    path: String,
    before: Option<String>,
    after: Option<String>,
}

fn string_or_none<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Cow<'static, str>>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(s) => Some(Cow::Owned(s)),
        _ => None,
    })
}

fn read_files(column: ValueRef<'_>) -> Vec<FileChange> {
    // A column as this build writes it (plain JSON of files with string or null hashes) is
    // read straight into the files; anything else goes through the lenient reading below.
    if let ValueRef::Text(text) = column
        && let Ok(files) = serde_json::from_slice::<Vec<PlainFile>>(text)
    {
        return files
            .into_iter()
            .map(|f| FileChange { path: f.path, before: f.before, after: f.after })
            .collect();
    }
    let Ok(Some(Value::Array(files))) = codec::json_column(column) else { return Vec::new() };
    files
        .iter()
        .filter_map(|f| StoredFile::deserialize(f).ok().map(StoredFile::into_change))
        .collect()
}

/// What a finishing transaction changed on the stack, for the events sent after it.
#[derive(Default)]
struct Finished {
    removed: Option<(PendingId, usize)>,
    pushed: Option<(PendingId, String, usize)>,
}

impl SqliteStore {
    /// The finished log entries from `first` on, oldest first, with their undo data and without
    /// their diffs: what a history of the files they wrote is read from.
    ///
    /// # Errors
    /// A database error.
    pub fn entries_from(&self, first: u64) -> Result<Vec<staged_core::LogEntry>, StoreError> {
        Ok(self.entries_read_from(first, false)?.into_iter().map(|(entry, _)| entry).collect())
    }

    /// [`SqliteStore::entries_from`], each entry's undo data left as its JSON text (its
    /// `record.undo` is `None`), for a reader that decodes it to a shape of its own.
    ///
    /// # Errors
    /// A database error.
    pub fn entries_with_undo_text_from(
        &self,
        first: u64,
    ) -> Result<Vec<(staged_core::LogEntry, Option<String>)>, StoreError> {
        self.entries_read_from(first, true)
    }

    fn entries_read_from(
        &self,
        first: u64,
        undo_text: bool,
    ) -> Result<Vec<(staged_core::LogEntry, Option<String>)>, StoreError> {
        let conn = lock(&self.conn);
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {LOG_COLUMNS} FROM log WHERE done = 1 AND seq >= ?1 ORDER BY seq"
            ))
            .map_err(|err| self.err(err))?;
        stmt.query_map([i64::try_from(first).unwrap_or(i64::MAX)], |row| {
            read_entry_parts(row, false, undo_text)
        })
        .map_err(|err| self.err(err))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| self.err(err))
    }

    /// The session this instance acts for, as stored.
    fn acting(&self) -> Option<i64> {
        self.scope().acting.and_then(|s| i64::try_from(s).ok())
    }

    /// Records `record` in the transaction that deletes the pending row `seq` (`release`
    /// false) or moves it back on top (`release` true). `Ok(None)` when the row is gone.
    pub(crate) fn settle_logged(
        &self,
        claim: &Claim,
        record: &LogRecord,
        release: bool,
    ) -> Result<Option<usize>, StoreError> {
        let seq = self.claim_lock(claim)?.seq;
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        // The entry is the change of the session that staged the preview.
        let session: Option<i64> = tx
            .query_row("SELECT session FROM pending WHERE seq = ?1", [seq], |row| row.get(0))
            .optional()
            .map_err(|err| self.err(err))?
            .flatten();
        let encoded = encode_record(record, session)?;
        let n = if release {
            tx.execute(
                "UPDATE pending SET position = (SELECT MAX(position) + 1 FROM pending) WHERE seq = ?1",
                [seq],
            )
        } else {
            tx.execute("DELETE FROM pending WHERE seq = ?1", [seq])
        }
        .map_err(|err| self.err(err))?;
        if n == 0 {
            return Ok(None);
        }
        insert_record(&tx, &encoded, None, true).map_err(|err| self.err(err))?;
        crate::sessions::keep_before_texts(&tx, record).map_err(StoreError::backend)?;
        prune(&tx).map_err(|err| self.err(err))?;
        let len = pending_len(&tx).map_err(|err| self.err(err))?;
        tx.commit().map_err(|err| self.err(err))?;
        Ok(Some(len))
    }

    /// Records `record` on its own.
    pub(crate) fn insert_logged(&self, record: &LogRecord) -> Result<(), StoreError> {
        let encoded = encode_record(record, self.acting())?;
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        insert_record(&tx, &encoded, None, true).map_err(|err| self.err(err))?;
        crate::sessions::keep_before_texts(&tx, record).map_err(StoreError::backend)?;
        prune(&tx).map_err(|err| self.err(err))?;
        tx.commit().map_err(|err| self.err(err))
    }

    /// Stores the prepared record and remainder of the commit `key`.
    pub(crate) fn prepare_rows(
        &self,
        key: &str,
        record: Option<&LogRecord>,
        remainder: Option<&dyn PendingAction>,
    ) -> Result<(), StoreError> {
        // The record is the change of the session that staged the preview it resolves (or of
        // this instance's, for an undo); what a partial apply leaves pending stays that
        // session's.
        let session: Option<i64> = match record {
            Some(record) => {
                let conn = lock(&self.conn);
                conn.query_row(
                    "SELECT session FROM pending WHERE id = ?1",
                    [record.id.as_str()],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|err| self.err(err))?
                .unwrap_or_else(|| self.acting())
            }
            None => self.acting(),
        };
        let encoded = record.map(|record| encode_record(record, session)).transpose()?;
        let remainder = match remainder {
            Some(action) => {
                let label = action.label().to_owned();
                let source = action.source_tool_name().to_owned();
                let payload = action.payload().ok_or_else(|| {
                    StoreError::backend(format!(
                        "`{label}` cannot stay pending durably: `{source}` gives no replayable payload"
                    ))
                })?;
                let stored = codec::encode(action.details(), Some(payload)).map_err(|err| {
                    let message = format!("`{label}` could not be encoded for storage: {err}");
                    StoreError::backend_caused(message, err)
                })?;
                Some((source, label, stored))
            }
            None => None,
        };
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        if let (Some(encoded), Some(record)) = (&encoded, record) {
            insert_record(&tx, encoded, Some(key), false).map_err(|err| self.err(err))?;
            crate::sessions::keep_before_texts(&tx, record).map_err(StoreError::backend)?;
        }
        if let Some((source, label, stored)) = &remainder {
            tx.execute(
                "INSERT INTO remainder (key, source_tool, label, details, payload, details_in_payload, created_at_ms, session)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    key,
                    source,
                    label,
                    stored.details,
                    stored.payload,
                    stored.details_in_payload,
                    now_ms(),
                    session,
                ],
            )
            .map_err(|err| self.err(err))?;
        }
        tx.commit().map_err(|err| self.err(err))
    }

    /// The commit point of `key`: deletes the pending row `seq` (if given and still there),
    /// pushes the prepared remainder, and makes the prepared record final, in one transaction.
    fn finish_rows(&self, seq: Option<i64>, key: &str) -> Result<Finished, StoreError> {
        let mut res = Finished::default();
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        let e = |err: rusqlite::Error| self.err(err);
        if let Some(seq) = seq {
            let id: Option<String> = tx
                .query_row("SELECT id FROM pending WHERE seq = ?1", [seq], |row| row.get(0))
                .optional()
                .map_err(e)?;
            if let Some(id) = id {
                tx.execute("DELETE FROM pending WHERE seq = ?1", [seq]).map_err(e)?;
                res.removed = Some((PendingId::from_string(id), 0));
            }
        }
        let remainder = tx
            .query_row(
                "SELECT source_tool, label, details, payload, details_in_payload, session FROM remainder WHERE key = ?1",
                [key],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        codec::Encoded {
                            details: row.get(2)?,
                            payload: row.get(3)?,
                            details_in_payload: row.get(4)?,
                        },
                        row.get::<_, Option<i64>>(5)?,
                    ))
                },
            )
            .optional()
            .map_err(e)?;
        if let Some((source, label, stored, session)) = remainder {
            let session = session.and_then(|s| u64::try_from(s).ok());
            let (id, _, _) =
                insert_pending(&tx, &source, &label, &stored, session, crate::ids::boot_id())
                    .map_err(e)?;
            tx.execute("DELETE FROM remainder WHERE key = ?1", [key]).map_err(e)?;
            res.pushed = Some((id, label, 0));
        }
        if let Some((id, label, _)) = &res.pushed {
            let result: Option<String> = tx
                .query_row("SELECT result FROM log WHERE key = ?1 AND done = 0", [key], |row| {
                    row.get(0)
                })
                .optional()
                .map_err(e)?;
            if let Some(result) = result {
                tx.execute(
                    "UPDATE log SET result = ?1 WHERE key = ?2",
                    params![format!("{result} {}", remainder_text(label, id)), key],
                )
                .map_err(e)?;
            }
        }
        // A notice the record carries for an agent session is left in the same transaction.
        let extra = tx
            .query_row("SELECT extra FROM log WHERE key = ?1 AND done = 0", [key], |row| {
                Ok(codec::json_column(row.get_ref(0)?).ok().flatten())
            })
            .optional()
            .map_err(e)?
            .flatten();
        if let Some((session, text)) = extra.as_ref().and_then(crate::notices::notice_in) {
            crate::notices::leave_notice(&tx, session, &text).map_err(e)?;
        }
        tx.execute(
            "UPDATE log SET done = 1, at_ms = ?1 WHERE key = ?2 AND done = 0",
            params![now_ms(), key],
        )
        .map_err(e)?;
        prune(&tx).map_err(e)?;
        let len = pending_len(&tx).map_err(e)?;
        tx.commit().map_err(e)?;
        if let Some(removed) = &mut res.removed {
            // The push, if any, came after the removal.
            removed.1 = len - usize::from(res.pushed.is_some());
        }
        if let Some(pushed) = &mut res.pushed {
            pushed.2 = len;
        }
        Ok(res)
    }

    fn emit_finished(&self, finished: Finished) -> Option<PendingId> {
        if let Some((id, len)) = finished.removed {
            self.emit(StoreEvent::Removed { id, len });
        }
        let (id, label, len) = finished.pushed?;
        self.emit(StoreEvent::Pushed { id: id.clone(), label, len });
        Some(id)
    }

    /// [`staged_core::PendingActionStore::finish_logged`] for this store.
    pub(crate) fn finish_claimed(
        &self,
        claim: Option<Claim>,
        key: &str,
    ) -> Result<Option<PendingId>, StoreError> {
        let seq =
            claim.as_ref().map(|claim| self.claim_lock(claim).map(|held| held.seq)).transpose()?;
        let finished = self.finish_rows(seq, key)?;
        if let Some(seq) = seq {
            let _ = self.claims_dir.remove_file(lock_name(seq));
        }
        drop(claim);
        Ok(self.emit_finished(finished))
    }

    /// Finishes the commit `key` that start-up recovery rolled forward: removes the preview
    /// `origin` (its pending id, when the commit was an apply), pushes the prepared remainder
    /// and makes the prepared record final, in one transaction. Returns whether that is done
    /// (now, or already); `false` when a live resolve holds the preview's claim, which then
    /// decides.
    pub fn finish_recovered(&self, key: &str, origin: Option<&str>) -> Result<bool, StoreError> {
        let seq: Option<i64> = match origin {
            Some(id) => {
                let conn = lock(&self.conn);
                conn.query_row("SELECT seq FROM pending WHERE id = ?1", [id], |row| row.get(0))
                    .optional()
                    .map_err(|err| self.err(err))?
            }
            None => None,
        };
        let Some(seq) = seq else {
            let finished = self.finish_rows(None, key)?;
            self.emit_finished(finished);
            return Ok(true);
        };
        match try_claim(&self.claims_dir, &self.claims_path, seq) {
            Ok(TryClaim::Held(held)) => {
                let finished = self.finish_rows(Some(seq), key)?;
                let _ = self.claims_dir.remove_file(lock_name(seq));
                drop(held);
                self.emit_finished(finished);
                Ok(true)
            }
            Ok(TryClaim::Busy) => Ok(false),
            Err(err) => Err(self.lock_err(seq, err)),
        }
    }

    /// Forgets the prepared record and remainder of the commit `key`, which was rolled back.
    pub fn abandon_prepared(&self, key: &str) -> Result<(), StoreError> {
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        tx.execute("DELETE FROM log WHERE key = ?1 AND done = 0", [key])
            .map_err(|err| self.err(err))?;
        tx.execute("DELETE FROM remainder WHERE key = ?1", [key]).map_err(|err| self.err(err))?;
        tx.commit().map_err(|err| self.err(err))
    }
}

/// Holds the undo lock's file locked.
struct HeldUndoLock(File);

impl Drop for HeldUndoLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

impl ResolveLog for SqliteStore {
    fn entries(&self, limit: usize, with_diff: bool) -> Result<Vec<LogEntry>, StoreError> {
        let conn = lock(&self.conn);
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {LOG_COLUMNS} FROM log WHERE done = 1 ORDER BY seq DESC LIMIT ?1"
            ))
            .map_err(|err| self.err(err))?;
        stmt.query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |row| read_entry(row, with_diff))
            .map_err(|err| self.err(err))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| self.err(err))
    }

    fn entry(&self, seq: u64) -> Result<Option<LogEntry>, StoreError> {
        let Ok(seq) = i64::try_from(seq) else { return Ok(None) };
        let conn = lock(&self.conn);
        conn.query_row(
            &format!("SELECT {LOG_COLUMNS} FROM log WHERE seq = ?1 AND done = 1"),
            [seq],
            |row| read_entry(row, true),
        )
        .optional()
        .map_err(|err| self.err(err))
    }

    fn newest_applied(&self) -> Result<Option<u64>, StoreError> {
        let conn = lock(&self.conn);
        let seq: Option<i64> = conn
            .query_row(
                "SELECT seq FROM log WHERE done = 1 AND outcome IN ('applied', 'redone')
                 AND NOT EXISTS (SELECT 1 FROM log AS r WHERE r.reverts = log.seq AND r.done = 1)
                 ORDER BY seq DESC LIMIT 1",
                [],
                |row| row.get(0),
            )
            .optional()
            .map_err(|err| self.err(err))?;
        Ok(seq.and_then(|s| u64::try_from(s).ok()))
    }

    fn newest_undo(&self) -> Result<Option<u64>, StoreError> {
        let conn = lock(&self.conn);
        let seq: Option<i64> = conn
            .query_row(
                "SELECT seq FROM log WHERE done = 1 AND outcome = 'undone'
                 AND NOT EXISTS (SELECT 1 FROM log AS r WHERE r.reverts = log.seq AND r.done = 1)
                 AND seq > COALESCE((SELECT a.seq FROM log AS a WHERE a.done = 1 AND a.outcome = 'applied' ORDER BY a.seq DESC LIMIT 1), -1)
                 ORDER BY seq DESC LIMIT 1",
                [],
                |row| row.get(0),
            )
            .optional()
            .map_err(|err| self.err(err))?;
        Ok(seq.and_then(|s| u64::try_from(s).ok()))
    }

    fn reverted_by(&self, seq: u64) -> Result<Option<Reversal>, StoreError> {
        let Ok(seq) = i64::try_from(seq) else { return Ok(None) };
        let conn = lock(&self.conn);
        let row: Option<(i64, bool)> = conn
            .query_row(
                "SELECT seq, done FROM log WHERE reverts = ?1 ORDER BY done DESC, seq LIMIT 1",
                [seq],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(|err| self.err(err))?;
        Ok(row.map(|(seq, done)| Reversal { seq: u64::try_from(seq).unwrap_or_default(), done }))
    }

    fn lock_undo(&self) -> Result<UndoLock, StoreError> {
        let cannot = |err: std::io::Error| {
            let message =
                format!("cannot lock {}: {err}", self.claims_path.join(UNDO_LOCK_NAME).display());
            StoreError::backend_caused(message, err)
        };
        let file = self.claims_dir.open_lock_file(UNDO_LOCK_NAME).map_err(cannot)?;
        file.lock().map_err(cannot)?;
        Ok(UndoLock::new(Box::new(HeldUndoLock(file))))
    }

    fn keep(&self) -> Result<usize, StoreError> {
        read_keep(&lock(&self.conn)).map_err(|err| self.err(err))
    }

    fn set_keep(&self, keep: usize) -> Result<(), StoreError> {
        if keep == 0 {
            return Err(StoreError::backend("the log must keep at least one entry"));
        }
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        tx.execute(
            "INSERT INTO settings (name, value) VALUES (?1, ?2)
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            params![KEEP_SETTING, keep.to_string()],
        )
        .map_err(|err| self.err(err))?;
        prune(&tx).map_err(|err| self.err(err))?;
        tx.commit().map_err(|err| self.err(err))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn file(path: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            path: path.to_owned(),
            before: before.map(str::to_owned),
            after: after.map(str::to_owned),
        }
    }

    #[test]
    fn the_files_column_reads_strictly_or_leniently_to_the_same_files() {
        let written = vec![file("a.txt", Some("1"), Some("2")), file("new.txt", None, Some("3"))];
        let stored: Vec<StoredFile<'_>> = written.iter().map(StoredFile::of).collect();
        let plain = serde_json::to_vec(&stored).unwrap();
        assert_eq!(read_files(ValueRef::Text(&plain)), written);
        let compressed = codec::compress(&stored).unwrap();
        assert_eq!(read_files(ValueRef::Blob(&compressed)), written);
        // Not this build's shape: a file without a path is skipped, a hash that is not a
        // string reads as none.
        let odd = br#"[{"path":"a.txt","before":1,"after":"2"},{"before":"x"},{"path":"b.txt"}]"#;
        assert_eq!(
            read_files(ValueRef::Text(odd)),
            [file("a.txt", None, Some("2")), file("b.txt", None, None)]
        );
        assert_eq!(read_files(ValueRef::Text(b"not json")), []);
        assert_eq!(read_files(ValueRef::Null), []);
    }
}
