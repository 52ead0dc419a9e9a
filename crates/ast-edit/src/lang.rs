//! `Lang`: the languages this crate compiles in, their case-insensitive aliases, and how a
//! language is inferred from a file name.
//!
//! ast-grep-language ships 28 grammars as `SupportLang`; we wrap them and add grammars of our
//! own (TLA+) behind one `Copy` type that implements ast-grep's `Language`/`LanguageExt`, so the
//! engine never needs to know which crate a grammar came from. Parsing a name we did not compile
//! in is an error value, never a panic.

use std::{borrow::Cow, collections::HashMap, fmt, path::Path, sync::OnceLock};

use ast_grep_core::{
    Pattern, PatternError,
    language::Language,
    matcher::PatternBuilder,
    tree_sitter::{LanguageExt, StrDoc, TSLanguage},
};
use ast_grep_language::SupportLang;

use crate::error::AstEditError;

/// A language compiled into this crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    /// Bash and other POSIX-ish shells.
    Bash,
    /// C.
    C,
    /// C++.
    Cpp,
    /// C#.
    CSharp,
    /// CSS.
    Css,
    /// Dart.
    Dart,
    /// Elixir.
    Elixir,
    /// Go.
    Go,
    /// Haskell.
    Haskell,
    /// HCL (Terraform).
    Hcl,
    /// HTML.
    Html,
    /// Java.
    Java,
    /// JavaScript (and JSX).
    JavaScript,
    /// JSON.
    Json,
    /// Kotlin.
    Kotlin,
    /// Lua.
    Lua,
    /// Markdown.
    Markdown,
    /// Nix.
    Nix,
    /// PHP.
    Php,
    /// Python.
    Python,
    /// Ruby.
    Ruby,
    /// Rust.
    Rust,
    /// Scala.
    Scala,
    /// Solidity.
    Solidity,
    /// Swift.
    Swift,
    /// TSX.
    Tsx,
    /// TypeScript.
    TypeScript,
    /// YAML.
    Yaml,
    /// Zig.
    Zig,
    /// TLA+ and PlusCal (tree-sitter-tlaplus).
    TlaPlus,
    /// CMake (tree-sitter-cmake).
    Cmake,
    /// Unified diffs (tree-sitter-diff).
    Diff,
    /// Emacs Lisp (tree-sitter-elisp).
    EmacsLisp,
    /// Erlang (tree-sitter-erlang).
    Erlang,
    /// Fortran (tree-sitter-fortran).
    Fortran,
    /// GraphQL (tree-sitter-graphql).
    Graphql,
    /// INI (tree-sitter-ini).
    Ini,
    /// Julia (tree-sitter-julia).
    Julia,
    /// Make (tree-sitter-make).
    Make,
    /// Objective-C (tree-sitter-objc).
    ObjC,
    /// OCaml implementation files (tree-sitter-ocaml).
    OCaml,
    /// Odin (tree-sitter-odin).
    Odin,
    /// PowerShell (tree-sitter-powershell).
    PowerShell,
    /// R (tree-sitter-r).
    R,
    /// Regular expressions (tree-sitter-regex).
    Regex,
    /// SQL (tree-sitter-sequel).
    Sql,
    /// Starlark (tree-sitter-starlark).
    Starlark,
    /// TOML (tree-sitter-toml-ng).
    Toml,
    /// Verilog and SystemVerilog (tree-sitter-verilog).
    Verilog,
    /// XML (tree-sitter-xml).
    Xml,
    /// Vue single-file components (arborium-vue).
    Vue,
    /// Svelte components (tree-sitter-svelte-ng).
    Svelte,
    /// Astro components (tree-sitter-astro-next).
    Astro,
    /// Protocol Buffers (tree-sitter-proto).
    Protobuf,
    /// Dockerfiles (arborium-dockerfile).
    Dockerfile,
    /// Clojure, ClojureScript and EDN (arborium-clojure).
    Clojure,
    /// just's justfiles (arborium-just).
    Just,
}

/// Canonical name, aliases (all lower case) and file extensions of each language.
struct LangInfo {
    lang: Lang,
    name: &'static str,
    aliases: &'static [&'static str],
    extensions: &'static [&'static str],
}

