//! The rewrite engine: computes an [`EditPreview`] for validated `ast_edit` arguments. It
//! reads files and never writes them.
//!
//! Files are processed in parallel ([`crate::parallel`]) and their results folded in path order, so
//! the replacement and file caps cut at the same place on every run. A cap never hides what it
//! cut: the files after it are still searched, only counted ([`LeftOut`]). Nested matches
//! compose (see [`crate::nesting`]); two different rewrites of the same code are an error here,
//! at preview time, so that a preview that succeeds always applies.
//!
//! A file whose syntax tree has error nodes is skipped, as the reference skips it, and counted
//! ([`EditPreview::error_files_skipped`]); with `include_parse_errors` it is rewritten where
//! the matched node holds no error or missing node ([`EditPreview::error_files`]).

use std::{
    collections::HashSet,
    ops::ControlFlow,
    sync::atomic::{AtomicBool, Ordering},
};

use staged_core::CancelToken;
use staged_journal::ConfinedRoot;

use crate::{
    action::AST_EDIT_TOOL_NAME,
    choose::meant_languages,
    compile::{Rule, compile_rules},
    edits::{replacements, truncate_to_replacements},
    embed::{is_component, is_embeddable, script_blocks},
    error::AstEditError,
    lang::Lang,
    parallel::par_fold_in_order,
    params::ValidatedEdit,
    prefilter::ErrorTrees,
    scope::{Candidate, assign_languages, collect_for_lang},
    source::read_text,
    trees::{STORE_UP_TO, Trees},
    warm::WarmIndex,
};

mod file;
mod preview;

pub(crate) use file::replayed_file;
use file::{Outcome, Touched, finish_file, process_file};
pub(crate) use preview::Scan;
pub use preview::{
    Cap, EditPreview, EngineOptions, ErrorFile, FileContents, FileEdits, LangChoice, LeftOut,
    NestedLeft,
};

/// Computes the preview with default options.
///
/// # Errors
/// Scope, language and overlap errors; see [`AstEditError`].
pub fn compute_preview(
    workspace: &ConfinedRoot,
    params: &ValidatedEdit,
    cancel: Option<&CancelToken>,
) -> Result<EditPreview, AstEditError> {
    compute_preview_with(workspace, params, EngineOptions::default(), None, cancel)
}

/// Computes the preview. With a warm `index`, the files are listed from it and those whose
/// trigrams rule the rules out are not read (the preview is the same; see [`WarmIndex`]).
///
/// # Errors
/// Scope, language and overlap errors; [`staged_journal::JournalError::ProtectedPath`] (as
/// [`AstEditError::Journal`]) when a rewrite would change a protected path;
/// [`AstEditError::Cancelled`] when `cancel` fired.
pub fn compute_preview_with(
    workspace: &ConfinedRoot,
    params: &ValidatedEdit,
    options: EngineOptions,
    index: Option<&WarmIndex>,
    cancel: Option<&CancelToken>,
) -> Result<EditPreview, AstEditError> {
    let clock = std::time::Instant::now();
    let listing = index.and_then(WarmIndex::listing);
    let (planned, mut preview) = plan(workspace, params, options, listing.as_deref())?;
    if planned.rules.is_empty() {
        return Ok(preview);
    }
    let filtered = clock.elapsed();
    let store = planned.candidates.len() <= STORE_UP_TO;
    let trees = index.map(|index| Trees { cache: index.trees(), store });
    search_files(workspace, &planned, params, options, trees, cancel, &mut preview)?;
    // A rewrite of `.git/` or of a coding agent's control files is never staged.
    for file in &preview.files {
        if let Err(err) = workspace.check_writable(&file.rel, &file.path) {
            return Err(err.into());
        }
    }
    let mut seen = HashSet::new();
    preview.parse_errors.retain(|e| seen.insert(e.clone()));
    tracing::debug!(
        warm = listing.is_some(),
        files_searched = preview.files_searched,
        kept = planned.candidates.len(),
        ?filtered,
        total = ?clock.elapsed(),
        "ast_edit preview: where the time went"
    );
    Ok(preview)
}

/// The files a preview reads, each with the language its code blocks are in when it is a
/// component file.
type Found = (Candidate, Option<Lang>);

/// What a preview searches: its candidate files and its compiled rules.
struct Planned {
    candidates: Vec<Found>,
    rules: Vec<Rule>,
}

