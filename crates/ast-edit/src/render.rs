//! Model-facing text and JSON details of previews and applies (`docs/contract/ast-edit.md`,
//! "The preview" and "Apply and the stale check").

use std::{collections::BTreeMap, fmt::Write as _};

use serde_json::{Value, json};

use crate::{
    EditPreview, FileEdits,
    diff::{take_unified_diff, unified_diff},
    fingerprint::tag,
};

/// At most this many parse issues are listed.
pub const PARSE_ERRORS_LIMIT: usize = 20;

/// Each `-`/`+` line shows at most this many characters.
const LINE_PREVIEW_CHARS: usize = 120;

/// The first line of every preview that staged something.
pub const PREVIEW_HEADER: &str = "Preview only: files are NOT modified yet. Call `resolve` with action \"apply\" to write these changes, or action \"discard\" to drop them.";

/// `1 replacement`, `2 replacements`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}

/// The pending action's label: `AST Edit: N replacement(s) in M file(s)`.
pub fn action_label(total: usize, files: usize) -> String {
    format!("AST Edit: {} in {}", plural(total, "replacement"), plural(files, "file"))
}

/// The preview text: the header line, the tree of changes, and the trailers.
pub fn preview_text(preview: &EditPreview) -> String {
    if preview.files.is_empty() {
        let mut res = "No replacements made".to_owned();
        if !preview.parse_errors.is_empty() {
            res.push('\n');
            res.push_str(&parse_issues_block(&preview.parse_errors));
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
    if preview.limit_reached {
        res.push_str("\n\nLimit reached; narrow paths.");
    }
    if !preview.parse_errors.is_empty() {
        res.push_str("\n\n");
        res.push_str(&parse_issues_block(&preview.parse_errors));
    }
    res
}

/// `Parse issues:` (or `Parse issues (20 / N):`) and one `- <issue>` line each, capped.
pub fn parse_issues_block(errors: &[String]) -> String {
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

/// The preview's details JSON (camelCase), including the unified diff.
pub fn preview_details(preview: &EditPreview) -> Value {
    details_with_diff(preview, unified_diff(preview))
}

/// [`preview_details`], moving the diffs out of `preview` instead of copying them (a big
/// file's diff is hundreds of megabytes).
pub(crate) fn take_preview_details(preview: &mut EditPreview) -> Value {
    let diff = take_unified_diff(preview);
    details_with_diff(preview, diff)
}

fn details_with_diff(preview: &EditPreview, diff: String) -> Value {
    let mut details = json!({
        "totalReplacements": preview.total_replacements(),
        "filesTouched": preview.files_touched(),
        "filesSearched": preview.files_searched,
        "applied": false,
        "limitReached": preview.limit_reached,
        "lang": preview.lang.name(),
        "fileReplacements": file_replacements(preview),
    });
    // Moved in, where `json!` would copy it.
    details["diff"] = Value::String(diff);
    if !preview.parse_errors.is_empty() {
        details["parseErrors"] =
            json!(preview.parse_errors.iter().take(PARSE_ERRORS_LIMIT).collect::<Vec<_>>());
        details["parseErrorsTotal"] = json!(preview.parse_errors.len());
    }
    details
}

/// `[{path, count}]` for every touched file.
pub(crate) fn file_replacements(preview: &EditPreview) -> Value {
    Value::Array(
        preview
            .files
            .iter()
            .map(|f| json!({ "path": f.path, "count": crate::edits::replacements(&f.edits) }))
            .collect(),
    )
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
