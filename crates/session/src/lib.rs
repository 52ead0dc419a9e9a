//! Agent sessions: what one session changed in the workspace, as one diff composed from its own
//! log entries, and the revert of any hunks of it on the files as they are now.
//!
//! [`net`] reads one file's history (the steps of every writer) and finds the spans of the
//! current text that the session wrote, and what was there before it: the session's net change,
//! never another writer's.

#![deny(missing_docs)]

pub mod net;

pub use crate::net::{Author, NetChange, NetError, Origin, Region, RegionState, Step, net_change};
