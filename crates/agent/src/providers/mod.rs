//! The built-in wire formats and `connect`, which builds the client a provider configuration
//! asks for. Each module turns the neutral [`crate::ModelRequest`] into its request body (a
//! pure function, tested on its own) and its event stream back into an
//! [`crate::AssistantMessage`].

mod anthropic;
mod openai_chat;
mod openai_responses;

use std::sync::Arc;

use staged_protocol::ToolChoice;

use staged_protocol::WireFormat;

use crate::{ConfigError, ModelClient, ProviderConfig, http::Http};

pub use self::openai_responses::responses_body;
use self::{
    anthropic::AnthropicClient, openai_chat::ChatClient, openai_responses::ResponsesClient,
};

/// Builds the client for `config`. `api_key` is the value of `config.api_key_env`, read by
/// the caller; it is required when the provider names a variable.
///
/// # Errors
/// [`ConfigError::MissingApiKey`] naming the variable, or [`ConfigError::Invalid`] for a
/// missing model or an unusable header.
pub fn connect(
    config: &ProviderConfig,
    api_key: Option<&str>,
) -> Result<Arc<dyn ModelClient>, ConfigError> {
    let key = match (&config.api_key_env, api_key.filter(|k| !k.is_empty())) {
        (Some(variable), None) => {
            return Err(ConfigError::MissingApiKey {
                provider: config.name.clone(),
                variable: variable.clone(),
            });
        }
        (_, key) => key.map(str::to_owned),
    };
    let model = config.model.clone().ok_or_else(|| ConfigError::Invalid {
        name: config.name.clone(),
        message: "no model: pass --model, or set `model` in [providers.NAME] or [agent]".to_owned(),
    })?;
    let client: Arc<dyn ModelClient> = match config.wire {
        WireFormat::OpenaiResponses => {
            let auth = bearer(key.as_deref());
            Arc::new(ResponsesClient::new(config.clone(), model, Http::new(config, &auth)?))
        }
        WireFormat::OpenaiChat => {
            let auth = bearer(key.as_deref());
            Arc::new(ChatClient::new(config.clone(), model, Http::new(config, &auth)?))
        }
        WireFormat::AnthropicMessages => {
            let mut auth = vec![("anthropic-version", "2023-06-01".to_owned())];
            if let Some(key) = key {
                auth.push(("x-api-key", key));
            }
            Arc::new(AnthropicClient::new(config.clone(), model, Http::new(config, &auth)?))
        }
    };
    Ok(client)
}

fn bearer(key: Option<&str>) -> Vec<(&'static str, String)> {
    key.map(|key| vec![("authorization", format!("Bearer {key}"))]).unwrap_or_default()
}

/// The choice actually sent: a model configured without forced-choice support gets `auto`
/// instead of a forced choice.
pub(crate) fn effective_choice(
    config: &ProviderConfig,
    choice: Option<&ToolChoice>,
) -> Option<ToolChoice> {
    let choice = choice?;
    if choice.forces_tool_use() && !config.forced_tool_choice {
        return Some(ToolChoice::Auto);
    }
    Some(choice.clone())
}

/// A request's typed part (a turn, a tool) as JSON, to sit in the body beside the
/// configuration's own keys. These shapes hold strings, numbers and JSON values under field
/// names, which always serialize; should one ever fail, the part is `null` and the provider's
/// reply names the field it rejects.
pub(crate) fn wire(shape: impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(shape).unwrap_or_default()
}

/// Parses an event's JSON data, naming the event on failure.
pub(crate) fn event_json(
    stream: &crate::http::SseStream,
    event: &eventsource_stream::Event,
) -> Result<serde_json::Value, crate::ModelError> {
    serde_json::from_str(&event.data).map_err(|err| {
        stream.malformed(format!("event `{}` is not JSON ({err}): {}", event.event, event.data))
    })
}

/// Text of a JSON string field, or "".
pub(crate) fn str_field<'a>(value: &'a serde_json::Value, key: &str) -> &'a str {
    value.get(key).and_then(serde_json::Value::as_str).unwrap_or_default()
}
