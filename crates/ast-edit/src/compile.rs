//! Compiling rules: a pattern (optionally contextual, with a strictness) and its replacement
//! template, for one language, plus the pattern's prefilter needles.

use std::panic::AssertUnwindSafe;

use ast_grep_config::Fixer;
use ast_grep_core::{
    Language, Matcher, Node, NodeMatch, Pattern,
    matcher::MatcherExt,
    replacer::TemplateFix,
    tree_sitter::{LanguageExt, StrDoc},
};

use crate::{
    lang::Lang,
    params::Strictness,
    prefilter::{ErrorTrees, Located, Needles, Occurrences},
};

/// The deepest pattern syntax tree accepted. ast-grep builds and matches a pattern by
/// recursion over its tree, so a deeper one (`((((…x…))))`, `a + a + … + a`) could overflow
/// a worker thread's stack, which aborts the process instead of failing the call. No pattern
/// written for real code comes near this.
pub(crate) const MAX_PATTERN_DEPTH: usize = 256;

/// A compiled rewrite rule.
pub(crate) struct Rule {
    /// The pattern as given.
    pub(crate) source: String,
    /// The compiled pattern.
    pub(crate) pattern: Pattern,
    /// The compiled replacement, if this rule rewrites.
    pub(crate) fixer: Option<Fixer>,
    /// Literal texts a file must contain to possibly match.
    pub(crate) needles: Needles,
    /// The metavariables the replacement uses (a match nested in one of their captures is
    /// rewritten inside it).
    pub(crate) used_vars: Vec<String>,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("source", &self.source).finish_non_exhaustive()
    }
}

/// The rules that may match `text`, each with the needle occurrences to prune its walk with;
/// without `prefilter`, every rule, unpruned.
pub(crate) fn active_rules<'a>(
    rules: &'a [Rule],
    text: &str,
    prefilter: bool,
) -> Vec<(&'a Rule, Option<Occurrences>)> {
    if !prefilter {
        return rules.iter().map(|r| (r, None)).collect();
    }
    rules
        .iter()
        .filter_map(|r| match r.needles.locate(text.as_bytes()) {
            Located::Missing => None,
            Located::Present(prune) => Some((r, prune)),
        })
        .collect()
}