/// Lists the candidates (from the warm `listing` when there is one), drops those the index
/// and the prefilter rule out, chooses the language and compiles the rules; with them, the
/// preview so far (its scan, its language, what counts as searched, the parse errors found).
fn plan(
    workspace: &ConfinedRoot,
    params: &ValidatedEdit,
    options: EngineOptions,
    listing: Option<&crate::warm::Listing>,
) -> Result<(Planned, EditPreview), AstEditError> {
    let started = std::time::SystemTime::now();
    let candidates = collect_for_lang(workspace, &params.paths, params.lang, listing)?;
    let spec: Vec<(String, Option<String>)> =
        params.rules.iter().map(|(p, o)| (p.clone(), Some(o.clone()))).collect();
    // The scan's digest and the index's filters each take a few milliseconds on a big tree.
    let (scan, ruled_out) = rayon::join(
        || Scan::of(&candidates, started),
        || match options.prefilter {
            true => ruled_out(&candidates, params.lang, |lang| {
                compile_rules(
                    &spec,
                    lang,
                    params.selector.as_deref(),
                    params.strictness,
                    error_trees(params),
                    &mut Vec::new(),
                )
            }),
            false => None,
        },
    );
    let (candidates, pruned) = drop_ruled_out(candidates, ruled_out);
    let (lang, candidates, lang_choice) = select_language(params, candidates)?;
    // A preview names its files in UTF-8 (the diff, the payload, the journal), so a file whose
    // name is not UTF-8 cannot be rewritten: it is reported, not skipped silently.
    let (candidates, unnamed): (Vec<Found>, Vec<Found>) =
        candidates.into_iter().partition(|(c, _)| c.rel.to_str().is_some());
    let mut parse_errors: Vec<String> = unnamed
        .iter()
        .map(|(c, _)| {
            format!(
                "{}: skipped: its name is not valid UTF-8 (shown with U+FFFD), and ast_edit rewrites only files it can name; rename it to rewrite it",
                c.display
            )
        })
        .collect();
    let rules = compile_rules(
        &spec,
        lang,
        params.selector.as_deref(),
        params.strictness,
        error_trees(params),
        &mut parse_errors,
    );
    // A rewrite whose pattern does not compile would silently match nothing: refuse it.
    if parse_errors.len() > unnamed.len() {
        return Err(AstEditError::InvalidPattern(parse_errors[unnamed.len()..].join("; ")));
    }
    let files_searched = candidates.len() + pruned;
    // What the index rules out is counted as searched, as the prefilter's skips are.
    let mut candidates = candidates;
    if options.prefilter {
        candidates.retain(|(candidate, _)| may_match(candidate, &rules));
    }
    let preview = EditPreview {
        lang,
        files: Vec::new(),
        files_searched,
        limit_reached: false,
        left_out: None,
        parse_errors,
        error_files_skipped: 0,
        error_files: Vec::new(),
        nested_left: Vec::new(),
        lang_choice,
        scan,
    };
    Ok((Planned { candidates, rules }, preview))
}

/// Searches `candidates` in parallel and folds each file's outcome into `preview` in path
/// order, until a cap cuts it (the files after it are only counted).
fn search_files(
    workspace: &ConfinedRoot,
    Planned { candidates, rules }: &Planned,
    params: &ValidatedEdit,
    options: EngineOptions,
    trees: Option<Trees<'_>>,
    cancel: Option<&CancelToken>,
    preview: &mut EditPreview,
) -> Result<(), AstEditError> {
    let lang = preview.lang;
    let files_searched = preview.files_searched;
    let progress = workspace.progress();
    if let Some(progress) = progress {
        // What the index ruled out counts as searched at once.
        progress.begin(staged_core::Phase::Searching, files_searched as u64);
        progress.advance((files_searched - candidates.len()) as u64);
    }
    let mut total = 0usize;
    // Set once a cap cut the preview: the files after it are only counted.
    let capped = AtomicBool::new(false);
    let stopped = par_fold_in_order(
        candidates.as_slice(),
        |(candidate, host)| {
            if cancel.is_some_and(CancelToken::is_cancelled) {
                return Outcome::Cancelled;
            }
            let options = if capped.load(Ordering::Relaxed) {
                EngineOptions { diff: false, keep_contents: false, ..options }
            } else {
                options
            };
            process_file(candidate, *host, lang, rules, options, params, trees)
        },
        |outcome| {
            if let Some(progress) = progress {
                progress.advance(1);
            }
            let flow = fold(preview, &mut total, outcome, params, options);
            if preview.left_out.is_some() {
                capped.store(true, Ordering::Relaxed);
            }
            flow
        },
    );
    if let Some(Err(err)) = stopped {
        return Err(err);
    }
    preview.limit_reached = preview.left_out.is_some();
    Ok(())
}

/// What a preview does with files whose syntax tree has errors: skips them, or (with
/// `include_parse_errors`) counts every match in them.
fn error_trees(params: &ValidatedEdit) -> ErrorTrees {
    match params.include_parse_errors {
        false => ErrorTrees::Skipped,
        true => ErrorTrees::Searched,
    }
}

