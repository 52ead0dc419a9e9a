//! The prefilter changes no result: previews with and without it find the same edits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use staged_ast_edit::{
    AstEditError, AstEditParams, AstGrepParams, EditPreview, EngineOptions, Op, Strictness,
    compute_preview_with, search,
};
use staged_journal::ConfinedRoot;

const STATEMENTS: &[&str] = &[
    "foo(1);",
    "foo(bar);",
    "bar(foo);",
    "foo(foo(2));",
    "obj.foo(3);",
    "const foo = 1;",
    "let x = \"foo(1)\";",
    "// foo(1)",
    "baz(qux, 4);",
    "qux.baz();",
    "if (a && a()) { b(); }",
    "console.log(a, b);",
    "assertEqual(x, y);",
    "x = y + 1;",
    "function f(a) { return a; }",
    "function g() { }",
    "const useful = returned;",
    "let s = 'return function';",
    "// return 1;",
    "for (const k of ks) { continue; }",
    "class Foo extends Bar { }",
    "x = await y",
    "function /* c */ f(b) { return b; }",
    "function ff(a) { }",
    "class /* c */ Foo extends Bar { }",
    "class Foo2 extends Bar { }",
];

const PATTERNS: &[(&str, &str)] = &[
    ("foo($A)", "renamed($A)"),
    ("bar", "BAR"),
    ("baz($$$ARGS)", "zab($$$ARGS)"),
    ("$A && $A()", "$A?.()"),
    ("console.log($$$A)", "logger.info($$$A)"),
    ("assertEqual($A, $B)", "assertEqual($B, $A)"),
    ("qux.baz()", "qux.zab()"),
    ("$X + 1", "$X + 2"),
    ("1", "one"),
    ("return $A;", "return ($A);"),
    ("return $A", "return ($A)"),
    ("function $F($$$P) { $$$B }", "const $F = ($$$P) => { $$$B }"),
    ("const $A = $B;", "let $A = $B;"),
    ("for (const $K of $V) { $$$B }", "for (let $K of $V) { $$$B }"),
    ("class $C extends $B { $$$M }", "class $C { $$$M }"),
    ("await $A", "(await $A)"),
    // A keyword and the name after it are a pair.
    ("function f($$$P) { $$$B }", "function g($$$P) { $$$B }"),
    ("class Foo extends $B { $$$M }", "class Foo { $$$M }"),
];

/// Rust: keyword leaves (`use`, `fn`, `impl`) are needles under `smart` and `cst`.
const RUST_ITEMS: &[&str] = &[
    "use std::io;",
    "pub use a::b as c;",
    "fn main() { let useful = 1; }",
    "fn f(x: u8) -> u8 { x }",
    "// use foo;",
    "const S: &str = \"use x;\";",
    "impl Foo for Bar {}",
    "impl<T> Baz<T> { fn new() -> Self { Self(0) } }",
    "struct Unused;",
    "macro_rules! m { () => { use z; } }",
    "mod m { use super::*; }",
    "fn unused() { let reuse = 1; }",
    "use::std::fmt;",
    "pub(crate) use r#async::x;",
    "fn /* c */ f(y: u8) -> u8 { y }",
    "fn ff(x: u8) -> u8 { x }",
    "struct Foo;",
];

const RUST_PATTERNS: &[(&str, &str)] = &[
    ("use $A;", "pub(crate) use $A;"),
    ("fn $F($$$P) -> $R { $$$B }", "pub fn $F($$$P) -> $R { $$$B }"),
    ("impl $T for $U {}", "impl $U for $T {}"),
    ("impl<$G> $T<$G> { $$$B }", "impl $T { $$$B }"),
    ("pub use $A as $B;", "use $A as $B;"),
    // A keyword and the name after it are a pair.
    ("fn f($$$P) -> $R { $$$B }", "fn g($$$P) -> $R { $$$B }"),
    ("struct Foo;", "struct Bar;"),
];

/// Writes `texts` as `f0.<ext>`, `f1.<ext>`, ... and previews `pat` -> `out` over them, with
/// and without the prefilter.
fn previews(
    texts: &[String],
    ext: &str,
    op: (&str, &str),
    strictness: Option<Strictness>,
) -> (Result<EditPreview, AstEditError>, Result<EditPreview, AstEditError>) {
    previews_with(texts, ext, op, strictness, None)
}

