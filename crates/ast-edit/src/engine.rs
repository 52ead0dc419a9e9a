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
    ops::{ControlFlow, Range},
    sync::atomic::{AtomicBool, Ordering},
};

use staged_core::CancelToken;
use staged_fs::RelPath;
use staged_journal::{ConfinedRoot, FileWrite, Hasher, LineIndex, fingerprint};
use tree_sitter::Tree;

use crate::{
    action::AST_EDIT_TOOL_NAME,
    choose::meant_languages,
    compile::{Rule, active_rules, compile_rules},
    edits::{
        Edit, PositionCursor, RawEdit, blank_lines_stay_blank, normalize, replacements,
        truncate_to_replacements,
    },
    embed::{is_component, is_embeddable, script_blocks},
    error::AstEditError,
    lang::Lang,
    nesting::{Forest, Found, Rematch, compose, plan},
    parallel::par_fold_in_order,
    params::ValidatedEdit,
    prefilter::ErrorTrees,
    preview_diff::file_diff_indexed,
    scope::{Candidate, assign_languages, collect_for_lang},
    source::{dispose, edit_tree, parse_error_issue, parse_tree, read_text, root_of},
    trees::{STORE_UP_TO, TreeCache, Trees},
    warm::WarmIndex,
};

/// Knobs that change how much the engine keeps, and how it gets there; never which edits it
/// finds.
#[derive(Debug, Clone, Copy)]
pub struct EngineOptions {
    /// Skip parsing files that lack a pattern's literal texts.
    pub prefilter: bool,
    /// Compute each touched file's unified diff ([`FileEdits::diff`]).
    pub diff: bool,
    /// Keep each touched file's original and rewritten text ([`FileEdits::contents`]).
    pub keep_contents: bool,
}

impl EngineOptions {
    /// What a preview needs: diffs, not contents (memory stays bounded on big scopes).
    pub fn preview() -> EngineOptions {
        EngineOptions { prefilter: true, diff: true, keep_contents: false }
    }

    /// What an apply needs: contents, not diffs.
    pub fn apply() -> EngineOptions {
        EngineOptions { prefilter: true, diff: false, keep_contents: true }
    }
}

impl Default for EngineOptions {
    /// Everything: diffs and contents.
    fn default() -> Self {
        EngineOptions { prefilter: true, diff: true, keep_contents: true }
    }
}

/// The replacements one `ast_edit` call would make.
#[derive(Debug, Clone)]
pub struct EditPreview {
    /// The language used.
    pub lang: Lang,
    /// Touched files, sorted by path.
    pub files: Vec<FileEdits>,
    /// How many candidate files were searched.
    pub files_searched: usize,
    /// Whether `limit` or `max_files` cut the result.
    pub limit_reached: bool,
    /// What the cap left out, when one cut the result.
    pub left_out: Option<LeftOut>,
    /// Deduplicated parse issues, in path order (uncapped).
    pub parse_errors: Vec<String>,
    /// How many files were skipped because their syntax tree has error nodes (each is also a
    /// parse issue).
    pub error_files_skipped: usize,
    /// With `include_parse_errors`: the files with error nodes that were searched, in path
    /// order, with their edits and the matches left alone.
    pub error_files: Vec<ErrorFile>,
    /// Outer matches rewritten alone, each with the nested matches it left as they were.
    pub nested_left: Vec<NestedLeft>,
    /// How the language was chosen, when `lang` was not given and the paths hold several.
    pub lang_choice: Option<LangChoice>,
    /// The candidates as the walk found them, when it can prove an apply nothing changed.
    pub(crate) scan: Option<Scan>,
}

/// What a preview's walk found, as one digest: each candidate's path and identity (device,
/// inode, change time) and size. An apply whose walk gives the same digest finds every
/// candidate as the preview read it (the kernel sets a file's change time on every write,
/// and nobody can set it back), so the preview's edits are the ones a fresh search would
/// make, and need not be searched for again.
///
/// A file changed less than [`RECENT`] before the walk could have been changed again within
/// the same tick of the kernel's coarse clock without its change time moving (the "racily
/// clean" files of git): then there is no scan, and an apply searches again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    pub(crate) digest: String,
}

