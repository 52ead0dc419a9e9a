//! `AstGrepTool`: the read-only `ast_grep` tool, reporting matches with their location,
//! captured metavariables and context lines.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use staged_core::{CancelToken, Session, Tool, ToolError};
use staged_journal::ConfinedRoot;
use staged_protocol::ToolResult;

use crate::{
    params::AstGrepParams,
    render::{ArgNames, parse_issues_block, plural},
    search::{SearchResult, search},
};

/// The tool's name.
pub(crate) const AST_GREP_TOOL_NAME: &str = "ast_grep";

const DESCRIPTION: &str = "Search code structurally with an ast-grep pattern (metavariables: `$A` one node, `$$$ARGS` many).\n\
Returns each match as path:line:col with the matched text, captured metavariables and context lines. Read-only.";

/// The `ast_grep` tool.
#[derive(Debug, Clone)]
pub struct AstGrepTool {
    session: Arc<Session>,
    workspace: ConfinedRoot,
    names: ArgNames,
    index: Option<crate::WarmIndex>,
}

impl AstGrepTool {
    /// A search tool confined to `workspace`. The session is kept for symmetry with
    /// [`crate::AstEditTool`]; searching never stages anything.
    pub fn new(session: Arc<Session>, workspace: ConfinedRoot) -> AstGrepTool {
        AstGrepTool { session, workspace, names: ArgNames::Tool, index: None }
    }

    /// The same tool, whose results name `limit` as `names` says.
    pub fn naming(mut self, names: ArgNames) -> AstGrepTool {
        self.names = names;
        self
    }

    /// The same tool, listing files from a warm index (see [`crate::WarmIndex`]): the same
    /// results, without walking and reading every file each time.
    pub fn with_index(mut self, index: crate::WarmIndex) -> AstGrepTool {
        self.index = Some(index);
        self
    }

    /// The session this tool was built with.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }
}

/// The model-facing text of a search result.
pub fn search_text(result: &SearchResult) -> String {
    search_text_named(result, ArgNames::Tool)
}

/// The mark after the location of a match in a file whose syntax tree has error nodes.
pub(crate) const PARSE_ERRORS_MARK: &str = " (file has parse errors)";

/// [`search_text`], naming `limit` as `names` says.
pub(crate) fn search_text_named(result: &SearchResult, names: ArgNames) -> String {
    let last = search_last_line(result, names);
    if result.matches.is_empty() {
        let mut res = "No matches found".to_owned();
        if !result.parse_errors.is_empty() {
            res.push('\n');
            res.push_str(&parse_issues_block(&result.parse_errors));
        }
        if let Some(last) = last {
            res.push('\n');
            res.push_str(&last);
        }
        return res;
    }
    let mut res = format!(
        "{} in {}",
        plural(result.matches.len(), "match").replace("matchs", "matches"),
        plural(result.files_matched(), "file")
    );
    for m in &result.matches {
        res.push_str(&format!("\n\n{}:{}:{}", m.path, m.line, m.column));
        if m.file_has_parse_errors {
            res.push_str(PARSE_ERRORS_MARK);
        }
        let width = m.context.last().map_or(1, |(n, _)| n.to_string().len());
        for (n, line) in &m.context {
            let marker = if (m.line..=m.end_line).contains(n) { '>' } else { ' ' };
            res.push_str(&format!("\n{marker} {n:>width$} | {line}"));
        }
        for (name, value) in &m.meta_variables {
            let value: String = value.lines().next().unwrap_or("").chars().take(120).collect();
            res.push_str(&format!("\n  {name} = {value}"));
        }
    }
    if !result.parse_errors.is_empty() {
        res.push_str("\n\n");
        res.push_str(&parse_issues_block(&result.parse_errors));
    }
    if let Some(last) = last {
        res.push_str("\n\n");
        res.push_str(&last);
    }
    res
}

