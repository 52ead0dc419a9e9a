//! The search engine behind `ast_grep`: the same walker, languages and prefilter as the
//! rewrite engine, but each file uses its own language unless `lang` is given.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    ops::ControlFlow,
};

use ast_grep_core::meta_var::MetaVariable;
use serde::Serialize;
use staged_core::CancelToken;

use crate::{
    AstEditError, AstGrepParams, Lang, Workspace,
    compile::{Rule, active_rules, compile_rules},
    edits::LineIndex,
    grep_tool::AST_GREP_TOOL_NAME,
    parallel::par_fold_in_order,
    params::{validate_limit, validate_paths, validate_pattern_len},
    scope::{Candidate, assign_languages, collect_for_lang},
    source::{dispose, parse, read_text},
};

/// Lines of context shown before and after a match.
const CONTEXT_LINES: usize = 1;

/// One match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchMatch {
    /// Display path.
    pub path: String,
    /// 1-based start line.
    pub line: usize,
    /// 1-based start column (characters).
    pub column: usize,
    /// 1-based end line.
    pub end_line: usize,
    /// 1-based end column.
    pub end_column: usize,
    /// Matched text.
    pub text: String,
    /// Captured metavariables (`$$$` captures joined by the source between them).
    pub meta_variables: BTreeMap<String, String>,
    /// `(line number, text)` from `CONTEXT_LINES` before to after the match.
    pub context: Vec<(usize, String)>,
}

/// The result of a search.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// Matches in path order, then position order.
    pub matches: Vec<SearchMatch>,
    /// Candidate files searched.
    pub files_searched: usize,
    /// Whether `limit` cut the result.
    pub limit_reached: bool,
    /// Deduplicated parse issues.
    pub parse_errors: Vec<String>,
}

impl SearchResult {
    /// Number of files with a match.
    pub fn files_matched(&self) -> usize {
        let mut paths: Vec<&str> = self.matches.iter().map(|m| m.path.as_str()).collect();
        paths.dedup();
        paths.len()
    }
}

/// Runs an `ast_grep` search.
///
/// # Errors
/// Validation, scope and language errors; [`AstEditError::Cancelled`].
pub fn search(
    workspace: &Workspace,
    params: &AstGrepParams,
    cancel: Option<&CancelToken>,
) -> Result<SearchResult, AstEditError> {
    if params.pattern.trim().is_empty() {
        return Err(AstEditError::EmptySearchPattern);
    }
    validate_pattern_len(&params.pattern)?;
    let paths = validate_paths(&params.paths)?;
    let lang = params.lang.as_deref().map(Lang::parse).transpose()?;
    let limit = validate_limit(params.limit)?;
    let strictness = params.strictness.unwrap_or_default();
    let candidates = collect_for_lang(workspace, &paths, lang)?;
    let files: Vec<(Candidate, Lang)> = assign_languages(lang, candidates, AST_GREP_TOOL_NAME)?;
    let mut result = SearchResult { files_searched: files.len(), ..SearchResult::default() };
    let mut rules: HashMap<Lang, Vec<Rule>> = HashMap::new();
    for (_, lang) in &files {
        rules.entry(*lang).or_insert_with(|| {
            compile_rules(
                &[(params.pattern.clone(), None)],
                *lang,
                params.selector.as_deref(),
                strictness,
                &mut result.parse_errors,
            )
        });
    }
    // A pattern that compiles for none of the files' languages would silently match nothing.
    if !rules.is_empty() && rules.values().all(Vec::is_empty) {
        return Err(AstEditError::InvalidPattern(result.parse_errors.join("; ")));
    }
    // Searched through its real name, shown with U+FFFD: say so, or the path would look like
    // one that can be read back.
    for (candidate, _) in files.iter().filter(|(c, _)| c.rel.to_str().is_none()) {
        result.parse_errors.push(format!(
            "{}: its name is not valid UTF-8; it is shown with U+FFFD in place of the bytes that are not",
            candidate.display
        ));
    }
    let stopped = par_fold_in_order(
        &files,
        |(candidate, lang)| {
            if cancel.is_some_and(CancelToken::is_cancelled) {
                return None;
            }
            Some(match rules.get(lang) {
                // One match past the limit, so that the fold sees the cut.
                Some(rules) => search_file(
                    candidate,
                    *lang,
                    rules,
                    limit.map_or(usize::MAX, |l| l.saturating_add(1)),
                ),
                None => Ok(Vec::new()),
            })
        },
        |outcome| {
            match outcome {
                None => return ControlFlow::Break(Err(AstEditError::Cancelled)),
                Some(Ok(matches)) => {
                    for m in matches {
                        if limit.is_some_and(|l| result.matches.len() >= l) {
                            result.limit_reached = true;
                            return ControlFlow::Break(Ok(()));
                        }
                        result.matches.push(m);
                    }
                }
                Some(Err(issue)) => result.parse_errors.push(issue),
            }
            ControlFlow::Continue(())
        },
    );
    if let Some(Err(err)) = stopped {
        return Err(err);
    }
    let mut seen = HashSet::new();
    result.parse_errors.retain(|e| seen.insert(e.clone()));
    Ok(result)
}

/// One file's matches; each rule's walk stops after `cap` matches, since no file gives a
/// search more than its limit (the fold keeps the first ones by position, and sees from one
/// more that the limit cut them).
fn search_file(
    candidate: &Candidate,
    lang: Lang,
    rules: &[Rule],
    cap: usize,
) -> Result<Vec<SearchMatch>, String> {
    let text = read_text(candidate)?;
    let active = active_rules(rules, &text, true);
    if active.is_empty() {
        return Ok(Vec::new());
    }
    let root = parse(&text, lang, &candidate.display)?;
    let index = LineIndex::new(&text);
    let mut res = Vec::new();
    for (rule, prune) in active {
        rule.each_match(root.root(), prune.as_ref(), cap, |m| {
            let range = m.range();
            let (line, column) = index.position(range.start);
            let (end_line, end_column) = index.position(range.end);
            let env = m.get_env();
            let mut meta_variables = BTreeMap::new();
            for var in env.get_matched_variables() {
                match var {
                    MetaVariable::Capture(name, _) => {
                        if let Some(node) = env.get_match(&name) {
                            meta_variables.insert(format!("${name}"), node.text().into_owned());
                        }
                    }
                    MetaVariable::MultiCapture(name) => {
                        let nodes = env.get_multiple_matches(&name);
                        let text = match (nodes.first(), nodes.last()) {
                            (Some(first), Some(last)) => text
                                .get(first.range().start..last.range().end)
                                .unwrap_or("")
                                .to_owned(),
                            _ => String::new(),
                        };
                        meta_variables.insert(format!("$$${name}"), text);
                    }
                    MetaVariable::Dropped(_) | MetaVariable::Multiple => {}
                }
            }
            let first = line.saturating_sub(CONTEXT_LINES).max(1);
            let last = (end_line + CONTEXT_LINES).min(index.len());
            let context = (first..=last).map(|n| (n, index.line(n).to_owned())).collect();
            res.push(SearchMatch {
                path: candidate.display.clone(),
                line,
                column,
                end_line,
                end_column,
                text: m.text().into_owned(),
                meta_variables,
                context,
            });
        })
        .map_err(|why| format!("{}: {why}", candidate.display))?;
    }
    dispose(root, candidate);
    res.sort_by_key(|m| (m.line, m.column));
    res.dedup_by(|a, b| a.line == b.line && a.column == b.column && a.text == b.text);
    Ok(res)
}
