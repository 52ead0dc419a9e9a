//! The files a session replaced whole rather than as text (a shell command's binary files, or
//! files over the text cap), whose bytes before and after are kept by hash
//! ([`staged_journal::KeptChange`]): each is one unit of the session's change, with one hunk
//! and no lines, reverted whole (its bytes before written back, a created file deleted, a
//! deleted one recreated, with its mode).
//!
//! A log entry names such files in its undo data (`kept`: a revert or an undo of one) or, for
//! a shell command's record, in `extra.shell.notInDiff` ([`entry_kept`]). A file's chain runs
//! from the session's first entry that replaced it to its last one; any other entry that wrote
//! the path after that, or bytes on disk that are not the session's last, mark it changed
//! since by that writer, and a revert of it is refused.

use serde::Deserialize;
use serde_json::Value;
use staged_core::LogEntry;
use staged_journal::{Applied, KeptBytes, KeptChange, KeptInUndo, fingerprint, quote};
use staged_protocol::lenient::{Flag, Many, Object, Present, Text, Whole};

use crate::{
    files::{FileKind, SessionFile},
    history::FileHistory,
    hunks::{FileDiff, Hunk},
    net::{NetChange, Origin},
};

/// The files `entry` replaced whole, as its undo data names them, or else as its shell
/// record does (`extra.shell.notInDiff`: those with the bytes on both sides a regular file's
/// or nothing; a symlink, a FIFO or a folder is not restorable and not listed).
pub(crate) fn entry_kept(entry: &LogEntry) -> Vec<KeptChange> {
    if let Some(kept) = entry.record.undo.as_ref().and_then(|undo| KeptInUndo::of(undo).kept.0)
        && !kept.is_empty()
    {
        return kept;
    }
    entry.record.extra.as_ref().map(shell_record_kept).unwrap_or_default()
}

/// The restorable files a shell record in `extra` names in `notInDiff`.
fn shell_record_kept(extra: &staged_protocol::JsonObject) -> Vec<KeptChange> {
    let Some(named) = ShellExtra::deserialize(extra)
        .ok()
        .and_then(|extra| extra.shell.0)
        .and_then(|shell| shell.not_in_diff.0)
    else {
        return Vec::new();
    };
    named.into_iter().filter_map(|item| item.0).filter_map(shell_kept).collect()
}

/// What a shell command's log record keeps in `extra`: its `shell` record.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ShellExtra<'a> {
    #[serde(borrow)]
    shell: Object<ShellRecord<'a>>,
}

/// What a shell record says of the files it did not show as text (`notInDiff`).
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ShellRecord<'a> {
    #[serde(borrow)]
    not_in_diff: Many<Object<NotInDiff<'a>>>,
    /// `exact` (the overlay) or `snapshot` (the fallback, which may hold others' writes).
    #[serde(borrow)]
    attribution: Text<'a>,
}

/// Whether `entry` is a shell command's record made by comparing snapshots
/// (`extra.shell.attribution` = `"snapshot"`): it may hold other programs' writes.
pub fn by_snapshot(entry: &LogEntry) -> bool {
    let Some(extra) = entry.record.extra.as_ref() else { return false };
    let shell = ShellExtra::deserialize(extra).ok().and_then(|extra| extra.shell.0);
    shell.and_then(|shell| shell.attribution.0) == Some("snapshot")
}

/// One item of a shell record's `notInDiff`.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct NotInDiff<'a> {
    #[serde(borrow)]
    path: Text<'a>,
    #[serde(borrow)]
    why: Text<'a>,
    #[serde(borrow)]
    before: Text<'a>,
    #[serde(borrow)]
    after: Text<'a>,
    before_mode: Whole,
    after_mode: Whole,
    before_link: Present,
    existed: Flag,
}

/// One item of a shell record's `notInDiff`, when both sides are a regular file or nothing.
fn shell_kept(item: NotInDiff<'_>) -> Option<KeptChange> {
    let mode = |mode: Whole| mode.0.and_then(|m| u32::try_from(m).ok());
    let path = item.path.0?.to_owned();
    let why = item.why.0?.to_owned();
    if item.before_link.0 {
        return None;
    }
    let before =
        item.before.0.map(|sha| KeptBytes { sha: sha.to_owned(), mode: mode(item.before_mode) });
    let after =
        item.after.0.map(|sha| KeptBytes { sha: sha.to_owned(), mode: mode(item.after_mode) });
    // Something that was there but is not kept (a FIFO, a folder): not restorable.
    if before.is_none() && item.existed.0 == Some(true) {
        return None;
    }
    // With no bytes after, only a file the command deleted is restorable (not one it made a
    // symlink, a FIFO or a folder).
    if after.is_none() && !why.ends_with(", deleted") {
        return None;
    }
    if before.is_none() && after.is_none() {
        return None;
    }
    Some(KeptChange { path, why, before, after })
}

/// One log entry, as the chains of the files it replaced whole read it.
#[derive(Debug, Clone)]
pub(crate) struct KeptEntry {
    /// The entry's number.
    pub seq: u64,
    /// The session whose change it is.
    pub session: Option<u64>,
    /// The files it replaced whole.
    pub kept: Vec<KeptChange>,
    /// Every path it wrote (its text changes' too).
    pub paths: Vec<String>,
}

