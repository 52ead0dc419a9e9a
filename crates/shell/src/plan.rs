//! What a command's writes are to the workspace: each path of the upper layer
//! ([`crate::upper::written`]) against the real tree as it is.
//!
//! - A text file (UTF-8, no NUL byte, at most `MAX_TEXT_BYTES` (64 MiB) before and after) created,
//!   changed (its text or its executable bit) or deleted is a [`FileOp`] of the journal, so it
//!   is written all or nothing, diffed, hashed and undone like any edit.
//! - Any other file the command wrote (binary, a symlink, over the cap, a FIFO, a name that is
//!   not UTF-8) is an [`Other`]: named, never left out silently.
//! - A path `.gitignore` (the workspace's, those of its folders, and `.git/info/exclude`)
//!   ignores, and anything the command made at `.git` or `.staged`, is [`Plan::ignored`]:
//!   never recorded, never staged.
//! - A folder the command made where nothing was, and a folder it deleted, is a
//!   [`FolderChange`] of the journal ([`Plan::folders`]): recorded, shown, staged and undone
//!   with the text changes, all or nothing (`docs/contract/shell.md`, "Folders"). Every new or
//!   deleted folder is also in [`Plan::dirs`], for what is moved in as the command left it.

use std::{
    collections::HashMap,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use staged_journal::{
    ChangeKind, ChangedFile, Edit, FileOp, FolderChange, FolderOp, STATE_DIR_NAME, fingerprint,
};

use crate::upper::{After, Written};

/// The largest file, before or after, whose change is kept as text (diff and undo data); a
/// larger one is an [`Other`], its bytes before kept whole by a hard link.
pub(crate) const MAX_TEXT_BYTES: u64 = 64 << 20;

/// A file the command wrote that is not a text change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Other {
    /// What it is and why it is not in the diff: `binary`, `a symlink`, ...
    pub why: String,
    /// What the command made of it.
    pub written: Written,
    /// Whether the real tree holds something at the path now.
    pub existed: bool,
}

/// A command's writes, sorted.
#[derive(Debug, Default)]
pub struct Plan {
    /// The text changes.
    pub ops: Vec<FileOp>,
    /// Each op's file, as a preview lists it.
    pub files: Vec<ChangedFile>,
    /// The other files.
    pub others: Vec<Other>,
    /// Ignored paths (and `.git`, `.staged`): never recorded or staged.
    pub ignored: Vec<Written>,
    /// New folders the command made, and folders it deleted (each after what it held).
    pub dirs: Vec<Written>,
    /// Those of `dirs` that are changes of their own, for the journal: each folder made where
    /// nothing was, each folder deleted (a folder's files and folders before it).
    pub folders: Vec<FolderChange>,
}

impl Plan {
    /// Whether the command changed nothing in the workspace.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
            && self.others.is_empty()
            && self.ignored.is_empty()
            && self.dirs.is_empty()
    }

    /// Every path the plan names, for a person (the ops', the others' and the folders', these
    /// with a `/` after them).
    pub fn paths(&self) -> Vec<String> {
        let mut res: Vec<String> = self.ops.iter().map(|op| op.path().to_owned()).collect();
        res.extend(self.others.iter().map(|o| o.written.path.clone()));
        res.extend(self.folders.iter().map(|f| format!("{}/", f.path)));
        res
    }
}

