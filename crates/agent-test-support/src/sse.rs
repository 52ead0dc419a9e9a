//! Rendering a scripted [`Turn`] as each wire format's server-sent events, the way the real
//! providers stream them (text split into several deltas, tool arguments in pieces).

use serde_json::{Value, json};

use staged_protocol::WireFormat;

use crate::Turn;

/// The whole SSE body of `turn`.
pub(crate) fn render(wire: WireFormat, turn: &Turn) -> String {
    match wire {
        WireFormat::OpenaiResponses => responses(turn),
        WireFormat::OpenaiChat => chat(turn),
        WireFormat::AnthropicMessages => anthropic(turn),
    }
}

/// The first event only, for a stream that then stalls.
pub(crate) fn first_event(wire: WireFormat) -> String {
    match wire {
        WireFormat::OpenaiResponses => event(
            "response.created",
            &json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        ),
        WireFormat::OpenaiChat => data(
            &json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": null}]}),
        ),
        WireFormat::AnthropicMessages => event("message_start", &message_start()),
    }
}

fn event(name: &str, value: &Value) -> String {
    format!("event: {name}\ndata: {value}\n\n")
}

fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// `text` in two pieces, as a stream would deliver it.
fn pieces(text: &str) -> Vec<&str> {
    let mid = text.char_indices().nth(text.chars().count() / 2).map_or(text.len(), |(i, _)| i);
    [&text[..mid], &text[mid..]].into_iter().filter(|p| !p.is_empty()).collect()
}

fn responses(turn: &Turn) -> String {
    let mut out = event(
        "response.created",
        &json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
    );
    let mut output = Vec::new();
    for (idx, (thinking, signature)) in turn.thinking.iter().enumerate() {
        let item = json!({"type": "reasoning", "id": format!("rs_{idx}"), "summary": [{"type": "summary_text", "text": thinking}], "encrypted_content": signature});
        out.push_str(&event(
            "response.reasoning_summary_text.delta",
            &json!({"type": "response.reasoning_summary_text.delta", "delta": thinking}),
        ));
        out.push_str(&event("response.output_item.done", &json!({"type": "response.output_item.done", "output_index": output.len(), "item": item})));
        output.push(item);
    }
    if let Some(text) = &turn.text {
        out.push_str(&event("response.output_item.added", &json!({"type": "response.output_item.added", "output_index": output.len(), "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}})));
        for piece in pieces(text) {
            out.push_str(&event(
                "response.output_text.delta",
                &json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": piece}),
            ));
        }
        let item = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]});
        out.push_str(&event("response.output_item.done", &json!({"type": "response.output_item.done", "output_index": output.len(), "item": item})));
        output.push(item);
    }
    for (id, name, args) in &turn.calls {
        let arguments = args.to_string();
        out.push_str(&event("response.output_item.added", &json!({"type": "response.output_item.added", "output_index": output.len(), "item": {"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name, "arguments": ""}})));
        for piece in pieces(&arguments) {
            out.push_str(&event("response.function_call_arguments.delta", &json!({"type": "response.function_call_arguments.delta", "item_id": format!("fc_{id}"), "delta": piece})));
        }
        let item = json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name, "arguments": arguments, "status": "completed"});
        out.push_str(&event("response.output_item.done", &json!({"type": "response.output_item.done", "output_index": output.len(), "item": item})));
        output.push(item);
    }
    out.push_str(&event("response.completed", &json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": output, "usage": {"input_tokens": 10, "output_tokens": 5}}})));
    out
}

fn chat(turn: &Turn) -> String {
    let chunk = |delta: Value, finish: Value| {
        data(
            &json!({"id": "c1", "object": "chat.completion.chunk", "model": "mock", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut out = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    for (thinking, _) in &turn.thinking {
        out.push_str(&chunk(json!({"reasoning_content": thinking}), Value::Null));
    }
    if let Some(text) = &turn.text {
        for piece in pieces(text) {
            out.push_str(&chunk(json!({"content": piece}), Value::Null));
        }
    }
    for (idx, (id, name, args)) in turn.calls.iter().enumerate() {
        out.push_str(&chunk(json!({"tool_calls": [{"index": idx, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), Value::Null));
        for piece in pieces(&args.to_string()) {
            out.push_str(&chunk(
                json!({"tool_calls": [{"index": idx, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if turn.calls.is_empty() { "stop" } else { "tool_calls" };
    out.push_str(&chunk(json!({}), json!(finish)));
    out.push_str("data: [DONE]\n\n");
    out
}

fn message_start() -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "mock", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}})
}

fn anthropic(turn: &Turn) -> String {
    let mut out = event("message_start", &message_start());
    let mut index = 0;
    let mut block = |out: &mut String, start: Value, deltas: Vec<Value>| {
        out.push_str(&event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            out.push_str(&event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        out.push_str(&event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    for (thinking, signature) in &turn.thinking {
        let mut deltas: Vec<Value> = pieces(thinking)
            .into_iter()
            .map(|p| json!({"type": "thinking_delta", "thinking": p}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": signature}));
        block(&mut out, json!({"type": "thinking", "thinking": "", "signature": ""}), deltas);
    }
    if let Some(text) = &turn.text {
        let deltas =
            pieces(text).into_iter().map(|p| json!({"type": "text_delta", "text": p})).collect();
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    for (id, name, args) in &turn.calls {
        let arguments = args.to_string();
        let deltas = pieces(&arguments)
            .into_iter()
            .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
            .collect();
        block(&mut out, json!({"type": "tool_use", "id": id, "name": name, "input": {}}), deltas);
    }
    out.push_str(&event("ping", &json!({"type": "ping"})));
    let stop = if turn.calls.is_empty() { "end_turn" } else { "tool_use" };
    out.push_str(&event("message_delta", &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}})));
    out.push_str(&event("message_stop", &json!({"type": "message_stop"})));
    out
}
