//! `SqliteStore`: the pending stack as rows of `<state>/staged.db`.
//!
//! Order is a `position` column (the head has the largest); ids come from an AUTOINCREMENT
//! sequence, so they are never reused, even across processes. Every write is one IMMEDIATE
//! transaction; readers never block writers (WAL).
//!
//! An action without a replayable payload (an in-process custom tool's) is stored with an
//! empty payload column: this store keeps the live action for as long as it is open, and
//! every other process (or this one after a restart) reads the row back as unavailable, so it
//! can be listed and discarded, and its apply says why it cannot run.
//!
//! The database's schema and connection settings are the schema module's; the `pending` rows'
//! columns, reading and insertion, the rows module's.

use std::{
    collections::HashMap,
    fmt,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicBool, Ordering},
    },
};

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use staged_core::{
    Claim, LogRecord, PendingAction, PendingActionStore, PendingEntry, PendingId, PendingSummary,
    PushCheck, ResolveLog, StoreError, StoreEvent, StoreListener, StoreListeners, Subscription,
};
use staged_fs::{DirHandle, NewFileMode, Root};

use crate::{
    Rehydrators, SessionScope,
    claim::{ClaimLock, TryClaim, lock_name, try_claim},
    codec,
    rows::{
        ROW_COLUMNS, Row, SUMMARY_COLUMNS, insert_pending, pending_len, read_row, read_summary,
    },
    schema::{self, BUSY_TIMEOUT, SCHEMA_VERSION},
    wal::{self, Unsynced},
};

/// The database's file name inside the state folder.
pub(crate) const DB_FILE_NAME: &str = "staged.db";

/// How often `claim_head` retries when the head changes under it.
const CLAIM_ATTEMPTS: usize = 16;

/// The durable pending stack of one workspace.
pub struct SqliteStore {
    pub(crate) state_dir: PathBuf,
    pub(crate) claims_path: PathBuf,
    pub(crate) claims_dir: DirHandle,
    /// The state folder, where the database and its WAL are.
    pub(crate) state: DirHandle,
    pub(crate) conn: Mutex<Connection>,
    /// Whether commits are deferred: made without a sync of their own, until
    /// [`SqliteStore::sync_deferred`] syncs them all at once ([`SqliteStore::defer_syncs`]).
    pub(crate) deferred: AtomicBool,
    /// Which deferred commits `sync_deferred` must sync (the commit hook's record).
    pub(crate) unsynced: Arc<Unsynced>,
    rehydrators: Rehydrators,
    listeners: StoreListeners,
    /// The payload-less actions this store pushed, by `seq`: only this process can run them.
    live: Mutex<HashMap<i64, Arc<dyn PendingAction>>>,
    /// The agent session this instance acts for.
    pub(crate) scope: Mutex<SessionScope>,
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

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
    /// workspace), is a symlink or not a directory, the file is not a staged database, or
    /// another process keeps it locked.
    pub fn open(state_dir: &Path, rehydrators: Rehydrators) -> Result<Self, StoreError> {
        let cannot = |err: &dyn fmt::Display| {
            format!("cannot create the state folder {}: {err}", state_dir.display())
        };
        let cannot_io = |err: std::io::Error| StoreError::backend_caused(cannot(&err), err);
        let (parent, name) = match (state_dir.parent(), state_dir.file_name()) {
            (Some(parent), Some(name)) => (parent, name),
            _ => return Err(StoreError::backend(cannot(&"it has no parent folder"))),
        };
        let parent = Root::open(parent).map_err(cannot_io)?;
        let handle = parent.handle().map_err(cannot_io)?;
        let state = handle.create_dir(name).map_err(|err| refuse_dir(state_dir, err))?;
        Self::open_in(state_dir, state, rehydrators)
    }

