//! Keep and revert of an agent session's hunks, shared by every front end that reviews
//! sessions: `staged session revert|keep`, the sessions view of `staged review`, and the
//! review page of `staged ui` call these, never a second implementation.
//!
//! [`Loaded`] is a session's net change read afresh (its files, hunks and review states, from
//! `staged_session`); [`revert_picked`] writes the chosen hunks back to what they were before
//! the session, all or nothing, as one log entry `staged undo` can undo, and leaves the
//! session's model a notice; [`keep_picked`] marks hunks reviewed. Nothing here prints.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;
use staged_core::{
    AppliedChange, CancelToken, FrontEnd, LogAction, LogOutcome, LogRecord, MAX_REASON_CHARS,
    PendingId, Retirement,
};
use staged_journal::{
    DiffKind, FileOp, FolderChange, FolderSteps, JournalError, KeptChange, KeptError, PartFile,
    commit_applied_folders,
};
use staged_session::{
    FileKind, Hunk, Pick, REVERT_SOURCE, SessionFile, kept_reverts, origin_text, revert_ops,
};
use staged_store::{SessionRow, SqliteStore};

use crate::WorkspaceSession;

mod words;

use words::{bare_picks, described_revert, notice_text, renumbered, the_rest};

/// The review state of a kept hunk.
pub(crate) const KEPT: &str = "kept";

/// Why a session's change could not be read, kept or reverted; nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SessionActionError(pub String);

fn fail(text: impl std::fmt::Display) -> SessionActionError {
    SessionActionError(text.to_string())
}

/// A session's files, with the hunks' review states.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The session.
    pub row: SessionRow,
    /// What is reverted: `S3`, or `log entry 14` for part of one entry.
    pub name: String,
    /// The session whose model is told of a revert.
    pub notify: Option<u64>,
    /// Its files, net.
    pub files: Vec<SessionFile>,
    /// The folders it made or removed, net (a session's; none for one log entry's part): a
    /// whole revert takes them back.
    pub folders: Vec<FolderChange>,
    /// The review states of its hunks, by hunk key.
    pub states: HashMap<String, String>,
    /// Its log entries recorded by comparing a shell command's snapshots (number and label):
    /// their changes may hold other programs' writes.
    pub by_snapshot: Vec<(u64, String)>,
    /// Its log entries that wrote files but whose undo data cannot be read (number and label):
    /// their changes are not in `files`, so neither shown nor reverted.
    pub unreadable: Vec<(u64, String)>,
}

impl Loaded {
    /// Session `row`'s files and review states, read afresh.
    ///
    /// # Errors
    /// When the workspace keeps no durable store or the session's history cannot be read.
    pub fn of(ws: &WorkspaceSession, row: SessionRow) -> Result<Loaded, SessionActionError> {
        let review = ws.review().ok_or_else(|| fail("this workspace keeps no durable store"))?;
        let whole: staged_session::SessionWhole = review.session_whole(row.number).map_err(fail)?;
        let states = review.review_states(row.number).map_err(fail)?;
        Ok(Loaded {
            name: row.short_id(),
            notify: Some(row.number),
            row,
            files: whole.files,
            folders: whole.folders,
            by_snapshot: whole.by_snapshot,
            unreadable: whole.unreadable,
            states,
        })
    }

