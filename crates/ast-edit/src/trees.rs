//! The syntax trees a warm index keeps of the files its selective queries parsed last, so
//! that asking again (an `ast_grep`, then the `ast_edit` that acts on it, then a check) does
//! not parse the same files again.
//!
//! A kept tree is used only for the very text it was parsed from: each query reads the file
//! as a cold query does, and the tree is taken only when that text is byte for byte the one
//! kept with it. So the cache can never make a query see anything but the file's current
//! text, whatever happened to the file, with or without an event.
//!
//! It is bounded by the bytes of text it keeps ([`BUDGET`]; a Rust file's tree takes some 30
//! times its text's bytes), and keeps no file over [`MAX_TEXT`]. It forgets first the trees
//! no later query used, oldest first, then the least recently used: so a query asked once
//! does not push out the trees of queries asked again and again. A file whose tree was
//! forgotten and is parsed again counts as used again (it remembers the last [`GHOSTS`]
//! files it forgot), so a query asked again keeps its trees even when one-off queries came
//! between. Only queries that parse few
//! files store trees ([`STORE_UP_TO`]): a broad query would fill it with trees no selective
//! query needs, and copy every text it parsed.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Mutex, PoisonError},
};

use staged_fs::RelPath;
use tree_sitter::Tree;

use crate::{lang::Lang, scope::Candidate, source::parse_tree};

/// The most text, in bytes, whose trees are kept.
const BUDGET: usize = 8 << 20;

/// The biggest text whose tree is kept.
const MAX_TEXT: usize = 1 << 20;

/// How many forgotten files it remembers.
const GHOSTS: usize = 4_096;

/// A query that parses more files than this stores no tree.
pub(crate) const STORE_UP_TO: usize = 1_000;

/// Trees by file, language and where the text starts in the file (a component file's code
/// blocks are texts of their own).
#[derive(Debug, Default)]
pub(crate) struct TreeCache {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    kept: HashMap<(RelPath, Lang, usize), Kept>,
    /// The files whose trees were forgotten last, with when (the clock).
    ghosts: HashMap<(RelPath, Lang, usize), u64>,
    /// The same, oldest first (a file parsed again since stays here until it comes first).
    forgotten: VecDeque<(u64, (RelPath, Lang, usize))>,
    /// The bytes of text kept.
    bytes: usize,
    /// Bumped on every use, to find the least recently used.
    clock: u64,
}

#[derive(Debug)]
struct Kept {
    text: Box<str>,
    tree: Tree,
    used: u64,
    /// Whether a query used it after the one that parsed it.
    reused: bool,
}

/// How a query uses the cache: whether it may store the trees it parses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Trees<'a> {
    pub(crate) cache: &'a TreeCache,
    pub(crate) store: bool,
}

impl TreeCache {
    /// The tree of `text`, the text at `base` in `candidate` searched as `lang`: the kept one
    /// if it was parsed from this very text, else a new parse (kept if `trees` may store it).
    pub(crate) fn parse(
        trees: Option<Trees<'_>>,
        candidate: &Candidate,
        base: usize,
        text: &str,
        lang: Lang,
    ) -> Result<Tree, String> {
        let Some(trees) = trees else { return parse_tree(text, lang, None) };
        let key = (candidate.rel.clone(), lang, base);
        if let Some(tree) = trees.cache.get(&key, text) {
            return Ok(tree);
        }
        let tree = parse_tree(text, lang, None)?;
        if trees.store && text.len() <= MAX_TEXT {
            trees.cache.put(key, text, &tree);
        }
        Ok(tree)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, key: &(RelPath, Lang, usize), text: &str) -> Option<Tree> {
        let mut state = self.lock();
        state.clock += 1;
        let clock = state.clock;
        let kept = state.kept.get_mut(key)?;
        if *kept.text != *text {
            return None;
        }
        kept.used = clock;
        kept.reused = true;
        Some(kept.tree.clone())
    }

    fn put(&self, key: (RelPath, Lang, usize), text: &str, tree: &Tree) {
        let mut state = self.lock();
        state.clock += 1;
        let used = state.clock;
        // Parsed again after it was forgotten: asked for again.
        let reused = state.ghosts.remove(&key).is_some();
        let kept = Kept { text: text.into(), tree: tree.clone(), used, reused };
        state.bytes += kept.text.len();
        if let Some(old) = state.kept.insert(key, kept) {
            state.bytes -= old.text.len();
        }
        while state.bytes > BUDGET {
            let Some(oldest) = state
                .kept
                .iter()
                .min_by_key(|(_, kept)| (kept.reused, kept.used))
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            if let Some(old) = state.kept.remove(&oldest) {
                state.bytes -= old.text.len();
            }
            if state.forgotten.len() == GHOSTS
                && let Some((when, key)) = state.forgotten.pop_front()
                && state.ghosts.get(&key) == Some(&when)
            {
                state.ghosts.remove(&key);
            }
            state.ghosts.insert(oldest.clone(), used);
            state.forgotten.push_back((used, oldest));
        }
    }