/// [`previews`], with files whose syntax tree has errors rewritten too if
/// `include_parse_errors` says so.
fn previews_with(
    texts: &[String],
    ext: &str,
    (pat, out): (&str, &str),
    strictness: Option<Strictness>,
    include_parse_errors: Option<bool>,
) -> (Result<EditPreview, AstEditError>, Result<EditPreview, AstEditError>) {
    let dir = tempfile::tempdir().unwrap();
    for (i, text) in texts.iter().enumerate() {
        std::fs::write(dir.path().join(format!("f{i}.{ext}")), text).unwrap();
    }
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    let params = AstEditParams {
        ops: vec![Op { pat: pat.to_owned(), out: out.to_owned() }],
        paths: vec![".".to_owned()],
        lang: None,
        selector: None,
        strictness,
        limit: None,
        max_files: None,
        include_parse_errors,
    }
    .validate()
    .unwrap();
    let with = compute_preview_with(&workspace, &params, EngineOptions::default(), None, None);
    let without = compute_preview_with(
        &workspace,
        &params,
        EngineOptions { prefilter: false, ..EngineOptions::default() },
        None,
        None,
    );
    (with, without)
}

/// One file's text per entry of `files`: each item on its own line, between `header` and
/// `footer`.
fn texts(files: &[Vec<usize>], items: &[&str], header: &str, footer: &str) -> Vec<String> {
    texts_apart(files, items, header, footer, "\n")
}

/// [`texts`], each item followed by `sep`: with none, an item starts where the one before it
/// ends, where a pruned walk's bounds are tightest.
fn texts_apart(
    files: &[Vec<usize>],
    items: &[&str],
    header: &str,
    footer: &str,
    sep: &str,
) -> Vec<String> {
    files
        .iter()
        .map(|file| {
            let body: String =
                file.iter().map(|i| format!("{}{sep}", items[*i % items.len()])).collect();
            format!("{header}{body}{footer}")
        })
        .collect()
}

fn summary(preview: &Result<EditPreview, AstEditError>) -> String {
    match preview {
        Ok(p) => {
            let files: Vec<String> = p
                .files
                .iter()
                .map(|f| {
                    format!(
                        "{}:{:?}:{:?}:{:?}",
                        f.path,
                        f.edits
                            .iter()
                            .map(|e| (e.byte_start, e.byte_end, e.after.clone()))
                            .collect::<Vec<_>>(),
                        f.diff,
                        f.contents
                    )
                })
                .collect();
            let errors: Vec<String> = p
                .error_files
                .iter()
                .map(|e| format!("{}:{}:{}", e.path, e.replacements, e.matches_skipped))
                .collect();
            format!(
                "{files:?} searched={} limit={} digest={} error files={errors:?}",
                p.files_searched,
                p.limit_reached,
                p.edits_digest()
            )
        }
        Err(err) => format!("error: {err}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn prefilter_changes_no_result(
        files in proptest::collection::vec(proptest::collection::vec(0..STATEMENTS.len(), 0..6), 1..4),
        pattern in 0..PATTERNS.len(),
        strictness in prop_oneof![Just(Strictness::Smart), Just(Strictness::Cst), Just(Strictness::Ast), Just(Strictness::Relaxed), Just(Strictness::Signature), Just(Strictness::Template)],
        sep in prop_oneof![Just("\n"), Just(" "), Just("")],
    ) {
        let texts = texts_apart(&files, STATEMENTS, "", "", sep);
        let (with, without) = previews(&texts, "ts", PATTERNS[pattern], Some(strictness));
        prop_assert_eq!(summary(&with), summary(&without));
    }

    #[test]
    fn rust_keyword_prefilter_changes_no_result(
        files in proptest::collection::vec(proptest::collection::vec(0..RUST_ITEMS.len(), 0..6), 1..4),
        pattern in 0..RUST_PATTERNS.len(),
        strictness in prop_oneof![Just(Strictness::Smart), Just(Strictness::Cst), Just(Strictness::Ast), Just(Strictness::Relaxed)],
        sep in prop_oneof![Just("\n"), Just(" "), Just("")],
    ) {
        let texts = texts_apart(&files, RUST_ITEMS, "", "", sep);
        let (with, without) = previews(&texts, "rs", RUST_PATTERNS[pattern], Some(strictness));
        prop_assert_eq!(summary(&with), summary(&without));
    }
}

/// The keyword needles really skip files: a file without `use` is not parsed, so its syntax
/// error is not reported, while the prefilter-off preview reports it.
#[test]
fn keyword_needle_skips_files_without_the_keyword() {
    let texts = ["use std::io;\n".to_owned(), "fn broken( {\n".to_owned()];
    assert_second_file_is_skipped(&texts, "rs", ("use $A;", "pub use $A;"));
}

/// With the prefilter, the first of `texts` gets the one replacement and the second (which
/// has a syntax error) is never parsed; without it, the second is parsed and reported.
fn assert_second_file_is_skipped(texts: &[String], ext: &str, op: (&str, &str)) {
    let (with, without) = previews(texts, ext, op, None);
    let (with, without) = (with.unwrap(), without.unwrap());
    assert_eq!(with.total_replacements(), 1);
    assert!(with.parse_errors.is_empty(), "{:?}", with.parse_errors);
    assert_eq!(without.total_replacements(), 1);
    assert_eq!(without.parse_errors.len(), 1, "{:?}", without.parse_errors);
}

/// One language's property-test material: file extension, text around the items, the items,
/// and `(pattern, rewrite)` pairs that use the language's keywords.
struct KeywordCase {
    ext: &'static str,
    header: &'static str,
    footer: &'static str,
    items: &'static [&'static str],
    patterns: &'static [(&'static str, &'static str)],
}

