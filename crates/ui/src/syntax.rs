//! Highlighting with the tree-sitter grammars staged already links (the ones ast-grep
//! parses with), through `tree-sitter-highlight` (the release built on ast-grep's tree-sitter
//! 0.27) and each grammar's own highlight query: one side of a hunk (its context and removed
//! lines, or its context and added lines) is parsed as a fragment (tree-sitter recovers from
//! the missing rest of the file), the highlights become classes (`k` keyword, `s` string,
//! `c` comment, `n` number or constant, `f` function, `t` type), and each line becomes
//! HTML-escaped text with `<span class>`es.
//!
//! A language without a grammar here, or whose query does not compile, is left to the line
//! lexer of [`crate::highlight`].

use std::sync::OnceLock;

use tree_sitter::Language;
use tree_sitter_highlight::{HighlightConfiguration, HighlightEvent, Highlighter};

use crate::highlight::push_escaped;

/// A grammar this page highlights with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grammar {
    Rust,
    JavaScript,
    TypeScript,
    Tsx,
    Python,
    Go,
    Java,
    C,
    Cpp,
    Ruby,
    Bash,
    Json,
    Css,
}

const GRAMMARS: usize = 13;

impl Grammar {
    /// The grammar of a file, by its extension.
    pub(crate) fn of_path(path: &str) -> Option<Grammar> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match ext.as_str() {
            "rs" => Grammar::Rust,
            "js" | "jsx" | "mjs" | "cjs" => Grammar::JavaScript,
            "ts" | "mts" | "cts" => Grammar::TypeScript,
            "tsx" => Grammar::Tsx,
            "py" | "pyi" => Grammar::Python,
            "go" => Grammar::Go,
            "java" => Grammar::Java,
            "c" | "h" => Grammar::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Grammar::Cpp,
            "rb" => Grammar::Ruby,
            "sh" | "bash" => Grammar::Bash,
            "json" => Grammar::Json,
            "css" => Grammar::Css,
            _ => return None,
        })
    }

    fn index(self) -> usize {
        self as usize
    }

    fn language(self) -> Language {
        match self {
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::Go => tree_sitter_go::LANGUAGE.into(),
            Grammar::Java => tree_sitter_java::LANGUAGE.into(),
            Grammar::C => tree_sitter_c::LANGUAGE.into(),
            Grammar::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Grammar::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Grammar::Bash => tree_sitter_bash::LANGUAGE.into(),
            Grammar::Json => tree_sitter_json::LANGUAGE.into(),
            Grammar::Css => tree_sitter_css::LANGUAGE.into(),
        }
    }

    /// The highlight query: the grammar's own (TypeScript's adds to JavaScript's, as
    /// editors combine them; C++'s to C's).
    fn query_source(self) -> String {
        match self {
            Grammar::Rust => tree_sitter_rust::HIGHLIGHTS_QUERY.to_owned(),
            Grammar::JavaScript => format!(
                "{}\n{}",
                tree_sitter_javascript::HIGHLIGHT_QUERY,
                tree_sitter_javascript::JSX_HIGHLIGHT_QUERY
            ),
            Grammar::TypeScript => format!(
                "{}\n{}",
                tree_sitter_typescript::HIGHLIGHTS_QUERY,
                tree_sitter_javascript::HIGHLIGHT_QUERY
            ),
            Grammar::Tsx => format!(
                "{}\n{}\n{}",
                tree_sitter_typescript::HIGHLIGHTS_QUERY,
                tree_sitter_javascript::HIGHLIGHT_QUERY,
                tree_sitter_javascript::JSX_HIGHLIGHT_QUERY
            ),
            Grammar::Python => tree_sitter_python::HIGHLIGHTS_QUERY.to_owned(),
            Grammar::Go => tree_sitter_go::HIGHLIGHTS_QUERY.to_owned(),
            Grammar::Java => tree_sitter_java::HIGHLIGHTS_QUERY.to_owned(),
            Grammar::C => tree_sitter_c::HIGHLIGHT_QUERY.to_owned(),
            Grammar::Cpp => {
                format!("{}\n{}", tree_sitter_cpp::HIGHLIGHT_QUERY, tree_sitter_c::HIGHLIGHT_QUERY)
            }
            Grammar::Ruby => tree_sitter_ruby::HIGHLIGHTS_QUERY.to_owned(),
            Grammar::Bash => tree_sitter_bash::HIGHLIGHT_QUERY.to_owned(),
            Grammar::Json => tree_sitter_json::HIGHLIGHTS_QUERY.to_owned(),
            Grammar::Css => tree_sitter_css::HIGHLIGHTS_QUERY.to_owned(),
        }
    }

    /// The highlighter's configuration, once per process; `None` when the query does not
    /// compile against the grammar.
    fn config(self) -> Option<&'static HighlightConfiguration> {
        static CONFIGS: [OnceLock<Option<HighlightConfiguration>>; GRAMMARS] =
            [const { OnceLock::new() }; GRAMMARS];
        CONFIGS[self.index()]
            .get_or_init(|| {
                let mut config = HighlightConfiguration::new(
                    self.language(),
                    format!("{self:?}"),
                    &self.query_source(),
                    "",
                    "",
                )
                .ok()?;
                config.configure(&NAMES.map(|(name, _)| name));
                Some(config)
            })
            .as_ref()
    }
}

