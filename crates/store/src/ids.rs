//! Pending ids a power cut cannot hand out twice, so that a hook call may tell its model the id
//! of a preview whose commit is not yet synced (schema 6).
//!
//! A pending id is `seq - 1` of its row, from an AUTOINCREMENT sequence: a commit that is
//! synced before the id is told keeps the id for good. A hook call's commits are not synced
//! when all they hold may be lost without harm (a preview the model was told of, an activity
//! time, notices handed out, the hook's own state): a power cut then loses the preview, and
//! the model's resolve of its id finds nothing pending, which is safe, unless a later preview
//! took the same id, which is not: the sequence rolled back with the lost commit.
//!
//! So unsynced ids come out of a reservation: the row `pending` of the table `reserved`
//! holds the last id reserved (`through`, a `seq`) and the boot it was reserved in (the
//! kernel's `boot_id`, new at every boot). The reservation is made by a synced commit, before
//! any id in it is handed out unsynced. A commit that was never synced is lost only with the
//! page cache: a crash of the system or a power cut, after which the system boots again with
//! a new `boot_id`. Every push reads the reservation first: made in another boot, its ids may
//! have been handed out and lost, so the sequence skips past `through` before the push takes
//! its id (and that commit is synced, being the one that moves the reservation to this boot).
//! A push in the reservation's boot, with the sequence still at or below `through`, may be
//! left unsynced. Where the boot cannot be read (no `/proc`), nothing is left unsynced.
//!
//! A build older than schema 6 does not read the reservation, and so would take ids again
//! after a power cut; it refuses a schema-6 database (`written by a newer staged`).

use std::sync::OnceLock;

use rusqlite::{OptionalExtension, Transaction, params};

/// How many ids one synced commit reserves for unsynced pushes after it.
pub(crate) const RESERVE: i64 = 128;

/// Creates the table of reservations (schema 6).
pub(crate) fn migrate(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS reserved (
             name TEXT PRIMARY KEY,
             boot TEXT NOT NULL,
             through INTEGER NOT NULL
         );",
    )
}

/// The kernel's id of this boot, read once per process; `None` where there is none to read.
pub(crate) fn boot_id() -> Option<&'static str> {
    static BOOT: OnceLock<Option<String>> = OnceLock::new();
    BOOT.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        let id = text.trim();
        (!id.is_empty() && id.len() <= 64).then(|| id.to_owned())
    })
    .as_deref()
}

