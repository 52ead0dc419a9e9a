//! All-or-nothing file changes for staged, below every tool that writes.
//!
//! - [`ConfinedRoot`]: the root every path is confined to (a `staged_fs::Root` directory handle),
//!   and the state folder beside the files.
//! - [`fingerprint()`]: the SHA-256 a preview records of each file it read.
//! - [`file_diff`] and [`DiffHeader`]: unified diffs from byte-range edits, in linear time, in
//!   the form `git apply` takes, new, deleted and renamed files included.
//! - [`commit`] and [`recover`]: the journal. A commit replaces, creates and deletes files
//!   (a move is a create and a delete) all or none, through a kill -9; every start-up
//!   recovery finishes or rolls back what a crash interrupted.
//! - [`FileOp`] and [`ChangeAction`]: the change sets that text previews (`edit`, `write`,
//!   `apply_patch`) stage, checked byte for byte against the disk before anything is written;
//!   [`Selection`] and [`diff_files`]: applying part of a preview, by file and by hunk, through
//!   one driver both actions share ([`choose_parts`], [`commit_applied`], [`apply_in_worker`]);
//!   [`ChangeUndo`]: undo and redo of any change recorded in the resolve log, built-in tools'
//!   (`ast_edit` included) alike.
//! - [`FolderChange`]: a folder a change made or removed as a change of its own (a shell
//!   command's), shown as a line before the files' diffs, kept in the undo data (format 3),
//!   made and removed by the same commit as the files, never removed while it holds anything
//!   else ([`add_folders`], `ChangeAction::with_folders`).
//! - [`PROTECTED_PATHS`]: the paths no tool stages an edit of (git's folder, the coding
//!   agents' control files).
//!
//! # Library API
//!
//! Besides what other crates build on, a Rust user reads a commit's outcome (`CommitReport`,
//! with each `StepChange` and `StepMode`), what `PROTECTED_PATHS` holds (`Protected`), the
//! parts of a diff (`DiffFile`, `EditHunks`), an undo's plan (`UndoPlan`), the mode changes
//! an undo restores (`ModeChange`), the remainder a partial apply leaves (`Remainder`), the
//! hunks `cut_hunks` cuts (`HunkCut`) and the steps that put back files replaced whole
//! (`KeptUndo`, from `undo_kept`).

#![deny(missing_docs)]

mod action;
mod change;
mod details;
mod diff;
mod error;
mod fingerprint;
mod folder_ops;
mod hunks;
mod journal;
mod kept;
mod lines;
mod par;
mod part_apply;
mod protected;
mod root;
mod select;
mod state_guard;
mod undo;

pub(crate) use crate::part_apply::ApplyOnly;
pub use crate::{
    action::{ChangeAction, HunkCut, ReplacementFile, cut_hunks},
    change::{
        Applied, CheckError, Checked, EXECUTABLE_MODE, Edit, FileOp, ModeChange, NEW_FILE_MODE,
        Stale, UndoData, check, check_known, deleted_file_diff, describe_applied, invert,
        new_file_diff, plain_undo_ops, replay, with_executable,
    },
    details::{ChangeDetails, ChangeKind, ChangedFile, Remainder, label_of},
    diff::{DiffHeader, EditHunks, Splice, edit_hunks, file_diff, file_diff_indexed, quote},
    error::JournalError,
    fingerprint::{Hasher, fingerprint, fingerprint_reader, tag},
    folder_ops::{
        FolderChange, FolderOp, FolderSteps, add_folders, folder_lines, without_folder_lines,
    },
    hunks::{DiffFile, DiffKind, diff_files, diff_line_counts, hunk_list},
    journal::{
        CommitReport, CommitStep, Expect, FileWrite, RecoveryReport, Step, StepChange, StepMode,
        commit::{CommitOptions, commit},
        delete_freed, free_later,
        recover::{RecoverOptions, RecoveryHooks, needs_recovery, recover},
    },
    kept::{
        KEPT_GRACE, KeptBytes, KeptChange, KeptError, KeptInUndo, KeptUndo, keep_bytes, keep_file,
        kept_again, kept_due, prune_kept, read_kept, undo_kept,
    },
    lines::LineIndex,
    par::{no_lasting_threads, on_two},
    part_apply::{apply_in_worker, choose_parts, commit_applied, commit_applied_folders},
    protected::{PROTECTED_PATHS, Protected},
    root::{ConfinedRoot, STATE_DIR_NAME},
    select::{
        Choice, FILES_EXTRA_KEY, HUNKS_EXTRA_KEY, PartFile, Selection, part_files, preview_parts,
    },
    state_guard::ModelAccess,
    undo::{
        ChangeUndo, PlanError, UndoPlan, plan as undo_plan, plan_or_changed, undo_checked,
        undo_observed, undo_ops,
    },
};
