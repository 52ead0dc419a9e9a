//! A preview too big for one tool result: a summary, and a `resource_link` to its whole diff.
//!
//! Claude Code warns when a tool result is over 10,000 tokens and cuts it at 25,000 (its
//! `MAX_MCP_OUTPUT_TOKENS`), and a bulk `ast_edit` easily stages a diff of hundreds of
//! kilobytes, which the result carries twice (the text's tree of edits, and `details.diff`).
//! So a successful result that staged a preview with a diff, and whose `structuredContent`
//! (what Claude Code and Codex hand the model) serializes to more than
//! [`MAX_INLINE_RESULT_BYTES`], is sent as a summary instead: the text's first line (the
//! contract's preview sentence), `Staged <id>: <label>`, the diff's size and counts, its
//! files with their hunks and lines, the notes and last line `ast_edit` ends with (what a
//! cap left out and how to lift it), and the URI of the resource that serves the whole diff
//! (`resources.rs`). The text blocks gain a `resource_link` after the summary;
//! `structuredContent.details` keeps the small fields and names the ones it left out
//! (`omitted`), and adds `diffResource`. The summary is bounded (at most
//! [`MAX_FILES_LISTED`] files and [`MAX_NOTES_BYTES`] of notes), far below the limit.
//!
//! The contract, with the exact strings: `docs/contract/mcp.md#big-previews`.

use std::fmt::Write as _;

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Map, Value};
use staged_core::{PendingEntry, PendingId};
use staged_journal::{DiffKind, diff_files, diff_line_counts};
use staged_protocol::PreviewView;

use crate::resources::{diff_resource, diff_uri};

/// The most bytes a result's `structuredContent` may serialize to and still be sent whole.
///
/// Tokens are about a quarter of the bytes for English and code, and a diff escaped into JSON
/// is denser, about 3 bytes a token; 20,000 bytes is about 5,000 to 7,000 tokens, and stays
/// under Claude Code's warning at 10,000 down to 2 bytes a token, far below its cut at 25,000.
pub const MAX_INLINE_RESULT_BYTES: usize = 20_000;

/// A summary lists at most this many files, then counts the rest.
pub(crate) const MAX_FILES_LISTED: usize = 20;

/// A summary shows at most this many bytes of the notes, cut at a line.
pub(crate) const MAX_NOTES_BYTES: usize = 4_000;

/// A path in the summary's file list is cut to this many characters.
const PATH_SHOWN_CHARS: usize = 200;

/// A `details` field whose JSON is longer than this is left out of a summary's details.
const DETAIL_KEPT_BYTES: usize = 300;

/// `res` as it is sent: whole, or, when it is a preview too big for one result, its summary.
/// `details` are the tool's, `head` the stack's head after the call.
pub(crate) fn fit(
    res: CallToolResult,
    details: Option<&Value>,
    head: Option<&PendingEntry>,
) -> CallToolResult {
    if res.is_error == Some(true) {
        return res;
    }
    let Some(structured) = res.structured_content.as_ref() else { return res };
    let size = serde_json::to_string(structured).map_or(0, |text| text.len());
    if size <= MAX_INLINE_RESULT_BYTES {
        return res;
    }
    let Some(details) = details else { return res };
    let preview = PreviewView::of(details);
    let (Some(id), Some(diff)) = (preview.pending_id.0, preview.diff.0) else {
        return res;
    };
    let id = PendingId::from_string(id.to_owned());
    let label = match head {
        Some(entry) if entry.id == id => Some(entry.label().to_owned()),
        _ => preview.label.0.map(str::to_owned),
    };
    summarize(res, details, &preview, &id, label.as_deref(), diff)
}

/// What a diff holds, counted.
struct Counts {
    files: usize,
    hunks: usize,
    added: usize,
    removed: usize,
    lines: usize,
}

