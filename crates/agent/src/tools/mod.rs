//! The model's own read-only tools (`read`, `find`) and plan mode's `write`, which writes only
//! plan files. There is no shell: every change the model makes goes through a preview.

mod find;
mod read;
mod write_plan;

pub use self::{find::FindTool, read::ReadTool, write_plan::WritePlanTool};

use staged_core::ToolError;

/// Refuses arguments with a member not in `known`, as a schema with `additionalProperties:
/// false` promises (and as the tools whose arguments are serde types refuse them):
/// ``Invalid arguments: unknown field `x`, expected one of `path`, `offset`, `limit` ``.
fn refuse_unknown(args: &serde_json::Value, known: &[&str]) -> Result<(), ToolError> {
    let Some(unknown) =
        args.as_object().and_then(|o| o.keys().find(|k| !known.contains(&k.as_str())))
    else {
        return Ok(());
    };
    let expected: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
    Err(ToolError::new(format!(
        "Invalid arguments: unknown field `{unknown}`, expected one of {}",
        expected.join(", ")
    )))
}

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