const LANGS: &[LangInfo] = &[
    LangInfo {
        lang: Lang::Bash,
        name: "bash",
        aliases: &["sh", "zsh", "shell", "ksh"],
        extensions: &[
            "bash", "bats", "cgi", "command", "env", "fcgi", "ksh", "sh", "tmux", "tool", "zsh",
        ],
    },
    LangInfo { lang: Lang::C, name: "c", aliases: &[], extensions: &["c", "h"] },
    LangInfo {
        lang: Lang::Cpp,
        name: "cpp",
        aliases: &["c++", "cc", "cxx"],
        extensions: &["cc", "hpp", "cpp", "c++", "hh", "cxx", "cu", "ino"],
    },
    LangInfo { lang: Lang::CSharp, name: "csharp", aliases: &["c#", "cs"], extensions: &["cs"] },
    LangInfo { lang: Lang::Css, name: "css", aliases: &["scss"], extensions: &["css", "scss"] },
    LangInfo { lang: Lang::Dart, name: "dart", aliases: &[], extensions: &["dart"] },
    LangInfo {
        lang: Lang::Elixir,
        name: "elixir",
        aliases: &["ex", "exs"],
        extensions: &["ex", "exs"],
    },
    LangInfo { lang: Lang::Go, name: "go", aliases: &["golang"], extensions: &["go"] },
    LangInfo { lang: Lang::Haskell, name: "haskell", aliases: &["hs"], extensions: &["hs"] },
    LangInfo {
        lang: Lang::Hcl,
        name: "hcl",
        aliases: &["tf", "terraform", "tfvars"],
        extensions: &["hcl", "nomad", "tf", "tfvars", "workflow"],
    },
    LangInfo {
        lang: Lang::Html,
        name: "html",
        aliases: &["htm", "xhtml"],
        extensions: &["html", "htm", "xhtml"],
    },
    LangInfo { lang: Lang::Java, name: "java", aliases: &[], extensions: &["java"] },
    LangInfo {
        lang: Lang::JavaScript,
        name: "javascript",
        aliases: &["js", "jsx", "mjs", "cjs"],
        extensions: &["cjs", "js", "mjs", "jsx"],
    },
    LangInfo { lang: Lang::Json, name: "json", aliases: &[], extensions: &["json"] },
    LangInfo {
        lang: Lang::Kotlin,
        name: "kotlin",
        aliases: &["kt", "kts"],
        extensions: &["kt", "ktm", "kts"],
    },
    LangInfo { lang: Lang::Lua, name: "lua", aliases: &[], extensions: &["lua"] },
    LangInfo {
        lang: Lang::Markdown,
        name: "markdown",
        aliases: &["md"],
        extensions: &["markdown", "md"],
    },
    LangInfo { lang: Lang::Nix, name: "nix", aliases: &[], extensions: &["nix"] },
    LangInfo { lang: Lang::Php, name: "php", aliases: &[], extensions: &["php"] },
    LangInfo {
        lang: Lang::Python,
        name: "python",
        aliases: &["py", "pyi", "py3"],
        extensions: &["py", "py3", "pyi", "bzl", "bazel"],
    },
    LangInfo {
        lang: Lang::Ruby,
        name: "ruby",
        aliases: &["rb"],
        extensions: &["rb", "rbw", "gemspec"],
    },
    LangInfo { lang: Lang::Rust, name: "rust", aliases: &["rs"], extensions: &["rs"] },
    LangInfo {
        lang: Lang::Scala,
        name: "scala",
        aliases: &["sc", "sbt"],
        extensions: &["scala", "sc", "sbt"],
    },
    LangInfo { lang: Lang::Solidity, name: "solidity", aliases: &["sol"], extensions: &["sol"] },
    LangInfo { lang: Lang::Swift, name: "swift", aliases: &[], extensions: &["swift"] },
    LangInfo { lang: Lang::Tsx, name: "tsx", aliases: &[], extensions: &["tsx"] },
    LangInfo {
        lang: Lang::TypeScript,
        name: "typescript",
        aliases: &["ts", "mts", "cts"],
        extensions: &["ts", "cts", "mts"],
    },
    LangInfo { lang: Lang::Yaml, name: "yaml", aliases: &["yml"], extensions: &["yaml", "yml"] },
    LangInfo { lang: Lang::Zig, name: "zig", aliases: &[], extensions: &["zig"] },
    LangInfo {
        lang: Lang::TlaPlus,
        name: "tlaplus",
        aliases: &["tla", "tla+", "pluscal", "pcal"],
        extensions: &["tla"],
    },
    LangInfo { lang: Lang::Cmake, name: "cmake", aliases: &[], extensions: &["cmake"] },
    LangInfo {
        lang: Lang::Diff,
        name: "diff",
        aliases: &["patch"],
        extensions: &["diff", "patch"],
    },
    LangInfo {
        lang: Lang::EmacsLisp,
        name: "emacs-lisp",
        aliases: &["elisp", "el", "emacslisp"],
        extensions: &["el"],
    },
    LangInfo { lang: Lang::Erlang, name: "erlang", aliases: &["erl"], extensions: &["erl", "hrl"] },
    LangInfo {
        lang: Lang::Fortran,
        name: "fortran",
        aliases: &["f90", "f95", "f03", "f08"],
        extensions: &["f90", "f95", "f03", "f08", "f", "for", "f77"],
    },
    LangInfo {
        lang: Lang::Graphql,
        name: "graphql",
        aliases: &["gql"],
        extensions: &["graphql", "gql"],
    },
    LangInfo { lang: Lang::Ini, name: "ini", aliases: &[], extensions: &["ini"] },
    LangInfo { lang: Lang::Julia, name: "julia", aliases: &["jl"], extensions: &["jl"] },
    LangInfo {
        lang: Lang::Make,
        name: "make",
        aliases: &["makefile", "mk"],
        extensions: &["mk", "mak", "make"],
    },
    LangInfo {
        lang: Lang::ObjC,
        name: "objc",
        aliases: &["objective-c", "objectivec", "obj-c"],
        extensions: &["m"],
    },
    LangInfo { lang: Lang::OCaml, name: "ocaml", aliases: &["ml"], extensions: &["ml"] },
    LangInfo { lang: Lang::Odin, name: "odin", aliases: &[], extensions: &["odin"] },
    LangInfo {
        lang: Lang::PowerShell,
        name: "powershell",
        aliases: &["ps1", "pwsh", "posh"],
        extensions: &["ps1", "psm1", "psd1"],
    },
    LangInfo { lang: Lang::R, name: "r", aliases: &["rlang"], extensions: &["r"] },
    LangInfo { lang: Lang::Regex, name: "regex", aliases: &["regexp"], extensions: &["regex"] },
    LangInfo { lang: Lang::Sql, name: "sql", aliases: &[], extensions: &["sql"] },
    LangInfo {
        lang: Lang::Starlark,
        name: "starlark",
        aliases: &["star", "skylark"],
        extensions: &["star", "sky"],
    },
    LangInfo { lang: Lang::Toml, name: "toml", aliases: &[], extensions: &["toml"] },
    LangInfo {
        lang: Lang::Verilog,
        name: "verilog",
        aliases: &["systemverilog", "sv"],
        extensions: &["v", "vh", "sv", "svh"],
    },
    LangInfo {
        lang: Lang::Xml,
        name: "xml",
        aliases: &[],
        extensions: &["xml", "xsd", "xsl", "xslt", "svg", "plist"],
    },
    LangInfo { lang: Lang::Vue, name: "vue", aliases: &[], extensions: &["vue"] },
    LangInfo { lang: Lang::Svelte, name: "svelte", aliases: &[], extensions: &["svelte"] },
    LangInfo { lang: Lang::Astro, name: "astro", aliases: &[], extensions: &["astro"] },
    LangInfo {
        lang: Lang::Protobuf,
        name: "protobuf",
        aliases: &["proto", "protocol-buffers"],
        extensions: &["proto"],
    },
    LangInfo {
        lang: Lang::Dockerfile,
        name: "dockerfile",
        aliases: &["docker", "containerfile"],
        extensions: &["dockerfile", "containerfile"],
    },
    LangInfo {
        lang: Lang::Clojure,
        name: "clojure",
        aliases: &["clj", "cljs", "cljc", "edn"],
        extensions: &["clj", "cljs", "cljc", "edn"],
    },
    LangInfo { lang: Lang::Just, name: "just", aliases: &["justfile"], extensions: &["just"] },
];

