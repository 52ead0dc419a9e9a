//! The agent runtime's integration tests, in one binary: see `suite/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]

mod suite;
