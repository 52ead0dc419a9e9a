//! Unified diffs of a preview, in the form `git apply` accepts (`a/` and `b/` prefixes).

use similar::TextDiff;

use crate::EditPreview;

/// The unified diff of one file, with a `diff --git` header.
pub(crate) fn file_diff(path: &str, original: &str, updated: &str) -> String {
    let diff = TextDiff::from_lines(original, updated);
    let mut res = format!("diff --git a/{path} b/{path}\n");
    res.push_str(
        &diff
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{path}"), &format!("b/{path}"))
            .to_string(),
    );
    res
}

/// The unified diff of every touched file whose diff was computed, in path order.
pub fn unified_diff(preview: &EditPreview) -> String {
    preview.files.iter().filter_map(|f| f.diff.as_deref()).collect()
}
