//! The prefilter: literal texts a file must contain for a pattern to possibly match, so that
//! files lacking them are never parsed.
//!
//! Every named leaf of a pattern (an identifier, a literal) must be matched by a candidate
//! node with the same text under every strictness except `signature`, so each such text is a
//! substring of any file that matches.
//!
//! Unnamed leaves (punctuation, keywords) are compared by kind only, and only `cst` and `smart`
//! never skip them (except right after a `$$$` ellipsis, where trivial leaves are skipped).
//! A keyword's kind is the literal string the grammar lexes it from, so under `cst` and
//! `smart` a required keyword leaf is a needle too: `use $A;` cannot match a Rust file without
//! `use`. This holds only for word-like keywords whose kind name is their text, in grammars
//! whose keywords are case-sensitive literals (no aliases, no zero-width tokens), so it is
//! limited to [`KEYWORD_NEEDLE_LANGS`]; punctuation is never used (JavaScript inserts
//! zero-width `;` tokens). Comments may be skipped, so they are never used. These grammars lex
//! keywords by keyword extraction (the whole identifier-like lexeme must equal the keyword), so
//! a keyword occurrence only counts when no ASCII letter, digit or `_` touches it: `use` in
//! `unused` or `because` does not.
//!
//! Skipping a file therefore never changes the replacements found; the only visible effect is
//! that a file which cannot match is not parsed, so its syntax errors are not reported.
//!
//! The same argument holds inside a file: the node a match starts at spans the leaf that
//! matched each needle, so a subtree whose byte range holds no occurrence of a needle cannot
//! contain a match, and the engine does not walk it ([`Occurrences`]). (The known span bug of
//! tree-sitter-typescript, tree-sitter/tree-sitter-typescript#306, makes spans too wide, with
//! leading whitespace; that only weakens the pruning.) The property tests in
//! `tests/prefilter.rs` and `bench/compare.sh`'s "same edits without prefilter" column compare
//! every result with the prefilter off.

use ast_grep_core::{
    Pattern,
    matcher::PatternNode,
    meta_var::MetaVariable,
    tree_sitter::{LanguageExt, TSLanguage},
};

use crate::{Lang, Strictness};

/// Literal texts all of which a file must contain.
#[derive(Debug, Clone, Default)]
pub(crate) struct Needles {
    texts: Vec<Needle>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Needle {
    text: String,
    /// A keyword: only occurrences not touching a word character count.
    whole_word: bool,
}

/// Where one needle occurs in a file (overlapping occurrences included), to prune subtrees
/// that hold none.
#[derive(Debug, Clone)]
pub(crate) struct Occurrences {
    starts: Vec<usize>,
    len: usize,
}

impl Occurrences {
    /// Whether an occurrence lies wholly inside `range`.
    pub(crate) fn within(&self, range: std::ops::Range<usize>) -> bool {
        let first = self.starts.partition_point(|&s| s < range.start);
        self.starts.get(first).is_some_and(|&s| s + self.len <= range.end)
    }
}

/// What the needles say about one file.
#[derive(Debug)]
pub(crate) enum Located {
    /// A needle is missing: the rule cannot match.
    Missing,
    /// Every needle is present; the rarest one, if any, to prune subtrees with.
    Present(Option<Occurrences>),
}

impl Needles {
    /// The needles of a compiled pattern; none (match everything) for `signature`.
    pub(crate) fn of(pattern: &Pattern, lang: Lang, strictness: Strictness) -> Needles {
        if strictness == Strictness::Signature {
            return Needles::default();
        }
        let ts_lang = lang.get_ts_language();
        let keywords = matches!(strictness, Strictness::Smart | Strictness::Cst)
            && KEYWORD_NEEDLE_LANGS.contains(&lang);
        let mut texts = Vec::new();
        collect(&pattern.node, &ts_lang, keywords, &mut texts);
        texts.sort();
        // A text that is both a plain needle and a keyword counts as plain (the weaker test).
        texts.dedup_by(|later, earlier| later.text == earlier.text);
        texts.sort_by_key(|t| std::cmp::Reverse(t.text.len()));
        texts.truncate(4);
        Needles { texts }
    }