/// How recent a change must be for a walk to prove nothing.
const RECENT: std::time::Duration = std::time::Duration::from_secs(1);

impl Scan {
    /// The scan of `candidates`, listed by a walk that started at `started`; `None` when one
    /// has no identity or changed less than [`RECENT`] before.
    pub(crate) fn of(candidates: &[Candidate], started: std::time::SystemTime) -> Option<Scan> {
        let since = started.checked_sub(RECENT)?.duration_since(std::time::UNIX_EPOCH).ok()?;
        let mut hasher = Hasher::default();
        for candidate in candidates {
            let id = candidate.identity?;
            let changed = std::time::Duration::new(
                u64::try_from(id.ctime).ok()?,
                u32::try_from(id.ctime_nsec).ok()?,
            );
            if changed >= since {
                return None;
            }
            hasher.part(candidate.display.as_bytes());
            hasher.part(candidate.rel.as_path().as_os_str().as_encoded_bytes());
            for n in [
                id.dev,
                id.ino,
                candidate.size,
                changed.as_secs(),
                u64::from(changed.subsec_nanos()),
            ] {
                hasher.part(&n.to_le_bytes());
            }
            hasher.part(&[u8::from(candidate.explicit)]);
        }
        Some(Scan { digest: hasher.finish() })
    }
}

/// Which cap cut a preview, and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Cap {
    /// `limit`: the most replacements.
    Limit(usize),
    /// `max_files`: the most files touched.
    MaxFiles(usize),
}

/// What a cap left out: the files after the cut are still searched, to count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeftOut {
    /// The cap that cut.
    pub cap: Cap,
    /// Files with replacements left out (with `limit`, the file cut in the middle included).
    pub files: usize,
    /// Replacements left out.
    pub replacements: usize,
    /// `false` when some files left out could not be counted (their edits overlap): then there
    /// are at least this many.
    pub exact: bool,
}

/// A file with error nodes that `include_parse_errors` searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorFile {
    /// Display path.
    pub path: String,
    /// Replacements made in it.
    pub replacements: usize,
    /// Matches left alone because their node holds an error or missing node.
    pub matches_skipped: usize,
}

/// An outer match that no longer matched once the matches nested in it were rewritten: it was
/// rewritten alone, from the original text, and those matches were left as they were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedLeft {
    /// Display path.
    pub path: String,
    /// Line and column of the outer match.
    pub outer: (usize, usize),
    /// The outer match's pattern.
    pub pattern: String,
    /// Line and column of each nested match left as it was.
    pub inner: Vec<(usize, usize)>,
    /// What to change, when something can be changed: the statement's `;` the rewrite drops.
    pub hint: Option<String>,
}

/// The language a call without `lang` inferred from paths holding several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LangChoice {
    /// The languages of the paths left out, each with its file count.
    pub left_out: Vec<(Lang, usize)>,
}

/// The replacements in one file.
#[derive(Debug, Clone)]
pub struct FileEdits {
    /// Display path (relative to the workspace root).
    pub path: String,
    /// Path relative to the workspace root.
    pub rel: RelPath,
    /// SHA-256 of the bytes read.
    pub fingerprint: String,
    /// The edits, sorted by position.
    pub edits: Vec<Edit>,
    /// The file's unified diff, when [`EngineOptions::diff`] asked for it.
    pub diff: Option<String>,
    /// The text read and the text after the edits, when [`EngineOptions::keep_contents`]
    /// asked for them.
    pub contents: Option<FileContents>,
}

/// A touched file's text before and after its edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContents {
    /// The text read.
    pub original: String,
    /// The text after the edits.
    pub updated: String,
}

impl FileEdits {
    /// The rewritten text, when contents were kept.
    pub fn updated(&self) -> Option<&str> {
        self.contents.as_ref().map(|c| c.updated.as_str())
    }
}

impl EditPreview {
    /// The writes that make this preview real, one per touched file; `None` when the
    /// rewritten contents were not kept (see [`EngineOptions`]).
    pub fn writes(&self) -> Option<Vec<FileWrite>> {
        self.files
            .iter()
            .map(|f| {
                Some(FileWrite {
                    target: f.rel.clone(),
                    expected_fingerprint: f.fingerprint.clone(),
                    contents: f.updated()?.to_owned(),
                })
            })
            .collect()
    }

