//! `FileChanges`: the journaled writes of a custom tool. A tool that changes files describes
//! them (files created, updated, deleted and moved) and stages them as one [`ChangeAction`](staged_journal::ChangeAction),
//! under its own name, with what the built-in tools' previews have: the paths confined to the
//! workspace (no `..`, nothing in `.staged/`, no protected path), the files checked again when
//! applied (a file changed since, or a file to create that appeared, makes the apply stale),
//! all or none written through the journal, the diff in the log, and the undo of
//! `staged_journal::ChangeUndo`.

use std::collections::HashSet;

use staged_core::Session;
use staged_fs::RelPath;
use staged_journal::ConfinedRoot;
use staged_protocol::ToolResult;

use crate::{
    EditError,
    patch::Style,
    patch_tool::{add, check_kind_changes, delete, moved, refuse_symlink},
    stage::Staging,
    text::{Found, check_new_text, line_edits, read_text, resolve_path},
};

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    Create { path: String, text: String },
    Update { path: String, text: String },
    Delete { path: String },
    Move { from: String, to: String },
}

/// The files a custom tool's preview changes, planned against the disk when staged
/// ([`FileChanges::stage`]) and written all or none when applied.
///
/// ```
/// use staged_edit::FileChanges;
///
/// let changes = FileChanges::new()
///     .rename("src/old.rs", "src/new.rs")
///     .update("src/lib.rs", "mod new;\n")
///     .label("Rename old to new");
/// assert_eq!(changes.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileChanges {
    changes: Vec<Change>,
    label: Option<String>,
}

impl FileChanges {
    /// No change yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Creates `path` (and the folders it needs) with `text`; it must not exist.
    #[must_use]
    pub fn create(mut self, path: impl Into<String>, text: impl Into<String>) -> Self {
        self.changes.push(Change::Create { path: path.into(), text: text.into() });
        self
    }

    /// Replaces the text of `path`, which must exist, by `text`.
    #[must_use]
    pub fn update(mut self, path: impl Into<String>, text: impl Into<String>) -> Self {
        self.changes.push(Change::Update { path: path.into(), text: text.into() });
        self
    }

    /// Deletes `path`, which must exist.
    #[must_use]
    pub fn delete(mut self, path: impl Into<String>) -> Self {
        self.changes.push(Change::Delete { path: path.into() });
        self
    }

    /// Moves `from`, which must exist, to `to`, where nothing may be (keeping its text and
    /// mode).
    #[must_use]
    pub fn rename(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.changes.push(Change::Move { from: from.into(), to: to.into() });
        self
    }

    /// The preview's label; by default the one `apply_patch` gives (`Patch: 2 files (1
    /// updated, 1 moved)`).
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// How many file changes were described.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Plans the changes against the disk and stages them on `session` as one preview of the
    /// tool `source`, unless a pending preview already writes one of the files; returns what
    /// a model sees (the preview header, the staged id and label, the diff), as `apply_patch`
    /// does. It reads the files: call it off an async runtime's threads for large ones.
    ///
    /// The workspace session registers, for each custom tool's name, the rehydrator and the
    /// undo handler of these previews (`staged_workspace::WorkspaceSession`), so they apply in
    /// another process and their log entries undo.
    ///
    /// # Errors
    /// A path outside the workspace (`..`, absolute elsewhere), in `.staged/` or protected;
    /// a file to update, delete or move that does not exist, or is a symlink, binary or not
    /// UTF-8; a file to create, or a move's target, that exists; a file named twice; a new
    /// text holding a NUL byte; no change at all; a file a pending preview writes.
    pub fn stage(
        &self,
        session: &Session,
        workspace: &ConfinedRoot,
        source: &str,
    ) -> Result<ToolResult, EditError> {
        plan(workspace, self)?.stage_as(session, workspace, source, self.label.clone())
    }
}