fn summarize(
    res: CallToolResult,
    details: &Value,
    preview: &PreviewView<'_>,
    id: &PendingId,
    label: Option<&str>,
    diff: &str,
) -> CallToolResult {
    let files = diff_files(diff);
    let (added, removed) = diff_line_counts(diff);
    let counts = Counts {
        files: files.len(),
        hunks: files.iter().map(|file| file.hunks.len()).sum(),
        added,
        removed,
        lines: diff.lines().count(),
    };
    let uri = diff_uri(id);
    let mut content = res.content;
    let first = content.iter().position(|block| block.as_text().is_some());
    let first_line = first
        .and_then(|at| content.get(at))
        .and_then(ContentBlock::as_text)
        .and_then(|text| text.text.lines().next())
        .unwrap_or_default()
        .to_owned();
    let text = summary_text(&first_line, id, label, diff, &counts, &uri, preview);
    let link = ContentBlock::resource_link(diff_resource(id, label.unwrap_or(id.as_str()), diff));
    match first {
        Some(at) => {
            content[at] = ContentBlock::text(text);
            content.insert(at + 1, link);
        }
        None => {
            content.insert(0, ContentBlock::text(text));
            content.insert(1, link);
        }
    }
    let joined = content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(|text| text.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut structured = res.structured_content.unwrap_or_else(|| Value::Object(Map::new()));
    if let Some(object) = structured.as_object_mut() {
        object.insert("text".to_owned(), Value::String(joined));
        object.insert("details".to_owned(), summary_details(details, &uri, diff, &counts));
    }
    let mut out = CallToolResult::success(content);
    out.structured_content = Some(structured);
    out
}

/// The summary's text (`docs/contract/mcp.md#big-previews`).
fn summary_text(
    first_line: &str,
    id: &PendingId,
    label: Option<&str>,
    diff: &str,
    counts: &Counts,
    uri: &str,
    preview: &PreviewView<'_>,
) -> String {
    let mut text = String::new();
    if !first_line.is_empty() {
        text.push_str(&cut(first_line, 1_000));
        text.push_str("\n\n");
    }
    match label {
        Some(label) => {
            let _ = write!(text, "Staged {id}: {label}");
        }
        None => {
            let _ = write!(text, "Staged {id}.");
        }
    }
    let _ = write!(
        text,
        "\n\nThis preview is too big to show in a tool result (its diff is {} bytes in {}), so here is its summary: {}, {}, +{} -{} lines. The whole diff is the resource {uri} (linked below; read it with `resources/read`), served while the preview is pending.\n\nFiles:",
        diff.len(),
        plural(counts.lines, "line"),
        plural(counts.files, "file"),
        plural(counts.hunks, "hunk"),
        counts.added,
        counts.removed,
    );
    for file in diff_files(diff).iter().take(MAX_FILES_LISTED) {
        let part = diff.get(file.span.clone()).unwrap_or_default();
        let (added, removed) = diff_line_counts(part);
        let (path, from) = file_paths(part, file.kind);
        let _ = write!(
            text,
            "\n- {}: {}, +{added} -{removed}",
            cut(&path, PATH_SHOWN_CHARS),
            plural(file.hunks.len(), "hunk")
        );
        match (file.kind, from) {
            (DiffKind::Create, _) => text.push_str(" (new file)"),
            (DiffKind::Delete, _) => text.push_str(" (deleted)"),
            (DiffKind::Rename, Some(from)) => {
                let _ = write!(text, " (moved from {})", cut(&from, PATH_SHOWN_CHARS));
            }
            _ => {}
        }
    }
    if counts.files > MAX_FILES_LISTED {
        let _ = write!(text, "\n- and {}", plural(counts.files - MAX_FILES_LISTED, "more file"));
    }
    let mut budget = MAX_NOTES_BYTES;
    let mut left_out = 0usize;
    for note in &preview.notes.0 {
        let mut block = String::new();
        for line in note.lines() {
            if left_out == 0 && line.len() < budget {
                budget -= line.len() + 1;
                block.push('\n');
                block.push_str(line);
            } else {
                left_out += 1;
            }
        }
        if !block.is_empty() {
            text.push('\n');
            text.push_str(&block);
        }
    }
    if left_out > 0 {
        let _ = write!(
            text,
            "\n... {} of notes left out (`staged show --json {id}` prints them in its details)",
            plural(left_out, "more line")
        );
    }
    if let Some(last) = preview.last_line.0 {
        text.push_str("\n\n");
        text.push_str(&cut(last, 1_000));
    }
    text
}

/// Where a summary's whole diff is, and its size and counts.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DiffResource<'a> {
    uri: &'a str,
    bytes: usize,
    lines: usize,
    files: usize,
    hunks: usize,
    lines_added: usize,
    lines_removed: usize,
}