    /// Total replacements over all files.
    pub fn total_replacements(&self) -> usize {
        self.files.iter().map(|f| replacements(&f.edits)).sum()
    }

    /// Number of files with at least one replacement.
    pub fn files_touched(&self) -> usize {
        self.files.len()
    }

    /// A digest of every edit (path, range, inserted text): equal digests mean equal edits.
    pub fn edits_digest(&self) -> String {
        let mut hasher = Hasher::default();
        for file in &self.files {
            hasher.part(file.path.as_bytes());
            for edit in &file.edits {
                hasher.part(&(edit.byte_start as u64).to_le_bytes());
                hasher.part(&(edit.byte_end as u64).to_le_bytes());
                hasher.part(edit.after.as_bytes());
            }
        }
        hasher.finish()
    }
}

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
    let started = std::time::SystemTime::now();
    let clock = std::time::Instant::now();
    let listing = index.and_then(WarmIndex::listing);
    let candidates = collect_for_lang(workspace, &params.paths, params.lang, listing.as_deref())?;
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
    type Found = (Candidate, Option<Lang>);
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
    let mut preview = EditPreview {
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
    if rules.is_empty() {
        return Ok(preview);
    }
    let trees =
        index.map(|index| Trees { cache: index.trees(), store: candidates.len() <= STORE_UP_TO });
    let filtered = clock.elapsed();
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
        &candidates,
        |(candidate, host)| {
            if cancel.is_some_and(CancelToken::is_cancelled) {
                return Outcome::Cancelled;
            }
            let options = if capped.load(Ordering::Relaxed) {
                EngineOptions { diff: false, keep_contents: false, ..options }
            } else {
                options
            };
            process_file(candidate, *host, lang, &rules, options, params, trees)
        },
        |outcome| {
            if let Some(progress) = progress {
                progress.advance(1);
            }
            let flow = fold(&mut preview, &mut total, outcome, params, options);
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
        files_searched,
        kept = candidates.len(),
        ?filtered,
        total = ?clock.elapsed(),
        "ast_edit preview: where the time went"
    );
    Ok(preview)
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

enum Outcome {
    NoMatch,
    Cancelled,
    Issue(String),
    /// A file skipped because its syntax tree has error nodes: its parse issue.
    ErrorSkipped(String),
    Overlap(String),
    Touched(Box<Touched>),
}

/// A touched file, as its worker leaves it for the fold.
struct Touched {
    file: FileEdits,
    /// Its original text, when a limit may cut its edits in the fold and the file's contents
    /// do not hold it.
    original: Option<String>,
    /// Replacements past the limit that the worker cut already.
    beyond: usize,
    /// Its outer matches rewritten alone.
    nested: Vec<NestedLeft>,
    /// With `include_parse_errors`, when its tree has error nodes (`replacements` is set by
    /// the fold).
    error_file: Option<ErrorFile>,
}

/// Finds one file's edits and, as `options` ask, its diff and contents. With a `limit`, only
/// the first `limit` edits (by position) are kept, checked for overlaps and diffed: no file
/// contributes more to a preview. The rest are counted, for [`LeftOut`]. A component file
/// (`host`, see [`crate::embed`]) is searched in its code blocks of `lang` only.
fn process_file(
    candidate: &Candidate,
    host: Option<Lang>,
    lang: Lang,
    rules: &[Rule],
    options: EngineOptions,
    params: &ValidatedEdit,
    trees: Option<Trees<'_>>,
) -> Outcome {
    let text = match read_text(candidate) {
        Ok(text) => text,
        Err(issue) => return Outcome::Issue(issue),
    };
    let segments: Vec<Range<usize>> = match host {
        None => std::iter::once(0..text.len()).collect(),
        Some(host) => script_blocks(&text, host)
            .into_iter()
            .filter(|(_, l)| *l == lang)
            .map(|(range, _)| range)
            .collect(),
    };
    let index = LineIndex::new(&text);
    let mut raw = Vec::new();
    let mut nested = Vec::new();
    let mut broken_file = false;
    let mut skipped = 0usize;
    for segment in segments {
        let Some(part) = text.get(segment.clone()) else { continue };
        let place =
            Place { display: &candidate.display, base: segment.start, index: &index, trees };
        match segment_edits(candidate, part, &place, lang, rules, options, params) {
            Segment::Edits { edits, notes, broken, matches_skipped } => {
                raw.extend(edits);
                nested.extend(notes);
                broken_file |= broken;
                skipped += matches_skipped;
            }
            Segment::Stop(outcome) => return outcome,
        }
    }
    let keep = params.limit.unwrap_or(usize::MAX);
    let error_file = broken_file.then(|| ErrorFile {
        path: candidate.display.clone(),
        replacements: 0,
        matches_skipped: skipped,
    });
    // A replacement equal to the text it replaces is not an edit (`Value::Null` to
    // `Value::Null`): it is neither counted nor staged, and cannot overlap a real one.
    raw.retain(|edit| text.get(edit.start..edit.end) != Some(edit.text.as_str()));
    if raw.is_empty() {
        return match error_file {
            Some(error_file) if error_file.matches_skipped > 0 => {
                let file = build_file(candidate, &text, raw);
                Outcome::Touched(Box::new(Touched {
                    file,
                    original: None,
                    beyond: 0,
                    nested: Vec::new(),
                    error_file: Some(error_file),
                }))
            }
            _ => Outcome::NoMatch,
        };
    }
    // An overlap past the limit is among edits this preview does not make.
    if let Some(idx) = normalize(&mut raw).filter(|&idx| idx < keep) {
        let (line, col) = index.position(raw[idx].start);
        return Outcome::Overlap(format!("{}:{line}:{col}", candidate.display));
    }
    drop(index);
    let mut file = build_file(candidate, &text, raw);
    let all = replacements(&file.edits);
    truncate_to_replacements(&mut file.edits, keep);
    let beyond = all - replacements(&file.edits);
    let keep_original = params.limit.is_some() && !options.keep_contents;
    match finish_file(&mut file, text, options) {
        Ok(original) => Outcome::Touched(Box::new(Touched {
            file,
            original: original.filter(|_| keep_original),
            beyond,
            nested,
            error_file,
        })),
        Err(_) => {
            Outcome::Issue(format!("{}: computed edit range is out of bounds", candidate.display))
        }
    }
}

/// Where a searched text lies in its file: the file's display path, the text's offset in it,
/// and the file's line index (so that locations are the file's); and the warm index's kept
/// trees, where a tree of the text may be.
struct Place<'a> {
    display: &'a str,
    base: usize,
    index: &'a LineIndex<'a>,
    trees: Option<Trees<'a>>,
}

