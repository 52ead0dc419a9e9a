//! Provider-neutral tool choices and their OpenAI and Anthropic wire shapes
//! (`docs/contract/agent-loop.md#forced-tool-choice`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the model may or must call on its next turn.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call some tool ("any" for Anthropic, "required" for OpenAI).
    Required,
    /// The model must call exactly this tool.
    Tool {
        /// The tool's name.
        name: String,
    },
}

/// How a model provider is spoken to: the wire format of its API, as `staged.toml` names it
/// (`wire = "openai-responses"`), and how a [`ToolChoice`] is spelled on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WireFormat {
    /// OpenAI Responses (`POST {base_url}/responses`; `tool_choice` with a flat `name`).
    OpenaiResponses,
    /// OpenAI Chat Completions (`POST {base_url}/chat/completions`, `tool_choice` with a nested
    /// `function`); also Ollama, LM Studio, vLLM and llama.cpp's server.
    OpenaiChat,
    /// Anthropic Messages (`POST {base_url}/messages`).
    AnthropicMessages,
}

impl WireFormat {
    /// Every wire format.
    pub const ALL: [WireFormat; 3] =
        [WireFormat::OpenaiResponses, WireFormat::OpenaiChat, WireFormat::AnthropicMessages];

    /// The spelling used in `staged.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            WireFormat::OpenaiResponses => "openai-responses",
            WireFormat::OpenaiChat => "openai-chat",
            WireFormat::AnthropicMessages => "anthropic-messages",
        }
    }

    /// The path appended to the base URL, as in the official SDKs.
    pub fn endpoint(self) -> &'static str {
        match self {
            WireFormat::OpenaiResponses => "/responses",
            WireFormat::OpenaiChat => "/chat/completions",
            WireFormat::AnthropicMessages => "/messages",
        }
    }
}

impl ToolChoice {
    /// A forced choice of the named tool.
    pub fn tool(name: impl Into<String>) -> Self {
        ToolChoice::Tool { name: name.into() }
    }

    /// Whether this choice forces tool use (a named tool, or any tool).
    ///
    /// Anthropic refuses forced tool use while extended thinking is on: a request that forces
    /// a tool must drop `thinking` (the Anthropic client drops `thinking`, `context_management`
    /// and `output_config.effort`), and models without forced-choice support downgrade to
    /// `auto` (`docs/contract/agent-loop.md#forced-tool-choice`).
    /// Callers check this before sending a forced choice to such a model.
    pub fn forces_tool_use(&self) -> bool {
        matches!(self, ToolChoice::Required | ToolChoice::Tool { .. })
    }

    /// The `tool_choice` value for the given provider's request body.
    ///
    /// ```
    /// use staged_protocol::{ToolChoice, WireFormat};
    /// let forced = ToolChoice::tool("resolve");
    /// assert_eq!(
    ///     forced.to_wire(WireFormat::AnthropicMessages),
    ///     serde_json::json!({"type": "tool", "name": "resolve"})
    /// );
    /// assert_eq!(
    ///     forced.to_wire(WireFormat::OpenaiChat),
    ///     serde_json::json!({"type": "function", "function": {"name": "resolve"}})
    /// );
    /// ```
    pub fn to_wire(&self, provider: WireFormat) -> Value {
        let anthropic = provider == WireFormat::AnthropicMessages;
        let wire = match self {
            // Anthropic takes every choice as an object.
            ToolChoice::Auto if anthropic => Wire::Object(Tagged::Auto),
            ToolChoice::None if anthropic => Wire::Object(Tagged::None),
            ToolChoice::Required if anthropic => Wire::Object(Tagged::Any),
            ToolChoice::Auto => Wire::Mode("auto"),
            ToolChoice::None => Wire::Mode("none"),
            ToolChoice::Required => Wire::Mode("required"),
            ToolChoice::Tool { name } => Wire::Object(match provider {
                WireFormat::AnthropicMessages => Tagged::Tool { name },
                WireFormat::OpenaiResponses => {
                    Tagged::Function { name: Some(name), function: None }
                }
                WireFormat::OpenaiChat => {
                    Tagged::Function { name: None, function: Some(Named { name }) }
                }
            }),
        };
        // A string or an object of strings under field names: serializing it cannot fail.
        serde_json::to_value(wire).unwrap_or_default()
    }
}

/// A `tool_choice` on the wire: a bare mode (OpenAI's `"auto"`, `"none"`, `"required"`) or an
/// object tagged by `type`.
#[derive(Serialize)]
#[serde(untagged)]
enum Wire<'a> {
    Mode(&'static str),
    Object(Tagged<'a>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Tagged<'a> {
    Auto,
    None,
    Any,
    Tool {
        name: &'a str,
    },
    /// OpenAI's forced function: Responses names it flat, Chat Completions in `function`.
    Function {
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        function: Option<Named<'a>>,
    },
}

#[derive(Serialize)]
struct Named<'a> {
    name: &'a str,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn maps_every_choice_to_every_provider() {
        use WireFormat::*;
        let cases = [
            (ToolChoice::Auto, AnthropicMessages, json!({"type": "auto"})),
            (ToolChoice::None, AnthropicMessages, json!({"type": "none"})),
            (ToolChoice::Auto, OpenaiChat, json!("auto")),
            (ToolChoice::None, OpenaiResponses, json!("none")),
            (ToolChoice::Required, AnthropicMessages, json!({"type": "any"})),
            (ToolChoice::Required, OpenaiChat, json!("required")),
            (ToolChoice::Required, OpenaiResponses, json!("required")),
            (
                ToolChoice::tool("resolve"),
                OpenaiResponses,
                json!({"type": "function", "name": "resolve"}),
            ),
        ];
        for (choice, provider, expected) in cases {
            assert_eq!(choice.to_wire(provider), expected, "{choice:?} for {provider:?}");
        }
        assert!(ToolChoice::tool("resolve").forces_tool_use());
        assert!(ToolChoice::Required.forces_tool_use());
        assert!(!ToolChoice::Auto.forces_tool_use());
    }
}
