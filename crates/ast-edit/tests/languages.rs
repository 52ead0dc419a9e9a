//! Every compiled-in language: a rewrite in a file whose language is inferred from its name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use staged_ast_edit::{AstEditParams, Lang, Op, compute_preview};

/// Rewrites `pat` to `out` in `file` (language inferred) and checks the result.
fn check(lang: Lang, file: &str, source: &str, pat: &str, out: &str, expected: &str) {
    let fx = Fixture::new(&[(file, source)]);
    let params = AstEditParams {
        ops: vec![Op { pat: pat.to_owned(), out: out.to_owned() }],
        paths: vec![file.to_owned()],
        lang: None,
        selector: None,
        strictness: None,
        limit: None,
        max_files: None,
        include_parse_errors: None,
    };
    let preview = compute_preview(&fx.workspace, &params.validate().unwrap(), None).unwrap();
    assert_eq!(preview.lang, lang);
    assert!(preview.parse_errors.is_empty(), "{:?}", preview.parse_errors);
    assert_eq!(preview.total_replacements(), 1, "{lang}: {source:?}");
    assert_eq!(preview.files[0].updated(), Some(expected));
}

macro_rules! lang_test {
    ($name:ident, $lang:expr, $file:expr, $src:expr, $pat:expr, $out:expr, $expected:expr) => {
        #[test]
        fn $name() {
            check($lang, $file, $src, $pat, $out, $expected);
        }
    };
}

lang_test!(bash, Lang::Bash, "run.sh", "greet world\n", "greet $A", "hello $A", "hello world\n");
lang_test!(
    bash_rc_file,
    Lang::Bash,
    ".bashrc",
    "greet world\n",
    "greet $A",
    "hello $A",
    "hello world\n"
);
lang_test!(
    c,
    Lang::C,
    "a.c",
    "int main() { foo(1); return 0; }\n",
    "foo($A);",
    "bar($A);",
    "int main() { bar(1); return 0; }\n"
);
lang_test!(
    cpp,
    Lang::Cpp,
    "a.cpp",
    "int main() { foo(1); }\n",
    "foo($A)",
    "bar($A)",
    "int main() { bar(1); }\n"
);
lang_test!(
    csharp,
    Lang::CSharp,
    "A.cs",
    "class A { void M() { Foo(1); } }\n",
    "Foo($A)",
    "Bar($A)",
    "class A { void M() { Bar(1); } }\n"
);
lang_test!(
    css,
    Lang::Css,
    "a.css",
    "a { color: red; }\n",
    "a { color: $C; }",
    "a { background: $C; }",
    "a { background: red; }\n"
);
lang_test!(
    dart,
    Lang::Dart,
    "a.dart",
    "void main() { foo(1); }\n",
    "1",
    "2",
    "void main() { foo(2); }\n"
);
lang_test!(elixir, Lang::Elixir, "a.ex", "foo(1)\n", "foo($A)", "bar($A)", "bar(1)\n");
lang_test!(
    go,
    Lang::Go,
    "a.go",
    "package main\n\nfunc main() { foo(1) }\n",
    "foo($A)",
    "bar($A)",
    "package main\n\nfunc main() { bar(1) }\n"
);
lang_test!(haskell, Lang::Haskell, "A.hs", "main = foo 1\n", "foo $A", "bar $A", "main = bar 1\n");
lang_test!(hcl, Lang::Hcl, "main.tf", "a = foo(1)\n", "a = $V", "b = $V", "b = foo(1)\n");
lang_test!(
    html,
    Lang::Html,
    "a.html",
    "<p>hi</p>\n",
    "<p>$A</p>",
    "<div>$A</div>",
    "<div>hi</div>\n"
);
lang_test!(
    java,
    Lang::Java,
    "A.java",
    "class A { void m() { foo(1); } }\n",
    "foo($A)",
    "bar($A)",
    "class A { void m() { bar(1); } }\n"
);
lang_test!(javascript, Lang::JavaScript, "a.js", "foo(1);\n", "foo($A)", "bar($A)", "bar(1);\n");
lang_test!(json, Lang::Json, "a.json", "{\"a\": 1}\n", "\"a\"", "\"b\"", "{\"b\": 1}\n");
lang_test!(
    kotlin,
    Lang::Kotlin,
    "a.kt",
    "fun main() { foo(1) }\n",
    "foo($A)",
    "bar($A)",
    "fun main() { bar(1) }\n"
);
lang_test!(lua, Lang::Lua, "a.lua", "foo(1)\n", "foo($A)", "bar($A)", "bar(1)\n");
lang_test!(
    markdown,
    Lang::Markdown,
    "README.md",
    "# Title\n\ntext\n",
    "# $T",
    "## $T",
    "## Title\n\ntext\n"
);
lang_test!(nix, Lang::Nix, "a.nix", "foo 1\n", "foo $A", "bar $A", "bar 1\n");
lang_test!(php, Lang::Php, "a.php", "<?php foo(1);\n", "foo($A)", "bar($A)", "<?php bar(1);\n");
lang_test!(python, Lang::Python, "a.py", "foo(1)\n", "foo($A)", "bar($A)", "bar(1)\n");
lang_test!(ruby, Lang::Ruby, "a.rb", "foo(1)\n", "foo($A)", "bar($A)", "bar(1)\n");
lang_test!(
    rust,
    Lang::Rust,
    "a.rs",
    "fn main() { foo(1); }\n",
    "foo($A)",
    "bar($A)",
    "fn main() { bar(1); }\n"
);
lang_test!(
    scala,
    Lang::Scala,
    "a.scala",
    "object A { foo(1) }\n",
    "foo($A)",
    "bar($A)",
    "object A { bar(1) }\n"
);
lang_test!(
    solidity,
    Lang::Solidity,
    "a.sol",
    "contract A { function f() public { foo(1); } }\n",
    "function f() public { $$$B }",
    "function g() public { $$$B }",
    "contract A { function g() public { foo(1); } }\n"
);
lang_test!(swift, Lang::Swift, "a.swift", "foo(1)\n", "foo($A)", "bar($A)", "bar(1)\n");
lang_test!(
    tsx,
    Lang::Tsx,
    "a.tsx",
    "const a = <div>{foo(1)}</div>;\n",
    "foo($A)",
    "bar($A)",
    "const a = <div>{bar(1)}</div>;\n"
);
lang_test!(typescript, Lang::TypeScript, "a.ts", "foo(1);\n", "foo($A)", "bar($A)", "bar(1);\n");
lang_test!(yaml, Lang::Yaml, "a.yaml", "a: 1\n", "a: $V", "b: $V", "b: 1\n");
lang_test!(
    zig,
    Lang::Zig,
    "a.zig",
    "pub fn main() void { foo(1); }\n",
    "foo($A)",
    "bar($A)",
    "pub fn main() void { bar(1); }\n"
);
lang_test!(
    tlaplus,
    Lang::TlaPlus,
    "M.tla",
    "---- MODULE M ----\nVARIABLE x\nInit == x = 0\n====\n",
    "Init == $E",
    "Start == $E",
    "---- MODULE M ----\nVARIABLE x\nStart == x = 0\n====\n"
);