impl Rule {
    /// Hands the first `cap` matches under `root` to `on_match`, in pre-order, nested matches
    /// included (like ast-grep's `find_all`); the walk stops at the cap. With `prune`, subtrees
    /// whose byte range holds no occurrence of that needle are not walked: they cannot contain a
    /// match (see the prefilter module).
    ///
    /// This is where ast-grep matches, so a panic inside it stops here: it becomes the reason
    /// this file could not be searched, not a dead worker. (ast-grep 0.51.1 has a debug
    /// assertion, "Ellipsis should be matched in parent level", that `<$$$$A` under `ast`
    /// strictness reaches.)
    pub(crate) fn each_match<'r>(
        &self,
        root: Node<'r, StrDoc<Lang>>,
        prune: Option<&Occurrences>,
        cap: usize,
        on_match: impl FnMut(NodeMatch<'r, StrDoc<Lang>>),
    ) -> Result<(), String> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.walk(root, prune, cap, on_match)))
            .map_err(|payload| {
                let why = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                format!("ast-grep failed while matching `{}`: {why}", self.source)
            })
    }

    /// The byte ranges of `m`'s captures that the replacement uses.
    pub(crate) fn used_capture_ranges(
        &self,
        m: &NodeMatch<'_, StrDoc<Lang>>,
    ) -> Vec<std::ops::Range<usize>> {
        let env = m.get_env();
        self.used_vars
            .iter()
            .filter_map(|var| match env.get_match(var) {
                Some(node) => Some(node.range()),
                None => {
                    let nodes = env.get_multiple_matches(var);
                    match (nodes.first(), nodes.last()) {
                        (Some(first), Some(last)) => Some(first.range().start..last.range().end),
                        _ => None,
                    }
                }
            })
            .collect()
    }

    fn walk<'r>(
        &self,
        root: Node<'r, StrDoc<Lang>>,
        prune: Option<&Occurrences>,
        cap: usize,
        mut on_match: impl FnMut(NodeMatch<'r, StrDoc<Lang>>),
    ) {
        let Some(prune) = prune else {
            root.find_all(&self.pattern).take(cap).for_each(on_match);
            return;
        };
        if cap == 0 || !prune.within(root.range()) {
            return;
        }
        let kinds = self.pattern.potential_kinds();
        let doc = root.root();
        // One tree cursor for the whole walk: a cursor per node (what `Node::children` makes)
        // cost more than the matching on a big file.
        let mut cursor = root.get_inner_node().walk();
        // The end bytes of the cursor's ancestors below `root`.
        let mut ends: Vec<usize> = Vec::new();
        let mut found = 0;
        'visit: loop {
            let node = cursor.node();
            if kinds.as_ref().is_none_or(|k| k.contains(usize::from(node.kind_id())))
                && let Some(m) = self.pattern.match_node(doc.adopt(node))
            {
                on_match(m);
                found += 1;
                if found == cap {
                    return;
                }
            }
            // Down to the first child that may hold a match (the children that end before the
            // node's first occurrence cannot, and are not visited)...
            if let Some(next) = prune.first_from(node.start_byte())
                && cursor.goto_first_child_for_byte(next).is_some()
            {
                ends.push(node.end_byte());
                loop {
                    if prune.within(cursor.node().byte_range()) {
                        continue 'visit;
                    }
                    if !cursor.goto_next_sibling() {
                        break;
                    }
                }
                cursor.goto_parent();
                ends.pop();
            }
            // ...else across to the next one, of this node or of the nearest ancestor. The
            // nodes after this one start where it ends or later, so a parent whose rest holds
            // no occurrence is left without visiting its children, and the walk ends once no
            // occurrence is left.
            let mut end = node.end_byte();
            if prune.first_from(end).is_none() {
                return;
            }
            while let Some(&parent_end) = ends.last() {
                if prune.within(end..parent_end) {
                    while cursor.goto_next_sibling() {
                        if prune.within(cursor.node().byte_range()) {
                            continue 'visit;
                        }
                    }
                }
                cursor.goto_parent();
                ends.pop();
                end = parent_end;
            }
            return;
        }
    }
}

/// Compiles `(pattern, replacement)` pairs; a pattern that does not compile becomes a
/// `"<pattern>: <error>"` entry in `errors`, which the callers refuse as `Invalid pattern`
/// (`docs/contract/ast-edit.md#patterns`). `error_trees`: what becomes of files whose syntax
/// tree has errors (the prefilter's pairs depend on it).
pub(crate) fn compile_rules(
    rules: &[(String, Option<String>)],
    lang: Lang,
    selector: Option<&str>,
    strictness: Strictness,
    error_trees: ErrorTrees,
    errors: &mut Vec<String>,
) -> Vec<Rule> {
    let mut res = Vec::with_capacity(rules.len());
    for (pat, out) in rules {
        if nested_deeper_than(pat, lang, MAX_PATTERN_DEPTH) {
            errors.push(format!(
                "{pat}: nested more than {MAX_PATTERN_DEPTH} levels deep; split it into smaller patterns"
            ));
            continue;
        }
        let pattern = match selector {
            Some(sel) => Pattern::contextual(pat, sel, lang),
            None => Pattern::try_new(pat, lang),
        };
        let pattern = match pattern {
            // tree-sitter recovers from syntax errors, so a truncated pattern (`foo(`) still
            // compiles and silently matches nothing. Some valid patterns also parse with an
            // error root (a metavariable where the grammar wants a literal), so only an error
            // root with unbalanced brackets is refused.
            Ok(p) if p.has_error() && !brackets_balanced(pat) => {
                errors.push(format!("{pat}: not valid {lang} code (unbalanced brackets)"));
                continue;
            }
            Ok(p) => p.with_strictness(strictness.to_ast_grep()),
            Err(err) => {
                errors.push(format!("{pat}: {err}"));
                continue;
            }
        };
        if let Some(out) = out
            && let Some(unbound) = unbound_vars(&pattern, out, lang)
        {
            errors.push(format!("{pat}: {unbound}"));
            continue;
        }
        let fixer = match out {
            Some(out) => match Fixer::from_str(out, &lang) {
                Ok(f) => Some(f),
                Err(err) => {
                    errors.push(format!("{pat}: invalid replacement: {err}"));
                    continue;
                }
            },
            None => None,
        };
        let needles = Needles::of(&pattern, lang, strictness, error_trees);
        let used_vars = out
            .as_deref()
            .map(|out| {
                let mut vars: Vec<String> = TemplateFix::with_transform(out, &lang, &[])
                    .used_vars()
                    .into_iter()
                    .map(str::to_owned)
                    .collect();
                vars.sort_unstable();
                vars
            })
            .unwrap_or_default();
        res.push(Rule { source: pat.clone(), pattern, fixer, needles, used_vars });
    }
    res
}

