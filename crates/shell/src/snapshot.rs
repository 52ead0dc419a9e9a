//! The fallback where a command cannot run isolated (the namespace or the overlay is refused,
//! or `STAGED_SHELL_ISOLATION=off`), in record mode only: a snapshot of the workspace before
//! the command, compared with the tree after it. It cannot tell the command's writes from
//! another program's in that window, and the entry says so ([`CAVEAT`],
//! `extra.shell.attribution` = `"snapshot"`); a gate never runs a command this way, so it never
//! puts back what it cannot attribute.
//!
//! A snapshot walks the tree as git sees it (`.gitignore` of each folder and
//! `.git/info/exclude`; never `.git/` or `.staged/`) and keeps each path's stat data (size,
//! times, inode, mode), a symlink's target, and where each regular file's bytes before can be
//! had back, so that a revert loses nothing:
//! - a tracked file that holds exactly its blob in git's index (the crate's `gitindex`, read
//!   with gitoxide): git's object store keeps it, nothing is copied;
//! - any other file (untracked, or changed since the index): a copy of its bytes in
//!   `.staged/shell/kept/<sha256>` (never a hard link: a `>` truncates the very inode), at most
//!   16 MiB per file and 256 MiB of new copies per snapshot (`COPY_FILE_CAP`,
//!   `COPY_TOTAL_CAP`); a copy an earlier snapshot made of a file whose stat data did not
//!   change since is reused (the warm list, `.staged/shell/snapshot-cache.json`), so a tree's
//!   untracked files are copied once, not per command;
//! - a file past the caps (or whose name is not UTF-8) is not kept, and the entry names it
//!   ("before bytes not kept").
//!
//! After the command, a path whose stat data changed is read again and compared byte for byte
//! with its bytes before: `Snapshot::changes` sorts them as [`crate::plan`] sorts an overlay's
//! (text changes as the journal's undo data, the rest named with their bytes before kept), and
//! `record` logs them as one entry of the session. The tree already holds what the command
//! wrote: nothing is written.

use std::{
    collections::{BTreeMap, HashMap},
    io::Read,
    os::unix::fs::MetadataExt,
    path::Path,
};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{FileChange, LogRecord, Session};
use staged_journal::{
    Applied, ConfinedRoot, DiffHeader, LineIndex, ModeChange, STATE_DIR_NAME, UndoData,
    deleted_file_diff, file_diff_indexed, fingerprint, new_file_diff,
};

use crate::{RUNS_DIR, apply::extra, gitindex::GitIndex, plan::MAX_TEXT_BYTES};

/// The environment variable that chooses how a command is isolated: `off` runs every command
/// of record mode under the snapshot fallback (and refuses every command of gate mode), as
/// where the overlay is refused; `auto` (or unset) isolates where the system allows.
pub const ISOLATION_ENV: &str = "STAGED_SHELL_ISOLATION";

/// What an entry recorded from snapshots says of itself (`extra.shell.caveat`).
pub const CAVEAT: &str = "changes made while the command ran; other programs' writes in that window cannot be told apart";

/// The largest file a snapshot copies (its bytes before are not kept past it, unless git has
/// them).
pub(crate) const COPY_FILE_CAP: u64 = 16 << 20;

/// The most bytes one snapshot copies anew (copies reused from the last snapshot cost nothing).
pub(crate) const COPY_TOTAL_CAP: u64 = 256 << 20;

/// A run's snapshot, in its folder.
const SNAPSHOT_FILE: &str = "snapshot.json";

/// The largest `snapshot.json` read back.
const MAX_SNAPSHOT_BYTES: u64 = 1 << 30;

/// The warm list of copies, in `.staged/shell/`: path, stat data and the copy's SHA-256.
const CACHE_FILE: &str = "snapshot-cache.json";

/// The stat data a snapshot compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    mode: u32,
}

impl Stat {
    fn of(meta: &std::fs::Metadata) -> Stat {
        Stat {
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
            mode: meta.mode(),
        }
    }
}