/// With the language given, drops the walked files named as that language whose warm index
/// filters rule out every one of `rules` (compiled only if some file has filters), before
/// each file is assigned its language: the files [`may_match`] would drop later, counted
/// (they count as searched). A file named explicitly, a component file (searched in its code
/// blocks) and a file whose name is not UTF-8 (reported) are kept.
pub(crate) fn prune_listed(
    candidates: Vec<Candidate>,
    lang: Option<Lang>,
    rules: impl FnOnce(Lang) -> Vec<Rule>,
) -> (Vec<Candidate>, usize) {
    let ruled_out = ruled_out(&candidates, lang, rules);
    drop_ruled_out(candidates, ruled_out)
}

/// Which of `candidates` [`prune_listed`] drops, if any: looked up on every core (each
/// lookup in a file's filters is a cache miss, and a big tree lists tens of thousands).
fn ruled_out(
    candidates: &[Candidate],
    lang: Option<Lang>,
    rules: impl FnOnce(Lang) -> Vec<Rule>,
) -> Option<Vec<bool>> {
    use rayon::prelude::*;
    let lang = lang.filter(|_| candidates.iter().any(|c| c.grams.is_some()))?;
    let rules = rules(lang);
    if rules.is_empty() {
        return None;
    }
    Some(
        candidates
            .par_iter()
            .with_min_len(256)
            .map(|c| {
                !(c.explicit
                    || c.inferred() != crate::lang::Inferred::Lang(lang)
                    || c.rel.to_str().is_none()
                    || may_match(c, &rules))
            })
            .collect(),
    )
}

/// `candidates` without those [`ruled_out`] marked, and how many those were.
fn drop_ruled_out(
    candidates: Vec<Candidate>,
    ruled_out: Option<Vec<bool>>,
) -> (Vec<Candidate>, usize) {
    let Some(ruled_out) = ruled_out else { return (candidates, 0) };
    let listed = candidates.len();
    let kept: Vec<Candidate> =
        candidates.into_iter().zip(ruled_out).filter(|(_, out)| !out).map(|(c, _)| c).collect();
    let pruned = listed - kept.len();
    (kept, pruned)
}

/// Whether `candidate` may hold a match of one of `rules`: `false` only when the trigrams a
/// warm index knows of it rule out a needle of each.
pub(crate) fn may_match(candidate: &Candidate, rules: &[Rule]) -> bool {
    candidate.grams.as_ref().is_none_or(|grams| rules.iter().any(|r| r.needles.may_occur_in(grams)))
}

/// Adds one file's outcome to the preview, in path order; breaks with the error when the
/// preview fails. Once a cap cut the preview, a touched file is only counted in
/// [`EditPreview::left_out`].
fn fold(
    preview: &mut EditPreview,
    total: &mut usize,
    outcome: Outcome,
    params: &ValidatedEdit,
    options: EngineOptions,
) -> ControlFlow<Result<(), AstEditError>> {
    match outcome {
        Outcome::NoMatch => {}
        Outcome::Cancelled => return ControlFlow::Break(Err(AstEditError::Cancelled)),
        Outcome::Issue(issue) => preview.parse_errors.push(issue),
        Outcome::ErrorSkipped(issue) => {
            preview.parse_errors.push(issue);
            preview.error_files_skipped += 1;
        }
        Outcome::Overlap(location) => match &mut preview.left_out {
            // Among edits this preview does not make: they cannot be counted.
            Some(left) => left.exact = false,
            None => return ControlFlow::Break(Err(AstEditError::Overlap { location })),
        },
        Outcome::Touched(touched) => {
            let Touched { mut file, original, beyond, nested, error_file } = *touched;
            let count = replacements(&file.edits);
            if count + beyond == 0 {
                // A file with error nodes whose every match holds one.
                if let (None, Some(error_file)) = (&preview.left_out, error_file) {
                    preview.error_files.push(error_file);
                }
                return ControlFlow::Continue(());
            }
            if let Some(left) = &mut preview.left_out {
                left.files += 1;
                left.replacements += count + beyond;
                return ControlFlow::Continue(());
            }
            if let Some(max) = params.max_files
                && preview.files.len() >= max
            {
                preview.left_out = Some(LeftOut {
                    cap: Cap::MaxFiles(max),
                    files: 1,
                    replacements: count + beyond,
                    exact: true,
                });
                return ControlFlow::Continue(());
            }
            let mut cut = beyond;
            if let Some(limit) = params.limit {
                let room = limit.saturating_sub(*total);
                if count > room {
                    // The file's diff and contents were computed for more edits than there is
                    // room for: compute them again for the edits kept.
                    truncate_to_replacements(&mut file.edits, room);
                    cut += count - replacements(&file.edits);
                    let original = match (original, file.contents.take()) {
                        (Some(original), _) => Some(original),
                        (None, Some(contents)) => Some(contents.original),
                        (None, None) => None,
                    };
                    if let Some(original) = original
                        && let Err(err) = finish_file(&mut file, original, options)
                    {
                        return ControlFlow::Break(Err(err));
                    }
                }
                if cut > 0 {
                    preview.left_out = Some(LeftOut {
                        cap: Cap::Limit(limit),
                        files: 1,
                        replacements: cut,
                        exact: true,
                    });
                }
            }
            let kept = replacements(&file.edits);
            *total += kept;
            if let Some(mut error_file) = error_file {
                error_file.replacements = kept;
                preview.error_files.push(error_file);
            }
            if !file.edits.is_empty() {
                // Only the notes of edits made: a cut file's later ones are left out with it.
                let last = file.edits.last().map_or((0, 0), |e| (e.start_line, e.start_column));
                preview.nested_left.extend(nested.into_iter().filter(|n| n.outer <= last));
                preview.files.push(file);
            }
        }
    }
    ControlFlow::Continue(())
}

