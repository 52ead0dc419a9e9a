//! The search engine behind `ast_grep`: the same walker, languages and prefilter as the
//! rewrite engine, but each file uses its own language unless `lang` is given. Without `lang`,
//! only the languages the pattern is meant for are searched ([`crate::choose`]). A search
//! cannot break anything, so files whose syntax tree has error nodes are searched too, and
//! their matches marked; a match that spans text the parser skipped at a syntax error is not
//! shown (its text is not what the pattern says), and the file's parse issue says how many.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    ops::{ControlFlow, Range},
};

use ast_grep_core::meta_var::MetaVariable;
use serde::Serialize;
use staged_core::CancelToken;
use staged_journal::{ConfinedRoot, LineIndex};

use crate::{
    choose::meant_languages,
    compile::{Rule, active_rules, compile_rules},
    embed::{is_component, is_embeddable, script_blocks},
    engine::prune_listed,
    error::AstEditError,
    grep_tool::AST_GREP_TOOL_NAME,
    lang::{Inferred, Lang},
    parallel::par_fold_in_order,
    params::{AstGrepParams, Strictness, validate_limit, validate_paths, validate_pattern_len},
    prefilter::ErrorTrees,
    scope::{Candidate, assign_languages, collect_for_lang},
    source::{dispose, error_node_under, read_text, root_of},
    trees::{STORE_UP_TO, TreeCache, Trees},
};

/// What a file is searched as: byte ranges of it (`usize::MAX` ends the whole file), each in
/// its language.
type Segments = Vec<(Range<usize>, Lang)>;

/// One file's matches and the issue that counts those left out in text the parser skipped;
/// or the file's issue when it could not be searched.
type FileMatches = Result<(Vec<SearchMatch>, Option<String>), String>;

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
    /// Whether the match is in a file whose syntax tree has error nodes (`ast_edit` skips such
    /// files unless asked).
    pub file_has_parse_errors: bool,
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
    /// How many files with matches shown have error nodes in their syntax tree.
    pub files_with_parse_errors: usize,
    /// When `limit` cut the result: the matches left out, and the files they are in (the
    /// files after the cut are still searched, to count them).
    pub left_out: Option<(usize, usize)>,
}

impl SearchResult {
    /// Number of files with a match.
    pub(crate) fn files_matched(&self) -> usize {
        let mut paths: Vec<&str> = self.matches.iter().map(|m| m.path.as_str()).collect();
        paths.dedup();
        paths.len()
    }
}

/// Runs an `ast_grep` search.
///
/// # Errors
/// Validation, scope and language errors; [`AstEditError::Cancelled`].
///
/// With a warm `index`, the files are listed from it and those whose trigrams rule the
/// pattern out are not read (the result is the same; see [`crate::warm::WarmIndex`]).
pub fn search(
    workspace: &ConfinedRoot,
    params: &AstGrepParams,
    index: Option<&crate::warm::WarmIndex>,
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
    let started = std::time::Instant::now();
    let listing = index.and_then(crate::warm::WarmIndex::listing);
    let settled = started.elapsed();
    let candidates = collect_for_lang(workspace, &paths, lang, listing.as_deref())?;
    let (candidates, pruned) = prune_listed(candidates, lang, |lang| {
        let pattern = [(params.pattern.clone(), None)];
        compile_rules(
            &pattern,
            lang,
            params.selector.as_deref(),
            strictness,
            ERROR_TREES,
            &mut Vec::new(),
        )
    });
    let collected = started.elapsed();
    let assigned: Vec<(Candidate, Lang)> = assign_languages(lang, candidates, AST_GREP_TOOL_NAME)?;
    let assigned_at = started.elapsed();
    let mut files = segments_of(assigned, lang);
    if lang.is_none() {
        keep_meant(&mut files, params);
    }
    let mut result =
        SearchResult { files_searched: files.len() + pruned, ..SearchResult::default() };
    let rules = rules_per_lang(&files, params, strictness, &mut result.parse_errors)?;
    // Searched through its real name, shown with U+FFFD: say so, or the path would look like
    // one that can be read back.
    for (candidate, _) in files.iter().filter(|(c, _)| c.rel.to_str().is_none()) {
        result.parse_errors.push(format!(
            "{}: its name is not valid UTF-8; it is shown with U+FFFD in place of the bytes that are not",
            candidate.display
        ));
    }
    let progress = workspace.progress();
    if let Some(progress) = progress {
        progress.begin(staged_core::Phase::Searching, (files.len() + pruned) as u64);
    }
    // What the index rules out is counted as searched, as the prefilter's skips are.
    let listed = files.len() + pruned;
    files.retain(|(candidate, segments)| {
        segments.iter().any(|(_, lang)| {
            rules.get(lang).is_some_and(|rules| crate::engine::may_match(candidate, rules))
        })
    });
    if let Some(progress) = progress {
        progress.advance((listed - files.len()) as u64);
    }
    let filtered = started.elapsed();
    let parsed = std::sync::atomic::AtomicUsize::new(0);
    let trees =
        index.map(|index| Trees { cache: index.trees(), store: files.len() <= STORE_UP_TO });
    let stopped = par_fold_in_order(
        &files,
        |(candidate, segments)| {
            if cancel.is_some_and(CancelToken::is_cancelled) {
                return None;
            }
            // Every match: those past the limit are counted.
            Some(search_file(candidate, segments, &rules, usize::MAX, trees, &parsed))
        },
        |outcome| {
            if let Some(progress) = progress {
                progress.advance(1);
            }
            fold_matches(&mut result, outcome, limit)
        },
    );
    if let Some(err) = stopped {
        return Err(err);
    }
    result.limit_reached = result.left_out.is_some();
    let mut seen = HashSet::new();
    result.parse_errors.retain(|e| seen.insert(e.clone()));
    tracing::debug!(
        warm = listing.is_some(),
        listed,
        kept = files.len(),
        parsed = parsed.into_inner(),
        ?settled,
        ?collected,
        ?assigned_at,
        ?filtered,
        total = ?started.elapsed(),
        "ast_grep search: where the time went"
    );
    Ok(result)
}

