//! What an overlay's upper layer holds, read back as paths of the workspace and what each is
//! after the command: a file (its mode), a symlink, a new folder, or nothing (deleted).
//!
//! The overlay's own marks are read as the kernel writes them with `userxattr` (Linux
//! `Documentation/filesystems/overlayfs.rst`): a *whiteout* (a character device 0:0, or a file
//! with the `user.overlay.whiteout` attribute) is a deleted path, and everything the lower
//! layer holds under it is deleted too; an *opaque* folder (`user.overlay.opaque` = `y`)
//! replaces the lower folder of its name, so every lower entry under it that the upper one
//! does not hold is deleted. A folder the lower layer has and that is not opaque is only a
//! copy-up on the way to what changed below it; a folder the lower layer lacks is new.

use std::{
    io,
    os::unix::fs::{FileTypeExt, MetadataExt},
    path::{Path, PathBuf},
};

/// What a path is after the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum After {
    /// A regular file, with these permission bits, at [`Written::upper`].
    File {
        /// Its mode bits (`0o777` and below).
        mode: u32,
    },
    /// A symlink to this target.
    Symlink(PathBuf),
    /// A folder the lower layer does not have at this path.
    Dir,
    /// Nothing: the command deleted it.
    Absent,
    /// A FIFO, socket or device the command made.
    Special,
}

/// One path the command wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Relative to the root, `/`-separated (lossy when a name is not UTF-8: see `utf8`).
    pub path: String,
    /// Whether every name of the path is UTF-8.
    pub utf8: bool,
    /// What it is now.
    pub after: After,
    /// Where it is in the upper layer (for [`After::File`], [`After::Dir`]).
    pub upper: PathBuf,
}

/// Every path the command wrote, parents before their children (a deleted folder's files
/// before the folder).
///
/// # Errors
/// When the upper or lower layer cannot be read.
pub fn written(root: &Path, upper: &Path) -> io::Result<Vec<Written>> {
    let mut res = Vec::new();
    walk(root, upper, Path::new(""), &mut res)?;
    Ok(res)
}

fn rel_of(rel: &Path) -> (String, bool) {
    let utf8 = rel.to_str().is_some();
    (rel.to_string_lossy().into_owned(), utf8)
}

fn push(res: &mut Vec<Written>, rel: &Path, after: After, upper: PathBuf) {
    let (path, utf8) = rel_of(rel);
    res.push(Written { path, utf8, after, upper });
}

fn walk(root: &Path, upper: &Path, rel: &Path, res: &mut Vec<Written>) -> io::Result<()> {
    let dir = upper.join(rel);
    let mut names: Vec<_> = std::fs::read_dir(&dir)?.collect::<Result<Vec<_>, _>>()?;
    names.sort_by_key(std::fs::DirEntry::file_name);
    for entry in names {
        let rel = rel.join(entry.file_name());
        let here = upper.join(&rel);
        let meta = std::fs::symlink_metadata(&here)?;
        let lower = std::fs::symlink_metadata(root.join(&rel)).ok();
        let lower_is_dir = lower.as_ref().is_some_and(std::fs::Metadata::is_dir);
        let kind = meta.file_type();
        if is_whiteout(&here, &meta) {
            if lower_is_dir {
                deleted_below(root, &rel, None, res)?;
            }
            if lower.is_some() {
                push(res, &rel, After::Absent, here);
            }
        } else if kind.is_dir() {
            if !lower_is_dir {
                push(res, &rel, After::Dir, here);
            } else if is_opaque(&here) {
                deleted_below(root, &rel, Some(upper), res)?;
            }
            walk(root, upper, &rel, res)?;
        } else if kind.is_symlink() {
            if lower_is_dir {
                deleted_below(root, &rel, None, res)?;
            }
            let target = std::fs::read_link(&here)?;
            push(res, &rel, After::Symlink(target), here);
        } else if kind.is_file() {
            if lower_is_dir {
                deleted_below(root, &rel, None, res)?;
            }
            push(res, &rel, After::File { mode: meta.mode() & 0o7777 }, here);
        } else {
            push(res, &rel, After::Special, here);
        }
    }
    Ok(())
}

