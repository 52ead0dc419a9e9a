//! Settling: what the watcher's events mean for the listing, and the walks that bring it up
//! to date before a query lists from it (see the module documentation of [`super`]).

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    ffi::OsStr,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError},
};

use staged_fs::{FileIdentity, RelPath};
use staged_journal::STATE_DIR_NAME;

use crate::lang::Lang;

use super::{
    Entry, Listing, MAX_WALKS, RECENT_SECS, Shared, State, Walked, above::Above, unix_secs,
    watch::Watcher,
};

impl Shared {
    /// Settles the dirty paths into the listing (the caller holds the watcher's lock).
    pub(super) fn settle_locked(&self, watcher: &mut Option<Watcher>) -> Result<(), String> {
        let (dirty, mut rewalk, forget, listing) = {
            let mut state = self.lock();
            let dirty = std::mem::take(&mut state.dirty);
            let rewalk = std::mem::take(&mut state.rewalk);
            let forget = std::mem::take(&mut state.forget);
            (dirty, rewalk, forget, state.listing.clone())
        };
        if dirty.is_empty() && !rewalk {
            return Ok(());
        }
        let root = self.workspace.root();
        let Sorted { relist, changed } = self.sort_dirty(&dirty, &listing, &mut rewalk);
        // Read before the walk: a change after this is seen by the next query's check.
        let above = rewalk.then(|| Above::of(root));
        let walked = match rewalk {
            true => self.walk_whole(watcher)?,
            false => self.walk_listed(&relist, &listing),
        };
        // (A walk of the whole tree finds every listed file's link count itself.)
        let linked = match rewalk {
            true => HashMap::new(),
            false => linked_files(root, &changed),
        };
        // A file changed within a tick of the kernel's coarse clock of the walk could change
        // again without its change time moving: its identity proves nothing (see `Scan`).
        let recent = unix_secs().saturating_sub(RECENT_SECS);
        let mut state_unsure = None;
        let mut state = self.lock();
        let State { listing: current, queue, stamp, above: state_above, .. } = &mut *state;
        let current = Arc::make_mut(current);
        let mut fresh = |rel: &RelPath, size: u64, identity: Option<FileIdentity>, links: u64| {
            if !forget
                && !changed.contains(rel)
                && !dirty.contains(&root.join(rel.as_path()))
                && let Some(old) = current.files.get(rel)
                && old.identity.is_some()
                && old.identity == identity
                && old.size == size
                && old.links == links
                && !old.retry
                && identity.is_some_and(|id| id.ctime < recent)
            {
                return old.clone();
            }
            *stamp += 1;
            queue.push((rel.clone(), *stamp));
            let inferred = Lang::infer(rel.as_path());
            let display = rel.display().into();
            Entry {
                size,
                identity,
                links,
                retry: false,
                grams: None,
                inferred,
                display,
                stamp: *stamp,
            }
        };
        if rewalk {
            let mut files = BTreeMap::new();
            for (rel, size, identity, links) in &walked.files {
                let entry = fresh(rel, *size, *identity, *links);
                files.insert(rel.clone(), entry);
            }
            current.files = files;
            current.dirs = walked.dirs.into_keys().collect();
            state_unsure = Some(walked.unsure);
            *state_above = above;
        } else {
            let mut listed: HashMap<RelPath, Entry> = HashMap::new();
            for (rel, size, identity, links) in &walked.files {
                listed.insert(rel.clone(), fresh(rel, *size, *identity, *links));
            }
            current.files.retain(|rel, _| {
                let parent = rel.as_path().parent().unwrap_or(Path::new(""));
                !relist.contains(parent) || listed.contains_key(rel)
            });
            // What changed through a name events named changed under the file's other names
            // too, and they are checked at every query from now on.
            if !linked.is_empty() {
                for (rel, entry) in &mut current.files {
                    let Some(id) = entry.identity else { continue };
                    let Some(&(identity, size, links)) = linked.get(&(id.dev, id.ino)) else {
                        continue;
                    };
                    if listed.contains_key(rel) {
                        continue;
                    }
                    *stamp += 1;
                    queue.push((rel.clone(), *stamp));
                    *entry = Entry {
                        size,
                        identity: Some(identity),
                        links,
                        retry: false,
                        grams: None,
                        stamp: *stamp,
                        ..entry.clone()
                    };
                }
            }
            current.files.extend(listed);
        }
        if let Some(unsure) = state_unsure {
            if let Some(why) = &unsure {
                tracing::debug!("warm index: queries walk the tree while {why}");
            }
            state.unsure = unsure;
        }
        drop(state);
        self.wake.notify_all();
        Ok(())
    }

