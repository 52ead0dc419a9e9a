//! Change sets: what a preview does to each file, checked against the disk and turned into
//! the steps of one commit, the diff as written, and the data that undoes it.
//!
//! A text preview (`edit`, `write`, `apply_patch`) stages a list of [`FileOp`]s: edits to a
//! file (as byte ranges of the text the preview read), a new file, a deleted file, or a moved
//! one. Applying re-reads every file, requires each to be byte-identical to what the preview
//! read (and each file it creates to be still absent), makes exactly those edits, and writes
//! everything or nothing through the journal. What it wrote is logged as [`Applied`] ops, the
//! undo data, from which [`crate::undo`] writes the earlier state back.

use serde::{Deserialize, Serialize};
use staged_core::FileChange;
use staged_fs::RelPath;

use crate::{
    ConfinedRoot, DiffHeader, JournalError, LineIndex, Splice,
    diff::file_diff_indexed,
    fingerprint::fingerprint,
    journal::{Expect, Step, StepChange, StepMode},
};

mod described;

pub use described::{
    EXECUTABLE_MODE, NEW_FILE_MODE, deleted_file_diff, describe_applied, new_file_diff,
};

/// At byte `start` of the text read, `before` is replaced by `after`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// The first byte replaced.
    pub start: usize,
    /// The text replaced.
    pub before: String,
    /// The text put in its place.
    pub after: String,
}

impl Splice for Edit {
    fn span(&self) -> std::ops::Range<usize> {
        self.start..self.start + self.before.len()
    }

    fn replacement(&self) -> &str {
        &self.after
    }
}

/// `text` with `edits` (in order, not overlapping) made, each checked to replace exactly its
/// `before`; `None` when one does not fit (the edits do not belong to this text).
pub fn replay(text: &str, edits: &[Edit]) -> Option<String> {
    let grows: usize = edits.iter().map(|e| e.after.len()).sum();
    let mut res = String::with_capacity(text.len().saturating_add(grows));
    let mut cursor = 0;
    for edit in edits {
        let end = edit.start.checked_add(edit.before.len())?;
        if edit.start < cursor || text.get(edit.start..end)? != edit.before {
            return None;
        }
        res.push_str(text.get(cursor..edit.start)?);
        res.push_str(&edit.after);
        cursor = end;
    }
    res.push_str(text.get(cursor..)?);
    Some(res)
}

/// The edits that turn the text `edits` produced back into the text they were made on:
/// offsets moved into the written text, `before` and `after` swapped.
pub fn invert(edits: &[Edit]) -> Option<Vec<Edit>> {
    let mut shift: isize = 0;
    let mut res = Vec::with_capacity(edits.len());
    for edit in edits {
        let start = edit.start.checked_add_signed(shift)?;
        shift +=
            isize::try_from(edit.after.len()).ok()? - isize::try_from(edit.before.len()).ok()?;
        res.push(Edit { start, before: edit.after.clone(), after: edit.before.clone() });
    }
    Some(res)
}

/// `edits` (sorted, not overlapping) cut in two by `picks`: the picked ones as they are, and
/// the others moved into the text the picked ones leave (offsets shifted by what each picked
/// edit before them added or removed). `None` when `picks` does not have one entry per edit or
/// an offset overflows.
pub(crate) fn split_edits(edits: &[Edit], picks: &[bool]) -> Option<(Vec<Edit>, Vec<Edit>)> {
    if edits.len() != picks.len() {
        return None;
    }
    let mut shift: isize = 0;
    let mut mine = Vec::new();
    let mut left = Vec::new();
    for (edit, picked) in edits.iter().zip(picks) {
        if *picked {
            shift += isize::try_from(edit.after.len()).ok()?
                - isize::try_from(edit.before.len()).ok()?;
            mine.push(edit.clone());
        } else {
            let start = edit.start.checked_add_signed(shift)?;
            left.push(Edit { start, ..edit.clone() });
        }
    }
    Some((mine, left))
}