/// Sorts `written` (read from an upper layer over `root`).
///
/// # Errors
/// When a file of the real tree or the upper layer cannot be read.
pub fn plan(root: &Path, written: Vec<Written>) -> Result<Plan, String> {
    let mut ignores = Ignores::new(root);
    let tree = staged_fs::Root::open(root).map_err(|e| read_error(root, &e))?;
    let mut res = Plan::default();
    for w in written {
        let first = w.path.split('/').next().unwrap_or_default();
        // A deleted path is a folder when the real tree holds one there.
        let is_dir = match w.after {
            After::Dir => true,
            After::Absent => root.join(&w.path).is_dir(),
            _ => false,
        };
        if first == STATE_DIR_NAME || first == ".git" || ignores.ignored(&w.path, is_dir) {
            res.ignored.push(w);
            continue;
        }
        let real = root.join(&w.path);
        // The tree as the journal sees it: through real folders only. Where a folder on the
        // way is a symlink (or a file, or missing), nothing is there, and nothing it leads
        // to, inside or outside the workspace, is read.
        let parent = staged_fs::RelPath::new(&w.path)
            .ok()
            .and_then(|rel| Some((tree.dir(rel.parent().as_ref()).ok()?, rel)));
        let before = parent.as_ref().and_then(|_| std::fs::symlink_metadata(&real).ok());
        let before_text = match (&before, &parent) {
            (Some(meta), Some((dir, rel))) if meta.is_file() => {
                tree_text(dir, rel, meta.len()).map_err(|e| read_error(&real, &e))?
            }
            _ => None,
        };
        let other = |why: &str, w: Written| Other {
            why: why.to_owned(),
            written: w,
            existed: before.is_some(),
        };
        match &w.after {
            After::Dir => {
                if let Some((text, _)) = &before_text {
                    res.push_delete(&w.path, text);
                } else if before.as_ref().is_some_and(|m| !m.is_dir()) {
                    res.others.push(other("replaced by a folder", w.clone()));
                }
                // A folder where a file was is made once the file is gone (moved in), not by
                // the journal, which makes folders before it deletes files.
                if before.is_none() && w.utf8 {
                    res.folders.push(FolderChange { path: w.path.clone(), op: FolderOp::Made });
                }
                res.dirs.push(w);
            }
            After::Absent => match (&before, &before_text) {
                (Some(meta), _) if meta.is_dir() => {
                    if w.utf8 {
                        let path = w.path.clone();
                        res.folders.push(FolderChange { path, op: FolderOp::Removed });
                    }
                    res.dirs.push(w);
                }
                (Some(_), Some((text, _))) => res.push_delete(&w.path, text),
                (Some(meta), None) => {
                    let why = kind_of(meta, "deleted");
                    res.others.push(other(&why, w));
                }
                (None, _) => {}
            },
            After::File { mode } => {
                let mode = *mode;
                let size = std::fs::symlink_metadata(&w.upper)
                    .map_err(|e| read_error(&w.upper, &e))?
                    .len();
                let after = if w.utf8 { text_of(&w.upper, size)? } else { None };
                let before_meta = before.as_ref();
                match (before_meta, &before_text, after) {
                    (_, _, None) => {
                        let why = if !w.utf8 {
                            "a file whose name is not UTF-8".to_owned()
                        } else if size > MAX_TEXT_BYTES {
                            format!("over {} MiB", MAX_TEXT_BYTES >> 20)
                        } else {
                            "binary".to_owned()
                        };
                        res.others.push(other(&why, w));
                    }
                    (None, _, Some((text, _))) => res.push_create(&w.path, text, mode),
                    (Some(meta), Some((old, fp)), Some((text, _))) => {
                        let was_x = meta.mode() & 0o111 != 0;
                        let is_x = mode & 0o111 != 0;
                        let edits = staged_edit::line_edits(old, &text);
                        if edits.is_empty() && was_x == is_x {
                            continue;
                        }
                        res.push_update(
                            &w.path,
                            fp.clone(),
                            edits,
                            (was_x != is_x).then_some(is_x),
                        );
                    }
                    (Some(meta), None, Some(_)) => {
                        let why = kind_of(meta, "replaced by a text file");
                        res.others.push(other(&why, w));
                    }
                }
            }
            After::Symlink(_) => res.others.push(other("a symlink", w)),
            After::Special => res.others.push(other("a FIFO, socket or device", w)),
        }
    }
    Ok(res)
}

fn kind_of(meta: &std::fs::Metadata, what: &str) -> String {
    let kind = if meta.file_type().is_symlink() {
        "a symlink"
    } else if meta.len() > MAX_TEXT_BYTES {
        "a file over the text cap"
    } else {
        "a binary file"
    };
    format!("{kind}, {what}")
}

fn read_error(path: &Path, err: &std::io::Error) -> String {
    format!("{} cannot be read: {err}", path.display())
}

/// The text of the file at `path` (`len` bytes) and its fingerprint, when it is text within
/// the cap. The file is opened without following a symlink or waiting on a FIFO, and must
/// still be a regular file (an upper layer can change under a command that outlives its call).
fn text_of(path: &Path, len: u64) -> Result<Option<(String, String)>, String> {
    use rustix::fs::{Mode, OFlags};
    if len > MAX_TEXT_BYTES {
        return Ok(None);
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let read = || -> std::io::Result<Vec<u8>> {
        let mut file = std::fs::File::from(rustix::fs::open(path, flags, Mode::empty())?);
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::other("it is no longer a regular file"));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or_default());
        let mut capped = std::io::Read::take(&mut file, MAX_TEXT_BYTES + 1);
        std::io::Read::read_to_end(&mut capped, &mut bytes)?;
        Ok(bytes)
    };
    let bytes = read().map_err(|e| read_error(path, &e))?;
    if bytes.len() as u64 > MAX_TEXT_BYTES {
        return Ok(None);
    }
    Ok(text_of_bytes(bytes))
}

/// The text of the tree's regular file `rel` (opened in `dir`, its folder reached through real
/// folders only), when it is text within the cap.
fn tree_text(
    dir: &staged_fs::DirHandle,
    rel: &staged_fs::RelPath,
    len: u64,
) -> std::io::Result<Option<(String, String)>> {
    if len > MAX_TEXT_BYTES {
        return Ok(None);
    }
    Ok(text_of_bytes(dir.read_limited(rel.file_name(), MAX_TEXT_BYTES)?))
}

fn text_of_bytes(bytes: Vec<u8>) -> Option<(String, String)> {
    if bytes.contains(&0) {
        return None;
    }
    let fp = fingerprint(&bytes);
    String::from_utf8(bytes).ok().map(|text| (text, fp))
}

fn lines(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.matches('\n').count() + usize::from(!text.ends_with('\n'))
    }
}

