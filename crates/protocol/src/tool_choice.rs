//! Provider-neutral tool choices and their OpenAI and Anthropic wire shapes
//! (`docs/contract/agent-loop.md#forced-tool-choice`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

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

/// The provider APIs a [`ToolChoice`] can be mapped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolChoiceProvider {
    /// OpenAI Chat Completions (`tool_choice` with a nested `function`).
    OpenAiCompletions,
    /// OpenAI Responses (`tool_choice` with a flat `name`).
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
}

impl ToolChoice {
    /// A forced choice of the named tool.
    pub fn tool(name: impl Into<String>) -> Self {
        ToolChoice::Tool { name: name.into() }
    }

    /// The forced choice the gate emits when it escalates: `resolve`.
    pub fn force_resolve() -> Self {
        Self::tool("resolve")
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
    /// use staged_protocol::{ToolChoice, ToolChoiceProvider};
    /// let forced = ToolChoice::force_resolve();
    /// assert_eq!(
    ///     forced.to_wire(ToolChoiceProvider::Anthropic),
    ///     serde_json::json!({"type": "tool", "name": "resolve"})
    /// );
    /// assert_eq!(
    ///     forced.to_wire(ToolChoiceProvider::OpenAiCompletions),
    ///     serde_json::json!({"type": "function", "function": {"name": "resolve"}})
    /// );
    /// ```
    pub fn to_wire(&self, provider: ToolChoiceProvider) -> Value {
        match (self, provider) {
            // Anthropic takes every choice as an object.
            (ToolChoice::Auto, ToolChoiceProvider::Anthropic) => json!({"type": "auto"}),
            (ToolChoice::None, ToolChoiceProvider::Anthropic) => json!({"type": "none"}),
            (ToolChoice::Auto, _) => json!("auto"),
            (ToolChoice::None, _) => json!("none"),
            (ToolChoice::Required, ToolChoiceProvider::Anthropic) => json!({"type": "any"}),
            (
                ToolChoice::Required,
                ToolChoiceProvider::OpenAiCompletions | ToolChoiceProvider::OpenAiResponses,
            ) => json!("required"),
            (ToolChoice::Tool { name }, ToolChoiceProvider::Anthropic) => {
                json!({"type": "tool", "name": name})
            }
            (ToolChoice::Tool { name }, ToolChoiceProvider::OpenAiResponses) => {
                json!({"type": "function", "name": name})
            }
            (ToolChoice::Tool { name }, ToolChoiceProvider::OpenAiCompletions) => {
                json!({"type": "function", "function": {"name": name}})
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_every_choice_to_every_provider() {
        use ToolChoiceProvider::*;
        let cases = [
            (ToolChoice::Auto, Anthropic, json!({"type": "auto"})),
            (ToolChoice::None, Anthropic, json!({"type": "none"})),
            (ToolChoice::Auto, OpenAiCompletions, json!("auto")),
            (ToolChoice::None, OpenAiResponses, json!("none")),
            (ToolChoice::Required, Anthropic, json!({"type": "any"})),
            (ToolChoice::Required, OpenAiCompletions, json!("required")),
            (ToolChoice::Required, OpenAiResponses, json!("required")),
            (
                ToolChoice::tool("resolve"),
                OpenAiResponses,
                json!({"type": "function", "name": "resolve"}),
            ),
        ];
        for (choice, provider, expected) in cases {
            assert_eq!(choice.to_wire(provider), expected, "{choice:?} for {provider:?}");
        }
        assert!(ToolChoice::force_resolve().forces_tool_use());
        assert!(ToolChoice::Required.forces_tool_use());
        assert!(!ToolChoice::Auto.forces_tool_use());
    }
}