impl Place<'_> {
    /// The file's line and column of `offset` in the searched text.
    fn position(&self, offset: usize) -> (usize, usize) {
        self.index.position(self.base + offset)
    }

    /// `<path>:<line>:<col>` of `offset` in the searched text.
    fn at(&self, offset: usize) -> String {
        let (line, col) = self.position(offset);
        format!("{}:{line}:{col}", self.display)
    }
}

/// What one searched text (a whole file, or one code block of a component file) gives.
enum Segment {
    /// Its edits (at the file's offsets), its outer matches rewritten alone, whether its tree
    /// has error nodes, and how many matches were left alone for holding one.
    Edits { edits: Vec<RawEdit>, notes: Vec<NestedLeft>, broken: bool, matches_skipped: usize },
    /// The file's outcome, decided by this text.
    Stop(Outcome),
}

/// The edits of one searched text `part` (see [`Segment`]).
fn segment_edits(
    candidate: &Candidate,
    part: &str,
    place: &Place<'_>,
    lang: Lang,
    rules: &[Rule],
    options: EngineOptions,
    params: &ValidatedEdit,
) -> Segment {
    let none =
        Segment::Edits { edits: Vec::new(), notes: Vec::new(), broken: false, matches_skipped: 0 };
    let active = active_rules(rules, part, options.prefilter);
    if active.is_empty() {
        return none;
    }
    let tree = match TreeCache::parse(place.trees, candidate, place.base, part, lang) {
        Ok(tree) => tree,
        Err(issue) => return Segment::Stop(Outcome::Issue(format!("{}: {issue}", place.display))),
    };
    let broken = tree.root_node().has_error();
    if broken && !params.include_parse_errors {
        dispose(tree, candidate);
        return Segment::Stop(Outcome::ErrorSkipped(parse_error_issue(place.display)));
    }
    // The root shares the tree's nodes; the tree is kept for parsing the text again
    // incrementally after nested rewrites.
    let root = root_of(part, lang, tree.clone());
    let mut found = Vec::new();
    let mut bad_utf8 = false;
    let mut skipped = 0usize;
    for (rule, prune) in active {
        let Some(fixer) = &rule.fixer else { continue };
        let index = rules.iter().position(|r| std::ptr::eq(r, rule)).unwrap_or_default();
        // Each match becomes its edit at once, so that matches (and their captures) are never
        // all held together.
        let walked = rule.each_match(root.root(), prune.as_ref(), usize::MAX, |m| {
            if broken && m.get_node().get_inner_node().has_error() {
                skipped += 1;
                return;
            }
            let edit = m.make_edit(&rule.pattern, fixer);
            match String::from_utf8(edit.inserted_text) {
                Ok(replacement) => found.push(Found {
                    rule: index,
                    range: edit.position..edit.position + edit.deleted_length,
                    captures: rule.used_capture_ranges(&m),
                    replacement: blank_lines_stay_blank(replacement),
                }),
                Err(_) => bad_utf8 = true,
            }
        });
        if let Err(why) = walked {
            dispose(root, candidate);
            dispose(tree, candidate);
            return Segment::Stop(Outcome::Issue(format!("{}: {why}", place.display)));
        }
    }
    dispose(root, candidate);
    if bad_utf8 {
        dispose(tree, candidate);
        return Segment::Stop(Outcome::Issue(format!(
            "{}: replacement text is not valid UTF-8",
            place.display
        )));
    }
    let composed = compose_edits(part, place, lang, rules, found, tree, candidate);
    match composed {
        Ok((mut edits, notes)) => {
            for edit in &mut edits {
                edit.start += place.base;
                edit.end += place.base;
            }
            Segment::Edits { edits, notes, broken, matches_skipped: skipped }
        }
        Err(Stop::Overlap(location)) => Segment::Stop(Outcome::Overlap(location)),
        Err(Stop::Issue(issue)) => Segment::Stop(Outcome::Issue(issue)),
    }
}

