//! Notices for an agent session's model: what a person's revert or keep (or a shell run's
//! wrapper) leaves for it, told once, at its next chance, however many processes ask at once.

use rusqlite::{TransactionBehavior, params};
use staged_core::StoreError;

use crate::{
    rows::now_ms,
    sessions::parse_session_number,
    sqlite::{SqliteStore, lock},
};

/// The field of a log record's `extra` that holds a notice for an agent session's model,
/// `{"session": "S3", "text": "..."}`: the store leaves it for the session (as
/// [`SqliteStore::notify_session`] does) in the transaction that makes the record final, so a
/// revert's notice exists exactly when the revert does, wherever a kill stops it.
pub const NOTICE_FIELD: &str = "notice";

/// A notice for an agent session's model, as a log record's `extra` carries it under
/// [`NOTICE_FIELD`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordNotice {
    /// The session whose model is told: `S3`.
    pub session: String,
    /// What it is told.
    pub text: String,
}

/// The session number and text of the notice in a log record's `extra` ([`NOTICE_FIELD`]);
/// `None` when it has none, or one that does not read as a [`RecordNotice`] of a session.
pub(crate) fn notice_in(extra: &serde_json::Value) -> Option<(i64, String)> {
    #[derive(serde::Deserialize)]
    struct Carrier {
        #[serde(default)]
        notice: Option<RecordNotice>,
    }
    let notice = <Carrier as serde::Deserialize>::deserialize(extra).ok()?.notice?;
    let number = parse_session_number(&notice.session).ok()?;
    Some((i64::try_from(number).ok()?, notice.text))
}

/// Leaves `text` for session `session`'s model, in `conn`'s transaction if it is in one.
pub(crate) fn leave_notice(
    conn: &rusqlite::Connection,
    session: i64,
    text: &str,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO notices (session, text, at_ms) VALUES (?1, ?2, ?3)",
        params![session, text, now_ms()],
    )
    .map(drop)
}

impl SqliteStore {
    /// Leaves `text` for session `number`'s model: told once, at its next chance.
    ///
    /// # Errors
    /// A database error.
    pub fn notify_session(&self, number: u64, text: &str) -> Result<(), StoreError> {
        let conn = lock(&self.conn);
        leave_notice(&conn, i64::try_from(number).unwrap_or(i64::MAX), text)
            .map_err(|err| self.err(err))
    }

    /// Takes the notices waiting for session `number`, oldest first: each is handed out once,
    /// however many processes ask at once.
    ///
    /// # Errors
    /// A database error.
    pub fn take_notices(&self, number: u64) -> Result<Vec<String>, StoreError> {
        let session = i64::try_from(number).unwrap_or(i64::MAX);
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        let taken: Vec<(i64, String)> = {
            let mut stmt = tx
                .prepare(
                    "SELECT seq, text FROM notices WHERE session = ?1 AND delivered_ms IS NULL ORDER BY seq",
                )
                .map_err(|err| self.err(err))?;
            stmt.query_map([session], |row| Ok((row.get(0)?, row.get(1)?)))
                .map_err(|err| self.err(err))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|err| self.err(err))?
        };
        let now = now_ms();
        for (seq, _) in &taken {
            tx.execute("UPDATE notices SET delivered_ms = ?1 WHERE seq = ?2", params![now, seq])
                .map_err(|err| self.err(err))?;
        }
        // Lost in a power cut, the notices are handed out again.
        self.losable(|| tx.commit()).map_err(|err| self.err(err))?;
        Ok(taken.into_iter().map(|(_, text)| text).collect())
    }
}
