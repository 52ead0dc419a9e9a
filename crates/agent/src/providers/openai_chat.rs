//! OpenAI Chat Completions, which Ollama, LM Studio, vLLM and llama.cpp's server also speak:
//! the request body and the streamed chunks (tool calls assembled by index).

use serde_json::{Map, Value, json};
use staged_core::CancelToken;
use staged_protocol::WireFormat;

use crate::{
    AssistantMessage, AssistantPart, Message, ModelClient, ModelError, ModelRequest,
    ProviderConfig, ReminderRole, StreamDelta, ToolCall,
    http::Http,
    providers::{effective_choice, event_json, str_field},
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
    body.insert("model".into(), json!(model));
    body.insert("stream".into(), json!(true));
    let reminder_role = match config.reminder_role {
        ReminderRole::Developer => "developer",
        ReminderRole::System => "system",
    };
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in request.messages {
        match message {
            Message::User { text } => messages.push(json!({"role": "user", "content": text})),
            Message::Reminder { text } => {
                messages.push(json!({"role": reminder_role, "content": text}));
            }
            Message::Assistant(reply) => {
                let text = reply.text();
                let calls: Vec<Value> = reply
                    .tool_calls()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
                let mut item = json!({"role": "assistant", "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) }});
                if !calls.is_empty() {
                    item["tool_calls"] = Value::Array(calls);
                }
                messages.push(item);
            }
            Message::Tool(tool) => messages.push(json!({
                "role": "tool",
                "tool_call_id": tool.call_id,
                "content": tool.result.text_content(),
            })),
        }
    }
    body.insert("messages".into(), Value::Array(messages));
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
        .collect();
    body.insert("tools".into(), Value::Array(tools));
    if let Some(choice) = effective_choice(config, request.tool_choice) {
        body.insert("tool_choice".into(), choice.to_wire(WireFormat::OpenaiChat));
    }
    Value::Object(body)
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
