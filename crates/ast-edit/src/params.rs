//! `AstEditParams` and `AstGrepParams`: the wire arguments of the two tools, their validation
//! (`docs/contract/ast-edit.md#validation`), and their JSON Schemas.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{error::AstEditError, lang::Lang};

/// The default cap on files touched by one call.
pub const DEFAULT_MAX_FILES: usize = 1000;

/// The longest pattern accepted, in bytes. Some grammars parse some inputs in quadratic time
/// (TLA+ takes seconds on 50 KB of `foo($A)foo($A)…`), and a parse cannot be cancelled, so a
/// huge pattern could hold a worker for many minutes. Patterns written for real code are far
/// shorter.
pub(crate) const MAX_PATTERN_BYTES: usize = 16 * 1024;

/// One rewrite: a pattern and its replacement template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(description = "")]
pub struct Op {
    /// The ast-grep pattern, e.g. `oldApi($$$ARGS)`.
    #[schemars(description = "ast pattern")]
    pub pat: String,
    /// The replacement template, e.g. `newApi($$$ARGS)`.
    #[schemars(description = "replacement template")]
    pub out: String,
}

/// How strictly a pattern must match (ast-grep's `MatchStrictness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(description = "")]
pub enum Strictness {
    /// Every node, trivia included.
    Cst,
    /// Every node except trivial source nodes (the default).
    #[default]
    Smart,
    /// Named nodes only.
    Ast,
    /// Named nodes, comments ignored.
    Relaxed,
    /// Named nodes without their text.
    Signature,
    /// Text only, node kinds ignored.
    Template,
}

impl Strictness {
    /// Its name on the wire and on the command line (`--strictness`): `cst`, `smart`, ...
    pub fn name(self) -> &'static str {
        match self {
            Strictness::Cst => "cst",
            Strictness::Smart => "smart",
            Strictness::Ast => "ast",
            Strictness::Relaxed => "relaxed",
            Strictness::Signature => "signature",
            Strictness::Template => "template",
        }
    }

    pub(crate) fn to_ast_grep(self) -> ast_grep_core::MatchStrictness {
        use ast_grep_core::MatchStrictness as M;
        match self {
            Strictness::Cst => M::Cst,
            Strictness::Smart => M::Smart,
            Strictness::Ast => M::Ast,
            Strictness::Relaxed => M::Relaxed,
            Strictness::Signature => M::Signature,
            Strictness::Template => M::Template,
        }
    }
}

/// The arguments of `ast_edit`; the schema a model sees is derived from it (the
/// `#[schemars]` descriptions are the model-facing ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditParams {
    /// The rewrites, at least one.
    #[schemars(description = "rewrite ops", length(min = 1))]
    pub ops: Vec<Op>,
    /// Files, directories or globs, at least one.
    #[schemars(
        description = "files, directories, or globs to rewrite",
        length(min = 1),
        extend("items" = {"type": "string", "description": "file, directory, or glob to rewrite"})
    )]
    pub paths: Vec<String>,
    /// Language override (name or alias, case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        with = "String",
        description = "language override (inferred from file names when absent)"
    )]
    pub lang: Option<String>,
    /// Selector for contextual patterns: the node kind the pattern stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        with = "String",
        description = "node kind the pattern stands for (contextual pattern mode)"
    )]
    pub selector: Option<String>,
    /// Match strictness; `smart` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Strictness", description = "match strictness (default smart)")]
    pub strictness: Option<Strictness>,
    /// Maximum total replacements (floored; below 1 is an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1), description = "max total replacements")]
    pub limit: Option<f64>,
    /// Maximum files touched (floored; below 1 is an error); [`DEFAULT_MAX_FILES`] when
    /// absent, and no cap at all when `null` (`Some(None)`: what `staged ast-edit` sends without
    /// `--max-files`; the schema a model sees does not offer it).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1), description = "max files touched (default 1000)")]
    pub max_files: Option<Option<f64>>,
    /// Also rewrite files whose syntax tree has error nodes, where the matched node holds none.
    #[serde(default, rename = "includeParseErrors", skip_serializing_if = "Option::is_none")]
    #[schemars(
        with = "bool",
        description = "also rewrite files whose syntax tree has errors, only where the matched code holds none (default false: such files are skipped)"
    )]
    pub include_parse_errors: Option<bool>,
}

/// Reads a field that is present (`null` included) as `Some`, so that an absent field
/// (`None`, by `default`) and `null` (`Some(None)`) differ.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// `AstEditParams` after validation.
#[derive(Debug, Clone)]
pub struct ValidatedEdit {
    /// `(pattern, replacement)` sorted by pattern, the order the rules are tried in.
    pub rules: Vec<(String, String)>,
    /// The scope entries as given.
    pub paths: Vec<String>,
    /// The language override.
    pub lang: Option<Lang>,
    /// The selector.
    pub selector: Option<String>,
    /// The strictness.
    pub strictness: Strictness,
    /// The replacement cap.
    pub limit: Option<usize>,
    /// The file cap; `None`: no cap.
    pub max_files: Option<usize>,
    /// Whether files with error nodes are rewritten where the matched node holds none.
    pub include_parse_errors: bool,
}

impl AstEditParams {
    /// Parses tool arguments.
    ///
    /// # Errors
    /// [`AstEditError::InvalidArguments`] naming the serde problem.
    pub fn from_json(args: serde_json::Value) -> Result<AstEditParams, AstEditError> {
        serde_json::from_value(args).map_err(|err| AstEditError::InvalidArguments(err.to_string()))
    }

