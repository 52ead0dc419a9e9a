//! The rewrite engine: computes an [`EditPreview`] for validated `ast_edit` arguments. It
//! reads files and never writes them.
//!
//! Files are processed in parallel ([`crate::parallel`]) and their results folded in path order, so
//! the replacement and file caps cut at the same place on every run. Nested matches compose
//! (see [`crate::nesting`]); two different rewrites of the same code are an error here, at
//! preview time, so that a preview that succeeds always applies.

use std::{collections::HashSet, ops::ControlFlow};

use staged_core::CancelToken;
use staged_fs::RelPath;

use crate::{
    AST_EDIT_TOOL_NAME, AstEditError, Edit, Lang, Workspace,
    compile::{Rule, active_rules, compile_rules},
    diff::file_diff_indexed,
    edits::{
        LineIndex, PositionCursor, RawEdit, normalize, replacements, truncate_to_replacements,
    },
    fingerprint::{Hasher, fingerprint},
    journal::FileWrite,
    nesting::{Found, Rematch, compose, plan},
    parallel::par_fold_in_order,
    params::ValidatedEdit,
    scope::{Candidate, assign_languages, collect_for_lang},
    source::{dispose, parse, read_text},
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
    /// Deduplicated parse issues, in path order (uncapped).
    pub parse_errors: Vec<String>,
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
    workspace: &Workspace,
    params: &ValidatedEdit,
    cancel: Option<&CancelToken>,
) -> Result<EditPreview, AstEditError> {
    compute_preview_with(workspace, params, EngineOptions::default(), cancel)
}

/// Computes the preview.
///
/// # Errors
/// Scope, language and overlap errors; [`AstEditError::Cancelled`] when `cancel` fired.
pub fn compute_preview_with(
    workspace: &Workspace,
    params: &ValidatedEdit,
    options: EngineOptions,
    cancel: Option<&CancelToken>,
) -> Result<EditPreview, AstEditError> {
    let candidates = collect_for_lang(workspace, &params.paths, params.lang)?;
    let (lang, candidates) = select_language(params.lang, candidates)?;
    // A preview names its files in UTF-8 (the diff, the payload, the journal), so a file whose
    // name is not UTF-8 cannot be rewritten: it is reported, not skipped silently.
    let (candidates, unnamed): (Vec<Candidate>, Vec<Candidate>) =
        candidates.into_iter().partition(|c| c.rel.to_str().is_some());
    let mut parse_errors: Vec<String> = unnamed
        .iter()
        .map(|c| {
            format!(
                "{}: skipped: its name is not valid UTF-8 (shown with U+FFFD), and ast_edit rewrites only files it can name; rename it to rewrite it",
                c.display
            )
        })
        .collect();
    let rules: Vec<(String, Option<String>)> =
        params.rules.iter().map(|(p, o)| (p.clone(), Some(o.clone()))).collect();
    let rules = compile_rules(
        &rules,
        lang,
        params.selector.as_deref(),
        params.strictness,
        &mut parse_errors,
    );
    // A rewrite whose pattern does not compile would silently match nothing: refuse it.
    if parse_errors.len() > unnamed.len() {
        return Err(AstEditError::InvalidPattern(parse_errors[unnamed.len()..].join("; ")));
    }
    let files_searched = candidates.len();
    let mut preview =
        EditPreview { lang, files: Vec::new(), files_searched, limit_reached: false, parse_errors };
    if rules.is_empty() {
        return Ok(preview);
    }
    let mut total = 0usize;
    let stopped = par_fold_in_order(
        &candidates,
        |candidate| {
            if cancel.is_some_and(CancelToken::is_cancelled) {
                return Outcome::Cancelled;
            }
            process_file(candidate, lang, &rules, options, params.limit)
        },
        |outcome| fold(&mut preview, &mut total, outcome, params, options),
    );
    if let Some(Err(err)) = stopped {
        return Err(err);
    }
    let mut seen = HashSet::new();
    preview.parse_errors.retain(|e| seen.insert(e.clone()));
    Ok(preview)
}

/// Adds one file's outcome to the preview, in path order; breaks with `Ok` when a cap is
/// reached and with the error when the preview fails.
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
        Outcome::Overlap(location) => {
            return ControlFlow::Break(Err(AstEditError::Overlap { location }));
        }
        Outcome::Touched(mut file, original, cut) => {
            if preview.files.len() >= params.max_files {
                preview.limit_reached = true;
                return ControlFlow::Break(Ok(()));
            }
            if let Some(limit) = params.limit {
                let room = limit.saturating_sub(*total);
                if replacements(&file.edits) > room {
                    // The file's diff and contents were computed for more edits than there is
                    // room for: compute them again for the edits kept.
                    truncate_to_replacements(&mut file.edits, room);
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
                    preview.limit_reached = true;
                } else if cut {
                    // The file alone has more edits than the limit.
                    preview.limit_reached = true;
                }
            }
            *total += replacements(&file.edits);
            if !file.edits.is_empty() {
                preview.files.push(file);
            }
            if preview.limit_reached {
                return ControlFlow::Break(Ok(()));
            }
        }
    }
    ControlFlow::Continue(())
}