    /// The bytes of text whose trees are kept, and how many trees.
    pub(crate) fn kept(&self) -> (usize, usize) {
        let state = self.lock();
        (state.bytes, state.kept.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(dir: &std::path::Path, name: &str, text: &str) -> Candidate {
        std::fs::write(dir.join(name), text).unwrap_or_else(|err| panic!("write: {err}"));
        let root = staged_fs::Root::open(dir).unwrap_or_else(|err| panic!("open: {err}"));
        let rel = RelPath::new(std::path::Path::new(name)).unwrap_or_else(|err| panic!("{err}"));
        Candidate {
            root,
            display: name.to_owned(),
            rel,
            explicit: false,
            size: text.len() as u64,
            identity: None,
            grams: None,
            inferred: None,
        }
    }

    #[test]
    fn a_kept_tree_serves_only_its_own_text() {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let file = candidate(dir.path(), "a.rs", "fn a() {}");
        let cache = TreeCache::default();
        let trees = Some(Trees { cache: &cache, store: true });
        let key = (file.rel.clone(), Lang::Rust, 0);
        assert!(TreeCache::parse(trees, &file, 0, "fn a() {}", Lang::Rust).is_ok());
        assert_eq!(cache.kept(), (9, 1));
        let kept = cache.get(&key, "fn a() {}").map(|tree| tree.root_node().to_sexp());
        assert_eq!(
            kept.as_deref(),
            Some(
                "(source_file (function_item name: (identifier) parameters: (parameters) body: (block)))"
            )
        );
        // Another text of the same file is not served the kept tree: it is parsed anew, and
        // its tree replaces the old one.
        assert!(cache.get(&key, "fn b(x: u8) {}").is_none());
        assert!(cache.get(&key, "fn a() {} ").is_none());
        let changed = TreeCache::parse(trees, &file, 0, "fn b(x: u8) {}", Lang::Rust)
            .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(changed.root_node().child(0).map(|n| n.end_byte()), Some(14));
        assert_eq!(cache.kept(), (14, 1));
        assert!(cache.get(&key, "fn a() {}").is_none());
        // Another language, or another block of the file, is another tree.
        let js = TreeCache::parse(trees, &file, 0, "fn b(x: u8) {}", Lang::JavaScript);
        assert!(js.is_ok());
        assert_eq!(cache.kept().1, 2);
    }

    #[test]
    fn a_query_that_may_not_store_keeps_nothing_and_the_budget_holds() {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let cache = TreeCache::default();
        let file = candidate(dir.path(), "a.rs", "fn a() {}");
        let browse = Some(Trees { cache: &cache, store: false });
        assert!(TreeCache::parse(browse, &file, 0, "fn a() {}", Lang::Rust).is_ok());
        assert_eq!(cache.kept(), (0, 0));
        // Texts of half a megabyte each: the oldest go once the budget is full.
        let big = format!("fn a() {{}}\n{}", " ".repeat(MAX_TEXT / 2));
        let store = Some(Trees { cache: &cache, store: true });
        for i in 0..(BUDGET / (MAX_TEXT / 2) + 4) {
            let file = candidate(dir.path(), &format!("f{i}.rs"), "");
            assert!(TreeCache::parse(store, &file, 0, &big, Lang::Rust).is_ok());
        }
        let (bytes, trees) = cache.kept();
        assert!(bytes <= BUDGET, "{bytes} bytes kept");
        assert_eq!(trees, BUDGET / big.len());
        // A tree used again outlives newer trees that were not.
        let first_kept = (0..).find(|i| {
            let file = candidate(dir.path(), &format!("f{i}.rs"), "");
            cache.get(&(file.rel.clone(), Lang::Rust, 0), &big).is_some()
        });
        let Some(reused) = first_kept else { panic!("no tree kept") };
        for i in 100..(100 + trees + 2) {
            let file = candidate(dir.path(), &format!("f{i}.rs"), "");
            assert!(TreeCache::parse(store, &file, 0, &big, Lang::Rust).is_ok());
        }
        let file = candidate(dir.path(), &format!("f{reused}.rs"), "");
        assert!(cache.get(&(file.rel.clone(), Lang::Rust, 0), &big).is_some(), "the reused tree");
        // Over the biggest text kept: parsed, not kept.
        let huge = " ".repeat(MAX_TEXT + 1);
        let file = candidate(dir.path(), "huge.rs", "");
        let before = cache.kept();
        assert!(TreeCache::parse(store, &file, 0, &huge, Lang::Rust).is_ok());
        assert_eq!(cache.kept(), before);
    }
}
