//! `ApplyPatchTool`: the `apply_patch` tool, a patch in Codex's format or a unified diff,
//! staged as one preview: files added, deleted, updated and moved, all or none.

use std::{collections::HashSet, sync::Arc};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{CancelToken, Session, Tool, ToolError};
use staged_fs::RelPath;
use staged_journal::{
    ChangeKind, ChangedFile, ConfinedRoot, DiffHeader, EXECUTABLE_MODE, Edit, FileOp, LineIndex,
    NEW_FILE_MODE, deleted_file_diff, file_diff_indexed, new_file_diff, with_executable,
};
use staged_protocol::ToolResult;

use crate::{
    EditError,
    patch::{Options, Patch, PatchFile, Style, apply_chunks, parse_with},
    stage::{self, Staging},
    text::{
        Found, check_new_text, line_count, line_counts, line_edits, plural, read_text, resolve_path,
    },
};

/// The tool's name.
pub(crate) const APPLY_PATCH_TOOL_NAME: &str = "apply_patch";

const DESCRIPTION: &str = "Apply a patch as a preview: nothing is written until you call `resolve` with action \"apply\" (or \"discard\"), and then every file changes or none.\n\
`input` is a patch in this format (or a unified diff, as `git diff` prints it):\n\
*** Begin Patch\n\
*** Add File: path/new.ts\n\
+every line of the new file, each after a +\n\
*** Delete File: path/old.ts\n\
*** Update File: path/app.ts\n\
*** Move to: path/renamed.ts   (optional)\n\
@@ function around the change   (optional context line)\n\
 unchanged line\n\
-removed line\n\
+added line\n\
*** End Patch\n\
Paths are relative to the workspace root. Give about 3 lines of context around each change. \
A file that already has a pending preview cannot be patched until that preview is resolved.";

/// `apply_patch`'s arguments (serialized as `staged patch` passes them: an absent option left
/// out).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchParams {
    /// The patch: Codex's `*** Begin Patch` format, or a unified diff.
    #[serde(alias = "patch", alias = "command")]
    pub input: String,
    /// A person's `staged patch -p N`: how many leading folders to drop from a unified
    /// diff's paths. Not offered to models (left out of the schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub strip: Option<usize>,
    /// A person's `staged patch -R`: reverse a unified diff. Not offered to models.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schemars(skip)]
    pub reverse: bool,
}

/// The `apply_patch` tool.
#[derive(Debug, Clone)]
pub struct ApplyPatchTool {
    session: Arc<Session>,
    workspace: ConfinedRoot,
}

impl ApplyPatchTool {
    /// A tool staging its previews on `session`, confined to `workspace`.
    pub fn new(session: Arc<Session>, workspace: ConfinedRoot) -> ApplyPatchTool {
        ApplyPatchTool { session, workspace }
    }

    /// The JSON Schema of the arguments.
    pub fn json_schema() -> Value {
        staged_core::parameters_schema::<ApplyPatchParams>()
    }
}

#[async_trait::async_trait]
impl Tool for ApplyPatchTool {
    fn name(&self) -> &str {
        APPLY_PATCH_TOOL_NAME
    }

    fn label(&self) -> &str {
        "Apply Patch"
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
        stage::execute::<ApplyPatchParams>(
            APPLY_PATCH_TOOL_NAME,
            &self.session,
            &self.workspace,
            args,
            cancel,
            |ws, params| {
                let options = Options { strip: params.strip, reverse: params.reverse };
                plan_text(ws, &params.input, &options)
            },
        )
        .await
    }
}

/// What the patch `input` would do, checked against the disk.
///
/// # Errors
/// The [`EditError`] a model sees: the parse error, or the first file it cannot change.
pub(crate) fn plan_text(
    workspace: &ConfinedRoot,
    input: &str,
    options: &Options,
) -> Result<Staging, EditError> {
    let patch = parse_with(input, options).map_err(EditError::InvalidPatch)?;
    plan(workspace, &patch)
}