/// File names (not extensions) that imply a language, compiled in or not. Names of languages
/// we did not compile in are kept so that the error names the language instead of shrugging.
const FILE_NAMES: &[(&str, &str)] = &[
    (".bashrc", "bash"),
    (".bash_profile", "bash"),
    (".bash_login", "bash"),
    (".bash_logout", "bash"),
    (".bash_aliases", "bash"),
    (".profile", "bash"),
    ("profile", "bash"),
    (".zshrc", "bash"),
    (".zshenv", "bash"),
    (".zprofile", "bash"),
    (".zlogin", "bash"),
    (".zlogout", "bash"),
    (".kshrc", "bash"),
    ("bashrc", "bash"),
    ("zshrc", "bash"),
    ("PKGBUILD", "bash"),
    ("Makefile", "make"),
    ("makefile", "make"),
    ("GNUmakefile", "make"),
    ("Justfile", "just"),
    ("justfile", "just"),
    (".justfile", "just"),
    ("CMakeLists.txt", "cmake"),
    ("Containerfile", "dockerfile"),
    (".emacs", "emacs-lisp"),
    ("BUILD", "starlark"),
    ("BUILD.bazel", "starlark"),
    ("WORKSPACE", "starlark"),
];

/// Extensions of languages on the reference list that we could not compile in (see
/// `LANGUAGES.md`); recognised so that naming such a file explains itself. Every language of
/// the list is compiled in now.
const NOT_COMPILED_EXTENSIONS: &[(&str, &str)] = &[];