/// What a preview does to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", deny_unknown_fields)]
pub enum FileOp {
    /// Edits to an existing file.
    Update {
        /// The file, relative to the root, `/`-separated.
        path: String,
        /// SHA-256 of the bytes the preview read.
        fingerprint: String,
        /// The edits, on the text read.
        edits: Vec<Edit>,
        /// A mode to give it: executable (`true`: the executable bits set where the read
        /// bits are, a diff's `new mode 100755`) or not (`false`: cleared, `100644`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        executable: Option<bool>,
    },
    /// A new file (with the folders it needs).
    Create {
        /// Where.
        path: String,
        /// Its text.
        content: String,
        /// Whether it is made executable (a diff's `new file mode 100755`): it gets what any
        /// new executable gets, 0777 less the umask.
        #[serde(default, skip_serializing_if = "is_false")]
        executable: bool,
    },
    /// An existing file, deleted.
    Delete {
        /// The file.
        path: String,
        /// SHA-256 of the bytes the preview read.
        fingerprint: String,
    },
    /// An existing file moved (keeping its mode), with edits to its text.
    Move {
        /// Where it is.
        from: String,
        /// Where it goes; nothing may be there.
        to: String,
        /// SHA-256 of the bytes the preview read at `from`.
        fingerprint: String,
        /// The edits, on the text read.
        edits: Vec<Edit>,
        /// A mode to give it, as for [`FileOp::Update`]; otherwise it keeps its own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        executable: Option<bool>,
    },
}

#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde's skip_serializing_if")]
fn is_false(b: &bool) -> bool {
    !*b
}

/// `mode` made executable (the executable bits set where the read bits are, the owner's at
/// least) or not (every executable bit cleared), as `chmod +x` and `chmod -x` do.
pub fn with_executable(mode: u32, executable: bool) -> u32 {
    if executable { mode | 0o100 | ((mode & 0o044) >> 2) } else { mode & !0o111 }
}

/// A file's mode that an apply changed, as its undo data keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeChange {
    /// The file (where it is after the apply).
    pub path: String,
    /// Its mode bits before.
    pub old: u32,
    /// Its mode bits after.
    pub new: u32,
}

impl FileOp {
    /// The path the file ends at (for a move, where it goes).
    pub fn path(&self) -> &str {
        match self {
            FileOp::Update { path, .. }
            | FileOp::Create { path, .. }
            | FileOp::Delete { path, .. } => path,
            FileOp::Move { to, .. } => to,
        }
    }

    /// Where a moved file was.
    pub fn from(&self) -> Option<&str> {
        match self {
            FileOp::Move { from, .. } => Some(from),
            _ => None,
        }
    }

    /// Every path the op writes.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path()).chain(self.from())
    }

    /// The path it reads, if it reads one.
    fn source(&self) -> Option<&str> {
        match self {
            FileOp::Update { path, .. } | FileOp::Delete { path, .. } => Some(path),
            FileOp::Move { from, .. } => Some(from),
            FileOp::Create { .. } => None,
        }
    }
}

/// What was written to one file, as the resolve log keeps it to undo it: enough to compute
/// the earlier state from the later one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", deny_unknown_fields)]
pub enum Applied {
    /// Edits made to the file at `path` (offsets in the text before).
    Update {
        /// The file.
        path: String,
        /// The edits made.
        edits: Vec<Edit>,
    },
    /// The file created at `path`.
    Create {
        /// The file.
        path: String,
        /// What it was created with.
        content: String,
        /// Its mode bits, when they were not those of any new file (a deleted file restored).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    /// The file deleted at `path`.
    Delete {
        /// The file.
        path: String,
        /// What it held.
        content: String,
        /// Its mode bits.
        mode: u32,
    },
    /// The file moved from `from` to `to`, with edits (offsets in the text before).
    Move {
        /// Where it was.
        from: String,
        /// Where it went.
        to: String,
        /// The edits made.
        edits: Vec<Edit>,
    },
}

/// The undo data of an apply: what it did, in order, and the folders it created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UndoData {
    /// The version of its shape (the crate's `UNDO_DATA_VERSION`).
    pub version: u64,
    /// What was written.
    pub ops: Vec<Applied>,
    /// The folders the apply created for new files, parents first: an undo removes those it
    /// leaves empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
    /// The modes the apply changed (of files it updated or moved): an undo sets the old ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modes: Vec<ModeChange>,
    /// The files it replaced whole, not as text (binary, over the text cap), their bytes kept
    /// by hash: an undo writes the bytes before back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<crate::kept::KeptChange>,
    /// The folders it made or removed as changes of their own (format 3; see
    /// `folder_ops.rs`): an undo removes those it made (once empty) and makes those it removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folders: Vec<crate::folder_ops::FolderChange>,
}

