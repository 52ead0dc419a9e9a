//! Code embedded in component files: the `<script>` blocks of Vue, Svelte and Astro files, and
//! the frontmatter (`---` ... `---`) of Astro files.
//!
//! A component file's own grammar sees a `<script>` block as raw text, so a JavaScript or
//! TypeScript pattern would never match inside it. A call whose language is JavaScript,
//! TypeScript or TSX therefore also searches the blocks of that language in the component
//! files in scope, each parsed on its own with that grammar, its edits placed back at the
//! block's offset: everything outside the blocks is left byte for byte.
//!
//! A block's language: `lang="ts"` (or `typescript`) is TypeScript, `lang="tsx"` TSX, and any
//! other or none JavaScript, except in Astro, whose frontmatter and scripts are TypeScript. A
//! `<script type="...">` that is not JavaScript (`application/json`, `text/template`) holds no
//! code and is left alone.

use std::ops::Range;

use ast_grep_core::{
    Node,
    tree_sitter::{LanguageExt, StrDoc},
};

use crate::lang::Lang;

/// Whether files of `lang` embed code blocks ([`script_blocks`]).
pub(crate) fn is_component(lang: Lang) -> bool {
    matches!(lang, Lang::Vue | Lang::Svelte | Lang::Astro)
}

/// Whether `lang` is one that component files embed.
pub(crate) fn is_embeddable(lang: Lang) -> bool {
    matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
}

/// The code blocks of a component file of language `host`, in text order: each one's byte
/// range in `text` and its language.
pub(crate) fn script_blocks(text: &str, host: Lang) -> Vec<(Range<usize>, Lang)> {
    if !is_component(host) {
        return Vec::new();
    }
    let root = host.ast_grep(text);
    let mut res = Vec::new();
    for node in root.root().dfs() {
        match &*node.kind() {
            "script_element" => res.extend(script_block(&node, host)),
            "frontmatter_js_block" if host == Lang::Astro => {
                res.push((node.range(), Lang::TypeScript));
            }
            _ => {}
        }
    }
    res.sort_by_key(|(range, _)| range.start);
    res
}

/// The block of one `<script>` element, if it holds code.
fn script_block(node: &Node<'_, StrDoc<Lang>>, host: Lang) -> Option<(Range<usize>, Lang)> {
    let mut raw = None;
    let mut lang_attr = None;
    let mut type_attr = None;
    for child in node.children() {
        match &*child.kind() {
            "raw_text" => raw = Some(child.range()),
            "start_tag" => {
                for attr in child.children().filter(|a| a.kind() == "attribute") {
                    let (name, value) = attribute(&attr);
                    match name.to_ascii_lowercase().as_str() {
                        "lang" => lang_attr = value,
                        "type" => type_attr = value,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(kind) = type_attr {
        let kind = kind.trim().to_ascii_lowercase();
        let code = ["module", "text/javascript", "application/javascript", "text/typescript"];
        if !code.contains(&kind.as_str()) {
            return None;
        }
    }
    let lang = match lang_attr.map(|l| l.trim().to_ascii_lowercase()).as_deref() {
        Some("ts" | "typescript") => Lang::TypeScript,
        Some("tsx") => Lang::Tsx,
        _ if host == Lang::Astro => Lang::TypeScript,
        _ => Lang::JavaScript,
    };
    Some((raw?, lang))
}

/// An attribute's name and (unquoted) value.
fn attribute(attr: &Node<'_, StrDoc<Lang>>) -> (String, Option<String>) {
    let mut name = String::new();
    let mut value = None;
    for part in attr.children() {
        match &*part.kind() {
            "attribute_name" => name = part.text().into_owned(),
            "attribute_value" => value = Some(part.text().into_owned()),
            "quoted_attribute_value" => {
                let inner = part.text();
                value = Some(inner.trim_matches(|c| c == '"' || c == '\'').to_owned());
            }
            _ => {}
        }
    }
    (name, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_script_blocks_and_their_languages() {
        let vue = "<template><div/></template>\n<script setup lang=\"ts\">\nconst a = 1;\n</script>\n<script>\nvar b = 2;\n</script>\n<script type=\"application/json\">{}</script>\n<style>.a{}</style>\n";
        let blocks: Vec<(&str, Lang)> =
            script_blocks(vue, Lang::Vue).into_iter().map(|(r, l)| (&vue[r], l)).collect();
        assert_eq!(
            blocks,
            [("\nconst a = 1;\n", Lang::TypeScript), ("\nvar b = 2;\n", Lang::JavaScript)]
        );
        let astro = "---\nconst t = 1;\n---\n<h1>{t}</h1>\n<script>\nvar y = 1;\n</script>\n";
        let blocks: Vec<(&str, Lang)> =
            script_blocks(astro, Lang::Astro).into_iter().map(|(r, l)| (&astro[r], l)).collect();
        assert_eq!(
            blocks,
            [("\nconst t = 1;", Lang::TypeScript), ("\nvar y = 1;\n", Lang::TypeScript)]
        );
        let svelte = "<script lang=\"ts\">\n  let c = 0;\n</script>\n<p>{c}</p>\n";
        assert_eq!(script_blocks(svelte, Lang::Svelte).len(), 1);
    }
}
