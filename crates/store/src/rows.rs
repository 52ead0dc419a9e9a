//! The rows of the `pending` table: reading one back (whole, or as a summary without its
//! details and payload) and inserting one on top of the stack.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Transaction, params};
use staged_core::{PendingId, PendingSummary, pending_id};

use crate::{StoredAction, codec};

/// One row, before rehydration.
pub(crate) struct Row {
    pub(crate) seq: i64,
    pub(crate) stored: StoredAction,
    /// Why the row cannot be replayed, when its JSON columns are malformed.
    pub(crate) malformed: Option<String>,
    /// The action was staged without a replayable payload.
    pub(crate) payloadless: bool,
}

/// The columns [`read_summary`] reads, in its order.
pub(crate) const SUMMARY_COLUMNS: &str = "id, label, source_tool, created_at_ms, session";

/// The columns [`read_row`] reads, in its order.
pub(crate) const ROW_COLUMNS: &str =
    "seq, id, source_tool, label, created_at_ms, details, payload, details_in_payload";

/// Reads a row as stored. A row whose JSON columns do not parse still lists (and can be
/// discarded), as an unavailable action that says what is wrong with it.
pub(crate) fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let created_ms: i64 = row.get(4)?;
    let (details, payload, malformed, payloadless) =
        match codec::decode(row.get_ref(5)?, row.get_ref(6)?, row.get(7)?) {
            Ok(codec::Decoded { details, payload: Some(payload) }) => {
                (details, payload, None, false)
            }
            Ok(codec::Decoded { details, payload: None }) => {
                (details, serde_json::Value::Null, None, true)
            }
            Err(why) => (None, serde_json::Value::Null, Some(why), false),
        };
    Ok(Row {
        seq: row.get(0)?,
        malformed,
        payloadless,
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

/// Reads a row as a summary, without its details and payload.
pub(crate) fn read_summary(row: &rusqlite::Row<'_>) -> rusqlite::Result<PendingSummary> {
    let created_ms: i64 = row.get(3)?;
    Ok(PendingSummary {
        id: PendingId::from_string(row.get(0)?),
        label: row.get(1)?,
        source_tool_name: row.get(2)?,
        created_at: UNIX_EPOCH
            + Duration::from_millis(u64::try_from(created_ms).unwrap_or_default()),
        session: row.get::<_, Option<i64>>(4)?.and_then(|s| u64::try_from(s).ok()),
    })
}

/// Inserts a pending row of `session` on top and returns its id
/// (`pending-action:<source>:<seq - 1>`), `seq`, and whether the commit that holds it may be
/// left unsynced: its id is one a synced reservation of this boot (`boot`) holds (the ids
/// module). The sequence first skips any id an earlier boot reserved.
pub(crate) fn insert_pending(
    tx: &Transaction<'_>,
    source: &str,
    label: &str,
    encoded: &codec::Encoded,
    session: Option<u64>,
    boot: Option<&str>,
) -> rusqlite::Result<(PendingId, i64, bool)> {
    let reserved = crate::ids::before_push(tx, "pending", boot)?;
    let created_ms = now_ms();
    tx.execute(
        "INSERT INTO pending (id, source_tool, label, created_at_ms, details, payload, details_in_payload, position, session)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT COALESCE(MAX(position), 0) + 1 FROM pending), ?8)",
        params![
            format!("staging:{created_ms}"),
            source,
            label,
            created_ms,
            encoded.details,
            encoded.payload,
            encoded.details_in_payload,
            session.and_then(|s| i64::try_from(s).ok()),
        ],
    )?;
    let seq = tx.last_insert_rowid();
    // AUTOINCREMENT starts at 1; ids count from 0, like the in-memory store's.
    let id = pending_id(source, u64::try_from(seq - 1).unwrap_or_default());
    tx.execute("UPDATE pending SET id = ?1 WHERE seq = ?2", params![id.as_str(), seq])?;
    Ok((id, seq, reserved.is_some_and(|through| seq <= through)))
}

/// The number of pending rows.
pub(crate) fn pending_len(tx: &Transaction<'_>) -> rusqlite::Result<usize> {
    let len: i64 = tx.query_row("SELECT COUNT(*) FROM pending", [], |row| row.get(0))?;
    Ok(usize::try_from(len).unwrap_or_default())
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
