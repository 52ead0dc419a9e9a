//! The `details` of `ast_edit`'s results as serde types, owned here: the tool writes them from
//! these types, and the front ends read them back as them. `staged ast-edit` prints a preview
//! from [`PreviewDetails`], `staged resolve` turns a stale preview's [`StaleDetails`] into the
//! command that stages it again, and a "`lang` is required" error's [`LangRequiredDetails`]
//! becomes advice about `--lang`.
//!
//! Reading details is input handling: they may come back from the database or from another
//! process. [`PreviewDetails::parse`] and its siblings say what is wrong instead of guessing a
//! default for a missing or mistyped field.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::params::AstEditParams;

/// A preview's details: `ast_edit`'s result while staged, and the pending entry's details.
/// The tool writes them from this type and the front ends read them back as it; the members
/// are in the order they are written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewDetails {
    /// Replacements over all files.
    pub total_replacements: u64,
    /// Files with at least one replacement.
    pub files_touched: u64,
    /// Files searched.
    pub files_searched: u64,
    /// Always `false`: a preview writes nothing.
    pub applied: bool,
    /// Whether `limit` or `max_files` cut the preview short.
    pub limit_reached: bool,
    /// The language the rewrite used.
    pub lang: String,
    /// Every touched file with its replacements.
    pub file_replacements: Vec<FileCount>,
    /// The blocks the text shows after its tree (nested matches left as they were, parse
    /// issues, the language inferred, files with parse errors rewritten), each a paragraph.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Files with parse errors that were skipped (`includeParseErrors` unset).
    pub error_files_skipped: u64,
    /// How many parse issues there were in all: always written, 0 included, so a script
    /// reads it without a fallback.
    #[serde(default)]
    pub parse_errors_total: Option<u64>,
    /// The unified diff.
    pub diff: String,
    /// The text's last line, when a cap cut the preview or files with parse errors were
    /// skipped: what was left out and how to include it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_line: Option<String>,
    /// What a cap left out, when one cut the preview.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOutDetails>,
    /// The first parse issues (at most 20), when there were any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parse_errors: Vec<String>,
    /// The files with parse errors that were rewritten (`includeParseErrors`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_files: Vec<ErrorFileDetails>,
    /// The outer matches rewritten alone, their nested matches left as they were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nested_left: Vec<NestedLeftDetails>,
    /// The language inferred from paths holding several, and the ones left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang_inferred: Option<LangInferred>,
    /// The staged preview's id: absent when nothing was staged (no matches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_id: Option<String>,
}

impl PreviewDetails {
    /// Reads a preview's details; `Err` names the missing or mistyped field.
    pub fn parse(details: &Value) -> Result<Self, DetailsError> {
        Self::deserialize(details).map_err(|err| DetailsError::new("preview", &err))
    }

    /// The details as JSON, the diff moved in rather than copied (a big preview's is
    /// hundreds of megabytes).
    pub fn into_value(mut self) -> Value {
        let diff = std::mem::take(&mut self.diff);
        let mut value = serde_json::to_value(&self).unwrap_or(Value::Null);
        // In place, so that the member keeps its position.
        if let Some(slot) = value.get_mut("diff") {
            *slot = Value::String(diff);
        }
        value
    }

    /// Sets [`PreviewDetails::pending_id`] in details already written as JSON (the preview
    /// is staged after its details are written, and they may be big).
    pub(crate) fn set_pending_id(details: &mut Value, id: &str) {
        if let Some(details) = details.as_object_mut() {
            details.insert("pendingId".to_owned(), Value::String(id.to_owned()));
        }
    }
}

/// The details of an apply's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedDetails {
    /// Replacements written.
    pub total_replacements: u64,
    /// Files written.
    pub files_touched: u64,
    /// Files the preview searched.
    pub files_searched: u64,
    /// Always `true`.
    pub applied: bool,
    /// Whether `limit` or `max_files` cut the preview short.
    pub limit_reached: bool,
    /// Every written file with its replacements.
    pub file_replacements: Vec<FileCount>,
    /// What a cap left out of the preview (not after a partial apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOutDetails>,
    /// The rest of a partial apply, staged as a new preview.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remainder: Option<RemainderDetails>,
}

impl AppliedDetails {
    /// Reads an apply's details; `Err` names the missing or mistyped field.
    pub fn parse(details: &Value) -> Result<Self, DetailsError> {
        Self::deserialize(details).map_err(|err| DetailsError::new("apply", &err))
    }

    /// The details as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A touched file and its replacements.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCount {
    /// Display path.
    pub path: String,
    /// Replacements in it.
    pub count: u64,
}

/// What a cap left out: `{"cap": "limit" | "max_files", "value", "files", "replacements",
/// "exact", "lift"}`, where `lift` names the parameter (or flag) that lifts the cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOutDetails {
    /// `limit` or `max_files`.
    pub cap: String,
    /// The cap's value.
    pub value: u64,
    /// Files with replacements left out.
    pub files: u64,
    /// Replacements left out.
    pub replacements: u64,
    /// `false` when there are at least this many.
    pub exact: bool,
    /// The parameter (or flag) that lifts the cap.
    pub lift: String,
}

/// A file with parse errors that was rewritten where the match holds no error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorFileDetails {
    /// Display path.
    pub path: String,
    /// Replacements made in it.
    pub count: u64,
    /// Matches left alone because they hold a parse error.
    pub matches_skipped: u64,
}

/// An outer match rewritten alone, its nested matches left as they were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NestedLeftDetails {
    /// Display path.
    pub path: String,
    /// The outer match's line.
    pub line: u64,
    /// The outer match's column.
    pub column: u64,
    /// The outer match's pattern.
    pub pattern: String,
    /// Where each nested match left as it was is.
    pub inner: Vec<Position>,
    /// What to change, when something can be changed; `null` otherwise.
    pub hint: Option<String>,
}

/// A line and a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// The line.
    pub line: u64,
    /// The column.
    pub column: u64,
}

/// The language a call without `lang` inferred, and the ones left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LangInferred {
    /// The language rewritten.
    pub lang: String,
    /// The languages left out, with their file counts.
    pub left_out: Vec<LangCount>,
}

/// The rest of a partial apply, staged as a new preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemainderDetails {
    /// The new preview's id.
    pub id: String,
    /// Its label.
    pub label: String,
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
pub(crate) const LANG_REQUIRED: &str = "langRequired";

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