impl KeptEntry {
    /// `entry` as the chains read it (`session`: the session it counts for; `ops`: its undo
    /// data's ops, when read).
    pub(crate) fn of(entry: &LogEntry, session: Option<u64>, ops: Option<&[Applied]>) -> KeptEntry {
        let kept = entry_kept(entry);
        let mut paths: Vec<String> = entry.record.files.iter().map(|f| f.path.clone()).collect();
        if let Some(ops) = ops {
            for op in ops {
                let (from, to) = match op {
                    Applied::Move { from, to, .. } => (from.clone(), to.clone()),
                    Applied::Update { path, .. }
                    | Applied::Create { path, .. }
                    | Applied::Delete { path, .. } => (path.clone(), path.clone()),
                };
                paths.push(from);
                paths.push(to);
            }
        }
        paths.extend(kept.iter().map(|k| k.path.clone()));
        paths.sort_unstable();
        paths.dedup();
        KeptEntry { seq: entry.seq, session, kept, paths }
    }
}

struct Chain {
    path: String,
    why: String,
    before: Option<KeptBytes>,
    after: Option<KeptBytes>,
    entries: Vec<u64>,
    changed_since: Option<Origin>,
    reverted: bool,
}

/// The files session `session` replaced whole, net, in the order it first replaced them:
/// `sha_now` gives the SHA-256 of a file's bytes now (`None`: no file there). A file whose
/// bytes are the same before the session's first change and after its last is left out.
pub(crate) fn kept_files(
    session: u64,
    entries: &[KeptEntry],
    sha_now: &dyn Fn(&str) -> Option<String>,
) -> Vec<SessionFile> {
    let mut chains: Vec<Chain> = Vec::new();
    for entry in entries {
        let mine = entry.session == Some(session);
        for chain in &mut chains {
            let touched = entry.paths.contains(&chain.path);
            let own = mine && entry.kept.iter().any(|k| k.path == chain.path);
            if touched && !own && chain.changed_since.is_none() {
                // Another writer's exact revert of it takes it out of the net change, and the
                // exact undo of that revert brings it back.
                let change = entry.kept.iter().find(|k| k.path == chain.path);
                let sha = |b: &Option<KeptBytes>| b.as_ref().map(|b| b.sha.clone());
                if let Some(change) = change {
                    let (from, to) = (sha(&change.before), sha(&change.after));
                    if !chain.reverted && from == sha(&chain.after) && to == sha(&chain.before) {
                        chain.reverted = true;
                        continue;
                    }
                    if chain.reverted && from == sha(&chain.before) && to == sha(&chain.after) {
                        chain.reverted = false;
                        continue;
                    }
                }
                chain.changed_since = Some(Origin::Entry {
                    seq: entry.seq,
                    session: entry.session.map(|s| format!("S{s}")),
                });
            }
        }
        if !mine {
            continue;
        }
        for change in &entry.kept {
            match chains.iter_mut().find(|c| c.path == change.path) {
                Some(chain) => {
                    let continues = chain.after.as_ref().map(|a| &a.sha)
                        == change.before.as_ref().map(|b| &b.sha);
                    if !continues && chain.changed_since.is_none() {
                        chain.changed_since = Some(Origin::Outside);
                    }
                    chain.after.clone_from(&change.after);
                    chain.entries.push(entry.seq);
                    chain.why.clone_from(&change.why);
                }
                None => chains.push(Chain {
                    path: change.path.clone(),
                    why: change.why.clone(),
                    before: change.before.clone(),
                    after: change.after.clone(),
                    entries: vec![entry.seq],
                    changed_since: None,
                    reverted: false,
                }),
            }
        }
    }
    let mut res = Vec::new();
    for mut chain in chains {
        let same = chain.before.as_ref().map(|b| &b.sha) == chain.after.as_ref().map(|a| &a.sha);
        if same || chain.reverted {
            continue;
        }
        if chain.changed_since.is_none()
            && sha_now(&chain.path) != chain.after.as_ref().map(|a| a.sha.clone())
        {
            chain.changed_since = Some(Origin::Outside);
        }
        res.push(session_file(chain));
    }
    res
}

/// A chain as a file of the session's change: one hunk, no lines.
fn session_file(chain: Chain) -> SessionFile {
    let Chain { path, why, before, after, entries, changed_since, .. } = chain;
    let (kind, from, to) = match (&before, &after) {
        // Quoted as git quotes a path, so a path with a newline cannot add lines to the diff.
        (None, _) => (FileKind::Created, "/dev/null".to_owned(), quote("b/", &path)),
        (_, None) => (FileKind::Deleted, quote("a/", &path), "/dev/null".to_owned()),
        _ => (FileKind::Changed, quote("a/", &path), quote("b/", &path)),
    };
    let side = |b: &Option<KeptBytes>| b.as_ref().map_or("", |b| b.sha.as_str()).to_owned();
    let key = fingerprint(format!("{path}\0kept\0{}\0{}", side(&before), side(&after)).as_bytes());
    let existence_mine = changed_since.is_none();
    let hunk = Hunk { number: 1, regions: Vec::new(), key, entries, changed_since };
    SessionFile {
        path: path.clone(),
        kind,
        history: FileHistory {
            path: path.clone(),
            first_path: path.clone(),
            existed_before: before.is_some(),
            exists_now: after.is_some(),
            existence_mine,
            moved_from: None,
            mode: before.as_ref().and_then(|b| b.mode),
            steps: Vec::new(),
            now: String::new(),
        },
        net: NetChange { regions: Vec::new(), without: String::new(), edits: Vec::new() },
        diff: FileDiff {
            diff: format!("Binary files {from} and {to} differ\n"),
            hunks: vec![hunk],
        },
        kept: Some(KeptChange { path, why, before, after }),
    }
}