    /// Log entry `seq`'s own change on the files as they are now, read as a session.
    ///
    /// # Errors
    /// When there is no such entry, its recorded diff does not fit its undo data, or its
    /// history cannot be read.
    pub fn entry(ws: &WorkspaceSession, seq: u64) -> Result<Loaded, SessionActionError> {
        let store = ws.sqlite().ok_or_else(|| fail("this workspace keeps no resolve log"))?;
        let review = ws.review().ok_or_else(|| fail("this workspace keeps no resolve log"))?;
        let entry = staged_core::ResolveLog::entry(store.as_ref(), seq)
            .map_err(fail)?
            .ok_or_else(|| fail(format!("there is no log entry {seq}; see `staged log`")))?;
        if !review.entry_is_consistent(seq).map_err(fail)? {
            return Err(fail(format!(
                "log entry {seq}'s recorded diff is not what its undo data would write back (the log entry was changed outside staged), or its texts are no longer known"
            )));
        }
        let files = review.entry_files(seq).map_err(fail)?;
        Ok(Loaded {
            row: SessionRow {
                number: entry.session.unwrap_or_default(),
                client: entry.record.front_end.clone(),
                external_id: String::new(),
                title: Some(entry.record.label.clone()),
                process: None,
                started_ms: 0,
                active_ms: 0,
            },
            name: format!("log entry {seq}"),
            notify: entry.session,
            files,
            folders: Vec::new(),
            states: HashMap::new(),
            by_snapshot: if staged_session::by_snapshot(&entry) {
                vec![(seq, entry.record.label.clone())]
            } else {
                Vec::new()
            },
            // An entry whose undo data cannot be read is refused above.
            unreadable: Vec::new(),
        })
    }

    /// How many hunks its change has.
    pub fn hunk_count(&self) -> usize {
        self.files.iter().map(|f| f.diff.hunks.len()).sum()
    }

    /// How many of them a person reviewed.
    pub fn reviewed_count(&self) -> usize {
        self.files
            .iter()
            .flat_map(|f| &f.diff.hunks)
            .filter(|h| self.states.contains_key(&h.key))
            .count()
    }

    /// The files as `--only` and `--except` pick from them.
    pub fn parts(&self) -> Vec<PartFile> {
        self.files
            .iter()
            .map(|f| PartFile {
                path: f.path.clone(),
                from: match &f.kind {
                    FileKind::Moved { from } => Some(from.clone()),
                    _ => None,
                },
                kind: diff_kind(&f.kind),
                hunks: Some(f.diff.hunks.len()),
            })
            .collect()
    }
}

/// The diff kind of a session file's change.
pub(crate) fn diff_kind(kind: &FileKind) -> DiffKind {
    match kind {
        FileKind::Changed => DiffKind::Modify,
        FileKind::Created => DiffKind::Create,
        FileKind::Deleted => DiffKind::Delete,
        FileKind::Moved { .. } => DiffKind::Rename,
    }
}

/// `changed`, `created`, `deleted` or `moved`.
pub fn kind_name(kind: &FileKind) -> &'static str {
    match kind {
        FileKind::Changed => "changed",
        FileKind::Created => "created",
        FileKind::Deleted => "deleted",
        FileKind::Moved { .. } => "moved",
    }
}

/// The note after hunk `idx` (from 0) of `file`'s session diff, as `staged session show`
/// prints it (`[hunk 2 of 3] [changed since by log entry 9 (a person's)] [kept]`), or `None`
/// for the second and later hunks of a file reverted whole.
pub fn hunk_note(
    file: &SessionFile,
    idx: usize,
    n: usize,
    states: &HashMap<String, String>,
) -> Option<String> {
    let mut note = match file.kind {
        _ if file.kept.is_some() => format!(
            "[not a text diff: {}; reverted whole]",
            file.kept.as_ref().map_or("", |k| k.why.as_str())
        ),
        FileKind::Changed => format!("[hunk {} of {n}]", idx + 1),
        _ if idx > 0 => return None,
        FileKind::Created => "[new file, reverted whole]".to_owned(),
        FileKind::Deleted => "[deleted file, reverted whole]".to_owned(),
        FileKind::Moved { .. } => "[moved file, reverted whole]".to_owned(),
    };
    if let Some(hunk) = file.diff.hunks.get(idx) {
        if let Some(by) = &hunk.changed_since {
            note.push_str(&format!(" [changed since by {}]", origin_text(by)));
        }
        if let Some(state) = states.get(&hunk.key) {
            // Escaped: a state is a row of `.staged/staged.db`, which someone else may have
            // written, and a line break in it would forge a line of the diff.
            note.push_str(&format!(" [{}]", state.escape_debug()));
        }
    }
    Some(note)
}