    /// Validates the arguments in the order of `docs/contract/ast-edit.md#validation`.
    ///
    /// # Errors
    /// The first problem found, with its exact message.
    pub fn validate(&self) -> Result<ValidatedEdit, AstEditError> {
        if self.ops.is_empty() {
            return Err(AstEditError::NoOps);
        }
        let mut rules: Vec<(String, String)> = Vec::with_capacity(self.ops.len());
        for (index, op) in self.ops.iter().enumerate() {
            if op.pat.trim().is_empty() {
                return Err(AstEditError::EmptyPattern { index });
            }
            validate_pattern_len(&op.pat)?;
            if rules.iter().any(|(pat, _)| *pat == op.pat) {
                return Err(AstEditError::DuplicatePattern(op.pat.clone()));
            }
            rules.push((op.pat.clone(), op.out.clone()));
        }
        rules.sort_by(|a, b| a.0.cmp(&b.0));
        let paths = validate_paths(&self.paths)?;
        let lang = self.lang.as_deref().map(Lang::parse).transpose()?;
        let limit = validate_limit(self.limit)?;
        let max_files = match self.max_files {
            None => Some(DEFAULT_MAX_FILES),
            Some(None) => None,
            Some(Some(n)) => Some(positive(n).ok_or(AstEditError::InvalidMaxFiles)?),
        };
        Ok(ValidatedEdit {
            rules,
            paths,
            lang,
            selector: self.selector.clone().filter(|s| !s.trim().is_empty()),
            strictness: self.strictness.unwrap_or_default(),
            limit,
            max_files,
            include_parse_errors: self.include_parse_errors.unwrap_or(false),
        })
    }

    /// The JSON Schema of `ast_edit`'s arguments (strict: no additional properties).
    pub fn json_schema() -> serde_json::Value {
        staged_core::parameters_schema::<AstEditParams>()
    }
}

/// The arguments of `ast_grep`; the schema a model sees is derived from it (the
/// `#[schemars]` descriptions are the model-facing ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstGrepParams {
    /// The ast-grep pattern.
    #[schemars(description = "ast pattern")]
    pub pattern: String,
    /// Files, directories or globs, at least one.
    #[schemars(description = "files, directories, or globs to search", length(min = 1))]
    pub paths: Vec<String>,
    /// Language override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", description = "language override (inferred per file when absent)")]
    pub lang: Option<String>,
    /// Selector for contextual patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", description = "node kind the pattern stands for")]
    pub selector: Option<String>,
    /// Match strictness; `smart` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Strictness", description = "")]
    pub strictness: Option<Strictness>,
    /// Maximum matches reported (floored; below 1 is an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1), description = "max matches")]
    pub limit: Option<f64>,
}

impl AstGrepParams {
    /// Parses tool arguments.
    ///
    /// # Errors
    /// [`AstEditError::InvalidArguments`] naming the serde problem.
    pub fn from_json(args: serde_json::Value) -> Result<AstGrepParams, AstEditError> {
        serde_json::from_value(args).map_err(|err| AstEditError::InvalidArguments(err.to_string()))
    }

    /// The JSON Schema of `ast_grep`'s arguments.
    pub fn json_schema() -> serde_json::Value {
        staged_core::parameters_schema::<AstGrepParams>()
    }
}

pub(crate) fn validate_paths(paths: &[String]) -> Result<Vec<String>, AstEditError> {
    if paths.is_empty() {
        return Err(AstEditError::NoPaths);
    }
    if paths.iter().any(|p| p.trim().is_empty()) {
        return Err(AstEditError::EmptyScopeEntry);
    }
    Ok(paths.to_vec())
}

/// Refuses a pattern longer than [`MAX_PATTERN_BYTES`].
pub(crate) fn validate_pattern_len(pat: &str) -> Result<(), AstEditError> {
    if pat.len() > MAX_PATTERN_BYTES {
        let start: String = pat.chars().take(40).collect();
        return Err(AstEditError::InvalidPattern(format!(
            "`{start}…` is {} bytes long; patterns are limited to {MAX_PATTERN_BYTES} bytes",
            pat.len()
        )));
    }
    Ok(())
}

pub(crate) fn validate_limit(limit: Option<f64>) -> Result<Option<usize>, AstEditError> {
    match limit {
        None => Ok(None),
        Some(n) => positive(n).map(Some).ok_or(AstEditError::InvalidLimit),
    }
}

/// A finite number floored, when that is at least 1 (how `limit` and `max_files` are read).
fn positive(n: f64) -> Option<usize> {
    if !n.is_finite() || n.floor() < 1.0 {
        return None;
    }
    // Saturates for huge values; the cast is the intended conversion.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Some(n.floor().min(usize::MAX as f64) as usize)
}

#[cfg(test)]
mod tests {
    use super::Strictness;

    /// A strictness's name is the one serde writes and reads.
    #[test]
    fn a_strictness_name_is_its_serde_name() {
        use Strictness::*;
        for strictness in [Cst, Smart, Ast, Relaxed, Signature, Template] {
            let name = serde_json::Value::from(strictness.name());
            assert_eq!(serde_json::to_value(strictness).unwrap(), name);
            assert_eq!(serde_json::from_value::<Strictness>(name).unwrap(), strictness);
        }
    }
}
