//! Turns a staged [`ToolResult`] into an MCP `CallToolResult`, and adds the resolve reminder.
//!
//! The text parts become text content (what the model reads), the details become
//! `structuredContent` when they are a JSON object, and `isError` follows the result. The
//! reminder is appended as one more, final text part, so a client that joins the text parts
//! and a client that reads the last part both see the result end with it.

use rmcp::model::{CallToolResult, ContentBlock};
use staged_core::{ContentPart, RESOLVE_REMINDER, ToolResult};

/// The MCP form of `result`.
pub(crate) fn to_call_result(result: ToolResult) -> CallToolResult {
    let content: Vec<ContentBlock> = result
        .content
        .into_iter()
        .map(|part| match part {
            ContentPart::Text { text } => ContentBlock::text(text),
            ContentPart::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        })
        .collect();
    let mut res = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    res.structured_content = result.details.filter(serde_json::Value::is_object);
    res
}

/// Appends the resolve reminder as the last text part.
pub(crate) fn append_reminder(result: &mut CallToolResult) {
    result.content.push(ContentBlock::text(RESOLVE_REMINDER));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_object_becomes_structured_content_and_error_flag_follows() {
        let res = to_call_result(
            ToolResult::error("boom").with_details(serde_json::json!({"cause": "x"})),
        );
        assert_eq!(res.is_error, Some(true));
        assert_eq!(res.structured_content, Some(serde_json::json!({"cause": "x"})));
        assert_eq!(res.content.len(), 1);
    }

    #[test]
    fn non_object_details_are_dropped_and_reminder_is_last() {
        let mut res =
            to_call_result(ToolResult::text("ok").with_details(serde_json::json!([1, 2])));
        assert_eq!(res.is_error, Some(false));
        assert_eq!(res.structured_content, None);
        append_reminder(&mut res);
        let last = res.content.last().and_then(|c| c.as_text()).map(|t| t.text.clone());
        assert_eq!(last.as_deref(), Some(RESOLVE_REMINDER));
    }
}