/// What `patch` would do, checked against the disk.
///
/// # Errors
/// As [`plan_text`].
pub(crate) fn plan(workspace: &ConfinedRoot, patch: &Patch) -> Result<Staging, EditError> {
    if patch.files.is_empty() {
        return Err(EditError::InvalidPatch("The patch changes no file: it has no `*** Add File:`, `*** Delete File:` or `*** Update File:` section.".to_owned()));
    }
    let mut staging = Staging {
        source: APPLY_PATCH_TOOL_NAME,
        ops: Vec::new(),
        files: Vec::new(),
        diff: String::new(),
    };
    let mut seen: HashSet<RelPath> = HashSet::new();
    // Paths the patch creates a file at that are a folder, or below a file: checked once the
    // whole patch is read (it must delete the file, or every file of the folder).
    let mut kind_changes: Vec<RelPath> = Vec::new();
    let mut claim = |rel: &RelPath| {
        if seen.insert(rel.clone()) {
            Ok(())
        } else {
            Err(EditError::PatchConflict(format!(
                "{} is changed more than once by this patch: put all its changes in one section",
                rel.display()
            )))
        }
    };
    for file in &patch.files {
        match file {
            PatchFile::Add { path, content, style, executable } => {
                let rel = resolve_path(workspace, path)?;
                claim(&rel)?;
                add(
                    workspace,
                    &mut staging,
                    &rel,
                    (content, *executable),
                    *style,
                    &mut kind_changes,
                )?;
            }
            PatchFile::Delete { path, old } => {
                refuse_symlink(workspace, path, "delete")?;
                let rel = resolve_path(workspace, path)?;
                claim(&rel)?;
                delete(workspace, &mut staging, &rel, old.as_deref())?;
            }
            PatchFile::Update { path, move_to, chunks, style, executable } => {
                if move_to.is_some() {
                    refuse_symlink(workspace, path, "move")?;
                }
                let rel = resolve_path(workspace, path)?;
                claim(&rel)?;
                let display = rel.display();
                let (text, fingerprint) = match read_text(workspace, &rel)? {
                    Found::Text { text, fingerprint } => (text, fingerprint),
                    Found::Absent => {
                        return Err(EditError::PatchConflict(format!(
                            "Failed to read file to update {display}: it does not exist"
                        )));
                    }
                };
                let edits = apply_chunks(&display, &text, chunks, *style)
                    .map_err(EditError::PatchConflict)?;
                let to = match move_to {
                    Some(to) => Some(resolve_path(workspace, to)?).filter(|to| *to != rel),
                    None => None,
                };
                // A mode the diff gives it that it does not have yet.
                let mode = mode_of(workspace, &rel) & 0o7777;
                let chmod = executable
                    .map(|x| (mode, with_executable(mode, x)))
                    .filter(|(old, new)| old != new);
                match to {
                    None => {
                        if edits.is_empty() && chmod.is_none() {
                            continue;
                        }
                        updated(
                            &mut staging,
                            display,
                            (&text, fingerprint),
                            edits,
                            chmod,
                            *executable,
                        )?;
                    }
                    Some(to) => {
                        claim(&to)?;
                        moved(
                            workspace,
                            &mut staging,
                            (&rel, &text, fingerprint),
                            (&to, &mut kind_changes),
                            (edits, chmod.and(*executable).zip(chmod)),
                            *style,
                        )?;
                    }
                }
            }
        }
    }
    if staging.ops.is_empty() {
        return Err(EditError::PatchConflict(
            "No changes to make: the patch leaves every file as it is.".to_owned(),
        ));
    }
    check_kind_changes(workspace, &staging.ops, &kind_changes)?;
    Ok(staging)
}

/// A path the patch creates a file at, as [`read_text`] finds it; but a folder there, or a
/// file where a folder of its path would be, is noted in `kind_changes` and taken as absent,
/// for [`check_kind_changes`] to check once the whole patch is read.
fn read_dest(
    workspace: &ConfinedRoot,
    rel: &RelPath,
    kind_changes: &mut Vec<RelPath>,
) -> Result<Found, EditError> {
    match workspace.fs().symlink_metadata(rel) {
        Ok(meta) if meta.is_dir() => {}
        Err(err) if err.raw_os_error() == Some(libc::ENOTDIR) => {}
        _ => return read_text(workspace, rel),
    }
    kind_changes.push(rel.clone());
    Ok(Found::Absent)
}

