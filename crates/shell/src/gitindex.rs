//! Git's index, read for one thing: which files of the working tree hold exactly the blob the
//! index names, so a snapshot need not copy their bytes (git's object store keeps them). Git
//! itself trusts a file whose stat data (size, times, inode, mode) match its index entry
//! (`Documentation/gitformat-index.txt`; `git status` refreshes that data only after it
//! hashed the file to the entry's blob): so does this, more strictly (every field compared,
//! never an entry marked assume-unchanged, skip-worktree or intent-to-add, never a racily
//! clean one, whose file was changed in the same instant the index was written), and reads
//! the blob back only for the files a command changed, checking that its bytes hash to its id.
//!
//! Both are read with gitoxide (`gix`), opened isolated (the repository's own configuration
//! only: no environment, no global or system files, nothing run). Only a repository wholly
//! inside the workspace is a source: `.git` a folder of the workspace (not a `.git` file or a
//! symlink naming one elsewhere, as a linked worktree's or a submodule's does), no
//! `commondir`, its objects' folder inside the workspace and no alternates, its `HEAD`,
//! `config`, `index`, packs and loose objects regular files (never a symlink, which could name
//! a file outside, nor a FIFO, whose reading waits for ever); and only SHA-1 objects.
//! Anything else, or an index that does not parse, is no source at all (the snapshot then
//! copies), because nothing outside the workspace is ever read and no run waits for ever.

use std::{collections::HashMap, os::unix::fs::MetadataExt, path::Path};

use gix::index::entry::{Flags, Mode};

/// One index entry, as much of it as a stat comparison needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexEntry {
    ctime: (u32, u32),
    mtime: (u32, u32),
    ino: u32,
    executable: bool,
    size: u32,
    oid: gix::ObjectId,
}

/// The index of the repository whose working tree is a workspace's root.
#[derive(Debug, Default)]
pub(crate) struct GitIndex {
    entries: HashMap<String, IndexEntry>,
    /// When the index file was last written (seconds, nanoseconds): an entry whose file was
    /// changed then or later is racily clean, and not trusted.
    written: (i64, i64),
}

/// Whether `path` is a regular file itself (`Some(true)`), missing (`Some(false)`), or
/// anything else (`None`: a symlink, a FIFO, a device, a folder): gitoxide opens the files it
/// reads by name, following a symlink and waiting on a FIFO.
fn regular_or_missing(path: &Path) -> Option<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => meta.is_file().then_some(true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Some(false),
        Err(_) => None,
    }
}

/// Whether every file the repository's `.git` folder `dot` is opened with is a regular file
/// (or missing, where git allows it), and its pack folder holds only regular files.
fn plain_files(dot: &Path) -> Option<()> {
    regular_or_missing(&dot.join("HEAD")).filter(|there| *there)?;
    for name in ["config", "index", "packed-refs", "shallow"] {
        regular_or_missing(&dot.join(name))?;
    }
    let packs = dot.join("objects/pack");
    match std::fs::symlink_metadata(&packs) {
        Ok(meta) if meta.is_dir() => {
            for entry in std::fs::read_dir(&packs).ok()? {
                entry.ok()?.file_type().ok()?.is_file().then_some(())?;
            }
        }
        Ok(_) => return None,
        Err(_) => {}
    }
    Some(())
}

/// Whether the loose object `oid` of the repository at `root` is a regular file or missing
/// (then read from a pack), in a real fan-out folder.
fn plain_loose(root: &Path, hex: &str) -> bool {
    let (Some(fan), Some(rest)) = (hex.get(..2), hex.get(2..)) else { return false };
    let folder = root.join(".git/objects").join(fan);
    match std::fs::symlink_metadata(&folder) {
        Ok(meta) if meta.is_dir() => regular_or_missing(&folder.join(rest)).is_some(),
        Ok(_) => false,
        Err(_) => true,
    }
}

/// The repository whose working tree is `root`, when it lies wholly inside `root` (see the
/// module's docs), its files are plain files, and its objects are SHA-1.
fn open(root: &Path) -> Option<gix::Repository> {
    let dot = root.join(".git");
    if !std::fs::symlink_metadata(&dot).ok()?.is_dir() || dot.join("commondir").exists() {
        return None;
    }
    plain_files(&dot)?;
    let top = root.canonicalize().ok()?;
    let objects = dot.join("objects");
    if !objects.canonicalize().ok()?.starts_with(&top)
        || std::fs::symlink_metadata(objects.join("info/alternates")).is_ok()
    {
        return None;
    }
    let repo = gix::open_opts(&dot, gix::open::Options::isolated()).ok()?;
    let inside = |p: &Path| p.canonicalize().is_ok_and(|p| p.starts_with(&top));
    (repo.object_hash() == gix::hash::Kind::Sha1
        && inside(repo.git_dir())
        && inside(repo.common_dir())
        && repo.workdir().is_some_and(|w| w.canonicalize().is_ok_and(|w| w == top)))
    .then_some(repo)
}

