//! `ModelClient`: the one thing the loop knows about a model. Providers know HTTP, not tools;
//! the loop knows tools, not HTTP.

use staged_core::CancelToken;
use staged_protocol::ToolChoice;

use crate::{AssistantMessage, Message, ModelError};

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// The model-facing description.
    pub description: String,
    /// The JSON Schema of the parameters.
    pub parameters: serde_json::Value,
}

/// One model call.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The system prompt.
    pub system: &'a str,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The tools, `resolve` last.
    pub tools: &'a [ToolSpec],
    /// The `tool_choice` to send; `None` sends none (the provider's default).
    pub tool_choice: Option<&'a ToolChoice>,
}

/// A piece of the reply as it streams in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamDelta<'a> {
    /// Visible text.
    Text(&'a str),
    /// Thinking or reasoning summary text.
    Thinking(&'a str),
}

/// A model behind some wire format.
#[async_trait::async_trait]
pub trait ModelClient: Send + Sync {
    /// A short name for messages and transcripts, e.g. `anthropic/claude-sonnet-4-5`.
    fn describe(&self) -> String;

    /// Sends `request` and streams the reply: `on_delta` sees text as it arrives, and the
    /// whole reply is returned at the end. `cancel` stops the request in flight.
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        on_delta: &mut (dyn for<'d> FnMut(StreamDelta<'d>) + Send),
        cancel: &CancelToken,
    ) -> Result<AssistantMessage, ModelError>;
}