/// The undo data format this build writes when no folder changed. Format 1 (`{"version": 1,
/// "files": [{"path", "edits"}]}`, what `ast_edit` wrote before) is still read.
pub(crate) const UNDO_DATA_VERSION: u64 = 2;

/// The format of undo data that has [`UndoData::folders`]: format 2 and the folders, so a
/// build that does not know them refuses to undo such an entry rather than leave its folders.
pub(crate) const UNDO_DATA_FOLDERS_VERSION: u64 = 3;

impl UndoData {
    /// The undo data of `ops`, with no folders created.
    pub fn of(ops: Vec<Applied>) -> UndoData {
        UndoData {
            version: UNDO_DATA_VERSION,
            ops,
            dirs: Vec::new(),
            modes: Vec::new(),
            kept: Vec::new(),
            folders: Vec::new(),
        }
    }

    /// With `folders` (and the format that has them, when there are any).
    pub fn with_folders(mut self, folders: Vec<crate::folder_ops::FolderChange>) -> UndoData {
        self.version =
            if folders.is_empty() { UNDO_DATA_VERSION } else { UNDO_DATA_FOLDERS_VERSION };
        self.folders = folders;
        self
    }

    /// This undo data, leaving one with no ops in its place.
    pub fn take(&mut self) -> UndoData {
        std::mem::replace(self, UndoData::of(Vec::new()))
    }

    /// As the log stores it.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// [`UndoData::to_value`], its texts moved into the value rather than copied (a 50 MB
    /// rewrite's edits are 100 MB of text).
    pub fn into_value(mut self) -> serde_json::Value {
        use serde_json::{Map, Value};
        fn edits_value(edits: Vec<Edit>) -> Value {
            let one = |edit: Edit| {
                let mut map = Map::new();
                map.insert("start".to_owned(), Value::from(edit.start));
                map.insert("before".to_owned(), Value::String(edit.before));
                map.insert("after".to_owned(), Value::String(edit.after));
                Value::Object(map)
            };
            Value::Array(edits.into_iter().map(one).collect())
        }
        let op_value = |op: Applied| {
            let mut map = Map::new();
            let mut put = |key: &str, value: Value| map.insert(key.to_owned(), value);
            match op {
                Applied::Update { path, edits } => {
                    put("op", Value::from("update"));
                    put("path", Value::String(path));
                    put("edits", edits_value(edits));
                }
                Applied::Create { path, content, mode } => {
                    put("op", Value::from("create"));
                    put("path", Value::String(path));
                    put("content", Value::String(content));
                    if let Some(mode) = mode {
                        put("mode", Value::from(mode));
                    }
                }
                Applied::Delete { path, content, mode } => {
                    put("op", Value::from("delete"));
                    put("path", Value::String(path));
                    put("content", Value::String(content));
                    put("mode", Value::from(mode));
                }
                Applied::Move { from, to, edits } => {
                    put("op", Value::from("move"));
                    put("from", Value::String(from));
                    put("to", Value::String(to));
                    put("edits", edits_value(edits));
                }
            }
            Value::Object(map)
        };
        let ops: Vec<Value> = std::mem::take(&mut self.ops).into_iter().map(op_value).collect();
        // The rest is small: serde writes it, and the ops go in its place.
        let mut value = self.to_value();
        if let Some(object) = value.as_object_mut() {
            object.insert("ops".to_owned(), Value::Array(ops));
        }
        value
    }
}

