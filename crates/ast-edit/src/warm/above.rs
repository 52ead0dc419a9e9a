//! The ignore files above the workspace root, which the walk reads (as git reads those of the
//! repository's folders above a subfolder) but where the index has no watch: it reads them
//! again before each query and walks the tree again when one changed.
//!
//! The walk ([`crate::scope::walker`], the `ignore` crate with `parents` on, `require_git` off
//! and git's global excludes off) reads, in every folder above the root's canonical path: its
//! `.gitignore` and `.ignore`, and the `info/exclude` of its `.git` folder, or for a `.git`
//! file (a worktree) that of the common git folder it names (`gitdir:`, then that folder's
//! `commondir`). [`Above::of`] reads the same files, and the `.git` and `commondir` files that
//! say where the exclude file is, byte for byte: two readings differ whenever what the walk
//! would read differs. They are a few small files: reading them costs microseconds.
//!
//! They are read, never written, and what they hold is never shown: they only decide which
//! files of the workspace a walk lists.

use std::{
    io,
    path::{Path, PathBuf},
};

/// What one file above the root held when read.
#[derive(Debug, PartialEq, Eq)]
enum Read {
    Missing,
    Folder,
    Bytes(Vec<u8>),
    Unreadable(io::ErrorKind),
}

fn read(path: &Path) -> Read {
    match std::fs::read(path) {
        Ok(bytes) => Read::Bytes(bytes),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Read::Missing,
        Err(_) if path.is_dir() => Read::Folder,
        Err(err) => Read::Unreadable(err.kind()),
    }
}

/// The ignore files above a root, and the files that locate them, as read at one moment.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Above {
    read: Vec<(PathBuf, Read)>,
}

impl Above {
    /// Reads what the walk of `root` reads above it.
    pub(super) fn of(root: &Path) -> Above {
        let mut above = Above { read: Vec::new() };
        // The walk lists the parents of the canonical path (and none when there is none).
        let Ok(canonical) = root.canonicalize() else { return above };
        for dir in canonical.ancestors().skip(1) {
            for name in [".gitignore", ".ignore"] {
                above.add(dir.join(name));
            }
            let git = dir.join(".git");
            let exclude = match std::fs::metadata(&git) {
                Ok(meta) if meta.is_file() => above.common_dir(git).map(|c| c.join("info/exclude")),
                Ok(_) => Some(git.join("info/exclude")),
                Err(_) => {
                    above.add(git);
                    None
                }
            };
            if let Some(exclude) = exclude {
                above.add(exclude);
            }
        }
        above
    }

    /// Reads `path` into the record and returns what it held.
    fn add(&mut self, path: PathBuf) -> Option<&[u8]> {
        let read = read(&path);
        self.read.push((path, read));
        match self.read.last() {
            Some((_, Read::Bytes(bytes))) => Some(bytes),
            _ => None,
        }
    }

    /// The common git folder a `.git` file names, read as the `ignore` crate reads it: its
    /// first line `gitdir: <folder>`, then that folder's `commondir` file, whose first line is
    /// the common folder (relative to the git folder when it starts with `.`). A relative
    /// `gitdir` is taken as the walk takes it, from the current folder.
    fn common_dir(&mut self, dot_git: PathBuf) -> Option<PathBuf> {
        let gitdir = first_line(self.add(dot_git)?)?.strip_prefix("gitdir: ")?;
        let gitdir = PathBuf::from(gitdir);
        let common = first_line(self.add(gitdir.join("commondir"))?)?.to_owned();
        Some(if common.starts_with('.') { gitdir.join(common) } else { PathBuf::from(common) })
    }
}

/// The first line of `bytes` as `BufRead::lines` gives it (without its `\n` or `\r\n`), if
/// there is one and it is UTF-8.
fn first_line(bytes: &[u8]) -> Option<&str> {
    if bytes.is_empty() {
        return None;
    }
    let line = bytes.split(|b| *b == b'\n').next()?;
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    std::str::from_utf8(line).ok()
}
