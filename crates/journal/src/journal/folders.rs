//! The folders of a commit and of a recovery (**Descriptors** in the journal's module doc): a
//! handle held on each of the first folders, any other opened again by path and checked by
//! identity; making, removing and syncing folders, never through a symlink.

use std::{
    collections::HashMap,
    ffi::{OsStr, OsString},
    io,
    sync::Arc,
};

use staged_fs::{DirHandle, RelPath};

use crate::{ConfinedRoot, JournalError, journal::write_err};

/// Removes a folder the deletes emptied, for a file to take its place. Gone already, or
/// already a file (a roll forward after the late create): done.
pub(super) fn remove_emptied(workspace: &ConfinedRoot, rel: &RelPath) -> Result<(), JournalError> {
    let done = |err: &io::Error| {
        matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
    };
    let (parent, name) = match workspace.fs().parent(rel) {
        Ok(found) => found,
        Err(err) if done(&err) => return Ok(()),
        Err(err) => return Err(write_err(workspace, rel, err)),
    };
    match parent.remove_dir(&name) {
        Ok(()) => parent.sync().map_err(|err| write_err(workspace, rel, err)),
        Err(err) if done(&err) => Ok(()),
        Err(err) => Err(write_err(workspace, rel, err)),
    }
}

/// Makes a folder where a deleted file was (or opens it, made already), never through a
/// symlink.
pub(super) fn make_late_dir(workspace: &ConfinedRoot, rel: &RelPath) -> Result<(), JournalError> {
    let (parent, name) =
        workspace.fs().parent(rel).map_err(|err| write_err(workspace, rel, err))?;
    parent.create_dir(&name).map_err(|err| write_err(workspace, rel, err))?;
    parent.sync().map_err(|err| write_err(workspace, rel, err))
}

/// Renames a late create's temp (in `stage`) to its target, over nothing, durably.
pub(super) fn place_late(
    workspace: &ConfinedRoot,
    stage: &DirHandle,
    temp: &OsStr,
    rel: &RelPath,
) -> io::Result<()> {
    let (dir, name) = workspace.fs().parent(rel)?;
    stage.rename_noreplace_into(temp, &dir, &name)?;
    dir.sync()?;
    stage.sync()
}

/// `dirs`, parents first.
pub(super) fn sorted(dirs: &[RelPath]) -> Vec<RelPath> {
    let mut res = dirs.to_vec();
    res.sort_by_key(|dir| dir.components().count());
    res
}

/// Removes the folders of `dirs` (parents first) that are empty, deepest first, never through
/// a symlink.
pub(super) fn remove_empty_dirs(workspace: &ConfinedRoot, dirs: &[RelPath]) {
    for dir in dirs.iter().rev() {
        if let Ok((parent, name)) = workspace.fs().parent(dir) {
            // Fails, and so keeps it, when it holds anything or is not a folder.
            let _ = parent.remove_dir(&name);
            let _ = parent.sync();
        }
    }
}

/// Whether the folder `rel` is one of `emptied` or below one (removed by the commit).
pub(super) fn emptied_or_below(rel: &Option<RelPath>, emptied: &[RelPath]) -> bool {
    let mut cursor = rel.clone();
    while let Some(dir) = cursor {
        if emptied.contains(&dir) {
            return true;
        }
        cursor = dir.parent();
    }
    false
}

/// A folder a commit needs for its new files.
pub(super) struct Folder {
    pub(super) rel: RelPath,
    /// Its parent, and its name there.
    pub(super) parent: FolderRef,
    pub(super) name: OsString,
    /// The folder itself.
    pub(super) this: FolderRef,
    /// Whether this commit made it (one that appeared meanwhile is used, never removed).
    pub(super) made: bool,
}

/// Makes the folder `rel` inside its parent: one made just before (`folders`), or one that
/// exists, opened from the root without following a symlink.
pub(super) fn make_folder(
    workspace: &ConfinedRoot,
    rel: &RelPath,
    folders: &[Folder],
    held: &Held,
) -> io::Result<Folder> {
    let parent_rel = rel.parent();
    let parent = match folders.iter().find(|f| Some(&f.rel) == parent_rel.as_ref()) {
        Some(folder) => folder.this.clone(),
        None => {
            let dir = workspace.fs().dir(parent_rel.as_ref())?;
            FolderRef::of(parent_rel, dir, Some(held))?
        }
    };
    let dir = parent.open(workspace)?;
    let name = rel.file_name().to_owned();
    let made = dir.entry_metadata(&name)?.is_none();
    let this = FolderRef::of(Some(rel.clone()), dir.create_dir(&name)?, Some(held))?;
    Ok(Folder { rel: rel.clone(), parent, name, this, made })
}

/// The most folders a commit, or a recovery, opens again and keeps open at once.
pub(super) const OPEN_FOLDERS: usize = 32;