/// A summary's details: the tool's small fields, `diffResource`, and `omitted` naming the
/// fields left out.
fn summary_details(details: &Value, uri: &str, diff: &str, counts: &Counts) -> Value {
    let mut kept = Map::new();
    let mut omitted = Vec::new();
    if let Some(object) = details.as_object() {
        for (key, value) in object {
            let size = serde_json::to_string(value).map_or(usize::MAX, |text| text.len());
            if size <= DETAIL_KEPT_BYTES {
                kept.insert(key.clone(), value.clone());
            } else {
                omitted.push(Value::String(key.clone()));
            }
        }
    }
    kept.insert(
        "diffResource".to_owned(),
        serde_json::to_value(DiffResource {
            uri,
            bytes: diff.len(),
            lines: counts.lines,
            files: counts.files,
            hunks: counts.hunks,
            lines_added: counts.added,
            lines_removed: counts.removed,
        })
        .unwrap_or_default(),
    );
    kept.insert("omitted".to_owned(), Value::Array(omitted));
    Value::Object(kept)
}

/// A file's path as its part of the diff names it (`b/` side, or `a/` for a deleted file),
/// and where a moved file came from.
fn file_paths(part: &str, kind: DiffKind) -> (String, Option<String>) {
    let mut old = None;
    let mut new = None;
    let mut from = None;
    let mut to = None;
    for line in part.lines() {
        if line.starts_with("@@ ") {
            break;
        }
        if let Some(rest) = line.strip_prefix("--- ") {
            old = Some(strip_side(rest, "a/"));
        } else if let Some(rest) = line.strip_prefix("+++ ") {
            new = Some(strip_side(rest, "b/"));
        } else if let Some(rest) = line.strip_prefix("rename from ") {
            from = Some(rest.to_owned());
        } else if let Some(rest) = line.strip_prefix("rename to ") {
            to = Some(rest.to_owned());
        }
    }
    let header = part.lines().next().and_then(|line| line.strip_prefix("diff --git "));
    let path = match kind {
        DiffKind::Delete => old.or(new),
        DiffKind::Rename => to.or(new),
        DiffKind::Create | DiffKind::Modify => new.or(old),
    }
    .filter(|path| path != "/dev/null")
    .or_else(|| header.map(str::to_owned))
    .unwrap_or_default();
    (path, from)
}

/// `b/src/a.ts` → `src/a.ts`; a quoted path keeps its quotes: `"b/a\tb"` → `"a\tb"`.
fn strip_side(path: &str, side: &str) -> String {
    if let Some(inner) = path.strip_prefix('"').and_then(|p| p.strip_prefix(side)) {
        return format!("\"{inner}");
    }
    path.strip_prefix(side).unwrap_or(path).to_owned()
}

/// `text`, cut to `max` characters (with `…` when cut).
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut res: String = text.chars().take(max).collect();
    res.push('…');
    res
}

