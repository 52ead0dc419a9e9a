//! The agent runtime's integration tests, in one binary: see `suite/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