/// The last line of a search, when `limit` cut it or matches come from files with parse
/// errors.
fn search_last_line(result: &SearchResult, names: ArgNames) -> Option<String> {
    let mut parts = Vec::new();
    if let (Some((matches, files)), Some(limit)) =
        (result.left_out, result.limit_reached.then_some(result.matches.len()))
    {
        let flag = match names {
            ArgNames::Tool => "`limit`",
            ArgNames::Cli => "`--limit`",
        };
        let (were, them) = if matches == 1 { ("was", "it") } else { ("were", "them") };
        parts.push(format!(
            "Capped by {flag} {limit}: {} in {} {were} left out; raise {flag} (or leave it out) to include {them}.",
            plural(matches, "more match").replace("matchs", "matches"),
            plural(files, "file"),
        ));
    }
    if result.files_with_parse_errors > 0 {
        let n = result.files_with_parse_errors;
        let (edit, flag) = match names {
            ArgNames::Tool => ("ast_edit", "`includeParseErrors: true`"),
            ArgNames::Cli => ("ast-edit", "`--include-parse-errors`"),
        };
        parts.push(format!(
            "{} with matches {} parse errors: their matches are marked{PARSE_ERRORS_MARK}, and {edit} skips such files unless given {flag}.",
            plural(n, "file"),
            if n == 1 { "has" } else { "have" },
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The details JSON of a search result.
pub fn search_details(result: &SearchResult) -> Value {
    let errors = result.parse_errors.len().min(crate::render::PARSE_ERRORS_LIMIT);
    let details = SearchDetails {
        total_matches: result.matches.len(),
        files_matched: result.files_matched(),
        files_searched: result.files_searched,
        limit_reached: result.limit_reached,
        parse_errors: &result.parse_errors[..errors],
        parse_errors_total: result.parse_errors.len(),
        files_with_parse_errors: result.files_with_parse_errors,
        matches: &result.matches,
        left_out: result.left_out.map(|(matches, files)| LeftOut {
            cap: "limit",
            value: result.matches.len(),
            matches,
            files,
        }),
    };
    // A struct of numbers, strings and matches under field names always serializes.
    serde_json::to_value(details).unwrap_or_default()
}

/// `ast_grep`'s details.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchDetails<'a> {
    total_matches: usize,
    files_matched: usize,
    files_searched: usize,
    limit_reached: bool,
    /// The first [`crate::render::PARSE_ERRORS_LIMIT`].
    parse_errors: &'a [String],
    parse_errors_total: usize,
    files_with_parse_errors: usize,
    matches: &'a [crate::SearchMatch],
    #[serde(skip_serializing_if = "Option::is_none")]
    left_out: Option<LeftOut>,
}

/// What a search's `limit` left out: the matches and files past it.
#[derive(Serialize)]
struct LeftOut {
    cap: &'static str,
    value: usize,
    matches: usize,
    files: usize,
}

#[async_trait::async_trait]
impl Tool for AstGrepTool {
    fn name(&self) -> &str {
        AST_GREP_TOOL_NAME
    }

    fn label(&self) -> &str {
        "AST Grep"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        AstGrepParams::json_schema()
    }

    fn read_only(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, cancel: &CancelToken) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        let params =
            AstGrepParams::from_json(args).map_err(|err| ToolError::new(err.to_string()))?;
        let workspace = self.workspace.clone();
        let index = self.index.clone();
        let worker_cancel = cancel.clone();
        let result = tokio::task::spawn_blocking(move || {
            search(&workspace, &params, index.as_ref(), Some(&worker_cancel))
        })
        .await
        .map_err(|err| ToolError::new(staged_core::worker_failure("ast_grep", err)))?;
        match result {
            Ok(result) => Ok(ToolResult::text(search_text_named(&result, self.names))
                .with_details(search_details(&result))),
            Err(crate::AstEditError::Cancelled) => Err(ToolError::aborted(cancel.reason())),
            Err(err) => Err(err.to_tool_error()),
        }
    }
}
