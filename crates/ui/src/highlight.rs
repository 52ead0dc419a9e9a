//! Syntax highlighting on the server, small and embedded: a line lexer that knows each
//! language family's comments, strings, numbers and keywords, and marks them with
//! `<span class="k|s|c|n">`. Everything else is HTML-escaped text, so a file's bytes can never
//! become markup. A block comment is carried from one line to the next of the same side of a
//! hunk; a string is not (a diff shows lines, and a wrong guess would colour the rest of a
//! hunk).

/// A language family, by the comments and keywords it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    /// `//` and `/* */` comments: Rust, C, C++, Go, Java, JavaScript, TypeScript, C#, Kotlin,
    /// Swift, Scala, PHP, Dart.
    CLike,
    /// `#` comments: Python, Ruby, shells, TOML, YAML, Perl, R, Elixir, Makefiles.
    Hash,
    /// `--` comments: SQL, Lua, Haskell.
    DoubleDash,
    /// `/* */` comments only: CSS, SCSS.
    Css,
}

const CLIKE_KEYWORDS: &[&str] = &[
    "abstract",
    "as",
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "crate",
    "def",
    "default",
    "defer",
    "delete",
    "do",
    "dyn",
    "else",
    "enum",
    "export",
    "extends",
    "extern",
    "false",
    "final",
    "finally",
    "fn",
    "for",
    "func",
    "function",
    "go",
    "if",
    "impl",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "namespace",
    "new",
    "nil",
    "null",
    "override",
    "package",
    "private",
    "protected",
    "pub",
    "public",
    "ref",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "super",
    "switch",
    "this",
    "throw",
    "throws",
    "trait",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "union",
    "unsafe",
    "use",
    "val",
    "var",
    "void",
    "where",
    "while",
    "yield",
];

const HASH_KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "begin", "break", "case", "class", "continue", "def",
    "del", "do", "done", "elif", "else", "elsif", "end", "esac", "except", "export", "false", "fi",
    "finally", "for", "from", "function", "global", "if", "import", "in", "is", "lambda", "local",
    "module", "nil", "None", "nonlocal", "not", "or", "pass", "raise", "require", "rescue",
    "return", "self", "then", "true", "True", "False", "try", "unless", "until", "while", "with",
    "yield",
];

const DASH_KEYWORDS: &[&str] = &[
    "and", "as", "by", "case", "create", "data", "delete", "do", "else", "elseif", "end", "false",
    "for", "from", "function", "group", "if", "import", "in", "insert", "instance", "into", "join",
    "let", "local", "module", "nil", "not", "null", "of", "on", "or", "order", "repeat", "return",
    "select", "set", "table", "then", "true", "until", "update", "values", "where", "while",
    "with",
];

impl Language {
    /// The family of a file, by its extension or name; `None` when unknown (shown plain).
    pub(crate) fn of_path(path: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        if matches!(name, "Makefile" | "makefile" | "Dockerfile" | "Gemfile" | "Rakefile") {
            return Some(Language::Hash);
        }
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match ext.as_str() {
            "rs" | "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "go" | "java" | "js"
            | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" | "cs" | "kt" | "kts"
            | "swift" | "scala" | "php" | "dart" | "m" | "mm" | "proto" | "zig" | "json"
            | "jsonc" => Language::CLike,
            "py" | "pyi" | "rb" | "sh" | "bash" | "zsh" | "fish" | "toml" | "yaml" | "yml"
            | "pl" | "r" | "ex" | "exs" | "mk" | "cmake" | "ini" | "cfg" | "conf" | "nix" => {
                Language::Hash
            }
            "sql" | "lua" | "hs" => Language::DoubleDash,
            "css" | "scss" | "less" => Language::Css,
            _ => return None,
        })
    }

    fn line_comment(self) -> Option<&'static str> {
        match self {
            Language::CLike => Some("//"),
            Language::Hash => Some("#"),
            Language::DoubleDash => Some("--"),
            Language::Css => None,
        }
    }

    fn block_comment(self) -> Option<(&'static str, &'static str)> {
        match self {
            Language::CLike | Language::Css => Some(("/*", "*/")),
            Language::Hash | Language::DoubleDash => None,
        }
    }

    fn keywords(self) -> &'static [&'static str] {
        match self {
            Language::CLike => CLIKE_KEYWORDS,
            Language::Hash => HASH_KEYWORDS,
            Language::DoubleDash => DASH_KEYWORDS,
            Language::Css => &[],
        }
    }
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped for HTML.
pub(crate) fn escape(text: &str) -> String {
    let mut res = String::with_capacity(text.len());
    push_escaped(&mut res, text);
    res
}

