//! A session's review, read from the durable store and the disk: its net change, file by file
//! ([`Review::session_files`]), one log entry's own change on the files as they are now
//! ([`Review::entry_files`]), and the preview that reverts chosen hunks of either
//! ([`revert_ops`]), which the front ends apply through the journal like any preview.

use std::{cell::RefCell, collections::HashMap};

use staged_core::LogEntry;
use staged_journal::{Applied, ConfinedRoot, FileOp, fingerprint, undo_ops};

use staged_fs::{DirHandle, RelPath};
use staged_store::SqliteStore;

use crate::{
    files::{FileKind, SessionError, SessionFile, session_files},
    history::{LoggedChange, Texts},
    hunks::{RevertError, revert_edits},
};

/// The source tool name of a revert's preview: `staged undo` of it restores what it reverted.
pub const REVERT_SOURCE: &str = "session_revert";

/// The stand-in session number of one log entry read as a session of its own.
const ENTRY_AS_SESSION: u64 = u64::MAX;

/// Why a review cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The store could not be read.
    #[error("the session store could not be read: {0}")]
    Store(#[from] staged_core::StoreError),
    /// A file's history cannot be read or does not fit it.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A hunk cannot be reverted.
    #[error(transparent)]
    Revert(#[from] RevertError),
    /// A file of the change is not text staged can read now.
    #[error("{0}")]
    Unreadable(String),
}

/// A session whole ([`Review::session_whole`]).
#[derive(Debug, Default)]
pub struct SessionWhole {
    /// Its files, net.
    pub files: Vec<SessionFile>,
    /// The folders it made or removed, net.
    pub folders: Vec<staged_journal::FolderChange>,
    /// Its log entries recorded by comparing snapshots: number and label.
    pub by_snapshot: Vec<(u64, String)>,
    /// Its log entries that wrote files but whose undo data cannot be read (the log was
    /// changed outside staged): number and label. Their changes are not in `files`.
    pub unreadable: Vec<(u64, String)>,
}

/// A session's files, and its log entries whose undo data cannot be read (number, label).
type FilesRead = (Vec<SessionFile>, Vec<(u64, String)>);

/// A workspace's sessions, read from its store.
#[derive(Debug)]
pub struct Review<'a> {
    store: &'a SqliteStore,
    workspace: &'a ConfinedRoot,
}

