//! What a run that outlives its wrapper wrote since it was last harvested.
//!
//! A process a command leaves running (`cmd &`, a dev server, a watcher) keeps writing into
//! the run's upper layer after the wrapper recorded or staged what was there. Each harvest
//! keeps a [`Manifest`] in the run folder: every path it took, and what the upper layer held
//! there then (a file's SHA-256 and executable bit, a symlink's target, a folder, a deletion),
//! with the file's stat data, so that the next harvest rereads only the files whose stat data
//! changed (as git's index spares unchanged files) and takes only what changed since:
//! [`delta`]. The upper layer itself is left as it is while the command's processes run
//! (they read their own writes back from it); what a harvest takes is copied into the tree.
//!
//! [`split`] then sorts the delta against the tree: a path whose tree already holds exactly
//! what the upper layer holds is not taken again (a harvest killed after its commit and before
//! its manifest was saved is taken once), and, in record mode, a path staged had written into
//! the tree that someone else changed since (a person's editor, a revert) is *stale*: never
//! overwritten, and named.

use std::{collections::BTreeMap, os::unix::fs::MetadataExt, path::Path};

use serde::{Deserialize, Serialize};
use staged_journal::fingerprint;

use crate::upper::{After, Written};

/// What a path held when it was harvested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum State {
    /// A regular file: its bytes' SHA-256 and whether it is executable.
    File {
        /// The SHA-256 of its bytes, in hex.
        sha256: String,
        /// Whether any executable bit is set.
        executable: bool,
    },
    /// A symlink to this target.
    Symlink {
        /// Its target, lossy when it is not UTF-8.
        target: String,
    },
    /// A folder.
    Dir,
    /// Nothing.
    Absent,
    /// A FIFO, socket or device.
    Special,
}

/// A file's stat data: when they are unchanged, so are its bytes (what the overlay writes
/// changes the modification and change times).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stat {
    len: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    mode: u32,
}

impl Stat {
    fn of(meta: &std::fs::Metadata) -> Stat {
        Stat {
            len: meta.len(),
            ino: meta.ino(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            mode: meta.mode(),
        }
    }
}

/// One path of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// What the upper layer held at the path.
    pub state: State,
    /// The upper file's stat data, for a regular file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stat: Option<Stat>,
}

/// A preview a harvest of the run staged (gate mode), and its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// Its id.
    pub id: String,
    /// The files it writes.
    pub files: Vec<String>,
}

/// What was harvested of a run so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// How many harvests took something.
    pub harvests: u32,
    /// Every path taken, and what the upper layer held there.
    pub paths: BTreeMap<String, Seen>,
    /// The previews the run's harvests staged.
    #[serde(default)]
    pub previews: Vec<Preview>,
}

impl Manifest {
    /// Takes `seen` (from [`delta`]) as harvested.
    pub fn merge(&mut self, seen: Vec<(String, Seen)>) {
        self.paths.extend(seen);
    }
}

/// The state of the regular file at `path`, read without following a symlink and without
/// waiting on a FIFO.
fn file_state(path: &Path) -> std::io::Result<State> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    file_state_of(std::fs::File::from(rustix::fs::open(path, flags, Mode::empty())?))
}

/// The state of the file opened as `file`.
fn file_state_of(mut file: std::fs::File) -> std::io::Result<State> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(State::Special);
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes)?;
    Ok(State::File { sha256: fingerprint(&bytes), executable: meta.mode() & 0o111 != 0 })
}

/// What the path `path` holds (of the tree, or of an upper layer), [`State::Absent`] when
/// nothing is there.
///
/// Errors when it cannot be read.
fn state_at(path: &Path) -> std::io::Result<State> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(State::Absent),
        Err(err) => return Err(err),
    };
    let kind = meta.file_type();
    Ok(if kind.is_symlink() {
        State::Symlink { target: std::fs::read_link(path)?.to_string_lossy().into_owned() }
    } else if kind.is_dir() {
        State::Dir
    } else if kind.is_file() {
        file_state(path)?
    } else {
        State::Special
    })
}

/// What the tree holds at `path` as the journal sees it: through real folders only, so a path
/// under a symlink (or under a file) holds nothing, and nothing a symlink leads to is read.
fn tree_state(tree: &staged_fs::Root, path: &str) -> std::io::Result<State> {
    use std::io::ErrorKind;
    let Ok(rel) = staged_fs::RelPath::new(path) else { return Ok(State::Absent) };
    let dir = match tree.dir(rel.parent().as_ref()) {
        Ok(dir) => dir,
        Err(err)
            if matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
                || err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) =>
        {
            return Ok(State::Absent);
        }
        Err(err) => return Err(err),
    };
    match dir.entry_metadata(rel.file_name())? {
        None => Ok(State::Absent),
        Some(meta) if meta.is_file() => match dir.open_file(rel.file_name()) {
            Ok(file) => file_state_of(file),
            // Swapped for something else since: what is there now.
            Err(_) => state_at(&tree.path().join(path)),
        },
        Some(_) => state_at(&tree.path().join(path)),
    }
}

