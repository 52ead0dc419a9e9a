//! Parameters and details of the hidden `resolve` tool.

use serde::{Deserialize, Serialize};

use crate::JsonObject;

/// What `resolve` should do with the pending action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ResolveAction {
    /// Persist or submit the pending action.
    Apply,
    /// Reject the pending action.
    Discard,
}

impl ResolveAction {
    /// The wire spelling: `apply` or `discard`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResolveAction::Apply => "apply",
            ResolveAction::Discard => "discard",
        }
    }
}

impl std::fmt::Display for ResolveAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ResolveAction {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "apply" => Ok(ResolveAction::Apply),
            "discard" => Ok(ResolveAction::Discard),
            other => {
                Err(format!("unknown resolve action `{other}`; expected `apply` or `discard`"))
            }
        }
    }
}

/// The arguments of a `resolve` call. Unknown fields are refused, as the schema is strict.
///
/// # Example
/// ```
/// use staged_protocol::{ResolveAction, ResolveParams};
/// let params: ResolveParams =
///     serde_json::from_str(r#"{"action":"apply","reason":"looks right"}"#).unwrap();
/// assert_eq!(params.action, ResolveAction::Apply);
/// assert!(params.extra.is_none());
/// ```
/// With the `schema` feature, its `JsonSchema` is the one the `resolve` tool declares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ResolveParams {
    /// Apply or discard.
    #[cfg_attr(feature = "schema", schemars(extend("description" = "")))]
    pub action: ResolveAction,
    /// Why; passed through to the pending action, never interpreted by `resolve`.
    #[cfg_attr(feature = "schema", schemars(description = "reason for action"))]
    pub reason: String,
    /// Free-form metadata passed through to the handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "JsonObject", description = "free-form metadata")
    )]
    pub extra: Option<JsonObject>,
}

impl ResolveParams {
    /// Params for `apply` with the given reason and no extra.
    pub fn apply(reason: impl Into<String>) -> Self {
        Self { action: ResolveAction::Apply, reason: reason.into(), extra: None }
    }

    /// Params for `discard` with the given reason and no extra.
    pub fn discard(reason: impl Into<String>) -> Self {
        Self { action: ResolveAction::Discard, reason: reason.into(), extra: None }
    }

    /// The same params with `extra` set.
    #[must_use]
    pub fn with_extra(mut self, extra: JsonObject) -> Self {
        self.extra = Some(extra);
        self
    }
}

/// The details `resolve` attaches to its result, for renderers and programs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolveDetails {
    /// The action that was requested.
    pub action: ResolveAction,
    /// The reason given.
    pub reason: String,
    /// The `extra` object, present only when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<JsonObject>,
    /// The tool that staged the action, e.g. `ast_edit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_tool_name: Option<String>,
    /// The pending action's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The details returned by the apply or reject callback, when it returned any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_result_details: Option<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_refuse_unknown_fields_and_non_object_extra() {
        let err = serde_json::from_str::<ResolveParams>(r#"{"action":"apply","reason":"r","x":1}"#)
            .unwrap_err();
        assert!(err.to_string().contains("unknown field `x`"), "{err}");
        let err =
            serde_json::from_str::<ResolveParams>(r#"{"action":"keep","reason":"r"}"#).unwrap_err();
        assert!(err.to_string().contains("unknown variant `keep`"), "{err}");
        let err = serde_json::from_str::<ResolveParams>(r#"{"action":"apply"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `reason`"), "{err}");
        assert!(
            serde_json::from_str::<ResolveParams>(r#"{"action":"apply","reason":"r","extra":[1]}"#)
                .is_err()
        );
    }

    #[test]
    fn details_use_camel_case_and_omit_absent_fields() {
        let details = ResolveDetails {
            action: ResolveAction::Apply,
            reason: "ok".into(),
            extra: None,
            source_tool_name: Some("ast_edit".into()),
            label: Some("AST Edit: 1 replacement in 1 file".into()),
            source_result_details: Some(serde_json::json!({"totalReplacements": 1})),
        };
        pretty_assertions::assert_eq!(
            serde_json::to_value(&details).unwrap(),
            serde_json::json!({
                "action": "apply",
                "reason": "ok",
                "sourceToolName": "ast_edit",
                "label": "AST Edit: 1 replacement in 1 file",
                "sourceResultDetails": {"totalReplacements": 1}
            })
        );
    }
}