/// What each file is searched as: its whole text in its language, and, for a component
/// file, its code blocks in theirs (of `lang` only, when it is given).
fn segments_of(assigned: Vec<(Candidate, Lang)>, lang: Option<Lang>) -> Vec<(Candidate, Segments)> {
    let mut files: Vec<(Candidate, Segments)> = Vec::with_capacity(assigned.len());
    for (candidate, assigned_lang) in assigned {
        let own = match candidate.inferred() {
            Inferred::Lang(own) => own,
            _ => assigned_lang,
        };
        let whole = 0..usize::MAX;
        let blocks = |want: Option<Lang>| -> Vec<(Range<usize>, Lang)> {
            let Ok(text) = read_text(&candidate) else { return Vec::new() };
            let mut blocks = script_blocks(&text, own);
            blocks.retain(|(_, l)| want.is_none_or(|want| want == *l));
            blocks
        };
        let segments = match lang {
            None if is_component(own) => {
                let mut segments = blocks(None);
                segments.push((whole, own));
                segments
            }
            Some(want) if is_component(own) && want != own && is_embeddable(want) => {
                blocks(Some(want))
            }
            _ => vec![(whole, assigned_lang)],
        };
        files.push((candidate, segments));
    }
    files
}

/// With no language given, drops the segments (and then the files) of the languages the
/// pattern is not meant for: they are not searched, and report nothing.
fn keep_meant(files: &mut Vec<(Candidate, Segments)>, params: &AstGrepParams) {
    let mut found: Vec<Lang> = files.iter().flat_map(|(_, s)| s.iter().map(|(_, l)| *l)).collect();
    found.sort_by_key(|l| l.name());
    found.dedup();
    let asked: Vec<Lang> = files
        .iter()
        .filter(|(c, _)| c.explicit)
        .flat_map(|(_, s)| s.iter().map(|(_, l)| *l))
        .collect();
    let meant =
        meant_languages(&found, &asked, &[params.pattern.as_str()], params.selector.as_deref());
    // A language the pattern is not meant for is not searched, and reports nothing.
    for (_, segments) in files.iter_mut() {
        segments.retain(|(_, l)| meant.contains(l));
    }
    files.retain(|(_, segments)| !segments.is_empty());
}

/// The pattern compiled for each language of `files`; the parse errors of each go to
/// `parse_errors`.
///
/// # Errors
/// [`AstEditError::InvalidPattern`] when it compiles for none of them.
fn rules_per_lang(
    files: &[(Candidate, Segments)],
    params: &AstGrepParams,
    strictness: Strictness,
    parse_errors: &mut Vec<String>,
) -> Result<HashMap<Lang, Vec<Rule>>, AstEditError> {
    let mut rules: HashMap<Lang, Vec<Rule>> = HashMap::new();
    for lang in files.iter().flat_map(|(_, s)| s.iter().map(|(_, l)| *l)) {
        rules.entry(lang).or_insert_with(|| {
            compile_rules(
                &[(params.pattern.clone(), None)],
                lang,
                params.selector.as_deref(),
                strictness,
                ERROR_TREES,
                parse_errors,
            )
        });
    }
    // A pattern that compiles for none of the files' languages would silently match nothing.
    if !rules.is_empty() && rules.values().all(Vec::is_empty) {
        return Err(AstEditError::InvalidPattern(parse_errors.join("; ")));
    }
    Ok(rules)
}

