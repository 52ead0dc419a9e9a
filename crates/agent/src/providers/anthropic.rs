//! Anthropic Messages: the request body (thinking blocks echoed with their signatures, tool
//! results and reminders as user-turn blocks, and a forced `tool_choice` that strips
//! `thinking`, `context_management` and `output_config.effort`), and the event stream.

use serde::Serialize;
use serde_json::{Map, Value};
use staged_core::CancelToken;
use staged_protocol::WireFormat;

use crate::{
    AssistantMessage, AssistantPart, Message, ModelClient, ModelError, ModelRequest,
    ProviderConfig, StreamDelta, ToolCall,
    http::Http,
    providers::{effective_choice, event_json, str_field, wire},
};

/// A client for the Anthropic Messages API.
#[derive(Debug)]
pub(crate) struct AnthropicClient {
    config: ProviderConfig,
    model: String,
    http: Http,
}

impl AnthropicClient {
    pub(crate) fn new(config: ProviderConfig, model: String, http: Http) -> Self {
        Self { config, model, http }
    }
}

/// The request body for `request`.
pub(crate) fn anthropic_body(
    config: &ProviderConfig,
    model: &str,
    request: ModelRequest<'_>,
) -> Value {
    let mut body: Map<String, Value> = config.body.clone();
    body.insert("model".into(), model.into());
    body.entry("max_tokens").or_insert_with(|| config.max_tokens.into());
    body.insert("stream".into(), true.into());
    if !request.system.is_empty() {
        body.insert("system".into(), request.system.into());
    }
    body.insert("messages".into(), wire(messages(request.messages)));
    let tools = request.tools.iter().map(|t| Tool {
        name: &t.name,
        description: &t.description,
        input_schema: &t.parameters,
    });
    body.insert("tools".into(), wire(tools.collect::<Vec<_>>()));
    if let Some(choice) = effective_choice(config, request.tool_choice) {
        body.insert("tool_choice".into(), choice.to_wire(WireFormat::AnthropicMessages));
        if choice.forces_tool_use() {
            // Anthropic refuses forced tool use while thinking is on.
            body.remove("thinking");
            body.remove("context_management");
            if let Some(Value::Object(output)) = body.get_mut("output_config") {
                output.remove("effort");
                if output.is_empty() {
                    body.remove("output_config");
                }
            }
        }
    }
    Value::Object(body)
}

/// A tool as the Messages API declares it.
#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

/// A turn of the conversation: its role and its content blocks.
#[derive(Serialize)]
struct Turn<'a> {
    role: &'static str,
    content: Vec<Content<'a>>,
}

/// A content block of a turn.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Content<'a> {
    Text {
        text: &'a str,
    },
    Thinking {
        thinking: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<&'a str>,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

fn messages(history: &[Message]) -> Vec<Turn<'_>> {
    let mut turns: Vec<Turn<'_>> = Vec::new();
    let mut push = |role: &'static str, block| match turns.last_mut() {
        Some(last) if last.role == role => last.content.push(block),
        _ => turns.push(Turn { role, content: vec![block] }),
    };
    for message in history {
        match message {
            Message::User { text } | Message::Reminder { text } => {
                push("user", Content::Text { text });
            }
            Message::Assistant(reply) => {
                for part in &reply.parts {
                    if let Some(block) = assistant_block(part) {
                        push("assistant", block);
                    }
                }
            }
            Message::Tool(tool) => push(
                "user",
                Content::ToolResult {
                    tool_use_id: &tool.call_id,
                    content: tool.result.text_content(),
                    is_error: tool.result.is_error,
                },
            ),
        }
    }
    for turn in &mut turns {
        // Tool results must open the user turn that answers the calls.
        turn.content.sort_by_key(|b| !matches!(b, Content::ToolResult { .. }));
    }
    turns
}

fn assistant_block(part: &AssistantPart) -> Option<Content<'_>> {
    Some(match part {
        AssistantPart::Text { text } if text.is_empty() => return None,
        AssistantPart::Text { text } => Content::Text { text },
        AssistantPart::Thinking { thinking, signature } => {
            Content::Thinking { thinking, signature: signature.as_deref() }
        }
        AssistantPart::RedactedThinking { data } => Content::RedactedThinking { data },
        AssistantPart::ToolCall(call) => Content::ToolUse {
            id: &call.id,
            name: &call.name,
            input: call.parsed_arguments().unwrap_or_else(|_| Value::Object(Map::new())),
        },
        AssistantPart::Opaque { .. } => return None,
    })
}

