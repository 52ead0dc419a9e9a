//! The durable, cross-process `PendingActionStore`.
//!
//! [`SqliteStore`] keeps a workspace's pending stack in `<state>/staged.db` (SQLite, WAL), so a
//! preview staged by one process can be listed, applied or discarded by another. Each entry
//! stores its tool's replayable payload; the tool's [`Rehydrator`] turns it back into a live
//! action. Claims are OS file locks, so a process that dies mid-resolve never leaves its claim
//! behind.
//!
//! Library API besides what the workspace calls: `SqliteStore::retire_finished` (a host's
//! start-up recovery retires an entry whose apply it finished) and `SqliteStore::keep_texts`
//! (texts kept by their SHA-256, as the session history reads them).

#![deny(missing_docs)]

mod claim;
mod codec;
mod ids;
mod log;
mod named;
mod notices;
mod rehydrate;
mod rows;
mod schema;
mod sessions;
mod sqlite;
mod wal;

pub use crate::{
    named::Unnamed,
    notices::{NOTICE_FIELD, RecordNotice},
    rehydrate::{FallbackRehydrator, Rehydrator, Rehydrators, StoredAction},
    sessions::{SessionRow, SessionScope, parse_session_number},
    sqlite::SqliteStore,
};