impl<'a> Review<'a> {
    /// The review of `workspace`, whose durable store is `store`.
    pub fn new(store: &'a SqliteStore, workspace: &'a ConfinedRoot) -> Review<'a> {
        Review { store, workspace }
    }

    /// The net change of session `number`: the files it changed, composed from its own log
    /// entries (others' changes in between are not its own); empty when it wrote nothing.
    ///
    /// # Errors
    /// [`ReviewError`] when the log or a file's history cannot be read.
    pub fn session_files(&self, number: u64) -> Result<Vec<SessionFile>, ReviewError> {
        let Some(first) = self.store.first_entry_of(number)? else { return Ok(Vec::new()) };
        let (entries, ops) = self.history_from(first)?;
        self.files_of(number, &entries, ops, |entry| entry.session)
    }

    /// Session `number` whole, from one read of the log: its files as
    /// [`Review::session_files`] gives them, the folders it made or removed, net, as the disk
    /// still shows them (see `folders.rs`: a whole revert of the session takes them back), and
    /// its log entries recorded by comparing snapshots (their numbers and labels), whose
    /// changes may hold other programs' writes.
    ///
    /// # Errors
    /// [`ReviewError`] when the log or a file's history cannot be read.
    pub fn session_whole(&self, number: u64) -> Result<SessionWhole, ReviewError> {
        let Some(first) = self.store.first_entry_of(number)? else {
            return Ok(SessionWhole::default());
        };
        let (entries, ops) = self.history_from(first)?;
        let (files, unreadable) = self.files_read(number, &entries, ops, |entry| entry.session)?;
        let folders = crate::folders::net_folders(self.workspace, &entries, number);
        let by_snapshot = entries
            .iter()
            .filter(|e| e.session == Some(number) && crate::kept::by_snapshot(e))
            .map(|e| (e.seq, e.record.label.clone()))
            .collect();
        Ok(SessionWhole { files, folders, by_snapshot, unreadable })
    }

    /// Log entry `seq`'s own change on the files as they are now, as if it were a session of
    /// its own: what an out-of-order undo reverts.
    ///
    /// # Errors
    /// [`ReviewError`] when the log or a file's history cannot be read.
    pub fn entry_files(&self, seq: u64) -> Result<Vec<SessionFile>, ReviewError> {
        let (entries, ops) = self.history_from(seq)?;
        self.files_of(ENTRY_AS_SESSION, &entries, ops, |entry| {
            if entry.seq == seq { Some(ENTRY_AS_SESSION) } else { entry.session }
        })
    }

    /// Whether log entry `seq`'s recorded diff is what its undo data stands for, on the texts
    /// its files had before it (what an out-of-order undo writes must be what the log shows).
    ///
    /// # Errors
    /// A store error.
    pub fn entry_is_consistent(&self, seq: u64) -> Result<bool, ReviewError> {
        let entries = self.store.entries_from(seq)?;
        let Some(first) = entries.first().filter(|e| e.seq == seq) else { return Ok(false) };
        // An entry that replaced files only whole has no text diff to check.
        if first.record.undo.is_none() && !crate::kept::entry_kept(first).is_empty() {
            return Ok(true);
        }
        let Some(ops) = first.record.undo.as_ref().and_then(|data| undo_ops(data).ok()) else {
            return Ok(false);
        };
        let Some(entry) = staged_core::ResolveLog::entry(self.store, seq)? else {
            return Ok(false);
        };
        let logged = [LoggedChange { seq, session: None, ops: &ops, files: &first.record.files }];
        let texts =
            StoreTexts { store: self.store, workspace: self.workspace, folder: RefCell::default() };
        // The texts before it come from the kept texts, or from the entries after it.
        let after: Vec<Option<Vec<Applied>>> = entries
            .iter()
            .map(|e| e.record.undo.as_ref().and_then(|data| undo_ops(data).ok()))
            .collect();
        let mut all: Vec<LoggedChange<'_>> = logged.to_vec();
        all.extend(entries.iter().zip(&after).skip(1).filter_map(|(e, ops)| {
            Some(LoggedChange {
                seq: e.seq,
                session: e.session,
                ops: ops.as_deref()?,
                files: &e.record.files,
            })
        }));
        let mut before = crate::history::texts_before(seq, &all, &texts);
        let unknown = |before: &std::collections::BTreeMap<String, String>| {
            first.record.files.iter().any(|f| f.before.is_some() && !before.contains_key(&f.path))
        };
        if seq > 1 && unknown(&before) {
            // As for a session's files: the texts may be rebuilt from the entries before it.
            let earlier = self.entries_before(seq)?;
            let earlier_ops = ops_of(&earlier);
            let mut with_earlier = logged_of(&earlier, &earlier_ops, &|e: &LogEntry| e.session);
            with_earlier.extend(all);
            before = crate::history::texts_before(seq, &with_earlier, &texts);
        }
        Ok(staged_journal::describe_applied(&ops, &before).is_ok_and(|(diff, _)| {
            // The folders' lines come before the files' diffs (`staged_journal::folder_lines`).
            entry.record.diff.as_deref().map(staged_journal::without_folder_lines)
                == Some(diff.as_str())
        }))
    }

    fn files_of(
        &self,
        number: u64,
        entries: &[LogEntry],
        ops: Vec<Option<Vec<Applied>>>,
        session_of: impl Fn(&LogEntry) -> Option<u64>,
    ) -> Result<Vec<SessionFile>, ReviewError> {
        self.files_read(number, entries, ops, session_of).map(|(files, _)| files)
    }

    /// [`Review::files_of`], and the session's entries whose undo data cannot be read.
    fn files_read(
        &self,
        number: u64,
        entries: &[LogEntry],
        ops: Vec<Option<Vec<Applied>>>,
        session_of: impl Fn(&LogEntry) -> Option<u64>,
    ) -> Result<FilesRead, ReviewError> {
        let unreadable = entries
            .iter()
            .zip(&ops)
            .filter(|(entry, ops)| {
                ops.is_none() && session_of(entry) == Some(number) && unreadable_undo(entry)
            })
            .map(|(entry, _)| (entry.seq, entry.record.label.clone()))
            .collect();
        let kept: Vec<crate::kept::KeptEntry> = entries
            .iter()
            .zip(&ops)
            .filter(|(entry, _)| entry.record.outcome.is_undoable())
            .map(|(entry, ops)| {
                crate::kept::KeptEntry::of(entry, session_of(entry), ops.as_deref())
            })
            .collect();
        let logged = logged_of(entries, &ops, &session_of);
        let texts =
            StoreTexts { store: self.store, workspace: self.workspace, folder: RefCell::default() };
        let mut files = match session_files(number, &logged, &texts) {
            Ok(files) => files,
            // A text the chain needs may be rebuilt only from entries before these (another
            // session's, or the person's, that wrote the file first and whose text before the
            // store kept): a file changed outside staged since a later session wrote it.
            Err(SessionError::History(_)) if entries.first().is_some_and(|first| first.seq > 1) => {
                let earlier = self.entries_before(entries.first().map_or(0, |e| e.seq))?;
                let earlier_ops = ops_of(&earlier);
                let mut all = logged_of(&earlier, &earlier_ops, &session_of);
                all.extend(logged);
                session_files(number, &all, &texts)?
            }
            Err(err) => return Err(err.into()),
        };
        files.extend(crate::kept::kept_files(number, &kept, &|path| texts.sha_now(path)));
        Ok((files, unreadable))
    }

    /// The finished log entries from `first` on, and each one's operations (see [`ops_of`]).
    /// An entry whose undo data holds its ops alone (every text edit's) has them read from its
    /// JSON text, and keeps no JSON value of it: nothing else is read from such undo data, and
    /// the values of a long session's thousand entries were half of the log's reading. Any
    /// other entry's undo data is read as the value, as [`SqliteStore::entries_from`] gives it.
    fn history_from(&self, first: u64) -> Result<History, ReviewError> {
        let rows = self.store.entries_with_undo_text_from(first)?;
        let read = crate::files::in_two(rows, |(mut entry, text)| {
            let Some(text) = text else { return (entry, None) };
            if entry.record.outcome.is_undoable()
                && let Some(ops) = staged_journal::plain_undo_ops(&text)
            {
                return (entry, Some(ops));
            }
            entry.record.undo = serde_json::from_str(&text).ok();
            let ops = entry_ops(&entry);
            (entry, ops)
        });
        Ok(read.into_iter().unzip())
    }

    /// The finished log entries before entry `seq`: where a history whose text is missing is
    /// read back to, to rebuild it.
    fn entries_before(&self, seq: u64) -> Result<Vec<LogEntry>, ReviewError> {
        Ok(self.store.entries_from(1)?.into_iter().take_while(|e| e.seq < seq).collect())
    }

    /// The review states of session `number`'s hunks, by hunk key.
    ///
    /// # Errors
    /// A store error.
    pub fn review_states(&self, number: u64) -> Result<HashMap<String, String>, ReviewError> {
        Ok(self.store.reviewed(number)?.into_iter().collect())
    }
}