/// Every language with keyword needles other than Rust and TypeScript (tested above).
const KEYWORD_CASES: &[KeywordCase] = &[
    KeywordCase { ext: "js", header: "", footer: "", items: STATEMENTS, patterns: PATTERNS },
    KeywordCase { ext: "tsx", header: "", footer: "", items: STATEMENTS, patterns: PATTERNS },
    KeywordCase {
        ext: "py",
        header: "",
        footer: "",
        items: &[
            "def f(x):\n    return x",
            "def g():\n    return_value = 1\n    return return_value",
            "import os",
            "from a import b",
            "returned = lambda: 0",
            "# return 1",
            "s = 'def h(): return 2'",
            "class C(B):\n    pass",
            "for i in range(3):\n    pass",
            "if x:\n    y = 1",
        ],
        patterns: &[
            ("return $A", "return ($A)"),
            ("import $A", "import $A as a"),
            ("def $F($$$P): $$$B", "def renamed($$$P): $$$B"),
            ("class $C($B): $$$M", "class $C: $$$M"),
            ("def f($$$P): $$$B", "def g($$$P): $$$B"),
            ("for $I in $X: $$$B", "for $I in list($X): $$$B"),
        ],
    },
    KeywordCase {
        ext: "go",
        header: "package main\n",
        footer: "",
        items: &[
            "import \"fmt\"",
            "func f() int { return 1 }",
            "var returned = 1",
            "type T struct{}",
            "func (t T) M() {}",
            "// func g() {}",
            "const s = \"func x\"",
            "func h() { for i := 0; i < 3; i++ { fmt.Println(i) } }",
            "func /* c */ f() int { return 2 }",
        ],
        patterns: &[
            ("func $F() $R { $$$B }", "func $F() ($R) { $$$B }"),
            ("return $A", "return ($A)"),
            ("type $T struct{}", "type $T struct{ x int }"),
            ("var $A = $B", "var $A = ($B)"),
            ("func f() $R { $$$B }", "func g() $R { $$$B }"),
        ],
    },
    KeywordCase {
        ext: "java",
        header: "class A {\n",
        footer: "}\n",
        items: &[
            "int f() { return 1; }",
            "static int returned = 1;",
            "void g() { for (int i = 0; i < 1; i++) {} }",
            "// return 2;",
            "String s = \"return x;\";",
            "class Inner extends Base {}",
            "class /* c */ Inner extends Base {}",
            "int h(int x) { if (x > 0) { return x; } return -x; }",
        ],
        patterns: &[
            ("return $A;", "return ($A);"),
            ("class $C extends $B {}", "class $C {}"),
            ("class Inner extends $B {}", "class Outer extends $B {}"),
            ("if ($C) { $$$B }", "if (!($C)) {} else { $$$B }"),
        ],
    },
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn keyword_and_pair_prefilter_changes_no_result_in_every_language_that_has_them(
        case in 0..KEYWORD_CASES.len() + PAIR_CASES.len() + NAME_CASES.len(),
        files in proptest::collection::vec(proptest::collection::vec(0..64usize, 0..6), 1..4),
        pattern in 0..64usize,
        strictness in prop_oneof![Just(Strictness::Smart), Just(Strictness::Cst), Just(Strictness::Ast)],
    ) {
        let case = KEYWORD_CASES.iter().chain(PAIR_CASES).chain(NAME_CASES).nth(case).unwrap();
        let texts = texts(&files, case.items, case.header, case.footer);
        let op = case.patterns[pattern % case.patterns.len()];
        let (with, without) = previews(&texts, case.ext, op, Some(strictness));
        prop_assert_eq!(summary(&with), summary(&without));
    }
}

