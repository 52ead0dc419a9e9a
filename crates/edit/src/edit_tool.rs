//! `EditTool`: the `edit` tool, exact-string replacements in one file (Claude Code's Edit and
//! MultiEdit), staged as a preview.
//!
//! `old_string` must occur exactly once unless `replace_all`; several `edits` apply in order,
//! each to the text the previous ones left, all or none. An empty `old_string` on a file that
//! does not exist creates it. A file with CRLF line endings keeps them: an `old_string` written
//! with `\n` that is not found as is is looked for with `\r\n`, and `new_string` then gets
//! `\r\n` too.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{CancelToken, Session, Tool, ToolError};
use staged_journal::{
    ChangeKind, ChangedFile, ConfinedRoot, DiffHeader, Edit, FileOp, LineIndex, NEW_FILE_MODE,
    file_diff_indexed, new_file_diff,
};
use staged_protocol::ToolResult;

use crate::{
    EditError,
    stage::MAX_PREVIEW_BYTES,
    stage::{self, Staging},
    text::{
        Found, check_new_text, line_count, line_counts, line_edits, plural, read_text,
        resolve_path, size,
    },
};

/// The tool's name.
pub(crate) const EDIT_TOOL_NAME: &str = "edit";

const DESCRIPTION: &str = "Replace exact text in one file, as a preview: the file is not modified until you call `resolve` with action \"apply\" (or \"discard\").\n\
`old_string` must occur exactly once in the file (include surrounding lines to make it unique), unless `replace_all` is true. \
Give `edits` instead of `old_string`/`new_string` to make several replacements in order, all or none. \
An empty `old_string` on a file that does not exist creates it with `new_string`. \
A file that already has a pending preview cannot be edited again until that preview is resolved.";

/// At most this many line numbers are listed when `old_string` matches several times.
const LINES_LISTED: usize = 10;

/// How many bytes the replacements of `edits` may look through in all: each is made on the
/// whole text the previous ones left, so thousands of edits of a big file would take minutes
/// (and a client gives up on a hook long before, or a model's call waits on it).
const MAX_EDITS_WORK: usize = 1 << 30;

/// The most replacements one preview holds: each is kept with its text, so a `replace_all` of
/// a comma in a 100 MB file would take gigabytes.
const MAX_REPLACEMENTS: usize = 1_000_000;

/// How long replacements may make a text: a `replace_all` of a common letter with a long text
/// would take hundreds of gigabytes (and `replace_all` of `a` with `aa`, again and again,
/// doubles a text each time).
const MAX_EDITED_LEN: usize = 1 << 30;

/// `edit`'s arguments (serialized as `staged edit` passes them: an absent option left out).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditParams {
    /// The file to change: relative to the workspace root, or absolute inside it.
    #[serde(alias = "file_path")]
    pub path: String,
    /// The exact text to replace (empty to create a new file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub old_string: Option<String>,
    /// The text to put in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub new_string: Option<String>,
    /// Replace every occurrence of `old_string` (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub replace_all: Option<bool>,
    /// Several replacements instead of `old_string`/`new_string`, made in order, each on the
    /// text the previous ones left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<EditItem>")]
    pub edits: Option<Vec<EditItem>>,
}

/// One replacement of `edits`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditItem {
    /// The exact text to replace.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub replace_all: Option<bool>,
}

impl EditParams {
    /// The replacements, whichever form was given.
    fn items(&self) -> Result<Vec<EditItem>, EditError> {
        match (&self.edits, &self.old_string, &self.new_string) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(EditError::InvalidArguments(
                "give either `old_string` and `new_string`, or `edits`, not both".to_owned(),
            )),
            (Some(edits), None, None) if edits.is_empty() => {
                Err(EditError::InvalidArguments("`edits` must hold at least one edit".to_owned()))
            }
            (Some(edits), None, None) => Ok(edits.clone()),
            (None, Some(old), Some(new)) => Ok(vec![EditItem {
                old_string: old.clone(),
                new_string: new.clone(),
                replace_all: self.replace_all,
            }]),
            (None, None, _) => Err(EditError::InvalidArguments(
                "`old_string` is required (or give `edits`)".to_owned(),
            )),
            (None, Some(_), None) => {
                Err(EditError::InvalidArguments("`new_string` is required".to_owned()))
            }
        }
    }
}