/// Says which metavariables the replacement `out` uses that `pattern` does not bind, or
/// `None` when it binds them all. ast-grep would replace an unbound one with nothing, which
/// stages broken code (`seed.deserialize(.expect("x"))`) without a word.
fn unbound_vars(pattern: &Pattern, out: &str, lang: Lang) -> Option<String> {
    let defined = pattern.defined_vars();
    let template = TemplateFix::with_transform(out, &lang, &[]);
    let mut unbound: Vec<&str> =
        template.used_vars().into_iter().filter(|var| !defined.contains(var)).collect();
    if unbound.is_empty() {
        return None;
    }
    unbound.sort_unstable();
    let dollar = |vars: &[&str]| vars.iter().map(|v| format!("${v}")).collect::<Vec<_>>();
    let mut bound: Vec<&str> = defined.into_iter().collect();
    bound.sort_unstable();
    let binds = if bound.is_empty() {
        "it binds none".to_owned()
    } else {
        format!("it binds {}", dollar(&bound).join(", "))
    };
    let (noun, verb) =
        if unbound.len() == 1 { ("metavariable", "is") } else { ("metavariables", "are") };
    Some(format!(
        "the rewrite uses {noun} {} that {verb} not bound by the pattern ({binds})",
        dollar(&unbound).join(", ")
    ))
}

/// Whether `pat`'s syntax tree, as ast-grep will parse it, is deeper than `limit`. A cursor
/// walk: no recursion, and constant work per node.
pub(crate) fn nested_deeper_than(pat: &str, lang: Lang, limit: usize) -> bool {
    let root = lang.ast_grep(lang.pre_process_pattern(pat));
    let mut cursor = root.root().get_inner_node().walk();
    let mut depth = 0usize;
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            if depth > limit {
                return true;
            }
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return false;
            }
            depth -= 1;
        }
    }
}

/// Whether `()`, `[]` and `{}` nest properly in `text`, ignoring quoted strings.
fn brackets_balanced(text: &str) -> bool {
    let mut stack = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for ch in text.chars() {
        if let Some(q) = quote {
            match ch {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                c if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' | '\'' | '`' => quote = Some(ch),
            '(' => stack.push(')'),
            '[' => stack.push(']'),
            '{' => stack.push('}'),
            ')' | ']' | '}' if stack.pop() != Some(ch) => return false,
            _ => {}
        }
    }
    stack.is_empty()
}

#[cfg(test)]
mod tests {
    use super::brackets_balanced;

    #[test]
    fn brackets_balance_outside_strings() {
        for ok in ["foo($A)", "a[b](c){d}", "f(\")\")", "x = '{'", "name = $V", "`(`"] {
            assert!(brackets_balanced(ok), "{ok}");
        }
        for bad in ["foo(", "class {", "a)", "(]", "f(\"x\""] {
            assert!(!brackets_balanced(bad), "{bad}");
        }
    }
}
