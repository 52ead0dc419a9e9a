//! A session's net change to the workspace: each file it changed, as the person sees it (changed,
//! created, deleted or moved by the session), with its diff and numbered hunks.

use staged_journal::{DiffHeader, NEW_FILE_MODE};

use crate::{
    history::{FileHistory, HistoryError, LoggedChange, Texts, file_histories},
    hunks::{FileDiff, file_diff_as},
    net::{Author, NetChange, Origin, Region, Step, net_change},
};

/// What the session did to a file, net.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// It changed lines of a file that was there before it and is there now.
    Changed,
    /// It created the file, and every line of it is the session's.
    Created,
    /// It deleted the file, and nobody wrote it again.
    Deleted,
    /// It moved the file here from `from` (and may have changed lines).
    Moved {
        /// Where the file was.
        from: String,
    },
}

/// One file of a session's net change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// Where the file is (or was, when deleted).
    pub path: String,
    /// What the session did to it.
    pub kind: FileKind,
    /// Its history since the session first changed it.
    pub history: FileHistory,
    /// The session's net change to its text.
    pub net: NetChange,
    /// Its diff and hunks.
    pub diff: FileDiff,
    /// For a file the session replaced whole (binary, over the text cap): its bytes before and
    /// after, by hash. Its diff is git's `Binary files ... differ` line and it has one hunk.
    pub kept: Option<staged_journal::KeptChange>,
}

/// Why a session's change cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// A file's history cannot be read.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// A file's history does not fit its text (a log changed outside staged).
    #[error("the log's history of {path} does not fit the file: {why}")]
    Misfit {
        /// The file.
        path: String,
        /// What does not fit.
        why: String,
    },
}

/// The files session `session` changed, net, in the order it first changed them; a file whose
/// every change the session (or a revert) took back is left out.
///
/// # Errors
/// [`SessionError`] when a file's history cannot be read or does not fit it.
pub fn session_files(
    session: u64,
    entries: &[LoggedChange<'_>],
    texts: &dyn Texts,
) -> Result<Vec<SessionFile>, SessionError> {
    let histories = file_histories(session, entries, texts)?;
    // Each file's net change and diff is its own: a long session's are drawn on two threads.
    let drawn = in_two(histories, session_file);
    drawn.into_iter().filter_map(Result::transpose).collect()
}

/// From this many items on, [`in_two`] splits its work between two threads.
const PARALLEL_FROM: usize = 32;

/// `work` of each item, in order; on two threads when there are many items and the machine
/// has two cores (a long session's files, each independent of the others).
pub(crate) fn in_two<T: Send, R: Send>(items: Vec<T>, work: impl Fn(T) -> R + Sync) -> Vec<R> {
    in_two_runs(items, |run| run.into_iter().map(&work).collect())
}

/// `run` of the items, split in two runs done on two threads as [`in_two`] does (or one run
/// of them all), the results in order: each run may keep what it learns from one item for the
/// next (the folder of the file read before).
pub(crate) fn in_two_runs<T: Send, R: Send>(
    mut items: Vec<T>,
    run: impl Fn(Vec<T>) -> Vec<R> + Sync,
) -> Vec<R> {
    if items.len() < PARALLEL_FROM {
        return run(items);
    }
    let second = items.split_off(items.len() / 2);
    // On the pool of staged's work, whose threads are started once (a thread started for each
    // call cost about what the work it took over saved).
    let (mut done, rest) = staged_journal::on_two(|| run(items), || run(second));
    done.extend(rest);
    done
}

/// One file of [`session_files`], `None` when the session's change to it is all taken back.
fn session_file(history: FileHistory) -> Result<Option<SessionFile>, SessionError> {
    let misfit = |why: String| SessionError::Misfit { path: history.path.clone(), why };
    let steps: Vec<Step<'_>> =
        history.steps.iter().map(|(author, edits)| Step { author, edits }).collect();
    let net = net_change(&steps, &history.now).map_err(|err| misfit(err.to_string()))?;
    let kind = if !history.existed_before && history.exists_now && net.without.is_empty() {
        FileKind::Created
    } else if history.existed_before && !history.exists_now && history.now.is_empty() {
        FileKind::Deleted
    } else if let Some(from) = &history.moved_from {
        FileKind::Moved { from: from.clone() }
    } else {
        FileKind::Changed
    };
    // A file whose lines are all taken back is no change, but a file the session made or
    // removed with no lines (an empty `__init__.py`) is one: it has no region, and is still
    // created or deleted, and reverted whole. A file someone else removed (or made again)
    // after the session's change is not the session's deletion (or creation): it is a change
    // of the session's only while some of the session's lines count there (changed since,
    // then, and never reverted by writing the file back).
    let counts = net.regions.iter().any(Region::counts);
    let gone = match kind {
        FileKind::Changed => net.edits.iter().all(|edit| edit.before == edit.after),
        FileKind::Created | FileKind::Deleted => {
            !counts && (!history.existence_mine || changed_after_mine(&history).is_some())
        }
        FileKind::Moved { .. } => false,
    };
    if gone {
        return Ok(None);
    }
    let mode = history.mode.unwrap_or(NEW_FILE_MODE);
    let path = history.path.as_str();
    let header = match &kind {
        FileKind::Changed => DiffHeader::Modify { path },
        FileKind::Created => DiffHeader::Create { path, mode },
        FileKind::Deleted => DiffHeader::Delete { path, mode },
        FileKind::Moved { from } => DiffHeader::Rename { from, to: path },
    };
    let diff = file_diff_as(&header, path, &net).map_err(|err| misfit(err.to_string()))?;
    Ok(Some(SessionFile { path: history.path.clone(), kind, net, diff, history, kept: None }))
}

/// Who else changed the file's text after the session last did, if anyone did: the last such
/// writer. A file the session made or removed whose lines someone took out since (a made
/// file emptied, or removed and made again empty) holds nothing of the session's.
pub(crate) fn changed_after_mine(history: &FileHistory) -> Option<&Origin> {
    history
        .steps
        .iter()
        .rev()
        .take_while(|(author, _)| !matches!(author, Author::Mine { .. }))
        .find_map(|(author, edits)| match author {
            Author::Other(origin) if edits.iter().any(|e| e.before != e.after) => Some(origin),
            _ => None,
        })
}
