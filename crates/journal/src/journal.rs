//! All-or-nothing file changes, with a journal in `<root>/.staged/journal/` so that [`recover`]
//! can finish or roll back a commit that a crash (or kill -9) interrupted.
//!
//! A commit is a list of [`Step`]s: replace a file, create one (with the folders it needs), or
//! delete one; a move is a create and a delete in one commit. The protocol, for one step or
//! many:
//! 1. take the commit lock (shared), then the write lock (exclusive, so that no other staged
//!    commit writes between this one's check and its renames), and check every target is still
//!    what the preview read: a file with the fingerprint it read, or, for a file it creates,
//!    nothing at all;
//! 2. write the journal in state `preparing`, listing every target relative to the root and
//!    the folders it will create, and call the caller's prepare hook with the journal's id (the
//!    resolve log stores the record under it);
//! 3. create the missing folders, then write every temp file and make it durable, with its
//!    name: each one fsynced, or, for a commit of many temps on one local filesystem with
//!    little else waiting to be written, all of them with one `syncfs`
//!    ([`staged_fs::SyncBatch`], whose failure rolls back as a failed fsync does). A commit
//!    nobody observes writes them on other threads while its own calls the prepare hook: both
//!    only have to be done before the commit point, and a failure of either rolls back both.
//!    Each temp lies beside its target and is written
//!    with its permissions (those of the file it replaces, of a moved file's source, those of
//!    any new file or new executable, or the mode bits the step gives: a mode a diff sets, an
//!    undo's old mode);
//! 4. switch the journal to `committed` (an atomic rename), recording each temp file's
//!    identity: the commit point;
//! 5. rename each new file into place without replacing anything (`RENAME_NOREPLACE`: a file
//!    that appeared since the check is never overwritten; the commit is then undone, as if the
//!    commit point had not been reached), then each replacing temp over its target, then
//!    delete the files to delete (each only if it is still the file the check read);
//! 6. retire the pending preview (the caller's hook), so that it leaves the stack before the
//!    journal that proves it was written;
//! 7. delete the journal, and sync its folder, unless a roll forward of the journal would
//!    change nothing (every step a temp renamed into place, no folder pruned, emptied or made
//!    in a file's place): then a power loss that brings the journal back costs nothing but a
//!    no-op recovery, and the deletion reaches the disk with the next commit's first sync.
//!
//! **Files that become folders, and back.** A commit may delete a file and create files below
//! its path (`a` deleted, `a/b` created), or delete every file of a folder and create a file
//! at the folder's path (`a/b` deleted, `a` created). Such a create is *late*: its temp is
//! written before the commit point like any other, in the deepest folder that exists (the
//! folder holding the file that goes, for `a/b`), and after the deletes of step 5 the folders
//! the deletes emptied are removed (deepest first), the folders that take a deleted file's
//! place are made (parents first), and each late temp is renamed into place, none over
//! anything. The check requires a folder that becomes a file to hold only files the commit
//! deletes; the journal lists the late creates, the folders to remove and to make, so a
//! roll forward repeats those steps in that order, each skipped once it is done.
//!
//! Before the commit point no target has been touched, so recovery deletes the temps and the
//! folders the commit created (roll back, telling its hooks, so the prepared record is
//! forgotten). After it every new content is durable in a temp file or already in place, so
//! recovery renames the remaining temps, deletes what is left to delete, and retires the
//! preview, making its record final (roll forward). Either way every file ends wholly old or
//! wholly new, all files agree, and the stack and the log agree with them.
//!
//! **Freeing later.** A process that calls [`free_later`] (the shell wrapper, whose cleaning
//! child runs after it answered) frees no file's blocks on a commit's way: the prepared
//! journal the committed one replaces, the file each replacing temp takes the place of, and
//! the finished journal are linked or renamed to `<id>.freed-<n>` in the journal folder, which
//! is no journal and never read; [`delete_freed`] (that child) or recovery deletes them. On a
//! filesystem mounted `discard` each freed file waits for the disk as an `fsync` does.
//!
//! **Liveness.** Every commit holds a shared OS lock on `journal/commit.lock` from before its
//! fingerprint check until its journal is gone; recovery runs only under the exclusive lock,
//! so it never acts while any commit in any process is live. The lock file is never deleted,
//! so no process can ever hold a lock on a file that no longer guards anything. The OS drops a
//! dead process's lock, however it died.
//!
//! **Descriptors.** A commit holds no descriptor per file, so that a change of any number of
//! files works under the usual limit on open files (1,024 on Linux, 256 on macOS): it holds
//! one handle per folder for its first 96 folders (so those are written through the handle
//! whatever happens to their names), and keeps any other folder as its path and identity
//! (device and inode), opened again when needed, from the root without following a symlink,
//! and used only if it is still that folder; a folder swapped for another then stops the
//! commit, as any failed write does. Recovery opens folders the same way.
//!
//! **Distrust.** A journal is input like any other file in the workspace. Recovery re-confines
//! every target (a relative path, opened one directory at a time without following a
//! symlink), derives each temp file's name itself from the journal id, and touches only those
//! temps, the targets, and the folders the journal lists (removed only when empty). A file is
//! renamed into place only if it is the temp this commit wrote (its identity, recorded at the
//! commit point), and deleted only if it is the file the commit checked (its identity,
//! recorded before). A journal that names anything else is refused with a message, and nothing
//! is changed.
//!
//! The files below follow these seams: `check.rs` (step 1's check), `commit.rs` (the steps, one
//! function each), `format.rs` (the journal file and the temp files' names), `folders.rs`
//! (**Descriptors**), `lock.rs` (**Liveness**), `recover.rs` (recovery and **Distrust**); this
//! file holds the types a caller builds a commit from and reads its reports in.