    /// Opens (creating if needed) the store in the open folder `state`, whose path is
    /// `state_dir` (used for the database file and in messages).
    ///
    /// Every file the store creates in the folder is created through its handle without
    /// following a symlink, and the database and its side files must be regular files: a
    /// planted symlink is refused, never followed.
    pub fn open_in(
        state_dir: &Path,
        state: DirHandle,
        rehydrators: Rehydrators,
    ) -> Result<Self, StoreError> {
        let claims_path = state_dir.join("claims");
        let claims_dir = state.create_dir("claims").map_err(|err| refuse_dir(&claims_path, err))?;
        if let Ok(None) = state.entry_metadata(".gitignore") {
            // Keep the state folder out of the user's repository; best effort, since the
            // store works without it.
            let _ = state.create_new(
                ".gitignore",
                b"# Created by staged: pending previews are local state.\n*\n",
                &NewFileMode::Mode(0o644),
            );
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let name = format!("{DB_FILE_NAME}{suffix}");
            match state.entry_metadata(&name) {
                Ok(None) => {}
                Ok(Some(meta)) if meta.is_file() => {}
                Ok(Some(_)) => {
                    return Err(StoreError::backend(format!(
                        "refusing {}: it is a symlink or not a regular file",
                        state_dir.join(&name).display()
                    )));
                }
                Err(err) => {
                    let message = format!("{}: {err}", state_dir.join(&name).display());
                    return Err(StoreError::backend_caused(message, err));
                }
            }
        }
        let db_path = state_dir.join(DB_FILE_NAME);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let mut conn =
            Connection::open_with_flags(&db_path, flags).map_err(|err| db_error(&db_path, err))?;
        let unsynced = Arc::new(Unsynced::default());
        let seen = Arc::clone(&unsynced);
        conn.commit_hook(Some(move || {
            seen.committed();
            false
        }))
        .map_err(|err| db_error(&db_path, err))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|err| db_error(&db_path, err))?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|err| db_error(&db_path, err))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::backend(format!(
                "{} was written by a newer staged (schema {version}, this build reads {SCHEMA_VERSION})",
                db_path.display()
            )));
        }
        schema::init(&conn, version).map_err(|err| db_error(&db_path, err))?;
        Ok(Self {
            state_dir: state_dir.to_path_buf(),
            claims_path,
            claims_dir,
            state,
            conn: Mutex::new(conn),
            deferred: AtomicBool::new(false),
            unsynced,
            rehydrators,
            listeners: StoreListeners::new(),
            live: Mutex::new(HashMap::new()),
            scope: Mutex::new(SessionScope::person()),
        })
    }

    /// The state folder this store lives in.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Defers the sync of every commit of this store until [`SqliteStore::sync_deferred`]:
    /// a process that commits several times before it tells anyone what it did (a hook call
    /// stages a preview, saves its session's state, takes its notices, then replies) syncs the
    /// database once instead of once per commit. Each commit stays atomic, and the WAL is
    /// written in order, so a power cut before the sync loses the deferred commits (the last
    /// ones), never a part of one. The caller must not act on a deferred commit outside the
    /// database (write a file, answer a client) before `sync_deferred` returned.
    ///
    /// # Errors
    /// A database error.
    pub fn defer_syncs(&self) -> Result<(), StoreError> {
        let conn = lock(&self.conn);
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(|err| self.err(err))?;
        self.unsynced.must_sync.store(false, Ordering::SeqCst);
        self.deferred.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Runs `commit` (a commit, or a statement outside a transaction) as one whose loss in a
    /// power cut harms nothing, so that [`SqliteStore::sync_deferred`] need not sync it: a
    /// preview whose id a synced reservation holds (the ids module), a known session's
    /// activity time, notices handed out, a hook's own state. Call it with the connection's
    /// lock held, as every commit is made.
    pub(crate) fn losable<T>(
        &self,
        commit: impl FnOnce() -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.unsynced.losable(commit)
    }

    /// Makes every commit deferred since [`SqliteStore::defer_syncs`] durable (the WAL they
    /// are in synced, and the folder that holds it synced unless the WAL's name there is known
    /// durable: the wal module), and syncs every later commit on its own again. Nothing to do
    /// when nothing is deferred, and no sync when every deferred commit was one whose loss
    /// harms nothing (a preview whose id a synced reservation holds, a known session's
    /// activity time, notices handed out, a hook's state) and the WAL's name is known durable.
    ///
    /// # Errors
    /// The sync's error (then the deferred commits may be lost in a power cut).
    pub fn sync_deferred(&self) -> Result<(), StoreError> {
        if !self.deferred.load(Ordering::SeqCst) {
            return Ok(());
        }
        let conn = lock(&self.conn);
        let must_sync = self.unsynced.must_sync.load(Ordering::SeqCst);
        let wal_path = self.state_dir.join(format!("{DB_FILE_NAME}-wal"));
        let cannot = |err: std::io::Error| {
            StoreError::backend_caused(format!("cannot sync {}: {err}", wal_path.display()), err)
        };
        // Any descriptor of the file syncs it. No WAL: nothing was committed through one (a
        // checkpoint that truncated it synced the database first); the folder is synced.
        match self.state.open_file(format!("{DB_FILE_NAME}-wal")) {
            Ok(wal) => {
                // The WAL's name in its folder, which SQLite syncs at a process's first synced
                // commit, unless a sync since its creation is known.
                let named = wal::named(&wal, &self.state);
                if must_sync || !named {
                    wal.sync_all().map_err(cannot)?;
                }
                if !named {
                    self.state.sync().map_err(cannot)?;
                    wal::mark_named(&wal, &self.state);
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                if must_sync {
                    self.state.sync().map_err(cannot)?;
                }
            }
            Err(err) => return Err(cannot(err)),
        }
        conn.pragma_update(None, "synchronous", "FULL").map_err(|err| self.err(err))?;
        self.deferred.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// While syncs are deferred, in this boot: makes sure the next pending id is one a synced
    /// reservation holds, reserving more in a commit of its own, synced (the ids module), so
    /// that the push may be left unsynced. Best effort: when it fails, the push is synced.
    fn reserve_pending_ids(&self) {
        let Some(boot) = crate::ids::boot_id() else { return };
        if !self.deferred.load(Ordering::SeqCst) {
            return;
        }
        let mut conn = lock(&self.conn);
        if conn.pragma_update(None, "synchronous", "FULL").is_err() {
            return;
        }
        let reserved =
            conn.transaction_with_behavior(TransactionBehavior::Immediate).and_then(|tx| {
                crate::ids::reserve(&tx, "pending", boot)?;
                // Synced on its own: nothing the deferred sync must do.
                self.losable(|| tx.commit())
            });
        // Back to the deferred level; if that fails, the rest of the call is synced anyway.
        if conn.pragma_update(None, "synchronous", "NORMAL").is_err() || reserved.is_err() {
            self.unsynced.must_sync.store(true, Ordering::SeqCst);
        }
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
            .map_err(|err| self.err(err))?
        };
        Ok(row.map(|row| self.entry(row)))
    }

    /// Removes the entry `id` because its apply is known to be written: start-up recovery
    /// finished a commit that a crash interrupted after its commit point. Returns whether the
    /// entry is gone (removed now, or already); `false` when a live resolve holds its claim,
    /// which then decides.
    pub fn retire_finished(&self, id: &str) -> Result<bool, StoreError> {
        let seq: Option<i64> = {
            let conn = lock(&self.conn);
            conn.query_row("SELECT seq FROM pending WHERE id = ?1", [id], |row| row.get(0))
                .optional()
                .map_err(|err| self.err(err))?
        };
        let Some(seq) = seq else { return Ok(true) };
        match try_claim(&self.claims_dir, &self.claims_path, seq) {
            Ok(TryClaim::Held(held)) => {
                if let Some((id, len)) = self.delete(seq)? {
                    self.emit(StoreEvent::Removed { id, len });
                }
                let _ = self.claims_dir.remove_file(lock_name(seq));
                drop(held);
                Ok(true)
            }
            Ok(TryClaim::Busy) => Ok(false),
            Err(err) => Err(self.lock_err(seq, err)),
        }
    }

    pub(crate) fn lock_err(&self, seq: i64, err: std::io::Error) -> StoreError {
        let message =
            format!("cannot lock {}: {err}", self.claims_path.join(lock_name(seq)).display());
        StoreError::backend_caused(message, err)
    }

    pub(crate) fn err(&self, err: rusqlite::Error) -> StoreError {
        db_error(&self.state_dir.join(DB_FILE_NAME), err)
    }

    /// Pushes `action`, unless `refuse` objects to an entry pending now: the check and the
    /// push are one IMMEDIATE transaction, so no other process pushes or resolves between.
    fn push_checked(
        &self,
        action: Arc<dyn PendingAction>,
        refuse: Option<&PushCheck<'_>>,
    ) -> Result<PendingId, StoreError> {
        let label = action.label().to_owned();
        let source = action.source_tool_name().to_owned();
        let payload = action.payload();
        let payloadless = payload.is_none();
        let encoded = codec::encode(action.details(), payload).map_err(|err| {
            StoreError::backend_caused(
                format!("`{label}` could not be encoded for storage: {err}"),
                err,
            )
        })?;
        self.reserve_pending_ids();
        let (id, len) = {
            let mut conn = lock(&self.conn);
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|err| self.err(err))?;
            if let Some(refuse) = refuse {
                let rows = {
                    let mut stmt = tx
                        .prepare(&format!(
                            "SELECT {ROW_COLUMNS} FROM pending ORDER BY position DESC"
                        ))
                        .map_err(|err| self.err(err))?;
                    stmt.query_map([], read_row)
                        .map_err(|err| self.err(err))?
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|err| self.err(err))?
                };
                if let Some((id, why)) = rows
                    .into_iter()
                    .map(|row| self.entry(row))
                    .find_map(|entry| refuse(&entry).map(|why| (entry.id, why)))
                {
                    // Another session's preview is not this session's model's to resolve.
                    let theirs: Option<i64> = tx
                        .query_row(
                            "SELECT session FROM pending WHERE id = ?1",
                            [id.as_str()],
                            |r| r.get(0),
                        )
                        .optional()
                        .map_err(|err| self.err(err))?
                        .flatten();
                    let acting = self.scope().acting.and_then(|s| i64::try_from(s).ok());
                    let why = match (acting, theirs) {
                        (Some(ours), theirs) if theirs != Some(ours) => {
                            let whose = theirs.map_or_else(
                                || "a person's".to_owned(),
                                |s| format!("session S{s}'s"),
                            );
                            let head = why
                                .split_once(" Resolve it first")
                                .map_or(why.as_str(), |(h, _)| h);
                            format!(
                                "{head} It is {whose} preview, not this session's: do not resolve it; a person resolves it with `staged review`. Make this change again once it is resolved: a new change is always computed against the file on disk."
                            )
                        }
                        _ => why,
                    };
                    return Err(StoreError::Refused(why));
                }
            }
            let session = self.scope().acting;
            let (id, seq, reserved) =
                insert_pending(&tx, &source, &label, &encoded, session, crate::ids::boot_id())
                    .map_err(|err| self.err(err))?;
            let len = pending_len(&tx).map_err(|err| self.err(err))?;
            if payloadless {
                lock(&self.live).insert(seq, Arc::clone(&action));
            }
            // A preview whose id a reservation holds may be lost, never handed out again.
            let committed = if reserved { self.losable(|| tx.commit()) } else { tx.commit() };
            if let Err(err) = committed {
                lock(&self.live).remove(&seq);
                return Err(self.err(err));
            }
            (id, len)
        };
        self.emit(StoreEvent::Pushed { id: id.clone(), label, len });
        Ok(id)
    }

    fn entry(&self, row: Row) -> PendingEntry {
        let live = if row.payloadless { lock(&self.live).get(&row.seq).cloned() } else { None };
        let action = match (&row.malformed, live) {
            (Some(why), _) => Rehydrators::unavailable(&row.stored, why.clone()),
            (None, Some(action)) => action,
            (None, None) if row.payloadless => Rehydrators::unavailable(
                &row.stored,
                format!(
                    "`{}` staged it without a replayable payload, so only the process that staged it could apply it",
                    row.stored.source_tool_name
                ),
            ),
            (None, None) => self.rehydrators.rehydrate(&row.stored),
        };
        PendingEntry { id: row.stored.id.clone(), created_at: row.stored.created_at, action }
    }

    fn head_row(&self) -> Result<Option<Row>, StoreError> {
        let seen = self.scope().condition();
        let conn = lock(&self.conn);
        conn.query_row(
            &format!(
                "SELECT {ROW_COLUMNS} FROM pending WHERE {seen} ORDER BY position DESC LIMIT 1"
            ),
            [],
            read_row,
        )
        .optional()
        .map_err(|err| self.err(err))
    }

    pub(crate) fn emit(&self, event: StoreEvent) {
        self.listeners.emit(&event);
    }

    fn count(&self) -> Result<usize, StoreError> {
        let seen = self.scope().condition();
        let conn = lock(&self.conn);
        let n: i64 = conn
            .query_row(&format!("SELECT COUNT(*) FROM pending WHERE {seen}"), [], |row| row.get(0))
            .map_err(|err| self.err(err))?;
        Ok(usize::try_from(n).unwrap_or_default())
    }

    /// Claims the head, retrying when another process changes the head in between.
    fn claim_top(&self) -> Result<Option<(Row, ClaimLock)>, StoreError> {
        for _ in 0..CLAIM_ATTEMPTS {
            let Some(row) = self.head_row()? else { return Ok(None) };
            let claim = try_claim(&self.claims_dir, &self.claims_path, row.seq)
                .map_err(|err| self.lock_err(row.seq, err))?;
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
        Err(StoreError::backend(
            "the pending stack kept changing while claiming its head; try again",
        ))
    }

    pub(crate) fn claim_lock<'c>(&self, claim: &'c Claim) -> Result<&'c ClaimLock, StoreError> {
        claim
            .token()
            .downcast_ref::<ClaimLock>()
            .filter(|held| held.dir == self.claims_path)
            .ok_or_else(|| StoreError::UnknownClaim { id: claim.entry().id.clone() })
    }

    fn delete(&self, seq: i64) -> Result<Option<(PendingId, usize)>, StoreError> {
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        let id: Option<String> = tx
            .query_row("SELECT id FROM pending WHERE seq = ?1", [seq], |row| row.get(0))
            .optional()
            .map_err(|err| self.err(err))?;
        let Some(id) = id else { return Ok(None) };
        tx.execute("DELETE FROM pending WHERE seq = ?1", [seq]).map_err(|err| self.err(err))?;
        lock(&self.live).remove(&seq);
        let len: i64 = tx
            .query_row("SELECT COUNT(*) FROM pending", [], |row| row.get(0))
            .map_err(|err| self.err(err))?;
        tx.commit().map_err(|err| self.err(err))?;
        Ok(Some((PendingId::from_string(id), usize::try_from(len).unwrap_or_default())))
    }

    /// Moves the claimed entry to the top; `None` when it is no longer pending.
    fn requeue(&self, claim: &Claim) -> Result<Option<usize>, StoreError> {
        let seq = self.claim_lock(claim)?.seq;
        let mut conn = lock(&self.conn);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| self.err(err))?;
        let n = tx
            .execute(
                "UPDATE pending SET position = (SELECT MAX(position) + 1 FROM pending) WHERE seq = ?1",
                [seq],
            )
            .map_err(|err| self.err(err))?;
        if n == 0 {
            return Ok(None);
        }
        let len: i64 = tx
            .query_row("SELECT COUNT(*) FROM pending", [], |row| row.get(0))
            .map_err(|err| self.err(err))?;
        tx.commit().map_err(|err| self.err(err))?;
        Ok(Some(usize::try_from(len).unwrap_or_default()))
    }
}