/// The most folders a commit holds a handle on from its check to its end (see [`Held`]).
pub(super) const HELD_FOLDERS: usize = 96;

/// A folder of a commit: its path and which folder it was when the commit first opened it,
/// and, for the first [`HELD_FOLDERS`] folders of a commit, the handle opened then.
///
/// A held folder is written through its handle, whatever happens to the names meanwhile. A
/// change of many thousand files in as many folders cannot hold a descriptor for each (the
/// usual limit is 1,024, and 256 on macOS), so a folder beyond those is opened again when
/// needed, from the root one component at a time without following a symlink, and used only
/// if it is still that very folder: a commit writes only into the folders it checked, and a
/// folder swapped meanwhile stops it.
#[derive(Debug, Clone)]
pub(super) struct FolderRef {
    /// `None` for the root.
    pub(super) rel: Option<RelPath>,
    /// Its device and inode.
    pub(super) id: (u64, u64),
    pub(super) held: Option<Arc<DirHandle>>,
}

impl PartialEq for FolderRef {
    fn eq(&self, other: &Self) -> bool {
        self.rel == other.rel && self.id == other.id
    }
}

impl Eq for FolderRef {}

impl std::hash::Hash for FolderRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.rel.hash(state);
        self.id.hash(state);
    }
}

impl FolderRef {
    /// The folder `dir` is, at `rel`; `held` keeps its handle while it has room.
    pub(super) fn of(
        rel: Option<RelPath>,
        dir: DirHandle,
        held: Option<&Held>,
    ) -> io::Result<FolderRef> {
        let id = dir.dir_id()?;
        let held = held.and_then(|held| held.keep(&rel, id, dir));
        Ok(FolderRef { rel, id, held })
    }

    /// Its handle: the one held, or the folder opened again if it is still this folder.
    pub(super) fn open(&self, workspace: &ConfinedRoot) -> io::Result<Arc<DirHandle>> {
        if let Some(held) = &self.held {
            return Ok(Arc::clone(held));
        }
        let dir = workspace.fs().dir(self.rel.as_ref())?;
        if dir.dir_id()? != self.id {
            return Err(io::Error::other(format!(
                "the folder {} was replaced by another while staged was writing",
                self.rel.as_ref().map_or_else(|| ".".to_owned(), RelPath::display)
            )));
        }
        Ok(Arc::new(dir))
    }
}

/// A folder's path and its device and inode.
pub(super) type FolderKey = (Option<RelPath>, (u64, u64));

/// The folder handles a commit holds, one per folder, [`HELD_FOLDERS`] at most.
#[derive(Default)]
pub(super) struct Held {
    pub(super) handles: std::sync::Mutex<HashMap<FolderKey, Arc<DirHandle>>>,
}

impl Held {
    /// The handle held on folder `id` at `rel`: the one held already, else `dir` while there
    /// is room, else none.
    pub(super) fn keep(
        &self,
        rel: &Option<RelPath>,
        id: (u64, u64),
        dir: DirHandle,
    ) -> Option<Arc<DirHandle>> {
        let mut handles = self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (rel.clone(), id);
        if let Some(handle) = handles.get(&key) {
            return Some(Arc::clone(handle));
        }
        if handles.len() >= HELD_FOLDERS {
            return None;
        }
        let handle = Arc::new(dir);
        handles.insert(key, Arc::clone(&handle));
        Some(handle)
    }
}

impl Held {
    /// The folder held at `rel`, if any: the check reads a target through the handle of its
    /// folder that an earlier target of the same commit opened, as its temp is written
    /// through it, instead of opening the folder again for each file.
    pub(super) fn folder(&self, rel: &Option<RelPath>) -> Option<FolderRef> {
        let handles = self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        handles.iter().find(|((held, _), _)| held == rel).map(|((_, id), handle)| FolderRef {
            rel: rel.clone(),
            id: *id,
            held: Some(Arc::clone(handle)),
        })
    }
}

/// The folders opened last (at most [`OPEN_FOLDERS`]), for the steps taken one after another.
pub(super) struct OpenFolders<'a> {
    pub(super) workspace: &'a ConfinedRoot,
    pub(super) open: HashMap<FolderRef, Arc<DirHandle>>,
}

impl<'a> OpenFolders<'a> {
    pub(super) fn new(workspace: &'a ConfinedRoot) -> Self {
        OpenFolders { workspace, open: HashMap::new() }
    }

    pub(super) fn get(&mut self, folder: &FolderRef) -> io::Result<&DirHandle> {
        if self.open.len() >= OPEN_FOLDERS && !self.open.contains_key(folder) {
            self.open.clear();
        }
        match self.open.entry(folder.clone()) {
            std::collections::hash_map::Entry::Occupied(entry) => Ok(entry.into_mut()),
            std::collections::hash_map::Entry::Vacant(entry) => {
                Ok(entry.insert(folder.open(self.workspace)?))
            }
        }
    }
}
