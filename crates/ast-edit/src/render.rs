//! Model-facing text and JSON details of previews and applies (`docs/contract/ast-edit.md`,
//! "The preview" and "Apply and the stale check").

use std::{collections::BTreeMap, fmt::Write as _};

use serde::{Deserialize, Serialize};
use staged_journal::tag;

use crate::{
    details::{
        ErrorFileDetails, FileCount, LangCount, LangInferred, LeftOutDetails, NestedLeftDetails,
        Position, PreviewDetails,
    },
    engine::{Cap, EditPreview, FileEdits, LeftOut},
    preview_diff::{take_unified_diff, unified_diff},
};

/// How results name the arguments that lift a cap or take in more files: as the tool's
/// parameters (a model, over MCP), or as `staged ast-edit`'s flags (a person).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgNames {
    /// `limit`, `max_files`, `includeParseErrors`, `lang`.
    #[default]
    Tool,
    /// `--limit`, `--max-files`, `--include-parse-errors`, `--lang`.
    Cli,
}

impl ArgNames {
    fn limit(self) -> &'static str {
        match self {
            ArgNames::Tool => "`limit`",
            ArgNames::Cli => "`--limit`",
        }
    }

    fn max_files(self) -> &'static str {
        match self {
            ArgNames::Tool => "`max_files`",
            ArgNames::Cli => "`--max-files`",
        }
    }

    fn include_parse_errors(self) -> &'static str {
        match self {
            ArgNames::Tool => "`includeParseErrors: true`",
            ArgNames::Cli => "`--include-parse-errors`",
        }
    }

    fn lang(self) -> &'static str {
        match self {
            ArgNames::Tool => "`lang`",
            ArgNames::Cli => "`--lang`",
        }
    }

    /// How to lift `cap`: raise it (a person may also leave the flag out).
    fn lift(self, cap: Cap) -> String {
        match (self, cap) {
            (ArgNames::Tool, Cap::Limit(_)) => "raise `limit` (or leave it out)".to_owned(),
            (ArgNames::Tool, Cap::MaxFiles(_)) => "raise `max_files`".to_owned(),
            (ArgNames::Cli, cap) => {
                let flag =
                    if matches!(cap, Cap::Limit(_)) { self.limit() } else { self.max_files() };
                format!("raise {flag} (or leave it out)")
            }
        }
    }
}

/// At most this many parse issues are listed.
pub(crate) const PARSE_ERRORS_LIMIT: usize = 20;

/// Each `-`/`+` line shows at most this many characters.
const LINE_PREVIEW_CHARS: usize = 120;

/// The first line of every preview that staged something.
pub const PREVIEW_HEADER: &str = "Preview only: files are NOT modified yet. Call `resolve` with action \"apply\" to write these changes, or action \"discard\" to drop them.";

/// `1 replacement`, `2 replacements`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}

/// The pending action's label: `AST Edit: N replacement(s) in M file(s)`.
pub(crate) fn action_label(total: usize, files: usize) -> String {
    format!("AST Edit: {} in {}", plural(total, "replacement"), plural(files, "file"))
}

/// [`action_label`], followed, when a cap cut the preview, by what it left out:
/// `AST Edit: 3 replacements in 2 files (capped by `max_files`: 4 more files left out)`.
pub(crate) fn capped_label(
    total: usize,
    files: usize,
    left_out: Option<&LeftOut>,
    names: ArgNames,
) -> String {
    let mut label = action_label(total, files);
    if let Some(left) = left_out {
        let _ = write!(
            label,
            " (capped by {}: {} left out)",
            cap_name(left.cap, names),
            left_count(left)
        );
    }
    label
}

fn cap_name(cap: Cap, names: ArgNames) -> &'static str {
    match cap {
        Cap::Limit(_) => names.limit(),
        Cap::MaxFiles(_) => names.max_files(),
    }
}

/// `4 more files`, `at least 4 more files`, `12 more replacements` (whichever the cap counts).
fn left_count(left: &LeftOut) -> String {
    let at_least = if left.exact { "" } else { "at least " };
    match left.cap {
        Cap::MaxFiles(_) => format!("{at_least}{}", plural(left.files, "more file")),
        Cap::Limit(_) => format!("{at_least}{}", plural(left.replacements, "more replacement")),
    }
}