/// Why a file's matches make no edits.
enum Stop {
    /// Two different rewrites of the same code, or crossing ranges: both locations.
    Overlap(String),
    /// A nested rewrite that cannot be built: the file's issue.
    Issue(String),
}

/// The file's edits from its matches: nested matches composed (see [`crate::nesting`]), and
/// the outer matches that had to be rewritten alone. `tree` is `text`'s syntax tree: each
/// level of nesting is parsed again from it, incrementally.
fn compose_edits(
    text: &str,
    place: &Place<'_>,
    lang: Lang,
    rules: &[Rule],
    found: Vec<Found>,
    tree: Tree,
    candidate: &Candidate,
) -> Result<(Vec<RawEdit>, Vec<NestedLeft>), Stop> {
    let forest = match plan(found) {
        Ok(forest) => forest,
        Err(crossing) => {
            dispose(tree, candidate);
            return Err(Stop::Overlap(format!(
                "{}\n- {}",
                place.at(crossing.first.start),
                place.at(crossing.second.start)
            )));
        }
    };
    let mut changes: Vec<usize> = forest
        .kept
        .iter()
        .map(|m| usize::from(text.get(m.range.clone()) != Some(m.replacement.as_str())))
        .collect();
    let mut nested = Vec::new();
    let finals: Vec<String> = if forest.nests() {
        // The tree of the text as it is at the level being rewritten.
        let mut current = Some(tree);
        let composed = compose(text, &forest, &mut |level, wanted| {
            let mut tree = current.take();
            if let Some(tree) = &mut tree {
                edit_tree(tree, level.before, level.splices);
            }
            let (res, fresh) = rematch(level.after, tree.as_ref(), wanted, lang, rules)?;
            if let Some(old) = tree {
                dispose(old, candidate);
            }
            current = Some(fresh);
            Ok(res)
        });
        if let Some(tree) = current {
            dispose(tree, candidate);
        }
        let composed = composed.map_err(|why| Stop::Issue(format!("{}: {why}", place.display)))?;
        if !composed.alone.is_empty() {
            nested = nested_left(place, text, rules, &forest, &composed.left, &composed.alone);
            for (i, left) in composed.left.iter().enumerate() {
                if *left {
                    changes[i] = 0;
                }
            }
        }
        composed.finals
    } else {
        dispose(tree, candidate);
        forest.roots().iter().map(|&(i, _)| forest.kept[i].replacement.clone()).collect()
    };
    let roots = forest.roots_weighted(&changes);
    let edits = roots
        .into_iter()
        .zip(finals)
        .map(|((i, count), text)| {
            let range = &forest.kept[i].range;
            RawEdit { start: range.start, end: range.end, text, replacements: count.max(1) }
        })
        .collect();
    Ok((edits, nested))
}

