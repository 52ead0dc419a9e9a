//! The warm index: what a long-running front end (`staged mcp`, `staged agent`,
//! `staged review`) keeps of the tree between queries, so that a selective `ast_grep` or
//! `ast_edit` reads and parses only the files that can match.
//!
//! It holds the list of files the walk would give (the same walker, see
//! [`crate::scope::walker`]) with each file's size, identity and language, and the trigrams and
//! word adjacencies of each file's text ([`Grams`]). A query lists its candidates from it
//! instead of walking, and skips every file whose filters rule out one of its prefilter needles
//! or pairs; the files it keeps are read from the disk as a cold query reads them, so what a
//! query finds in a file is always the file's current text. Only the skipping rests on the
//! index, so the index must never claim a file lacks a text it now has, nor miss a file the
//! walk would list. It also keeps the syntax trees of the files that selective queries parsed
//! last ([`TreeCache`]), each used only for the very text it was parsed from.
//!
//! It is kept fresh by file-system events (inotify, see `watch`), never by walking on each
//! query:
//! - every folder the walk entered is watched (not recursively: ignored folders such as
//!   `target/` cost nothing); an event marks its path dirty, and the next query settles the
//!   dirty paths first: a changed file loses its trigrams (it is read by every query until the
//!   background indexer has read it again), a file created or deleted makes its folder listed
//!   again, and a folder created, deleted or renamed, or an ignore file changed, makes the
//!   whole tree walked again (reusing the trigrams of every file whose identity and size are
//!   unchanged and that no event named);
//! - before it settles, a query waits for its own *cookie*: a file it creates in a private
//!   folder the same watcher watches. One watcher delivers its events in the order they
//!   happened, so once the cookie's event has arrived, every change made before the query began
//!   has been seen. (Watchman's cookies work the same way.)
//! - a lost event (the kernel's queue overflowed, a watch could not be added) makes the index
//!   trust nothing: the tree is walked again and every file read again, and until then the
//!   files count as unknown, which only makes queries read them.
//!
//! What no watch of the index reports is checked again by every query before it settles
//! (`Shared::recheck`):
//! - the ignore files the walk reads above the root (`above`): read again, and if one changed
//!   the whole tree is walked again;
//! - every file with more than one hard link: a write through another link is reported at the
//!   folder of the path written through, which may lie outside the tree or in a folder the
//!   walk ignores. Its identity (device, inode, change time), size and link count are looked
//!   up again, and a file changed, or changed too recently for its change time to prove
//!   anything, is settled as if an event had named it. When an event names a file with other
//!   links (a new name, or a write through one, in a folder the index watches, even under a
//!   name the walk ignores), the names the index lists for it are settled with it.
//!
//! A query that comes before the first walk has finished, or when the watcher failed, or whose
//! cookie does not arrive within [`COOKIE_WAIT`], is answered the cold way. Not seen: writes
//! through `mmap`, which the kernel reports to no watcher; a hard link made in a folder the
//! index does not watch (outside the tree, or a folder the walk ignores) to a file it lists
//! with one link, which the kernel reports to no folder watch either (until the file next
//! changes through a path the index watches or the tree is walked again, writes through that
//! link are missed); and file systems whose changes do not go through this kernel (a network
//! share written by another machine). The index is for local trees.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    path::{Path, PathBuf},
    sync::{
        Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

mod above;
mod cookie_dir;
mod settle;
#[cfg(target_os = "linux")]
mod watch;
/// Elsewhere there is no watcher: [`WarmIndex::start`] starts, and every query walks cold.
#[cfg(not(target_os = "linux"))]
mod watch {
    use std::{
        ffi::OsStr,
        io,
        path::{Path, PathBuf},
    };

    #[derive(Debug)]
    pub(super) enum Seen<'a> {
        Changed(PathBuf),
        Tree,
        Lost,
        Cookie(&'a OsStr),
    }

    #[derive(Debug)]
    pub(super) struct Watcher;

    impl Watcher {
        pub(super) fn start(
            _cookies: &Path,
            _on_event: impl FnMut(Seen<'_>) -> bool + Send + 'static,
        ) -> io::Result<Watcher> {
            Err(io::Error::new(io::ErrorKind::Unsupported, "the warm index needs inotify (Linux)"))
        }

        pub(super) fn watch(&self, _path: &Path) -> io::Result<()> {
            Err(io::Error::new(io::ErrorKind::Unsupported, "no watcher"))
        }
    }
}

use rayon::prelude::*;
use staged_fs::{FileIdentity, RelPath};

use self::{
    above::Above,
    watch::{Seen, Watcher},
};
use staged_journal::ConfinedRoot;

use crate::{
    grams::Grams,
    lang::{Inferred, Lang},
    scope::Candidate,
    trees::TreeCache,
};

/// How long a query waits for its cookie before it walks the cold way.
pub(crate) const COOKIE_WAIT: Duration = Duration::from_secs(2);

/// How many files the indexer reads before it stores what it found.
const BATCH: usize = 256;

/// How many times one settling walks the tree again while new folders keep appearing.
const MAX_WALKS: usize = 4;

/// A file changed less than this many seconds ago could change again within the same tick of
/// the kernel's coarse clock without its change time moving (the "racily clean" files of
/// git): its identity proves nothing yet.
const RECENT_SECS: i64 = 2;

/// The time now, in whole seconds since the epoch (as a file's change time counts).
fn unix_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(i64::MAX, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A warm index of one workspace, built and kept fresh in the background; dropping the last
/// handle stops it. See the module documentation.
#[derive(Debug, Clone)]
pub struct WarmIndex {
    shared: Arc<Shared>,
}

/// What the index holds, for the benchmarks and the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexStats {
    /// Whether queries are served from it.
    pub ready: bool,
    /// Files listed.
    pub files: usize,
    /// Files whose trigrams are known.
    pub indexed: usize,
    /// The sizes of the listed files, added up.
    pub corpus_bytes: u64,
    /// The bytes the trigram filters take.
    pub index_bytes: u64,
    /// Queries answered from the index so far (the others walked cold).
    pub served: u64,
    /// Syntax trees kept for queries that parse the same files again.
    pub trees: usize,
    /// The bytes of text those trees were parsed from (a Rust file's tree takes some 30 times
    /// as much).
    pub tree_text_bytes: u64,
}

/// The files a warm index lists: what a walk of the whole tree would give, at one moment.
#[derive(Debug, Clone, Default)]
pub(crate) struct Listing {
    files: BTreeMap<RelPath, Entry>,
    /// Every folder the walk entered, relative to the root (the root itself as the empty path).
    dirs: HashSet<PathBuf>,
}

#[derive(Debug, Clone)]
struct Entry {
    size: u64,
    identity: Option<FileIdentity>,
    /// Its number of hard links: a file with more than one can be written through a path no
    /// watch sees, so it is checked again at every query ([`Shared::recheck`]).
    links: u64,
    /// The indexer read it less than [`RECENT_SECS`] after its last change, so kept nothing of
    /// it (a file with other links could change again unseen within the same tick): the next
    /// check reads it again.
    retry: bool,
    grams: Option<Arc<Grams>>,
    /// What the file's name says of its language.
    inferred: Inferred,
    /// Its path as queries show it ([`RelPath::display`]).
    display: Box<str>,
    /// Which version of the entry the indexer read: its trigrams are stored only if the
    /// entry has not been replaced since.
    stamp: u64,
}

impl Listing {
    /// Adds to `out` the files under `base` (an absolute folder path) that pass `keep` (given
    /// each file's path relative to `base`, and what its name says of its language), as a
    /// walk of `base` would list them, and says whether it could: only a folder the walk of
    /// the whole tree entered is listed (a walk of an ignored folder, or of `.git`, lists what
    /// the whole tree's does not).
    pub(crate) fn list(
        &self,
        workspace: &ConfinedRoot,
        base: &Path,
        keep: &dyn Fn(&Path, Inferred) -> bool,
        out: &mut Vec<Candidate>,
    ) -> bool {
        let Ok(base_rel) = base.strip_prefix(workspace.root()) else { return false };
        if !self.dirs.contains(base_rel) {
            return false;
        }
        let files: Box<dyn Iterator<Item = (&RelPath, &Entry)>> = match RelPath::new(base_rel) {
            Ok(start) => Box::new(
                self.files
                    .range(start..)
                    .take_while(move |(rel, _)| rel.as_path().starts_with(base_rel)),
            ),
            Err(_) => Box::new(self.files.iter()),
        };
        for (rel, entry) in files {
            let under_base = match base_rel.as_os_str().is_empty() {
                true => rel.as_path(),
                false => rel.as_path().strip_prefix(base_rel).unwrap_or(rel.as_path()),
            };
            if !keep(under_base, entry.inferred) {
                continue;
            }
            out.push(Candidate {
                root: workspace.fs().clone(),
                rel: rel.clone(),
                display: entry.display.to_string(),
                explicit: false,
                size: entry.size,
                identity: entry.identity,
                grams: entry.grams.clone(),
                inferred: Some(entry.inferred),
            });
        }
        true
    }
}

#[derive(Debug)]
struct Shared {
    workspace: ConfinedRoot,
    state: Mutex<State>,
    /// Signalled when an event arrives, work is queued, or the index stops.
    wake: Condvar,
    /// The watcher, behind the lock that makes settling one query at a time. It is never
    /// called with `state` held: its thread takes `state` to deliver an event.
    watcher: Mutex<Option<Watcher>>,
    cookies: Cookies,
    stop: AtomicBool,
    served: AtomicU64,
    /// The trees of the files that selective queries parsed last.
    trees: TreeCache,
}

#[derive(Debug)]
struct Cookies {
    dir: cookie_dir::CookieDir,
    next: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    ready: bool,
    /// Why the index serves no query, for good.
    off: Option<String>,
    listing: Arc<Listing>,
    /// Absolute paths events named since the last settling.
    dirty: HashSet<PathBuf>,
    /// The tree must be walked again (a folder or an ignore file changed).
    rewalk: bool,
    /// Events were lost: trust no file's trigrams.
    forget: bool,
    /// Why the ignore rules may change with no event the index sees (a symlinked ignore
    /// file, a `.git` file): then every query walks cold.
    unsure: Option<String>,
    /// The ignore files above the root as they were before the last walk of the whole tree.
    above: Option<Above>,
    /// Whether the indexer read files since its queue was last empty.
    busy: bool,
    /// The highest cookie whose event arrived.
    cookie_seen: u64,
    /// Files to read: their path and the stamp of the entry to fill.
    queue: Vec<(RelPath, u64)>,
    stamp: u64,
}

/// What one walk found: each file with its size and identity, and the folders entered.
#[derive(Debug, Default)]
struct Walked {
    /// Each file with its size, identity and number of links.
    files: Vec<(RelPath, u64, Option<FileIdentity>, u64)>,
    /// Each folder with its device and inode (a folder deleted and made again under the same
    /// name is another folder, with no watch).
    dirs: HashMap<PathBuf, Option<(u64, u64)>>,
    /// Why the walk's ignore rules may change without an event in the tree, if they may.
    unsure: Option<String>,
}

impl WarmIndex {
    /// Stops the index and deletes its private cookie folder now, whatever handles are still
    /// alive: what a front end calls before it exits. Dropping the last handle stops the index
    /// too, but its background thread may hold it for a moment longer (up to its 200 ms wait),
    /// and a process that exits in that moment would leave the folder behind in the system's
    /// temporary folder, one per run. Queries after it walk the tree or fail; it is for the end.
    pub fn close(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake.notify_all();
        let _ = std::fs::remove_dir_all(self.shared.cookies.dir.path());
    }

    /// Starts indexing `workspace` in the background: a thread walks the tree, watches its
    /// folders and reads every file; queries are answered the cold way until the walk is done.
    ///
    /// # Errors
    /// When the private folder for cookies cannot be made.
    pub fn start(workspace: ConfinedRoot) -> std::io::Result<WarmIndex> {
        let cookies = Cookies {
            dir: cookie_dir::CookieDir::make_in(&std::env::temp_dir())?,
            next: AtomicU64::new(1),
        };
        let shared = Arc::new(Shared {
            workspace,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            watcher: Mutex::new(None),
            cookies,
            stop: AtomicBool::new(false),
            served: AtomicU64::new(0),
            trees: TreeCache::default(),
        });
        let weak = Arc::downgrade(&shared);
        std::thread::Builder::new()
            .name("staged-warm-index".to_owned())
            .spawn(move || run(&weak))?;
        Ok(WarmIndex { shared })
    }

    /// The listing to answer a query from, with every change made before this call seen; `None`
    /// when the query must walk the cold way (see the module documentation).
    pub(crate) fn listing(&self) -> Option<Arc<Listing>> {
        let listing = self.shared.settle(true);
        if listing.is_some() {
            self.shared.served.fetch_add(1, Ordering::Relaxed);
        }
        listing
    }

    /// The syntax trees kept for queries (see [`TreeCache`]).
    pub(crate) fn trees(&self) -> &TreeCache {
        &self.shared.trees
    }

    /// What the index holds now.
    pub fn stats(&self) -> IndexStats {
        let state = self.shared.lock();
        let mut stats = IndexStats {
            ready: state.ready && state.off.is_none(),
            served: self.shared.served.load(Ordering::Relaxed),
            ..IndexStats::default()
        };
        let (tree_text_bytes, trees) = self.shared.trees.kept();
        (stats.trees, stats.tree_text_bytes) = (trees, tree_text_bytes as u64);
        for entry in state.listing.files.values() {
            stats.files += 1;
            stats.corpus_bytes += entry.size;
            if let Some(grams) = &entry.grams {
                stats.indexed += 1;
                stats.index_bytes += grams.bytes() as u64;
            }
        }
        stats
    }

    /// Waits until every listed file that can be indexed has been read, or `timeout` passed;
    /// says whether it is so. For benchmarks and tests: queries never need to wait.
    pub fn wait_indexed(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if state.off.is_some() {
                return false;
            }
            if state.ready && state.queue.is_empty() && state.dirty.is_empty() && !state.rewalk {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self
                .shared
                .wake
                .wait_timeout(state, (deadline - now).min(Duration::from_millis(50)))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.notify_all();
        // Wakes the watcher's thread, which then finds the index gone and ends.
        let _ = std::fs::write(self.cookies.dir.path().join("stop"), b"");
    }
}

/// The background thread: the first walk, then reading queued files until the index stops.
fn run(weak: &Weak<Shared>) {
    {
        let Some(shared) = weak.upgrade() else { return };
        if let Err(why) = shared.begin(weak.clone()) {
            tracing::warn!("warm index off, queries walk the tree: {why}");
            shared.lock().off = Some(why);
            shared.wake.notify_all();
            return;
        }
    }
    loop {
        let Some(shared) = weak.upgrade() else { return };
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let jobs = {
            let mut state = shared.lock();
            if state.queue.is_empty() && (!state.dirty.is_empty() || state.rewalk) {
                // Settle in the background too, so files changed between queries are read
                // before the next one.
                drop(state);
                let _ = shared.settle(false);
                state = shared.lock();
            }
            if state.queue.is_empty() {
                if std::mem::take(&mut state.busy) {
                    drop(state);
                    let stats = WarmIndex { shared: Arc::clone(&shared) }.stats();
                    tracing::info!(
                        "warm index: {} of {} files indexed, {} bytes of filters for {} bytes of files",
                        stats.indexed,
                        stats.files,
                        stats.index_bytes,
                        stats.corpus_bytes
                    );
                    continue;
                }
                let _ = shared
                    .wake
                    .wait_timeout(state, Duration::from_millis(200))
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            state.busy = true;
            let at = state.queue.len().saturating_sub(BATCH);
            state.queue.split_off(at)
        };
        // What a file with other links held when read is kept only if its last change was
        // well before the read began (see `Entry::retry`).
        let settled_before = unix_secs().saturating_sub(RECENT_SECS);
        let found: Vec<(RelPath, u64, Option<Grams>)> = jobs
            .into_par_iter()
            .map(|(rel, stamp)| {
                let grams = shared.read_grams(&rel);
                (rel, stamp, grams)
            })
            .collect();
        let mut state = shared.lock();
        let root = shared.workspace.root().to_path_buf();
        let State { listing, dirty, .. } = &mut *state;
        let listing = Arc::make_mut(listing);
        for (rel, stamp, grams) in found {
            // A file an event named since it was read waits for the next settling.
            if dirty.contains(&root.join(rel.as_path())) {
                continue;
            }
            if let Some(entry) = listing.files.get_mut(&rel).filter(|e| e.stamp == stamp) {
                if entry.links > 1 && entry.identity.is_none_or(|id| id.ctime >= settled_before) {
                    entry.retry = true;
                    continue;
                }
                entry.grams = grams.map(Arc::new);
            }
        }
        drop(state);
        shared.wake.notify_all();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Creates the watcher and makes the first listing.
    fn begin(&self, weak: Weak<Shared>) -> Result<(), String> {
        let watcher = Watcher::start(self.cookies.dir.path(), move |seen| match weak.upgrade() {
            Some(shared) => {
                shared.on_event(seen);
                true
            }
            None => false,
        })
        .map_err(|err| format!("cannot watch the tree: {err}"))?;
        let mut slot = self.watcher.lock().unwrap_or_else(PoisonError::into_inner);
        *slot = Some(watcher);
        self.lock().rewalk = true;
        self.settle_locked(&mut slot)?;
        drop(slot);
        let mut state = self.lock();
        state.ready = true;
        drop(state);
        self.wake.notify_all();
        Ok(())
    }

    /// Records what one event says (called on the watcher's thread).
    fn on_event(&self, seen: Seen<'_>) {
        let mut state = self.lock();
        match seen {
            Seen::Lost => {
                tracing::debug!("warm index: events were lost; reading everything again");
                state.forget = true;
                state.rewalk = true;
            }
            Seen::Tree => state.rewalk = true,
            Seen::Changed(path) => {
                state.dirty.insert(path);
            }
            Seen::Cookie(name) => {
                let n = name
                    .to_str()
                    .and_then(|name| name.strip_prefix("cookie-"))
                    .and_then(|n| n.parse::<u64>().ok());
                if let Some(n) = n {
                    state.cookie_seen = state.cookie_seen.max(n);
                }
            }
        }
        drop(state);
        self.wake.notify_all();
    }

    /// Waits for a cookie (when `cookie`), settles every dirty path, and returns the listing.
    fn settle(&self, cookie: bool) -> Option<Arc<Listing>> {
        {
            let state = self.lock();
            if !state.ready || state.off.is_some() {
                return None;
            }
        }
        let mut watcher = self.watcher.lock().unwrap_or_else(PoisonError::into_inner);
        if cookie && !self.cookie() {
            return None;
        }
        if cookie {
            // (Not in the background: a file changed too recently would be settled again and
            // again until its change is old enough.)
            self.recheck();
        }
        if let Err(why) = self.settle_locked(&mut watcher) {
            tracing::warn!("warm index off, queries walk the tree: {why}");
            self.lock().off = Some(why);
            return None;
        }
        let state = self.lock();
        (state.off.is_none() && state.unsure.is_none()).then(|| state.listing.clone())
    }

    /// What no event tells, checked before each settling: the ignore files above the root
    /// (changed, the tree is walked again) and the files with more than one link (a write
    /// through another link is reported at that link's folder, if it is watched at all; one
    /// changed, or changed too recently for its identity to prove anything, is settled as if an
    /// event had named it).
    fn recheck(&self) {
        let above = Above::of(self.workspace.root());
        let linked: Vec<(RelPath, u64, Option<FileIdentity>, u64, bool)> = {
            let mut state = self.lock();
            if state.above.as_ref().is_some_and(|before| *before != above) {
                tracing::debug!("warm index: an ignore file above the root changed");
                state.rewalk = true;
            }
            state
                .listing
                .files
                .iter()
                .filter(|(_, e)| e.links > 1)
                .map(|(rel, e)| (rel.clone(), e.size, e.identity, e.links, e.retry))
                .collect()
        };
        if linked.is_empty() {
            return;
        }
        let recent = unix_secs().saturating_sub(RECENT_SECS);
        let root = self.workspace.root();
        let changed: Vec<PathBuf> = linked
            .into_iter()
            .filter(|(rel, size, identity, links, retry)| {
                use std::os::unix::fs::MetadataExt;
                // As the walk does (metadata only: nothing is read).
                let Ok(meta) = std::fs::symlink_metadata(root.join(rel.as_path())) else {
                    return true;
                };
                let now = FileIdentity::of(&meta);
                *retry
                    || !meta.is_file()
                    || meta.len() != *size
                    || meta.nlink() != *links
                    || *identity != Some(now)
                    || now.ctime >= recent
            })
            .map(|(rel, ..)| root.join(rel.as_path()))
            .collect();
        if !changed.is_empty() {
            self.lock().dirty.extend(changed);
        }
    }

    /// Creates the next cookie and waits for its event.
    fn cookie(&self) -> bool {
        let n = self.cookies.next.fetch_add(1, Ordering::SeqCst);
        let path = self.cookies.dir.path().join(format!("cookie-{n}"));
        if std::fs::write(&path, b"").is_err() {
            return false;
        }
        let deadline = Instant::now() + COOKIE_WAIT;
        let mut state = self.lock();
        let arrived = loop {
            if state.cookie_seen >= n {
                break true;
            }
            let now = Instant::now();
            if now >= deadline {
                break false;
            }
            state = self
                .wake
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        drop(state);
        let _ = std::fs::remove_file(&path);
        if !arrived {
            tracing::debug!("warm index: cookie {n} did not arrive; walking the cold way");
        }
        arrived
    }

    /// The trigrams (and adjacencies, see [`Grams`]) of a file, if it is text a query would search (a binary, non-UTF-8 or
    /// unreadable file is always a candidate: the query reports it).
    fn read_grams(&self, rel: &RelPath) -> Option<Grams> {
        let bytes = self.workspace.fs().read(rel).ok()?;
        let sniff = &bytes[..bytes.len().min(crate::source::BINARY_SNIFF_LEN)];
        if memchr::memchr(0, sniff).is_some() || std::str::from_utf8(&bytes).is_err() {
            return None;
        }
        let lang = match Lang::infer(rel.as_path()) {
            Inferred::Lang(lang) => Some(lang),
            _ => None,
        };
        Some(Grams::of(&bytes, lang))
    }
}