impl Lang {
    /// Every compiled-in language, in declaration order.
    pub fn all() -> impl Iterator<Item = Lang> {
        LANGS.iter().map(|info| info.lang)
    }

    /// The canonical lower-case name, e.g. `typescript`.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Parses a language name or alias, case-insensitively.
    ///
    /// # Errors
    /// [`AstEditError::UnsupportedLanguage`] for a name we did not compile in.
    pub fn parse(value: &str) -> Result<Lang, AstEditError> {
        let wanted = value.trim().to_lowercase();
        LANGS
            .iter()
            .find(|info| info.name == wanted || info.aliases.contains(&wanted.as_str()))
            .map(|info| info.lang)
            .ok_or_else(|| AstEditError::UnsupportedLanguage {
                value: value.to_owned(),
                supported: supported_aliases().join(", "),
            })
    }

    /// The language a file name implies, if any: by file name first (`Makefile`, `.bashrc`,
    /// `Dockerfile.dev`), then by extension.
    pub fn infer(path: &Path) -> Inferred {
        // A name that is not UTF-8 (`bad\xff.ts`) is still a `.ts` file: the tools decide what
        // to do with it, and say so, rather than leave it out silently.
        let Some(file_name) = path.file_name().map(|n| n.to_string_lossy()) else {
            return Inferred::Unknown;
        };
        let file_name = file_name.as_ref();
        if let Some((_, name)) = FILE_NAMES.iter().find(|(n, _)| *n == file_name) {
            return Inferred::by_name(name);
        }
        let lower = lowercase(file_name);
        if lower.starts_with("dockerfile") || lower.ends_with(".dockerfile") {
            return Inferred::by_name("dockerfile");
        }
        let Some(ext) = path.extension().map(|e| e.to_string_lossy()) else {
            return Inferred::Unknown;
        };
        let ext = ext.as_ref();
        // Every walked file is looked up here, several times per query: by a map, not a scan.
        static BY_EXTENSION: OnceLock<HashMap<&'static str, Lang>> = OnceLock::new();
        let by_extension = BY_EXTENSION.get_or_init(|| {
            let mut map = HashMap::new();
            for info in LANGS {
                for ext in info.extensions {
                    // The first language to claim an extension has it.
                    map.entry(*ext).or_insert(info.lang);
                }
            }
            map
        });
        if let Some(lang) = by_extension.get(ext) {
            return Inferred::Lang(*lang);
        }
        let ext_lower = lowercase(ext);
        if let Some(lang) = by_extension.get(ext_lower.as_ref()) {
            return Inferred::Lang(*lang);
        }
        match NOT_COMPILED_EXTENSIONS.iter().find(|(e, _)| *e == ext_lower) {
            Some((_, name)) => Inferred::NotCompiled(name),
            None => Inferred::Unknown,
        }
    }

