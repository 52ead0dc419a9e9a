//! OpenAI Responses: the request body (stateless, `store: false`, reasoning items echoed as
//! they arrived) and the event stream, read from the `output_item.done` events.

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
    body.insert("model".into(), model.into());
    body.insert("stream".into(), true.into());
    body.insert("store".into(), false.into());
    if body.contains_key("reasoning") {
        // Without the store, reasoning can only be carried over encrypted.
        body.insert("include".into(), vec!["reasoning.encrypted_content"].into());
    }
    if !request.system.is_empty() {
        body.insert("instructions".into(), request.system.into());
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
                        AssistantPart::ToolCall(call) => {
                            input.push(Input::Item(Item::FunctionCall {
                                call_id: &call.id,
                                name: &call.name,
                                arguments: &call.arguments,
                            }));
                        }
                        AssistantPart::Opaque { item } => input.push(Input::Opaque(item)),
                        AssistantPart::Text { .. }
                        | AssistantPart::Thinking { .. }
                        | AssistantPart::RedactedThinking { .. } => {}
                    }
                }
            }
            Message::Tool(tool) => input.push(Input::Item(Item::FunctionCallOutput {
                call_id: &tool.call_id,
                output: tool.result.text_content(),
            })),
        }
    }
    body.insert("input".into(), wire(input));
    let tools = request.tools.iter().map(|t| Tool {
        kind: "function",
        name: &t.name,
        description: &t.description,
        parameters: &t.parameters,
        strict: false,
    });
    body.insert("tools".into(), wire(tools.collect::<Vec<_>>()));
    if let Some(choice) = effective_choice(config, request.tool_choice) {
        body.insert("tool_choice".into(), choice.to_wire(WireFormat::OpenaiResponses));
    }
    Value::Object(body)
}

fn text_item<'a>(role: &'a str, kind: &'static str, text: &'a str) -> Input<'a> {
    Input::Item(Item::Message { role, content: [TextPart { kind, text }] })
}

/// An item of the request's `input`: one staged writes, or one the provider sent that is
/// echoed back as it came.
#[derive(Serialize)]
#[serde(untagged)]
enum Input<'a> {
    Item(Item<'a>),
    Opaque(&'a Value),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Message { role: &'a str, content: [TextPart<'a>; 1] },
    FunctionCall { call_id: &'a str, name: &'a str, arguments: &'a str },
    FunctionCallOutput { call_id: &'a str, output: String },
}

#[derive(Serialize)]
struct TextPart<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// A tool as the Responses API declares it.
#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
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