/// Everything the lower layer holds under `rel` (files first, then their folder), as
/// deleted; with `keep`, only what the upper layer (`keep`) does not hold.
fn deleted_below(
    root: &Path,
    rel: &Path,
    keep: Option<&Path>,
    res: &mut Vec<Written>,
) -> io::Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(root.join(rel))?.collect::<Result<Vec<_>, _>>()?;
    names.sort_by_key(std::fs::DirEntry::file_name);
    for entry in names {
        let child = rel.join(entry.file_name());
        let in_upper =
            keep.is_some_and(|upper| std::fs::symlink_metadata(upper.join(&child)).is_ok());
        if in_upper {
            continue;
        }
        let meta = std::fs::symlink_metadata(root.join(&child))?;
        if meta.is_dir() {
            deleted_below(root, &child, None, res)?;
        }
        push(res, &child, After::Absent, PathBuf::new());
    }
    Ok(())
}

fn is_whiteout(path: &Path, meta: &std::fs::Metadata) -> bool {
    if meta.file_type().is_char_device() && meta.rdev() == 0 {
        return true;
    }
    meta.is_file() && meta.len() == 0 && xattr(path, "user.overlay.whiteout").is_some()
}

fn is_opaque(path: &Path) -> bool {
    xattr(path, "user.overlay.opaque").is_some_and(|v| v == b"y")
}

fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let mut buf = [0u8; 64];
    let n = rustix::fs::lgetxattr(path, name, &mut buf).ok()?;
    Some(buf.get(..n)?.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_links_folders_and_whiteouts_are_read_as_the_paths_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let (root, upper) = (dir.path().join("root"), dir.path().join("upper"));
        std::fs::create_dir_all(root.join("gone/deep")).unwrap();
        std::fs::write(root.join("gone/deep/a"), "a").unwrap();
        std::fs::write(root.join("gone/b"), "b").unwrap();
        std::fs::create_dir_all(root.join("kept")).unwrap();
        std::fs::write(root.join("kept/x"), "x").unwrap();
        std::fs::create_dir_all(upper.join("kept")).unwrap();
        std::fs::write(upper.join("kept/x"), "y").unwrap();
        std::fs::create_dir_all(upper.join("new/empty")).unwrap();
        std::os::unix::fs::symlink("kept/x", upper.join("link")).unwrap();
        // A whiteout made as the kernel makes it needs privilege; a file with the attribute
        // is the other form the kernel reads.
        std::fs::write(upper.join("gone"), "").unwrap();
        let marked = rustix::fs::lsetxattr(
            upper.join("gone"),
            "user.overlay.whiteout",
            b"",
            rustix::fs::XattrFlags::empty(),
        );
        if marked.is_err() {
            // A filesystem without user attributes: the rest is still read.
            std::fs::remove_file(upper.join("gone")).unwrap();
        }
        let found = written(&root, &upper).unwrap();
        let paths: Vec<(&str, &After)> =
            found.iter().map(|w| (w.path.as_str(), &w.after)).collect();
        let mut expected = vec![];
        if marked.is_ok() {
            expected.extend([
                ("gone/b", &After::Absent),
                ("gone/deep/a", &After::Absent),
                ("gone/deep", &After::Absent),
                ("gone", &After::Absent),
            ]);
        }
        let mode =
            After::File { mode: std::fs::metadata(upper.join("kept/x")).unwrap().mode() & 0o7777 };
        let link = After::Symlink(PathBuf::from("kept/x"));
        expected.extend([
            ("kept/x", &mode),
            ("link", &link),
            ("new", &After::Dir),
            ("new/empty", &After::Dir),
        ]);
        assert_eq!(paths, expected);
    }
}