/// Each entry's operations, when it wrote files through the built-in tools: entries that wrote
/// nothing (discarded, stale, failed) or whose undo data is not the built-in tools' (a
/// plugin's) are not steps of any file's history, and a file they wrote shows as changed
/// outside staged between the steps around them. Each entry's undo data is its own: a long
/// session's are read on two threads.
fn ops_of(entries: &[LogEntry]) -> Vec<Option<Vec<Applied>>> {
    crate::files::in_two(entries.iter().collect(), entry_ops)
}

/// One entry's operations (see [`ops_of`]).
fn entry_ops(entry: &LogEntry) -> Option<Vec<Applied>> {
    entry.record.outcome.is_undoable().then_some(())?;
    entry.record.undo.as_ref().and_then(|data| undo_ops(data).ok())
}

/// Log entries, and each one's operations.
type History = (Vec<LogEntry>, Vec<Option<Vec<Applied>>>);

/// Whether `entry`, one whose operations could not be read, wrote files that way: an applied
/// entry of the built-in tools (not a plugin's, whose undo data is its own, nor one that
/// replaced files only whole) must have undo data that reads, so its change can be shown.
fn unreadable_undo(entry: &LogEntry) -> bool {
    /// Undo data a plugin keeps, under `staged/plugin`.
    #[derive(serde::Deserialize)]
    struct PluginUndo {
        #[serde(rename = "staged/plugin")]
        _plugin: serde::de::IgnoredAny,
    }
    entry.record.outcome.is_undoable()
        && !entry.record.files.is_empty()
        && entry
            .record
            .undo
            .as_ref()
            .is_none_or(|undo| <PluginUndo as serde::Deserialize>::deserialize(undo).is_err())
        && crate::kept::entry_kept(entry).is_empty()
}