/// Why a preview no longer applies: the file and what happened to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    /// The file, as the preview names it.
    pub path: String,
    /// What happened, as the rest of a sentence: `changed since the preview`.
    pub why: String,
}

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.path, self.why)
    }
}

/// A change set checked against the disk: the commit's steps, the diff as it will be
/// written, each file's hashes, and the undo data.
#[derive(Debug)]
pub struct Checked {
    /// The steps of the commit.
    pub steps: Vec<Step>,
    /// The unified diff of what the steps write, file after file.
    pub diff: String,
    /// Each file written, with its SHA-256 before and after (`None`: no file).
    pub files: Vec<FileChange>,
    /// What undoes it.
    pub undo: UndoData,
    /// The text of each file read, before (see [`staged_core::LogRecord::texts`]).
    pub texts: Vec<String>,
}

/// Whether a [`check`] failed because the preview is stale or because of an error.
#[derive(Debug)]
pub enum CheckError {
    /// The files are not what the preview read: nothing may be written.
    Stale(Stale),
    /// Reading failed, or the change set is malformed.
    Failed(JournalError),
}

impl From<JournalError> for CheckError {
    fn from(err: JournalError) -> Self {
        CheckError::Failed(err)
    }
}

/// Reads every file `ops` touch and checks each is what the preview read (a file to create:
/// still absent), then computes what the commit writes. Each text read is moved into the
/// result's `texts` once used, not copied (a 50 MB file is held once, not twice).
///
/// # Errors
/// [`CheckError::Stale`] when a file changed, appeared or went away since the preview;
/// [`CheckError::Failed`] when a path is not one inside the workspace, or the edits do not fit
/// the text they were made on.
pub fn check(workspace: &ConfinedRoot, ops: &[&FileOp]) -> Result<Checked, CheckError> {
    check_known(workspace, ops, &|_| None)
}

/// [`check`], taking the text of a file the caller has just read from `known` (by path)
/// instead of reading it again, when that text is the one the op expects (its SHA-256 is the
/// op's fingerprint) and the op needs nothing else of the file (its mode: a deleted file's,
/// or a file whose executable bit the op sets). Every other file is read as [`check`] reads
/// it.
///
/// What the commit writes is computed on those texts, and each of its steps expects the
/// file to hash to the op's fingerprint: the commit's own check under its lock reads every
/// file again and refuses, writing nothing, if one changed since `known` read it. So this
/// saves a read and a hash of each known file, never the byte-exact staleness check.
///
/// # Errors
/// As [`check`].
pub fn check_known<'k>(
    workspace: &ConfinedRoot,
    ops: &[&FileOp],
    known: &dyn Fn(&str) -> Option<&'k str>,
) -> Result<Checked, CheckError> {
    let mut gathered = Gathered::default();
    let mut folders = LastFolder::default();
    for op in ops {
        // No change set writes staged's own state, whatever named the path (a model, a patch,
        // or a log entry's undo data that someone else edited).
        if let Some(path) = op
            .paths()
            .find(|path| RelPath::new(path).is_ok_and(|rel| workspace.is_state_path(&rel)))
        {
            return Err(CheckError::Failed(JournalError::StatePath(path.to_owned())));
        }
        let expected = expected_fingerprint(op);
        let text = op
            .source()
            .map(|path| match known(path).filter(|_| !needs_mode(op)) {
                // The mode is not read: this op does not use it.
                Some(text) if fingerprint(text.as_bytes()) == expected => Ok((text.to_owned(), 0)),
                _ => read_checked(workspace, path, expected, &mut folders),
            })
            .transpose()?;
        check_new_paths(workspace, op, &mut gathered.dirs)?;
        gathered.add(workspace, op, expected, text)?;
    }
    let Gathered { steps, diff, files, applied, dirs, texts, modes } = gathered;
    Ok(Checked {
        steps,
        diff,
        files,
        undo: UndoData { dirs, modes, ..UndoData::of(applied) },
        texts,
    })
}

