//! `ToolResult`: what a tool hands back to the model, and its content parts.

use serde::{Deserialize, Serialize};

/// One part of a tool result's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Model-facing text.
    Text {
        /// The text itself.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

/// The result of running a tool: content for the model, details for programs, and an error flag.
///
/// A result with `is_error` set is still a *result*: the model sees it and can react (a stale
/// `ast_edit` preview is reported this way). Failures that abort a call are `ToolError`s in
/// `staged-core`, which become error results at the edge.
///
/// # Example
/// ```
/// use staged_protocol::ToolResult;
/// let res = ToolResult::text("Applied 1 replacement in 1 file.");
/// assert_eq!(res.text_content(), "Applied 1 replacement in 1 file.");
/// assert!(!res.is_error);
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Content parts, in order.
    pub content: Vec<ContentPart>,
    /// Structured details for renderers and programs; `None` when the tool gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    /// Whether this result reports a failure.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result holding one text part and no details.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentPart::Text { text: text.into() }],
            details: None,
            is_error: false,
        }
    }

    /// An error result holding one text part and no details.
    pub fn error(text: impl Into<String>) -> Self {
        Self { is_error: true, ..Self::text(text) }
    }

    /// The same result with `details` set.
    #[must_use]
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The same result with `details` set to a typed shape of ours, as JSON. Our details are
    /// structs of strings, numbers and JSON values under field names, which always serialize;
    /// should one ever fail, the details are `null` rather than the call failing.
    #[must_use]
    pub fn with_details_of(self, details: &impl Serialize) -> Self {
        self.with_details(serde_json::to_value(details).unwrap_or_default())
    }

    /// The text parts joined with newlines; other parts are skipped.
    pub fn text_content(&self) -> String {
        let mut res = String::new();
        for part in &self.content {
            if let ContentPart::Text { text } = part {
                if !res.is_empty() {
                    res.push('\n');
                }
                res.push_str(text);
            }
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shape_is_camel_case_and_tagged() {
        let res = ToolResult::error("boom").with_details(serde_json::json!({"a": 1}));
        let json = serde_json::to_value(&res).unwrap();
        pretty_assertions::assert_eq!(
            json,
            serde_json::json!({
                "content": [{"type": "text", "text": "boom"}],
                "details": {"a": 1},
                "isError": true
            })
        );
        let back: ToolResult = serde_json::from_value(json).unwrap();
        assert_eq!(back, res);
    }

    #[test]
    fn typed_details_are_their_json() {
        #[derive(Serialize)]
        struct Shown {
            total: usize,
        }
        let res = ToolResult::text("x").with_details_of(&Shown { total: 2 });
        assert_eq!(res.details, Some(serde_json::json!({"total": 2})));
    }

    #[test]
    fn text_joins_text_parts_and_skips_images() {
        let res = ToolResult {
            content: vec![
                ContentPart::Text { text: "a".into() },
                ContentPart::Image { data: "AA==".into(), mime_type: "image/png".into() },
                ContentPart::Text { text: "b".into() },
            ],
            details: None,
            is_error: false,
        };
        assert_eq!(res.text_content(), "a\nb");
    }
}
