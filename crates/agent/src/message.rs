//! The provider-neutral conversation: what the loop sends and what each provider must see again.
//!
//! Every provider needs its own echoes: tool call ids pair each call with its result, Anthropic
//! thinking blocks go back with their signatures byte for byte, and OpenAI Responses reasoning
//! items go back as the opaque items they arrived as. The message model keeps all of them, so
//! a provider client can rebuild its wire history from it exactly.
//!
//! The messages, like the run's events and its configuration, are this crate's own formats
//! (transcripts keep them, `staged.toml` holds the configuration), so they derive serde here
//! rather than in `staged-protocol`, which holds the shapes other crates share.

use serde::{Deserialize, Serialize};
use staged_protocol::ToolResult;

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// The person's words: the task, or a refinement.
    User {
        /// The text.
        text: String,
    },
    /// A hidden runtime message such as the resolve reminder: a `developer`-role message on
    /// OpenAI, a user-turn text block on Anthropic.
    Reminder {
        /// The text.
        text: String,
    },
    /// What the model answered.
    Assistant(AssistantMessage),
    /// The result of one tool call, paired with it by `call_id`.
    Tool(ToolResultMessage),
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// A reminder message.
    pub fn reminder(text: impl Into<String>) -> Self {
        Message::Reminder { text: text.into() }
    }
}

/// The model's reply to one request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// Text, thinking, tool calls and provider items, in the order they arrived.
    pub parts: Vec<AssistantPart>,
    /// The provider's stop reason, when it gave one (`tool_use`, `stop`, `completed`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl AssistantMessage {
    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.parts.iter().filter_map(|part| match part {
            AssistantPart::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// All text parts joined.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|part| match part {
                AssistantPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// One part of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantPart {
    /// Visible text.
    Text {
        /// The text.
        text: String,
    },
    /// An Anthropic thinking block; echoed back unchanged, signature included.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature the provider attached.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// An Anthropic redacted thinking block; echoed back unchanged.
    RedactedThinking {
        /// The opaque data.
        data: String,
    },
    /// A call of one tool.
    ToolCall(ToolCall),
    /// A provider item the loop does not interpret (an OpenAI Responses reasoning item), echoed
    /// back as it arrived to the provider that sent it.
    Opaque {
        /// The item's JSON.
        item: serde_json::Value,
    },
}

/// A call of one tool, as the model made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id; the result carries it back.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments exactly as the model sent them (JSON text).
    pub arguments: String,
}

impl ToolCall {
    /// The arguments as JSON: an empty object when the model sent nothing, an error naming the
    /// problem when it sent something that is not a JSON object.
    pub(crate) fn parsed_arguments(&self) -> Result<serde_json::Value, String> {
        if self.arguments.trim().is_empty() {
            return Ok(serde_json::Value::Object(serde_json::Map::new()));
        }
        match serde_json::from_str::<serde_json::Value>(&self.arguments) {
            Ok(value @ serde_json::Value::Object(_)) => Ok(value),
            Ok(_) => Err(format!("the arguments of `{}` must be a JSON object", self.name)),
            Err(err) => Err(format!("the arguments of `{}` are not valid JSON: {err}", self.name)),
        }
    }
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The id of the call this answers.
    pub call_id: String,
    /// The called tool's name.
    pub tool_name: String,
    /// The result.
    pub result: ToolResult,
}
