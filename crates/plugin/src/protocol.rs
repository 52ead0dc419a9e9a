//! The `_meta` convention by which a plugin tool stages a preview, and the arguments staged
//! sends its callbacks (version 1; `PROTOCOL.md` beside this crate is the reference).
//!
//! A plugin tool stages by returning, in its result's `_meta`:
//!
//! ```json
//! {"staged/pending": {"version": 1, "label": "Rename: 2 files", "details": {}, "payload": {},
//!                     "apply": "_apply_rename", "reject": "_reject_rename",
//!                     "undo": "_undo_rename"}}
//! ```
//!
//! On `resolve`, staged calls `apply` (or `reject`) with
//! `{"payload", "reason", "extra", "pendingId"}`; `staged undo` calls `undo` with the same
//! arguments, `extra` being `{"staged/undo": {"redo", "applied", "entry"}}`.

use serde::Serialize;
use serde_json::{Map, Value};
use staged_core::MAX_LABEL_CHARS;

/// The `_meta` key of a staged preview.
pub(crate) const PENDING_META_KEY: &str = "staged/pending";

/// The version of the convention this build speaks.
pub(crate) const PROTOCOL_VERSION: u64 = 1;

/// Tools whose name begins with this are callbacks: staged calls them, but never offers them
/// to a model or an MCP client.
pub(crate) const CALLBACK_PREFIX: &str = "_";

/// Whether `tool_name` is a callback (hidden from models and clients).
pub(crate) fn is_callback(tool_name: &str) -> bool {
    tool_name.starts_with(CALLBACK_PREFIX)
}

/// A preview as a plugin tool described it in `_meta["staged/pending"]`.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingMeta {
    /// The human summary, e.g. `Rename: 2 files`.
    pub label: String,
    /// Optional details for listings and renderers.
    pub details: Option<Value>,
    /// What the plugin wants back in its callbacks (`null` when absent).
    pub payload: Value,
    /// The tool of the same plugin that applies the preview.
    pub apply: String,
    /// The tool of the same plugin that cleans up after a discard, if any.
    pub reject: Option<String>,
    /// The tool of the same plugin that reverts an apply (and redoes it), if any.
    pub undo: Option<String>,
}

/// Reads `_meta["staged/pending"]`: `Ok(None)` when the result stages nothing, `Err` naming
/// what is wrong when it tries and fails.
///
/// ```
/// use serde_json::json;
/// use staged_plugin::parse_pending_meta;
/// let meta = json!({"staged/pending": {"version": 1, "label": "Rename: 2 files", "apply": "_apply"}});
/// let pending = parse_pending_meta(meta.as_object()).unwrap().unwrap();
/// assert_eq!((pending.label.as_str(), pending.apply.as_str()), ("Rename: 2 files", "_apply"));
/// assert_eq!(pending.reject, None);
/// ```
pub fn parse_pending_meta(
    meta: Option<&Map<String, Value>>,
) -> Result<Option<PendingMeta>, String> {
    let Some(value) = meta.and_then(|meta| meta.get(PENDING_META_KEY)) else { return Ok(None) };
    let Some(obj) = value.as_object() else {
        return Err(format!("`{PENDING_META_KEY}` must be an object, not {}", kind(value)));
    };
    match obj.get("version") {
        Some(Value::Number(n)) if n.as_u64() == Some(PROTOCOL_VERSION) => {}
        Some(other) => {
            return Err(format!(
                "`version` is {other}; this staged speaks version {PROTOCOL_VERSION}"
            ));
        }
        None => return Err(format!("`version` is missing (use {PROTOCOL_VERSION})")),
    }
    let label = match obj.get("label") {
        Some(Value::String(label)) if !label.trim().is_empty() => label.clone(),
        Some(other) => {
            return Err(format!("`label` must be a non-empty string, not {}", kind(other)));
        }
        None => return Err("`label` is missing".to_owned()),
    };
    let chars = label.chars().count();
    if chars > MAX_LABEL_CHARS {
        return Err(format!(
            "`label` is {chars} characters long; a label is a one-line summary of at most {MAX_LABEL_CHARS} characters"
        ));
    }
    let apply = match obj.get("apply") {
        Some(Value::String(apply)) if !apply.is_empty() => apply.clone(),
        Some(other) => {
            return Err(format!("`apply` must name a tool of the plugin, not {}", kind(other)));
        }
        None => {
            return Err("`apply` is missing: it names the tool that applies the preview".to_owned());
        }
    };
    let reject = optional_tool(obj, "reject")?;
    let undo = optional_tool(obj, "undo")?;
    let details = obj.get("details").filter(|d| !d.is_null()).cloned();
    let payload = obj.get("payload").cloned().unwrap_or(Value::Null);
    Ok(Some(PendingMeta { label, details, payload, apply, reject, undo }))
}