/// The last `seq` `table`'s sequence handed out (0: none).
fn sequence(tx: &Transaction<'_>, table: &str) -> rusqlite::Result<i64> {
    Ok(tx
        .query_row("SELECT seq FROM sqlite_sequence WHERE name = ?1", [table], |row| row.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Before a push into `table` in this boot (`boot`), inside the push's transaction: when the
/// reservation was made in another boot (or this boot is unknown), moves the sequence past
/// its end, since its ids may have been handed out by commits a power cut lost. Returns the
/// end of the reservation when it was made in this boot. A reservation is only ever written
/// by a synced commit, which SQLite shows to other connections only once it is synced, so
/// what is read here is durable.
pub(crate) fn before_push(
    tx: &Transaction<'_>,
    table: &str,
    boot: Option<&str>,
) -> rusqlite::Result<Option<i64>> {
    let held: Option<(String, i64)> = tx
        .query_row("SELECT boot, through FROM reserved WHERE name = ?1", [table], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    match held {
        None => Ok(None),
        Some((held_boot, through)) if boot == Some(held_boot.as_str()) => Ok(Some(through)),
        Some((_, through)) => {
            skip_to(tx, table, through)?;
            Ok(None)
        }
    }
}

/// Moves `table`'s AUTOINCREMENT sequence to at least `through`. SQLite keeps each such
/// table's high mark in `sqlite_sequence`, which may be written; a table never inserted into
/// has no row there yet.
fn skip_to(tx: &Transaction<'_>, table: &str, through: i64) -> rusqlite::Result<()> {
    let moved = tx.execute(
        "UPDATE sqlite_sequence SET seq = MAX(seq, ?2) WHERE name = ?1",
        params![table, through],
    )?;
    if moved == 0 {
        tx.execute(
            "INSERT INTO sqlite_sequence (name, seq) VALUES (?1, ?2)",
            params![table, through],
        )?;
    }
    Ok(())
}

/// Reserves the next [`RESERVE`] ids of `table` in boot `boot`, unless the reservation in
/// place still has one: in the caller's transaction, which must be committed synced before
/// any id it reserves is handed out unsynced. A reservation of another boot is skipped past
/// first. Returns whether it wrote anything.
pub(crate) fn reserve(tx: &Transaction<'_>, table: &str, boot: &str) -> rusqlite::Result<bool> {
    let through = before_push(tx, table, Some(boot))?;
    let next = sequence(tx, table)?.saturating_add(1);
    if through.is_some_and(|through| next <= through) {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO reserved (name, boot, through) VALUES (?1, ?2, ?3)
         ON CONFLICT (name) DO UPDATE SET boot = ?2, through = ?3",
        params![table, boot, next.saturating_add(RESERVE - 1)],
    )?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::{path::Path, sync::Arc, sync::atomic::Ordering};

    use staged_core::{FnPendingAction, PendingActionStore};
    use staged_protocol::ToolResult;

    use crate::{Rehydrators, SqliteStore, sqlite::lock};

    fn action() -> Arc<FnPendingAction> {
        Arc::new(
            FnPendingAction::new("a preview", |_| async { Ok(ToolResult::text("ran")) })
                .with_payload(serde_json::json!({"x": 1})),
        )
    }

    /// One hook call: syncs deferred, a push, the deferred sync. Returns the id and whether
    /// the call's commits had to be synced.
    fn hook_push(state: &Path) -> (String, bool) {
        let store = SqliteStore::open(state, Rehydrators::new()).unwrap();
        store.defer_syncs().unwrap();
        let id = store.push(action()).unwrap();
        let must_sync = store.unsynced.must_sync.load(Ordering::SeqCst);
        store.sync_deferred().unwrap();
        (id.as_str().to_owned(), must_sync)
    }

    /// The files of the database, as a power cut would leave them: what was synced.
    fn files(state: &Path) -> Vec<(String, Vec<u8>)> {
        ["staged.db", "staged.db-wal"]
            .iter()
            .filter_map(|name| Some((name.to_string(), std::fs::read(state.join(name)).ok()?)))
            .collect()
    }

    #[test]
    fn a_hook_calls_push_inside_a_reservation_of_this_boot_is_left_unsynced() {
        if super::boot_id().is_none() {
            // Without a boot id nothing may be left unsynced; the next test checks that.
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".staged");
        // The first reserves ids, in a synced commit of its own; its push is then inside.
        let (first, must_sync) = hook_push(&state);
        assert_eq!(first, "pending-action:custom_tool:0");
        assert!(!must_sync);
        let (second, must_sync) = hook_push(&state);
        assert_eq!(second, "pending-action:custom_tool:1");
        assert!(!must_sync, "a push inside the reservation needs no sync");
        // A new session's number is handed out: that call is synced.
        let store = SqliteStore::open(&state, Rehydrators::new()).unwrap();
        store.defer_syncs().unwrap();
        store.open_session("claude-code", "new", None).unwrap();
        assert!(store.unsynced.must_sync.load(Ordering::SeqCst));
        store.sync_deferred().unwrap();
        // A known one's activity, notices taken, the hook's state: none needs a sync.
        store.defer_syncs().unwrap();
        let row = store.open_session("claude-code", "new", None).unwrap();
        store.set_hook_state("claude-code", "new", "{}").unwrap();
        store.take_notices(row.number).unwrap();
        assert!(!store.unsynced.must_sync.load(Ordering::SeqCst));
        store.sync_deferred().unwrap();
        // Every other commit does: a log entry, say.
        store.defer_syncs().unwrap();
        store.notify_session(row.number, "a notice").unwrap();
        assert!(store.unsynced.must_sync.load(Ordering::SeqCst));
        store.sync_deferred().unwrap();
    }

    #[test]
    fn ids_a_power_cut_lost_are_never_handed_out_again() {
        if super::boot_id().is_none() {
            // Every push is synced: nothing to lose.
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".staged");
        hook_push(&state);
        // What a power cut leaves: the synced state, before the next calls' unsynced pushes.
        let synced = files(&state);
        let (lost_a, _) = hook_push(&state);
        let (lost_b, _) = hook_push(&state);
        for name in ["staged.db", "staged.db-wal", "staged.db-shm"] {
            let _ = std::fs::remove_file(state.join(name));
        }
        for (name, bytes) in &synced {
            std::fs::write(state.join(name), bytes).unwrap();
        }
        // The system boots again: the reservation was made in another boot.
        {
            let store = SqliteStore::open(&state, Rehydrators::new()).unwrap();
            let conn = lock(&store.conn);
            let rows = conn
                .execute("UPDATE reserved SET boot = 'a boot before the power cut'", [])
                .unwrap();
            assert_eq!(rows, 1);
        }
        let (after, _) = hook_push(&state);
        assert_ne!(after, lost_a);
        assert_ne!(after, lost_b);
        let n = |id: &str| id.rsplit(':').next().unwrap().parse::<i64>().unwrap();
        assert!(n(&after) > n(&lost_b), "{after} after {lost_b}");
        // A person's push (synced) skips them too.
        let store = SqliteStore::open(&state, Rehydrators::new()).unwrap();
        let next = store.push(action()).unwrap();
        assert_eq!(n(next.as_str()), n(&after) + 1);
    }

    #[test]
    fn without_a_reservation_of_this_boot_a_push_is_synced() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".staged");
        let store = SqliteStore::open(&state, Rehydrators::new()).unwrap();
        // A reservation of another boot, as after a power cut.
        lock(&store.conn)
            .execute(
                "INSERT INTO reserved (name, boot, through) VALUES ('pending', 'another boot', 5)",
                [],
            )
            .unwrap();
        // A person's push (not deferred) skips the reserved ids and reserves nothing.
        let id = store.push(action()).unwrap();
        assert_eq!(id.as_str(), "pending-action:custom_tool:5");
        drop(store);
        let (id, must_sync) = hook_push(&state);
        assert_eq!(id, "pending-action:custom_tool:6");
        if super::boot_id().is_none() {
            assert!(must_sync, "no boot id: nothing is left unsynced");
        }
    }
}