/// The last line of a preview, when there is something a user must not miss: what a cap left
/// out and how to lift it, and how many files with parse errors were skipped and how to
/// include them.
pub fn last_line(preview: &EditPreview, names: ArgNames) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(left) = &preview.left_out {
        let (value, other) = match left.cap {
            Cap::Limit(n) => (n, format!("in {}", plural(left.files, "file"))),
            Cap::MaxFiles(n) => (n, format!("with {}", plural(left.replacements, "replacement"))),
        };
        let other = if left.exact { other } else { other.replacen(' ', " at least ", 1) };
        let counted = match left.cap {
            Cap::Limit(_) => left.replacements,
            Cap::MaxFiles(_) => left.files,
        };
        let (were, them) =
            if counted == 1 && left.exact { ("was", "it") } else { ("were", "them") };
        parts.push(format!(
            "Capped by {} {value}: {} {other} {were} left out; {} to include {them}.",
            cap_name(left.cap, names),
            left_count(left),
            names.lift(left.cap)
        ));
    }
    if preview.error_files_skipped > 0 {
        let n = preview.error_files_skipped;
        parts.push(format!(
            "{} with parse errors {} skipped (see Parse issues); pass {} to rewrite the matches in {} that hold no error.",
            plural(n, "file"),
            if n == 1 { "was" } else { "were" },
            names.include_parse_errors(),
            if n == 1 { "it" } else { "them" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The blocks a preview's text shows after its tree of changes, each a paragraph: nested
/// matches left as they were, parse issues, the language inferred, and the files with parse
/// errors that were rewritten.
pub(crate) fn preview_notes(preview: &EditPreview, names: ArgNames) -> Vec<String> {
    let mut notes = Vec::new();
    if !preview.nested_left.is_empty() {
        let mut block = "Nested matches left as they were:".to_owned();
        for note in &preview.nested_left {
            let n = note.inner.len();
            let at: Vec<String> = note.inner.iter().map(|(l, c)| format!("{l}:{c}")).collect();
            let (it, was) = if n == 1 { ("it", "it was") } else { ("them", "they were") };
            let _ = write!(
                block,
                "\n- {}:{}:{}: {} left as {was}: the outer rewrite replaced {it} (at {}), since `{}` no longer matches there once {} rewritten.",
                note.path,
                note.outer.0,
                note.outer.1,
                plural(n, "nested match").replace("matchs", "matches"),
                at.join(", "),
                note.pattern,
                if n == 1 { "it is" } else { "they are" },
            );
            match &note.hint {
                Some(hint) => {
                    let _ = write!(block, " Hint: {hint}.");
                }
                None => {
                    let _ = write!(
                        block,
                        " Stage the same rewrite again once this one is applied to rewrite {it}."
                    );
                }
            }
        }
        notes.push(block);
    }
    if !preview.parse_errors.is_empty() {
        notes.push(parse_issues_block(&preview.parse_errors));
    }
    if let Some(choice) = &preview.lang_choice {
        let others: Vec<String> = choice
            .left_out
            .iter()
            .map(|(lang, files)| format!("{} ({})", lang.name(), plural(*files, "file")))
            .collect();
        notes.push(format!(
            "Language: {}, the one language of these paths the pattern is meant for; left out: {} (pass {} to rewrite another).",
            preview.lang.name(),
            others.join(", "),
            names.lang()
        ));
    }
    if !preview.error_files.is_empty() {
        let mut block =
            "Files with parse errors, rewritten only where the match holds no error:".to_owned();
        for file in &preview.error_files {
            let _ =
                write!(block, "\n- {} ({}", file.path, plural(file.replacements, "replacement"));
            if file.matches_skipped > 0 {
                let _ = write!(
                    block,
                    "; {} left alone: {} a parse error",
                    plural(file.matches_skipped, "match").replace("matchs", "matches"),
                    if file.matches_skipped == 1 { "it holds" } else { "they hold" }
                );
            }
            block.push(')');
        }
        notes.push(block);
    }
    notes
}

/// The preview text: the header line, the tree of changes, and the trailers (see
/// `preview_notes` and [`last_line`]).
pub fn preview_text(preview: &EditPreview) -> String {
    preview_text_named(preview, ArgNames::Tool)
}

/// [`preview_text`], naming arguments as `names` says.
pub(crate) fn preview_text_named(preview: &EditPreview, names: ArgNames) -> String {
    let notes = preview_notes(preview, names);
    let last = last_line(preview, names);
    if preview.files.is_empty() {
        let mut res = "No replacements made".to_owned();
        for note in notes.iter().chain(&last) {
            res.push('\n');
            res.push_str(note);
        }
        return res;
    }
    let mut res = String::from(PREVIEW_HEADER);
    res.push_str("\n\n");
    let mut tree = Dir::default();
    for file in &preview.files {
        let mut parts: Vec<&str> = file.path.split('/').collect();
        let name = parts.pop().unwrap_or_default();
        let mut dir = &mut tree;
        for part in parts {
            dir = dir.dirs.entry(part.to_owned()).or_default();
        }
        dir.files.push((name.to_owned(), file));
    }
    let mut blocks = Blocks { out: res, empty: true };
    render_dir(&tree, None, 0, &mut blocks);
    let mut res = blocks.out;
    for note in notes.iter().chain(&last) {
        res.push_str("\n\n");
        res.push_str(note);
    }
    res
}

/// `Parse issues:` (or `Parse issues (20 / N):`) and one `- <issue>` line each, capped.
pub(crate) fn parse_issues_block(errors: &[String]) -> String {
    let mut res = if errors.len() > PARSE_ERRORS_LIMIT {
        format!("Parse issues ({PARSE_ERRORS_LIMIT} / {}):", errors.len())
    } else {
        "Parse issues:".to_owned()
    };
    for err in errors.iter().take(PARSE_ERRORS_LIMIT) {
        res.push_str("\n- ");
        res.push_str(err);
    }
    res
}

/// The preview's details, including the unified diff.
pub fn preview_details(preview: &EditPreview) -> PreviewDetails {
    details_with_diff(preview, unified_diff(preview), ArgNames::Tool)
}

/// [`preview_details`], moving the diffs out of `preview` instead of copying them (a big
/// file's diff is hundreds of megabytes).
pub(crate) fn take_preview_details(preview: &mut EditPreview, names: ArgNames) -> PreviewDetails {
    let diff = take_unified_diff(preview);
    details_with_diff(preview, diff, names)
}

fn details_with_diff(preview: &EditPreview, diff: String, names: ArgNames) -> PreviewDetails {
    PreviewDetails {
        total_replacements: count(preview.total_replacements()),
        files_touched: count(preview.files_touched()),
        files_searched: count(preview.files_searched),
        applied: false,
        limit_reached: preview.limit_reached,
        lang: preview.lang.name().to_owned(),
        file_replacements: file_replacements(preview),
        notes: preview_notes(preview, names),
        error_files_skipped: count(preview.error_files_skipped),
        parse_errors_total: Some(count(preview.parse_errors.len())),
        diff,
        last_line: last_line(preview, names),
        left_out: preview.left_out.as_ref().map(|left| left_out_details(left, names)),
        parse_errors: preview.parse_errors.iter().take(PARSE_ERRORS_LIMIT).cloned().collect(),
        error_files: preview
            .error_files
            .iter()
            .map(|f| ErrorFileDetails {
                path: f.path.clone(),
                count: count(f.replacements),
                matches_skipped: count(f.matches_skipped),
            })
            .collect(),
        nested_left: preview
            .nested_left
            .iter()
            .map(|n| NestedLeftDetails {
                path: n.path.clone(),
                line: count(n.outer.0),
                column: count(n.outer.1),
                pattern: n.pattern.clone(),
                inner: n
                    .inner
                    .iter()
                    .map(|&(line, column)| Position { line: count(line), column: count(column) })
                    .collect(),
                hint: n.hint.clone(),
            })
            .collect(),
        lang_inferred: preview.lang_choice.as_ref().map(|choice| LangInferred {
            lang: preview.lang.name().to_owned(),
            left_out: choice
                .left_out
                .iter()
                .map(|(lang, files)| LangCount {
                    lang: lang.name().to_owned(),
                    files: count(*files),
                })
                .collect(),
        }),
        pending_id: None,
    }
}

/// A count as the details hold it.
pub(crate) fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// What a cap left out, `lift` naming the parameter (or flag) that lifts it.
pub(crate) fn left_out_details(left: &LeftOut, names: ArgNames) -> LeftOutDetails {
    let (cap, value) = match left.cap {
        Cap::Limit(n) => ("limit", n),
        Cap::MaxFiles(n) => ("max_files", n),
    };
    LeftOutDetails {
        cap: cap.to_owned(),
        value: count(value),
        files: count(left.files),
        replacements: count(left.replacements),
        exact: left.exact,
        lift: cap_name(left.cap, names).trim_matches('`').to_owned(),
    }
}

/// Every touched file with its replacements.
pub(crate) fn file_replacements(preview: &EditPreview) -> Vec<FileCount> {
    preview
        .files
        .iter()
        .map(|f| FileCount {
            path: f.path.clone(),
            count: count(crate::edits::replacements(&f.edits)),
        })
        .collect()
}

#[derive(Default)]
struct Dir<'a> {
    dirs: BTreeMap<String, Dir<'a>>,
    files: Vec<(String, &'a FileEdits)>,
}

/// The text's blocks (headings and files), one line apart, written in place.
struct Blocks {
    out: String,
    /// No block written yet.
    empty: bool,
}

impl Blocks {
    /// Where the next block goes.
    fn next(&mut self) -> &mut String {
        if !std::mem::take(&mut self.empty) {
            self.out.push('\n');
        }
        &mut self.out
    }
}

/// Renders a directory: its folded heading (unless it is the root), its files one `#` deeper,
/// then its subdirectories one `#` deeper.
fn render_dir(dir: &Dir<'_>, name: Option<String>, depth: usize, blocks: &mut Blocks) {
    let (dir, depth) = match name {
        Some(mut name) => {
            let mut dir = dir;
            while dir.files.is_empty() && dir.dirs.len() == 1 {
                let Some((child_name, child)) = dir.dirs.iter().next() else { break };
                name.push('/');
                name.push_str(child_name);
                dir = child;
            }
            let _ = write!(blocks.next(), "{} {name}/", "#".repeat(depth));
            (dir, depth + 1)
        }
        None => (dir, depth + 1),
    };
    for (file_name, file) in &dir.files {
        file_block(blocks.next(), file_name, file, depth);
    }
    for (child_name, child) in &dir.dirs {
        render_dir(child, Some(child_name.clone()), depth, blocks);
    }
}

/// A file's heading and two lines an edit, written in place (a big file has a million).
fn file_block(out: &mut String, name: &str, file: &FileEdits, depth: usize) {
    let _ = write!(
        out,
        "{} {name}#{} ({})",
        "#".repeat(depth),
        tag(&file.fingerprint),
        plural(crate::edits::replacements(&file.edits), "replacement")
    );
    for edit in &file.edits {
        let (line, col) = (edit.start_line, edit.start_column);
        let _ = write!(out, "\n-{line}:{col} {}", first_line(&edit.before));
        let _ = write!(out, "\n+{line}:{col} {}", first_line(&edit.after));
    }
}

/// The first line of `text`, cut to [`LINE_PREVIEW_CHARS`] characters.
fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(LINE_PREVIEW_CHARS) {
        Some((cut, _)) => &line[..cut],
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pluralises() {
        assert_eq!(action_label(1, 1), "AST Edit: 1 replacement in 1 file");
        assert_eq!(action_label(2, 3), "AST Edit: 2 replacements in 3 files");
        assert_eq!(action_label(0, 0), "AST Edit: 0 replacements in 0 files");
    }

    #[test]
    fn caps_parse_issues() {
        let errors: Vec<String> = (0..25).map(|i| format!("f{i}.ts: parse error")).collect();
        let block = parse_issues_block(&errors);
        assert!(block.starts_with("Parse issues (20 / 25):"));
        assert_eq!(block.lines().count(), 21);
    }
}
