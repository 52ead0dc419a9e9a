//! The `details` of `ast_edit`'s results as serde types, owned here, for the front ends that
//! read them back: `staged ast-edit` prints a preview from [`PreviewDetails`], `staged
//! resolve` turns a stale preview's [`StaleDetails`] into the command that stages it again,
//! and a "`lang` is required" error's [`LangRequiredDetails`] becomes advice about `--lang`.
//!
//! Reading details is input handling: they may come back from the database or from another
//! process. [`PreviewDetails::parse`] and its siblings say what is wrong instead of guessing a
//! default for a missing or mistyped field.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::params::AstEditParams;

/// What a preview's details (`ast_edit`'s result while staged, and the pending entry's
/// details) hold, besides the per-file counts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewDetails {
    /// Replacements over all files.
    pub total_replacements: u64,
    /// Files with at least one replacement.
    pub files_touched: u64,
    /// Files searched.
    pub files_searched: u64,
    /// Whether `limit` or `max_files` cut the preview short.
    pub limit_reached: bool,
    /// The unified diff.
    pub diff: String,
    /// The first parse issues (at most 20), when there were any.
    #[serde(default)]
    pub parse_errors: Vec<String>,
    /// How many parse issues there were in all.
    #[serde(default)]
    pub parse_errors_total: Option<u64>,
    /// The staged preview's id: absent when nothing was staged (no matches).
    #[serde(default)]
    pub pending_id: Option<String>,
    /// The blocks the text shows after its tree (nested matches left as they were, parse
    /// issues, the language inferred, files with parse errors rewritten), each a paragraph.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The text's last line, when a cap cut the preview or files with parse errors were
    /// skipped: what was left out and how to include it.
    #[serde(default)]
    pub last_line: Option<String>,
}

impl PreviewDetails {
    /// Reads a preview's details; `Err` names the missing or mistyped field.
    pub fn parse(details: &Value) -> Result<Self, DetailsError> {
        Self::deserialize(details).map_err(|err| DetailsError::new("preview", &err))
    }
}

/// The details of a stale apply's error result: nothing was written and the preview was
/// dropped; `restage` holds the arguments that stage it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleDetails {
    /// The `ast_edit` arguments of the dropped preview.
    pub restage: AstEditParams,
    /// Always 0: nothing was applied.
    pub total_replacements: u64,
    /// Always 0.
    pub files_touched: u64,
    /// Always `false`.
    pub applied: bool,
    /// Always `true`.
    pub stale: bool,
    /// The replacements the preview promised.
    pub expected_replacements: u64,
    /// The files the preview promised.
    pub expected_files: u64,
    /// Why it is stale, e.g. `src/a.ts changed since the preview`.
    pub cause: String,
}

impl StaleDetails {
    /// Reads a stale apply's details; `Err` names the missing or mistyped field.
    pub fn parse(details: &Value) -> Result<Self, DetailsError> {
        Self::deserialize(details).map_err(|err| DetailsError::new("stale apply", &err))
    }

    /// The details as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The details of the three "`lang` is required" errors (`"error": "langRequired"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LangRequiredDetails {
    /// Always `langRequired`.
    pub error: String,
    /// The languages found in scope, with their file counts (mixed languages; empty when
    /// there were no files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub languages: Option<Vec<LangCount>>,
    /// The files whose language could not be told from their name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uninferred: Option<Vec<String>>,
}

/// One language found in scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LangCount {
    /// The language's name, as `lang` takes it.
    pub lang: String,
    /// How many files in scope are in it.
    pub files: u64,
}

/// The value of [`LangRequiredDetails::error`].
pub const LANG_REQUIRED: &str = "langRequired";

impl LangRequiredDetails {
    /// Reads an error's details: `None` when they are not a "`lang` is required" error's.
    pub fn parse(details: &Value) -> Option<Self> {
        let parsed = Self::deserialize(details).ok()?;
        (parsed.error == LANG_REQUIRED).then_some(parsed)
    }

    /// The details as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Details that do not have the shape their kind promises.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed {kind} details: {message}")]
pub struct DetailsError {
    kind: &'static str,
    message: String,
}

impl DetailsError {
    fn new(kind: &'static str, err: &serde_json::Error) -> Self {
        Self { kind, message: err.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn preview_details_name_what_is_missing_or_mistyped() {
        let err = PreviewDetails::parse(&json!({"totalReplacements": 1})).unwrap_err();
        assert!(err.to_string().starts_with("malformed preview details: missing field"), "{err}");
        let err = PreviewDetails::parse(&json!({
            "totalReplacements": "one", "filesTouched": 1, "filesSearched": 1,
            "limitReached": false, "diff": ""
        }))
        .unwrap_err();
        assert!(err.to_string().contains("invalid type: string \"one\""), "{err}");
    }

    #[test]
    fn lang_required_details_round_trip_and_others_are_not_them() {
        let details = LangRequiredDetails {
            error: LANG_REQUIRED.to_owned(),
            languages: Some(vec![LangCount { lang: "TypeScript".to_owned(), files: 2 }]),
            uninferred: None,
        };
        let value = details.to_value();
        assert_eq!(
            value,
            json!({"error": "langRequired", "languages": [{"lang": "TypeScript", "files": 2}]})
        );
        assert_eq!(LangRequiredDetails::parse(&value), Some(details));
        assert_eq!(LangRequiredDetails::parse(&json!({"error": "other"})), None);
    }
}
