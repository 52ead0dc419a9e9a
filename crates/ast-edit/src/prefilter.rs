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
//! zero-width `;` tokens). Comments may be skipped, so they are never used.
//!
//! Skipping a file therefore never changes the replacements found; the only visible effect is
//! that a file which cannot match is not parsed, so its syntax errors are not reported.

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
    texts: Vec<String>,
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
        texts.dedup();
        texts.sort_by_key(|t| std::cmp::Reverse(t.len()));
        texts.truncate(4);
        Needles { texts }
    }

    /// Whether `haystack` contains every needle.
    pub(crate) fn admits(&self, haystack: &[u8]) -> bool {
        self.texts.iter().all(|t| memchr::memmem::find(haystack, t.as_bytes()).is_some())
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

fn collect(node: &PatternNode, ts_lang: &TSLanguage, keywords: bool, out: &mut Vec<String>) {
    match node {
        PatternNode::MetaVar { .. } => {}
        PatternNode::Terminal { text, is_named: true, kind_id } => {
            let is_comment =
                ts_lang.node_kind_for_id(*kind_id).is_some_and(|k| k.contains("comment"));
            if !is_comment && !text.trim().is_empty() {
                out.push(text.clone());
            }
        }
        PatternNode::Terminal { text, is_named: false, kind_id } => {
            if keywords
                && is_keyword(text)
                && ts_lang.node_kind_for_id(*kind_id) == Some(text.as_str())
            {
                out.push(text.clone());
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

/// A word-like keyword: `[A-Za-z_][A-Za-z0-9_]+`.
fn is_keyword(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