/// One session as `staged session list`, `staged review` and `staged ui` show it.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The session.
    pub row: SessionRow,
    /// How many log entries it has.
    pub entries: usize,
    /// How many of its previews are pending.
    pub pending: usize,
    /// How many files its net change has.
    pub files: usize,
    /// How many hunks.
    pub hunks: usize,
    /// How many of them a person reviewed.
    pub reviewed: usize,
    /// Why its net change could not be read.
    pub error: Option<String>,
}

/// Every session, the one active last first, with its progress.
///
/// # Errors
/// A store error.
pub fn listed(
    ws: &WorkspaceSession,
    store: &SqliteStore,
) -> Result<Vec<Listed>, SessionActionError> {
    let rows = store.sessions().map_err(fail)?;
    let pending = ws.store().summaries().map_err(fail)?;
    let review = ws.review().ok_or_else(|| fail("this workspace keeps no durable store"))?;
    let mut listed = Vec::new();
    for row in rows {
        let entries = store.entry_count_of(row.number).map_err(fail)?;
        let n_pending = pending.iter().filter(|p| p.session == Some(row.number)).count();
        let (files, hunks, reviewed, error) = match review.session_files(row.number) {
            Ok(files) => {
                let states = review.review_states(row.number).unwrap_or_default();
                let hunks: Vec<&Hunk> = files.iter().flat_map(|f| &f.diff.hunks).collect();
                let reviewed = hunks.iter().filter(|h| states.contains_key(&h.key)).count();
                (files.len(), hunks.len(), reviewed, None)
            }
            Err(err) => (0, 0, 0, Some(err.to_string())),
        };
        listed.push(Listed { row, entries, pending: n_pending, files, hunks, reviewed, error });
    }
    Ok(listed)
}

/// The hunks `picks` names, file by file, as `(file, hunk)`.
pub(crate) fn picked_hunks<'a>(
    loaded: &'a Loaded,
    picks: &[Option<Pick>],
) -> Vec<(&'a SessionFile, &'a Hunk)> {
    let mut res = Vec::new();
    for (file, pick) in loaded.files.iter().zip(picks) {
        match pick {
            None => {}
            Some(Pick::Whole) => res.extend(file.diff.hunks.iter().map(|h| (file, h))),
            Some(Pick::Hunks(numbers)) => res.extend(
                numbers
                    .iter()
                    .filter_map(|n| file.diff.hunks.get(n.wrapping_sub(1)))
                    .map(|h| (file, h)),
            ),
        }
    }
    res
}

/// The refusal of a blank reason (where one is `required`) or one too long, in the CLI's
/// words (`--reason`).
///
/// # Errors
/// The refusal.
pub fn check_reason(reason: &str, required: bool) -> Result<(), SessionActionError> {
    if required && reason.trim().is_empty() {
        return Err(fail(
            "a revert needs a --reason, not blank: say why the session's change is reverted (it is logged, and told to the session's model)",
        ));
    }
    let chars = reason.chars().count();
    if chars > MAX_REASON_CHARS {
        return Err(fail(format!(
            "--reason is {chars} characters long; a reason is at most {MAX_REASON_CHARS} characters"
        )));
    }
    Ok(())
}

/// What a revert did.
#[derive(Debug, Clone)]
pub enum Reverted {
    /// Written and logged: the answer, the log entry, and the hunks as `(path, number)`.
    Done {
        /// The answer.
        text: String,
        /// The log entry it wrote.
        entry: Option<u64>,
        /// The hunks reverted.
        hunks: Vec<(String, usize)>,
    },
    /// Refused, nothing written: why.
    Refused(String),
}

/// A hunk a revert took back, as its log entry's `extra.hunks` lists it.
#[derive(Serialize)]
struct RevertedHunk<'a> {
    hunk: usize,
    key: &'a str,
    path: &'a str,
}

