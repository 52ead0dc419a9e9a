//! Integration tests of staged-core, one module per topic under `suite/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]

mod suite;
