//! [`ListedAstEdit`]: an `ast_edit` preview read from its stored payload without the engine,
//! for a process that lists previews and refuses edits over their files but never applies an
//! `ast_edit` preview (a client's hook, `staged-hook`). Nothing here reaches the parsers or
//! the grammars, so a binary that rebuilds stored previews only through it links neither.

use serde_json::Value;
use staged_core::{ActionError, ActionFile, CancelToken, PendingAction};
use staged_journal::ConfinedRoot;
use staged_protocol::{JsonObject, ToolResult};

use super::{AST_EDIT_TOOL_NAME, ExpectedFile, payload::AstEditPayload};
use crate::error::AstEditError;

/// A pending `ast_edit` preview as its payload records it: its label, details and files,
/// exactly as [`AstEditAction`](crate::AstEditAction) lists them, so it lists, is discarded,
/// and refuses a new preview over its files as the full action does. Its apply changes
/// nothing and says where it can run.
#[derive(Debug, Clone)]
pub struct ListedAstEdit {
    label: String,
    details: Value,
    files: Vec<ExpectedFile>,
    payload: Value,
}

impl ListedAstEdit {
    /// Reads a stored `ast_edit` payload staged in `workspace`, with the checks
    /// [`AstEditAction::from_payload`](crate::AstEditAction::from_payload) makes of what a
    /// listing shows (the workspace it was staged in, its expected files); its arguments are
    /// not checked, since they run only where the preview is applied.
    pub fn from_payload(
        workspace: &ConfinedRoot,
        payload: &Value,
    ) -> Result<ListedAstEdit, AstEditError> {
        let parsed = AstEditPayload::parse_in(workspace, payload)?;
        parsed.check_files(workspace)?;
        let label = parsed.label();
        Ok(ListedAstEdit {
            label,
            details: parsed.details.unwrap_or_else(|| Value::Object(JsonObject::new())),
            files: parsed.expected.files,
            payload: payload.clone(),
        })
    }
}

#[async_trait::async_trait]
impl PendingAction for ListedAstEdit {
    fn label(&self) -> &str {
        &self.label
    }

    fn source_tool_name(&self) -> &str {
        AST_EDIT_TOOL_NAME
    }

    fn details(&self) -> Option<&Value> {
        Some(&self.details)
    }

    fn applies_in_part(&self) -> bool {
        true
    }

    fn files(&self) -> Vec<ActionFile> {
        self.files.iter().map(ExpectedFile::listed).collect()
    }

    fn payload(&self) -> Option<Value> {
        Some(self.payload.clone())
    }

    async fn apply(
        &self,
        _reason: &str,
        _extra: Option<&JsonObject>,
        _cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        Err(ActionError::other(format!(
            "cannot apply `{}` here: this process reads ast_edit previews but has no ast tools to apply them; nothing was written: resolve it with `staged resolve` or staged's MCP server",
            self.label
        )))
    }
}
