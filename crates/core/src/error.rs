//! Errors a tool or a pending action reports, and the model-facing text they carry.

use staged_protocol::ToolResult;

/// What kind of failure a [`ToolError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolErrorKind {
    /// The call failed; the message says why.
    Failed,
    /// The call was cancelled; the message is `Aborted: <reason>`.
    Aborted,
}

/// A failed tool call. Its message is exactly what the model sees.
///
/// At the edge (the agent loop, the MCP server, the CLI) it becomes an error
/// [`ToolResult`] through [`ToolError::to_result`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    message: String,
    kind: ToolErrorKind,
    details: Option<serde_json::Value>,
}

impl ToolError {
    /// A failure with the given model-facing message.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), kind: ToolErrorKind::Failed, details: None }
    }

    /// A cancellation: `Aborted: <reason>`.
    pub fn aborted(reason: &str) -> Self {
        Self { message: format!("Aborted: {reason}"), kind: ToolErrorKind::Aborted, details: None }
    }

    /// The same error with structured details for renderers.
    #[must_use]
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The model-facing message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Failure or cancellation.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// Details attached by the tool, if any.
    pub fn details(&self) -> Option<&serde_json::Value> {
        self.details.as_ref()
    }

    /// The error result the model sees: the message as text, `isError: true`, and the details
    /// (an empty object when there are none).
    pub fn to_result(&self) -> ToolResult {
        ToolResult::error(self.message.clone()).with_details(
            self.details
                .clone()
                .unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new())),
        )
    }
}

/// Why a pending action's `apply` or `reject` did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// A model-facing error; `resolve` passes it through unchanged.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// The action saw the cancel signal and stopped before changing anything.
    #[error("cancelled before anything was changed")]
    Cancelled,
    /// Any other failure; `resolve` reports it as `Apply failed: <message>`.
    #[error("{0}")]
    Other(String),
}

impl ActionError {
    /// Any other failure, from its message.
    pub fn other(message: impl std::fmt::Display) -> Self {
        ActionError::Other(message.to_string())
    }
}

impl From<std::io::Error> for ActionError {
    fn from(err: std::io::Error) -> Self {
        ActionError::Other(err.to_string())
    }
}
