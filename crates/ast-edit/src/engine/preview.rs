//! What a preview is: the engine's result types, and the scan that lets an apply skip its
//! search.

use staged_fs::RelPath;
use staged_journal::{FileWrite, Hasher};

use crate::{
    edits::{Edit, replacements},
    lang::Lang,
    scope::Candidate,
};

/// Knobs that change how much the engine keeps, and how it gets there; never which edits it
/// finds.
#[derive(Debug, Clone, Copy)]
pub struct EngineOptions {
    /// Skip parsing files that lack a pattern's literal texts.
    pub prefilter: bool,
    /// Compute each touched file's unified diff ([`FileEdits::diff`]).
    pub diff: bool,
    /// Keep each touched file's original and rewritten text ([`FileEdits::contents`]).
    pub keep_contents: bool,
}

impl EngineOptions {
    /// What a preview needs: diffs, not contents (memory stays bounded on big scopes).
    pub fn preview() -> EngineOptions {
        EngineOptions { prefilter: true, diff: true, keep_contents: false }
    }

    /// What an apply needs: contents, not diffs.
    pub fn apply() -> EngineOptions {
        EngineOptions { prefilter: true, diff: false, keep_contents: true }
    }
}

impl Default for EngineOptions {
    /// Everything: diffs and contents.
    fn default() -> Self {
        EngineOptions { prefilter: true, diff: true, keep_contents: true }
    }
}

/// The replacements one `ast_edit` call would make.
#[derive(Debug, Clone)]
pub struct EditPreview {
    /// The language used.
    pub lang: Lang,
    /// Touched files, sorted by path.
    pub files: Vec<FileEdits>,
    /// How many candidate files were searched.
    pub files_searched: usize,
    /// Whether `limit` or `max_files` cut the result.
    pub limit_reached: bool,
    /// What the cap left out, when one cut the result.
    pub left_out: Option<LeftOut>,
    /// Deduplicated parse issues, in path order (uncapped).
    pub parse_errors: Vec<String>,
    /// How many files were skipped because their syntax tree has error nodes (each is also a
    /// parse issue).
    pub error_files_skipped: usize,
    /// With `include_parse_errors`: the files with error nodes that were searched, in path
    /// order, with their edits and the matches left alone.
    pub error_files: Vec<ErrorFile>,
    /// Outer matches rewritten alone, each with the nested matches it left as they were.
    pub nested_left: Vec<NestedLeft>,
    /// How the language was chosen, when `lang` was not given and the paths hold several.
    pub lang_choice: Option<LangChoice>,
    /// The candidates as the walk found them, when it can prove an apply nothing changed.
    pub(crate) scan: Option<Scan>,
}

/// What a preview's walk found, as one digest: each candidate's path and identity (device,
/// inode, change time) and size. An apply whose walk gives the same digest finds every
/// candidate as the preview read it (the kernel sets a file's change time on every write,
/// and nobody can set it back), so the preview's edits are the ones a fresh search would
/// make, and need not be searched for again.
///
/// A file changed less than [`RECENT`] before the walk could have been changed again within
/// the same tick of the kernel's coarse clock without its change time moving (the "racily
/// clean" files of git): then there is no scan, and an apply searches again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    pub(crate) digest: String,
}

/// How recent a change must be for a walk to prove nothing.
const RECENT: std::time::Duration = std::time::Duration::from_secs(1);

impl Scan {
    /// The scan of `candidates`, listed by a walk that started at `started`; `None` when one
    /// has no identity or changed less than [`RECENT`] before.
    pub(crate) fn of(candidates: &[Candidate], started: std::time::SystemTime) -> Option<Scan> {
        let since = started.checked_sub(RECENT)?.duration_since(std::time::UNIX_EPOCH).ok()?;
        let mut hasher = Hasher::default();
        for candidate in candidates {
            let id = candidate.identity?;
            let changed = std::time::Duration::new(
                u64::try_from(id.ctime).ok()?,
                u32::try_from(id.ctime_nsec).ok()?,
            );
            if changed >= since {
                return None;
            }
            hasher.part(candidate.display.as_bytes());
            hasher.part(candidate.rel.as_path().as_os_str().as_encoded_bytes());
            for n in [
                id.dev,
                id.ino,
                candidate.size,
                changed.as_secs(),
                u64::from(changed.subsec_nanos()),
            ] {
                hasher.part(&n.to_le_bytes());
            }
            hasher.part(&[u8::from(candidate.explicit)]);
        }
        Some(Scan { digest: hasher.finish() })
    }
}