/// The material is not vacuous: every keyword and pair pattern matches its language's items.
#[test]
fn every_keyword_pattern_matches_its_items() {
    let rust = KeywordCase {
        ext: "rs",
        header: "",
        footer: "",
        items: RUST_ITEMS,
        patterns: RUST_PATTERNS,
    };
    let cases = KEYWORD_CASES.iter().filter(|c| c.ext != "js" && c.ext != "tsx");
    for case in cases.chain([&rust]).chain(PAIR_CASES).chain(NAME_CASES) {
        let all: Vec<usize> = (0..case.items.len()).collect();
        let texts = texts(&[all], case.items, case.header, case.footer);
        for &(pat, out) in case.patterns {
            let (preview, _) = previews(&texts, case.ext, (pat, out), None);
            let preview = preview.unwrap_or_else(|err| panic!("{}: {pat}: {err}", case.ext));
            assert!(
                preview.total_replacements() > 0,
                "{}: `{pat}` matched nothing (parse issues: {:?})",
                case.ext,
                preview.parse_errors
            );
        }
    }
}

/// Pair needles: two leaves with only trivia between them (`util.deprecate`), in every
/// language that has them, with whitespace, comments and line breaks between, and the two
/// texts apart or inside strings and comments.
const PAIR_CASES: &[KeywordCase] = &[
    KeywordCase {
        ext: "js",
        header: "",
        footer: "",
        items: JS_PAIR_ITEMS,
        patterns: JS_PAIR_PATTERNS,
    },
    KeywordCase {
        ext: "ts",
        header: "",
        footer: "",
        items: JS_PAIR_ITEMS,
        patterns: JS_PAIR_PATTERNS,
    },
    KeywordCase {
        ext: "tsx",
        header: "",
        footer: "",
        items: JS_PAIR_ITEMS,
        patterns: JS_PAIR_PATTERNS,
    },
    KeywordCase {
        ext: "rs",
        header: "",
        footer: "",
        items: &[
            "fn a() { mem::forget(x); }",
            "fn b() { mem :: forget(x); }",
            "fn c() { mem::/* c */forget(x); }",
            "fn d() { mem/* a /* nested */ b */::forget(x); }",
            "fn e() { mem::take(x); forget(y); }",
            "fn f() { std::mem::forget(x); }",
            "// mem::forget(x)",
            "fn g() { let s = \"mem::forget\"; }",
            "fn h() { mem // c\n ::forget(x); }",
            "use std::mem;",
            "fn i() { r#mem::forget(x); }",
            "fn j() { std :: mem /* c */ :: forget(x); }",
            "fn k() { std::mem\n    ::forget(x); }",
            "fn l() { core::mem::forget(x); std::ptr::read(p); }",
            "fn m() { std::mem::drop(x); mem::forget(y); }",
            "fn n() { std::mem::take(&mut v).forget(); }",
            "fn o() { a.b.forget(); let c = a.b; }",
            "fn p() { std::mem/* a /* nested */ b */::forget(x); }",
        ],
        patterns: &[
            ("mem::forget($A)", "drop($A)"),
            ("std::mem::forget($A)", "core::mem::forget($A)"),
            ("mem::forget", "mem::drop"),
            ("std::mem::take($A)", "core::mem::take($A)"),
            ("$X.b.forget()", "$X.b.keep()"),
            ("a.b.forget()", "a.b.keep()"),
        ],
    },
    KeywordCase {
        ext: "py",
        header: "",
        footer: "",
        items: &[
            "os.path.join(a)",
            "os . path . join(b)",
            "x = os.path # c\ny = join",
            "os.environ.join(c); path = 1",
            "x = os . path",
            "x = os.\\\n    path",
            "x = (os # c\n .path)",
            "os.environ; path = 1",
            "x = 'os.path'",
            "# os.path",
            "self.x = self.y",
            "self . x = 1",
            "y = a // os; path = 2",
        ],
        patterns: &[
            ("os.path", "osp"),
            ("self.x = $V", "self.z = $V"),
            ("os.path.join($A)", "pjoin($A)"),
            ("os.path.join", "pjoin"),
        ],
    },
    KeywordCase {
        ext: "go",
        header: "package main\n",
        footer: "",
        items: &[
            "func a() { y := os.Args; _ = y }",
            "func b() { y := os . Args; _ = y }",
            "func c() { y := os./* c */Args; _ = y }",
            "func d() { y := os.Environ(); Args := 1; _, _ = y, Args }",
            "// y := os.Args",
            "func e() { s := \"os.Args\"; _ = s }",
            "func f() { y := os.\n\tArgs; _ = y }",
            "func g() { os.Args = nil }",
        ],
        // (`fmt.Println($A)` alone parses as a type conversion in Go; ast-grep matches it
        // only with a selector.)
        patterns: &[("$Y := os.Args", "$Y := flag.Args()"), ("os.Args = $V", "_ = $V")],
    },
    KeywordCase {
        ext: "java",
        header: "class A {\n",
        footer: "}\n",
        items: &[
            "void a() { System.out.println(1); }",
            "void b() { System . out.println(1); }",
            "void c() { System/* c */.out.println(1); }",
            "void d() { System.err.println(1); out(); }",
            "// System.out",
            "String s = \"System.out\";",
            "void e() { System // c\n .out.println(1); }",
            "void f() { PrintStream p = System.out; }",
            "void g() { PrintStream q = System\n  /* c */ .out; }",
        ],
        patterns: &[
            ("System.out.println($A)", "log($A)"),
            ("PrintStream $P = System.out;", "PrintStream $P = System.err;"),
        ],
    },
];