/// A file the patch creates where a folder is takes the folder's place only when the patch
/// deletes (or moves away) every file in it; one below a file's path, only when the patch
/// deletes (or moves away) that file. Otherwise the error names what stays.
pub(crate) fn check_kind_changes(
    workspace: &ConfinedRoot,
    ops: &[FileOp],
    kind_changes: &[RelPath],
) -> Result<(), EditError> {
    let gone: HashSet<RelPath> = ops
        .iter()
        .filter_map(|op| match op {
            FileOp::Delete { path, .. } => Some(path.as_str()),
            FileOp::Move { from, .. } => Some(from.as_str()),
            FileOp::Update { .. } | FileOp::Create { .. } => None,
        })
        .filter_map(|path| RelPath::new(path).ok())
        .collect();
    for rel in kind_changes {
        let display = rel.display();
        if let Ok(dir) = workspace.fs().dir(Some(rel)) {
            if let Some(kept) = kept_file(&dir, rel, &gone)
                .map_err(|err| EditError::Read(format!("Failed to read {display}: {err}")))?
            {
                return Err(EditError::PatchConflict(format!(
                    "{display} is a folder, and the patch does not delete {}: a file takes a folder's place only when the patch deletes every file in it",
                    kept.display()
                )));
            }
            continue;
        }
        // The topmost folder of its path that is not a folder.
        let mut ancestors = Vec::new();
        let mut cursor = rel.parent();
        while let Some(dir) = cursor {
            cursor = dir.parent();
            ancestors.push(dir);
        }
        let blocker =
            ancestors.into_iter().rev().find(|dir| workspace.fs().dir(Some(dir)).is_err());
        let Some(blocker) = blocker else { continue };
        let is_file = workspace.fs().symlink_metadata(&blocker).is_ok_and(|meta| meta.is_file());
        if !(is_file && gone.contains(&blocker)) {
            return Err(EditError::Path(format!(
                "{display}: a folder on its path, {}, is a file the patch does not delete: a file becomes a folder only when the patch deletes it",
                blocker.display()
            )));
        }
    }
    Ok(())
}

/// The first entry below the folder `dir` (at `rel`) that is not a regular file in `gone`,
/// folders searched through.
fn kept_file(
    dir: &staged_fs::DirHandle,
    rel: &RelPath,
    gone: &HashSet<RelPath>,
) -> std::io::Result<Option<RelPath>> {
    let mut names = dir.names()?;
    names.sort();
    for name in names {
        let child = rel.join(&name).map_err(std::io::Error::other)?;
        match dir.entry_metadata(&name)? {
            Some(meta) if meta.is_dir() => {
                if let Some(kept) = kept_file(&dir.open_dir(&name)?, &child, gone)? {
                    return Ok(Some(kept));
                }
            }
            Some(meta) if meta.is_file() && gone.contains(&child) => {}
            Some(_) => return Ok(Some(child)),
            None => {}
        }
    }
    Ok(None)
}

pub(crate) fn diff(
    header: DiffHeader<'_>,
    text: &str,
    edits: &[Edit],
) -> Result<String, EditError> {
    file_diff_indexed(&header, &LineIndex::new(text), edits)
        .map_err(|err| EditError::PatchConflict(err.to_string()))
}

/// A mode change a diff asks of a file: whether it becomes executable, and its mode bits
/// before and after.
type Chmod = (bool, (u32, u32));

/// What a file's summary says of the mode a diff gives it: `mode 100644 → 100755`.
fn mode_summary(chmod: Option<(u32, u32)>) -> Option<String> {
    let git = |mode: u32| if mode & 0o111 != 0 { "100755" } else { "100644" };
    chmod.map(|(old, new)| format!("mode {} → {}", git(old), git(new)))
}

