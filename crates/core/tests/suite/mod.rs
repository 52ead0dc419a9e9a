//! Test modules; `harness` holds the shared fixtures.

mod harness;
mod log;
mod model_texts;
mod resolve;
mod store;
mod tools;
