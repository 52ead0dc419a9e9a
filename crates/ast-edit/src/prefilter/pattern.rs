//! The needles and pairs of a compiled pattern: its named leaves, and its keyword leaves in
//! the languages where they count.

use ast_grep_core::{matcher::PatternNode, meta_var::MetaVariable, tree_sitter::TSLanguage};

use crate::lang::Lang;

use super::{Needle, Pair};

/// Languages whose keyword leaves are needles (see the module documentation). Each has a
/// prefilter property test.
pub(super) const KEYWORD_NEEDLE_LANGS: &[Lang] = &[
    Lang::Rust,
    Lang::JavaScript,
    Lang::TypeScript,
    Lang::Tsx,
    Lang::Python,
    Lang::Go,
    Lang::Java,
];

/// What [`collect`] needs to know besides the pattern.
pub(super) struct Found<'l> {
    pub(super) lang: Lang,
    pub(super) ts_lang: &'l TSLanguage,
}

pub(super) fn collect(
    node: &PatternNode,
    found: &Found<'_>,
    keywords: bool,
    out: &mut Vec<Needle>,
    pairs: &mut Vec<Pair>,
) {
    let ts_lang = found.ts_lang;
    match node {
        PatternNode::MetaVar { .. } => {}
        PatternNode::Terminal { text, is_named: true, kind_id } => {
            if let Some(text) = plain_needle(text, *kind_id, ts_lang) {
                out.push(Needle { text: text.to_owned(), whole_word: false });
            }
        }
        PatternNode::Terminal { text, is_named: false, kind_id } => {
            if keywords && is_keyword_leaf(text, *kind_id, ts_lang) {
                out.push(Needle { text: text.clone(), whole_word: true });
            }
        }
        PatternNode::Internal { children, kind_id } => {
            let kind = ts_lang.node_kind_for_id(*kind_id).unwrap_or_default();
            // After an ellipsis, unnamed leaves may be skipped: stop using them.
            let mut after_ellipsis = false;
            for (i, child) in children.iter().enumerate() {
                if let PatternNode::MetaVar {
                    meta_var: MetaVariable::Multiple | MetaVariable::MultiCapture(_),
                } = child
                {
                    after_ellipsis = true;
                }
                let keywords = keywords && !after_ellipsis;
                if keywords && let Some(pair) = pair_at(children, i, kind, found) {
                    pairs.push(pair);
                }
                collect(child, found, keywords, out, pairs);
            }
        }
    }
}

/// The text of a named leaf that is a needle: not a comment, not blank.
fn plain_needle<'t>(text: &'t str, kind_id: u16, ts_lang: &TSLanguage) -> Option<&'t str> {
    let is_comment = ts_lang.node_kind_for_id(kind_id).is_some_and(|k| k.contains("comment"));
    (!is_comment && !text.trim().is_empty()).then_some(text)
}

/// The pair that `children[i]` (of a pattern node of kind `kind`) ends and a later sibling
/// starts: a needle leaf (or a node of a [`closed_kind`] that ends with one, as `std::mem`
/// ends with `mem`), then unnamed leaves only, then another needle leaf (or a node that
/// starts with one after unnamed leaves only). So `std::mem::take` gives `std mem` and
/// `mem take`, and prunes at least as well as `mem::take`.
///
/// Or a keyword that [`name_after_keyword`] lists for `kind`, then a metavariable (which
/// binds the name), then what the next sibling starts with: a needle leaf as above, or else
/// its first leaf if that is a keyword or an opening bracket: `function $F($$$P): $R;` gives
/// `function`, a name, then `(`.
fn pair_at(children: &[PatternNode], i: usize, kind: &str, found: &Found<'_>) -> Option<Pair> {
    let (lang, ts_lang) = (found.lang, found.ts_lang);
    let (first, first_keyword) = match &children[i] {
        // A required keyword leaf is matched by a leaf of its kind, so it starts a pair as a
        // named leaf does (`interface` and `Foo` in `interface Foo { $$$B }`).
        PatternNode::Terminal { text, is_named: false, kind_id }
            if is_keyword_leaf(text, *kind_id, ts_lang) =>
        {
            (text.as_str(), true)
        }
        node => (last_needle(node, lang, ts_lang)?, false),
    };
    let rest = &children[i + 1..];
    let next = rest.iter().position(|c| !is_unnamed_leaf(c))?;
    let name = matches!(
        rest[next],
        PatternNode::MetaVar {
            meta_var: MetaVariable::Capture(_, true) | MetaVariable::Dropped(true)
        }
    );
    if first_keyword && name && name_after_keyword(lang, kind, first) {
        let after = &rest[next + 1..];
        let (second, second_keyword, second_token) = after
            .iter()
            .position(|c| !is_unnamed_leaf(c))
            .and_then(|next| first_needle(&after[next], ts_lang))
            .map(|text| (text, false, false))
            .or_else(|| {
                first_token(after.first()?, ts_lang).map(|(text, keyword)| (text, keyword, true))
            })?;
        return Some(Pair {
            first: first.to_owned(),
            first_keyword,
            name_between: true,
            second: second.to_owned(),
            second_keyword,
            second_token,
        });
    }
    let second = first_needle(&rest[next], ts_lang)?;
    Some(Pair {
        first: first.to_owned(),
        first_keyword,
        name_between: false,
        second: second.to_owned(),
        second_keyword: false,
        second_token: false,
    })
}

fn is_unnamed_leaf(node: &PatternNode) -> bool {
    matches!(node, PatternNode::Terminal { is_named: false, .. })
}

