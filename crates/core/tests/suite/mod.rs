//! Test modules; `harness` holds the shared fixtures.

mod harness;
mod model_texts;
mod queue;
mod resolve;
mod resolve_reminder;
mod soft_requirement;
mod store;
mod tools;