/// The `edit` tool.
#[derive(Debug, Clone)]
pub struct EditTool {
    session: Arc<Session>,
    workspace: ConfinedRoot,
}

impl EditTool {
    /// A tool staging its previews on `session`, confined to `workspace`.
    pub fn new(session: Arc<Session>, workspace: ConfinedRoot) -> EditTool {
        EditTool { session, workspace }
    }

    /// The JSON Schema of the arguments.
    pub fn json_schema() -> Value {
        staged_core::parameters_schema::<EditParams>()
    }
}

#[async_trait::async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        EDIT_TOOL_NAME
    }

    fn label(&self) -> &str {
        "Edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        Self::json_schema()
    }

    fn deferrable(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, cancel: &CancelToken) -> Result<ToolResult, ToolError> {
        stage::execute::<EditParams>(
            EDIT_TOOL_NAME,
            &self.session,
            &self.workspace,
            args,
            cancel,
            plan,
        )
        .await
    }
}

/// What `params` would do to the file, checked against the disk.
///
/// # Errors
/// The [`EditError`] a model sees.
pub(crate) fn plan(workspace: &ConfinedRoot, params: &EditParams) -> Result<Staging, EditError> {
    let items = params.items()?;
    let rel = resolve_path(workspace, &params.path)?;
    let path = rel.display();
    let n = items.len();
    for (i, item) in items.iter().enumerate() {
        if item.old_string == item.new_string {
            return Err(EditError::NoChange(path.clone()).in_edit(i, n));
        }
        if item.new_string.contains('\0') {
            return Err(EditError::BinaryText(path.clone()).in_edit(i, n));
        }
    }
    match read_text(workspace, &rel)? {
        Found::Absent => {
            let Some(first) = items.first().filter(|item| item.old_string.is_empty()) else {
                return Err(EditError::Missing(format!(
                    "File does not exist: {path}. To create it, call edit with an empty old_string and the file's text as new_string (or call write)."
                )));
            };
            let mut content = first.new_string.clone();
            let mut work = 0;
            for (i, item) in items.iter().enumerate().skip(1) {
                content =
                    replace(&path, &content, item, &mut work).map_err(|err| err.in_edit(i, n))?.0;
            }
            let diff = new_file_diff(&path, &content, NEW_FILE_MODE)
                .map_err(|err| EditError::Read(err.to_string()))?;
            let lines = line_count(&content);
            let files = vec![ChangedFile {
                path: path.clone(),
                from: None,
                change: ChangeKind::Added,
                summary: format!("new file, {}", plural(lines, "line")),
                lines_added: lines,
                lines_removed: 0,
            }];
            Ok(Staging {
                source: EDIT_TOOL_NAME,
                ops: vec![FileOp::Create { path, content, executable: false }],
                files,
                diff,
            })
        }
        Found::Text { text, fingerprint } => {
            let (edits, replacements) = if n == 1 {
                let (edits, count) = locate(&path, &text, &items[0])?;
                (edits, count)
            } else {
                let mut current = text.clone();
                let mut count = 0;
                let mut work = 0;
                for (i, item) in items.iter().enumerate() {
                    let (next, made) = replace(&path, &current, item, &mut work)
                        .map_err(|err| err.in_edit(i, n))?;
                    check_new_text(&path, &text, &next).map_err(|err| err.in_edit(i, n))?;
                    current = next;
                    count += made;
                }
                if current == text {
                    return Err(EditError::NoChange(path));
                }
                (line_edits(&text, &current), count)
            };
            let diff = file_diff_indexed(
                &DiffHeader::Modify { path: &path },
                &LineIndex::new(&text),
                &edits,
            )
            .map_err(|err| EditError::Read(err.to_string()))?;
            let (added, removed) = line_counts(&edits);
            let files = vec![ChangedFile {
                path: path.clone(),
                from: None,
                change: ChangeKind::Updated,
                summary: plural(replacements, "replacement"),
                lines_added: added,
                lines_removed: removed,
            }];
            Ok(Staging {
                source: EDIT_TOOL_NAME,
                ops: vec![FileOp::Update { path, fingerprint, edits, executable: None }],
                files,
                diff,
            })
        }
    }
}

