//! Patches, in Codex's `apply_patch` format or as unified diffs: the parsed form, and how its
//! chunks find their place in a file.
//!
//! Chunks are matched the way Codex matches them: in order, each searched from where the
//! previous one ended, first exactly, then ignoring trailing whitespace, then ignoring
//! surrounding whitespace, then with Unicode dashes, quotes and spaces taken as ASCII. A
//! chunk's `@@ <context>` line is found first the same way. Each way numbers the file's lines
//! once, and a chunk is a run of numbers to find (`Seeker`), in time linear in the file and
//! the chunk. Lines are compared without their line endings, and a CRLF file keeps its CRLF:
//! the lines a Codex patch adds get the line ending of the file's first line (as Codex does),
//! and a file a Codex patch updates always ends with a line ending. A unified diff's lines
//! keep exactly the endings the diff gives them (`\ No newline at end of file` included), so
//! `git diff` output applies byte for byte.
//!
//! Unified diffs are read as `git apply` reads them: `git diff` (renames, `--no-prefix`),
//! `format-patch` and `git show` output, `-U0`, and GNU `diff -ruN` (a side dated at the
//! epoch is a missing file; the first folder is dropped when it is all two names differ
//! in). A hunk must hold the lines its header counts. Symlinks, submodules, binary files,
//! and copies are refused by design, naming the file and why; a mode a git diff gives a file
//! (`new file mode 100755`, `old mode`/`new mode` between 100644 and 100755) is set. `Options`
//! carries a person's `-p N` and `-R`.

mod apply;
mod names;
mod parse;
mod unified;

pub use apply::apply_chunks;
pub use parse::parse;
pub(crate) use parse::parse_with;
pub use unified::parse_unified;

/// A person's options for a patch (`staged patch -p N`); models give none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Options {
    /// How many leading folders to drop from a unified diff's paths (`-p N`), instead of
    /// the usual rule (a leading `a/` or `b/`, or the one folder in which the two names
    /// differ).
    pub strip: Option<usize>,
    /// Whether to reverse a unified diff (`-R`, as `git apply -R`): what it adds is removed,
    /// what it creates deleted, renames go back.
    pub reverse: bool,
}

/// A parsed patch: its files, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// What it does to each file.
    pub files: Vec<PatchFile>,
}

impl Patch {
    /// Every path the patch names, moves' destinations included, as it writes them.
    pub fn paths(&self) -> Vec<&str> {
        let mut res = Vec::new();
        for file in &self.files {
            match file {
                PatchFile::Add { path, .. } | PatchFile::Delete { path, .. } => {
                    res.push(path.as_str())
                }
                PatchFile::Update { path, move_to, .. } => {
                    res.push(path.as_str());
                    res.extend(move_to.as_deref());
                }
            }
        }
        res
    }

    /// Takes every relative path as relative to the folder `base`.
    pub fn rebase(&mut self, base: &staged_fs::RelPath) {
        let join = |path: &mut String| {
            if !std::path::Path::new(path.as_str()).is_absolute() {
                *path = format!("{}/{path}", base.display());
            }
        };
        for file in &mut self.files {
            match file {
                PatchFile::Add { path, .. } | PatchFile::Delete { path, .. } => join(path),
                PatchFile::Update { path, move_to, .. } => {
                    join(path);
                    if let Some(to) = move_to {
                        join(to);
                    }
                }
            }
        }
    }
}

/// Which format a file's change came in, which decides the line endings it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Codex's format: added lines take the file's line ending, and an updated file ends with
    /// one.
    Codex,
    /// A unified diff: every line ends exactly as the diff says.
    Exact,
    /// A unified diff saved with CRLF line endings (its headers end with `\r\n`, which git
    /// never writes): its `\r`s are the saving's, not the file's. It applies as [`Exact`] to
    /// a file whose lines all end with CRLF, and is refused on a file with LF lines, as `git
    /// apply` refuses it, rather than mixing endings there.
    ///
    /// [`Exact`]: Style::Exact
    CrlfSaved,
}

/// What a patch does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchFile {
    /// A new file with this text (a Codex patch replaces a file that exists).
    Add {
        /// The path, as the patch writes it.
        path: String,
        /// The text.
        content: String,
        /// Its format.
        style: Style,
        /// Whether a git diff makes it executable (`new file mode 100755`): it is created as
        /// any new executable (0777 less the umask).
        executable: bool,
    },
    /// A deleted file.
    Delete {
        /// The path.
        path: String,
        /// For a unified diff, the lines it says the file holds (checked before deleting).
        old: Option<Vec<String>>,
    },
    /// Changes to a file, which may also move.
    Update {
        /// The path.
        path: String,
        /// Where it moves to.
        move_to: Option<String>,
        /// The changes, in order.
        chunks: Vec<Chunk>,
        /// Its format.
        style: Style,
        /// The mode a git diff gives it (`old mode`/`new mode`): `Some(true)` for 100755 (the
        /// executable bits set where the read bits are), `Some(false)` for 100644 (cleared).
        executable: Option<bool>,
    },
}

/// A run of lines to replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// A line (`@@ <context>`) that must come before the chunk.
    pub context: Option<String>,
    /// The lines replaced, context included, without line endings.
    pub old: Vec<String>,
    /// The lines put in their place, context included.
    pub new: Vec<PatchLine>,
    /// Whether the chunk ends the file (`*** End of File`).
    pub eof: bool,
    /// For a unified diff: the 0-based line where the hunk says it starts.
    pub at: Option<usize>,
}

/// A line a patch writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchLine {
    /// Its text, without a line ending.
    pub text: String,
    /// Its ending; `None` takes the file's.
    pub ending: Option<Ending>,
    /// For a context line: which of the chunk's old lines it is. The file's own line is kept
    /// there, as it is (a context line that matched with other whitespace is not rewritten).
    pub context: Option<usize>,
}

impl PatchLine {
    /// A line a Codex patch adds: it takes the file's line ending.
    pub fn codex(text: &str) -> PatchLine {
        PatchLine { text: text.to_owned(), ending: None, context: None }
    }

    /// A context line of a Codex patch, the `old`-th old line of its chunk.
    pub(crate) fn codex_context(text: &str, old: usize) -> PatchLine {
        PatchLine { text: text.to_owned(), ending: None, context: Some(old) }
    }

    /// The line as a new file holds it (a Codex line with `\n`).
    pub(crate) fn to_text(&self) -> String {
        let ending = match self.ending {
            Some(Ending::CrLf) => "\r\n",
            Some(Ending::None) => "",
            Some(Ending::Lf) | None => "\n",
        };
        format!("{}{ending}", self.text)
    }
}

/// A line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `\n`.
    Lf,
    /// `\r\n`.
    CrLf,
    /// None: the file's last line.
    None,
}