/// Reverts the hunks `picks` names of `loaded`'s change, all or nothing, as one log entry of
/// `front_end` with `reason`, and leaves the session's model a notice. Prints nothing.
///
/// # Errors
/// When nothing can be reverted or the files cannot be checked or written.
pub async fn revert_picked(
    ws: &WorkspaceSession,
    loaded: &Loaded,
    picks: &[Option<Pick>],
    reason: &str,
    front_end: &FrontEnd,
    cancel: &CancelToken,
) -> Result<Reverted, SessionActionError> {
    let short = loaded.name.clone();
    if loaded.files.is_empty() && loaded.folders.is_empty() {
        return Err(fail(format!("{short} has no change left to revert; nothing was written")));
    }
    // Its folders go back with a whole revert (every file picked whole): the other way round,
    // the last first.
    let whole = picks.iter().all(|pick| matches!(pick, Some(Pick::Whole)));
    let folders: Vec<FolderChange> = if whole {
        loaded.folders.iter().rev().map(FolderChange::inverse).collect()
    } else {
        Vec::new()
    };
    let ops = match revert_ops(&loaded.files, picks) {
        Ok(ops) => ops,
        Err(err) => {
            return Ok(Reverted::Refused(format!(
                "Cannot revert {short}'s change: {err}. Nothing was written.{}",
                the_rest(&err, picked_hunks(loaded, picks).len())
            )));
        }
    };
    // The files the session replaced whole (binary, over the text cap): each one unit.
    let kept = match kept_reverts(&loaded.files, picks) {
        Ok(kept) => kept,
        Err(err) => {
            return Ok(Reverted::Refused(format!(
                "Cannot revert {short}'s change: {err}. Nothing was written."
            )));
        }
    };
    if ops.is_empty() && kept.is_empty() && folders.is_empty() {
        return Err(fail("the hunks picked change nothing; nothing was written"));
    }
    let hunks = picked_hunks(loaded, picks);
    // The steps are computed on the texts the session's history read from the disk, not read
    // again; the commit reads every file under its lock and refuses, writing nothing, if one
    // changed since (the byte-exact staleness check before any write).
    let (checked, folder_steps) = check_revert(ws, loaded, &ops, &kept, &folders)?;
    let folders = taken_back(folders, &folder_steps);
    if ops.is_empty() && kept.is_empty() && folders.is_empty() {
        return Err(fail(
            "the session's folders hold files it did not make, and are left in place; nothing was written",
        ));
    }
    let described = described_revert(loaded, picks, &folders);
    let label = format!("Revert of {short}: {described}");
    let mut base = LogRecord::new(
        PendingId::from_string(format!("revert:{}", short.replace(' ', "-"))),
        label.clone(),
        REVERT_SOURCE,
        LogOutcome::Applied,
        LogAction::Apply,
        front_end,
    );
    base.reason = reason.trim().to_owned();
    let mut extra = staged_protocol::JsonObject::new();
    extra.insert("session".to_owned(), Value::String(short.clone()));
    let reverted: Vec<RevertedHunk<'_>> = hunks
        .iter()
        .map(|(f, h)| RevertedHunk { path: &f.path, hunk: h.number, key: &h.key })
        .collect();
    extra.insert("hunks".to_owned(), serde_json::to_value(reverted).unwrap_or_default());
    // The session's model hears of it once, at its next chance: the notice is left in the
    // transaction that makes the revert's record final (never without the revert, or the
    // revert without it, wherever a kill stops the command).
    if let Some(number) = loaded.notify {
        // Files with no hunk are named too, and folders when nothing else is reverted.
        let mut bare = bare_picks(loaded, picks);
        if hunks.is_empty() && bare.is_empty() {
            bare = folders.iter().map(|f| format!("{}/", f.path)).collect();
        }
        let notice = notice_text("reverted", &hunks, &bare, reason.trim());
        let notice = staged_store::RecordNotice { session: format!("S{number}"), text: notice };
        extra.insert(
            staged_store::NOTICE_FIELD.to_owned(),
            serde_json::to_value(notice).unwrap_or_default(),
        );
    }
    base.extra = Some(extra);
    let retirement = Retirement::for_undo(ws.store().clone(), base);
    if let Some(refused) =
        commit_revert(ws, &label, (checked, folder_steps), retirement, cancel).await?
    {
        return Ok(Reverted::Refused(format!("Cannot revert {short}'s change: {refused}")));
    }
    let seq = newest_entry(ws);
    let bare_files = bare_picks(loaded, picks).len();
    let counts: Vec<String> =
        [(hunks.len(), "hunk"), (bare_files, "file"), (folders.len(), "folder")]
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, word)| plural(n, word))
            .collect();
    let what = match counts.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => plural(0, "hunk"),
    };
    let mut text = format!(
        "Reverted {what} of {short} ({}): {}.{}",
        described,
        reason.trim(),
        seq.map(|s| format!(" Logged as entry {s}; `staged undo {s}` restores what it reverted."))
            .unwrap_or_default()
    );
    text.push_str(&renumbered(loaded, picks));
    let hunks = hunks.iter().map(|(f, h)| (f.path.clone(), h.number)).collect();
    Ok(Reverted::Done { text, entry: seq, hunks })
}