/// Where a file's bytes before are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Before {
    /// In git's object store: this blob.
    Git(String),
    /// Copied into `.staged/shell/kept/` under this SHA-256.
    Kept(String),
    /// Nowhere: why.
    NotKept(String),
}

/// What a path is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Kind {
    File(Before),
    Link(String),
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Item {
    stat: Stat,
    kind: Kind,
}

/// The workspace as a command found it.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Snapshot {
    items: BTreeMap<String, Item>,
    /// Paths whose name is not UTF-8 (their bytes are never kept).
    #[serde(default)]
    odd: Vec<String>,
}

/// One path of the walk: relative, `/`-separated (lossy when not UTF-8), its stat data.
struct Found {
    path: String,
    utf8: bool,
    meta: std::fs::Metadata,
}

/// Every path but folders below `root`, as git sees the tree: `.gitignore` files and
/// `.git/info/exclude` (not the person's global excludes, not `.ignore` files), hidden files
/// included, `.git/` and `.staged/` left out, symlinks not followed.
fn walk(root: &Path) -> Result<Vec<Found>, String> {
    // The walk reads each folder's `.gitignore` by name, following a symlink and waiting on a
    // FIFO: one that is not a regular file stops it before it is read, named.
    plain_ignore_file(&root.join(".gitignore"))?;
    plain_ignore_file(&root.join(".git/info/exclude"))?;
    let refused: std::sync::Arc<std::sync::Mutex<Option<String>>> = std::sync::Arc::default();
    let refusing = std::sync::Arc::clone(&refused);
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_global(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| {
            if e.depth() == 1 && (e.file_name() == ".git" || e.file_name() == STATE_DIR_NAME) {
                return false;
            }
            if e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && let Err(err) = plain_ignore_file(&e.path().join(".gitignore"))
            {
                if let Ok(mut refused) = refusing.lock() {
                    refused.get_or_insert(err);
                }
                return false;
            }
            true
        })
        .build();
    let mut res = Vec::new();
    for entry in walker {
        let entry = entry.map_err(|err| format!("the workspace could not be walked: {err}"))?;
        if entry.depth() == 0 || entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else { continue };
        let Ok(meta) = entry.path().symlink_metadata() else { continue };
        let utf8 = rel.to_str().is_some();
        res.push(Found { path: rel.to_string_lossy().into_owned(), utf8, meta });
    }
    if let Some(err) = refused.lock().ok().and_then(|mut refused| refused.take()) {
        return Err(err);
    }
    Ok(res)
}