/// What [`check_known`] computes of a change set, op after op.
#[derive(Default)]
struct Gathered {
    steps: Vec<Step>,
    diff: String,
    files: Vec<FileChange>,
    applied: Vec<Applied>,
    dirs: Vec<String>,
    texts: Vec<String>,
    modes: Vec<ModeChange>,
}

impl Gathered {
    /// Adds what `op` writes, on `text` (and the file's mode), the file it reads as checked
    /// (for an op that reads one), which hashes to `expected`.
    fn add(
        &mut self,
        workspace: &ConfinedRoot,
        op: &FileOp,
        expected: &str,
        text: Option<(String, u32)>,
    ) -> Result<(), CheckError> {
        let Gathered { steps, diff, files, applied, texts, modes, .. } = self;
        match op {
            FileOp::Update { path, edits, executable, .. } => {
                let (text, mode) = text.unwrap_or_default();
                let new = replay(&text, edits).ok_or(JournalError::EditOutOfBounds)?;
                let chmod = mode_change(path, mode, *executable);
                diff.push_str(&file_diff_indexed(
                    &chmod.as_ref().map_or(DiffHeader::Modify { path }, |c| DiffHeader::Chmod {
                        from: path,
                        to: path,
                        old: c.old,
                        new: c.new,
                    }),
                    &LineIndex::new(&text),
                    edits,
                )?);
                files.push(changed(path, expected, Some(&new)));
                steps.push(Step {
                    target: rel(workspace, path)?,
                    expect: Expect::Fingerprint(expected.to_owned()),
                    change: StepChange::Write {
                        bytes: new.into_bytes(),
                        mode: chmod.as_ref().map_or(StepMode::Keep, |c| StepMode::Bits(c.new)),
                    },
                });
                modes.extend(chmod);
                applied.push(Applied::Update { path: path.clone(), edits: edits.clone() });
                texts.push(text);
            }
            FileOp::Create { path, content, executable } => {
                let shown = if *executable { EXECUTABLE_MODE } else { NEW_FILE_MODE };
                diff.push_str(&new_file_diff(path, content, shown)?);
                files.push(change(path, None, Some(content)));
                steps.push(Step {
                    target: rel(workspace, path)?,
                    expect: Expect::Absent,
                    change: StepChange::Write {
                        bytes: content.clone().into_bytes(),
                        mode: if *executable { StepMode::Executable } else { StepMode::Default },
                    },
                });
                applied.push(Applied::Create {
                    path: path.clone(),
                    content: content.clone(),
                    mode: executable.then_some(EXECUTABLE_MODE),
                });
            }
            FileOp::Delete { path, .. } => {
                let (text, mode) = text.unwrap_or_default();
                diff.push_str(&deleted_file_diff(path, &text, mode)?);
                files.push(changed(path, expected, None));
                steps.push(Step {
                    target: rel(workspace, path)?,
                    expect: Expect::Fingerprint(expected.to_owned()),
                    change: StepChange::Delete,
                });
                texts.push(text.clone());
                applied.push(Applied::Delete { path: path.clone(), content: text, mode });
            }
            FileOp::Move { from, to, edits, executable, .. } => {
                let (text, mode) = text.unwrap_or_default();
                let new = replay(&text, edits).ok_or(JournalError::EditOutOfBounds)?;
                let chmod = mode_change(to, mode, *executable);
                diff.push_str(&file_diff_indexed(
                    &chmod.as_ref().map_or(DiffHeader::Rename { from, to }, |c| {
                        DiffHeader::Chmod { from, to, old: c.old, new: c.new }
                    }),
                    &LineIndex::new(&text),
                    edits,
                )?);
                files.push(changed(from, expected, None));
                files.push(change(to, None, Some(&new)));
                let source = rel(workspace, from)?;
                steps.push(Step {
                    target: rel(workspace, to)?,
                    expect: Expect::Absent,
                    change: StepChange::Write {
                        bytes: new.into_bytes(),
                        mode: chmod
                            .as_ref()
                            .map_or(StepMode::Of(source.clone()), |c| StepMode::Bits(c.new)),
                    },
                });
                steps.push(Step {
                    target: source,
                    expect: Expect::Fingerprint(expected.to_owned()),
                    change: StepChange::Delete,
                });
                modes.extend(chmod);
                applied.push(Applied::Move {
                    from: from.clone(),
                    to: to.clone(),
                    edits: edits.clone(),
                });
                texts.push(text);
            }
        }
        Ok(())
    }
}