/// The folders of `folders` that `steps` make or remove: a folder left in place (it holds
/// something the session did not make) is not reverted, and is neither named nor counted.
fn taken_back(folders: Vec<FolderChange>, steps: &FolderSteps) -> Vec<FolderChange> {
    let moved: HashSet<String> =
        steps.make.iter().chain(&steps.remove).map(ToString::to_string).collect();
    folders.into_iter().filter(|f| moved.contains(&f.path)).collect()
}

/// What a keep did.
#[derive(Debug, Clone)]
pub struct Kept {
    /// The answer.
    pub text: String,
    /// How many hunks it kept.
    pub kept: usize,
    /// How many of the session's hunks are reviewed now.
    pub reviewed: usize,
}

/// Marks the hunks `picks` names of `loaded`'s change reviewed and kept, and with a reason
/// leaves the session's model a notice. Prints nothing.
///
/// # Errors
/// When the session has no change left or the store cannot be written.
pub fn keep_picked(
    store: &SqliteStore,
    loaded: &Loaded,
    picks: &[Option<Pick>],
    reason: &str,
) -> Result<Kept, SessionActionError> {
    let short = &loaded.name;
    if loaded.files.is_empty() {
        return Err(fail(format!("{short} has no change left to keep")));
    }
    let hunks = picked_hunks(loaded, picks);
    let keys: Vec<&str> = hunks.iter().map(|(_, h)| h.key.as_str()).collect();
    let reason = reason.trim();
    // With a reason, the model's notice is left in the same transaction as the marks.
    let reason = (!reason.is_empty()).then_some(reason);
    let notice = reason.map(|reason| notice_text("kept", &hunks, &[], reason));
    store.mark_reviewed(loaded.row.number, &keys, KEPT, reason, notice.as_deref()).map_err(fail)?;
    let reviewed = loaded.reviewed_count()
        + hunks.iter().filter(|(_, h)| !loaded.states.contains_key(&h.key)).count();
    let text = format!(
        "Kept {} of {short}; {reviewed} of {} reviewed.",
        plural(hunks.len(), "hunk"),
        plural(loaded.hunk_count(), "hunk")
    );
    Ok(Kept { text, kept: hunks.len(), reviewed })
}

