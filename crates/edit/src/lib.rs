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

#![deny(missing_docs)]

mod edit_tool;
mod error;
pub mod patch;
mod patch_tool;
mod stage;
mod text;
mod write_tool;

use std::sync::Arc;

use staged_core::PendingAction;
use staged_journal::{ChangeAction, Workspace};

pub use crate::{
    edit_tool::{EDIT_TOOL_NAME, EditItem, EditParams, EditTool},
    error::EditError,
    patch_tool::{APPLY_PATCH_TOOL_NAME, ApplyPatchParams, ApplyPatchTool},
    stage::PREVIEW_HEADER,
    write_tool::{WRITE_TOOL_NAME, WriteParams, WriteTool},
};

/// The tools that stage text previews, by name.
pub const TEXT_TOOL_NAMES: [&str; 3] = [EDIT_TOOL_NAME, WRITE_TOOL_NAME, APPLY_PATCH_TOOL_NAME];

/// Rebuilds a stored preview of one of [`TEXT_TOOL_NAMES`] in `workspace`.
///
/// # Errors
/// Why the payload cannot be replayed here.
pub fn rehydrate(
    workspace: &Workspace,
    source: &str,
    payload: &serde_json::Value,
) -> Result<Arc<dyn PendingAction>, String> {
    ChangeAction::from_payload(workspace.clone(), source, payload)
        .map(|action| Arc::new(action) as Arc<dyn PendingAction>)
        .map_err(|err| err.to_string())
}

/// The JSON Schema of `T`, inlined (no `$defs`), as tool parameters are declared.
pub(crate) fn schema_of<T: schemars::JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.remove("description");
    }
    drop_null_defaults(&mut schema);
    schema
}

/// Removes `"default": null` (what an optional field's default says) everywhere in `schema`.
fn drop_null_defaults(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(object) => {
            if object.get("default").is_some_and(serde_json::Value::is_null) {
                object.remove("default");
            }
            object.values_mut().for_each(drop_null_defaults);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_null_defaults),
        _ => {}
    }
}
