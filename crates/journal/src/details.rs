//! The details of a text preview (`edit`, `write`, `apply_patch`) and of its apply, as serde
//! types: what the tools return, what the durable stack keeps, and what front ends read.

use serde::{Deserialize, Serialize};

/// What happens to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// Its text changes.
    Updated,
    /// It is created.
    Added,
    /// It is deleted.
    Deleted,
    /// It moves (and its text may change).
    Moved,
}

/// One file of a preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangedFile {
    /// The path, relative to the root (for a move, where it goes).
    pub path: String,
    /// For a move, where it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// What happens to it.
    pub change: ChangeKind,
    /// For a person: `1 replacement`, `new file, 40 lines`, `deleted`, `+3 -1`.
    pub summary: String,
    /// Lines added.
    pub lines_added: usize,
    /// Lines removed.
    pub lines_removed: usize,
}

/// The rest of a partially applied preview, pending under a new id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remainder {
    /// Its pending id.
    pub id: String,
    /// Its label.
    pub label: String,
}

/// A text preview's details (or its apply's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangeDetails {
    /// The preview's label (for an apply's result, what was applied).
    #[serde(default)]
    pub label: String,
    /// The files, in the order they are written.
    pub files: Vec<ChangedFile>,
    /// Whether this is an apply's result.
    pub applied: bool,
    /// The unified diff (git's extended form: new, deleted and renamed files); empty in an
    /// apply's result.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub diff: String,
    /// The pending id, once staged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_id: Option<String>,
    /// After a partial apply: what stays pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remainder: Option<Remainder>,
    /// The front end that staged the preview when it was not a tool call of a model's:
    /// `hook:claude-code` for an edit Claude Code's hook held back (see
    /// [`staged_core::PendingAction::staged_by`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_by: Option<String>,
    /// Why only a person may apply the preview, when only a person may: it was staged while
    /// the client would have asked the person (see
    /// [`staged_core::PendingAction::needs_person`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_person: Option<String>,
}

impl ChangeDetails {
    /// As JSON (camelCase), with `filesTouched` for listings.
    pub fn to_value(&self) -> serde_json::Value {
        let mut res = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let Some(object) = res.as_object_mut() {
            object.insert("filesTouched".to_owned(), self.files.len().into());
        }
        res
    }

    /// Reads details back (`filesTouched` is ignored).
    ///
    /// # Errors
    /// The serde error, when `value` is not a text preview's details.
    pub fn parse(value: &serde_json::Value) -> Result<ChangeDetails, serde_json::Error> {
        let mut value = value.clone();
        if let Some(object) = value.as_object_mut() {
            object.remove("filesTouched");
        }
        serde_json::from_value(value)
    }
}

/// The diff of each file, in order: a file's diff starts at its `diff --git` line (no other
/// line of a diff starts with `d`).
pub(crate) fn split_diff(diff: &str) -> impl Iterator<Item = &str> {
    let mut starts: Vec<usize> = Vec::new();
    let mut offset = 0;
    for line in diff.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            starts.push(offset);
        }
        offset += line.len();
    }
    let ends: Vec<usize> =
        starts.iter().skip(1).copied().chain(std::iter::once(diff.len())).collect();
    starts.into_iter().zip(ends).map(move |(start, end)| &diff[start..end])
}

/// The label of a preview by `source` of `files`: `Edit: src/a.ts (1 replacement)`,
/// `Write: src/new.ts (new file, 40 lines)`, `Patch: 3 files (1 added, 1 deleted, 1 updated)`.
pub fn label_of(source: &str, files: &[ChangedFile]) -> String {
    match (source, files) {
        ("edit", [file]) => format!("Edit: {} ({})", file.path, file.summary),
        ("write", [file]) => format!("Write: {} ({})", file.path, file.summary),
        _ => {
            let count = |kind| files.iter().filter(|f| f.change == kind).count();
            let parts: Vec<String> = [
                (ChangeKind::Added, "added"),
                (ChangeKind::Deleted, "deleted"),
                (ChangeKind::Updated, "updated"),
                (ChangeKind::Moved, "moved"),
            ]
            .into_iter()
            .filter(|(kind, _)| count(*kind) > 0)
            .map(|(kind, word)| format!("{} {word}", count(kind)))
            .collect();
            let n = files.len();
            format!("Patch: {n} file{} ({})", if n == 1 { "" } else { "s" }, parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, change: ChangeKind) -> ChangedFile {
        ChangedFile {
            path: path.to_owned(),
            from: None,
            change,
            summary: "x".to_owned(),
            lines_added: 0,
            lines_removed: 0,
        }
    }

    #[test]
    fn patch_labels_count_each_kind() {
        let files = [
            file("a", ChangeKind::Added),
            file("b", ChangeKind::Deleted),
            file("c", ChangeKind::Updated),
        ];
        assert_eq!(
            label_of("apply_patch", &files),
            "Patch: 3 files (1 added, 1 deleted, 1 updated)"
        );
        assert_eq!(label_of("apply_patch", &files[2..]), "Patch: 1 file (1 updated)");
    }

    #[test]
    fn diffs_split_per_file() {
        let details = ChangeDetails {
            label: String::new(),
            files: vec![file("a", ChangeKind::Updated), file("b", ChangeKind::Added)],
            applied: false,
            diff: "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+diff --git y\ndiff --git a/b b/b\nnew file mode 100644\n".to_owned(),
            pending_id: None,
            remainder: None,
            staged_by: None,
            needs_person: None,
        };
        let parts: Vec<_> = split_diff(&details.diff).collect();
        assert_eq!(parts.len(), 2);
        assert!(parts[0].ends_with("+diff --git y\n"));
        assert_eq!(parts[1], "diff --git a/b b/b\nnew file mode 100644\n");
    }
}