/// Whether the ignore file `path` is a regular file or missing: a symlink (which could name a
/// file outside the workspace), a FIFO (whose reading waits for ever) or a device is refused.
fn plain_ignore_file(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() => Err(format!(
            "{} is not a regular file (a symlink, a FIFO or a device), and staged does not read it",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// Opens the regular file `path` without following a symlink and without waiting (a FIFO
/// swapped in is refused at once).
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = std::fs::File::from(rustix::fs::open(path, flags, Mode::empty())?);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
}

/// The bytes of the regular file `path`, with its stat data once read.
fn read_file(path: &Path) -> std::io::Result<(Vec<u8>, std::fs::Metadata)> {
    let mut file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let meta = file.metadata()?;
    Ok((bytes, meta))
}

/// The warm list: each copied file's stat data and SHA-256, by path.
type Cache = BTreeMap<String, (Stat, String)>;

fn load_cache(workspace: &ConfinedRoot) -> Cache {
    let Ok(Some(dir)) = workspace.state_subdir(RUNS_DIR, false) else { return Cache::new() };
    let Ok(mut file) = dir.open_file(CACHE_FILE) else { return Cache::new() };
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return Cache::new();
    }
    serde_json::from_slice(&bytes).unwrap_or_default()
}

fn save_cache(workspace: &ConfinedRoot, cache: &Cache) {
    let Ok(Some(dir)) = workspace.state_subdir(RUNS_DIR, true) else { return };
    if let Ok(bytes) = serde_json::to_vec(cache) {
        let _ = dir.write_replace(CACHE_FILE, &bytes, &staged_fs::NewFileMode::Private);
    }
}

/// Threads that copy files at once: each copy is made durable (a sync of the file and its
/// folder, 1 to 8 ms each on a busy ext4), and concurrent ones share the filesystem's commits.
const COPY_THREADS: usize = 8;

/// Copies each of `paths` (files of the workspace) into `.staged/shell/kept/`, on several
/// threads: for each, its SHA-256 and stat data once read, or why it could not be read.
///
/// # Errors
/// When a copy cannot be written.
#[allow(clippy::type_complexity, reason = "one result per path, built here only")]
fn copies(
    workspace: &ConfinedRoot,
    paths: &[String],
) -> Result<Vec<(String, Result<(String, Stat), String>)>, String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::with_capacity(paths.len()));
    let failed = std::sync::Mutex::new(None);
    let work = || {
        while let Some(path) = paths.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
            let copy = match read_file(&workspace.root().join(path)) {
                Ok((bytes, now)) => {
                    let sha = fingerprint(&bytes);
                    if let Err(err) = staged_journal::keep_bytes(workspace, &sha, &bytes) {
                        if let Ok(mut failed) = failed.lock() {
                            *failed = Some(err);
                        }
                        return;
                    }
                    Ok((sha, Stat::of(&now)))
                }
                Err(err) => Err(format!("it could not be read: {err}")),
            };
            if let Ok(mut done) = done.lock() {
                done.push((path.clone(), copy));
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 0..COPY_THREADS.min(paths.len()) {
            scope.spawn(work);
        }
    });
    if let Some(err) = failed.into_inner().ok().flatten() {
        return Err(err);
    }
    let done = done.into_inner().map_err(|_| "a copy's thread failed".to_owned())?;
    if done.len() != paths.len() {
        return Err("a copy's thread failed".to_owned());
    }
    Ok(done)
}

impl Snapshot {
    /// The workspace of `workspace` as it is now, every regular file's bytes kept where git
    /// does not keep them (within the caps).
    ///
    /// # Errors
    /// When the tree cannot be walked or a copy cannot be written.
    pub fn take(workspace: &ConfinedRoot) -> Result<Snapshot, String> {
        let root = workspace.root();
        let index = GitIndex::read(root);
        let cache = load_cache(workspace);
        let mut warm = Cache::new();
        let mut copied = 0u64;
        let mut to_copy = Vec::new();
        let mut res = Snapshot::default();
        for found in walk(root)? {
            let Found { path, utf8, meta } = found;
            if !utf8 {
                res.odd.push(path);
                continue;
            }
            let stat = Stat::of(&meta);
            let kind = if meta.file_type().is_symlink() {
                let target = std::fs::read_link(root.join(&path)).unwrap_or_default();
                Kind::Link(target.to_string_lossy().into_owned())
            } else if !meta.is_file() {
                Kind::Other
            } else if let Some(oid) = index.clean_blob(&path, &meta) {
                Kind::File(Before::Git(oid))
            } else if let Some((_, sha)) = cache
                .get(&path)
                .filter(|(s, sha)| *s == stat && staged_journal::kept_again(workspace, sha))
            {
                warm.insert(path.clone(), (stat, sha.clone()));
                Kind::File(Before::Kept(sha.clone()))
            } else if meta.size() > COPY_FILE_CAP {
                Kind::File(Before::NotKept(format!(
                    "over {} MiB, the most staged copies of one file",
                    COPY_FILE_CAP >> 20
                )))
            } else if copied + meta.size() > COPY_TOTAL_CAP {
                Kind::File(Before::NotKept(format!(
                    "past the {} MiB staged copies before one command",
                    COPY_TOTAL_CAP >> 20
                )))
            } else {
                copied += meta.size();
                to_copy.push(path.clone());
                Kind::File(Before::NotKept(String::new()))
            };
            res.items.insert(path, Item { stat, kind });
        }
        for (path, copy) in copies(workspace, &to_copy)? {
            let Some(item) = res.items.get_mut(&path) else { continue };
            match copy {
                Ok((sha, stat)) => {
                    warm.insert(path, (stat, sha.clone()));
                    *item = Item { stat, kind: Kind::File(Before::Kept(sha)) };
                }
                Err(why) => item.kind = Kind::File(Before::NotKept(why)),
            }
        }
        if warm != cache {
            save_cache(workspace, &warm);
        }
        Ok(res)
    }

