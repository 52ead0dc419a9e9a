//! The watcher under the warm index: one inotify instance, a watch per folder (never
//! recursive), and a thread that turns its events into what the index needs to know.
//!
//! It is written on the `inotify` crate rather than `notify`: `notify`'s inotify backend
//! reports every open (so each query's own reads would mark its files changed) and drops its
//! own record of every watch under a moved folder, whose later events it then loses.
//!
//! What it reports ([`Seen`]): a path that changed (a file or folder created, written,
//! deleted, renamed, its attributes changed), that a folder it watched moved or went away
//! (the tree must be walked again), that events were lost (the kernel's queue overflowed), or
//! that a cookie arrived. Events come in the order they happened: one instance has one queue.

use std::{
    collections::HashMap,
    ffi::OsStr,
    io,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError},
};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

/// What one event means for the index.
#[derive(Debug)]
pub(super) enum Seen<'a> {
    /// Something at this absolute path changed.
    Changed(PathBuf),
    /// A watched folder moved or went away: walk the tree again.
    Tree,
    /// Events were lost: trust nothing.
    Lost,
    /// A file appeared in the cookie folder, with this name.
    Cookie(&'a OsStr),
}

/// The watches of one instance, and the folder each stands for.
#[derive(Debug)]
pub(super) struct Watcher {
    watches: Mutex<Watches>,
    known: Arc<Mutex<Known>>,
}

/// The live watches, both ways. A watch leaves when the kernel drops it (its folder is gone)
/// or when its folder moved: a folder deleted and made again, even with the same inode
/// number, is not watched until it is watched again.
#[derive(Debug, Default)]
struct Known {
    paths: HashMap<WatchDescriptor, PathBuf>,
    watches: HashMap<PathBuf, WatchDescriptor>,
}

impl Known {
    fn forget(&mut self, wd: &WatchDescriptor) -> bool {
        let Some(path) = self.paths.remove(wd) else { return false };
        if self.watches.get(&path) == Some(wd) {
            self.watches.remove(&path);
        }
        true
    }
}

/// What changes in a watched folder are reported: every change to an entry, never an open or
/// a read; no symlink followed, no event for a file once it is unlinked.
fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::ATTRIB
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::DONT_FOLLOW
        | WatchMask::EXCL_UNLINK
}

impl Watcher {
    /// Starts watching `cookies` (a folder of the index's own) and hands every event to
    /// `on_event` on a thread of its own, until `on_event` returns `false`.
    pub(super) fn start(
        cookies: &Path,
        mut on_event: impl FnMut(Seen<'_>) -> bool + Send + 'static,
    ) -> io::Result<Watcher> {
        let mut inotify = Inotify::init()?;
        let mut watches = inotify.watches();
        let cookie_wd = watches.add(cookies, WatchMask::CREATE | WatchMask::ONLYDIR)?;
        let known: Arc<Mutex<Known>> = Arc::default();
        let shared = Arc::clone(&known);
        let mut remover = watches.clone();
        std::thread::Builder::new().name("staged-warm-watch".to_owned()).spawn(move || {
            let mut buffer = vec![0u8; 64 * 1024];
            loop {
                let Ok(events) = inotify.read_events_blocking(&mut buffer) else {
                    on_event(Seen::Lost);
                    return;
                };
                for event in events {
                    let seen = if event.mask.contains(EventMask::Q_OVERFLOW) {
                        Seen::Lost
                    } else if event.wd == cookie_wd {
                        match event.name {
                            Some(name) => Seen::Cookie(name),
                            None => continue,
                        }
                    } else {
                        let mut known = shared.lock().unwrap_or_else(PoisonError::into_inner);
                        if event.mask.contains(EventMask::IGNORED) {
                            // The kernel dropped the watch (its folder is gone).
                            known.forget(&event.wd);
                            continue;
                        }
                        if event.mask.intersects(EventMask::MOVE_SELF | EventMask::DELETE_SELF) {
                            // Its events would name the old path from now on: drop the watch;
                            // the walk that follows watches the folder where it is now.
                            if known.forget(&event.wd) {
                                let _ = remover.remove(event.wd.clone());
                            }
                            Seen::Tree
                        } else {
                            let Some(dir) = known.paths.get(&event.wd) else { continue };
                            match event.name {
                                Some(name) => Seen::Changed(dir.join(name)),
                                None => Seen::Changed(dir.clone()),
                            }
                        }
                    };
                    if !on_event(seen) {
                        return;
                    }
                }
            }
        })?;
        Ok(Watcher { watches: Mutex::new(watches), known })
    }

    /// Whether the folder at `path` (absolute) has a live watch.
    pub(super) fn is_watching(&self, path: &Path) -> bool {
        self.known.lock().unwrap_or_else(PoisonError::into_inner).watches.contains_key(path)
    }

    /// Watches the folder at `path` (absolute), replacing what watched that path before.
    pub(super) fn watch(&self, path: &Path) -> io::Result<()> {
        let mut watches = self.watches.lock().unwrap_or_else(PoisonError::into_inner);
        let wd = watches.add(path, mask())?;
        // Recorded before the caller walks the folder again, so no event of the new watch
        // that the walk could miss is dropped as unknown.
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(old) = known.watches.insert(path.to_path_buf(), wd.clone())
            && old != wd
        {
            // The path names another folder now; the old one's watch stays until it goes.
            known.paths.remove(&old);
        }
        // The kernel gives an inode one watch: a folder moved here from a path watched before
        // comes back with that path's watch, which now stands for this path only.
        if let Some(before) = known.paths.insert(wd.clone(), path.to_path_buf())
            && before != path
            && known.watches.get(&before) == Some(&wd)
        {
            known.watches.remove(&before);
        }
        Ok(())
    }
}
