//! The prefilter: literal texts a file must contain for a pattern to possibly match, so that
//! files lacking them are never parsed.
//!
//! Every named leaf of a pattern (an identifier, a literal) must be matched by a candidate
//! node with the same text under every strictness except `signature`, so each such text is a
//! substring of any file that matches. Unnamed leaves (punctuation, keywords) are compared by
//! kind only and comments may be skipped, so neither is used. Skipping a file therefore never
//! changes the replacements found; the only visible effect is that a file which cannot match is
//! not parsed, so its syntax errors are not reported.

use ast_grep_core::{Pattern, matcher::PatternNode, tree_sitter::LanguageExt};

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
        let mut texts = Vec::new();
        collect(&pattern.node, &ts_lang, &mut texts);
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

fn collect(
    node: &PatternNode,
    ts_lang: &ast_grep_core::tree_sitter::TSLanguage,
    out: &mut Vec<String>,
) {
    match node {
        PatternNode::MetaVar { .. } => {}
        PatternNode::Terminal { text, is_named, kind_id } => {
            let is_comment =
                ts_lang.node_kind_for_id(*kind_id).is_some_and(|k| k.contains("comment"));
            if *is_named && !is_comment && !text.trim().is_empty() {
                out.push(text.clone());
            }
        }
        PatternNode::Internal { children, .. } => {
            for child in children {
                collect(child, ts_lang, out);
            }
        }
    }
}
