//! Loading one candidate file: read it, refuse binary and non-UTF-8 content, and parse it,
//! saying whether its tree has error nodes (each caller decides what that means). Each refusal
//! is a parse issue string, never a panic.

use std::sync::{
    OnceLock,
    mpsc::{self, Sender},
};

use ast_grep_core::{AstGrep, tree_sitter::StrDoc};

use crate::{Lang, scope::Candidate};

/// How many leading bytes are checked for a NUL to call a file binary.
const BINARY_SNIFF_LEN: usize = 8192;

/// A parsed file.
pub(crate) type Parsed = AstGrep<StrDoc<Lang>>;

/// Reads a candidate as UTF-8 text; the error is the parse issue to report.
pub(crate) fn read_text(candidate: &Candidate) -> Result<String, String> {
    let bytes = candidate
        .root
        .read(&candidate.rel)
        .map_err(|err| format!("{}: {err}", candidate.display))?;
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_LEN)];
    if memchr::memchr(0, sniff).is_some() {
        return Err(format!("{}: binary file skipped", candidate.display));
    }
    String::from_utf8(bytes).map_err(|_| format!("{}: file is not valid UTF-8", candidate.display))
}

/// The parse issue of a file whose syntax tree has error nodes.
pub(crate) fn parse_error_issue(display: &str) -> String {
    format!("{display}: parse error (syntax tree contains error nodes)")
}

/// Parses `text`, and says whether its tree has error (or missing) nodes; the error is the
/// parse issue to report.
pub(crate) fn parse(text: &str, lang: Lang, display: &str) -> Result<(Parsed, bool), String> {
    let root = AstGrep::try_new(text, lang).map_err(|err| format!("{display}: {err}"))?;
    let broken = root.root().get_inner_node().has_error();
    Ok((root, broken))
}

/// Drops `candidate`'s syntax tree once its matches are taken.
///
/// A big file's tree (millions of nodes; tens of milliseconds to free) is handed to a
/// background thread, so neither the caller nor a pool worker waits for it, and the memory it
/// held is then given back to the operating system: glibc keeps freed memory in per-thread
/// arenas, so without this every worker thread's footprint stays at the biggest tree it ever
/// parsed, and the process's peak is their sum. (In a process whose allocator is not glibc's,
/// such as the `staged` binary with jemalloc, `malloc_trim` finds nothing to trim and that
/// allocator's own decay gives the pages back.)
pub(crate) fn dispose(root: Parsed, candidate: &Candidate) {
    if !candidate.is_big() {
        return drop(root);
    }
    let unsent = match tree_reaper() {
        Some(reaper) => reaper.send(root).err().map(|err| err.0),
        None => Some(root),
    };
    if let Some(root) = unsent {
        drop(root);
        trim_heap();
    }
}

/// The background thread that frees big trees, started on first use; `None` if it could
/// not be started.
fn tree_reaper() -> Option<&'static Sender<Parsed>> {
    static REAPER: OnceLock<Option<Sender<Parsed>>> = OnceLock::new();
    REAPER
        .get_or_init(|| {
            let (sender, trees) = mpsc::channel::<Parsed>();
            std::thread::Builder::new()
                .name("staged-tree-drop".to_owned())
                .spawn(move || {
                    for tree in trees {
                        drop(tree);
                        trim_heap();
                    }
                })
                .ok()?;
            Some(sender)
        })
        .as_ref()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim_heap() {
    // SAFETY: `malloc_trim` takes no pointers; it only walks glibc's arenas, each under its own
    // lock, and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Elsewhere the allocator's own policy applies.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim_heap() {}