    /// Logs what changed in the workspace of `workspace` since the snapshot (the writes of
    /// `command`, and any other program's meanwhile) as one entry of the session `session`
    /// acts for, completing `base` (its id, label, front end and reason); `false` when nothing
    /// changed (nothing is logged then). Nothing is written to the tree.
    ///
    /// # Errors
    /// When the tree cannot be walked, bytes kept cannot be read back, or the entry cannot be
    /// logged.
    pub fn record(
        &self,
        session: &Session,
        workspace: &ConfinedRoot,
        command: &str,
        base: LogRecord,
    ) -> Result<bool, String> {
        let changes = self.changes(workspace)?;
        if changes.is_empty() {
            return Ok(false);
        }
        record(session, changes, command, base).map(|()| true)
    }

    /// Writes the snapshot into the run folder `dir`.
    ///
    /// # Errors
    /// When it cannot be written.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        crate::confined::write_regular(&dir.join(SNAPSHOT_FILE), &bytes)
    }

    /// The snapshot the run folder `dir` holds, if it holds one (a run of the fallback).
    ///
    /// # Errors
    /// When one is there but cannot be read.
    pub fn of_run(dir: &Path) -> Result<Option<Snapshot>, String> {
        let unread = |err: &dyn std::fmt::Display| {
            format!("the command's snapshot could not be read: {err}")
        };
        // Never through a symlink, never waiting on a FIFO: the run folder is in reach of
        // anyone who writes the workspace.
        let bytes =
            match crate::confined::read_regular(&dir.join(SNAPSHOT_FILE), MAX_SNAPSHOT_BYTES) {
                Ok(bytes) => bytes,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(err) => return Err(unread(&err)),
            };
        let snapshot: Snapshot = serde_json::from_slice(&bytes).map_err(|err| unread(&err))?;
        // Each path one the walk could have found: relative, without `.` or `..`, never in
        // `.git/` or `.staged/` (a planted one would log a change outside the workspace).
        for path in snapshot.items.keys().chain(&snapshot.odd) {
            let plain = staged_fs::RelPath::new(path).map_err(|err| unread(&err)).and_then(|rel| {
                let first = rel.components().next().unwrap_or_default();
                if first == ".git" || first == STATE_DIR_NAME {
                    Err(unread(&format!("`{path}` is in `{}`", first.to_string_lossy())))
                } else {
                    Ok(())
                }
            });
            plain?;
        }
        Ok(Some(snapshot))
    }

    /// Whether the run folder `dir` is a snapshot fallback's (it holds a snapshot), without
    /// reading it.
    pub fn in_run(dir: &Path) -> bool {
        std::fs::symlink_metadata(dir.join(SNAPSHOT_FILE)).is_ok()
    }
}

/// One side of a changed path.
enum Side {
    Absent,
    /// A regular file: its bytes (`Err`: why they are not kept) and mode.
    File(Result<Vec<u8>, String>, u32),
    Link(String),
    Other,
}

/// A file not in the diff, as `extra.shell.notInDiff` names it (the overlay's shape).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct NotInDiff {
    path: String,
    why: String,
    /// The SHA-256 of its bytes after (`null`: no regular file).
    after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    after_mode: Option<u32>,
    existed: bool,
    /// The SHA-256 of its bytes before, kept in `.staged/shell/kept/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    before_mode: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    before_link: Option<String>,
}