/// A keyword, the name after it and what follows the name (`function`, a name, `(`), in every
/// language that has them: with comments between, generic parameters (which no such pattern
/// matches), names that are keywords elsewhere, and the keyword in comments and strings.
const NAME_CASES: &[KeywordCase] = &[
    KeywordCase {
        ext: "ts",
        header: "",
        footer: "",
        items: TS_NAME_ITEMS,
        patterns: TS_NAME_PATTERNS,
    },
    KeywordCase {
        ext: "tsx",
        header: "",
        footer: "",
        items: TS_NAME_ITEMS,
        patterns: TS_NAME_PATTERNS,
    },
    KeywordCase {
        ext: "js",
        header: "",
        footer: "",
        items: &[
            "function a(x) { return x; }",
            "function /* c */ b /* d */ (x) { return x; }",
            "function get() { }",
            "function $d() { }",
            "const f = function (x) { return x; };",
            "const g = function named() { };",
            "function* gen() { yield 1; }",
            "// function commented(x) { }",
            "const s = 'function quoted(x) { }';",
            "class Named { m() { } }",
            "class /* c */ Other extends Base { }",
            "functions(x);",
            "function\n  spaced\n  (x) { }",
        ],
        patterns: &[
            ("function $F($$$P) { $$$B }", "const $F = ($$$P) => { $$$B }"),
            ("function $F() { }", "function $F(_) { }"),
            ("class $C { $$$M }", "class $C extends Object { $$$M }"),
            ("class $C extends $B { $$$M }", "class $C { $$$M }"),
        ],
    },
    KeywordCase {
        ext: "rs",
        header: "",
        footer: "",
        items: &[
            "fn a() {}",
            "fn r#type() {}",
            "fn /* c */ b /* d */ () {}",
            "fn g<T>(t: T) {}",
            "struct S { a: u8 }",
            "struct T(u8);",
            "enum E { A }",
            "trait Tr { fn m(&self); }",
            "mod m {}",
            "const C: u8 = 1;",
            "type Al = u8;",
            "union U { a: u8 }",
            "// fn c() {}",
            "static S: &str = \"fn d() {}\";",
            "macro_rules! mm { ($n:ident) => { fn $n() {} } }",
            "fn\n    spaced\n    () {}",
        ],
        patterns: &[
            ("fn $F() {}", "fn $F() -> () {}"),
            ("struct $S { a: $T }", "struct $S { b: $T }"),
            ("struct $S($$$F);", "struct $S($$$F, u8);"),
            ("enum $E { $$$V }", "enum $E { $$$V, Z }"),
            ("trait $T { $$$I }", "pub trait $T { $$$I }"),
            ("mod $M {}", "mod $M { use super::*; }"),
            ("union $U { a: $T }", "union $U { b: $T }"),
        ],
    },
    KeywordCase {
        ext: "py",
        header: "",
        footer: "",
        items: &[
            "def f(x):\n    return x",
            "def get():\n    pass",
            "def  g (x) :\n    pass",
            "async def a():\n    pass",
            "class K(B):\n    pass",
            "class L:\n    pass",
            "# def h(x): pass",
            "x = 'def y(): pass'",
            "def \\\n    cont():\n    pass",
        ],
        patterns: &[
            ("def $F($$$P): $$$B", "def renamed($$$P): $$$B"),
            ("class $C($$$B): $$$M", "class $C: $$$M"),
            ("async def $F(): $$$B", "def $F(): $$$B"),
        ],
    },
    KeywordCase {
        ext: "go",
        header: "package main\n",
        footer: "",
        items: &[
            "func a() {}",
            "func (t T) m() {}",
            "func /* c */ b() {}",
            "func g[T any](t T) {}",
            "var f = func() {}",
            "// func c() {}",
            "const s = \"func d() {}\"",
        ],
        patterns: &[("func $F() {}", "func $F() { return }")],
    },
    KeywordCase {
        ext: "java",
        header: "class A {\n",
        footer: "}\n",
        items: &[
            "class In {}",
            "class /* c */ In2 extends Base {}",
            "class G<T> {}",
            "interface I {}",
            "enum E { X }",
            "record R(int a) {}",
            "// class C {}",
            "String s = \"class D {}\";",
        ],
        patterns: &[
            ("class $C {}", "final class $C {}"),
            ("class $C extends $B {}", "class $C {}"),
            ("interface $I {}", "interface $I extends Marker {}"),
            ("enum $E { $$$V }", "enum $E { $$$V, Y }"),
            ("record $R($$$P) {}", "record $R($$$P) { }"),
        ],
    },
];

