//! Loading one candidate file: read it, refuse binary and non-UTF-8 content, and parse it,
//! saying whether its tree has error nodes (each caller decides what that means). Each refusal
//! is a parse issue string, never a panic.

use std::{
    cell::RefCell,
    collections::{HashMap, hash_map::Entry},
    ops::Range,
    sync::{
        OnceLock,
        mpsc::{self, Sender},
    },
};

use ast_grep_core::{
    AstGrep,
    tree_sitter::{LanguageExt, StrDoc, TSLanguage},
};
use tree_sitter::{InputEdit, Parser, Point, Tree};

use crate::{lang::Lang, scope::Candidate};

/// How many leading bytes are checked for a NUL to call a file binary.
pub(crate) const BINARY_SNIFF_LEN: usize = 8192;

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

/// The ast-grep root over `text` and its syntax tree (which must be `text`'s).
pub(crate) fn root_of(text: &str, lang: Lang, tree: Tree) -> Parsed {
    AstGrep::doc(StrDoc { src: text.to_owned(), lang, tree })
}

/// Parses `text` as ast-grep-core does (one parser per thread and language, reset before each
/// parse), or, given the tree of the text before some edits with those edits applied to it
/// ([`Tree::edit`]), incrementally: tree-sitter then reuses every subtree the edits did not
/// touch, and gives the tree a fresh parse would.
pub(crate) fn parse_tree(text: &str, lang: Lang, old: Option<&Tree>) -> Result<Tree, String> {
    thread_local! {
        static PARSERS: RefCell<HashMap<TSLanguage, Parser>> = RefCell::new(HashMap::new());
    }
    let ts_lang = lang.get_ts_language();
    PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = match parsers.entry(ts_lang) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => {
                let mut parser = Parser::new();
                parser.set_language(entry.key()).map_err(|err| err.to_string())?;
                entry.insert(parser)
            }
        };
        // A failed parse can leave resumable state behind: every parse is of a whole text.
        parser.reset();
        parser
            .parse(text.as_bytes(), old)
            .ok_or_else(|| "tree-sitter could not parse it".to_owned())
    })
}

/// Tells `tree` (the tree of `before`) about `splices` (sorted, disjoint byte ranges of
/// `before`, each replaced by its text), so that [`parse_tree`] can reuse what they did not
/// touch. Positions are rows and byte columns, as tree-sitter counts them.
pub(crate) fn edit_tree(tree: &mut Tree, before: &str, splices: &[(Range<usize>, &str)]) {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', before.as_bytes()).map(|at| at + 1))
        .collect();
    let point = |at: usize| {
        let row = line_starts.partition_point(|&start| start <= at).saturating_sub(1);
        Point { row, column: at - line_starts[row] }
    };
    // From the last to the first, so that each edit's positions, all before the later edits,
    // are the same in the tree as edited so far.
    for (range, text) in splices.iter().rev() {
        let start_position = point(range.start);
        let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
        let new_end_position = match memchr::memrchr(b'\n', text.as_bytes()) {
            Some(last) => {
                Point { row: start_position.row + newlines, column: text.len() - last - 1 }
            }
            None => Point { row: start_position.row, column: start_position.column + text.len() },
        };
        tree.edit(&InputEdit {
            start_byte: range.start,
            old_end_byte: range.end,
            new_end_byte: range.start + text.len(),
            start_position,
            old_end_position: point(range.end),
            new_end_position,
        });
    }
}

/// Whether `node` or a node under it satisfies `found`, looking only into subtrees that hold an
/// error (only those can hold an error or missing node, which `found` looks for).
pub(crate) fn error_node_under(
    node: tree_sitter::Node<'_>,
    found: impl Fn(tree_sitter::Node<'_>) -> bool,
) -> bool {
    let mut cursor = node.walk();
    loop {
        let at = cursor.node();
        if found(at) {
            return true;
        }
        if at.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == node {
                return false;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return false;
            }
        }
    }
}