/// Folds one file's outcome into `result`: its matches up to `limit`, the rest counted.
fn fold_matches(
    result: &mut SearchResult,
    outcome: Option<FileMatches>,
    limit: Option<usize>,
) -> ControlFlow<AstEditError> {
    match outcome {
        None => return ControlFlow::Break(AstEditError::Cancelled),
        Some(Ok((matches, left_out))) => {
            result.parse_errors.extend(left_out);
            let room = limit.map_or(usize::MAX, |l| l.saturating_sub(result.matches.len()));
            // Counted where its matches are shown (and marked).
            if room > 0 && matches.first().is_some_and(|m| m.file_has_parse_errors) {
                result.files_with_parse_errors += 1;
            }
            let beyond = matches.len().saturating_sub(room);
            if beyond > 0 || (result.left_out.is_some() && !matches.is_empty()) {
                let (count, files) = result.left_out.get_or_insert((0, 0));
                *count += beyond;
                *files += 1;
            }
            result.matches.extend(matches.into_iter().take(room));
        }
        Some(Err(issue)) => result.parse_errors.push(issue),
    }
    ControlFlow::Continue(())
}

/// What a search does with files whose syntax tree has errors.
const ERROR_TREES: ErrorTrees = ErrorTrees::SearchedWithoutSkippedText;

/// One file's matches, and the parse issue that says how many were left out because they
/// span text the parser skipped: in each of its `segments` (the whole file, or the code blocks
/// of a component file, see [`crate::embed`]), parsed in its language and searched with that
/// language's rules. Each rule's walk stops after `cap` matches.
fn search_file(
    candidate: &Candidate,
    segments: &[(Range<usize>, Lang)],
    rules: &HashMap<Lang, Vec<Rule>>,
    cap: usize,
    trees: Option<Trees<'_>>,
    parsed: &std::sync::atomic::AtomicUsize,
) -> FileMatches {
    let text = read_text(candidate)?;
    let index = LineIndex::new(&text);
    let mut res = Vec::new();
    let mut across_skipped = 0;
    for (segment, lang) in segments {
        // `usize::MAX` ends the whole file.
        let segment = segment.start..segment.end.min(text.len());
        let (Some(part), Some(rules)) = (text.get(segment.clone()), rules.get(lang)) else {
            continue;
        };
        let base = segment.start;
        let active = active_rules(rules, part, true);
        if active.is_empty() {
            continue;
        }
        parsed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tree = TreeCache::parse(trees, candidate, base, part, *lang)
            .map_err(|err| format!("{}: {err}", candidate.display))?;
        let broken = tree.root_node().has_error();
        let root = root_of(part, *lang, tree);
        for (rule, prune) in active {
            rule.each_match(root.root(), prune.as_ref(), cap, |m| {
                if broken && spans_skipped_text(m.get_inner_node()) {
                    across_skipped += 1;
                    return;
                }
                let range = m.range();
                let (line, column) = index.position(base + range.start);
                let (end_line, end_column) = index.position(base + range.end);
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
                                (Some(first), Some(last)) => part
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
                    file_has_parse_errors: broken,
                });
            })
            .map_err(|why| format!("{}: {why}", candidate.display))?;
        }
        dispose(root, candidate);
    }
    res.sort_by_key(|m| (m.line, m.column));
    res.dedup_by(|a, b| a.line == b.line && a.column == b.column && a.text == b.text);
    // One mark for the file: a component file's blocks are one file.
    if res.iter().any(|m| m.file_has_parse_errors) {
        res.iter_mut().for_each(|m| m.file_has_parse_errors = true);
    }
    let shown = &candidate.display;
    let left_out = match across_skipped {
        0 => None,
        1 => Some(format!(
            "{shown}: a match is not shown: it spans text the parser skipped at a syntax error"
        )),
        n => Some(format!(
            "{shown}: {n} matches are not shown: they span text the parser skipped at a syntax error"
        )),
    };
    Ok((res, left_out))
}

/// Whether `node` holds text the parser skipped at a syntax error (an ERROR node that is an
/// extra, which ast-grep steps over like a comment).
fn spans_skipped_text(node: tree_sitter::Node<'_>) -> bool {
    error_node_under(node, |at| at.is_error() && at.is_extra())
}
