//! What a hook remembers of a client session between its calls: the previews it staged and
//! the edits it refused because a preview held their file (for the Stop hook), how many Stops
//! it blocked in a row, and, in record mode, the files an edit names as they were before it
//! ran (and, for a Codex patch, as the patch leaves them). A session's calls take the lock
//! `.staged/hooks/<client>-<session>.lock` in turn (a client may run hooks for parallel tool
//! calls at once).
//!
//! The state is a row of the workspace's database ([`staged_store::SqliteStore::hook_state`]):
//! saving it is one commit, synced with the call's other commits before its reply (a file of
//! its own, written atomically, cost two syncs and a rename on every gate call). A state that
//! cannot be read is rebuilt from the stack, and said so, never dropped silently
//! ([`SessionFile::load_or_rebuild`]). A state file `.staged/hooks/<client>-<session>.json` (where
//! staged kept it before, and still keeps it in a workspace without a database) is read while
//! the database has no row for the session, so a session running across an upgrade keeps its
//! state; the first save moves it into the database and removes the file.

use std::{collections::BTreeMap, ffi::OsString, fs::File};

use serde::{Deserialize, Serialize};
use staged_fs::{DirHandle, NewFileMode};
use staged_store::SqliteStore;
use staged_workspace::WorkspaceSession;

use crate::event::Client;

/// A state file bigger than this is not one staged wrote.
const MAX_STATE_BYTES: u64 = 1 << 30;

/// The hooks' folder under `.staged`.
const HOOKS_DIR: &str = "hooks";

/// A session's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionState {
    /// The pending ids the hook staged in this session.
    #[serde(default)]
    pub(crate) staged: Vec<String>,
    /// Stops blocked in a row while a staged preview stayed pending.
    #[serde(default)]
    pub(crate) stop_blocks: u32,
    /// Edits the gate refused because a pending preview already wrote their file, and that
    /// were not made again since (one per file, the newest).
    #[serde(default)]
    pub(crate) refused: Vec<Refused>,
    /// Record mode: the files of an edit as they were before it ran, by tool call.
    #[serde(default)]
    pub(crate) snapshots: BTreeMap<String, Snapshot>,
    /// The last snapshot's `seq`.
    #[serde(default)]
    pub(crate) seq: u64,
}

/// At most this many snapshots wait for their edit (one whose tool never ran, for a client
/// with no Stop hook in record mode, is never taken back): the oldest go.
const MAX_SNAPSHOTS: usize = 64;

impl SessionState {
    /// Keeps `snapshot` for `call`, dropping the oldest beyond [`MAX_SNAPSHOTS`].
    pub(crate) fn keep_snapshot(&mut self, call: &str, mut snapshot: Snapshot) {
        self.seq += 1;
        snapshot.seq = self.seq;
        self.snapshots.insert(call.to_owned(), snapshot);
        while self.snapshots.len() > MAX_SNAPSHOTS {
            let oldest = self.snapshots.iter().min_by_key(|(_, s)| s.seq).map(|(k, _)| k.clone());
            match oldest {
                Some(key) => self.snapshots.remove(&key),
                None => break,
            };
        }
    }
}

/// An edit the gate refused because a pending preview already wrote its file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Refused {
    /// The file, relative to the root.
    pub(crate) path: String,
    /// The pending preview that held it: its id and label.
    pub(crate) pending: String,
    pub(crate) label: String,
    /// Whether that preview was this session's (else the refusal never holds a turn).
    pub(crate) ours: bool,
}

/// The files an edit names, before it ran, and (for a Codex patch, an opencode edit) what it
/// leaves them as.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Snapshot {
    /// The files, in the patch's order, by path relative to the root.
    pub(crate) files: Vec<FileBefore>,
    /// The moves the patch makes, `(from, to)`.
    #[serde(default)]
    pub(crate) moves: Vec<(String, String)>,
    /// A Codex patch: each file as the patch leaves it (`None`: not there), from `files` with
    /// the patch applied. Only a disk that holds exactly this is recorded as the patch's doing.
    #[serde(default)]
    pub(crate) after: BTreeMap<String, Option<String>>,
    /// When it was taken, in the session's order: the oldest go first when there are too many.
    #[serde(default)]
    pub(crate) seq: u64,
    /// The client's tool that makes the edit, for the log (none: a Codex `apply_patch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tool: Option<String>,
}

/// One file before a patch ran: its text and mode, or `None` when it did not exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileBefore {
    pub(crate) path: String,
    pub(crate) text: Option<String>,
    #[serde(default)]
    pub(crate) mode: u32,
}

/// How long a hook waits for another hook call of the same session (a client that runs hooks
/// of parallel tool calls at once): far below the clients' hook timeouts, so that a lock held
/// by someone else ends in a refusal, not in a timeout the client might take as a pass.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Takes `lock`, waiting at most `wait`.
fn lock_within(lock: &File, wait: std::time::Duration) -> Result<(), String> {
    let start = std::time::Instant::now();
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < wait => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(format!(
                    "another process held this session's hook lock for {} s",
                    wait.as_secs()
                ));
            }
            Err(std::fs::TryLockError::Error(err)) => {
                return Err(format!("cannot take the hook's lock: {err}"));
            }
        }
    }
}

