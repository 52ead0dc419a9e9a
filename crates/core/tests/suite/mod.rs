//! Test modules; `harness` holds the shared fixtures.

mod harness;
mod model_texts;
mod resolve;
mod store;
mod tools;
