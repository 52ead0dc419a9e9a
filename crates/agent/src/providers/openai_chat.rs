//! OpenAI Chat Completions, which Ollama, LM Studio, vLLM and llama.cpp's server also speak:
//! the request body and the streamed chunks (tool calls assembled by index).

use serde::Serialize;
use serde_json::{Map, Value};
use staged_core::CancelToken;
use staged_protocol::WireFormat;

use crate::{
    AssistantMessage, AssistantPart, Message, ModelClient, ModelError, ModelRequest,
    ProviderConfig, ReminderRole, StreamDelta, ToolCall,
    http::Http,
    providers::{effective_choice, event_json, str_field, wire},
};

/// A client for Chat Completions.
#[derive(Debug)]
pub(crate) struct ChatClient {
    config: ProviderConfig,
    model: String,
    http: Http,
}

impl ChatClient {
    pub(crate) fn new(config: ProviderConfig, model: String, http: Http) -> Self {
        Self { config, model, http }
    }
}

/// The request body for `request`.
pub(crate) fn chat_body(config: &ProviderConfig, model: &str, request: ModelRequest<'_>) -> Value {
    let mut body: Map<String, Value> = config.body.clone();
    body.insert("model".into(), model.into());
    body.insert("stream".into(), true.into());
    let reminder_role = match config.reminder_role {
        ReminderRole::Developer => "developer",
        ReminderRole::System => "system",
    };
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(ChatMessage::text("system", request.system));
    }
    for message in request.messages {
        messages.push(match message {
            Message::User { text } => ChatMessage::text("user", text),
            Message::Reminder { text } => ChatMessage::text(reminder_role, text),
            Message::Assistant(reply) => {
                let text = reply.text();
                let calls: Vec<CallOut<'_>> = reply
                    .tool_calls()
                    .map(|call| CallOut {
                        id: &call.id,
                        kind: "function",
                        function: Function { name: &call.name, arguments: &call.arguments },
                    })
                    .collect();
                // Only the calls, no text: `content` is null.
                let content = (!text.is_empty() || calls.is_empty()).then_some(text);
                ChatMessage { role: "assistant", content, tool_calls: calls, tool_call_id: None }
            }
            Message::Tool(tool) => ChatMessage {
                role: "tool",
                content: Some(tool.result.text_content()),
                tool_calls: Vec::new(),
                tool_call_id: Some(&tool.call_id),
            },
        });
    }
    body.insert("messages".into(), wire(messages));
    let tools = request.tools.iter().map(|t| ToolOut {
        kind: "function",
        function: ToolFunction {
            name: &t.name,
            description: &t.description,
            parameters: &t.parameters,
        },
    });
    body.insert("tools".into(), wire(tools.collect::<Vec<_>>()));
    if let Some(choice) = effective_choice(config, request.tool_choice) {
        body.insert("tool_choice".into(), choice.to_wire(WireFormat::OpenaiChat));
    }
    Value::Object(body)
}

/// A message of the Chat Completions conversation.
#[derive(Serialize)]
struct ChatMessage<'a> {
    role: &'a str,
    content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<CallOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

impl<'a> ChatMessage<'a> {
    fn text(role: &'a str, text: &str) -> Self {
        Self { role, content: Some(text.to_owned()), tool_calls: Vec::new(), tool_call_id: None }
    }
}

/// A tool call of an assistant message, echoed back.
#[derive(Serialize)]
struct CallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: &'a str,
}

/// A tool as Chat Completions declares it.
#[derive(Serialize)]
struct ToolOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ToolFunction<'a>,
}

#[derive(Serialize)]
struct ToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[async_trait::async_trait]
impl ModelClient for ChatClient {
    fn describe(&self) -> String {
        format!("{}/{}", self.config.name, self.model)
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        on_delta: &mut (dyn for<'d> FnMut(StreamDelta<'d>) + Send),
        cancel: &CancelToken,
    ) -> Result<AssistantMessage, ModelError> {
        let body = chat_body(&self.config, &self.model, request);
        let mut stream = self.http.post_stream(&body, cancel).await?;
        let mut text = String::new();
        let mut calls: Vec<PartialCall> = Vec::new();
        let mut stop_reason: Option<String> = None;
        loop {
            let Some(event) = stream.next(cancel).await? else {
                if stop_reason.is_some() {
                    break;
                }
                return Err(stream.malformed("the stream ended before a finish_reason or [DONE]"));
            };
            let data = event.data.trim();
            if data.is_empty() {
                continue;
            }
            if data == "[DONE]" {
                break;
            }
            let chunk = event_json(&stream, &event)?;
            if let Some(error) = chunk.get("error") {
                let message =
                    error["message"].as_str().map_or_else(|| error.to_string(), str::to_owned);
                return Err(ModelError::Provider {
                    provider: stream.provider().to_owned(),
                    message,
                });
            }
            let Some(choice) = chunk["choices"].get(0) else { continue };
            let delta = &choice["delta"];
            if let Some(piece) = delta["content"].as_str().filter(|p| !p.is_empty()) {
                text.push_str(piece);
                on_delta(StreamDelta::Text(piece));
            }
            for key in ["reasoning_content", "reasoning"] {
                if let Some(piece) = delta[key].as_str().filter(|p| !p.is_empty()) {
                    on_delta(StreamDelta::Thinking(piece));
                }
            }
            if let Some(deltas) = delta["tool_calls"].as_array() {
                for call_delta in deltas {
                    let index = call_delta["index"]
                        .as_u64()
                        .map_or(calls.len().saturating_sub(1), |i| i as usize);
                    while calls.len() <= index {
                        calls.push(PartialCall::default());
                    }
                    let call = &mut calls[index];
                    call.id.push_str(str_field(call_delta, "id"));
                    call.name.push_str(str_field(&call_delta["function"], "name"));
                    call.arguments.push_str(str_field(&call_delta["function"], "arguments"));
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                stop_reason = Some(reason.to_owned());
            }
        }
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(AssistantPart::Text { text });
        }
        for (idx, call) in calls.into_iter().enumerate() {
            // Some local servers send no call ids; the pairing still needs one.
            let id = if call.id.is_empty() { format!("call_{idx}") } else { call.id };
            parts.push(AssistantPart::ToolCall(ToolCall {
                id,
                name: call.name,
                arguments: call.arguments,
            }));
        }
        Ok(AssistantMessage { parts, stop_reason })
    }
}