/// The entries' changes as a history reads them, each of the session `session_of` says.
fn logged_of<'e>(
    entries: &'e [LogEntry],
    ops: &'e [Option<Vec<Applied>>],
    session_of: &impl Fn(&LogEntry) -> Option<u64>,
) -> Vec<LoggedChange<'e>> {
    entries
        .iter()
        .zip(ops)
        .filter_map(|(entry, ops)| {
            Some(LoggedChange {
                seq: entry.seq,
                session: session_of(entry),
                ops: ops.as_deref()?,
                files: &entry.record.files,
            })
        })
        .collect()
}

/// The kept texts and the disk, as a history reads them.
struct StoreTexts<'a> {
    store: &'a SqliteStore,
    workspace: &'a ConfinedRoot,
    /// The folder of the file read last, for the next file in the same folder (most of a
    /// session's files share theirs with the file before): one handle at most, for this one
    /// read of the session, where opening each file's folder from the root again costs more
    /// system calls than reading the file.
    folder: RefCell<Option<(Option<RelPath>, DirHandle)>>,
}

impl Texts for StoreTexts<'_> {
    fn text(&self, hash: &str) -> Option<String> {
        self.store.text(hash).ok().flatten()
    }

    fn now(&self, path: &str) -> Option<String> {
        read_now(self.workspace, path, &mut self.folder.borrow_mut())
    }

    /// A long session's files are read on two threads, each with its own last folder.
    fn now_all(&self, paths: Vec<&str>) -> Vec<Option<String>> {
        let workspace = self.workspace;
        crate::files::in_two_runs(paths, |run| {
            let mut folder = None;
            run.into_iter().map(|path| read_now(workspace, path, &mut folder)).collect()
        })
    }
}

/// The text of the file at `path` now, `None` when there is none; read through `folder`, the
/// handle of the folder of the file read before, when it is this file's too.
fn read_now(
    workspace: &ConfinedRoot,
    path: &str,
    folder: &mut Option<(Option<RelPath>, DirHandle)>,
) -> Option<String> {
    let rel = RelPath::new(path).ok()?;
    let parent = rel.parent();
    let (_, dir) = match folder.take() {
        Some(last) if last.0 == parent => folder.insert(last),
        _ => {
            let dir = workspace.fs().dir(parent.as_ref()).ok()?;
            folder.insert((parent, dir))
        }
    };
    String::from_utf8(dir.read(rel.file_name()).ok()?).ok()
}

impl StoreTexts<'_> {
    /// The SHA-256 of the file at `path` now, `None` when there is none (something that is
    /// not a file reads as a hash no file has).
    fn sha_now(&self, path: &str) -> Option<String> {
        let rel = staged_fs::RelPath::new(path).ok()?;
        let (dir, name) = self.workspace.fs().parent(&rel).ok()?;
        let meta = dir.entry_metadata(&name).ok()??;
        if !meta.is_file() {
            return Some("not a file".to_owned());
        }
        Some(dir.read(&name).map_or_else(|_| "unreadable".to_owned(), |b| fingerprint(&b)))
    }
}

/// Which hunks of one file to revert: all of them (the file as the session left it: a created
/// file is deleted, a deleted one comes back, a moved one moves back), or these (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// The whole file.
    Whole,
    /// These hunks.
    Hunks(Vec<usize>),
}

/// The file operations that revert `picks` (one per file of `files`, `None`: left alone) on
/// the files as they are now, each expecting the exact text the change was computed on.
///
/// # Errors
/// [`RevertError`] for a hunk the file does not have or one someone else changed since.
pub fn revert_ops(
    files: &[SessionFile],
    picks: &[Option<Pick>],
) -> Result<Vec<FileOp>, RevertError> {
    let mut ops = Vec::new();
    for (file, pick) in files.iter().zip(picks) {
        let Some(pick) = pick else { continue };
        // A file replaced whole is reverted by [`kept_reverts`].
        if file.kept.is_some() {
            continue;
        }
        let all: Vec<usize> = (1..=file.diff.hunks.len()).collect();
        let numbers = match pick {
            Pick::Whole => all.clone(),
            Pick::Hunks(numbers) => numbers.clone(),
        };
        let edits = revert_edits(&file.path, &file.net, &file.diff, &numbers)?;
        let now = fingerprint(file.history.now.as_bytes());
        let whole = *pick == Pick::Whole || numbers == all;
        if matches!(file.kind, FileKind::Created | FileKind::Deleted) {
            whole_unchanged(file)?;
        }
        match (&file.kind, whole) {
            (FileKind::Created, true) => {
                ops.push(FileOp::Delete { path: file.path.clone(), fingerprint: now });
            }
            (FileKind::Deleted, _) => {
                // It comes back as it was, an executable one executable.
                ops.push(FileOp::Create {
                    path: file.path.clone(),
                    content: file.net.without.clone(),
                    executable: file.history.mode.is_some_and(|mode| mode & 0o111 != 0),
                });
            }
            (FileKind::Moved { from }, true) => ops.push(FileOp::Move {
                from: file.path.clone(),
                to: from.clone(),
                fingerprint: now,
                edits,
                executable: None,
            }),
            _ if edits.is_empty() => {}
            _ => ops.push(FileOp::Update {
                path: file.path.clone(),
                fingerprint: now,
                edits,
                executable: None,
            }),
        }
    }
    Ok(ops)
}