pub(crate) fn push_escaped(res: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => res.push_str("&amp;"),
            '<' => res.push_str("&lt;"),
            '>' => res.push_str("&gt;"),
            '"' => res.push_str("&quot;"),
            '\'' => res.push_str("&#39;"),
            c => res.push(c),
        }
    }
}

fn push_span(res: &mut String, class: &str, text: &str) {
    if text.is_empty() {
        return;
    }
    res.push_str("<span class=\"");
    res.push_str(class);
    res.push_str("\">");
    push_escaped(res, text);
    res.push_str("</span>");
}

/// Highlights the lines of one side of a hunk, in order.
#[derive(Debug)]
pub(crate) struct Highlighter {
    lang: Option<Language>,
    /// Inside a block comment that an earlier line opened.
    in_block: bool,
}

impl Highlighter {
    pub(crate) fn new(lang: Option<Language>) -> Highlighter {
        Highlighter { lang, in_block: false }
    }

    /// `line` as HTML.
    pub(crate) fn line(&mut self, line: &str) -> String {
        let Some(lang) = self.lang else { return escape(line) };
        let mut res = String::with_capacity(line.len() + 16);
        let mut rest = line;
        if self.in_block {
            let Some((_, close)) = lang.block_comment() else {
                self.in_block = false;
                return escape(line);
            };
            match rest.find(close) {
                Some(end) => {
                    push_span(&mut res, "c", &rest[..end + close.len()]);
                    rest = &rest[end + close.len()..];
                    self.in_block = false;
                }
                None => {
                    push_span(&mut res, "c", rest);
                    return res;
                }
            }
        }
        while !rest.is_empty() {
            if let Some(marker) = lang.line_comment()
                && rest.starts_with(marker)
            {
                push_span(&mut res, "c", rest);
                break;
            }
            if let Some((open, close)) = lang.block_comment()
                && rest.starts_with(open)
            {
                match rest[open.len()..].find(close) {
                    Some(end) => {
                        let len = open.len() + end + close.len();
                        push_span(&mut res, "c", &rest[..len]);
                        rest = &rest[len..];
                        continue;
                    }
                    None => {
                        push_span(&mut res, "c", rest);
                        self.in_block = true;
                        break;
                    }
                }
            }
            let Some(c) = rest.chars().next() else { break };
            if c == '"' || c == '\'' || (c == '`' && lang == Language::CLike) {
                let len = string_len(rest, c);
                push_span(&mut res, "s", &rest[..len]);
                rest = &rest[len..];
            } else if c.is_ascii_digit() {
                let len = rest
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.' || ch == '_'))
                    .unwrap_or(rest.len());
                push_span(&mut res, "n", &rest[..len]);
                rest = &rest[len..];
            } else if c.is_alphabetic() || c == '_' {
                let len = rest
                    .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                    .unwrap_or(rest.len());
                let word = &rest[..len];
                if lang.keywords().contains(&word) {
                    push_span(&mut res, "k", word);
                } else {
                    push_escaped(&mut res, word);
                }
                rest = &rest[len..];
            } else {
                push_escaped(&mut res, &rest[..c.len_utf8()]);
                rest = &rest[c.len_utf8()..];
            }
        }
        res
    }
}

/// The length in bytes of the string literal at the start of `text`, which opens with
/// `quote`: up to its closing quote (a backslash escapes one character), or the line's end.
fn string_len(text: &str, quote: char) -> usize {
    let mut escaped = false;
    for (idx, c) in text.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return idx + c.len_utf8();
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_keywords_strings_numbers_and_comments_and_escapes_the_rest() {
        let mut hl = Highlighter::new(Language::of_path("src/a.rs"));
        assert_eq!(
            hl.line("let s = \"<b>\\\"\"; // x < 2"),
            "<span class=\"k\">let</span> s = <span class=\"s\">&quot;&lt;b&gt;\\&quot;&quot;</span>; <span class=\"c\">// x &lt; 2</span>"
        );
        assert_eq!(hl.line("x = 42;"), "x = <span class=\"n\">42</span>;");
    }

    #[test]
    fn a_block_comment_spans_lines() {
        let mut hl = Highlighter::new(Some(Language::CLike));
        assert_eq!(hl.line("a /* b"), "a <span class=\"c\">/* b</span>");
        assert_eq!(hl.line("c */ if"), "<span class=\"c\">c */</span> <span class=\"k\">if</span>");
    }

    #[test]
    fn an_unknown_language_is_plain_escaped_text() {
        assert_eq!(Language::of_path("README"), None);
        let mut hl = Highlighter::new(None);
        assert_eq!(hl.line("<script>if"), "&lt;script&gt;if");
        assert_eq!(Language::of_path("x/y.py"), Some(Language::Hash));
        assert_eq!(Language::of_path("Makefile"), Some(Language::Hash));
    }
}
