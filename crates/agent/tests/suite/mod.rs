//! Each file covers one topic of the agent runtime against the mock model server.

mod approval;
mod harness;
mod http;
mod model_texts;
mod plan;
mod requests;
mod tools;