const TS_NAME_ITEMS: &[&str] = &[
    "declare function sig(a: number): string;",
    "function /* c */ sig2 /* d */ (a: number): string;",
    "function gen<T>(a: T): T;",
    "function get(): void;",
    "function $d(): void;",
    "const f = function (x) { return x; };",
    "function body(x: number): number { return x; }",
    "// function commented(x): T;",
    "const s = 'function quoted(x): T;';",
    "class Named { m(): void {} }",
    "class /* c */ Other extends Base { }",
    "interface Shape { area(): number; }",
    "export function exported(a: string): void;",
    "function\n  spaced\n  (a: number): void;",
    "abstract class Abs { }",
    "type Alias = { a: number };",
    "enum Color { Red }",
    "functions(x);",
];

const TS_NAME_PATTERNS: &[(&str, &str)] = &[
    ("function $F($$$P): $R;", "function $F($$$P): ($R);"),
    ("class $C { $$$M }", "class $C extends Object { $$$M }"),
    ("class $C extends $B { $$$M }", "class $C { $$$M }"),
    ("interface $I { $$$M }", "type $I = { $$$M }"),
    ("enum $E { $$$M }", "const enum $E { $$$M }"),
    ("type $T = $V;", "type $T = ($V);"),
    ("abstract class $C { $$$M }", "class $C { $$$M }"),
];

const JS_PAIR_ITEMS: &[&str] = &[
    "util.deprecate(f);",
    "util . deprecate(f);",
    "util /* c */ .deprecate(f);",
    "util // c\n  .deprecate(f);",
    "util?.deprecate(f);",
    "util.inspect(x); deprecate(f);",
    "utility.deprecate(f);",
    "const s = 'util.deprecate(f)';",
    "// util.deprecate(f)",
    "util.get.deprecate(f);",
    "util\n.\ndeprecate\n(f);",
    "util /* a */ . /* b */ deprecate(f);",
    "a.b = c.d;",
    "a\u{00A0}.b = 1;",
    "x = util['deprecate'](f);",
    "new util.deprecate(f);",
    "a.b.c(1);",
    "a . b /* c */ . c(2);",
    "a.b\n  .c(3);",
    "a.x.c(4); b.c(5);",
    "a.b(6).c;",
    "x.a.b.c(7);",
];