/// `*** Add File`: a new file, or, in a Codex patch, the file replaced whole.
pub(crate) fn add(
    workspace: &ConfinedRoot,
    staging: &mut Staging,
    rel: &RelPath,
    (content, executable): (&str, bool),
    style: Style,
    kind_changes: &mut Vec<RelPath>,
) -> Result<(), EditError> {
    let path = rel.display();
    match read_dest(workspace, rel, kind_changes)? {
        Found::Absent => {
            let lines = line_count(content);
            let mode = if executable { EXECUTABLE_MODE } else { NEW_FILE_MODE };
            staging.diff.push_str(
                &new_file_diff(&path, content, mode)
                    .map_err(|err| EditError::PatchConflict(err.to_string()))?,
            );
            let mut summary = format!("new file, {}", plural(lines, "line"));
            if executable {
                summary.push_str(", mode 100755");
            }
            staging.files.push(ChangedFile {
                path: path.clone(),
                from: None,
                change: ChangeKind::Added,
                summary,
                lines_added: lines,
                lines_removed: 0,
            });
            staging.ops.push(FileOp::Create { path, content: content.to_owned(), executable });
        }
        Found::Text { .. } if style != Style::Codex => {
            return Err(EditError::PatchConflict(format!(
                "{path} already exists, but the patch creates it as a new file"
            )));
        }
        Found::Text { text, fingerprint } => {
            // Codex writes an added file over one that exists.
            check_new_text(&path, &text, content)?;
            let edits = line_edits(&text, content);
            if edits.is_empty() {
                return Ok(());
            }
            staging.push_update(path, &text, fingerprint, edits, Some("replaced whole"))?;
        }
    }
    Ok(())
}

/// `*** Delete File`.
pub(crate) fn delete(
    workspace: &ConfinedRoot,
    staging: &mut Staging,
    rel: &RelPath,
    old: Option<&[String]>,
) -> Result<(), EditError> {
    let path = rel.display();
    let (text, fingerprint) = match read_text(workspace, rel)? {
        Found::Text { text, fingerprint } => (text, fingerprint),
        Found::Absent => {
            return Err(EditError::PatchConflict(format!(
                "Failed to delete file {path}: it does not exist"
            )));
        }
    };
    if let Some(old) = old {
        let lines: Vec<&str> = text
            .split_inclusive('\n')
            // A line's `\r\n` or `\n` ends it; a last line's `\r` with no `\n` is its text.
            .map(|l| l.strip_suffix('\n').map_or(l, |l| l.strip_suffix('\r').unwrap_or(l)))
            .collect();
        if lines.len() != old.len() || lines.iter().zip(old).any(|(a, b)| a != b) {
            return Err(EditError::PatchConflict(format!(
                "Failed to delete file {path}: it does not hold the lines the patch deletes"
            )));
        }
    }
    let mode = mode_of(workspace, rel);
    let lines = line_count(&text);
    staging.diff.push_str(
        &deleted_file_diff(&path, &text, mode)
            .map_err(|err| EditError::PatchConflict(err.to_string()))?,
    );
    staging.files.push(ChangedFile {
        path: path.clone(),
        from: None,
        change: ChangeKind::Deleted,
        summary: format!("deleted, {}", plural(lines, "line")),
        lines_added: 0,
        lines_removed: lines,
    });
    staging.ops.push(FileOp::Delete { path, fingerprint });
    Ok(())
}

/// Stages an update of the file `display` in place: its `edits` and, with `chmod` (its old and
/// new mode), the executable bit the diff gives it.
fn updated(
    staging: &mut Staging,
    display: String,
    (text, fingerprint): (&str, String),
    edits: Vec<Edit>,
    chmod: Option<(u32, u32)>,
    executable: Option<bool>,
) -> Result<(), EditError> {
    let (added, removed) = line_counts(&edits);
    let header = match chmod {
        Some((old, new)) => DiffHeader::Chmod { from: &display, to: &display, old, new },
        None => DiffHeader::Modify { path: &display },
    };
    staging.diff.push_str(&diff(header, text, &edits)?);
    let mut summary = format!("+{added} -{removed}");
    if let Some(said) = mode_summary(chmod) {
        summary = if edits.is_empty() { said } else { format!("{summary}, {said}") };
    }
    staging.files.push(ChangedFile {
        path: display.clone(),
        from: None,
        change: ChangeKind::Updated,
        summary,
        lines_added: added,
        lines_removed: removed,
    });
    staging.ops.push(FileOp::Update {
        path: display,
        fingerprint,
        edits,
        executable: chmod.and(executable),
    });
    Ok(())
}