impl Plan {
    fn push_delete(&mut self, path: &str, text: &str) {
        self.ops.push(FileOp::Delete {
            path: path.to_owned(),
            fingerprint: fingerprint(text.as_bytes()),
        });
        self.files.push(ChangedFile {
            path: path.to_owned(),
            from: None,
            change: ChangeKind::Deleted,
            summary: "deleted".to_owned(),
            lines_added: 0,
            lines_removed: lines(text),
        });
    }

    fn push_create(&mut self, path: &str, text: String, mode: u32) {
        let n = lines(&text);
        self.ops.push(FileOp::Create {
            path: path.to_owned(),
            content: text,
            executable: mode & 0o111 != 0,
        });
        self.files.push(ChangedFile {
            path: path.to_owned(),
            from: None,
            change: ChangeKind::Added,
            summary: format!("new file, {n} lines"),
            lines_added: n,
            lines_removed: 0,
        });
    }

    fn push_update(&mut self, path: &str, fp: String, edits: Vec<Edit>, executable: Option<bool>) {
        let (added, removed) =
            edits.iter().fold((0, 0), |(a, r), e| (a + lines(&e.after), r + lines(&e.before)));
        self.ops.push(FileOp::Update { path: path.to_owned(), fingerprint: fp, edits, executable });
        self.files.push(ChangedFile {
            path: path.to_owned(),
            from: None,
            change: ChangeKind::Updated,
            summary: format!("+{added} -{removed}"),
            lines_added: added,
            lines_removed: removed,
        });
    }
}

/// `.gitignore` files as git reads them: the deepest folder's first, a folder that is ignored
/// ignoring all below it; the root's with `.git/info/exclude`.
struct Ignores {
    root: PathBuf,
    cache: HashMap<String, Option<Gitignore>>,
}

impl Ignores {
    fn new(root: &Path) -> Ignores {
        Ignores { root: root.to_path_buf(), cache: HashMap::new() }
    }

    fn ignored(&mut self, rel: &str, is_dir: bool) -> bool {
        let parts: Vec<&str> = rel.split('/').collect();
        (1..=parts.len()).any(|i| {
            let sub = parts.get(..i).unwrap_or_default().join("/");
            self.matches(&sub, i < parts.len() || is_dir)
        })
    }

    fn matches(&mut self, sub: &str, is_dir: bool) -> bool {
        let mut dir = sub;
        loop {
            dir = dir.rsplit_once('/').map_or("", |(d, _)| d);
            let path = self.root.join(sub);
            if let Some(gi) = self.get(dir) {
                let m = gi.matched(path, is_dir);
                if m.is_ignore() {
                    return true;
                }
                if m.is_whitelist() {
                    return false;
                }
            }
            if dir.is_empty() {
                return false;
            }
        }
    }

    fn get(&mut self, dir: &str) -> Option<&Gitignore> {
        if !self.cache.contains_key(dir) {
            let base = self.root.join(dir);
            let mut builder = GitignoreBuilder::new(&base);
            let mut any = false;
            let file = base.join(".gitignore");
            // Never a symlink (git does not follow one in the tree either), never a FIFO.
            let regular = |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
            if regular(&file) {
                any |= builder.add(&file).is_none();
            }
            if dir.is_empty() {
                let exclude = base.join(".git/info/exclude");
                if regular(&exclude) {
                    any |= builder.add(&exclude).is_none();
                }
            }
            let gi = if any { builder.build().ok() } else { None };
            self.cache.insert(dir.to_owned(), gi);
        }
        self.cache.get(dir).and_then(Option::as_ref)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upper::written;

    #[test]
    fn text_changes_are_ops_binaries_are_named_and_ignored_files_are_kept_apart() {
        let dir = tempfile::tempdir().unwrap();
        let (root, upper) = (dir.path().join("root"), dir.path().join("upper"));
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(root.join("src/a.txt"), "one\ntwo\n").unwrap();
        std::fs::create_dir_all(upper.join("src")).unwrap();
        std::fs::create_dir_all(upper.join("target/debug")).unwrap();
        std::fs::write(upper.join("src/a.txt"), "one\n2\n").unwrap();
        std::fs::write(upper.join("src/new.txt"), "new\n").unwrap();
        std::fs::write(upper.join("src/blob.bin"), b"\0\x01").unwrap();
        std::fs::write(upper.join("target/debug/x"), "x").unwrap();
        std::fs::write(upper.join("run.log"), "log").unwrap();
        let plan = plan(&root, written(&root, &upper).unwrap()).unwrap();
        let paths: Vec<&str> = plan.ops.iter().map(FileOp::path).collect();
        assert_eq!(paths, ["src/a.txt", "src/new.txt"]);
        assert_eq!(plan.others.len(), 1);
        assert_eq!(
            (plan.others[0].written.path.as_str(), plan.others[0].why.as_str()),
            ("src/blob.bin", "binary")
        );
        let ignored: Vec<&str> = plan.ignored.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(ignored, ["run.log", "target", "target/debug", "target/debug/x"]);
        assert_eq!(plan.files[0].summary, "+1 -1");
    }
}