/// What `changes` does, checked against the disk.
fn plan(workspace: &ConfinedRoot, changes: &FileChanges) -> Result<Staging, EditError> {
    let mut staging =
        Staging { source: "", ops: Vec::new(), files: Vec::new(), diff: String::new() };
    let mut seen: HashSet<RelPath> = HashSet::new();
    let mut claim = |rel: &RelPath| {
        if seen.insert(rel.clone()) {
            Ok(())
        } else {
            Err(EditError::PatchConflict(format!(
                "{} is changed more than once: describe all its changes as one",
                rel.display()
            )))
        }
    };
    let exists = |rel: &RelPath, what: &str| match read_text(workspace, rel)? {
        Found::Text { text, fingerprint } => Ok((text, fingerprint)),
        Found::Absent => Err(EditError::PatchConflict(format!(
            "Failed to {what} {}: it does not exist",
            rel.display()
        ))),
    };
    // Paths where a file takes a folder's place (or the reverse), checked once all are read.
    let mut kind_changes = Vec::new();
    for change in &changes.changes {
        match change {
            Change::Create { path, text } => {
                let rel = resolve_path(workspace, path)?;
                claim(&rel)?;
                new_text(&rel, "", text)?;
                add(workspace, &mut staging, &rel, (text, false), Style::Exact, &mut kind_changes)?;
            }
            Change::Update { path, text } => {
                let rel = resolve_path(workspace, path)?;
                claim(&rel)?;
                let (old, fingerprint) = exists(&rel, "update")?;
                new_text(&rel, &old, text)?;
                let edits = line_edits(&old, text);
                if edits.is_empty() {
                    continue;
                }
                staging.push_update(rel.display(), &old, fingerprint, edits, None)?;
            }
            Change::Delete { path } => {
                refuse_symlink(workspace, path, "delete")?;
                let rel = resolve_path(workspace, path)?;
                claim(&rel)?;
                delete(workspace, &mut staging, &rel, None)?;
            }
            Change::Move { from, to } => {
                refuse_symlink(workspace, from, "move")?;
                let rel = resolve_path(workspace, from)?;
                claim(&rel)?;
                let (text, fingerprint) = exists(&rel, "move")?;
                let to = resolve_path(workspace, to)?;
                claim(&to)?;
                moved(
                    workspace,
                    &mut staging,
                    (&rel, &text, fingerprint),
                    (&to, &mut kind_changes),
                    (Vec::new(), None),
                    Style::Exact,
                )?;
            }
        }
    }
    if staging.ops.is_empty() {
        return Err(EditError::PatchConflict(
            "No changes to make: every file would stay as it is.".to_owned(),
        ));
    }
    check_kind_changes(workspace, &staging.ops, &kind_changes)?;
    Ok(staging)
}

/// Refuses a new text a built-in tool would refuse (a NUL byte, one too large).
fn new_text(rel: &RelPath, old: &str, text: &str) -> Result<(), EditError> {
    let path = rel.display();
    if text.contains('\0') {
        return Err(EditError::BinaryText(path));
    }
    check_new_text(&path, old, text)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use staged_core::InMemoryStore;

    use super::*;

    fn setup() -> (tempfile::TempDir, ConfinedRoot, Session) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let workspace = ConfinedRoot::new(dir.path()).unwrap();
        (dir, workspace, Session::new(Arc::new(InMemoryStore::new())))
    }

    fn refused(changes: FileChanges) -> String {
        let (_dir, workspace, session) = setup();
        let err = changes.stage(&session, &workspace, "tidy").unwrap_err().to_string();
        assert!(session.store().is_empty().unwrap());
        err
    }

    #[test]
    fn changes_that_do_not_fit_the_disk_are_refused_naming_the_file() {
        assert_eq!(
            refused(FileChanges::new().create("a.txt", "x\n")),
            "a.txt already exists, but the patch creates it as a new file"
        );
        assert_eq!(
            refused(FileChanges::new().update("c.txt", "x\n")),
            "Failed to update c.txt: it does not exist"
        );
        assert_eq!(
            refused(FileChanges::new().delete("c.txt")),
            "Failed to delete file c.txt: it does not exist"
        );
        assert_eq!(
            refused(FileChanges::new().rename("a.txt", "b.txt")),
            "b.txt already exists, but the patch moves a.txt there"
        );
        assert_eq!(
            refused(FileChanges::new().update("a.txt", "x\n").delete("a.txt")),
            "a.txt is changed more than once: describe all its changes as one"
        );
        assert_eq!(
            refused(FileChanges::new().create("n.txt", "a\0b")),
            "The new text of n.txt holds a NUL byte, as a binary file does: staged previews changes to text files only"
        );
        assert_eq!(
            refused(FileChanges::new().update("a.txt", "a\n")),
            "No changes to make: every file would stay as it is."
        );
        assert_eq!(
            refused(FileChanges::new()),
            "No changes to make: every file would stay as it is."
        );
        assert!(refused(FileChanges::new().delete(".staged/staged.db")).contains(".staged"));
    }

    #[test]
    fn changes_stage_one_preview_under_the_tools_name() {
        let (_dir, workspace, session) = setup();
        let changes =
            FileChanges::new().create("d/new.txt", "n\n").update("a.txt", "A\n").delete("b.txt");
        let res = changes.stage(&session, &workspace, "tidy").unwrap();
        assert!(
            res.text_content().contains(
                "Staged pending-action:tidy:0: Patch: 3 files (1 added, 1 deleted, 1 updated)"
            ),
            "{}",
            res.text_content()
        );
        let entry = &session.store().list().unwrap()[0];
        assert_eq!(entry.action.source_tool_name(), "tidy");
        assert_eq!(entry.action.files().len(), 3);
    }
}