/// Which cap cut a preview, and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Cap {
    /// `limit`: the most replacements.
    Limit(usize),
    /// `max_files`: the most files touched.
    MaxFiles(usize),
}

/// What a cap left out: the files after the cut are still searched, to count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeftOut {
    /// The cap that cut.
    pub cap: Cap,
    /// Files with replacements left out (with `limit`, the file cut in the middle included).
    pub files: usize,
    /// Replacements left out.
    pub replacements: usize,
    /// `false` when some files left out could not be counted (their edits overlap): then there
    /// are at least this many.
    pub exact: bool,
}

/// A file with error nodes that `include_parse_errors` searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorFile {
    /// Display path.
    pub path: String,
    /// Replacements made in it.
    pub replacements: usize,
    /// Matches left alone because their node holds an error or missing node.
    pub matches_skipped: usize,
}

/// An outer match that no longer matched once the matches nested in it were rewritten: it was
/// rewritten alone, from the original text, and those matches were left as they were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedLeft {
    /// Display path.
    pub path: String,
    /// Line and column of the outer match.
    pub outer: (usize, usize),
    /// The outer match's pattern.
    pub pattern: String,
    /// Line and column of each nested match left as it was.
    pub inner: Vec<(usize, usize)>,
    /// What to change, when something can be changed: the statement's `;` the rewrite drops.
    pub hint: Option<String>,
}

/// The language a call without `lang` inferred from paths holding several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LangChoice {
    /// The languages of the paths left out, each with its file count.
    pub left_out: Vec<(Lang, usize)>,
}

/// The replacements in one file.
#[derive(Debug, Clone)]
pub struct FileEdits {
    /// Display path (relative to the workspace root).
    pub path: String,
    /// Path relative to the workspace root.
    pub rel: RelPath,
    /// SHA-256 of the bytes read.
    pub fingerprint: String,
    /// The edits, sorted by position.
    pub edits: Vec<Edit>,
    /// The file's unified diff, when [`EngineOptions::diff`] asked for it.
    pub diff: Option<String>,
    /// The text read and the text after the edits, when [`EngineOptions::keep_contents`]
    /// asked for them.
    pub contents: Option<FileContents>,
}

/// A touched file's text before and after its edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContents {
    /// The text read.
    pub original: String,
    /// The text after the edits.
    pub updated: String,
}

impl FileEdits {
    /// The rewritten text, when contents were kept.
    pub fn updated(&self) -> Option<&str> {
        self.contents.as_ref().map(|c| c.updated.as_str())
    }
}

impl EditPreview {
    /// A preview of `files` in `lang`, made without a search of its own (a replayed preview,
    /// a partial apply's remainder): `files_searched` as the preview it comes from counted,
    /// cut by the cap when `left_out` says so, and nothing else to report (no parse issues,
    /// skipped or nested matches, language choice or walk).
    pub(crate) fn of_files(
        lang: Lang,
        files: Vec<FileEdits>,
        files_searched: usize,
        left_out: Option<LeftOut>,
    ) -> EditPreview {
        EditPreview {
            lang,
            files,
            files_searched,
            limit_reached: left_out.is_some(),
            left_out,
            parse_errors: Vec::new(),
            error_files_skipped: 0,
            error_files: Vec::new(),
            nested_left: Vec::new(),
            lang_choice: None,
            scan: None,
        }
    }

    /// The writes that make this preview real, one per touched file; `None` when the
    /// rewritten contents were not kept (see [`EngineOptions`]).
    pub fn writes(&self) -> Option<Vec<FileWrite>> {
        self.files
            .iter()
            .map(|f| {
                Some(FileWrite {
                    target: f.rel.clone(),
                    expected_fingerprint: f.fingerprint.clone(),
                    contents: f.updated()?.to_owned(),
                })
            })
            .collect()
    }

    /// Total replacements over all files.
    pub fn total_replacements(&self) -> usize {
        self.files.iter().map(|f| replacements(&f.edits)).sum()
    }

    /// Number of files with at least one replacement.
    pub fn files_touched(&self) -> usize {
        self.files.len()
    }

    /// A digest of every edit (path, range, inserted text): equal digests mean equal edits.
    pub fn edits_digest(&self) -> String {
        let mut hasher = Hasher::default();
        for file in &self.files {
            hasher.part(file.path.as_bytes());
            for edit in &file.edits {
                hasher.part(&(edit.byte_start as u64).to_le_bytes());
                hasher.part(&(edit.byte_end as u64).to_le_bytes());
                hasher.part(edit.after.as_bytes());
            }
        }
        hasher.finish()
    }
}
