//! Turns a staged [`ToolResult`] into an MCP `CallToolResult` that tells the model the same
//! thing whichever part the client reads.
//!
//! Some clients (Claude Code, Codex) hand the model a result's `structuredContent` when it is
//! present and drop the text blocks; others read only the text blocks. So both carry the
//! model-facing text: the text blocks are the tool's text parts, plus the resolve reminder as
//! one more, final part when it applies; `structuredContent` is the object `staged --json`
//! prints, `{"text", "isError", "details", "pending"}`, whose `text` is those parts joined with
//! newlines, reminder included. Every tool declares [`output_schema`] for that object.
//!
//! The object is [`StructuredResult`], the one `staged-protocol` defines for both.
//!
//! A preview too big for one result is sent as its summary plus a `resource_link` to its
//! whole diff (`big.rs`).

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::Value;
use staged_core::{PendingEntry, RESOLVE_REMINDER};
use staged_protocol::{ContentPart, ToolResult};
use staged_protocol::{PendingHead, StructuredResult};

/// The MCP form of `result`: its text parts (and the reminder, when `remind`) as text blocks,
/// and the same text with its details and the stack's `head` as `structuredContent`.
pub(crate) fn to_call_result(
    result: ToolResult,
    head: Option<&PendingEntry>,
    remind: bool,
) -> CallToolResult {
    let ToolResult { content: parts, details, is_error } = result;
    let mut texts: Vec<String> = Vec::new();
    let mut content: Vec<ContentBlock> = Vec::new();
    for part in parts {
        match part {
            ContentPart::Text { text } => {
                content.push(ContentBlock::text(text.clone()));
                texts.push(text);
            }
            ContentPart::Image { data, mime_type } => {
                content.push(ContentBlock::image(data, mime_type));
            }
        }
    }
    if remind {
        content.push(ContentBlock::text(RESOLVE_REMINDER));
        texts.push(RESOLVE_REMINDER.to_owned());
    }
    let text = texts.join("\n");
    let structured = StructuredResult {
        text: &text,
        is_error,
        details: details.as_ref(),
        pending: head.map(|entry| PendingHead { id: entry.id.as_str(), label: entry.label() }),
    };
    let mut res =
        if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    // Serializing plain strings, booleans and JSON values cannot fail; a failure would leave
    // the text blocks, which still carry everything the model must read.
    res.structured_content = serde_json::to_value(structured).ok();
    // A preview too big for one result is sent as its summary and a link to its diff.
    crate::big::fit(res, details.as_ref(), head)
}

/// The JSON Schema of every tool's `structuredContent`, with no references to resolve.
pub(crate) fn output_schema() -> Arc<JsonObject> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<StructuredResult<'static>>();
    let Value::Object(mut map) = schema.to_value() else { return Arc::new(JsonObject::new()) };
    // `pending` is always present (null when the stack is empty); schemars leaves `Option`
    // fields out of `required`.
    if let Some(Value::Array(required)) = map.get_mut("required")
        && !required.iter().any(|name| name == "pending")
    {
        required.push(Value::from("pending"));
    }
    Arc::new(map)
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use serde_json::json;
    use staged_core::{FnPendingAction, PendingId};

    use super::*;

    fn entry() -> PendingEntry {
        let action = FnPendingAction::new("AST Edit: 2 replacements in 1 file", |_| async {
            Ok(ToolResult::text("ok"))
        });
        PendingEntry {
            id: PendingId::from_string("pending-action:ast_edit:7".to_owned()),
            action: Arc::new(action),
            created_at: SystemTime::now(),
        }
    }

    fn texts(res: &CallToolResult) -> Vec<String> {
        res.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect()
    }

    #[test]
    fn structured_content_carries_the_text_with_the_reminder_and_the_head() {
        let result = ToolResult::text("Preview only.")
            .with_details(json!({"totalReplacements": 2, "pendingId": "x"}));
        let res = to_call_result(result, Some(&entry()), true);
        assert_eq!(texts(&res), ["Preview only.", RESOLVE_REMINDER]);
        assert_eq!(res.is_error, Some(false));
        assert_eq!(
            res.structured_content,
            Some(json!({
                "text": format!("Preview only.\n{RESOLVE_REMINDER}"),
                "isError": false,
                "details": {"totalReplacements": 2, "pendingId": "x"},
                "pending": {
                    "id": "pending-action:ast_edit:7",
                    "label": "AST Edit: 2 replacements in 1 file"
                }
            }))
        );
    }

    #[test]
    fn an_error_without_details_or_head_is_the_cli_json_shape() {
        let res = to_call_result(ToolResult::error("boom"), None, false);
        assert_eq!(res.is_error, Some(true));
        assert_eq!(texts(&res), ["boom"]);
        assert_eq!(
            res.structured_content,
            Some(json!({"text": "boom", "isError": true, "details": {}, "pending": null}))
        );
    }

    #[test]
    fn the_output_schema_keeps_its_title_and_description() {
        let schema = Value::Object((*output_schema()).clone());
        assert_eq!(schema["title"], "staged tool result");
        assert_eq!(
            schema["description"],
            "`structuredContent` of every tool result: what the model is told, and the stack's head."
        );
    }

    #[test]
    fn the_output_schema_describes_the_four_fields_without_references() {
        let schema = Value::Object((*output_schema()).clone());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["text", "isError", "details", "pending"]));
        let props = &schema["properties"];
        assert_eq!(props["text"]["type"], "string");
        assert_eq!(props["isError"]["type"], "boolean");
        assert!(!schema.to_string().contains("$ref"), "{schema}");
        let pending = props["pending"].to_string();
        assert!(pending.contains("\"null\"") && pending.contains("\"label\""), "{pending}");
    }
}