mod check;
pub(crate) mod commit;
mod folders;
mod format;
mod lock;

pub use format::{delete_freed, free_later};
pub(crate) mod recover;

use std::io;

use staged_fs::RelPath;

use crate::{ConfinedRoot, JournalError};

/// One file to replace with new contents, as `ast_edit` writes: a [`Step`] that keeps the
/// file's mode.
#[derive(Debug, Clone)]
pub struct FileWrite {
    /// The target, relative to the workspace root.
    pub target: RelPath,
    /// The fingerprint the target must still have (what the preview read).
    pub expected_fingerprint: String,
    /// The new contents.
    pub contents: String,
}

impl From<FileWrite> for Step {
    fn from(write: FileWrite) -> Step {
        Step {
            target: write.target,
            expect: Expect::Fingerprint(write.expected_fingerprint),
            change: StepChange::Write { bytes: write.contents.into_bytes(), mode: StepMode::Keep },
        }
    }
}

/// What a commit must find at a target before it writes anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Nothing at all (not even a symlink): the commit creates the file.
    Absent,
    /// A regular file whose bytes have this fingerprint.
    Fingerprint(String),
}

/// Which permissions a written file gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepMode {
    /// Those of the file it replaces; a new file's default when it replaces none.
    Keep,
    /// What any new file gets (0666 less the umask).
    Default,
    /// Those of another target of the same commit, as the check found it (a moved file's
    /// source).
    Of(RelPath),
    /// These mode bits (an undo restoring a deleted file, a mode a diff changes).
    Bits(u32),
    /// What any new executable gets (0777 less the umask): a new file a diff makes 100755.
    Executable,
}

/// What a commit does to one target.
#[derive(Debug, Clone)]
pub enum StepChange {
    /// Write these bytes: replace the file, or create it (and its folders) when it is absent.
    Write {
        /// The new contents.
        bytes: Vec<u8>,
        /// Its permissions.
        mode: StepMode,
    },
    /// Delete the file.
    Delete,
}

/// One target of a commit: what must be there now, and what to make of it.
#[derive(Debug, Clone)]
pub struct Step {
    /// The target, relative to the workspace root.
    pub target: RelPath,
    /// What the preview read there.
    pub expect: Expect,
    /// What to do.
    pub change: StepChange,
}

/// A point in the commit protocol, reported after it is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitStep {
    /// The journal exists in state `preparing`.
    Prepared,
    /// The n-th folder the commit needs was created.
    DirCreated(usize),
    /// The temp file of the n-th step is durable.
    TempWritten(usize),
    /// The journal is `committed`.
    Committed,
    /// The n-th step's file is in place (replaced or created).
    Replaced(usize),
    /// The n-th step's file is deleted.
    Deleted(usize),
    /// The n-th folder a delete emptied, to make room for a file, is removed (the last
    /// first).
    DirRemoved(usize),
    /// The retire hook ran and succeeded.
    Retired,
    /// The journal is gone.
    Finished,
}

/// What [`recover`](crate::recover) did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Commits finished (their remaining temps renamed in).
    pub rolled_forward: usize,
    /// Commits rolled back (their temps deleted, targets untouched).
    pub rolled_back: usize,
    /// The origins (see [`crate::CommitOptions::origin`]) of the commits that were finished.
    pub finished_origins: Vec<String>,
    /// Journals left alone because a live process is committing.
    pub in_progress: usize,
    /// Journals refused because they name something recovery must not touch, one message
    /// each. They are left in place and nothing they name was changed.
    pub refused: Vec<String>,
    /// Files a finished commit was to delete but that changed after its check: they were kept,
    /// one message each.
    pub kept: Vec<String>,
}

impl RecoveryReport {
    /// Whether recovery changed or found anything worth reporting.
    pub fn is_empty(&self) -> bool {
        *self == RecoveryReport::default()
    }
}

/// What a finished commit did beyond its steps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitReport {
    /// Targets to delete that changed between the check and the delete (someone wrote them
    /// while the commit ran): they were kept, not deleted.
    pub kept: Vec<RelPath>,
}

fn journal_err(workspace: &ConfinedRoot, err: &io::Error) -> JournalError {
    JournalError::Journal(format!("{}: {err}", workspace.journal_dir().display()))
}

fn write_err(workspace: &ConfinedRoot, rel: &RelPath, err: io::Error) -> JournalError {
    JournalError::Write {
        path: workspace.root().join(rel.as_path()),
        message: err.to_string(),
        source: err,
    }
}