/// A session's state, locked while this value lives.
pub(crate) struct SessionFile<'a> {
    dir: DirHandle,
    /// The state file: where the state is kept without a database, and where it was kept
    /// before the database kept it.
    name: OsString,
    /// The database that keeps the state, and the state's key in it (client, session).
    store: Option<(&'a SqliteStore, &'static str, &'a str)>,
    _lock: File,
}

impl<'a> SessionFile<'a> {
    /// Opens (and locks) the state of `session` of `client` in `ws`.
    pub(crate) fn open(
        ws: &'a WorkspaceSession,
        client: Client,
        session: &'a str,
    ) -> Result<SessionFile<'a>, String> {
        let dir = ws
            .workspace()
            .state_subdir(HOOKS_DIR, true)
            .map_err(|err| err.to_string())?
            .ok_or_else(|| "the hooks' state folder could not be created".to_owned())?;
        let stem = format!("{}-{}", client.name(), file_safe(session));
        let lock = dir
            .open_lock_file(format!("{stem}.lock"))
            .map_err(|err| format!("cannot open the hook's lock: {err}"))?;
        lock_within(&lock, LOCK_WAIT)?;
        Ok(SessionFile {
            dir,
            name: OsString::from(format!("{stem}.json")),
            store: ws.sqlite().map(|store| (&**store, client.name(), session)),
            _lock: lock,
        })
    }

    /// The state; a new session's is empty. The database's row, or, while it has none, the
    /// state file. `Err` says why a state that is there cannot be read (the database's error,
    /// a row or file that is not a state staged wrote).
    pub(crate) fn load(&self) -> Result<SessionState, String> {
        if let Some((store, client, session)) = self.store {
            match store.hook_state(client, session) {
                Ok(Some(text)) => {
                    return serde_json::from_str(&text)
                        .map_err(|err| format!("its row is not a state staged wrote: {err}"));
                }
                Ok(None) => {}
                Err(err) => return Err(err.to_string()),
            }
        }
        match self.dir.read_limited(&self.name, MAX_STATE_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|err| {
                format!("{} is not a state staged wrote: {err}", self.name.to_string_lossy())
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(SessionState::default()),
            Err(err) => Err(format!("{}: {err}", self.name.to_string_lossy())),
        }
    }

    /// The state, as [`SessionFile::load`] reads it; one that cannot be read is rebuilt from
    /// what the stack still says (the session's pending previews, `staged`), with a note that
    /// says so: the next save replaces the unreadable one with it, never silently.
    pub(crate) fn load_or_rebuild(&self, ws: &WorkspaceSession) -> (SessionState, Option<String>) {
        let why = match self.load() {
            Ok(state) => return (state, None),
            Err(why) => why,
        };
        let staged = session_pending(ws);
        let listed = if staged.is_empty() { "none".to_owned() } else { staged.join(", ") };
        let note = format!(
            "staged: this session's hook state could not be read ({why}); it is replaced by one rebuilt from the session's pending previews ({listed}), and the refused edits, Stop count and record-mode snapshots it held are lost"
        );
        (SessionState { staged, ..SessionState::default() }, Some(note))
    }

    /// Writes `state`: as the database's row (then the state file, read until now, goes), or
    /// atomically as the state file without a database.
    pub(crate) fn save(&self, state: &SessionState) -> Result<(), String> {
        let cannot = |err: &dyn std::fmt::Display| format!("cannot save the hook's state: {err}");
        let text = serde_json::to_string(state).map_err(|err| err.to_string())?;
        let Some((store, client, session)) = self.store else {
            return self
                .dir
                .write_replace(&self.name, text.as_bytes(), &NewFileMode::Private)
                .map_err(|err| cannot(&err));
        };
        store.set_hook_state(client, session, &text).map_err(|err| cannot(&err))?;
        // The row is read first from now on, so a file left by a failed removal is never
        // read again: no sync needed.
        if let Ok(Some(_)) = self.dir.entry_metadata(&self.name) {
            let _ = self.dir.remove_file(&self.name);
        }
        Ok(())
    }
}

/// The ids of the pending previews of the session the store acts for (the hook entered it),
/// oldest first; none when it acts for no session of its own.
fn session_pending(ws: &WorkspaceSession) -> Vec<String> {
    let own = ws.sqlite().is_some_and(|store| {
        let scope = store.scope();
        scope.own_stack && scope.acting.is_some()
    });
    if !own {
        return Vec::new();
    }
    let mut ids: Vec<String> = ws
        .store()
        .summaries()
        .map(|pending| pending.into_iter().map(|p| p.id.to_string()).collect())
        .unwrap_or_default();
    ids.reverse();
    ids
}

/// `session` as a file name: itself when it is plain, else a digest of it.
fn file_safe(session: &str) -> String {
    let plain = !session.is_empty()
        && session.len() <= 80
        && session.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain {
        session.to_owned()
    } else {
        staged_journal::fingerprint(session.as_bytes())[..32].to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_become_safe_file_names() {
        assert_eq!(
            file_safe("7650c999-a934-47e4-b347-40951bc67197"),
            "7650c999-a934-47e4-b347-40951bc67197"
        );
        let odd = file_safe("../../etc/passwd");
        assert_eq!(odd.len(), 32);
        assert!(odd.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(file_safe("").len(), 32);
    }
}