/// An optional callback name (`reject`, `undo`).
fn optional_tool(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(name)) if !name.is_empty() => Ok(Some(name.clone())),
        Some(other) => Err(format!("`{key}` must name a tool of the plugin, not {}", kind(other))),
    }
}

/// The `extra` key under which an `undo` callback learns what to revert.
pub(crate) const UNDO_EXTRA_KEY: &str = "staged/undo";

/// The arguments of an `apply` or `reject` callback.
pub(crate) fn callback_arguments(
    payload: &Value,
    reason: &str,
    extra: Option<&Map<String, Value>>,
    pending_id: Option<&str>,
) -> Map<String, Value> {
    let args = CallbackArguments { extra, payload, pending_id, reason };
    match serde_json::to_value(args) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// The arguments of a callback, as the plugin protocol names them; `extra` and `pendingId`
/// are `null` when there are none.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallbackArguments<'a> {
    extra: Option<&'a Map<String, Value>>,
    payload: &'a Value,
    pending_id: Option<&'a str>,
    reason: &'a str,
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn parse(value: Value) -> Result<Option<PendingMeta>, String> {
        parse_pending_meta(json!({PENDING_META_KEY: value}).as_object())
    }

    #[test]
    fn a_full_entry_parses() {
        let pending = parse(json!({
            "version": 1, "label": "Rename: 2 files", "details": {"files": 2},
            "payload": {"from": "a", "to": "b"}, "apply": "_apply", "reject": "_reject"
        }))
        .unwrap()
        .unwrap();
        assert_eq!(pending.details, Some(json!({"files": 2})));
        assert_eq!(pending.payload, json!({"from": "a", "to": "b"}));
        assert_eq!(pending.reject.as_deref(), Some("_reject"));
    }

    #[test]
    fn no_meta_stages_nothing() {
        assert_eq!(parse_pending_meta(None), Ok(None));
        assert_eq!(parse_pending_meta(json!({"other": 1}).as_object()), Ok(None));
    }

    #[test]
    fn broken_entries_say_what_is_wrong() {
        assert_eq!(
            parse(json!("x")).unwrap_err(),
            "`staged/pending` must be an object, not a string"
        );
        assert_eq!(
            parse(json!({"version": 2, "label": "l", "apply": "a"})).unwrap_err(),
            "`version` is 2; this staged speaks version 1"
        );
        assert_eq!(
            parse(json!({"version": 1, "label": "", "apply": "a"})).unwrap_err(),
            "`label` must be a non-empty string, not a string"
        );
        assert_eq!(
            parse(json!({"version": 1, "label": "x".repeat(201), "apply": "a"})).unwrap_err(),
            "`label` is 201 characters long; a label is a one-line summary of at most 200 characters"
        );
        assert!(parse(json!({"version": 1, "label": "é".repeat(200), "apply": "a"})).is_ok());
        assert_eq!(
            parse(json!({"version": 1, "label": "l"})).unwrap_err(),
            "`apply` is missing: it names the tool that applies the preview"
        );
        assert_eq!(
            parse(json!({"version": 1, "label": "l", "apply": "a", "reject": 3})).unwrap_err(),
            "`reject` must name a tool of the plugin, not a number"
        );
    }

    #[test]
    fn callbacks_get_the_four_documented_arguments() {
        let extra = json!({"k": "v"});
        let args = callback_arguments(
            &json!({"a": 1}),
            "ok",
            extra.as_object(),
            Some("pending-action:rename:3"),
        );
        assert_eq!(
            Value::Object(args),
            json!({"payload": {"a": 1}, "reason": "ok", "extra": {"k": "v"}, "pendingId": "pending-action:rename:3"})
        );
        let args = callback_arguments(&Value::Null, "no", None, None);
        assert_eq!(args["extra"], Value::Null);
    }
}
