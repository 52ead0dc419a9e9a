//! Compiling rules: a pattern (optionally contextual, with a strictness) and its replacement
//! template, for one language, plus the pattern's prefilter needles.

use ast_grep_config::Fixer;
use ast_grep_core::{Matcher, Node, NodeMatch, Pattern, matcher::MatcherExt, tree_sitter::StrDoc};

use crate::{
    Lang, Strictness,
    prefilter::{Located, Needles, Occurrences},
};

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
    /// The first `cap` matches under `root`, in pre-order, nested matches included (like
    /// ast-grep's `find_all`); the walk stops at the cap. With `prune`, subtrees whose byte
    /// range holds no occurrence of that needle are not walked: they cannot contain a match
    /// (see the prefilter module).
    pub(crate) fn matches<'r>(
        &self,
        root: Node<'r, StrDoc<Lang>>,
        prune: Option<&Occurrences>,
        cap: usize,
    ) -> Vec<NodeMatch<'r, StrDoc<Lang>>> {
        let Some(prune) = prune else {
            return root.find_all(&self.pattern).take(cap).collect();
        };
        let kinds = self.pattern.potential_kinds();
        let mut found = Vec::new();
        if !prune.within(root.range()) {
            return found;
        }
        let mut stack = vec![root];
        while found.len() < cap
            && let Some(node) = stack.pop()
        {
            if kinds.as_ref().is_none_or(|k| k.contains(usize::from(node.kind_id())))
                && let Some(m) = self.pattern.match_node(node.clone())
            {
                found.push(m);
            }
            let mark = stack.len();
            stack.extend(node.children().filter(|child| prune.within(child.range())));
            stack[mark..].reverse();
        }
        found
    }
}

/// Compiles `(pattern, replacement)` pairs; a pattern that does not compile becomes a
/// `"<pattern>: <error>"` entry in `errors` (the reference records them as parse issues).
pub(crate) fn compile_rules(
    rules: &[(String, Option<String>)],
    lang: Lang,
    selector: Option<&str>,
    strictness: Strictness,
    errors: &mut Vec<String>,
) -> Vec<Rule> {
    let mut res = Vec::with_capacity(rules.len());
    for (pat, out) in rules {
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
        let needles = Needles::of(&pattern, lang, strictness);
        res.push(Rule { source: pat.clone(), pattern, fixer, needles });
    }
    res
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