/// Whether a file the session created or deleted is still as the session left it, so that it
/// may be reverted whole (deleted, or made again): none of the session's lines changed since.
/// (One that someone else made, removed or emptied since, with none of the session's lines
/// left, is no change of the session's at all: `files.rs` leaves it out.)
fn whole_unchanged(file: &SessionFile) -> Result<(), RevertError> {
    let changed = file.net.regions.iter().find_map(|region| match &region.state {
        crate::RegionState::ChangedSince { by, .. } => Some(crate::hunks::origin_text(by)),
        _ => None,
    });
    match changed {
        Some(by) => Err(RevertError::FileChangedSince { path: file.path.clone(), by }),
        None => Ok(()),
    }
}

/// The files replaced whole (binary, over the text cap) that `picks` names of `files`, as the
/// changes to undo ([`staged_journal::undo_kept`]): each is one unit, with one hunk.
///
/// # Errors
/// [`RevertError`] for a hunk other than 1, or a file someone else changed since.
pub fn kept_reverts(
    files: &[SessionFile],
    picks: &[Option<Pick>],
) -> Result<Vec<staged_journal::KeptChange>, RevertError> {
    let mut res = Vec::new();
    for (file, pick) in files.iter().zip(picks) {
        let (Some(pick), Some(kept)) = (pick, &file.kept) else { continue };
        if let Pick::Hunks(numbers) = pick
            && let Some(&number) = numbers.iter().find(|n| **n != 1)
        {
            return Err(RevertError::NoSuchHunk { path: file.path.clone(), number, count: 1 });
        }
        if let Some(by) = file.diff.hunks.first().and_then(|h| h.changed_since.as_ref()) {
            return Err(RevertError::ChangedSince {
                path: file.path.clone(),
                number: 1,
                by: crate::hunks::origin_text(by),
            });
        }
        res.push(kept.clone());
    }
    Ok(res)
}

/// `entry` with the files its shell record replaced whole in its undo data, so that the
/// journal's undo writes their bytes before back with its text changes (and an undo's
/// confirmation shows them, as `staged undo` asks).
pub fn with_kept(entry: &LogEntry) -> LogEntry {
    let has =
        entry.record.undo.as_ref().is_some_and(|undo| staged_journal::KeptInUndo::of(undo).named);
    let kept = crate::kept::entry_kept(entry);
    if has || kept.is_empty() {
        return entry.clone();
    }
    let mut entry = entry.clone();
    let mut undo = entry
        .record
        .undo
        .take()
        .unwrap_or_else(|| staged_journal::UndoData::of(Vec::new()).to_value());
    if let Some(object) = undo.as_object_mut() {
        object.insert("kept".to_owned(), serde_json::to_value(&kept).unwrap_or_default());
    }
    entry.record.undo = Some(undo);
    entry
}

/// The undo of the built-in tools' log entries that also reverts an entry out of order: when
/// later changes (other entries, other writers) touched its files, it reverts exactly the
/// entry's own lines if they are intact, and refuses naming what changed them otherwise.
#[derive(Debug, Clone)]
pub struct SessionUndo {
    workspace: ConfinedRoot,
    store: std::sync::Arc<SqliteStore>,
}

impl SessionUndo {
    /// The handler for `workspace`, whose durable store is `store`.
    pub fn new(workspace: ConfinedRoot, store: std::sync::Arc<SqliteStore>) -> SessionUndo {
        SessionUndo { workspace, store }
    }

