//! `WriteTool`: the `write` tool, a whole file created or replaced (Claude Code's Write),
//! staged as a preview. A new file's folders are created with it. A text holding a NUL byte
//! is refused, as a binary file is: staged previews text.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{CancelToken, Session, Tool, ToolError};
use staged_journal::{
    ChangeKind, ChangedFile, ConfinedRoot, DiffHeader, FileOp, LineIndex, NEW_FILE_MODE,
    file_diff_indexed, new_file_diff,
};
use staged_protocol::ToolResult;

use crate::{
    EditError,
    stage::{self, Staging},
    text::{
        Found, check_new_text, line_count, line_counts, line_edits, plural, read_text, resolve_path,
    },
};

/// The tool's name.
pub(crate) const WRITE_TOOL_NAME: &str = "write";

const DESCRIPTION: &str = "Create a file, or replace a whole file, as a preview: nothing is written until you call `resolve` with action \"apply\" (or \"discard\"). \
Missing folders are created with the file. To change part of a file, prefer `edit`. \
A file that already has a pending preview cannot be written again until that preview is resolved.";

/// `write`'s arguments.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteParams {
    /// The file: relative to the workspace root, or absolute inside it.
    #[serde(alias = "file_path")]
    pub path: String,
    /// Its whole new text.
    pub content: String,
}

/// The `write` tool.
#[derive(Debug, Clone)]
pub struct WriteTool {
    session: Arc<Session>,
    workspace: ConfinedRoot,
}

impl WriteTool {
    /// A tool staging its previews on `session`, confined to `workspace`.
    pub fn new(session: Arc<Session>, workspace: ConfinedRoot) -> WriteTool {
        WriteTool { session, workspace }
    }

    /// The JSON Schema of the arguments.
    pub fn json_schema() -> Value {
        staged_core::parameters_schema::<WriteParams>()
    }
}

#[async_trait::async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        WRITE_TOOL_NAME
    }

    fn label(&self) -> &str {
        "Write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        Self::json_schema()
    }

    fn deferrable(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, cancel: &CancelToken) -> Result<ToolResult, ToolError> {
        stage::execute::<WriteParams>(
            WRITE_TOOL_NAME,
            &self.session,
            &self.workspace,
            args,
            cancel,
            plan,
        )
        .await
    }
}

/// What writing `params` would do, checked against the disk.
///
/// # Errors
/// The [`EditError`] a model sees.
pub(crate) fn plan(workspace: &ConfinedRoot, params: &WriteParams) -> Result<Staging, EditError> {
    let rel = resolve_path(workspace, &params.path)?;
    let path = rel.display();
    if params.content.contains('\0') {
        return Err(EditError::BinaryText(path));
    }
    check_new_text(&path, "", &params.content)?;
    let content = params.content.clone();
    let lines = line_count(&content);
    match read_text(workspace, &rel)? {
        Found::Absent => {
            let diff = new_file_diff(&path, &content, NEW_FILE_MODE)
                .map_err(|err| EditError::Read(err.to_string()))?;
            let files = vec![ChangedFile {
                path: path.clone(),
                from: None,
                change: ChangeKind::Added,
                summary: format!("new file, {}", plural(lines, "line")),
                lines_added: lines,
                lines_removed: 0,
            }];
            Ok(Staging {
                source: WRITE_TOOL_NAME,
                ops: vec![FileOp::Create { path, content, executable: false }],
                files,
                diff,
            })
        }
        Found::Text { text, fingerprint } => {
            if text == content {
                return Err(EditError::NoChange(path).rewrite_as_same_content());
            }
            check_new_text(&path, &text, &content)?;
            let edits = line_edits(&text, &content);
            let diff = file_diff_indexed(
                &DiffHeader::Modify { path: &path },
                &LineIndex::new(&text),
                &edits,
            )
            .map_err(|err| EditError::Read(err.to_string()))?;
            let (added, removed) = line_counts(&edits);
            let files = vec![ChangedFile {
                path: path.clone(),
                from: None,
                change: ChangeKind::Updated,
                summary: format!("rewritten, {}", plural(lines, "line")),
                lines_added: added,
                lines_removed: removed,
            }];
            Ok(Staging {
                source: WRITE_TOOL_NAME,
                ops: vec![FileOp::Update { path, fingerprint, edits, executable: None }],
                files,
                diff,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_with_a_nul_byte_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("old.txt"), "a\n").unwrap();
        let workspace = ConfinedRoot::new(dir.path()).unwrap();
        for path in ["old.txt", "new.bin"] {
            let params = WriteParams { path: path.to_owned(), content: "a\0b\n".to_owned() };
            let err = plan(&workspace, &params).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "The new text of {path} holds a NUL byte, as a binary file does: staged previews changes to text files only"
                )
            );
        }
        let params = WriteParams { path: "old.txt".to_owned(), content: "b\n".to_owned() };
        assert!(plan(&workspace, &params).is_ok());
    }
}