/// The notes of the outer matches rewritten alone (`alone`, indices in `forest.kept`): where
/// each is, the nested matches it left as they were (those whose rewrite changes something),
/// and a hint when the cause is one a pattern can avoid.
fn nested_left(
    place: &Place<'_>,
    text: &str,
    rules: &[Rule],
    forest: &Forest,
    left: &[bool],
    alone: &[usize],
) -> Vec<NestedLeft> {
    let mut res = Vec::with_capacity(alone.len());
    for &outer in alone {
        let within = |j: usize| {
            let mut p = forest.parent[j];
            while let Some(k) = p {
                if k == outer {
                    return true;
                }
                p = forest.parent[k];
            }
            false
        };
        let inner: Vec<usize> = (outer + 1..forest.kept.len())
            .filter(|&j| left[j] && within(j))
            .filter(|&j| {
                text.get(forest.kept[j].range.clone()) != Some(&forest.kept[j].replacement)
            })
            .collect();
        if inner.is_empty() {
            continue;
        }
        let drops_semicolon = inner.iter().any(|&j| {
            let m = &forest.kept[j];
            text.get(m.range.clone()).is_some_and(|t| t.trim_end().ends_with(';'))
                && !m.replacement.trim_end().ends_with(';')
        });
        let pattern = rules.get(forest.kept[outer].rule).map_or("", |r| r.source.as_str());
        let hint = drops_semicolon.then(|| {
            let what = if inner.len() == 1 { "statement" } else { "statements" };
            format!("the rewrite drops the `;` that ends the nested {what}; end both the pattern and the rewrite with `;`")
        });
        res.push(NestedLeft {
            path: place.display.to_owned(),
            outer: place.position(forest.kept[outer].range.start),
            pattern: pattern.to_owned(),
            inner: inner.iter().map(|&j| place.position(forest.kept[j].range.start)).collect(),
            hint,
        });
    }
    res
}

/// ast-grep's replacement for each `wanted` match in `text`, parsed again (incrementally, from
/// `old`, the tree of the text before with this level's edits applied to it): the match whose
/// range and rule are given, rewritten from the new tree (its captures hold the rewritten
/// nested text); `None` for one that no longer matches there, or whose node now holds an
/// error. Also gives the new tree, for the next level.
fn rematch(
    text: &str,
    old: Option<&Tree>,
    wanted: &[Rematch],
    lang: Lang,
    rules: &[Rule],
) -> Result<(Vec<Option<String>>, Tree), String> {
    use ast_grep_core::matcher::MatcherExt;
    let tree = parse_tree(text, lang, old)
        .map_err(|err| format!("the file after its nested rewrites: {err}"))?;
    let root = root_of(text, lang, tree.clone());
    let top = root.root();
    let mut res = Vec::with_capacity(wanted.len());
    for want in wanted {
        let rule = rules.get(want.rule).ok_or("a nested match names no rule")?;
        let fixer = rule.fixer.as_ref().ok_or("a nested match names a rule without a rewrite")?;
        // A match's range is its node's, less what the pattern leaves out at the end (a
        // statement's `;` when the pattern has none), so the node is the smallest one that
        // starts there and covers the range, or one of its ancestors that start there too.
        let mut node =
            top.get_inner_node().descendant_for_byte_range(want.range.start, want.range.end);
        let mut replacement = None;
        while let Some(candidate) =
            node.filter(|n| n.start_byte() == want.range.start && n.end_byte() >= want.range.end)
        {
            if let Some(m) = rule.pattern.match_node(root.adopt(candidate)) {
                let edit = m.make_edit(&rule.pattern, fixer);
                if edit.position + edit.deleted_length == want.range.end {
                    if !candidate.has_error() {
                        replacement = Some(blank_lines_stay_blank(
                            String::from_utf8(edit.inserted_text)
                                .map_err(|_| "replacement text is not valid UTF-8".to_owned())?,
                        ));
                    }
                    break;
                }
            }
            node = candidate.parent();
        }
        res.push(replacement);
    }
    Ok((res, tree))
}