impl Drop for SqliteStore {
    /// Syncs what is still deferred, and resets a long WAL (`SqliteStore::reset_long_wal`).
    fn drop(&mut self) {
        let _ = self.sync_deferred();
        self.reset_long_wal();
    }
}

impl SqliteStore {
    /// Checkpoints the WAL and truncates it when it is long (a checkpoint's worth of pages),
    /// as this store closes. The WAL outlives its connections (`schema::init`), and a process
    /// that opens the database while no other has it open reads every frame of it again and
    /// counts none as checkpointed: a long WAL left behind costs each later process its reading,
    /// and the checkpoint of it all over again at its first commit, until a process that
    /// commits twice starts the WAL over. Truncated, it costs them nothing. Waits for other
    /// processes' readers only briefly: when they hold it, the next store to close tries again.
    fn reset_long_wal(&self) {
        let long = std::fs::symlink_metadata(self.state_dir.join(format!("{DB_FILE_NAME}-wal")))
            .is_ok_and(|meta| meta.is_file() && meta.len() >= schema::WAL_SIZE_LIMIT_BYTES);
        if !long {
            return;
        }
        let conn = lock(&self.conn);
        if conn.busy_timeout(schema::RESET_WAIT).is_ok() {
            let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    }
}

impl PendingActionStore for SqliteStore {
    fn push(&self, action: Arc<dyn PendingAction>) -> Result<PendingId, StoreError> {
        self.push_checked(action, None)
    }

