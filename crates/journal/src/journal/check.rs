//! A commit's first step: every target checked against what the preview read (a file with its
//! fingerprint, or nothing for a file to create), opened without following a symlink; the
//! folders to make, and for a path that changes kind, the folders the deletes empty and those
//! made where files were.

use std::{
    collections::{BTreeSet, HashMap, HashSet},
    ffi::{OsStr, OsString},
    io,
    os::unix::fs::PermissionsExt,
};

use staged_fs::{DirHandle, FileIdentity, NewFileMode, RelPath};

use crate::{
    ConfinedRoot, JournalError,
    fingerprint::fingerprint,
    journal::{
        Expect, Step, StepChange, StepMode,
        folders::{FolderRef, Held},
        format::EntryKind,
        write_err,
    },
    par,
};

/// A target, checked and opened for the commit.
pub(super) struct OpenTarget {
    pub(super) rel: RelPath,
    pub(super) display: String,
    pub(super) kind: EntryKind,
    /// The folder of its temp file: its own folder (`None` until the folders the commit
    /// creates exist), or for a late create under a file that becomes a folder, the deepest
    /// folder above it that exists, `up` folders above its own.
    pub(super) dir: Option<FolderRef>,
    pub(super) name: OsString,
    /// The permissions its temp file gets.
    pub(super) new_mode: NewFileMode,
    /// For a delete: the file the check found.
    pub(super) victim: Option<FileIdentity>,
    /// A create put in place after the deletes (its path changes kind).
    pub(super) late: bool,
    pub(super) up: u32,
}

/// The checked targets, the folders to create for them (parents first), and for paths that
/// change kind, the folders the deletes empty and those made where files were (parents
/// first).
pub(super) struct Plan {
    pub(super) targets: Vec<OpenTarget>,
    pub(super) dirs: Vec<RelPath>,
    pub(super) emptied: Vec<RelPath>,
    pub(super) late_dirs: Vec<RelPath>,
}

/// Where a file to create goes, as the check found its path.
pub(super) struct Place {
    /// The folder of its temp file; `None` when its folder is yet to be made.
    pub(super) dir: Option<FolderRef>,
    pub(super) late: bool,
    pub(super) up: u32,
}

/// Opens every target's directory without following symlinks and checks that each target is
/// still what the preview read.
pub(super) fn check_targets(
    workspace: &ConfinedRoot,
    steps: &[Step],
    held: &Held,
) -> Result<Plan, JournalError> {
    let mut seen = HashSet::new();
    let mut targets = Vec::with_capacity(steps.len());
    let mut modes: HashMap<RelPath, u32> = HashMap::new();
    let mut dirs = BTreeSet::new();
    let mut kinds = KindChanges::default();
    // The files the commit deletes: their paths may become folders, and a folder holding
    // only such files may become a file.
    let deleting: HashSet<RelPath> = steps
        .iter()
        .filter(|s| matches!(s.change, StepChange::Delete) && s.expect != Expect::Absent)
        .map(|s| s.target.clone())
        .collect();
    // The files to compare, read and hashed on several threads at once (the expensive part);
    // each step's verdict is then taken in order, so the error reported is the first one.
    let found = par::try_map(steps.len(), par::Work::Cpu, |i| {
        Ok(match &steps[i].expect {
            Expect::Fingerprint(_) => Some(read_target(workspace, &steps[i].target, held)),
            Expect::Absent => None,
        })
    })
    .map_err(|failed| JournalError::Journal(failed.error.to_string()))?;
    for (step, found) in steps.iter().zip(found) {
        let rel = &step.target;
        let Some(display) = rel.to_str().map(str::to_owned) else {
            return Err(write_err(
                workspace,
                rel,
                io::Error::new(io::ErrorKind::InvalidInput, "the file name is not UTF-8"),
            ));
        };
        if !seen.insert(rel.clone()) {
            return Err(JournalError::Journal(format!("{display} is written twice")));
        }
        let name = rel.file_name().to_owned();
        let mut place = (false, 0);
        let (kind, dir, mode, victim) = match &step.expect {
            Expect::Fingerprint(expected) => {
                let Some(found) = found else {
                    return Err(JournalError::Journal(format!("{display} was not read")));
                };
                let ReadTarget { dir, fingerprint: current, mode, identity } = found?;
                if current != *expected {
                    return Err(JournalError::Drifted(rel.display()));
                }
                modes.insert(rel.clone(), mode);
                let (kind, victim) = match step.change {
                    StepChange::Write { .. } => (EntryKind::Replace, None),
                    StepChange::Delete => (EntryKind::Delete, Some(identity)),
                };
                (kind, Some(dir), Some(mode), victim)
            }
            Expect::Absent => {
                if matches!(step.change, StepChange::Delete) {
                    return Err(JournalError::Journal(format!(
                        "{display} cannot be deleted: the preview found no file there"
                    )));
                }
                let found = absent_target(workspace, rel, &mut dirs, &mut kinds, &deleting, held)?;
                place = (found.late, found.up);
                (EntryKind::Create, found.dir, None, None)
            }
        };
        targets.push((
            OpenTarget {
                rel: rel.clone(),
                display,
                kind,
                dir,
                name,
                new_mode: NewFileMode::Default,
                victim,
                late: place.0,
                up: place.1,
            },
            mode,
        ));
    }
    let res = with_modes(targets, steps, &modes)?;
    no_file_is_a_folder(&res)?;
    let by_depth = |set: BTreeSet<RelPath>| {
        let mut res: Vec<RelPath> = set.into_iter().collect();
        res.sort_by_key(|dir| dir.components().count());
        res
    };
    Ok(Plan {
        targets: res,
        dirs: by_depth(dirs),
        emptied: by_depth(kinds.emptied),
        late_dirs: by_depth(kinds.late_dirs),
    })
}

