//! Wire types shared by every staged crate.
//!
//! Everything here is plain data that crosses a boundary (the model, an MCP client, a
//! `--json` consumer, the durable store). Field names are camelCase on the wire (the shapes are
//! in `docs/contract/`).

#![deny(missing_docs)]

mod details;
mod edit_error;
pub mod lenient;
mod resolve;
mod tool_choice;
mod tool_result;

pub use crate::{
    details::{PendingHead, PreviewView, StructuredResult, preview_diff},
    edit_error::EditErrorDetails,
    resolve::{ResolveAction, ResolveDetails, ResolveParams},
    tool_choice::{ToolChoice, WireFormat},
    tool_result::{ContentPart, ToolResult},
};

/// A free-form JSON object, as carried by `extra`.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
