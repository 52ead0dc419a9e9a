//! The model's own read-only tools (`read`, `find`) and plan mode's `write`, which writes only
//! plan files. There is no shell: every change the model makes goes through a preview.

mod find;
mod read;
mod write_plan;

pub use self::{find::FindTool, read::ReadTool, write_plan::WritePlanTool};

use staged_core::ToolError;

/// Reads an optional positive integer argument.
fn positive(args: &serde_json::Value, key: &str) -> Result<Option<usize>, ToolError> {
    match args.get(key) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(value) => match value.as_u64() {
            Some(n) if n >= 1 => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
            _ => Err(ToolError::new(format!("`{key}` must be a positive integer, not {value}"))),
        },
    }
}

/// Reads a required string argument.
fn required_str<'a>(args: &'a serde_json::Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| ToolError::new(format!("`{key}` is required and must be a string")))
}