/// The permissions each written target gets, set last: a move takes its source's, which may
/// come later in the list.
fn with_modes(
    targets: Vec<(OpenTarget, Option<u32>)>,
    steps: &[Step],
    modes: &HashMap<RelPath, u32>,
) -> Result<Vec<OpenTarget>, JournalError> {
    let mut res = Vec::with_capacity(targets.len());
    for ((mut target, mode), step) in targets.into_iter().zip(steps) {
        if let StepChange::Write { mode: wanted, .. } = &step.change {
            target.new_mode = match (wanted, mode) {
                (StepMode::Keep, Some(mode)) => NewFileMode::Mode(mode),
                (StepMode::Keep | StepMode::Default, _) => NewFileMode::Default,
                (StepMode::Executable, _) => NewFileMode::Executable,
                (StepMode::Bits(bits), _) => NewFileMode::Mode(*bits),
                (StepMode::Of(source), _) => match modes.get(source) {
                    Some(mode) => NewFileMode::Mode(*mode),
                    None => {
                        return Err(JournalError::Journal(format!(
                            "{} takes the mode of {}, which the commit does not read",
                            target.display,
                            source.display()
                        )));
                    }
                },
            };
        }
        res.push(target);
    }
    Ok(res)
}

/// A file the commit writes must not also be the folder of another file it writes (a deleted
/// file's path may become a folder, and an emptied folder's a file).
fn no_file_is_a_folder(res: &[OpenTarget]) -> Result<(), JournalError> {
    let written: HashSet<&RelPath> =
        res.iter().filter(|t| t.kind != EntryKind::Delete).map(|t| &t.rel).collect();
    for target in res.iter().filter(|t| t.kind != EntryKind::Delete) {
        let mut cursor = target.rel.parent();
        while let Some(dir) = cursor {
            if written.contains(&dir) {
                return Err(JournalError::Journal(format!(
                    "{} is both a file and a folder of this change",
                    dir.display()
                )));
            }
            cursor = dir.parent();
        }
    }
    Ok(())
}

/// The folders of the paths that change kind in one commit.
#[derive(Default)]
pub(super) struct KindChanges {
    /// Folders the deletes empty, for a file to take their place.
    pub(super) emptied: BTreeSet<RelPath>,
    /// Folders made where deleted files were.
    pub(super) late_dirs: BTreeSet<RelPath>,
}

/// A target as the check found it: its folder, and the fingerprint, mode bits and identity of
/// the file there.
pub(super) struct ReadTarget {
    pub(super) dir: FolderRef,
    pub(super) fingerprint: String,
    pub(super) mode: u32,
    pub(super) identity: FileIdentity,
}

/// Opens `rel`'s folder without following a symlink and reads the file.
pub(super) fn read_target(
    workspace: &ConfinedRoot,
    rel: &RelPath,
    held: &Held,
) -> Result<ReadTarget, JournalError> {
    let read_err = |err: io::Error| {
        let path = workspace.root().join(rel.as_path());
        JournalError::Read { path, message: err.to_string(), source: err }
    };
    let parent = rel.parent();
    // Through the folder's handle held already (an earlier target in it, read through it as
    // its temp will be written through it), else the folder opened from the root, held while
    // there is room.
    let (folder, (current, mode, identity)) = match held.folder(&parent) {
        Some(folder) => {
            let dir = folder.open(workspace).map_err(|err| write_err(workspace, rel, err))?;
            let read = read_with_mode(&dir, rel.file_name()).map_err(read_err)?;
            (folder, read)
        }
        None => {
            let dir =
                workspace.fs().dir(parent.as_ref()).map_err(|e| write_err(workspace, rel, e))?;
            let read = read_with_mode(&dir, rel.file_name()).map_err(read_err)?;
            let folder = FolderRef::of(parent, dir, Some(held))
                .map_err(|err| write_err(workspace, rel, err))?;
            (folder, read)
        }
    };
    Ok(ReadTarget { dir: folder, fingerprint: fingerprint(&current), mode, identity })
}

