//! Structural search and rewrite for coding agents, on ast-grep.
//!
//! [`AstEditTool`] (`ast_edit`) previews rewrites and stages an [`AstEditAction`]; applying it
//! re-runs the rewrite, refuses if anything drifted since the preview (the stale error, with
//! nothing written), and writes all files or none ([`commit`]). A crash in the middle of a
//! multi-file write is finished or rolled back by [`recover`], which a host calls on start.
//! [`AstGrepTool`] (`ast_grep`) is the read-only search. Both share the walker
//! ([`collect_candidates`]), the languages ([`Lang`], see `LANGUAGES.md`), the prefilter and the
//! confinement rules ([`Workspace`], on `staged-fs` directory handles).
//!
//! The engine itself ([`compute_preview_with`]) is pure: it reads files and returns an
//! [`EditPreview`]; only [`commit`] writes. An apply can write some of the preview's files
//! and leave the rest pending (`extra.files`), and [`AstEditUndo`] reverts an apply recorded
//! in the resolve log, through the same journal.

#![deny(missing_docs)]

mod action;
mod compile;
mod details;
mod diff;
mod edit_tool;
mod edits;
mod engine;
mod error;
mod fingerprint;
mod grep_tool;
mod journal;
mod lang;
mod nesting;
mod parallel;
mod params;
mod prefilter;
mod render;
mod scope;
mod search;
mod source;
mod state_guard;
mod undo;
mod workspace;

pub use crate::{
    action::{AST_EDIT_TOOL_NAME, AstEditAction, Expected, ExpectedFile, FILES_EXTRA_KEY},
    details::{
        DetailsError, LANG_REQUIRED, LangCount, LangRequiredDetails, PreviewDetails, StaleDetails,
    },
    diff::{file_diff, quote_diff_path, unified_diff},
    edit_tool::AstEditTool,
    edits::{Edit, LineIndex, RawEdit, apply_edits, normalize},
    engine::{
        EditPreview, EngineOptions, FileContents, FileEdits, compute_preview, compute_preview_with,
    },
    error::{AstEditError, worker_failure},
    fingerprint::{fingerprint, tag},
    grep_tool::{AST_GREP_TOOL_NAME, AstGrepTool, search_details, search_text},
    journal::{
        CommitOptions, CommitStep, FileWrite, PrepareHook, RecoveryHooks, RecoveryReport, commit,
        commit_observed, commit_with, recover, recover_hooked, recover_with,
    },
    lang::{Inferred, Lang, supported_aliases},
    params::{AstEditParams, AstGrepParams, DEFAULT_MAX_FILES, Op, Strictness, ValidatedEdit},
    render::{
        PARSE_ERRORS_LIMIT, PREVIEW_HEADER, action_label, parse_issues_block, preview_details,
        preview_text,
    },
    scope::{Candidate, MAX_GLOB_BYTES, collect_candidates, compile_glob},
    search::{SearchMatch, SearchResult, search},
    state_guard::ModelAccess,
    undo::{AstEditUndo, undo_observed},
    workspace::{STATE_DIR_NAME, Workspace},
};