enum Block {
    Text(String),
    Thinking { thinking: String, signature: Option<String> },
    Redacted(String),
    ToolUse { id: String, name: String, json: String, initial: Value },
}

#[async_trait::async_trait]
impl ModelClient for AnthropicClient {
    fn describe(&self) -> String {
        format!("{}/{}", self.config.name, self.model)
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        on_delta: &mut (dyn for<'d> FnMut(StreamDelta<'d>) + Send),
        cancel: &CancelToken,
    ) -> Result<AssistantMessage, ModelError> {
        let body = anthropic_body(&self.config, &self.model, request);
        let mut stream = self.http.post_stream(&body, cancel).await?;
        let mut blocks: Vec<Block> = Vec::new();
        let mut stop_reason = None;
        loop {
            let Some(event) = stream.next(cancel).await? else {
                return Err(stream.malformed("the stream ended before `message_stop`"));
            };
            if event.data.is_empty() {
                continue;
            }
            let data = event_json(&stream, &event)?;
            match str_field(&data, "type") {
                "content_block_start" => {
                    let block = &data["content_block"];
                    blocks.push(match str_field(block, "type") {
                        "thinking" => Block::Thinking {
                            thinking: str_field(block, "thinking").to_owned(),
                            signature: block
                                .get("signature")
                                .and_then(Value::as_str)
                                .filter(|s| !s.is_empty())
                                .map(str::to_owned),
                        },
                        "redacted_thinking" => Block::Redacted(str_field(block, "data").to_owned()),
                        "tool_use" => Block::ToolUse {
                            id: str_field(block, "id").to_owned(),
                            name: str_field(block, "name").to_owned(),
                            json: String::new(),
                            initial: block.get("input").cloned().unwrap_or(Value::Null),
                        },
                        _ => Block::Text(str_field(block, "text").to_owned()),
                    });
                }
                "content_block_delta" => {
                    let delta = &data["delta"];
                    let Some(block) = blocks.last_mut() else {
                        return Err(stream.malformed(
                            "a content_block_delta came before any content_block_start",
                        ));
                    };
                    match (str_field(delta, "type"), block) {
                        ("text_delta", Block::Text(text)) => {
                            let piece = str_field(delta, "text");
                            text.push_str(piece);
                            on_delta(StreamDelta::Text(piece));
                        }
                        ("thinking_delta", Block::Thinking { thinking, .. }) => {
                            let piece = str_field(delta, "thinking");
                            thinking.push_str(piece);
                            on_delta(StreamDelta::Thinking(piece));
                        }
                        ("signature_delta", Block::Thinking { signature, .. }) => {
                            signature
                                .get_or_insert_with(String::new)
                                .push_str(str_field(delta, "signature"));
                        }
                        ("input_json_delta", Block::ToolUse { json, .. }) => {
                            json.push_str(str_field(delta, "partial_json"));
                        }
                        (kind, _) => {
                            return Err(stream.malformed(format!(
                                "unexpected `{kind}` delta for the current block"
                            )));
                        }
                    }
                }
                "message_delta" => {
                    if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                        stop_reason = Some(reason.to_owned());
                    }
                }
                "message_stop" => break,
                "error" => {
                    let message =
                        data["error"]["message"].as_str().unwrap_or(&event.data).to_owned();
                    return Err(ModelError::Provider {
                        provider: stream.provider().to_owned(),
                        message,
                    });
                }
                _ => {}
            }
        }
        let parts = blocks
            .into_iter()
            .map(|block| match block {
                Block::Text(text) => AssistantPart::Text { text },
                Block::Thinking { thinking, signature } => {
                    AssistantPart::Thinking { thinking, signature }
                }
                Block::Redacted(data) => AssistantPart::RedactedThinking { data },
                Block::ToolUse { id, name, json, initial } => {
                    let arguments = if json.is_empty() && initial.is_object() {
                        initial.to_string()
                    } else {
                        json
                    };
                    AssistantPart::ToolCall(ToolCall { id, name, arguments })
                }
            })
            .collect();
        Ok(AssistantMessage { parts, stop_reason })
    }
}