/// A touched file whose edits an apply replays (see `action::Replay`): `raw` made on
/// `original` (the bytes read, with that fingerprint), with the diff and contents `options`
/// ask for; `None` unless the edits are sorted, apart, and inside the text on character
/// boundaries.
pub(crate) fn replayed_file(
    display: &str,
    rel: RelPath,
    fingerprint: String,
    original: String,
    raw: Vec<RawEdit>,
    options: EngineOptions,
) -> Option<FileEdits> {
    let mut last = 0;
    for edit in &raw {
        if edit.start < last
            || edit.end < edit.start
            || original.get(edit.start..edit.end).is_none()
        {
            return None;
        }
        last = edit.end;
    }
    let edits = positioned(&original, raw);
    let mut file =
        FileEdits { path: display.to_owned(), rel, fingerprint, edits, diff: None, contents: None };
    finish_file(&mut file, original, options).ok()?;
    Some(file)
}

/// Edits with their replaced text, lines and columns.
fn positioned(original: &str, raw: Vec<RawEdit>) -> Vec<Edit> {
    let index = LineIndex::new(original);
    let mut cursor = PositionCursor::new(&index);
    raw.into_iter()
        .map(|r| {
            let (start_line, start_column) = cursor.position(r.start);
            let (end_line, end_column) = cursor.position(r.end);
            Edit {
                byte_start: r.start,
                byte_end: r.end,
                before: original.get(r.start..r.end).unwrap_or("").to_owned(),
                after: r.text,
                start_line,
                start_column,
                end_line,
                end_column,
                replacements: r.replacements,
            }
        })
        .collect()
}

/// A touched file's edits (normalised), with their lines and columns.
fn build_file(candidate: &Candidate, original: &str, raw: Vec<RawEdit>) -> FileEdits {
    FileEdits {
        path: candidate.display.clone(),
        rel: candidate.rel.clone(),
        fingerprint: fingerprint(original.as_bytes()),
        edits: positioned(original, raw),
        diff: None,
        contents: None,
    }
}

/// Fills the diff and contents of `file` from its (possibly truncated) edits, as `options`
/// ask; gives the original back unless the contents took it.
fn finish_file(
    file: &mut FileEdits,
    original: String,
    options: EngineOptions,
) -> Result<Option<String>, AstEditError> {
    if options.diff {
        let index = LineIndex::new(&original);
        file.diff = Some(file_diff_indexed(&file.path, &index, &file.edits)?);
    }
    if !options.keep_contents {
        return Ok(Some(original));
    }
    let updated = rewrite(&original, &file.edits)?;
    file.contents = Some(FileContents { original, updated });
    Ok(None)
}

/// `original` with sorted, non-overlapping `edits` made.
fn rewrite(original: &str, edits: &[Edit]) -> Result<String, AstEditError> {
    let mut res = String::with_capacity(original.len());
    let mut cursor = 0;
    for edit in edits {
        res.push_str(original.get(cursor..edit.byte_start).ok_or(AstEditError::EditOutOfBounds)?);
        res.push_str(&edit.after);
        cursor = edit.byte_end;
    }
    res.push_str(original.get(cursor..).ok_or(AstEditError::EditOutOfBounds)?);
    Ok(res)
}