    /// Sorts the paths events named: the folders whose listing a file's creation or deletion
    /// changed, and the files changed; sets `rewalk` when the whole tree must be walked again
    /// (a folder changed, or an event the listing cannot place).
    fn sort_dirty(&self, dirty: &HashSet<PathBuf>, listing: &Listing, rewalk: &mut bool) -> Sorted {
        let mut sorted = Sorted::default();
        for path in dirty {
            match self.classify(path) {
                Change::Nothing => {}
                Change::Tree => *rewalk = true,
                Change::File(rel) => {
                    let was_dir = listing.dirs.contains(rel.as_path());
                    let is_dir =
                        self.workspace.fs().symlink_metadata(&rel).is_ok_and(|m| m.is_dir());
                    if was_dir || is_dir {
                        *rewalk = true;
                    } else {
                        let parent = rel.as_path().parent().unwrap_or(Path::new("")).to_path_buf();
                        if listing.dirs.contains(&parent) {
                            sorted.relist.insert(parent);
                        }
                        sorted.changed.insert(rel);
                    }
                }
            }
        }
        sorted
    }

    /// Walks the whole tree, watching every folder it finds, again while new folders keep
    /// appearing (up to [`MAX_WALKS`] times; then the next settling walks again).
    fn walk_whole(&self, watcher: &mut Option<Watcher>) -> Result<Walked, String> {
        let root = self.workspace.root();
        let mut walks = 0;
        loop {
            walks += 1;
            let mut walked = self.walk(root, None);
            let gits = self.git_folders(&mut walked);
            let added = self.watch_new(watcher, &walked.dirs)? | self.watch_new(watcher, &gits)?;
            if !added || walks >= MAX_WALKS {
                if added {
                    // Folders kept appearing: walk again at the next settling.
                    self.lock().rewalk = true;
                }
                return Ok(walked);
            }
        }
    }

    /// Lists the folders of `relist` again (their files only).
    fn walk_listed(&self, relist: &HashSet<PathBuf>, listing: &Listing) -> Walked {
        let root = self.workspace.root();
        let mut walked = Walked::default();
        for dir in relist {
            let base = if dir.as_os_str().is_empty() { root.to_path_buf() } else { root.join(dir) };
            let found = self.walk(&base, Some(1));
            if found.dirs.keys().any(|d| !listing.dirs.contains(d)) {
                // A folder appeared that no event named yet: settle it with the whole tree.
                self.lock().rewalk = true;
            }
            walked.files.extend(found.files);
        }
        walked
    }

    /// What an event's path means for the listing.
    fn classify(&self, path: &Path) -> Change {
        let Ok(rel) = path.strip_prefix(self.workspace.root()) else { return Change::Nothing };
        let names: Vec<&OsStr> = rel.iter().collect();
        let Some(&last) = names.last() else {
            // The root itself.
            return Change::Tree;
        };
        if names.first() == Some(&OsStr::new(STATE_DIR_NAME)) && names.len() > 1 {
            return Change::Nothing;
        }
        if let Some(git) = names.iter().position(|n| *n == ".git") {
            // `.git` itself appearing or going changes where `info/exclude` applies; inside it,
            // only `info/exclude` is read by the walk.
            let inside = &names[git + 1..];
            return if inside.is_empty()
                || inside == [OsStr::new("info")]
                || inside == [OsStr::new("info"), OsStr::new("exclude")]
            {
                Change::Tree
            } else {
                Change::Nothing
            };
        }
        if names.iter().any(|n| *n == "node_modules") {
            return Change::Nothing;
        }
        if last == ".gitignore" || last == ".ignore" {
            return Change::Tree;
        }
        match RelPath::new(rel) {
            Ok(rel) => Change::File(rel),
            Err(_) => Change::Tree,
        }
    }

    /// Walks `base` as a query would (to `depth`, if given).
    fn walk(&self, base: &Path, depth: Option<usize>) -> Walked {
        let found = Mutex::new(Walked::default());
        let mut builder = crate::scope::walker(&self.workspace, base, false);
        builder.max_depth(depth);
        builder.build_parallel().run(|| {
            let found = &found;
            Box::new(move |entry| {
                let Ok(entry) = entry else { return ignore::WalkState::Continue };
                let Some(kind) = entry.file_type() else { return ignore::WalkState::Continue };
                let path = entry.path();
                let Ok(rel) = path.strip_prefix(self.workspace.root()) else {
                    return ignore::WalkState::Continue;
                };
                if kind.is_dir() {
                    let id = entry.metadata().ok().map(|m| {
                        use std::os::unix::fs::MetadataExt;
                        (m.dev(), m.ino())
                    });
                    found
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .dirs
                        .insert(rel.to_path_buf(), id);
                } else if let Some(why) = unwatchable(entry.file_name(), kind) {
                    found.lock().unwrap_or_else(PoisonError::into_inner).unsure =
                        Some(format!("{}: {why}", rel.display()));
                } else if kind.is_file()
                    && let Some(rel) = self.workspace.walked(path)
                {
                    use std::os::unix::fs::MetadataExt;
                    let meta = entry.metadata().ok();
                    let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
                    let identity = meta.as_ref().map(FileIdentity::of);
                    let links = meta.as_ref().map_or(1, MetadataExt::nlink);
                    found
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .files
                        .push((rel, size, identity, links));
                }
                ignore::WalkState::Continue
            })
        });
        found.into_inner().unwrap_or_else(PoisonError::into_inner)
    }