/// The highlight names recognised (a capture `keyword.control` is `keyword`'s) and the class
/// each becomes.
const NAMES: [(&str, &str); 18] = [
    ("keyword", "k"),
    ("conditional", "k"),
    ("repeat", "k"),
    ("include", "k"),
    ("exception", "k"),
    ("string", "s"),
    ("character", "s"),
    ("escape", "s"),
    ("comment", "c"),
    ("number", "n"),
    ("float", "n"),
    ("boolean", "n"),
    ("constant", "n"),
    ("function", "f"),
    ("method", "f"),
    ("constructor", "f"),
    ("type", "t"),
    ("tag", "t"),
];

/// The lines of one side of a hunk as HTML, highlighted by `grammar`; `None` when the
/// grammar's query does not compile or the text does not parse at all.
pub(crate) fn highlight(grammar: Grammar, lines: &[&str]) -> Option<Vec<String>> {
    let config = grammar.config()?;
    let mut text = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    let mut highlighter = Highlighter::new();
    let events = highlighter.highlight(config, text.as_bytes(), None, None, |_| None).ok()?;
    // Each byte's class: the innermost highlight around it that has one.
    let mut paint: Vec<Option<&'static str>> = vec![None; text.len()];
    let mut open: Vec<Option<&'static str>> = Vec::new();
    for event in events {
        match event.ok()? {
            HighlightEvent::HighlightStart(highlight) => {
                open.push(NAMES.get(highlight.0).map(|(_, class)| *class));
            }
            HighlightEvent::HighlightEnd => {
                open.pop();
            }
            HighlightEvent::Source { start, end } => {
                let class = open.iter().rev().find_map(|c| *c);
                for slot in &mut paint[start.min(text.len())..end.min(text.len())] {
                    *slot = class;
                }
            }
        }
    }
    let mut res = Vec::with_capacity(lines.len());
    let mut offset = 0;
    for line in lines {
        res.push(render(line, &paint[offset..offset + line.len()]));
        offset += line.len() + 1;
    }
    Some(res)
}

/// `line` with runs of one class wrapped in spans. Runs break only on character boundaries.
fn render(line: &str, paint: &[Option<&'static str>]) -> String {
    let mut res = String::with_capacity(line.len() + 16);
    let mut run_start = 0;
    let mut run_class = None;
    let flush = |res: &mut String, from: usize, to: usize, class: Option<&str>| {
        let part = &line[from..to];
        match class {
            Some(class) if !part.is_empty() => {
                res.push_str("<span class=\"");
                res.push_str(class);
                res.push_str("\">");
                push_escaped(res, part);
                res.push_str("</span>");
            }
            _ => push_escaped(res, part),
        }
    };
    for (idx, _) in line.char_indices() {
        let class = paint[idx];
        if class != run_class {
            flush(&mut res, run_start, idx, run_class);
            run_start = idx;
            run_class = class;
        }
    }
    flush(&mut res, run_start, line.len(), run_class);
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammars_query_compiles() {
        for grammar in [
            Grammar::Rust,
            Grammar::JavaScript,
            Grammar::TypeScript,
            Grammar::Tsx,
            Grammar::Python,
            Grammar::Go,
            Grammar::Java,
            Grammar::C,
            Grammar::Cpp,
            Grammar::Ruby,
            Grammar::Bash,
            Grammar::Json,
            Grammar::Css,
        ] {
            assert!(grammar.config().is_some(), "{grammar:?}");
        }
    }

    #[test]
    fn a_rust_fragment_is_highlighted_from_its_syntax_tree() {
        let lines = ["fn a() {", "    let s = \"<b>\"; // x < 2", "}"];
        let html = highlight(Grammar::Rust, &lines).unwrap();
        assert_eq!(html[0], "<span class=\"k\">fn</span> <span class=\"f\">a</span>() {");
        assert_eq!(
            html[1],
            "    <span class=\"k\">let</span> s = <span class=\"s\">&quot;&lt;b&gt;&quot;</span>; <span class=\"c\">// x &lt; 2</span>"
        );
        assert_eq!(html[2], "}");
    }

    #[test]
    fn text_that_is_not_code_stays_escaped_text() {
        let html = highlight(Grammar::Python, &["<script>alert('x')</script> é"]).unwrap();
        assert!(!html[0].contains("<script>"), "{}", html[0]);
        assert!(html[0].contains("&lt;script&gt;"), "{}", html[0]);
        assert!(html[0].ends_with(" é"), "{}", html[0]);
    }
}