    fn info(self) -> &'static LangInfo {
        // Every variant has a row in LANGS; the fallback keeps this total without a panic.
        LANGS.iter().find(|info| info.lang == self).unwrap_or(&LANGS[0])
    }

    fn builtin(self) -> Option<SupportLang> {
        use SupportLang as S;
        Some(match self {
            Lang::Bash => S::Bash,
            Lang::C => S::C,
            Lang::Cpp => S::Cpp,
            Lang::CSharp => S::CSharp,
            Lang::Css => S::Css,
            Lang::Dart => S::Dart,
            Lang::Elixir => S::Elixir,
            Lang::Go => S::Go,
            Lang::Haskell => S::Haskell,
            Lang::Hcl => S::Hcl,
            Lang::Html => S::Html,
            Lang::Java => S::Java,
            Lang::JavaScript => S::JavaScript,
            Lang::Json => S::Json,
            Lang::Kotlin => S::Kotlin,
            Lang::Lua => S::Lua,
            Lang::Markdown => S::Markdown,
            Lang::Nix => S::Nix,
            Lang::Php => S::Php,
            Lang::Python => S::Python,
            Lang::Ruby => S::Ruby,
            Lang::Rust => S::Rust,
            Lang::Scala => S::Scala,
            Lang::Solidity => S::Solidity,
            Lang::Swift => S::Swift,
            Lang::Tsx => S::Tsx,
            Lang::TypeScript => S::TypeScript,
            Lang::Yaml => S::Yaml,
            Lang::Zig => S::Zig,
            _ => return None,
        })
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a file name says about its language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inferred {
    /// A compiled-in language.
    Lang(Lang),
    /// A language on the reference list that this build does not include, by canonical name.
    NotCompiled(&'static str),
    /// Nothing recognisable.
    Unknown,
}

impl Inferred {
    fn by_name(name: &'static str) -> Inferred {
        match LANGS.iter().find(|info| info.name == name) {
            Some(info) => Inferred::Lang(info.lang),
            None => Inferred::NotCompiled(name),
        }
    }
}

/// `text` lowercased, without a copy when it has no uppercase letter.
fn lowercase(text: &str) -> Cow<'_, str> {
    if text.is_ascii() && !text.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.to_lowercase())
    }
}

/// Every accepted name and alias, sorted: the list in `Unsupported language` errors.
pub(crate) fn supported_aliases() -> Vec<&'static str> {
    let mut res: Vec<&'static str> = LANGS
        .iter()
        .flat_map(|info| std::iter::once(info.name).chain(info.aliases.iter().copied()))
        .collect();
    res.sort_unstable();
    res.dedup();
    res
}