const JS_PAIR_PATTERNS: &[(&str, &str)] = &[
    ("util.deprecate($$$A)", "util.warn($$$A)"),
    ("util.deprecate", "u.d"),
    ("a.b = $X", "a.c = $X"),
    ("util?.deprecate($F)", "util.deprecate($F)"),
    ("a.b.c($A)", "abc($A)"),
    ("$X.b.c($A)", "bc($X, $A)"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Where files with syntax errors are rewritten too (error recovery may insert a token the
    /// text lacks), the prefilter still changes nothing: the name cases' items, with broken
    /// ones among them.
    #[test]
    fn name_pairs_change_no_result_where_files_with_errors_are_rewritten(
        case in 0..NAME_CASES.len(),
        files in proptest::collection::vec(proptest::collection::vec(0..64usize, 0..6), 1..4),
        pattern in 0..64usize,
        broken in proptest::collection::vec(0..BROKEN_ITEMS.len(), 0..3),
    ) {
        let case = &NAME_CASES[case];
        let broken = broken.iter().map(|&i| BROKEN_ITEMS[i]);
        let items: Vec<&str> = case.items.iter().copied().chain(broken).collect();
        let files: Vec<Vec<usize>> =
            files.iter().map(|f| f.iter().map(|i| i % items.len()).collect()).collect();
        let texts = texts(&files, &items, case.header, case.footer);
        let op = case.patterns[pattern % case.patterns.len()];
        let (with, without) = previews_with(&texts, case.ext, op, None, Some(true));
        prop_assert_eq!(summary(&with), summary(&without));
    }
}

/// Items with syntax errors where a parser may insert a missing token or name, or skip a
/// stray word (which ast-grep then skips like a comment).
const BROKEN_ITEMS: &[&str] = &[
    "function 1 bar(x: number): string;",
    "declare function baz 1 (x: number): string;",
    "class 1 K { }",
    "fn 1 g() {}",
    "struct 1 S { a: u8 }",
    "class 1 In {}",
    "declare function g(x: number: T;",
    "declare function (x): T;",
    "function f x): T;",
    "class { }",
    "fn (x: u8) {}",
    "def (x):\n    pass",
    "func () {}",
    "class extends B {}",
];

/// `ast_grep` searches files with syntax errors, where error recovery skips stray words and
/// ast-grep steps over them like comments. A match that spans such text is left out and the
/// parse issue says so, with or without the prefilter (which may rule out a file whose only
/// match is one: then neither the match nor the issue is shown).
#[test]
fn search_leaves_out_matches_across_text_the_parser_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.js"), "util.deprecate(y);\nutil 1 .deprecate(x);\n").unwrap();
    std::fs::write(dir.path().join("b.js"), "util 1 .deprecate(z);\n").unwrap();
    std::fs::write(dir.path().join("c.js"), "util.deprecate(w);\nlet = ;\n").unwrap();
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    let params = AstGrepParams {
        pattern: "util.deprecate($A)".to_owned(),
        paths: vec![".".to_owned()],
        lang: Some("js".to_owned()),
        selector: None,
        strictness: None,
        limit: None,
    };
    let result = search(&workspace, &params, None, None).unwrap();
    let shown: Vec<(&str, &str)> =
        result.matches.iter().map(|m| (m.path.as_str(), m.text.as_str())).collect();
    assert_eq!(shown, [("a.js", "util.deprecate(y)"), ("c.js", "util.deprecate(w)")]);
    assert_eq!(
        result.parse_errors,
        ["a.js: a match is not shown: it spans text the parser skipped at a syntax error"]
    );
}

/// A name pair really skips files: one with `function` and `(` but no `function name(` is not
/// parsed, so its syntax error is not reported.
#[test]
fn name_pair_skips_files_without_a_named_function() {
    let texts = [
        "declare function f(x: number): string;\n".to_owned(),
        "/** a function that maps */\nconst g = (x) => x;\nlet broken = ;\n".to_owned(),
    ];
    assert_second_file_is_skipped(
        &texts,
        "ts",
        ("function $F($$$P): $R;", "function $F($$$P): ($R);"),
    );
}

/// The pair needles really skip files: one where `util` and `deprecate` are apart is not
/// parsed, so its syntax error is not reported, while the prefilter-off preview reports it.
#[test]
fn pair_needle_skips_files_where_the_pair_is_apart() {
    let texts = [
        "util.deprecate(f);\n".to_owned(),
        "util.inspect(x); deprecate(f);\nfunction broken( {\n".to_owned(),
    ];
    assert_second_file_is_skipped(&texts, "js", ("util.deprecate($F)", "warn($F)"));
}