/// Picks the one language of an `ast_edit` call and the candidates it keeps.
fn select_language(
    lang: Option<Lang>,
    candidates: Vec<Candidate>,
) -> Result<(Lang, Vec<Candidate>), AstEditError> {
    let assigned = assign_languages(lang, candidates, AST_EDIT_TOOL_NAME)?;
    if let Some(lang) = lang {
        return Ok((lang, assigned.into_iter().map(|(c, _)| c).collect()));
    }
    let mut langs: Vec<Lang> = assigned.iter().map(|(_, l)| *l).collect();
    langs.sort_by_key(|l| l.name());
    langs.dedup();
    match langs.as_slice() {
        [] => Err(AstEditError::LangRequiredNoFiles { tool: AST_EDIT_TOOL_NAME }),
        [lang] => Ok((*lang, assigned.into_iter().map(|(c, _)| c).collect())),
        many => Err(AstEditError::LangRequiredMixed(
            many.iter()
                .map(|lang| {
                    let files = assigned.iter().filter(|(_, l)| l == lang).count();
                    (lang.name().to_owned(), files)
                })
                .collect(),
        )),
    }
}

enum Outcome {
    NoMatch,
    Cancelled,
    Issue(String),
    Overlap(String),
    /// A touched file; its original text when a limit may cut its edits in the fold and the
    /// file's contents do not hold it; and whether the limit cut its edits already.
    Touched(FileEdits, Option<String>, bool),
}

/// Finds one file's edits and, as `options` ask, its diff and contents. With a `limit`, each
/// rule's match walk stops one match past it (so that a cut is seen), and only the first
/// `limit` edits (by position) are kept, checked for overlaps and diffed: no file contributes
/// more to a preview, and a big file's work stops early.
fn process_file(
    candidate: &Candidate,
    lang: Lang,
    rules: &[Rule],
    options: EngineOptions,
    limit: Option<usize>,
) -> Outcome {
    let text = match read_text(candidate) {
        Ok(text) => text,
        Err(issue) => return Outcome::Issue(issue),
    };
    let active = active_rules(rules, &text, options.prefilter);
    if active.is_empty() {
        return Outcome::NoMatch;
    }
    let root = match parse(&text, lang, &candidate.display) {
        Ok(root) => root,
        Err(issue) => return Outcome::Issue(issue),
    };
    let keep = limit.unwrap_or(usize::MAX);
    let mut found = Vec::new();
    let mut bad_utf8 = false;
    for (rule, prune) in active {
        let Some(fixer) = &rule.fixer else { continue };
        let index = rules.iter().position(|r| std::ptr::eq(r, rule)).unwrap_or_default();
        // Each match becomes its edit at once, so that matches (and their captures) are never
        // all held together.
        let walked = rule.each_match(root.root(), prune.as_ref(), keep.saturating_add(1), |m| {
            let edit = m.make_edit(&rule.pattern, fixer);
            match String::from_utf8(edit.inserted_text) {
                Ok(replacement) => found.push(Found {
                    rule: index,
                    range: edit.position..edit.position + edit.deleted_length,
                    captures: rule.used_capture_ranges(&m),
                    replacement,
                }),
                Err(_) => bad_utf8 = true,
            }
        });
        if let Err(why) = walked {
            dispose(root, candidate);
            return Outcome::Issue(format!("{}: {why}", candidate.display));
        }
    }
    dispose(root, candidate);
    if bad_utf8 {
        return Outcome::Issue(format!(
            "{}: replacement text is not valid UTF-8",
            candidate.display
        ));
    }
    let mut raw = match compose_edits(candidate, &text, lang, rules, found) {
        Ok(raw) => raw,
        Err(Stop::Overlap(location)) => return Outcome::Overlap(location),
        Err(Stop::Issue(issue)) => return Outcome::Issue(issue),
    };
    // A replacement equal to the text it replaces is not an edit (`Value::Null` to
    // `Value::Null`): it is neither counted nor staged, and cannot overlap a real one.
    raw.retain(|edit| text.get(edit.start..edit.end) != Some(edit.text.as_str()));
    if raw.is_empty() {
        return Outcome::NoMatch;
    }
    // An overlap past the limit is among edits this preview does not make.
    if let Some(idx) = normalize(&mut raw).filter(|&idx| idx < keep) {
        let (line, col) = LineIndex::new(&text).position(raw[idx].start);
        return Outcome::Overlap(format!("{}:{line}:{col}", candidate.display));
    }
    let mut file = build_file(candidate, &text, raw);
    let cut = truncate_to_replacements(&mut file.edits, keep);
    let keep_original = limit.is_some() && !options.keep_contents;
    match finish_file(&mut file, text, options) {
        Ok(original) => Outcome::Touched(file, original.filter(|_| keep_original), cut),
        Err(_) => {
            Outcome::Issue(format!("{}: computed edit range is out of bounds", candidate.display))
        }
    }
}