    /// Whether `haystack` contains every needle, and where the rarest one is.
    pub(crate) fn locate(&self, haystack: &[u8]) -> Located {
        let mut best: Option<Occurrences> = None;
        for needle in &self.texts {
            let bytes = needle.text.as_bytes();
            let finder = memchr::memmem::Finder::new(bytes);
            let mut starts = Vec::new();
            let mut from = 0;
            while let Some(at) = haystack.get(from..).and_then(|rest| finder.find(rest)) {
                let start = from + at;
                from = start + 1;
                if needle.whole_word && !stands_alone(haystack, start, bytes.len()) {
                    continue;
                }
                starts.push(start);
            }
            if starts.is_empty() {
                return Located::Missing;
            }
            if best.as_ref().is_none_or(|b| starts.len() < b.starts.len()) {
                best = Some(Occurrences { starts, len: bytes.len() });
            }
        }
        Located::Present(best)
    }
}

/// Languages whose keyword leaves are needles (see the module documentation). Each has a
/// prefilter property test.
const KEYWORD_NEEDLE_LANGS: &[Lang] = &[
    Lang::Rust,
    Lang::JavaScript,
    Lang::TypeScript,
    Lang::Tsx,
    Lang::Python,
    Lang::Go,
    Lang::Java,
];

fn collect(node: &PatternNode, ts_lang: &TSLanguage, keywords: bool, out: &mut Vec<Needle>) {
    match node {
        PatternNode::MetaVar { .. } => {}
        PatternNode::Terminal { text, is_named: true, kind_id } => {
            let is_comment =
                ts_lang.node_kind_for_id(*kind_id).is_some_and(|k| k.contains("comment"));
            if !is_comment && !text.trim().is_empty() {
                out.push(Needle { text: text.clone(), whole_word: false });
            }
        }
        PatternNode::Terminal { text, is_named: false, kind_id } => {
            if keywords
                && is_keyword(text)
                && ts_lang.node_kind_for_id(*kind_id) == Some(text.as_str())
            {
                out.push(Needle { text: text.clone(), whole_word: true });
            }
        }
        PatternNode::Internal { children, .. } => {
            // After an ellipsis, unnamed leaves may be skipped: stop using them.
            let mut after_ellipsis = false;
            for child in children {
                if let PatternNode::MetaVar {
                    meta_var: MetaVariable::Multiple | MetaVariable::MultiCapture(_),
                } = child
                {
                    after_ellipsis = true;
                }
                collect(child, ts_lang, keywords && !after_ellipsis, out);
            }
        }
    }
}

/// Whether `haystack[start..start + len]` touches no ASCII word character. (Only ASCII counts
/// as a word character here, a subset of every grammar's identifier characters, so a real
/// keyword token always passes.)
fn stands_alone(haystack: &[u8], start: usize, len: usize) -> bool {
    let is_word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    !(start.checked_sub(1).and_then(|i| haystack.get(i)).is_some_and(is_word)
        || haystack.get(start + len).is_some_and(is_word))
}

/// A word-like keyword: `[A-Za-z_][A-Za-z0-9_]+`.
fn is_keyword(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_must_lie_wholly_inside_the_range() {
        let occ = Occurrences { starts: vec![4, 10], len: 3 };
        assert!(occ.within(0..7));
        assert!(!occ.within(0..6), "4..7 sticks out of 0..6");
        assert!(!occ.within(5..12), "10..13 sticks out of 5..12");
        assert!(occ.within(5..13));
        assert!(!occ.within(14..20));
    }

    #[test]
    fn overlapping_occurrences_are_all_found() {
        let pattern = Pattern::new("aa", Lang::JavaScript);
        let needles = Needles::of(&pattern, Lang::JavaScript, Strictness::Smart);
        let Located::Present(Some(occ)) = needles.locate(b"x aaa") else {
            panic!("`aa` is in `x aaa`");
        };
        assert_eq!(occ.starts, vec![2, 3]);
        assert!(matches!(needles.locate(b"x a a"), Located::Missing));
    }

    #[test]
    fn keywords_count_only_as_whole_words() {
        let pattern = Pattern::new("use $A;", Lang::Rust);
        let needles = Needles::of(&pattern, Lang::Rust, Strictness::Smart);
        assert!(matches!(needles.locate(b"// unused, because reuse_it"), Located::Missing));
        let Located::Present(Some(occ)) = needles.locate(b"fn unused() {}\nuse a;\n(use)") else {
            panic!("`use` stands alone twice");
        };
        assert_eq!(occ.starts, vec![15, 23]);
        // Not a keyword under `ast`: no needle at all.
        let relaxed = Needles::of(&pattern, Lang::Rust, Strictness::Ast);
        assert!(matches!(relaxed.locate(b"unused"), Located::Present(None)));
    }
}