/// The first leaf of `node`, if it is an unnamed token usable as a pair's second text: a
/// keyword (`true`), or an opening bracket (no grammar with keyword needles lexes one in
/// its external scanner or aliases another token as one: `bench/closed_kinds.py`).
fn first_token<'p>(node: &'p PatternNode, ts_lang: &TSLanguage) -> Option<(&'p str, bool)> {
    match node {
        PatternNode::Internal { children, .. } => first_token(children.first()?, ts_lang),
        PatternNode::Terminal { text, is_named: false, kind_id } => {
            if is_keyword_leaf(text, *kind_id, ts_lang) {
                Some((text, true))
            } else {
                let opener = matches!(text.as_str(), "(" | "[" | "{");
                (opener && ts_lang.node_kind_for_id(*kind_id) == Some(text))
                    .then_some((text, false))
            }
        }
        _ => None,
    }
}

/// Pattern node kinds in which a keyword is always followed by one name: the first named
/// child after the keyword (comments aside) is an identifier, a single token, so in a
/// candidate only whitespace, comments and that name stand between the keyword and the next
/// child. (A metavariable there binds the name: it matches neither an unnamed leaf nor
/// anything past the name.) Checked against the grammars of the pinned
/// `ast-grep-language` by `bench/closed_kinds.py`.
pub(super) fn name_after_keyword(lang: Lang, kind: &str, keyword: &str) -> bool {
    let listed: &[(&str, &str)] = match lang {
        Lang::Rust => &[
            ("function_item", "fn"),
            ("function_signature_item", "fn"),
            ("struct_item", "struct"),
            ("enum_item", "enum"),
            ("union_item", "union"),
            ("trait_item", "trait"),
            ("mod_item", "mod"),
            ("type_item", "type"),
            ("const_item", "const"),
        ],
        Lang::JavaScript => &[
            ("function_declaration", "function"),
            ("generator_function_declaration", "function"),
            ("class_declaration", "class"),
        ],
        Lang::TypeScript | Lang::Tsx => &[
            ("function_declaration", "function"),
            ("generator_function_declaration", "function"),
            ("function_signature", "function"),
            ("class_declaration", "class"),
            ("abstract_class_declaration", "class"),
            ("interface_declaration", "interface"),
            ("enum_declaration", "enum"),
            ("type_alias_declaration", "type"),
        ],
        Lang::Python => &[("function_definition", "def"), ("class_definition", "class")],
        Lang::Go => &[("function_declaration", "func")],
        Lang::Java => &[
            ("class_declaration", "class"),
            ("interface_declaration", "interface"),
            ("enum_declaration", "enum"),
            ("record_declaration", "record"),
        ],
        _ => &[],
    };
    listed.contains(&(kind, keyword))
}

/// The text of a needle leaf.
fn leaf_needle<'p>(node: &'p PatternNode, ts_lang: &TSLanguage) -> Option<&'p str> {
    match node {
        PatternNode::Terminal { text, is_named: true, kind_id } => {
            plain_needle(text, *kind_id, ts_lang)
        }
        _ => None,
    }
}

/// The needle leaf a candidate node matching `node` ends with: `node` itself, or the last
/// child of a node of a [`closed_kind`], down to a leaf. (A candidate may have children after
/// those its pattern node matched, which `smart` skips, except in a closed kind.)
fn last_needle<'p>(node: &'p PatternNode, lang: Lang, ts_lang: &TSLanguage) -> Option<&'p str> {
    match node {
        PatternNode::Internal { kind_id, children }
            if ts_lang.node_kind_for_id(*kind_id).is_some_and(|kind| closed_kind(lang, kind)) =>
        {
            last_needle(children.last()?, lang, ts_lang)
        }
        _ => leaf_needle(node, ts_lang),
    }
}

/// The needle leaf a candidate node matching `node` starts with, after unnamed leaves only:
/// `node` itself, or the first child of a node that is not an unnamed leaf, down to a leaf.
/// (Before the child that matches a pattern node's first one, a candidate may hold only
/// unnamed nodes and extras, which `smart` skips.)
fn first_needle<'p>(node: &'p PatternNode, ts_lang: &TSLanguage) -> Option<&'p str> {
    match node {
        PatternNode::Internal { children, .. } => {
            let first = children.iter().find(|c| !is_unnamed_leaf(c))?;
            first_needle(first, ts_lang)
        }
        _ => leaf_needle(node, ts_lang),
    }
}

/// Node kinds whose every grammar rule (aliases included) ends with one mandatory symbol, so
/// that the child a pattern's last child matches is the candidate's last (comments aside):
/// paths and member accesses. Checked against the grammars of the pinned
/// `ast-grep-language` by `bench/closed_kinds.py`.
fn closed_kind(lang: Lang, kind: &str) -> bool {
    let kinds: &[&str] = match lang {
        Lang::Rust => &["scoped_identifier", "scoped_type_identifier", "field_expression"],
        Lang::JavaScript => &["member_expression"],
        Lang::TypeScript | Lang::Tsx => &["member_expression", "nested_type_identifier"],
        Lang::Python => &["attribute"],
        Lang::Go => &["selector_expression", "qualified_type"],
        Lang::Java => &["field_access", "scoped_identifier", "scoped_type_identifier"],
        _ => &[],
    };
    kinds.contains(&kind)
}

/// Whether an unnamed pattern leaf is a keyword needle: word-like, and its kind is its text.
fn is_keyword_leaf(text: &str, kind_id: u16, ts_lang: &TSLanguage) -> bool {
    is_keyword(text) && ts_lang.node_kind_for_id(kind_id) == Some(text)
}

/// A word-like keyword: `[A-Za-z_][A-Za-z0-9_]+`.
fn is_keyword(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