/// `1 file`, `2 files`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use staged_protocol::ToolResult;

    use super::*;
    use crate::reply::to_call_result;

    const DIFF: &str =
        "diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-a\n+b\n";

    /// A preview result whose `structuredContent` serializes to exactly `size` bytes.
    fn result_of_size(size: usize) -> ToolResult {
        let details = json!({"pendingId": "pending-action:ast_edit:3", "diff": DIFF});
        let make = |text: String| ToolResult::text(text).with_details(details.clone());
        let base = to_call_result(make(String::new()), None, false);
        let base = serde_json::to_string(&base.structured_content).unwrap().len();
        make("x".repeat(size - base))
    }

    fn structured_len(res: &CallToolResult) -> usize {
        serde_json::to_string(res.structured_content.as_ref().unwrap()).unwrap().len()
    }

    #[test]
    fn a_result_at_the_limit_is_whole_and_one_byte_more_is_a_summary() {
        let at = to_call_result(result_of_size(MAX_INLINE_RESULT_BYTES), None, false);
        assert!(at.content.iter().all(|block| block.as_resource_link().is_none()));
        assert_eq!(structured_len(&at), MAX_INLINE_RESULT_BYTES);
        assert_eq!(at.structured_content.as_ref().unwrap()["details"]["diff"], DIFF);

        let over = to_call_result(result_of_size(MAX_INLINE_RESULT_BYTES + 1), None, false);
        let link = over.content[1].as_resource_link().expect("a resource_link");
        assert_eq!(link.uri, "staged://preview/pending-action:ast_edit:3.diff");
        assert_eq!(link.size, Some(DIFF.len() as u64));
        let text = &over.content[0].as_text().unwrap().text;
        assert_eq!(
            text,
            &format!(
                "{}\n\nStaged pending-action:ast_edit:3.\n\nThis preview is too big to show in a tool result (its diff is {} bytes in 6 lines), so here is its summary: 1 file, 1 hunk, +1 -1 lines. The whole diff is the resource staged://preview/pending-action:ast_edit:3.diff (linked below; read it with `resources/read`), served while the preview is pending.\n\nFiles:\n- src/a.ts: 1 hunk, +1 -1",
                "x".repeat(1_000) + "…",
                DIFF.len()
            )
        );
        let details = &over.structured_content.as_ref().unwrap()["details"];
        assert_eq!(details["omitted"], json!([]), "the diff is small enough to keep: {details}");
        assert_eq!(details["diffResource"]["files"], 1);
        assert!(structured_len(&over) < MAX_INLINE_RESULT_BYTES);
    }

    #[test]
    fn an_error_or_a_result_without_a_preview_is_never_cut() {
        let big = "x".repeat(MAX_INLINE_RESULT_BYTES * 2);
        let error = to_call_result(
            ToolResult::error(big.clone()).with_details(json!({"pendingId": "p", "diff": DIFF})),
            None,
            false,
        );
        assert_eq!(error.content.len(), 1);
        let no_diff = to_call_result(
            ToolResult::text(big).with_details(json!({"pendingId": "p"})),
            None,
            false,
        );
        assert_eq!(no_diff.content.len(), 1);
    }

    #[test]
    fn paths_are_read_from_each_kind_of_header() {
        let new = "diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n";
        let files = diff_files(new);
        assert_eq!(file_paths(new, files[0].kind), ("n.txt".to_owned(), None));
        let gone = "diff --git a/g.txt b/g.txt\ndeleted file mode 100644\n--- a/g.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        assert_eq!(file_paths(gone, DiffKind::Delete), ("g.txt".to_owned(), None));
        let moved = "diff --git a/o.txt b/m.txt\nsimilarity index 100%\nrename from o.txt\nrename to m.txt\n";
        assert_eq!(
            file_paths(moved, DiffKind::Rename),
            ("m.txt".to_owned(), Some("o.txt".to_owned()))
        );
        let quoted = "diff --git \"a/a\\tb\" \"b/a\\tb\"\n--- \"a/a\\tb\"\n+++ \"b/a\\tb\"\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(file_paths(quoted, DiffKind::Modify).0, "\"a\\tb\"");
    }
}