/// Why a file's matches make no edits.
enum Stop {
    /// Two different rewrites of the same code, or crossing ranges: both locations.
    Overlap(String),
    /// A nested rewrite that cannot compose: the file's issue.
    Issue(String),
}

/// The file's edits from its matches: nested matches composed (see [`crate::nesting`]).
fn compose_edits(
    candidate: &Candidate,
    text: &str,
    lang: Lang,
    rules: &[Rule],
    found: Vec<Found>,
) -> Result<Vec<RawEdit>, Stop> {
    let forest = plan(found).map_err(|crossing| {
        let index = LineIndex::new(text);
        let at = |pos: usize| {
            let (line, col) = index.position(pos);
            format!("{}:{line}:{col}", candidate.display)
        };
        Stop::Overlap(format!("{}\n- {}", at(crossing.first.start), at(crossing.second.start)))
    })?;
    let changes: Vec<usize> = forest
        .kept
        .iter()
        .map(|m| usize::from(text.get(m.range.clone()) != Some(m.replacement.as_str())))
        .collect();
    let roots = forest.roots_weighted(&changes);
    let finals: Vec<String> = if forest.nests() {
        compose(text, &forest, &mut |now, wanted| rematch(now, wanted, lang, rules))
            .map_err(|why| Stop::Issue(format!("{}: {why}", candidate.display)))?
    } else {
        roots.iter().map(|&(i, _)| forest.kept[i].replacement.clone()).collect()
    };
    Ok(roots
        .into_iter()
        .zip(finals)
        .map(|((i, count), text)| {
            let range = &forest.kept[i].range;
            RawEdit { start: range.start, end: range.end, text, replacements: count.max(1) }
        })
        .collect())
}

/// ast-grep's replacement for each `wanted` match in `text`, parsed again: the match whose
/// range and rule are given, rewritten from the new tree (its captures hold the rewritten
/// nested text).
fn rematch(
    text: &str,
    wanted: &[Rematch],
    lang: Lang,
    rules: &[Rule],
) -> Result<Vec<String>, String> {
    use ast_grep_core::matcher::MatcherExt;
    let root = parse(text, lang, "the file after its nested rewrites")?;
    let top = root.root();
    let mut res = Vec::with_capacity(wanted.len());
    for want in wanted {
        let rule = rules.get(want.rule).ok_or("a nested match names no rule")?;
        let fixer = rule.fixer.as_ref().ok_or("a nested match names a rule without a rewrite")?;
        let mut node =
            top.get_inner_node().descendant_for_byte_range(want.range.start, want.range.end);
        let mut replacement = None;
        while let Some(candidate) = node.filter(|n| n.byte_range() == want.range) {
            if let Some(m) = rule.pattern.match_node(root.adopt(candidate)) {
                let edit = m.make_edit(&rule.pattern, fixer);
                replacement = Some(
                    String::from_utf8(edit.inserted_text)
                        .map_err(|_| "replacement text is not valid UTF-8".to_owned())?,
                );
                break;
            }
            node = candidate.parent();
        }
        let replacement = replacement.ok_or_else(|| {
            format!(
                "`{}` no longer matches once the matches nested in it are rewritten; refine the pattern",
                rule.source
            )
        })?;
        res.push(replacement);
    }
    Ok(res)
}

/// A touched file's edits (normalised), with their lines and columns.
fn build_file(candidate: &Candidate, original: &str, raw: Vec<RawEdit>) -> FileEdits {
    let index = LineIndex::new(original);
    let mut cursor = PositionCursor::new(&index);
    let edits = raw
        .into_iter()
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
        .collect();
    FileEdits {
        path: candidate.display.clone(),
        rel: candidate.rel.clone(),
        fingerprint: fingerprint(original.as_bytes()),
        edits,
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
