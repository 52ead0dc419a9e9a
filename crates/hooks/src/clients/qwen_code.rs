//! Qwen Code's codec. Its hooks take Claude Code's format (`.qwen/settings.json` `hooks`,
//! the same event fields and the same answers): a deny is
//! `hookSpecificOutput.permissionDecision: "deny"`, a Stop that holds the turn
//! `{"decision": "block", "reason": ...}`. Its edit tools are `write_file` (`file_path`,
//! `content`) and `edit` (`file_path`, `old_string`, `new_string`, `replace_all`), which are
//! Claude Code's Write and Edit by other names; `notebook_edit` edits a notebook's cells.
//! Its `permission_mode` is its approval mode (`plan`, `default`, `auto-edit`, `auto`,
//! `yolo`; a `Stop` writes `auto_edit`). A `PostToolUse` carries the file as it was before
//! the edit in `tool_response.returnDisplay` (`filePath`, `originalContent`, null for a new
//! file), which the codec moves to Claude Code's `filePath` and `originalFile`.
//!
//! Measured with Qwen Code 0.24.4: a hook that exits 1, or a command that is not there, lets
//! the edit through (exit 2 blocks); MCP tools are hidden until the model calls `tool_search`.

use serde_json::Value;

use crate::{
    clients::{EditResponse, ToolEdit, claude_code, wire::to_json},
    event::HookEvent,
};

/// The client's name for people.
pub(crate) const DISPLAY: &str = "Qwen Code";

/// What its edit is called in a deny text.
pub(crate) const WHAT: &str = "edit";

/// How its model calls `resolve`: the staged MCP server's tools are loaded by `tool_search`.
pub(crate) const RESOLVE_TOOL: &str =
    "mcp__staged__resolve (load it with tool_search if it is not among your tools yet)";

/// Reads one event (Claude Code's format), with a `PostToolUse`'s `tool_response` in Claude
/// Code's shape.
pub(crate) fn parse(input: &[u8]) -> Result<HookEvent, String> {
    let mut event = claude_code::parse(input)?;
    if let Some(display) = event.tool_response.as_ref().and_then(|r| r.get("returnDisplay"))
        && let Some(path) = display.get("filePath").and_then(Value::as_str)
    {
        let original = display.get("originalContent").and_then(Value::as_str).unwrap_or_default();
        event.tool_response =
            Some(to_json(EditResponse { file_path: path, original_file: original })?);
    }
    Ok(event)
}

/// `edit` replaces, `write_file` writes, `notebook_edit` is a notebook edit.
pub(crate) fn edit(event: &HookEvent) -> Option<ToolEdit> {
    match event.tool_name.as_deref()? {
        "edit" => Some(ToolEdit::Replace),
        "write_file" => Some(ToolEdit::Write),
        "notebook_edit" => Some(ToolEdit::Notebook),
        _ => None,
    }
}
