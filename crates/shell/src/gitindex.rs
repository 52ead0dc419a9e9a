//! Git's index, read for one thing: which files of the working tree hold exactly the blob the
//! index names, so a snapshot need not copy their bytes (git's object store keeps them). Git
//! itself trusts a file whose stat data (size, times, inode, mode) match its index entry
//! (`Documentation/gitformat-index.txt`; `git status` refreshes that data only after it
//! hashed the file to the entry's blob): so does this, more strictly (every field compared,
//! never an entry marked assume-unchanged, skip-worktree or intent-to-add, never a racily
//! clean one, whose file was changed in the same instant the index was written), and reads
//! the blob back with `git cat-file` only for the files a command changed.
//!
//! Formats 2, 3 and 4 of the index are read; a repository whose objects are SHA-256, or an
//! index that does not parse, is no source at all (the snapshot then copies).

use std::{
    collections::HashMap,
    io::{BufRead, Read, Write},
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

/// One index entry, as much of it as a stat comparison needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexEntry {
    ctime: (u32, u32),
    mtime: (u32, u32),
    ino: u32,
    mode: u32,
    size: u32,
    oid: [u8; 20],
}

/// The index of the repository whose working tree is a workspace's root.
#[derive(Debug, Default)]
pub(crate) struct GitIndex {
    entries: HashMap<String, IndexEntry>,
    /// When the index file was last written (seconds, nanoseconds): an entry whose file was
    /// changed then or later is racily clean, and not trusted.
    written: (i64, i64),
}

/// The repository's own folder for the working tree at `root`: `root/.git`, or the folder a
/// `.git` file names (a linked worktree, a submodule).
fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot = root.join(".git");
    let meta = std::fs::symlink_metadata(&dot).ok()?;
    if meta.is_dir() {
        return Some(dot);
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let named = text.strip_prefix("gitdir:")?.trim();
    Some(root.join(named))
}

/// Whether the repository's objects are SHA-1 (the only ones this reads).
fn sha1_objects(git_dir: &Path) -> bool {
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .map_or_else(|_| git_dir.to_path_buf(), |c| git_dir.join(c.trim()));
    let config = std::fs::read_to_string(common.join("config")).unwrap_or_default();
    !config.to_ascii_lowercase().contains("sha256")
}

impl GitIndex {
    /// The index of the repository at `root` (its working tree's top), when there is one that
    /// this reads; an empty one otherwise.
    pub(crate) fn read(root: &Path) -> GitIndex {
        let Some(dir) = git_dir(root) else { return GitIndex::default() };
        if !sha1_objects(&dir) {
            return GitIndex::default();
        }
        let path = dir.join("index");
        let (Ok(meta), Ok(bytes)) = (std::fs::metadata(&path), std::fs::read(&path)) else {
            return GitIndex::default();
        };
        match parse(&bytes) {
            Some(entries) => GitIndex { entries, written: (meta.mtime(), meta.mtime_nsec()) },
            None => GitIndex::default(),
        }
    }

    /// The blob (hex) the index names for `path`, when the file whose stat data is `meta`
    /// holds exactly it.
    pub(crate) fn clean_blob(&self, path: &str, meta: &std::fs::Metadata) -> Option<String> {
        let entry = self.entries.get(path)?;
        // Git keeps the low 32 bits of each field.
        let low = |v: i64| v as u32;
        let same = entry.size == meta.size() as u32
            && entry.mtime == (low(meta.mtime()), low(meta.mtime_nsec()))
            && entry.ctime == (low(meta.ctime()), low(meta.ctime_nsec()))
            && entry.ino == meta.ino() as u32
            && (entry.mode == 0o100_755) == (meta.mode() & 0o100 != 0)
            && meta.is_file();
        let racy = (meta.mtime(), meta.mtime_nsec()) >= self.written;
        (same && !racy).then(|| entry.oid.iter().map(|b| format!("{b:02x}")).collect())
    }
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// Format 4's prefix length: git's offset varint.
fn varint(bytes: &[u8], at: &mut usize) -> Option<usize> {
    let mut byte = *bytes.get(*at)?;
    *at += 1;
    let mut value = usize::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *bytes.get(*at)?;
        *at += 1;
        value = value.checked_add(1)?.checked_shl(7)? | usize::from(byte & 0x7f);
    }
    Some(value)
}

