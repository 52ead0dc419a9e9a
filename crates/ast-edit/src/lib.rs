//! Structural search and rewrite for coding agents, on ast-grep.
//!
//! [`AstEditTool`] (`ast_edit`) previews rewrites and stages an [`AstEditAction`]; applying it
//! re-runs the rewrite, refuses if anything drifted since the preview (the stale error, with
//! nothing written), and writes all files or none ([`staged_journal::commit`]). A crash in the
//! middle of a multi-file write is finished or rolled back by [`staged_journal::recover`],
//! which a host calls on start.
//! [`AstGrepTool`] (`ast_grep`) is the read-only search. Both share the walker
//! ([`collect_candidates`]), the languages ([`Lang`], see `LANGUAGES.md`), the prefilter and the
//! confinement rules ([`staged_journal::ConfinedRoot`], on `staged-fs` directory handles).
//!
//! The engine itself ([`compute_preview_with`]) is pure: it reads files and returns an
//! [`EditPreview`]; only the journal's commit writes. An apply can write some of the preview's files,
//! or some hunks of a file, and leave the rest pending (`extra.files`, `extra.hunks`), and
//! [`staged_journal::ChangeUndo`] reverts an apply recorded in the resolve log, through the
//! same journal.
//!
//! The root, the fingerprints and the journal are `staged-journal`'s, below this crate, and
//! are imported from there: this crate re-exports none of them.
//!
//! # Library API
//!
//! Besides the tools, a Rust user (a host, or an agent builder) calls the engine directly:
//! - previews: `compute_preview`, `compute_preview_with` with `EngineOptions`, from a
//!   `ValidatedEdit` (`AstEditParams::from_json`, then `validate`) to an `EditPreview`
//!   (`EditPreview::writes`, `EditPreview::edits_digest`; its `FileEdits`, `FileContents`,
//!   `Cap`, `LeftOut`, `ErrorFile`, `NestedLeft` and `LangChoice`), its text and details
//!   (`preview_details`, `PreviewDetails::into_value`, with `FileCount`, `LeftOutDetails`,
//!   `ErrorFileDetails`, `NestedLeftDetails`, `LangInferred`, `LangCount`, `Position`), the
//!   applied details (`AppliedDetails`, `RemainderDetails`) and the diff (`unified_diff`);
//! - the action's promise: `AstEditAction::expected` (`Expected`, `ExpectedFile`);
//! - edits without a preview: `RawEdit`, `apply_edits`;
//! - search: `search` (`SearchResult`, `SearchMatch`), `search_text`, `search_details`,
//!   `AstGrepParams::from_json`;
//! - the walker and the languages: `collect_candidates` (`Candidate`), `Lang`, `Lang::infer`
//!   (`Inferred`);
//! - the warm index: `WarmIndex::stats` (`IndexStats`), `WarmIndex::wait_indexed`;
//! - errors: `AstEditError`.

#![deny(missing_docs)]

mod action;
mod choose;
mod compile;
mod details;
mod edit_tool;
mod edits;
mod embed;
mod engine;
mod error;
mod grams;
mod grep_tool;
mod lang;
mod nesting;
mod parallel;
mod params;
mod prefilter;
mod preview_diff;
mod render;
mod scope;
mod search;
mod source;
mod trees;
mod warm;

pub use crate::{
    action::{
        AST_EDIT_TOOL_NAME, AstEditAction, Expected, ExpectedFile, FILES_EXTRA_KEY, ListedAstEdit,
    },
    details::{
        AppliedDetails, DetailsError, ErrorFileDetails, FileCount, LangCount, LangInferred,
        LangRequiredDetails, LeftOutDetails, NestedLeftDetails, Position, PreviewDetails,
        RemainderDetails, StaleDetails,
    },
    edit_tool::AstEditTool,
    edits::{Edit, RawEdit, apply_edits},
    engine::{
        Cap, EditPreview, EngineOptions, ErrorFile, FileContents, FileEdits, LangChoice, LeftOut,
        NestedLeft, compute_preview, compute_preview_with,
    },
    error::AstEditError,
    grep_tool::{AstGrepTool, search_details, search_text},
    lang::{Inferred, Lang},
    params::{AstEditParams, AstGrepParams, DEFAULT_MAX_FILES, Op, Strictness, ValidatedEdit},
    preview_diff::{file_diff, unified_diff},
    render::{ArgNames, PREVIEW_HEADER, last_line, preview_details, preview_text},
    scope::{Candidate, collect_candidates, compile_glob},
    search::{SearchMatch, SearchResult, search},
    warm::{IndexStats, WarmIndex},
};
