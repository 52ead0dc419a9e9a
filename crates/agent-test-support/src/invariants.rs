//! The protocol invariants [`check_request`] checks a request body against (`MockModel::requests`
//! runs it on each recorded request): each tool call is answered by exactly one result, each
//! result answers a call, and (on Anthropic) roles alternate and the results of a turn's calls
//! open the next user turn.

use std::collections::BTreeSet;

use serde_json::Value;

use staged_protocol::WireFormat;

/// The problems of one request body on `wire`; empty when it is well-formed.
pub(crate) fn check_request(wire: WireFormat, body: &Value) -> Vec<String> {
    match wire {
        WireFormat::OpenaiResponses => responses(body),
        WireFormat::OpenaiChat => chat(body),
        WireFormat::AnthropicMessages => anthropic(body),
    }
}

fn as_array(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn pairing(calls: Vec<String>, results: Vec<String>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for id in &calls {
        if !seen.insert(id.clone()) {
            problems.push(format!("call id `{id}` is used twice"));
        }
        match results.iter().filter(|r| *r == id).count() {
            0 => problems.push(format!("call `{id}` has no result")),
            1 => {}
            n => problems.push(format!("call `{id}` has {n} results")),
        }
    }
    for id in &results {
        if !calls.contains(id) {
            problems.push(format!("result `{id}` answers no call"));
        }
    }
    problems
}

fn responses(body: &Value) -> Vec<String> {
    let items = as_array(&body["input"]);
    let mut calls = Vec::new();
    let mut results = Vec::new();
    let mut problems = Vec::new();
    for item in items {
        let id = item["call_id"].as_str().unwrap_or_default().to_owned();
        match item["type"].as_str() {
            Some("function_call") => calls.push(id),
            Some("function_call_output") => {
                if !calls.contains(&id) {
                    problems.push(format!("result `{id}` comes before its call"));
                }
                results.push(id);
            }
            _ => {}
        }
    }
    problems.extend(pairing(calls, results));
    problems
}

fn chat(body: &Value) -> Vec<String> {
    let mut calls = Vec::new();
    let mut results = Vec::new();
    let mut problems = Vec::new();
    for message in as_array(&body["messages"]) {
        match message["role"].as_str() {
            Some("assistant") => {
                for call in as_array(&message["tool_calls"]) {
                    calls.push(call["id"].as_str().unwrap_or_default().to_owned());
                }
            }
            Some("tool") => {
                let id = message["tool_call_id"].as_str().unwrap_or_default().to_owned();
                if !calls.contains(&id) {
                    problems.push(format!("result `{id}` comes before its call"));
                }
                results.push(id);
            }
            _ => {}
        }
    }
    problems.extend(pairing(calls, results));
    problems
}

fn anthropic(body: &Value) -> Vec<String> {
    let messages = as_array(&body["messages"]);
    let mut problems = Vec::new();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    let mut previous_role = "";
    let mut open_calls: Vec<String> = Vec::new();
    for (idx, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role == previous_role {
            problems.push(format!("message {idx} repeats the role `{role}`"));
        }
        previous_role = role;
        let content = as_array(&message["content"]);
        if content.is_empty() {
            problems.push(format!("message {idx} has no content"));
        }
        match role {
            "assistant" => {
                open_calls = content
                    .iter()
                    .filter(|b| b["type"] == "tool_use")
                    .map(|b| b["id"].as_str().unwrap_or_default().to_owned())
                    .collect();
                calls.extend(open_calls.iter().cloned());
            }
            "user" => {
                let answered: Vec<String> = content
                    .iter()
                    .filter(|b| b["type"] == "tool_result")
                    .map(|b| b["tool_use_id"].as_str().unwrap_or_default().to_owned())
                    .collect();
                for id in &open_calls {
                    if !answered.contains(id) {
                        problems.push(format!("call `{id}` is not answered in the next user turn"));
                    }
                }
                for id in &answered {
                    if !open_calls.contains(id) {
                        problems.push(format!(
                            "result `{id}` does not answer the previous assistant turn"
                        ));
                    }
                }
                let first_text = content.iter().position(|b| b["type"] != "tool_result");
                let last_result = content.iter().rposition(|b| b["type"] == "tool_result");
                if let (Some(text), Some(result)) = (first_text, last_result)
                    && text < result
                {
                    problems.push(format!("message {idx} puts text before a tool_result"));
                }
                results.extend(answered);
                open_calls.clear();
            }
            other => problems.push(format!("message {idx} has the unknown role `{other}`")),
        }
    }
    problems.extend(pairing(calls, results));
    problems
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_unanswered_call_is_reported_on_every_wire() {
        let responses = json!({"input": [{"type": "function_call", "call_id": "a"}]});
        assert_eq!(
            check_request(WireFormat::OpenaiResponses, &responses),
            ["call `a` has no result"]
        );
        let chat = json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}]});
        assert_eq!(check_request(WireFormat::OpenaiChat, &chat), ["call `a` has no result"]);
        let anthropic = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "t"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a"}]},
            {"role": "user", "content": [{"type": "text", "text": "r"}, {"type": "tool_result", "tool_use_id": "b"}]}
        ]});
        assert_eq!(
            check_request(WireFormat::AnthropicMessages, &anthropic),
            [
                "call `a` is not answered in the next user turn",
                "result `b` does not answer the previous assistant turn",
                "message 2 puts text before a tool_result",
                "call `a` has no result",
                "result `b` answers no call",
            ]
        );
    }
}