/// Deletes the kept bytes (`.staged/shell/kept/`) that nothing can read any more: those no
/// log entry left after the log's retention names (its undo data's `kept`, its shell record's
/// `notInDiff`) and no pending preview names (a session revert's), kept at least `grace` ago
/// (see [`staged_journal::prune_kept`]). A live session's revert and undo chain is read from
/// its log entries, so what it needs is named by them. Returns how many files were deleted.
///
/// # Errors
/// When the log, the stack or the kept folder cannot be read: then nothing is deleted.
pub fn prune_kept(
    workspace: &staged_journal::ConfinedRoot,
    store: &dyn staged_core::PendingActionStore,
    grace: std::time::Duration,
) -> Result<usize, String> {
    let mut named = std::collections::HashSet::new();
    if let Some(log) = store.log() {
        for entry in log.entries(usize::MAX >> 1, false).map_err(|err| err.to_string())? {
            let extra = entry.record.extra.clone().map(Value::Object);
            for value in [&entry.record.undo, &extra].into_iter().flatten() {
                shas_in(value, &mut named);
            }
        }
    }
    for pending in store.list().map_err(|err| err.to_string())? {
        if let Some(payload) = pending.action.payload() {
            shas_in(&payload, &mut named);
        }
        if let Some(details) = pending.action.details() {
            shas_in(details, &mut named);
        }
    }
    staged_journal::prune_kept(workspace, grace, &|sha| named.contains(sha))
}

/// Every string in `value` that is a SHA-256 (64 hex digits), added to `into`: more than the
/// kept files' names (a text's hash too), never fewer, which only keeps more.
fn shas_in(value: &Value, into: &mut std::collections::HashSet<String>) {
    match value {
        Value::String(text) if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) => {
            into.insert(text.clone());
        }
        Value::Array(items) => items.iter().for_each(|item| shas_in(item, into)),
        Value::Object(map) => map.values().for_each(|item| shas_in(item, into)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell record's `notInDiff` items read as their members said when read by key: a
    /// symlink before, a FIFO that was there, or a member of another type is not restorable.
    #[test]
    fn a_shell_records_items_read_through_their_view() {
        let extra = serde_json::json!({"shell": {"notInDiff": [
            {"path": "a.bin", "why": "binary", "before": "b1", "beforeMode": 33188, "after": "a1", "afterMode": 420, "existed": true},
            {"path": "gone.bin", "why": "binary, deleted", "before": "b2", "existed": true},
            {"path": "new.bin", "why": "binary", "after": "a3", "afterMode": -1},
            {"path": "link", "why": "binary", "after": "a4", "beforeLink": "x", "existed": true},
            {"path": "fifo", "why": "binary", "after": "a5", "existed": true},
            {"path": 1, "why": "binary", "after": "a6"},
            "not an item"
        ]}});
        let bytes = |sha: &str, mode| Some(KeptBytes { sha: sha.to_owned(), mode });
        let kept = |path: &str, why: &str, before, after| KeptChange {
            path: path.to_owned(),
            why: why.to_owned(),
            before,
            after,
        };
        assert_eq!(
            shell_record_kept(extra.as_object().unwrap()),
            vec![
                kept("a.bin", "binary", bytes("b1", Some(33188)), bytes("a1", Some(420))),
                kept("gone.bin", "binary, deleted", bytes("b2", None), None),
                kept("new.bin", "binary", None, bytes("a3", None)),
            ]
        );
        for odd in
            [serde_json::json!({"shell": []}), serde_json::json!({"shell": {"notInDiff": {}}})]
        {
            assert_eq!(shell_record_kept(odd.as_object().unwrap()), vec![]);
        }
    }

    #[test]
    fn a_binary_files_line_quotes_a_path_with_a_newline() {
        let bytes = |sha: &str| Some(KeptBytes { sha: sha.to_owned(), mode: None });
        let chain = Chain {
            path: "x\n+++ b/README".to_owned(),
            why: "binary".to_owned(),
            before: bytes("a"),
            after: bytes("b"),
            entries: vec![1],
            changed_since: None,
            reverted: false,
        };
        let diff = session_file(chain).diff.diff;
        assert_eq!(diff, "Binary files \"a/x\\n+++ b/README\" and \"b/x\\n+++ b/README\" differ\n");
        assert_eq!(diff.lines().count(), 1);
    }
}