impl NotInDiff {
    fn named(path: &str, why: &str, existed: bool) -> NotInDiff {
        NotInDiff {
            path: path.to_owned(),
            why: why.to_owned(),
            after: None,
            after_mode: None,
            existed,
            before: None,
            before_mode: None,
            before_link: None,
        }
    }
}

/// What a command changed, sorted: the text changes as the journal's undo data, the rest
/// named (`extra.shell.notInDiff`).
#[derive(Debug, Default)]
pub(crate) struct Changes {
    /// The text changes, as an apply's undo data keeps them.
    ops: Vec<Applied>,
    /// The text each updated or deleted file had before, by path.
    texts: BTreeMap<String, String>,
    /// The modes changed (of files updated).
    modes: Vec<ModeChange>,
    /// The files not in the diff.
    others: Vec<NotInDiff>,
}

impl Changes {
    /// Whether the command changed nothing staged sees.
    pub(crate) fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.others.is_empty()
    }
}

/// The text of `bytes`, when it is text within the cap.
fn text(bytes: &[u8]) -> Option<&str> {
    if bytes.len() as u64 > MAX_TEXT_BYTES || bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

impl Snapshot {
    /// What changed in the workspace of `workspace` since the snapshot.
    ///
    /// # Errors
    /// When the tree cannot be walked, or bytes kept cannot be read back for a text change.
    pub(crate) fn changes(&self, workspace: &ConfinedRoot) -> Result<Changes, String> {
        let root = workspace.root();
        let mut now: BTreeMap<String, (Stat, Kind)> = BTreeMap::new();
        let mut odd = Vec::new();
        for Found { path, utf8, meta } in walk(root)? {
            if !utf8 {
                odd.push(path);
                continue;
            }
            let kind = if meta.file_type().is_symlink() {
                let target = std::fs::read_link(root.join(&path)).unwrap_or_default();
                Kind::Link(target.to_string_lossy().into_owned())
            } else if meta.is_file() {
                Kind::File(Before::NotKept(String::new()))
            } else {
                Kind::Other
            };
            now.insert(path, (Stat::of(&meta), kind));
        }
        let mut changed: Vec<&str> = Vec::new();
        for (path, item) in &self.items {
            match now.get(path) {
                Some((stat, _)) if *stat == item.stat => {}
                _ => changed.push(path),
            }
        }
        changed.extend(now.keys().filter(|p| !self.items.contains_key(*p)).map(String::as_str));
        changed.sort_unstable();
        let oids: Vec<String> = changed
            .iter()
            .filter_map(|p| match self.items.get(*p).map(|i| &i.kind) {
                Some(Kind::File(Before::Git(oid))) => Some(oid.clone()),
                _ => None,
            })
            .collect();
        let blobs = crate::gitindex::blobs(root, &oids);
        let mut res = Changes::default();
        for path in changed {
            let before = match self.items.get(path) {
                None => Side::Absent,
                Some(item) => match &item.kind {
                    Kind::File(source) => Side::File(
                        self.before_bytes(workspace, path, source, &blobs),
                        item.stat.mode,
                    ),
                    Kind::Link(target) => Side::Link(target.clone()),
                    Kind::Other => Side::Other,
                },
            };
            let after = match now.get(path) {
                None => Side::Absent,
                Some((stat, Kind::File(_))) => match read_file(&root.join(path)) {
                    Ok((bytes, meta)) => Side::File(Ok(bytes), meta.mode()),
                    Err(err) => Side::File(Err(err.to_string()), stat.mode),
                },
                Some((_, Kind::Link(target))) => Side::Link(target.clone()),
                Some((_, Kind::Other)) => Side::Other,
            };
            res.add(workspace, path, before, after)?;
        }
        for path in odd.iter().filter(|p| !self.odd.contains(p)) {
            res.others.push(NotInDiff::named(path, "a file whose name is not UTF-8", false));
        }
        for path in self.odd.iter().filter(|p| !odd.contains(p)) {
            let why = "before bytes not kept (a file whose name is not UTF-8, deleted)";
            res.others.push(NotInDiff::named(path, why, true));
        }
        Ok(res)
    }

    /// The bytes before of `path`, from `source`.
    fn before_bytes(
        &self,
        workspace: &ConfinedRoot,
        path: &str,
        source: &Before,
        blobs: &HashMap<String, Vec<u8>>,
    ) -> Result<Vec<u8>, String> {
        match source {
            Before::Git(oid) => {
                blobs.get(oid).cloned().ok_or_else(|| format!("git's blob {oid} could not be read"))
            }
            Before::Kept(sha) => {
                staged_journal::read_kept(workspace, sha, path).map(|(bytes, _)| bytes)
            }
            Before::NotKept(why) => Err(why.clone()),
        }
    }
}

impl Changes {
    /// Sorts one changed path.
    fn add(
        &mut self,
        workspace: &ConfinedRoot,
        path: &str,
        before: Side,
        after: Side,
    ) -> Result<(), String> {
        let exec = |mode: u32| mode & 0o111 != 0;
        let existed = !matches!(before, Side::Absent);
        // Both sides text, or nothing: a text change.
        let before_text = match &before {
            Side::File(Ok(bytes), _) => text(bytes).map(Some),
            Side::Absent => Some(None),
            _ => None,
        };
        let after_text = match &after {
            Side::File(Ok(bytes), _) => text(bytes).map(Some),
            Side::Absent => Some(None),
            _ => None,
        };
        if let (Side::File(Ok(b), bm), Side::File(Ok(a), am)) = (&before, &after)
            && b == a
            && exec(*bm) == exec(*am)
        {
            return Ok(());
        }
        if let (Some(old), Some(new)) = (before_text, after_text) {
            let (bm, am) = (mode_of(&before), mode_of(&after));
            match (old, new) {
                (Some(old), Some(new)) => {
                    let edits = staged_edit::line_edits(old, new);
                    if exec(bm) != exec(am) {
                        self.modes.push(ModeChange {
                            path: path.to_owned(),
                            old: bm & 0o7777,
                            new: am & 0o7777,
                        });
                    }
                    self.texts.insert(path.to_owned(), old.to_owned());
                    self.ops.push(Applied::Update { path: path.to_owned(), edits });
                }
                (None, Some(new)) => self.ops.push(Applied::Create {
                    path: path.to_owned(),
                    content: new.to_owned(),
                    mode: exec(am).then_some(staged_journal::EXECUTABLE_MODE),
                }),
                (Some(old), None) => {
                    self.texts.insert(path.to_owned(), old.to_owned());
                    self.ops.push(Applied::Delete {
                        path: path.to_owned(),
                        content: old.to_owned(),
                        mode: bm & 0o7777,
                    });
                }
                (None, None) => {}
            }
            return Ok(());
        }
        let why = why_not_text(&before, &after);
        let mut item = NotInDiff::named(path, &why, existed);
        if let Side::File(Ok(bytes), mode) = &after {
            item.after = Some(fingerprint(bytes));
            item.after_mode = Some(mode & 0o7777);
        }
        match &before {
            Side::File(Ok(bytes), mode) => {
                let sha = fingerprint(bytes);
                staged_journal::keep_bytes(workspace, &sha, bytes)?;
                item.before = Some(sha);
                item.before_mode = Some(mode & 0o7777);
            }
            Side::Link(target) => item.before_link = Some(target.clone()),
            _ => {}
        }
        self.others.push(item);
        Ok(())
    }
}

fn mode_of(side: &Side) -> u32 {
    match side {
        Side::File(_, mode) => *mode,
        _ => 0,
    }
}

/// Why a changed path is not a text change, as the overlay's plan says it (`binary`, `a
/// binary file, deleted`, ...), or that its bytes before are not kept.
fn why_not_text(before: &Side, after: &Side) -> String {
    let kind = |side: &Side| match side {
        Side::File(Ok(bytes), _) if bytes.len() as u64 > MAX_TEXT_BYTES => {
            format!("over {} MiB", MAX_TEXT_BYTES >> 20)
        }
        Side::File(..) => "binary".to_owned(),
        Side::Link(_) => "a symlink".to_owned(),
        Side::Other => "a FIFO, socket or device".to_owned(),
        Side::Absent => String::new(),
    };
    let was = |side: &Side| match side {
        Side::File(Ok(bytes), _) if bytes.len() as u64 > MAX_TEXT_BYTES => {
            "a file over the text cap"
        }
        Side::Link(_) => "a symlink",
        Side::Other => "a FIFO, socket or device",
        _ => "a binary file",
    };
    if let Side::File(Err(why), _) = before {
        return format!("before bytes not kept ({why})");
    }
    if let Side::File(Err(why), _) = after {
        return format!("its bytes after could not be read ({why})");
    }
    match (before, after) {
        (_, Side::Absent) => format!("{}, deleted", was(before)),
        (Side::File(Ok(b), _), Side::File(..)) if text(b).is_some() => kind(after),
        (Side::Absent, _) => kind(after),
        (_, Side::File(Ok(a), _)) if text(a).is_some() => {
            format!("{}, replaced by a text file", was(before))
        }
        _ => kind(after),
    }
}

/// Logs `changes` (the writes of `command`, found by comparing snapshots) as one entry of the
/// session `session` acts for: `base` is the record to complete (its id, label, front end and
/// reason). Nothing is written to the tree: it holds the command's writes already.
///
/// # Errors
/// When the entry cannot be logged or its diff made.
fn record(
    session: &Session,
    changes: Changes,
    command: &str,
    mut base: LogRecord,
) -> Result<(), String> {
    let mut diff = String::new();
    let mut files = Vec::new();
    let sha = |t: &str| Some(fingerprint(t.as_bytes()));
    for op in &changes.ops {
        let piece = match op {
            Applied::Update { path, edits } => {
                let old = changes.texts.get(path).map(String::as_str).unwrap_or_default();
                let new = staged_journal::replay(old, edits)
                    .ok_or_else(|| format!("the change of {path} does not replay"))?;
                files.push(FileChange { path: path.clone(), before: sha(old), after: sha(&new) });
                let chmod = changes.modes.iter().find(|m| &m.path == path);
                let header = chmod.map_or(DiffHeader::Modify { path }, |m| DiffHeader::Chmod {
                    from: path,
                    to: path,
                    old: m.old,
                    new: m.new,
                });
                file_diff_indexed(&header, &LineIndex::new(old), edits)
            }
            Applied::Create { path, content, mode } => {
                files.push(FileChange { path: path.clone(), before: None, after: sha(content) });
                new_file_diff(path, content, mode.unwrap_or(staged_journal::NEW_FILE_MODE))
            }
            Applied::Delete { path, content, mode } => {
                files.push(FileChange { path: path.clone(), before: sha(content), after: None });
                deleted_file_diff(path, content, *mode)
            }
            Applied::Move { .. } => continue,
        };
        diff.push_str(&piece.map_err(|err| err.to_string())?);
    }
    let others: Vec<Value> =
        changes.others.iter().filter_map(|o| serde_json::to_value(o).ok()).collect();
    base.extra = Some(extra(command, "snapshot", &others, None, Some(CAVEAT)));
    base.result = format!("Recorded {}.", base.label);
    if !changes.ops.is_empty() {
        let mut undo = UndoData::of(changes.ops);
        undo.modes = changes.modes;
        base.diff = Some(diff);
        base.files = files;
        base.undo = Some(undo.to_value());
        base.texts = changes.texts.into_values().collect();
    }
    session.store().log_record(base).map_err(|err| err.to_string())
}