/// `item` made on `text`: the new text and how many replacements it made. `work` counts the
/// bytes the edits so far looked through.
///
/// # Errors
/// As [`locate`], and when the edits so far looked through more than [`MAX_EDITS_WORK`] bytes.
fn replace(
    path: &str,
    text: &str,
    item: &EditItem,
    work: &mut usize,
) -> Result<(String, usize), EditError> {
    *work = work.saturating_add(text.len());
    if *work > MAX_EDITS_WORK {
        return Err(EditError::InvalidArguments(format!(
            "`edits` are too many for a file of {}: each is made on the whole text the previous ones left, and together they would look through more than {} MiB. Make fewer, larger edits (or call write with the whole new text)",
            size(text.len()),
            MAX_EDITS_WORK >> 20
        )));
    }
    let (edits, count) = locate(path, text, item)?;
    let res = staged_journal::replay(text, &edits)
        .ok_or_else(|| EditError::Read(format!("the replacements do not fit {path}")))?;
    Ok((res, count))
}

/// The edits `item` makes on `text` (offsets in `text`), and how many.
fn locate(path: &str, text: &str, item: &EditItem) -> Result<(Vec<Edit>, usize), EditError> {
    if item.old_string.is_empty() {
        if !text.is_empty() {
            return Err(EditError::Path(format!(
                "old_string is empty, which creates a file, but {path} already exists and is not empty. Give the exact text to replace, or call write to replace the whole file."
            )));
        }
        return Ok((
            vec![Edit { start: 0, before: String::new(), after: item.new_string.clone() }],
            1,
        ));
    }
    let mut old = item.old_string.clone();
    let mut new = item.new_string.clone();
    let mut starts = occurrences(text, &old);
    if starts.is_empty() && text.contains("\r\n") && old.contains('\n') {
        let crlf = |s: &str| s.replace("\r\n", "\n").replace('\n', "\r\n");
        let (old_crlf, new_crlf) = (crlf(&old), crlf(&new));
        let found = occurrences(text, &old_crlf);
        if !found.is_empty() {
            (old, new, starts) = (old_crlf, new_crlf, found);
        }
    }
    if starts.is_empty() {
        return Err(EditError::NotFound {
            path: path.to_owned(),
            hint: not_found_hint(text, &old),
        });
    }
    if starts.len() > 1 && !item.replace_all.unwrap_or(false) {
        let index = LineIndex::new(text);
        let shown: Vec<String> =
            starts.iter().take(LINES_LISTED).map(|&s| index.position(s).0.to_string()).collect();
        let mut lines = shown.join(", ");
        if starts.len() > LINES_LISTED {
            lines.push_str(&format!(" and {} more", starts.len() - LINES_LISTED));
        }
        return Err(EditError::Ambiguous { path: path.to_owned(), count: starts.len(), lines });
    }
    if starts.len() > MAX_REPLACEMENTS {
        return Err(EditError::InvalidArguments(format!(
            "old_string occurs {} times in {path}: a preview holds at most {MAX_REPLACEMENTS} replacements. Replace a longer, rarer text, or call write with the whole new text",
            starts.len()
        )));
    }
    // Checked before anything is made of them: the text they would make may not fit.
    let grown =
        text.len().saturating_add(starts.len().saturating_mul(new.len().saturating_sub(old.len())));
    if grown > MAX_EDITED_LEN {
        return Err(EditError::InvalidArguments(format!(
            "the replacements would make {path} longer than {} MiB",
            MAX_EDITED_LEN >> 20
        )));
    }
    // Each replacement is kept with its text, shown in the diff and sent: a `replace_all` of
    // a common letter by a long text would take gigabytes before the preview's size is known.
    let changed = starts.len().saturating_mul(old.len().saturating_add(new.len()));
    if changed > MAX_PREVIEW_BYTES {
        return Err(EditError::TooLarge(format!(
            "{} replacements of {} by {} in {path} would change {}",
            starts.len(),
            plural(old.len(), "byte"),
            plural(new.len(), "byte"),
            size(changed)
        )));
    }
    let count = starts.len();
    let edits = starts
        .into_iter()
        .map(|start| Edit { start, before: old.clone(), after: new.clone() })
        .collect();
    Ok((edits, count))
}