/// `*** Move to`: the file moves (with its edits); onto a file that exists, Codex writes over
/// it, so that file is updated and the source deleted.
pub(crate) fn moved(
    workspace: &ConfinedRoot,
    staging: &mut Staging,
    (from, text, fingerprint): (&RelPath, &str, String),
    (to, kind_changes): (&RelPath, &mut Vec<RelPath>),
    (edits, chmod): (Vec<Edit>, Option<Chmod>),
    style: Style,
) -> Result<(), EditError> {
    let (from_path, to_path) = (from.display(), to.display());
    match read_dest(workspace, to, kind_changes)? {
        Found::Absent => {
            let (added, removed) = line_counts(&edits);
            let header = match chmod {
                Some((_, (old, new))) => {
                    DiffHeader::Chmod { from: &from_path, to: &to_path, old, new }
                }
                None => DiffHeader::Rename { from: &from_path, to: &to_path },
            };
            staging.diff.push_str(&diff(header, text, &edits)?);
            let mut summary = if edits.is_empty() {
                format!("moved from {from_path}")
            } else {
                format!("moved from {from_path}, +{added} -{removed}")
            };
            if let Some(said) = mode_summary(chmod.map(|(_, modes)| modes)) {
                summary = format!("{summary}, {said}");
            }
            staging.files.push(ChangedFile {
                path: to_path.clone(),
                from: Some(from_path.clone()),
                change: ChangeKind::Moved,
                summary,
                lines_added: added,
                lines_removed: removed,
            });
            staging.ops.push(FileOp::Move {
                from: from_path,
                to: to_path,
                fingerprint,
                edits,
                executable: chmod.map(|(x, _)| x),
            });
        }
        Found::Text { .. } if style != Style::Codex => {
            return Err(EditError::PatchConflict(format!(
                "{to_path} already exists, but the patch moves {from_path} there"
            )));
        }
        Found::Text { text: target, fingerprint: target_fingerprint } => {
            let new = staged_journal::replay(text, &edits).ok_or_else(|| {
                EditError::PatchConflict(format!("Failed to apply the patch to {from_path}"))
            })?;
            check_new_text(&to_path, &target, &new)?;
            let over = line_edits(&target, &new);
            let note = format!("replaced by {from_path}");
            staging.push_update(to_path, &target, target_fingerprint, over, Some(&note))?;
            let mode = mode_of(workspace, from);
            let lines = line_count(text);
            staging.diff.push_str(
                &deleted_file_diff(&from_path, text, mode)
                    .map_err(|err| EditError::PatchConflict(err.to_string()))?,
            );
            staging.files.push(ChangedFile {
                path: from_path.clone(),
                from: None,
                change: ChangeKind::Deleted,
                summary: format!("deleted (moved onto {})", to.display()),
                lines_added: 0,
                lines_removed: lines,
            });
            staging.ops.push(FileOp::Delete { path: from_path, fingerprint });
        }
    }
    Ok(())
}

/// A path that is a symlink cannot be deleted or moved: its path resolves to the link's
/// target, which is not what the patch names (deleting it would delete the target and leave
/// the link). staged does not stage symlinks.
pub(crate) fn refuse_symlink(
    workspace: &ConfinedRoot,
    given: &str,
    what: &str,
) -> Result<(), EditError> {
    let link = workspace
        .lexical(given)
        .ok()
        .and_then(|path| std::fs::symlink_metadata(path).ok())
        .is_some_and(|meta| meta.file_type().is_symlink());
    if link {
        return Err(EditError::PatchConflict(format!(
            "{given} is a symbolic link: staged does not stage symlinks, only regular text files; {what} the link yourself (rm, mv)"
        )));
    }
    Ok(())
}

/// The mode bits of the file at `rel`, for the diff's `deleted file mode` line.
fn mode_of(workspace: &ConfinedRoot, rel: &RelPath) -> u32 {
    workspace
        .fs()
        .parent(rel)
        .ok()
        .and_then(|(dir, name)| dir.file_mode(&name).ok())
        .unwrap_or(NEW_FILE_MODE)
}
