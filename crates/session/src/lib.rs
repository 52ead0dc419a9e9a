//! Agent sessions: what one session changed in the workspace, as one diff composed from its own
//! log entries, and the revert of any hunks of it on the files as they are now.
//!
//! [`net`] reads one file's history (the steps of every writer) and finds the spans of the
//! current text that the session wrote, and what was there before it: the session's net change,
//! never another writer's. [`hunks`] draws it as a diff with numbered hunks, each with an
//! identity that a review state belongs to, and works out the edits that revert chosen hunks.
//!
//! # Library API
//!
//! Besides what the CLI and the hooks call, a Rust user reads a file's history
//! (`file_histories`: a `FileHistory` of `LoggedChange`s, each with its `Texts`, its `Author`
//! and its `Origin`; a `HistoryError`), the net change of a session in it (`net_change`, a
//! `NetChange`; `regions`, its `Region`s; a `NetError`, or a `Misfit` of `FileDiff`), the
//! review state of a hunk (`RegionState`; a `ReviewError`), the session's files (a
//! `SessionError`) and reverts hunks (`revert_edits`; a `RevertError`).

#![deny(missing_docs)]

pub mod files;
mod folders;
pub mod history;
pub mod hunks;
mod kept;
pub mod net;
pub mod process;
pub mod review;

pub use crate::{
    files::{FileKind, SessionError, SessionFile, session_files},
    history::{FileHistory, HistoryError, LoggedChange, Texts, file_histories},
    hunks::{FileDiff, Hunk, RevertError, file_diff, origin_text, revert_edits},
    kept::{by_snapshot, prune_kept},
    net::{Author, NetChange, NetError, Origin, Region, RegionState, Step, net_change},
    review::{
        Pick, REVERT_SOURCE, Review, ReviewError, SessionUndo, SessionWhole, kept_reverts,
        revert_ops, with_kept,
    },
};