/// Checks that the paths `op` creates (all but the one it reads) are still absent, and adds
/// the folders they need that are missing to `dirs`.
fn check_new_paths(
    workspace: &ConfinedRoot,
    op: &FileOp,
    dirs: &mut Vec<String>,
) -> Result<(), CheckError> {
    for path in op.paths().filter(|p| Some(*p) != op.source()) {
        let rel = rel(workspace, path)?;
        if exists(workspace, &rel)? {
            return Err(CheckError::Stale(Stale {
                path: path.to_owned(),
                why: "was created since the preview".to_owned(),
            }));
        }
        for dir in missing_dirs(workspace, &rel) {
            let dir = dir.display();
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    Ok(())
}

/// The mode change of the file that ends at `path`, whose mode is now `mode`, that
/// `executable` asks; `None` when it asks none, or the mode it has.
fn mode_change(path: &str, mode: u32, executable: Option<bool>) -> Option<ModeChange> {
    let old = mode & 0o7777;
    let new = with_executable(old, executable?);
    (new != old).then(|| ModeChange { path: path.to_owned(), old, new })
}

fn expected_fingerprint(op: &FileOp) -> &str {
    match op {
        FileOp::Update { fingerprint, .. }
        | FileOp::Delete { fingerprint, .. }
        | FileOp::Move { fingerprint, .. } => fingerprint,
        FileOp::Create { .. } => "",
    }
}

/// Whether `op` uses the mode bits of the file it reads: a deleted file's are in the diff
/// and the undo data, and a change of the executable bit starts from them.
fn needs_mode(op: &FileOp) -> bool {
    match op {
        FileOp::Update { executable, .. } | FileOp::Move { executable, .. } => executable.is_some(),
        FileOp::Delete { .. } => true,
        FileOp::Create { .. } => false,
    }
}

/// [`change`] of a file read whose SHA-256 (`before`) is known: the text read was checked
/// against it.
fn changed(path: &str, before: &str, after: Option<&str>) -> FileChange {
    FileChange {
        path: path.to_owned(),
        before: Some(before.to_owned()),
        after: after.map(|t| fingerprint(t.as_bytes())),
    }
}

fn change(path: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
    FileChange {
        path: path.to_owned(),
        before: before.map(|t| fingerprint(t.as_bytes())),
        after: after.map(|t| fingerprint(t.as_bytes())),
    }
}

fn rel(workspace: &ConfinedRoot, path: &str) -> Result<RelPath, JournalError> {
    workspace.rel(path)
}

/// Whether a file (or a symlink) is at `rel`, never following a symlink. A folder is not: a
/// change may delete every file in it and create a file at its path, and the commit checks
/// that it does (and refuses, naming a file that stays).
fn exists(workspace: &ConfinedRoot, rel: &RelPath) -> Result<bool, JournalError> {
    match workspace.fs().parent(rel) {
        Ok((dir, name)) => dir
            .entry_metadata(&name)
            .map(|m| m.is_some_and(|m| !m.is_dir()))
            .map_err(|err| JournalError::Read {
                path: workspace.root().join(rel.as_path()),
                message: err.to_string(),
                source: err,
            }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        // A folder on the way that is a file or a symlink: the commit refuses it, naming it.
        Err(_) => Ok(false),
    }
}

/// The folders above `rel` that do not exist, parents first.
fn missing_dirs(workspace: &ConfinedRoot, rel: &RelPath) -> Vec<RelPath> {
    let mut res = Vec::new();
    let mut cursor = rel.parent();
    while let Some(dir) = cursor {
        if workspace.fs().dir(Some(&dir)).is_ok() {
            break;
        }
        cursor = dir.parent();
        res.push(dir);
    }
    res.reverse();
    res
}

/// The folder of the file read last, kept for the next file of the same check: a check reads
/// the files of a change one after another, most of them in a folder shared with the file
/// before, and opening a folder from the root (one component at a time, without following a
/// symlink) costs more system calls than reading a small file. One handle at most, dropped
/// with the check.
#[derive(Default)]
pub(crate) struct LastFolder {
    last: Option<(Option<RelPath>, staged_fs::DirHandle)>,
}

impl LastFolder {
    /// The folder `rel` (the root for `None`): the one opened last if it is that, else opened
    /// from the root as [`staged_fs::Root::dir`] opens it.
    fn open(
        &mut self,
        workspace: &ConfinedRoot,
        rel: Option<RelPath>,
    ) -> std::io::Result<&staged_fs::DirHandle> {
        let (_, dir) = match self.last.take() {
            Some(last) if last.0 == rel => self.last.insert(last),
            _ => {
                let dir = workspace.fs().dir(rel.as_ref())?;
                self.last.insert((rel, dir))
            }
        };
        Ok(dir)
    }
}

/// The text and mode bits of the file at `path`, which must hash to `expected` (its folder
/// opened through `folders`).
pub(crate) fn read_checked(
    workspace: &ConfinedRoot,
    path: &str,
    expected: &str,
    folders: &mut LastFolder,
) -> Result<(String, u32), CheckError> {
    let rel = rel(workspace, path)?;
    let stale = |why: &str| CheckError::Stale(Stale { path: path.to_owned(), why: why.to_owned() });
    let Ok(dir) = folders.open(workspace, rel.parent()) else {
        return Err(stale("was deleted since the preview"));
    };
    let (bytes, meta) = match dir.read_with_metadata(rel.file_name()) {
        Ok(read) => read,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(stale("was deleted since the preview"));
        }
        Err(err) => {
            return Err(CheckError::Failed(JournalError::Read {
                path: workspace.root().join(rel.as_path()),
                message: err.to_string(),
                source: err,
            }));
        }
    };
    if fingerprint(&bytes) != expected {
        return Err(stale("changed since the preview"));
    }
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
    let text = String::from_utf8(bytes).map_err(|_| stale("is not UTF-8 text"))?;
    Ok((text, mode))
}

/// The ops of undo data that holds nothing but them (format 2 or 3, only `version` and
/// `ops`: what every text edit's entry keeps), read from its JSON text without building a
/// JSON value first; `None` for any other undo data, which [`crate::undo_ops`] reads as a
/// value (it may hold more: kept files, folders, a plugin's own).
pub fn plain_undo_ops(text: &str) -> Option<Vec<Applied>> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Plain {
        version: u64,
        ops: Vec<Applied>,
    }
    let plain: Plain = serde_json::from_str(text).ok()?;
    [UNDO_DATA_VERSION, UNDO_DATA_FOLDERS_VERSION].contains(&plain.version).then_some(plain.ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_undo_ops_reads_only_undo_data_of_ops_alone() {
        let plain = r#"{"ops":[{"edits":[{"after":"b\n","before":"a\n","start":0}],"op":"update","path":"x.txt"}],"version":2}"#;
        let ops = plain_undo_ops(plain).unwrap();
        let value: serde_json::Value = serde_json::from_str(plain).unwrap();
        assert_eq!(ops, crate::undo_ops(&value).unwrap());
        // More than ops (read as a value by its readers), another format, a key twice, not JSON.
        for other in [
            r#"{"ops":[],"version":2,"kept":[]}"#,
            r#"{"ops":[],"version":2,"staged/plugin":{}}"#,
            r#"{"files":[],"version":1}"#,
            r#"{"ops":[],"version":7}"#,
            r#"{"ops":[],"ops":[],"version":2}"#,
            r#"{"ops":["#,
        ] {
            assert_eq!(plain_undo_ops(other), None, "{other}");
        }
    }

    #[test]
    fn undo_data_moved_into_a_value_is_what_serde_writes() {
        let mut data = UndoData::of(vec![
            Applied::Update { path: "a".into(), edits: vec![edit(1, "x", "y")] },
            Applied::Create { path: "b".into(), content: "new\n".into(), mode: Some(0o755) },
            Applied::Create { path: "c".into(), content: String::new(), mode: None },
            Applied::Delete { path: "d".into(), content: "old\n".into(), mode: 0o644 },
            Applied::Move { from: "e".into(), to: "f/e".into(), edits: vec![] },
        ]);
        data.dirs.push("f".into());
        data.modes.push(ModeChange { path: "a".into(), old: 0o644, new: 0o755 });
        assert_eq!(data.clone().into_value(), data.to_value());
        let taken = data.take();
        assert_eq!(taken.ops.len(), 5);
        assert!(data.ops.is_empty() && data.dirs.is_empty());
    }

    fn edit(start: usize, before: &str, after: &str) -> Edit {
        Edit { start, before: before.to_owned(), after: after.to_owned() }
    }

    #[test]
    fn inverted_edits_restore_the_text_and_invert_back() {
        let before = "foo(1); foo(22); x";
        let edits = [edit(0, "foo(1)", "barbaz(1)"), edit(8, "foo(22)", "b(22)")];
        let after = replay(before, &edits).unwrap();
        assert_eq!(after, "barbaz(1); b(22); x");
        let inverse = invert(&edits).unwrap();
        assert_eq!(replay(&after, &inverse).unwrap(), before);
        let again = invert(&inverse).unwrap();
        assert_eq!(replay(before, &again).unwrap(), after);
    }

    #[test]
    fn split_edits_apply_in_either_order() {
        let before = "a1 b22 c333 d";
        let edits = [edit(0, "a1", "A"), edit(3, "b22", "BBBB"), edit(7, "c333", "")];
        let (mine, left) = split_edits(&edits, &[true, false, true]).unwrap();
        let middle = replay(before, &mine).unwrap();
        assert_eq!(middle, "A b22  d");
        assert_eq!(replay(&middle, &left).unwrap(), replay(before, &edits).unwrap());
        assert!(split_edits(&edits, &[true]).is_none());
    }

    #[test]
    fn edits_that_do_not_fit_the_text_are_refused() {
        assert!(replay("abc", &[edit(1, "x", "y")]).is_none());
        assert!(replay("abc", &[edit(2, "cd", "y")]).is_none());
        assert!(replay("abc", &[edit(1, "b", "y"), edit(0, "a", "z")]).is_none());
        assert!(replay("é", &[edit(1, "", "x")]).is_none());
    }

    #[test]
    fn new_and_deleted_files_get_git_headers() {
        assert_eq!(
            new_file_diff("a/b.txt", "one\ntwo\n", 0o644).unwrap(),
            "diff --git a/a/b.txt b/a/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a/b.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
        );
        assert_eq!(
            deleted_file_diff("x.sh", "run\n", 0o755).unwrap(),
            "diff --git a/x.sh b/x.sh\ndeleted file mode 100755\n--- a/x.sh\n+++ /dev/null\n@@ -1 +0,0 @@\n-run\n"
        );
        assert_eq!(
            new_file_diff("empty", "", 0o644).unwrap(),
            "diff --git a/empty b/empty\nnew file mode 100644\n"
        );
    }
}
