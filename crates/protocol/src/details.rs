//! Shapes every front end reads the same way: a preview's diff in its details, and the object
//! a tool call prints (`staged --json`) or hands an MCP client (`structuredContent`).

use serde::{Deserialize, Serialize, ser::SerializeMap as _};
use serde_json::Value;

use crate::{
    ToolResult,
    lenient::{Text, Texts, view},
};

/// The members of a preview's details that a front end reads whichever tool staged it
/// (`ast_edit`, the text tools, a plugin that gave them): each as its type, or absent when it is
/// missing or of another type (see [`crate::lenient`]).
///
/// # Example
/// ```
/// use staged_protocol::PreviewView;
/// let details = serde_json::json!({"pendingId": "pending-action:edit:1", "notes": ["a", 2]});
/// let preview = PreviewView::of(&details);
/// assert_eq!(preview.pending_id.0, Some("pending-action:edit:1"));
/// assert_eq!((preview.diff.0, preview.notes.0), (None, vec!["a"]));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PreviewView<'a> {
    /// The staged preview's id.
    #[serde(borrow)]
    pub pending_id: Text<'a>,
    /// The preview's label.
    #[serde(borrow)]
    pub label: Text<'a>,
    /// The unified diff.
    #[serde(borrow)]
    pub diff: Text<'a>,
    /// The blocks a text shows after its tree (`ast_edit`'s notes).
    #[serde(borrow)]
    pub notes: Texts<'a>,
    /// The text's last line: what a cap left out and how to lift it.
    #[serde(borrow)]
    pub last_line: Text<'a>,
}

impl<'a> PreviewView<'a> {
    /// The view of `details`; every member absent when they are not an object.
    pub fn of(details: &'a Value) -> Self {
        view(details).unwrap_or_default()
    }
}

/// The unified diff a preview's details hold under `diff` (an `ast_edit` or `edit` preview, a
/// plugin's that gave one), if they hold one.
///
/// # Example
/// ```
/// use staged_protocol::preview_diff;
/// let details = serde_json::json!({"totalReplacements": 1, "diff": "--- a/x\n+++ b/x\n"});
/// assert_eq!(preview_diff(&details), Some("--- a/x\n+++ b/x\n"));
/// assert_eq!(preview_diff(&serde_json::json!({"diff": 1})), None);
/// ```
pub fn preview_diff(details: &Value) -> Option<&str> {
    PreviewView::of(details).diff.0
}

/// The object of a tool call's result as `staged --json` prints it and as MCP's
/// `structuredContent` carries it: what the model is told, and the stack's head.
///
/// It borrows its details, so that a big preview's (its whole diff) are serialized where they
/// are, not copied first.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        title = "staged tool result",
        description = "`structuredContent` of every tool result: what the model is told, and the stack's head."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct StructuredResult<'a> {
    /// The model-facing text: the same text as the text blocks, joined with newlines,
    /// ending with the resolve reminder while a preview waits for `resolve`.
    pub text: &'a str,
    /// Whether the tool reports an error (the same as the result's `isError`).
    pub is_error: bool,
    /// The tool's structured details (for `ast_edit`: the counts, the diff and `pendingId`;
    /// for `resolve`: the action, the reason and the source tool's details); `{}` when none.
    #[serde(serialize_with = "details_or_empty")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    pub details: Option<&'a Value>,
    /// The newest pending preview after the call (what `resolve` acts on next), or null.
    pub pending: Option<PendingHead<'a>>,
}

/// The head of the pending stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PendingHead<'a> {
    /// The preview's id, e.g. `pending-action:ast_edit:3`.
    pub id: &'a str,
    /// Its label, e.g. `AST Edit: 4 replacements in 3 files`.
    pub label: &'a str,
}

impl<'a> StructuredResult<'a> {
    /// The object for `result`, told the model as `text` (its text parts, and the resolve
    /// reminder when there is one), with the stack's `pending` head.
    pub fn new(result: &'a ToolResult, text: &'a str, pending: Option<PendingHead<'a>>) -> Self {
        Self { text, is_error: result.is_error, details: result.details.as_ref(), pending }
    }
}

/// Details, or `{}` when there are none.
fn details_or_empty<S: serde::Serializer>(
    details: &Option<&Value>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match details {
        Some(details) => details.serialize(serializer),
        None => serializer.serialize_map(Some(0))?.end(),
    }
}