/// The check of the files `ops` write, and what the commit writes: computed on each file's
/// text as `loaded`'s history read it from the disk (the text the revert was computed on, its
/// SHA-256 the op's fingerprint), not read again; a file `loaded` has no text of, or one
/// whose mode the op needs, is read and compared byte for byte. The commit's check under its
/// lock reads every file once more and refuses, writing nothing, one changed since.
/// The files replaced whole (`kept`) are checked byte for byte against the bytes the session
/// left, their bytes before read from the kept copies, and written with the text files.
fn check_revert(
    ws: &WorkspaceSession,
    loaded: &Loaded,
    ops: &[FileOp],
    kept: &[KeptChange],
    folders: &[FolderChange],
) -> Result<(staged_journal::Checked, FolderSteps), SessionActionError> {
    let refs: Vec<&FileOp> = ops.iter().collect();
    // Each file's text as the session's history read it from the disk.
    let now: HashMap<&str, &str> = loaded
        .files
        .iter()
        .filter(|file| file.history.exists_now)
        .map(|file| (file.path.as_str(), file.history.now.as_str()))
        .collect();
    let known = |path: &str| now.get(path).copied();
    let mut checked = match staged_journal::check_known(ws.workspace(), &refs, &known) {
        Ok(checked) => checked,
        Err(staged_journal::CheckError::Stale(stale)) => {
            return Err(fail(format!(
                "{} {}; nothing was written (run the command again)",
                stale.path, stale.why
            )));
        }
        Err(staged_journal::CheckError::Failed(err)) => return Err(fail(err)),
    };
    match staged_journal::undo_kept(ws.workspace(), kept) {
        Ok(undo) => {
            checked.steps.extend(undo.steps);
            checked.files.extend(undo.files);
            checked.undo.kept = undo.done;
            match staged_journal::add_folders(ws.workspace(), &mut checked, folders) {
                Ok(steps) => Ok((checked, steps)),
                Err(staged_journal::CheckError::Stale(stale)) => Err(fail(format!(
                    "{} {}; nothing was written (run the command again)",
                    stale.path, stale.why
                ))),
                Err(staged_journal::CheckError::Failed(err)) => Err(fail(err)),
            }
        }
        Err(KeptError::Changed(paths)) => Err(fail(format!(
            "{} changed since it was read; nothing was written (run the command again)",
            paths.join(", ")
        ))),
        Err(KeptError::Failed(why)) => Err(fail(format!("{why}; nothing was written"))),
    }
}

/// Writes `checked` through the journal, all or nothing, as a person's applied change
/// labelled `label`, logged as `retirement`'s record (prepared before any file is written,
/// final once every file is in place). Its steps expect the texts the check read: a file
/// changed since is refused under the commit's lock (`Some(why)`, nothing written). No
/// observer: the renames run at once.
async fn commit_revert(
    ws: &WorkspaceSession,
    label: &str,
    (checked, folders): (staged_journal::Checked, FolderSteps),
    retirement: Retirement,
    cancel: &CancelToken,
) -> Result<Option<String>, SessionActionError> {
    if cancel.is_cancelled() {
        return Err(fail(format!("the revert failed: {}", staged_core::ActionError::Cancelled)));
    }
    let staged_journal::Checked { steps, diff, files, undo, texts } = checked;
    let mut change = AppliedChange {
        result: format!("Applied {label}."),
        label: None,
        diff: Some(diff),
        files,
        undo: Some(undo.into_value()),
        remainder: None,
        texts,
    };
    let root = ws.workspace().clone();
    let committed = tokio::task::spawn_blocking(move || {
        let folders = (folders.make.as_slice(), folders.remove.as_slice());
        commit_applied_folders(&root, &steps, folders, &mut change, &retirement, None)
    })
    .await
    .map_err(|err| {
        fail(format!("the revert failed: {}", staged_core::worker_failure("revert", err)))
    })?;
    match committed {
        Ok(_) => Ok(None),
        Err(JournalError::Drifted(path)) => {
            Ok(Some(format!("{path} changed since it was read. Nothing was written.")))
        }
        Err(JournalError::Appeared(path)) => {
            Ok(Some(format!("{path} was created since it was read. Nothing was written.")))
        }
        Err(err) => {
            Err(fail(format!("the revert failed: {}", err.model_message(ws.workspace().root()))))
        }
    }
}

/// The newest applied log entry, which a revert just wrote (its number alone: the entry's
/// diff and undo data are not read back).
fn newest_entry(ws: &WorkspaceSession) -> Option<u64> {
    ws.store().log()?.newest_applied().ok()?
}

/// `1 hunk`, `3 hunks`, `2 entries`.
pub fn plural(n: usize, word: &str) -> String {
    match (n, word) {
        (1, _) => format!("1 {word}"),
        (_, "entry") => format!("{n} entries"),
        _ => format!("{n} {word}s"),
    }
}