// Grammars we add beyond ast-grep-language (see LANGUAGES.md).
lang_test!(
    cmake,
    Lang::Cmake,
    "CMakeLists.txt",
    "project(demo)\nadd_executable(app main.c)\n",
    "add_executable($$$A)",
    "add_library($$$A)",
    "project(demo)\nadd_library(app main.c)\n"
);
lang_test!(
    diff,
    Lang::Diff,
    "a.patch",
    "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n",
    "--- $F",
    "--- old/$F",
    "--- old/a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n"
);
lang_test!(
    emacs_lisp,
    Lang::EmacsLisp,
    "init.el",
    "(setq foo 1)\n",
    "(setq $A $B)",
    "(setq-default $A $B)",
    "(setq-default foo 1)\n"
);
lang_test!(
    erlang,
    Lang::Erlang,
    "a.erl",
    "-module(a).\nf() -> foo(1).\n",
    "foo($A)",
    "bar($A)",
    "-module(a).\nf() -> bar(1).\n"
);
lang_test!(
    fortran,
    Lang::Fortran,
    "a.f90",
    "program p\n  call foo(1)\nend program p\n",
    "call foo($A)",
    "call bar($A)",
    "program p\n  call bar(1)\nend program p\n"
);
lang_test!(
    graphql,
    Lang::Graphql,
    "q.graphql",
    "query { user { name } }\n",
    "{ user { $$$F } }",
    "{ account { $$$F } }",
    "query { account { name } }\n"
);
lang_test!(
    ini,
    Lang::Ini,
    "a.ini",
    "[core]\nname = old\n",
    "name = old",
    "name = new",
    "[core]\nname = new\n"
);
lang_test!(julia, Lang::Julia, "a.jl", "foo(1)\n", "foo($A)", "bar($A)", "bar(1)\n");
lang_test!(
    make,
    Lang::Make,
    "Makefile",
    "all:\n\techo hi\n",
    "all",
    "build",
    "build:\n\techo hi\n"
);
lang_test!(
    objc,
    Lang::ObjC,
    "a.m",
    "int main() { foo(1); return 0; }\n",
    "foo($A);",
    "bar($A);",
    "int main() { bar(1); return 0; }\n"
);
lang_test!(ocaml, Lang::OCaml, "a.ml", "let x = foo 1\n", "foo $A", "bar $A", "let x = bar 1\n");
lang_test!(
    odin,
    Lang::Odin,
    "a.odin",
    "package main\nmain :: proc() { foo(1) }\n",
    "foo($A)",
    "bar($A)",
    "package main\nmain :: proc() { bar(1) }\n"
);
lang_test!(
    powershell,
    Lang::PowerShell,
    "a.ps1",
    "Write-Host hello\n",
    "Write-Host $A",
    "Write-Output $A",
    "Write-Output hello\n"
);
lang_test!(r, Lang::R, "a.R", "x <- foo(1)\n", "foo($A)", "bar($A)", "x <- bar(1)\n");
lang_test!(regex, Lang::Regex, "a.regex", "[a-z]+\n", "[a-z]", "[a-f]", "[a-f]+\n");
lang_test!(
    sql,
    Lang::Sql,
    "a.sql",
    "SELECT a FROM t;\n",
    "SELECT $A FROM t",
    "SELECT $A FROM users",
    "SELECT a FROM users;\n"
);
lang_test!(
    starlark,
    Lang::Starlark,
    "BUILD",
    "cc_library(name = \"a\")\n",
    "cc_library($$$A)",
    "cc_binary($$$A)",
    "cc_binary(name = \"a\")\n"
);
lang_test!(
    toml,
    Lang::Toml,
    "Cargo.toml",
    "[package]\nname = \"a\"\n",
    "name = $V",
    "title = $V",
    "[package]\ntitle = \"a\"\n"
);
lang_test!(
    verilog,
    Lang::Verilog,
    "a.v",
    "module m; assign a = b; endmodule\n",
    "$A = $B",
    "$B = $A",
    "module m; assign b = a; endmodule\n"
);
lang_test!(
    xml,
    Lang::Xml,
    "a.xml",
    "<a><b>hi</b></a>\n",
    "<b>$$$C</b>",
    "<c>$$$C</c>",
    "<a><c>hi</c></a>\n"
);