/// What `w` is now, and its upper file's stat data.
fn seen_of(w: &Written, known: Option<&Seen>) -> std::io::Result<Seen> {
    Ok(match &w.after {
        After::File { .. } => {
            let meta = std::fs::symlink_metadata(&w.upper)?;
            let stat = Stat::of(&meta);
            match known {
                // Unchanged stat data: the bytes are what they were, not read again.
                Some(seen) if seen.stat == Some(stat) => seen.clone(),
                _ => Seen { state: file_state(&w.upper)?, stat: Some(stat) },
            }
        }
        After::Symlink(target) => Seen {
            state: State::Symlink { target: target.to_string_lossy().into_owned() },
            stat: None,
        },
        After::Dir => Seen { state: State::Dir, stat: None },
        After::Absent => Seen { state: State::Absent, stat: None },
        After::Special => Seen { state: State::Special, stat: None },
    })
}

/// The paths of a delta, each with what it is now; and paths whose stat data alone changed.
pub(crate) type Delta = (Vec<(Written, Seen)>, Vec<(String, Seen)>);

/// What the upper layer holds that `manifest` did not take (all of `written` when it is
/// empty), with what each path is now; and the paths whose state is unchanged but whose
/// stat data is new (to be saved, so they are not reread).
///
/// # Errors
/// When the upper layer cannot be read.
pub fn delta(manifest: &Manifest, written: Vec<Written>) -> std::io::Result<Delta> {
    let mut res = Vec::new();
    let mut refreshed = Vec::new();
    for w in written {
        let known = manifest.paths.get(&w.path);
        let seen = seen_of(&w, known)?;
        match known {
            Some(old) if old.state == seen.state => {
                if old.stat != seen.stat {
                    refreshed.push((w.path.clone(), seen));
                }
            }
            _ => res.push((w, seen)),
        }
    }
    Ok((res, refreshed))
}

/// A delta sorted against the tree.
#[derive(Debug, Default)]
pub struct Split {
    /// What to record or stage.
    pub fresh: Vec<Written>,
    /// Paths staged wrote into the tree earlier and someone else changed since (record mode):
    /// not taken, never overwritten.
    pub stale: Vec<String>,
    /// Every path of the delta, with what it is now: the manifest's new entries once the
    /// harvest is done.
    pub seen: Vec<(String, Seen)>,
}

/// Sorts `delta` against the tree at `root`: a path whose tree already holds what the upper
/// layer holds is taken as it is (nothing to write); with `record`, a path the manifest says
/// staged wrote into the tree whose tree now holds neither that nor the new state is stale.
///
/// # Errors
/// When the tree cannot be read.
pub fn split(
    root: &Path,
    manifest: &Manifest,
    delta: Vec<(Written, Seen)>,
    record: bool,
) -> std::io::Result<Split> {
    let mut res = Split::default();
    let real = staged_fs::Root::open(root)?;
    for (w, seen) in delta {
        let tree = tree_state(&real, &w.path)?;
        if tree == seen.state {
            res.seen.push((w.path.clone(), seen));
            continue;
        }
        if record
            && let Some(old) = manifest.paths.get(&w.path)
            && old.state != tree
            && !(old.state == State::Absent && tree == State::Absent)
        {
            res.stale.push(w.path.clone());
            res.seen.push((w.path.clone(), seen));
            continue;
        }
        res.seen.push((w.path.clone(), seen));
        res.fresh.push(w);
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upper::written;

    #[test]
    fn a_delta_holds_only_what_changed_since_the_manifest_and_split_names_what_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        let (root, upper) = (dir.path().join("root"), dir.path().join("upper"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&upper).unwrap();
        std::fs::write(upper.join("a"), "one\n").unwrap();
        std::fs::write(upper.join("b"), "b\n").unwrap();
        let mut manifest = Manifest::default();
        let (delta1, _) = delta(&manifest, written(&root, &upper).unwrap()).unwrap();
        assert_eq!(delta1.len(), 2);
        let split1 = split(&root, &manifest, delta1, true).unwrap();
        assert_eq!(split1.fresh.len(), 2);
        // As a record writes them into the tree.
        std::fs::write(root.join("a"), "one\n").unwrap();
        std::fs::write(root.join("b"), "b\n").unwrap();
        manifest.merge(split1.seen);
        manifest.harvests = 1;
        // Nothing new: nothing taken.
        let (delta2, _) = delta(&manifest, written(&root, &upper).unwrap()).unwrap();
        assert!(delta2.is_empty());
        // The process writes both again; a person changed `b` in the tree meanwhile.
        std::fs::write(upper.join("a"), "two\n").unwrap();
        std::fs::write(upper.join("b"), "b2\n").unwrap();
        std::fs::write(upper.join("c"), "c\n").unwrap();
        std::fs::write(root.join("b"), "person\n").unwrap();
        let (delta3, _) = delta(&manifest, written(&root, &upper).unwrap()).unwrap();
        let split3 = split(&root, &manifest, delta3, true).unwrap();
        let fresh: Vec<&str> = split3.fresh.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(fresh, ["a", "c"]);
        assert_eq!(split3.stale, ["b"]);
        // A tree that already holds the new bytes (a harvest killed before its manifest was
        // saved) is not taken again.
        std::fs::write(root.join("a"), "two\n").unwrap();
        let (delta4, _) = delta(&manifest, written(&root, &upper).unwrap()).unwrap();
        let split4 = split(&root, &manifest, delta4, true).unwrap();
        let fresh: Vec<&str> = split4.fresh.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(fresh, ["c"]);
    }
}