    fn push_unless(
        &self,
        action: Arc<dyn PendingAction>,
        refuse: &PushCheck<'_>,
    ) -> Result<PendingId, StoreError> {
        self.push_checked(action, Some(refuse))
    }

    fn peek(&self) -> Result<Option<PendingEntry>, StoreError> {
        Ok(self.head_row()?.map(|row| self.entry(row)))
    }

    fn pop(&self) -> Result<Option<PendingEntry>, StoreError> {
        let Some((row, held)) = self.claim_top()? else { return Ok(None) };
        let removed = self.delete(row.seq)?;
        let _ = self.claims_dir.remove_file(lock_name(row.seq));
        drop(held);
        let Some((id, len)) = removed else { return Ok(None) };
        self.emit(StoreEvent::Removed { id, len });
        Ok(Some(self.entry(row)))
    }

    fn len(&self) -> Result<usize, StoreError> {
        self.count()
    }

    fn list(&self) -> Result<Vec<PendingEntry>, StoreError> {
        let seen = self.scope().condition();
        let rows = {
            let conn = lock(&self.conn);
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT {ROW_COLUMNS} FROM pending WHERE {seen} ORDER BY position DESC"
                ))
                .map_err(|err| self.err(err))?;
            stmt.query_map([], read_row)
                .map_err(|err| self.err(err))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|err| self.err(err))?
        };
        Ok(rows.into_iter().map(|row| self.entry(row)).collect())
    }

    fn subscribe(&self, listener: StoreListener) -> Subscription {
        self.listeners.subscribe(listener)
    }

    fn claim_head(&self) -> Result<Option<Claim>, StoreError> {
        Ok(self.claim_top()?.map(|(row, held)| Claim::new(self.entry(row), Arc::new(held))))
    }

    fn complete(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        let seq = self.claim_lock(&claim)?.seq;
        let removed = match &record {
            Some(record) => self.settle_logged(&claim, record, false)?,
            None => self.delete(seq)?.map(|(_, len)| len),
        };
        let Some(len) = removed else {
            return Err(StoreError::UnknownClaim { id: claim.entry().id.clone() });
        };
        let _ = self.claims_dir.remove_file(lock_name(seq));
        let id = claim.entry().id.clone();
        drop(claim);
        self.emit(StoreEvent::Removed { id, len });
        Ok(())
    }

    fn release(&self, claim: Claim, record: Option<LogRecord>) -> Result<(), StoreError> {
        let requeued = match &record {
            Some(record) => self.settle_logged(&claim, record, true)?,
            None => self.requeue(&claim)?,
        };
        let Some(len) = requeued else {
            return Err(StoreError::UnknownClaim { id: claim.entry().id.clone() });
        };
        let id = claim.entry().id.clone();
        drop(claim);
        self.emit(StoreEvent::Requeued { id, len });
        Ok(())
    }

    /// The entries, newest first, read without their details and payloads (which can hold a
    /// big diff each): what a listing shows.
    fn summaries(&self) -> Result<Vec<PendingSummary>, StoreError> {
        let seen = self.scope().condition();
        let conn = lock(&self.conn);
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM pending WHERE {seen} ORDER BY position DESC"
            ))
            .map_err(|err| self.err(err))?;
        stmt.query_map([], read_summary)
            .map_err(|err| self.err(err))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| self.err(err))
    }

    /// The head, read without its details and payload: what a command shows of the stack
    /// after it changed it.
    fn head_summary(&self) -> Result<Option<PendingSummary>, StoreError> {
        let seen = self.scope().condition();
        let conn = lock(&self.conn);
        conn.query_row(
            &format!(
                "SELECT {SUMMARY_COLUMNS} FROM pending WHERE {seen} ORDER BY position DESC LIMIT 1"
            ),
            [],
            read_summary,
        )
        .optional()
        .map_err(|err| self.err(err))
    }

    fn log(&self) -> Option<&dyn ResolveLog> {
        Some(self)
    }

    fn log_record(&self, record: LogRecord) -> Result<(), StoreError> {
        self.insert_logged(&record)
    }

    fn prepare_logged(
        &self,
        key: &str,
        record: Option<LogRecord>,
        remainder: Option<Arc<dyn PendingAction>>,
    ) -> Result<(), StoreError> {
        self.prepare_rows(key, record.as_ref(), remainder.as_deref())
    }

    fn finish_logged(
        &self,
        claim: Option<Claim>,
        key: &str,
    ) -> Result<Option<PendingId>, StoreError> {
        self.finish_claimed(claim, key)
    }

    fn abandon_logged(&self, key: &str) -> Result<(), StoreError> {
        self.abandon_prepared(key)
    }

    fn clear_stale(&self) -> Result<usize, StoreError> {
        let Ok(names) = self.claims_dir.names() else { return Ok(0) };
        let mut n_cleared = 0;
        for name in names {
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
                .map_err(|err| self.err(err))?
            };
            if exists {
                continue;
            }
            // Only a lock nobody holds is stale; a live resolve finishing right now keeps its own.
            if let Ok(TryClaim::Held(held)) = try_claim(&self.claims_dir, &self.claims_path, seq)
                && self.claims_dir.remove_file(lock_name(seq)).is_ok()
            {
                drop(held);
                n_cleared += 1;
            }
        }
        Ok(n_cleared)
    }
}

fn refuse_dir(path: &Path, err: std::io::Error) -> StoreError {
    let why = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            "it is a symlink, and staged never follows one out of its own folder".to_owned()
        }
        Ok(meta) if !meta.is_dir() => "it is not a directory".to_owned(),
        _ => err.to_string(),
    };
    StoreError::backend_caused(format!("refusing the state folder {}: {why}", path.display()), err)
}

fn db_error(path: &Path, err: rusqlite::Error) -> StoreError {
    StoreError::backend_caused(format!("{}: {err}", path.display()), err)
}
