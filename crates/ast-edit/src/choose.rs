//! Which languages a call without `lang` means, when its paths hold files of several.
//!
//! A pattern is meant for the languages it parses in without error nodes: `$X.unwrap()` is
//! Rust, not the TOML or Markdown beside it in a crate, and `var $A = $B` is JavaScript, not
//! the `tsconfig.json` next to it. Data and document languages ([`is_data`]) are left out too,
//! unless they are asked for: a file of theirs named explicitly, or no code language left.
//! Where the pattern parses cleanly in none of the languages found, every one is kept, and the
//! callers report as they did before this choice existed (an invalid pattern, or the
//! languages to choose from).

use ast_grep_core::{Language, Pattern, tree_sitter::LanguageExt};

use crate::{
    compile::{MAX_PATTERN_DEPTH, nested_deeper_than},
    lang::Lang,
    source::error_node_under,
};

/// Data and document languages: JSON, YAML, TOML, INI, XML, HTML, Markdown and unified
/// diffs, and the markup of component files (Vue, Svelte, Astro: their code blocks count as
/// their own languages, see [`crate::embed`]). Code parses in some of them without being meant for them: almost any text is a YAML
/// scalar, an HTML text node or a Markdown paragraph, and `$A = $B` is valid TOML and INI.
pub(crate) fn is_data(lang: Lang) -> bool {
    matches!(
        lang,
        Lang::Json
            | Lang::Yaml
            | Lang::Toml
            | Lang::Ini
            | Lang::Xml
            | Lang::Html
            | Lang::Markdown
            | Lang::Diff
            | Lang::Vue
            | Lang::Svelte
            | Lang::Astro
    )
}

/// Whether every pattern compiles for `lang` and its syntax tree holds no error node, and no
/// missing node but at its very end (the `;` that a Rust or C expression pattern leaves out,
/// which ast-grep ignores).
pub(crate) fn parses_cleanly(patterns: &[&str], lang: Lang, selector: Option<&str>) -> bool {
    patterns.iter().all(|pat| {
        // ast-grep builds a pattern by recursion: one too deep to compile is judged by its
        // syntax tree alone, and refused later, where it is compiled for the language chosen.
        if nested_deeper_than(pat, lang, MAX_PATTERN_DEPTH) {
            return !broken(&lang.pre_process_pattern(pat), lang);
        }
        let compiled = match selector {
            Some(sel) => Pattern::contextual(pat, sel, lang),
            None => Pattern::try_new(pat, lang),
        };
        let text = lang.pre_process_pattern(pat);
        compiled.is_ok_and(|p| !p.has_error())
            && !broken(&text, lang)
            && (!is_markup(lang) || holds_element(&text, lang))
    })
}

/// Whether `text`'s syntax tree (in a markup language) holds an element or a tag.
fn holds_element(text: &str, lang: Lang) -> bool {
    let root = lang.ast_grep(text);
    root.root().dfs().any(|node| {
        let kind = node.kind();
        kind.ends_with("element") || kind.ends_with("tag")
    })
}

/// Whether `text`'s syntax tree holds an error node, or a missing node before its end.
fn broken(text: &str, lang: Lang) -> bool {
    let root = lang.ast_grep(text);
    let top = root.root().get_inner_node();
    if !top.has_error() {
        return false;
    }
    let end = text.trim_end().len();
    error_node_under(top, |node| node.is_error() || (node.is_missing() && node.start_byte() < end))
}

/// The languages of `found` (sorted, without duplicates) that the patterns are meant for;
/// `asked` are the languages of the files named explicitly. With one language found, it is
/// kept whatever the pattern. A language asked for that the patterns fit is preferred.
pub(crate) fn meant_languages(
    found: &[Lang],
    asked: &[Lang],
    patterns: &[&str],
    selector: Option<&str>,
) -> Vec<Lang> {
    if found.len() <= 1 {
        return found.to_vec();
    }
    let clean: Vec<Lang> =
        found.iter().copied().filter(|&l| parses_cleanly(patterns, l, selector)).collect();
    if clean.is_empty() {
        return found.to_vec();
    }
    // A language asked for (a file of it named) that the patterns fit wins.
    let chosen: Vec<Lang> = clean.iter().copied().filter(|l| asked.contains(l)).collect();
    if !chosen.is_empty() {
        return chosen;
    }
    let code: Vec<Lang> = clean.iter().copied().filter(|&l| !is_data(l)).collect();
    if code.is_empty() { clean } else { code }
}

/// Whether `lang` is markup, whose grammar reads any text as a text node: a pattern is meant
/// for it only when it holds an element.
fn is_markup(lang: Lang) -> bool {
    matches!(lang, Lang::Html | Lang::Xml | Lang::Vue | Lang::Svelte | Lang::Astro)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_pattern_means_rust_among_a_crates_languages() {
        let found = [Lang::Markdown, Lang::Rust, Lang::Toml];
        assert_eq!(meant_languages(&found, &[], &["$X.unwrap()"], None), [Lang::Rust]);
        assert!(!parses_cleanly(&["$X.unwrap()"], Lang::Bash, None), "a subshell missing a word");
        // A data language is chosen when a file of it is named, if the pattern fits it.
        let found = [Lang::Json, Lang::JavaScript];
        assert_eq!(meant_languages(&found, &[], &["\"$K\""], None), [Lang::JavaScript]);
        assert_eq!(meant_languages(&found, &[Lang::Json], &["\"$K\""], None), [Lang::Json]);
        // Markup is meant only by a pattern with an element in it: any text is a text node.
        let found = [Lang::Html, Lang::JavaScript];
        assert_eq!(meant_languages(&found, &[Lang::Html], &["foo($A)"], None), [Lang::JavaScript]);
        assert_eq!(meant_languages(&found, &[Lang::Html], &["<b>$A</b>"], None), [Lang::Html]);
    }

    #[test]
    fn a_pattern_of_several_code_languages_keeps_them_all() {
        let found = [Lang::JavaScript, Lang::Json, Lang::TypeScript];
        assert_eq!(
            meant_languages(&found, &[], &["var $A = $B"], None),
            [Lang::JavaScript, Lang::TypeScript]
        );
    }

    #[test]
    fn a_pattern_that_fits_none_keeps_every_language() {
        let found = [Lang::JavaScript, Lang::Rust];
        assert_eq!(meant_languages(&found, &[], &["foo("], None), found);
    }
}