/// Checks that nothing is at `rel` (or a folder holding only files in `deleting`), and
/// collects the folders above it that are missing (or are files in `deleting`, to become
/// folders). Returns where its temp file goes.
pub(super) fn absent_target(
    workspace: &ConfinedRoot,
    rel: &RelPath,
    missing: &mut BTreeSet<RelPath>,
    kinds: &mut KindChanges,
    deleting: &HashSet<RelPath>,
    held: &Held,
) -> Result<Place, JournalError> {
    let parent = rel.parent();
    // The deepest folder above `rel` that exists, then everything below it is missing.
    let mut prefixes = Vec::new();
    let mut cursor = parent.clone();
    while let Some(dir) = cursor {
        cursor = dir.parent();
        prefixes.push(dir);
    }
    prefixes.reverse();
    let mut open = workspace.fs().handle().map_err(|err| write_err(workspace, rel, err))?;
    for (k, prefix) in prefixes.iter().enumerate() {
        match open.open_dir(prefix.file_name()) {
            Ok(next) => open = next,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if open
                    .entry_metadata(prefix.file_name())
                    .map_err(|err| write_err(workspace, prefix, err))?
                    .is_some()
                {
                    // A dangling symlink, say: never followed, never replaced.
                    return Err(not_a_folder(workspace, prefix));
                }
                missing.extend(prefixes[k..].iter().cloned());
                return Ok(Place { dir: None, late: false, up: 0 });
            }
            Err(_) => {
                let is_file = open
                    .entry_metadata(prefix.file_name())
                    .map_err(|err| write_err(workspace, prefix, err))?
                    .is_some_and(|meta| meta.is_file());
                if !(is_file && deleting.contains(prefix)) {
                    return Err(not_a_folder(workspace, prefix));
                }
                // A file the commit deletes, whose path becomes a folder: the temp waits in
                // the folder that holds it.
                kinds.late_dirs.extend(prefixes[k..].iter().cloned());
                let up = u32::try_from(prefixes.len() - k).unwrap_or(u32::MAX);
                let dir = FolderRef::of(prefix.parent(), open, Some(held))
                    .map_err(|err| write_err(workspace, rel, err))?;
                return Ok(Place { dir: Some(dir), late: true, up });
            }
        }
    }
    let late =
        match open.entry_metadata(rel.file_name()).map_err(|err| write_err(workspace, rel, err))? {
            None => false,
            Some(meta) if meta.is_dir() => {
                // A folder that becomes a file: every file in it must be one the commit deletes.
                let folder =
                    open.open_dir(rel.file_name()).map_err(|err| write_err(workspace, rel, err))?;
                let mut folders = Vec::new();
                if let Some(kept) = emptied_by(&folder, rel, deleting, &mut folders)
                    .map_err(|err| write_err(workspace, rel, err))?
                {
                    return Err(JournalError::Appeared(kept.display()));
                }
                kinds.emptied.extend(folders);
                true
            }
            Some(_) => return Err(JournalError::Appeared(rel.display())),
        };
    let dir =
        FolderRef::of(parent, open, Some(held)).map_err(|err| write_err(workspace, rel, err))?;
    Ok(Place { dir: Some(dir), late, up: 0 })
}

/// Whether the deletes of `deleting` empty the folder `dir` (at `rel`): `None` when every
/// entry below it is a regular file in `deleting` or a folder so emptied (collected in
/// `folders`, parents first); else the first entry that stays.
pub(super) fn emptied_by(
    dir: &DirHandle,
    rel: &RelPath,
    deleting: &HashSet<RelPath>,
    folders: &mut Vec<RelPath>,
) -> io::Result<Option<RelPath>> {
    folders.push(rel.clone());
    let mut names = dir.names()?;
    names.sort();
    for name in names {
        let child = rel.join(&name).map_err(io::Error::other)?;
        match dir.entry_metadata(&name)? {
            Some(meta) if meta.is_dir() => {
                if let Some(kept) = emptied_by(&dir.open_dir(&name)?, &child, deleting, folders)? {
                    return Ok(Some(kept));
                }
            }
            Some(meta) if meta.is_file() && deleting.contains(&child) => {}
            Some(_) => return Ok(Some(child)),
            None => {}
        }
    }
    Ok(None)
}

pub(super) fn not_a_folder(workspace: &ConfinedRoot, rel: &RelPath) -> JournalError {
    write_err(
        workspace,
        rel,
        io::Error::other(
            "it is not a folder staged can write into (a file, or a symlink, which staged never follows)",
        ),
    )
}

/// The bytes, mode bits and identity of the regular file `name`, all of the one file opened.
pub(super) fn read_with_mode(
    dir: &DirHandle,
    name: &OsStr,
) -> io::Result<(Vec<u8>, u32, FileIdentity)> {
    let (buf, meta) = dir.read_with_metadata(name)?;
    Ok((buf, meta.permissions().mode(), FileIdentity::of(&meta)))
}
