//! One file's part of a preview: its matches found, composed where nested, cut at the
//! limits, and rewritten.

use std::ops::Range;

use staged_fs::RelPath;
use staged_journal::{LineIndex, fingerprint};
use tree_sitter::Tree;

use crate::{
    compile::{Rule, active_rules},
    edits::{
        Edit, PositionCursor, RawEdit, blank_lines_stay_blank, normalize, replacements,
        truncate_to_replacements,
    },
    embed::script_blocks,
    error::AstEditError,
    lang::Lang,
    nesting::{Forest, Found, Rematch, compose, plan},
    params::ValidatedEdit,
    preview_diff::file_diff_indexed,
    scope::Candidate,
    source::{dispose, edit_tree, parse_error_issue, parse_tree, read_text, root_of},
    trees::{TreeCache, Trees},
};

use super::preview::{EngineOptions, ErrorFile, FileContents, FileEdits, NestedLeft};

pub(super) enum Outcome {
    NoMatch,
    Cancelled,
    Issue(String),
    /// A file skipped because its syntax tree has error nodes: its parse issue.
    ErrorSkipped(String),
    Overlap(String),
    Touched(Box<Touched>),
}

/// A touched file, as its worker leaves it for the fold.
pub(super) struct Touched {
    pub(super) file: FileEdits,
    /// Its original text, when a limit may cut its edits in the fold and the file's contents
    /// do not hold it.
    pub(super) original: Option<String>,
    /// Replacements past the limit that the worker cut already.
    pub(super) beyond: usize,
    /// Its outer matches rewritten alone.
    pub(super) nested: Vec<NestedLeft>,
    /// With `include_parse_errors`, when its tree has error nodes (`replacements` is set by
    /// the fold).
    pub(super) error_file: Option<ErrorFile>,
}

/// Finds one file's edits and, as `options` ask, its diff and contents. With a `limit`, only
/// the first `limit` edits (by position) are kept, checked for overlaps and diffed: no file
/// contributes more to a preview. The rest are counted, for [`LeftOut`](super::LeftOut). A component file
/// (`host`, see [`crate::embed`]) is searched in its code blocks of `lang` only.
pub(super) fn process_file(
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
pub(super) fn finish_file(
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