/// Where `needle` starts in `text`, left to right, not overlapping.
fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    memchr::memmem::find_iter(text.as_bytes(), needle.as_bytes()).collect()
}

/// What may help when `old` is not in `text`.
fn not_found_hint(text: &str, old: &str) -> String {
    let trimmed = old.trim();
    if !trimmed.is_empty() && trimmed != old && !occurrences(text, trimmed).is_empty() {
        return " It is there with other whitespace around it: copy old_string exactly from the file, indentation and line breaks included.".to_owned();
    }
    " old_string must match the file exactly, whitespace and indentation included; Read the file again if it may have changed.".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_string_with_a_nul_byte_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one two\n").unwrap();
        let workspace = ConfinedRoot::new(dir.path()).unwrap();
        let item = |old: &str, new: &str| EditItem {
            old_string: old.to_owned(),
            new_string: new.to_owned(),
            replace_all: None,
        };
        let one = EditParams {
            path: "a.txt".to_owned(),
            old_string: Some("one".to_owned()),
            new_string: Some("\0".to_owned()),
            replace_all: None,
            edits: None,
        };
        assert_eq!(
            plan(&workspace, &one).unwrap_err().to_string(),
            "The new text of a.txt holds a NUL byte, as a binary file does: staged previews changes to text files only"
        );
        let several = EditParams {
            old_string: None,
            new_string: None,
            edits: Some(vec![item("one", "1"), item("two", "2\0")]),
            ..one
        };
        assert_eq!(
            plan(&workspace, &several).unwrap_err().to_string(),
            "edits[1]: The new text of a.txt holds a NUL byte, as a binary file does: staged previews changes to text files only"
        );
    }

    /// Issue 32, finding 7: a `replace_all` of a common letter by a long text is refused
    /// before its replacements are made (980,000 of them by 1,000 bytes took 7.9 GB).
    #[test]
    fn replacements_larger_than_a_preview_are_refused_before_they_are_made() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "ab".repeat(40_000)).unwrap();
        let workspace = ConfinedRoot::new(dir.path()).unwrap();
        let params = |new: usize| EditParams {
            path: "a.txt".to_owned(),
            old_string: Some("a".to_owned()),
            new_string: Some("x".repeat(new)),
            replace_all: Some(true),
            edits: None,
        };
        assert_eq!(
            plan(&workspace, &params(1000)).unwrap_err().to_string(),
            "Refusing to stage this change: 40000 replacements of 1 byte by 1000 bytes in a.txt would change 38 MiB, and a preview holds at most 32 MiB of changes (they are kept, shown and sent whole). Make the change in smaller parts."
        );
        assert!(plan(&workspace, &params(100)).is_ok());
        // Several edits: each new text is checked as it is made.
        let item = |old: &str, new: String| EditItem {
            old_string: old.to_owned(),
            new_string: new,
            replace_all: Some(true),
        };
        let several = EditParams {
            old_string: None,
            new_string: None,
            replace_all: None,
            edits: Some(vec![item("a", "y".repeat(400)), item("b", "z".repeat(500))]),
            ..params(1)
        };
        assert_eq!(
            plan(&workspace, &several).unwrap_err().to_string(),
            "edits[1]: Refusing to stage this change: the new text of a.txt is 34 MiB, and a preview holds at most 32 MiB of changes (they are kept, shown and sent whole). Make the change in smaller parts."
        );
    }
}