/// Drops `candidate`'s syntax tree (a [`Parsed`] root, or a bare [`Tree`]) once its matches
/// are taken.
///
/// A big file's tree (millions of nodes; tens of milliseconds to free) is handed to a
/// background thread, so neither the caller nor a pool worker waits for it, and the memory it
/// held is then given back to the operating system: glibc keeps freed memory in per-thread
/// arenas, so without this every worker thread's footprint stays at the biggest tree it ever
/// parsed, and the process's peak is their sum. (In a process whose allocator is not glibc's,
/// such as the `staged` binary with jemalloc, `malloc_trim` finds nothing to trim and that
/// allocator's own decay gives the pages back.)
pub(crate) fn dispose<T: Send + 'static>(tree: T, candidate: &Candidate) {
    if !candidate.is_big() {
        return drop(tree);
    }
    let unsent = match tree_reaper() {
        Some(reaper) => reaper.send(Box::new(tree)).err().map(|err| err.0),
        None => Some(Box::new(tree) as Box<dyn Send>),
    };
    if let Some(tree) = unsent {
        drop(tree);
        trim_heap();
    }
}

/// The background thread that frees big trees, started on first use; `None` if it could
/// not be started.
fn tree_reaper() -> Option<&'static Sender<Box<dyn Send>>> {
    static REAPER: OnceLock<Option<Sender<Box<dyn Send>>>> = OnceLock::new();
    REAPER
        .get_or_init(|| {
            let (sender, trees) = mpsc::channel::<Box<dyn Send>>();
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;

    use super::*;

    const JS: &str = "function f(a) {\n  return a.length + g(b.length);\n}\nconst x = [1, 2,\n 3].map(y => y.length);\n// done\n";
    const RUST: &str =
        "fn main() {\n    let v = a.unwrap().b.unwrap();\n    println!(\"{}\", v);\n}\n";

    /// Replaces the ranges `(start, len, text)` (clamped to char boundaries, made sorted and
    /// disjoint) of `before`.
    fn splice(
        before: &str,
        edits: &[(usize, usize, String)],
    ) -> (Vec<(Range<usize>, String)>, String) {
        let mut ranges: Vec<(Range<usize>, String)> = Vec::new();
        let mut last = 0;
        let mut sorted = edits.to_vec();
        sorted.sort();
        for (start, len, text) in sorted {
            let mut start = start.min(before.len());
            while !before.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + len).min(before.len());
            while !before.is_char_boundary(end) {
                end -= 1;
            }
            if start < last {
                continue;
            }
            last = end.max(start + 1);
            ranges.push((start..end, text));
        }
        let mut after = String::new();
        let mut at = 0;
        for (range, text) in &ranges {
            after.push_str(&before[at..range.start]);
            after.push_str(text);
            at = range.end;
        }
        after.push_str(&before[at..]);
        (ranges, after)
    }

    /// Every node of `tree` in pre-order: its kind, byte range, points, and whether it is
    /// missing or holds an error.
    fn nodes(tree: &Tree) -> Vec<(u16, Range<usize>, Point, Point, bool, bool)> {
        let mut res = Vec::new();
        let mut cursor = tree.walk();
        loop {
            let n = cursor.node();
            res.push((
                n.kind_id(),
                n.byte_range(),
                n.start_position(),
                n.end_position(),
                n.is_missing(),
                n.has_error(),
            ));
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    return res;
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Parsing again from an edited tree gives the tree a fresh parse gives.
        #[test]
        fn an_incremental_parse_equals_a_fresh_one(
            rust in any::<bool>(),
            edits in proptest::collection::vec(
                (0usize..120, 0usize..12, prop_oneof![
                    Just(String::new()), Just("x".to_owned()), Just("len(a)".to_owned()),
                    Just("(\n  b\n)".to_owned()), Just("é".to_owned()), Just("}".to_owned()),
                    Just("/* c */".to_owned()), Just("\"s\"".to_owned()),
                ]),
                1..6,
            ),
        ) {
            let (before, lang) = if rust { (RUST, Lang::Rust) } else { (JS, Lang::JavaScript) };
            let (splices, after) = splice(before, &edits);
            let mut tree = parse_tree(before, lang, None).unwrap();
            let borrowed: Vec<(Range<usize>, &str)> =
                splices.iter().map(|(r, t)| (r.clone(), t.as_str())).collect();
            edit_tree(&mut tree, before, &borrowed);
            let incremental = parse_tree(&after, lang, Some(&tree)).unwrap();
            let fresh = parse_tree(&after, lang, None).unwrap();
            prop_assert_eq!(nodes(&incremental), nodes(&fresh));
        }
    }
}