/// The index's entries of stage 0 that a stat comparison may trust, by path; `None` when the
/// bytes are not an index of format 2, 3 or 4.
fn parse(bytes: &[u8]) -> Option<HashMap<String, IndexEntry>> {
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(bytes, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(bytes, 8)? as usize;
    let mut entries = HashMap::with_capacity(count);
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let field = |i: usize| be32(bytes, start + 4 * i);
        let mut oid = [0u8; 20];
        oid.copy_from_slice(bytes.get(start + 40..start + 60)?);
        let flags = u16::from_be_bytes(bytes.get(start + 60..start + 62)?.try_into().ok()?);
        at = start + 62;
        let mut extended = 0u16;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            extended = u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?);
            at += 2;
        }
        let name = if version == 4 {
            let strip = varint(bytes, &mut at)?;
            let end = at + bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut name = previous.get(..keep)?.to_vec();
            name.extend_from_slice(bytes.get(at..end)?);
            at = end + 1;
            name
        } else {
            let end = at + bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let name = bytes.get(at..end)?.to_vec();
            // Padded with 1 to 8 NULs to a multiple of 8 bytes from the entry's start.
            at = start + (end - start + 8) / 8 * 8;
            name
        };
        let stage = (flags >> 12) & 0x3;
        let assume_valid = flags & 0x8000 != 0;
        let skip_or_intent = extended & 0x6000 != 0;
        let entry = IndexEntry {
            ctime: (field(0)?, field(1)?),
            mtime: (field(2)?, field(3)?),
            ino: field(5)?,
            mode: field(6)?,
            size: field(9)?,
            oid,
        };
        let regular = matches!(entry.mode, 0o100_644 | 0o100_755);
        if stage == 0
            && !assume_valid
            && !skip_or_intent
            && regular
            && let Ok(path) = std::str::from_utf8(&name)
        {
            entries.insert(path.to_owned(), entry);
        }
        previous = name;
    }
    Some(entries)
}

/// The blobs `oids` (hex) of the repository at `root`, read by one `git cat-file --batch`;
/// those it could not read are missing from the answer.
pub(crate) fn blobs(root: &Path, oids: &[String]) -> HashMap<String, Vec<u8>> {
    let mut res = HashMap::new();
    if oids.is_empty() {
        return res;
    }
    let child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else { return res };
    let input: String = oids.iter().map(|oid| format!("{oid}\n")).collect();
    let writer = child.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        })
    });
    if let Some(stdout) = child.stdout.take() {
        let mut out = std::io::BufReader::new(stdout);
        for oid in oids {
            let mut header = String::new();
            if out.read_line(&mut header).unwrap_or(0) == 0 {
                break;
            }
            let words: Vec<&str> = header.split_whitespace().collect();
            let [name, "blob", size] = words.as_slice() else { continue };
            let Ok(size) = size.parse::<usize>() else { break };
            let mut bytes = vec![0u8; size];
            if out.read_exact(&mut bytes).is_err() {
                break;
            }
            let mut newline = [0u8; 1];
            let _ = out.read_exact(&mut newline);
            if name == oid {
                res.insert(oid.clone(), bytes);
            }
        }
    }
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    let _ = child.wait();
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    fn a_clean_tracked_file_is_its_blob_and_a_changed_or_racy_one_is_not() {
        for version in ["2", "3", "4"] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            git(root, &["init", "-q"]);
            std::fs::create_dir_all(root.join("src/deep")).unwrap();
            std::fs::write(root.join("src/deep/a.txt"), "a\n").unwrap();
            std::fs::write(root.join("src/b.txt"), "b\n").unwrap();
            std::fs::write(root.join("changed.txt"), "old\n").unwrap();
            git(root, &["add", "-A"]);
            git(root, &["update-index", "--index-version", version]);
            // The index written well after the files: none is racily clean.
            std::thread::sleep(std::time::Duration::from_millis(20));
            git(root, &["update-index", "--really-refresh"]);
            std::fs::write(root.join("changed.txt"), "new!\n").unwrap();
            let index = GitIndex::read(root);
            let meta = |p: &str| std::fs::symlink_metadata(root.join(p)).unwrap();
            let oid = index.clean_blob("src/deep/a.txt", &meta("src/deep/a.txt")).unwrap();
            assert!(index.clean_blob("src/b.txt", &meta("src/b.txt")).is_some(), "{version}");
            assert_eq!(index.clean_blob("changed.txt", &meta("changed.txt")), None);
            let blobs = blobs(root, std::slice::from_ref(&oid));
            assert_eq!(blobs[&oid], b"a\n");
            // A file changed in the same instant the index was written is not trusted.
            let mut racy = index;
            racy.written = (0, 0);
            assert_eq!(racy.clean_blob("src/b.txt", &meta("src/b.txt")), None);
        }
    }
}