lang_test!(
    vue,
    Lang::Vue,
    "a.vue",
    "<template>\n  <div class=\"a\">{{ msg }}</div>\n</template>\n",
    "<div class=\"$C\">$$$B</div>",
    "<span class=\"$C\">$$$B</span>",
    "<template>\n  <span class=\"a\">{{ msg }}</span>\n</template>\n"
);
lang_test!(
    svelte,
    Lang::Svelte,
    "a.svelte",
    "<script>\n  let count = 0;\n</script>\n\n<button on:click={inc}>{count}</button>\n",
    "<button on:click={$F}>$$$B</button>",
    "<button onclick={$F}>$$$B</button>",
    "<script>\n  let count = 0;\n</script>\n\n<button onclick={inc}>{count}</button>\n"
);
lang_test!(
    astro,
    Lang::Astro,
    "a.astro",
    "---\nconst title = 'x';\n---\n<h1 class=\"t\">{title}</h1>\n",
    "<h1 class=\"$C\">$$$B</h1>",
    "<h2 class=\"$C\">$$$B</h2>",
    "---\nconst title = 'x';\n---\n<h2 class=\"t\">{title}</h2>\n"
);
lang_test!(
    protobuf,
    Lang::Protobuf,
    "user.proto",
    "syntax = \"proto3\";\nmessage User {\n  string name = 1;\n}\n",
    "message $M { $$$F }",
    "message $M { reserved 2; $$$F }",
    "syntax = \"proto3\";\nmessage User { reserved 2; string name = 1; }\n"
);
lang_test!(
    dockerfile,
    Lang::Dockerfile,
    "Dockerfile",
    "FROM node:18\nRUN npm install\n",
    "FROM $I",
    "FROM docker.io/$I",
    "FROM docker.io/node:18\nRUN npm install\n"
);
lang_test!(
    dockerfile_by_suffix,
    Lang::Dockerfile,
    "web.dockerfile",
    "FROM node:18\n",
    "FROM $I",
    "FROM docker.io/$I",
    "FROM docker.io/node:18\n"
);
lang_test!(
    clojure,
    Lang::Clojure,
    "a.clj",
    "(defn greet [name]\n  (println \"hi\" name))\n",
    "(println $$$A)",
    "(prn $$$A)",
    "(defn greet [name]\n  (prn \"hi\" name))\n"
);
lang_test!(
    just,
    Lang::Just,
    "justfile",
    "build:\n    cargo build\n\ntest: build\n    cargo test\n",
    "test: $D",
    "test: $D lint",
    "build:\n    cargo build\n\ntest: build lint\n    cargo test\n"
);

/// Every language in `Lang::all()` has a test above: the 29 of ast-grep-language's 28 grammar
/// crates (TypeScript and TSX share one), TLA+, and the 27 grammars of LANGUAGES.md.
#[test]
fn every_language_is_covered() {
    assert_eq!(Lang::all().count(), 57);
}