impl GitIndex {
    /// The index of the repository at `root` (its working tree's top), when there is one that
    /// this reads; an empty one otherwise.
    pub(crate) fn read(root: &Path) -> GitIndex {
        let Some(repo) = open(root) else { return GitIndex::default() };
        let Ok(index) = repo.open_index() else { return GitIndex::default() };
        let untrusted = Flags::ASSUME_VALID | Flags::SKIP_WORKTREE | Flags::INTENT_TO_ADD;
        let mut entries = HashMap::new();
        for entry in index.entries() {
            if entry.stage_raw() != 0
                || entry.flags.intersects(untrusted)
                || !matches!(entry.mode, Mode::FILE | Mode::FILE_EXECUTABLE)
            {
                continue;
            }
            let Ok(path) = std::str::from_utf8(entry.path(&index)) else { continue };
            let stat = &entry.stat;
            entries.insert(
                path.to_owned(),
                IndexEntry {
                    ctime: (stat.ctime.secs, stat.ctime.nsecs),
                    mtime: (stat.mtime.secs, stat.mtime.nsecs),
                    ino: stat.ino,
                    executable: entry.mode == Mode::FILE_EXECUTABLE,
                    size: stat.size,
                    oid: entry.id,
                },
            );
        }
        let stamp = index.timestamp();
        GitIndex { entries, written: (stamp.unix_seconds(), i64::from(stamp.nanoseconds())) }
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
            && entry.executable == (meta.mode() & 0o100 != 0)
            && meta.is_file();
        let racy = (meta.mtime(), meta.mtime_nsec()) >= self.written;
        (same && !racy).then(|| entry.oid.to_hex().to_string())
    }
}

/// The blobs `oids` (hex) of the repository at `root`, each checked to hash to its id; those
/// it could not read (or that are not blobs, or whose bytes do not match) are missing from
/// the answer.
pub(crate) fn blobs(root: &Path, oids: &[String]) -> HashMap<String, Vec<u8>> {
    let mut res = HashMap::new();
    if oids.is_empty() {
        return res;
    }
    let Some(repo) = open(root) else { return res };
    for hex in oids {
        let Ok(id) = gix::ObjectId::from_hex(hex.as_bytes()) else { continue };
        if !plain_loose(root, hex) {
            continue;
        }
        let Ok(object) = repo.find_object(id) else { continue };
        if object.kind != gix::object::Kind::Blob {
            continue;
        }
        let hashed =
            gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::object::Kind::Blob, &object.data);
        if hashed.is_ok_and(|h| h == id) {
            res.insert(hex.clone(), object.detach().data);
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use std::process::Command;

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

    #[test]
    fn a_repository_reaching_outside_the_workspace_is_no_source() {
        let outside = tempfile::tempdir().unwrap();
        let main = outside.path().join("main");
        std::fs::create_dir(&main).unwrap();
        git(&main, &["init", "-q"]);
        std::fs::write(main.join("a.txt"), "a\n").unwrap();
        git(&main, &["add", "-A"]);
        git(&main, &["commit", "-qm", "a"]);
        // A linked worktree: its `.git` is a file naming a folder outside it.
        git(&main, &["worktree", "add", "-q", "../linked"]);
        let linked = outside.path().join("linked");
        std::thread::sleep(std::time::Duration::from_millis(20));
        git(&linked, &["update-index", "--really-refresh"]);
        let meta = std::fs::symlink_metadata(linked.join("a.txt")).unwrap();
        assert_eq!(GitIndex::read(&linked).clean_blob("a.txt", &meta), None);
        // Alternates naming another store.
        std::thread::sleep(std::time::Duration::from_millis(20));
        git(&main, &["update-index", "--really-refresh"]);
        let meta = std::fs::symlink_metadata(main.join("a.txt")).unwrap();
        let oid = GitIndex::read(&main).clean_blob("a.txt", &meta).unwrap();
        assert_eq!(blobs(&main, std::slice::from_ref(&oid))[&oid], b"a\n");
        std::fs::write(main.join(".git/objects/info/alternates"), "/elsewhere/objects\n").unwrap();
        assert_eq!(GitIndex::read(&main).clean_blob("a.txt", &meta), None);
        assert!(blobs(&main, &[oid]).is_empty());
    }

    #[test]
    fn an_index_or_object_that_is_a_symlink_or_a_fifo_is_no_source() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        git(root, &["add", "-A"]);
        std::thread::sleep(std::time::Duration::from_millis(20));
        git(root, &["update-index", "--really-refresh"]);
        let meta = std::fs::symlink_metadata(root.join("a.txt")).unwrap();
        let oid = GitIndex::read(root).clean_blob("a.txt", &meta).unwrap();
        // The index moved outside the workspace, a symlink naming it.
        let outside = tempfile::tempdir().unwrap();
        std::fs::rename(root.join(".git/index"), outside.path().join("index")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("index"), root.join(".git/index")).unwrap();
        assert_eq!(GitIndex::read(root).clean_blob("a.txt", &meta), None);
        std::fs::remove_file(root.join(".git/index")).unwrap();
        std::fs::rename(outside.path().join("index"), root.join(".git/index")).unwrap();
        // The loose object moved outside, a symlink naming it; then a FIFO in its place.
        let loose = root.join(".git/objects").join(&oid[..2]).join(&oid[2..]);
        std::fs::rename(&loose, outside.path().join("object")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("object"), &loose).unwrap();
        assert!(blobs(root, std::slice::from_ref(&oid)).is_empty());
        std::fs::remove_file(&loose).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &loose,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(blobs(root, std::slice::from_ref(&oid)).is_empty());
        // A FIFO for `HEAD`: no source, at once.
        std::fs::remove_file(&loose).unwrap();
        std::fs::rename(outside.path().join("object"), &loose).unwrap();
        assert_eq!(blobs(root, std::slice::from_ref(&oid))[&oid], b"a\n");
        std::fs::remove_file(root.join(".git/HEAD")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join(".git/HEAD"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert_eq!(GitIndex::read(root).clean_blob("a.txt", &meta), None);
    }
}