    /// The `.git` folders (and their `info` folders) beside the walked folders, whose
    /// `info/exclude` the walk reads: they are watched too, though never listed. A `.git` that
    /// is a file (a worktree or a submodule, whose exclude file lies elsewhere) or a symlink
    /// makes `walked` unsure.
    fn git_folders(&self, walked: &mut Walked) -> HashMap<PathBuf, Option<(u64, u64)>> {
        use std::os::unix::fs::MetadataExt;
        let root = self.workspace.root();
        let mut gits = HashMap::new();
        for dir in walked.dirs.keys() {
            let git = dir.join(".git");
            let Ok(meta) = std::fs::symlink_metadata(root.join(&git)) else { continue };
            if !meta.is_dir() {
                walked.unsure = Some(format!(
                    "{} is not a folder (a worktree or a submodule): its exclude file lies outside the tree",
                    git.display()
                ));
                continue;
            }
            gits.insert(git.clone(), Some((meta.dev(), meta.ino())));
            let info = git.join("info");
            match std::fs::symlink_metadata(root.join(&info)) {
                Ok(meta) if meta.is_dir() => {
                    gits.insert(info.clone(), Some((meta.dev(), meta.ino())));
                    let exclude = std::fs::symlink_metadata(root.join(info.join("exclude")));
                    if exclude.is_ok_and(|m| m.file_type().is_symlink()) {
                        walked.unsure = Some(format!("{}/exclude is a symlink", info.display()));
                    }
                }
                Ok(_) => walked.unsure = Some(format!("{} is not a folder", info.display())),
                Err(_) => {}
            }
        }
        gits
    }

    /// Watches the folders of `dirs` not watched yet; says whether there were any (then the
    /// caller walks again, for what was created in them before their watch).
    fn watch_new(
        &self,
        watcher: &mut Option<Watcher>,
        dirs: &HashMap<PathBuf, Option<(u64, u64)>>,
    ) -> Result<bool, String> {
        let Some(watcher) = watcher.as_mut() else { return Err("no watcher".to_owned()) };
        let mut added = false;
        for dir in dirs.keys() {
            let abs = self.workspace.root().join(dir);
            if watcher.is_watching(&abs) {
                continue;
            }
            added = true;
            if let Err(err) = watcher.watch(&abs) {
                // A folder that went away meanwhile is the next walk's business; any other
                // failure (the watch limit) means changes there would be missed.
                if abs.is_dir() {
                    return Err(format!("cannot watch {}: {err}", abs.display()));
                }
            }
        }
        Ok(added)
    }
}

/// The paths events named, sorted by [`Shared::sort_dirty`].
#[derive(Default)]
struct Sorted {
    /// Folders to list again: a file in them was created, deleted or renamed.
    relist: HashSet<PathBuf>,
    /// Files changed.
    changed: HashSet<RelPath>,
}

/// The files of `changed` that have other links, by device and inode, with their identity,
/// size and link count: a new name (listed, or one the walk ignores in a watched folder) for
/// a file the index lists under another, or a write through one.
fn linked_files(
    root: &Path,
    changed: &HashSet<RelPath>,
) -> HashMap<(u64, u64), (FileIdentity, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    changed
        .iter()
        .filter_map(|rel| {
            let meta = std::fs::symlink_metadata(root.join(rel.as_path())).ok()?;
            let id = FileIdentity::of(&meta);
            (meta.is_file() && meta.nlink() > 1)
                .then(|| ((id.dev, id.ino), (id, meta.len(), meta.nlink())))
        })
        .collect()
}

/// Why an entry the walk yields (not a folder) means ignore rules could change unseen.
fn unwatchable(name: &OsStr, kind: std::fs::FileType) -> Option<&'static str> {
    if name == ".git" {
        // A `.git` file: a worktree or a submodule, whose exclude file lies elsewhere.
        return Some("a .git that is not a folder: its exclude file lies outside the tree");
    }
    ((name == ".gitignore" || name == ".ignore") && kind.is_symlink())
        .then_some("an ignore file that is a symlink: what it points at changes unseen")
}

/// What an event's path means.
enum Change {
    /// Nothing a walk lists (`.staged/`, inside `.git`, `node_modules`).
    Nothing,
    /// The whole tree must be walked again.
    Tree,
    /// A file (or a folder, found out when settled) at this path.
    File(RelPath),
}
