//! OpenAI Responses: the request body (stateless, `store: false`, reasoning items echoed as
//! they arrived) and the event stream, read from the `output_item.done` events.

use serde_json::{Map, Value, json};
use staged_core::CancelToken;
use staged_protocol::WireFormat;

use crate::{
    AssistantMessage, AssistantPart, Message, ModelClient, ModelError, ModelRequest,
    ProviderConfig, ReminderRole, StreamDelta, ToolCall,
    http::Http,
    providers::{effective_choice, event_json, str_field},
};

/// A client for the Responses API.
#[derive(Debug)]
pub(crate) struct ResponsesClient {
    config: ProviderConfig,
    model: String,
    http: Http,
}

impl ResponsesClient {
    pub(crate) fn new(config: ProviderConfig, model: String, http: Http) -> Self {
        Self { config, model, http }
    }
}

/// The request body for `request`.
pub fn responses_body(config: &ProviderConfig, model: &str, request: ModelRequest<'_>) -> Value {
    let mut body: Map<String, Value> = config.body.clone();
    body.insert("model".into(), json!(model));
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    if body.contains_key("reasoning") {
        // Without the store, reasoning can only be carried over encrypted.
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if !request.system.is_empty() {
        body.insert("instructions".into(), json!(request.system));
    }
    let reminder_role = match config.reminder_role {
        ReminderRole::Developer => "developer",
        ReminderRole::System => "system",
    };
    let mut input = Vec::with_capacity(request.messages.len());
    for message in request.messages {
        match message {
            Message::User { text } => input.push(text_item("user", "input_text", text)),
            Message::Reminder { text } => input.push(text_item(reminder_role, "input_text", text)),
            Message::Assistant(reply) => {
                for part in &reply.parts {
                    match part {
                        AssistantPart::Text { text } if !text.is_empty() => {
                            input.push(text_item("assistant", "output_text", text));
                        }
                        AssistantPart::ToolCall(call) => input.push(json!({
                            "type": "function_call",
                            "call_id": call.id,
                            "name": call.name,
                            "arguments": call.arguments,
                        })),
                        AssistantPart::Opaque { item } => input.push(item.clone()),
                        AssistantPart::Text { .. }
                        | AssistantPart::Thinking { .. }
                        | AssistantPart::RedactedThinking { .. } => {}
                    }
                }
            }
            Message::Tool(tool) => input.push(json!({
                "type": "function_call_output",
                "call_id": tool.call_id,
                "output": tool.result.text_content(),
            })),
        }
    }
    body.insert("input".into(), Value::Array(input));
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters, "strict": false}))
        .collect();
    body.insert("tools".into(), Value::Array(tools));
    if let Some(choice) = effective_choice(config, request.tool_choice) {
        body.insert("tool_choice".into(), choice.to_wire(WireFormat::OpenaiResponses));
    }
    Value::Object(body)
}

fn text_item(role: &str, kind: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})
}

#[async_trait::async_trait]
impl ModelClient for ResponsesClient {
    fn describe(&self) -> String {
        format!("{}/{}", self.config.name, self.model)
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        on_delta: &mut (dyn for<'d> FnMut(StreamDelta<'d>) + Send),
        cancel: &CancelToken,
    ) -> Result<AssistantMessage, ModelError> {
        let body = responses_body(&self.config, &self.model, request);
        let mut stream = self.http.post_stream(&body, cancel).await?;
        let mut parts = Vec::new();
        let stop_reason;
        loop {
            let Some(event) = stream.next(cancel).await? else {
                return Err(stream.malformed("the stream ended before `response.completed`"));
            };
            if event.data.trim().is_empty() || event.data.trim() == "[DONE]" {
                continue;
            }
            let data = event_json(&stream, &event)?;
            match str_field(&data, "type") {
                "response.output_text.delta" => {
                    on_delta(StreamDelta::Text(str_field(&data, "delta")))
                }
                "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                    on_delta(StreamDelta::Thinking(str_field(&data, "delta")));
                }
                "response.output_item.done" => {
                    let item = &data["item"];
                    match str_field(item, "type") {
                        "message" => {
                            let text: String = item["content"]
                                .as_array()
                                .map(Vec::as_slice)
                                .unwrap_or_default()
                                .iter()
                                .filter(|c| c["type"] == "output_text")
                                .map(|c| str_field(c, "text"))
                                .collect();
                            parts.push(AssistantPart::Text { text });
                        }
                        "function_call" => parts.push(AssistantPart::ToolCall(ToolCall {
                            id: str_field(item, "call_id").to_owned(),
                            name: str_field(item, "name").to_owned(),
                            arguments: str_field(item, "arguments").to_owned(),
                        })),
                        _ => parts.push(AssistantPart::Opaque { item: item.clone() }),
                    }
                }
                "response.completed" | "response.incomplete" => {
                    stop_reason = data["response"]["status"].as_str().map(str::to_owned);
                    break;
                }
                "response.failed" => {
                    let message = data["response"]["error"]["message"]
                        .as_str()
                        .unwrap_or(&event.data)
                        .to_owned();
                    return Err(ModelError::Provider {
                        provider: stream.provider().to_owned(),
                        message,
                    });
                }
                "error" => {
                    let message = data["message"].as_str().unwrap_or(&event.data).to_owned();
                    return Err(ModelError::Provider {
                        provider: stream.provider().to_owned(),
                        message,
                    });
                }
                _ => {}
            }
        }
        Ok(AssistantMessage { parts, stop_reason })
    }
}
