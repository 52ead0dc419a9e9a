//! Text edits as staged previews: the `edit`, `write` and `apply_patch` tools.
//!
//! Each reads the files it would change, computes the change (byte edits of the text read, a
//! new file, a deleted or moved one), shows its diff, and stages it as one
//! [`ChangeAction`] on the session's stack. Nothing is written
//! until `resolve apply`, which checks that every file is still byte-identical to what the
//! preview read (and every file to create still absent) and writes all of it or none through
//! the journal. A file that a pending preview already changes cannot be staged again
//! ([`staged_core::Session::push_exclusive`]): a preview is always computed against the disk.
//!
//! - [`EditTool`] (`edit`): exact-string replacements, Claude Code's Edit and MultiEdit.
//! - [`WriteTool`] (`write`): a whole file created or replaced.
//! - [`ApplyPatchTool`] (`apply_patch`): a patch in Codex's format, or a unified diff
//!   ([`patch`]), adding, deleting, updating and moving files.
//! - [`FileChanges`]: a custom tool's files created, updated, deleted and moved, staged as the
//!   same [`ChangeAction`] under the tool's name.
//!
//! # Library API
//!
//! A Rust user also stages without a tool (`stage_edit`, `stage_write`, `stage_patch`, whose
//! errors are an `EditError`), and reads patches itself: `patch::parse`,
//! `patch::parse_unified` and `patch::apply_chunks`, on a patch's `Chunk`s of `PatchLine`s
//! (with their `Ending`).

#![deny(missing_docs)]

mod changes;
mod edit_tool;
mod error;
pub mod patch;
mod patch_tool;
mod stage;
mod text;
mod write_tool;

use std::sync::Arc;

use staged_core::PendingAction;
use staged_journal::{ChangeAction, ConfinedRoot};

pub use crate::{
    changes::FileChanges,
    edit_tool::{EditItem, EditParams, EditTool},
    error::EditError,
    patch_tool::{ApplyPatchParams, ApplyPatchTool},
    stage::PREVIEW_HEADER,
    write_tool::{WriteParams, WriteTool},
};
pub(crate) use crate::{
    edit_tool::EDIT_TOOL_NAME, patch_tool::APPLY_PATCH_TOOL_NAME, write_tool::WRITE_TOOL_NAME,
};

/// Stages `params` as the `edit` tool does, on this thread: the model-facing result, or the
/// error a model sees. For callers that are not a model's tool call (the client hooks).
///
/// # Errors
/// The [`EditError`] the tool would return.
pub fn stage_edit(
    session: &staged_core::Session,
    workspace: &ConfinedRoot,
    params: &EditParams,
) -> Result<staged_protocol::ToolResult, EditError> {
    edit_tool::plan(workspace, params)?.stage(session, workspace)
}

/// Stages `params` as the `write` tool does, on this thread (see [`stage_edit`]).
///
/// # Errors
/// The [`EditError`] the tool would return.
pub fn stage_write(
    session: &staged_core::Session,
    workspace: &ConfinedRoot,
    params: &WriteParams,
) -> Result<staged_protocol::ToolResult, EditError> {
    write_tool::plan(workspace, params)?.stage(session, workspace)
}

/// Stages the patch `input` as the `apply_patch` tool does, on this thread, with its relative
/// paths taken relative to `base` (a folder of the workspace; the root when `None`), as a
/// client that runs in a subfolder writes them.
///
/// # Errors
/// The [`EditError`] the tool would return.
pub fn stage_patch(
    session: &staged_core::Session,
    workspace: &ConfinedRoot,
    input: &str,
    base: Option<&staged_fs::RelPath>,
) -> Result<staged_protocol::ToolResult, EditError> {
    let mut parsed = patch::parse(input).map_err(EditError::InvalidPatch)?;
    if let Some(base) = base {
        parsed.rebase(base);
    }
    patch_tool::plan(workspace, &parsed)?.stage(session, workspace)
}

/// The edits that turn `old` into `new`, line by line (what `write` stages).
pub fn line_edits(old: &str, new: &str) -> Vec<staged_journal::Edit> {
    text::line_edits(old, new)
}

/// The tools that stage text previews, by name.
pub const TEXT_TOOL_NAMES: [&str; 3] = [EDIT_TOOL_NAME, WRITE_TOOL_NAME, APPLY_PATCH_TOOL_NAME];

/// Rebuilds a stored preview of one of [`TEXT_TOOL_NAMES`] in `workspace`.
///
/// # Errors
/// Why the payload cannot be replayed here.
pub fn rehydrate(
    workspace: &ConfinedRoot,
    source: &str,
    payload: &serde_json::Value,
) -> Result<Arc<dyn PendingAction>, String> {
    ChangeAction::from_payload(workspace.clone(), source, payload)
        .map(|action| Arc::new(action) as Arc<dyn PendingAction>)
        .map_err(|err| err.to_string())
}