/// The grammar of a language we add ourselves, and the character that stands for `$` in
/// its patterns: `$` itself where the grammar's identifiers accept it (or `$` has no other
/// meaning), else a character its identifiers do accept.
fn extra_grammar(lang: Lang) -> (TSLanguage, char) {
    match lang {
        Lang::Cmake => (tree_sitter_cmake::LANGUAGE.into(), '_'),
        Lang::Diff => (tree_sitter_diff::LANGUAGE.into(), '$'),
        Lang::EmacsLisp => (tree_sitter_elisp::LANGUAGE.into(), '$'),
        Lang::Erlang => (tree_sitter_erlang::LANGUAGE.into(), '_'),
        Lang::Fortran => (tree_sitter_fortran::LANGUAGE.into(), '$'),
        Lang::Graphql => (tree_sitter_graphql::LANGUAGE.into(), '_'),
        Lang::Ini => (tree_sitter_ini::LANGUAGE.into(), '$'),
        Lang::Julia => (tree_sitter_julia::LANGUAGE.into(), 'µ'),
        Lang::Make => (tree_sitter_make::LANGUAGE.into(), '_'),
        Lang::ObjC => (tree_sitter_objc::LANGUAGE.into(), '𐀀'),
        Lang::OCaml => (tree_sitter_ocaml::LANGUAGE_OCAML.into(), '_'),
        Lang::Odin => (tree_sitter_odin::LANGUAGE.into(), 'µ'),
        Lang::PowerShell => (tree_sitter_powershell::LANGUAGE.into(), '_'),
        Lang::R => (tree_sitter_r::LANGUAGE.into(), 'µ'),
        Lang::Regex => (tree_sitter_regex::LANGUAGE.into(), '$'),
        Lang::Sql => (tree_sitter_sequel::LANGUAGE.into(), '_'),
        Lang::Starlark => (tree_sitter_starlark::LANGUAGE.into(), 'µ'),
        Lang::Toml => (tree_sitter_toml_ng::LANGUAGE.into(), '_'),
        Lang::Verilog => (tree_sitter_verilog::LANGUAGE.into(), '_'),
        Lang::Xml => (tree_sitter_xml::LANGUAGE_XML.into(), '_'),
        Lang::Vue => (arborium_vue::language().into(), '$'),
        Lang::Svelte => (tree_sitter_svelte_ng::LANGUAGE.into(), '$'),
        Lang::Astro => (tree_sitter_astro_next::LANGUAGE.into(), '$'),
        Lang::Protobuf => (tree_sitter_proto::LANGUAGE.into(), '_'),
        Lang::Dockerfile => (arborium_dockerfile::language().into(), '$'),
        Lang::Clojure => (arborium_clojure::language().into(), '$'),
        Lang::Just => (arborium_just::language().into(), '_'),
        // TLA+ identifiers are ASCII letters, digits and `_`.
        _ => (tree_sitter_tlaplus::LANGUAGE.into(), '_'),
    }
}

/// Replaces the `$` of metavariables (`$A`, `$$A`, `$$$A`, `$$$`) with `expando`.
fn expand_metavars(expando: char, query: &str) -> String {
    let mut res = String::with_capacity(query.len());
    let mut dollars = 0usize;
    for c in query.chars() {
        if c == '$' {
            dollars += 1;
            continue;
        }
        let sigil = if c.is_ascii_uppercase() || c == '_' || dollars == 3 { expando } else { '$' };
        res.extend(std::iter::repeat_n(sigil, dollars));
        dollars = 0;
        res.push(c);
    }
    let sigil = if dollars == 3 { expando } else { '$' };
    res.extend(std::iter::repeat_n(sigil, dollars));
    res
}

impl Language for Lang {
    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        match self.builtin() {
            Some(lang) => lang.pre_process_pattern(query),
            None => match self.expando_char() {
                '$' => Cow::Borrowed(query),
                expando => Cow::Owned(expand_metavars(expando, query)),
            },
        }
    }

    fn expando_char(&self) -> char {
        match self.builtin() {
            Some(lang) => lang.expando_char(),
            None => extra_grammar(*self).1,
        }
    }

    fn from_path<P: AsRef<Path>>(path: P) -> Option<Self> {
        match Lang::infer(path.as_ref()) {
            Inferred::Lang(lang) => Some(lang),
            Inferred::NotCompiled(_) | Inferred::Unknown => None,
        }
    }

    fn kind_to_id(&self, kind: &str) -> u16 {
        self.get_ts_language().id_for_node_kind(kind, true)
    }

    fn field_to_id(&self, field: &str) -> Option<u16> {
        self.get_ts_language().field_id_for_name(field).map(|f| f.get())
    }

    fn build_pattern(&self, builder: &PatternBuilder) -> Result<Pattern, PatternError> {
        builder.build(|src| StrDoc::try_new(src, *self))
    }
}

impl LanguageExt for Lang {
    fn get_ts_language(&self) -> TSLanguage {
        match self.builtin() {
            Some(lang) => lang.get_ts_language(),
            None => extra_grammar(*self).0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_an_info_row() {
        for info in LANGS {
            assert_eq!(info.lang.name(), info.name);
        }
        assert_eq!(LANGS.len(), 57);
    }

    #[test]
    fn expands_metavariables() {
        assert_eq!(expand_metavars('_', "f($A, $$$ARGS, $$$, $a)"), "f(_A, ___ARGS, ___, $a)");
    }
}