#[test]
fn filename_inference() {
    use staged_ast_edit::Inferred;
    use std::path::Path;
    let infer = |p: &str| Lang::infer(Path::new(p));
    assert_eq!(infer(".zshrc"), Inferred::Lang(Lang::Bash));
    assert_eq!(infer("profile"), Inferred::Lang(Lang::Bash));
    assert_eq!(infer("Makefile"), Inferred::Lang(Lang::Make));
    assert_eq!(infer("CMakeLists.txt"), Inferred::Lang(Lang::Cmake));
    assert_eq!(infer(".emacs"), Inferred::Lang(Lang::EmacsLisp));
    assert_eq!(infer("a.vue"), Inferred::Lang(Lang::Vue));
    assert_eq!(infer("App.svelte"), Inferred::Lang(Lang::Svelte));
    assert_eq!(infer("index.astro"), Inferred::Lang(Lang::Astro));
    assert_eq!(infer("api.proto"), Inferred::Lang(Lang::Protobuf));
    assert_eq!(infer("Dockerfile"), Inferred::Lang(Lang::Dockerfile));
    assert_eq!(infer("Dockerfile.dev"), Inferred::Lang(Lang::Dockerfile));
    assert_eq!(infer("Containerfile"), Inferred::Lang(Lang::Dockerfile));
    assert_eq!(infer("core.cljs"), Inferred::Lang(Lang::Clojure));
    assert_eq!(infer("deps.edn"), Inferred::Lang(Lang::Clojure));
    assert_eq!(infer("Justfile"), Inferred::Lang(Lang::Just));
    assert_eq!(infer("release.just"), Inferred::Lang(Lang::Just));
    assert_eq!(infer("a.MTS"), Inferred::Lang(Lang::TypeScript));
    assert_eq!(infer("a.unknown"), Inferred::Unknown);
}

/// The `<script>` blocks of Vue, Svelte and Astro files (and Astro's frontmatter) are code in
/// their own language: a JavaScript or TypeScript rewrite reaches them, and leaves the rest of
/// the file byte for byte.
#[test]
fn script_blocks_of_component_files_are_rewritten_in_their_language() {
    let vue = "<template>\n  <p>{{ foo(0) }}</p>\n</template>\n\n<script setup lang=\"ts\">\nconst a: number = foo(1);\n</script>\n";
    let svelte = "<script lang=\"ts\">\n  let count = foo(2);\n</script>\n\n<p>{count}</p>\n";
    let astro =
        "---\nconst title = foo(3);\n---\n<h1>{title}</h1>\n<script>\n  foo(4);\n</script>\n";
    let plain = "<script>\nfoo(5);\n</script>\n";
    let fx = Fixture::new(&[
        ("src/A.vue", vue),
        ("src/B.svelte", svelte),
        ("src/C.astro", astro),
        ("src/d.ts", "foo(6);\n"),
        ("js/E.vue", plain),
    ]);
    let run = |paths: &[&str], lang: Option<&str>| {
        let params = AstEditParams {
            ops: vec![Op { pat: "foo($A)".to_owned(), out: "bar($A)".to_owned() }],
            paths: paths.iter().map(|p| (*p).to_owned()).collect(),
            lang: lang.map(str::to_owned),
            selector: None,
            strictness: None,
            limit: None,
            max_files: None,
            include_parse_errors: None,
        };
        compute_preview(&fx.workspace, &params.validate().unwrap(), None)
    };
    // Without `lang`: the TypeScript blocks and files, the one language the pattern fits.
    let preview = run(&["src"], None).unwrap();
    assert_eq!(preview.lang, Lang::TypeScript);
    let updated: Vec<(&str, &str)> =
        preview.files.iter().map(|f| (f.path.as_str(), f.updated().unwrap())).collect();
    assert_eq!(
        updated,
        [
            ("src/A.vue", vue.replace("foo(1)", "bar(1)").as_str()),
            ("src/B.svelte", svelte.replace("foo(2)", "bar(2)").as_str()),
            ("src/C.astro", astro.replace("foo(3)", "bar(3)").replace("foo(4)", "bar(4)").as_str()),
            ("src/d.ts", "bar(6);\n"),
        ]
    );
    // A plain `<script>` is JavaScript: with both, the language must be named.
    let err = run(&["."], None).unwrap_err().to_string();
    assert_eq!(
        err,
        "`lang` is required for ast_edit when path/glob resolves to multiple languages: javascript, typescript"
    );
    let preview = run(&["."], Some("js")).unwrap();
    assert_eq!(preview.files.len(), 1);
    assert_eq!(preview.files[0].updated(), Some("<script>\nbar(5);\n</script>\n"));
}