    fn undo_now(
        &self,
        entry: &LogEntry,
        retirement: &staged_core::Retirement,
        cancel: &staged_core::CancelToken,
    ) -> Result<staged_protocol::ToolResult, staged_core::ActionError> {
        let entry = &with_kept(entry);
        match staged_journal::plan_or_changed(&self.workspace, entry) {
            // As it was written, or not undoable for another reason than later changes: the
            // plain undo does it, or says why not.
            Ok(_) | Err(staged_journal::PlanError::Other(_)) => {
                return staged_journal::undo_observed(
                    &self.workspace,
                    entry,
                    retirement,
                    cancel,
                    &mut |_| {},
                );
            }
            Err(staged_journal::PlanError::Changed(_)) => {}
        }
        let label = entry.record.label.as_str();
        let seq = entry.seq;
        let refuse = |why: String| {
            Ok(staged_protocol::ToolResult::error(format!(
                "Cannot undo log entry {seq} ({label}): {why}. Nothing was written."
            )))
        };
        // Not as the entry left them: its own lines may still be intact.
        let review = Review::new(&self.store, &self.workspace);
        // What it writes must be what the log shows.
        if !review.entry_is_consistent(seq).unwrap_or(false) {
            return staged_journal::undo_observed(
                &self.workspace,
                entry,
                retirement,
                cancel,
                &mut |_| {},
            );
        }
        let files = match review.entry_files(seq) {
            Ok(files) => files,
            // Its history cannot be read: the plain undo's refusal says why.
            Err(_) => {
                return staged_journal::undo_observed(
                    &self.workspace,
                    entry,
                    retirement,
                    cancel,
                    &mut |_| {},
                );
            }
        };
        if files.is_empty() {
            return refuse(
                "its change is no longer in the files (it was reverted since)".to_owned(),
            );
        }
        let picks = vec![Some(Pick::Whole); files.len()];
        let ops = match revert_ops(&files, &picks) {
            Ok(ops) => ops,
            Err(RevertError::ChangedSince { path, number, by }) => {
                return refuse(format!(
                    "its lines in {path} (hunk {number} of its change) were changed since by {by}; `staged undo {seq} --only FILE:HUNKS` reverts the rest"
                ));
            }
            Err(err) => return refuse(err.to_string()),
        };
        let kept = match kept_reverts(&files, &picks) {
            Ok(kept) => kept,
            Err(RevertError::ChangedSince { path, by, .. }) => {
                return refuse(format!(
                    "{path} (a file it replaced whole) was changed since by {by}; `staged undo {seq} --only FILE:HUNKS` reverts the rest"
                ));
            }
            Err(err) => return refuse(err.to_string()),
        };
        let op_refs: Vec<&FileOp> = ops.iter().collect();
        let mut checked = match staged_journal::check(&self.workspace, &op_refs) {
            Ok(checked) => checked,
            Err(staged_journal::CheckError::Stale(stale)) => {
                return refuse(format!("{} {}", stale.path, stale.why));
            }
            Err(staged_journal::CheckError::Failed(err)) => {
                return Err(staged_core::ActionError::other(err));
            }
        };
        match staged_journal::undo_kept(&self.workspace, &kept) {
            Ok(undo) => {
                checked.steps.extend(undo.steps);
                checked.files.extend(undo.files);
                checked.undo.kept = undo.done;
            }
            Err(staged_journal::KeptError::Changed(paths)) => {
                return refuse(format!("{} changed since it was read", paths.join(", ")));
            }
            Err(staged_journal::KeptError::Failed(why)) => return refuse(why),
        }
        staged_journal::undo_checked(&self.workspace, seq, label, checked, retirement, cancel)
    }
}

#[async_trait::async_trait]
impl staged_core::UndoHandler for SessionUndo {
    async fn undo(
        &self,
        entry: &LogEntry,
        retirement: &staged_core::Retirement,
        cancel: &staged_core::CancelToken,
    ) -> Result<staged_protocol::ToolResult, staged_core::ActionError> {
        let this = self.clone();
        let entry = entry.clone();
        let retirement = retirement.clone();
        let cancel = cancel.clone();
        tokio::task::spawn_blocking(move || this.undo_now(&entry, &retirement, &cancel))
            .await
            .map_err(|err| {
                staged_core::ActionError::other(staged_core::worker_failure("undo", err))
            })?
    }
}