/// A candidate and, for a component file searched in its code blocks, its own language.
type Kept = (Candidate, Option<Lang>);

/// Picks the one language of an `ast_edit` call and the candidates it keeps: `lang`, or the
/// one language of the paths, or the one of theirs the patterns are meant for (see
/// [`crate::choose`]), which is then said in the text. Component files (see [`crate::embed`])
/// count with the languages of their code blocks, and are kept, for those blocks, by a call
/// in one of them.
fn select_language(
    params: &ValidatedEdit,
    candidates: Vec<Candidate>,
) -> Result<(Lang, Vec<Kept>, Option<LangChoice>), AstEditError> {
    let assigned = assign_languages(params.lang, candidates, AST_EDIT_TOOL_NAME)?;
    let own = |c: &Candidate| match c.inferred() {
        crate::lang::Inferred::Lang(found) => Some(found),
        _ => None,
    };
    if let Some(lang) = params.lang {
        let kept = assigned
            .into_iter()
            .map(|(c, _)| {
                let host = own(&c).filter(|&f| f != lang && is_component(f) && is_embeddable(lang));
                (c, host)
            })
            .collect();
        return Ok((lang, kept, None));
    }
    // Each language found, with its files: a component file counts in its own language and
    // in those of its code blocks.
    let mut counts: Vec<(Lang, usize)> = Vec::new();
    let mut count = |lang: Lang| match counts.iter_mut().find(|(l, _)| *l == lang) {
        Some((_, n)) => *n += 1,
        None => counts.push((lang, 1)),
    };
    let mut asked = Vec::new();
    for (candidate, lang) in &assigned {
        count(*lang);
        if candidate.explicit {
            asked.push(*lang);
        }
        if is_component(*lang) {
            let Ok(text) = read_text(candidate) else { continue };
            let mut blocks: Vec<Lang> =
                script_blocks(&text, *lang).into_iter().map(|(_, l)| l).collect();
            blocks.sort();
            blocks.dedup();
            blocks.into_iter().for_each(&mut count);
        }
    }
    counts.sort_by_key(|(l, _)| l.name());
    let found: Vec<Lang> = counts.iter().map(|(l, _)| *l).collect();
    let files_in = |lang: Lang| counts.iter().find(|(l, _)| *l == lang).map_or(0, |(_, n)| *n);
    let patterns: Vec<&str> = params.rules.iter().map(|(p, _)| p.as_str()).collect();
    let meant = meant_languages(&found, &asked, &patterns, params.selector.as_deref());
    match meant.as_slice() {
        [] => Err(AstEditError::LangRequiredNoFiles { tool: AST_EDIT_TOOL_NAME }),
        [lang] => {
            let lang = *lang;
            let embedded = is_embeddable(lang);
            let searched = |l: Lang| l == lang || (embedded && is_component(l));
            let choice = (found.len() > 1).then(|| LangChoice {
                left_out: found
                    .iter()
                    .filter(|l| !searched(**l))
                    .map(|l| (*l, files_in(*l)))
                    .collect(),
            });
            let kept = assigned
                .into_iter()
                .filter(|(_, l)| searched(*l))
                .map(|(c, l)| (c, (l != lang).then_some(l)))
                .collect();
            Ok((lang, kept, choice.filter(|c| !c.left_out.is_empty())))
        }
        many => Err(AstEditError::LangRequiredMixed(
            many.iter().map(|lang| (lang.name().to_owned(), files_in(*lang))).collect(),
        )),
    }
}
