//! The prefilter changes no result: previews with and without it find the same edits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use staged_ast_edit::{
    AstEditParams, EditPreview, EngineOptions, Op, Strictness, Workspace, compute_preview_with,
};

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
];

const RUST_PATTERNS: &[(&str, &str)] = &[
    ("use $A;", "pub(crate) use $A;"),
    ("fn $F($$$P) -> $R { $$$B }", "fn $F($$$P) -> $R { $$$B }"),
    ("impl $T for $U {}", "impl $U for $T {}"),
    ("impl<$G> $T<$G> { $$$B }", "impl $T { $$$B }"),
    ("pub use $A as $B;", "use $A as $B;"),
];

fn summary(preview: &Result<EditPreview, staged_ast_edit::AstEditError>) -> String {
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
            format!(
                "{files:?} searched={} limit={} digest={}",
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
    ) {
        let dir = tempfile::tempdir().unwrap();
        for (i, stmts) in files.iter().enumerate() {
            let text: String = stmts.iter().map(|s| format!("{}\n", STATEMENTS[*s])).collect();
            std::fs::write(dir.path().join(format!("f{i}.ts")), text).unwrap();
        }
        let workspace = Workspace::new(dir.path()).unwrap();
        let (pat, out) = PATTERNS[pattern];
        let params = AstEditParams {
            ops: vec![Op { pat: pat.to_owned(), out: out.to_owned() }],
            paths: vec![".".to_owned()],
            lang: None,
            selector: None,
            strictness: Some(strictness),
            limit: None,
            max_files: None,
        }
        .validate()
        .unwrap();
        let with = compute_preview_with(&workspace, &params, EngineOptions::default(), None);
        let without = compute_preview_with(&workspace, &params, EngineOptions { prefilter: false, ..EngineOptions::default() }, None);
        prop_assert_eq!(summary(&with), summary(&without));
    }

    #[test]
    fn rust_keyword_prefilter_changes_no_result(
        files in proptest::collection::vec(proptest::collection::vec(0..RUST_ITEMS.len(), 0..6), 1..4),
        pattern in 0..RUST_PATTERNS.len(),
        strictness in prop_oneof![Just(Strictness::Smart), Just(Strictness::Cst), Just(Strictness::Ast), Just(Strictness::Relaxed)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        for (i, items) in files.iter().enumerate() {
            let text: String = items.iter().map(|s| format!("{}\n", RUST_ITEMS[*s])).collect();
            std::fs::write(dir.path().join(format!("f{i}.rs")), text).unwrap();
        }
        let workspace = Workspace::new(dir.path()).unwrap();
        let (pat, out) = RUST_PATTERNS[pattern];
        let params = AstEditParams {
            ops: vec![Op { pat: pat.to_owned(), out: out.to_owned() }],
            paths: vec![".".to_owned()],
            lang: None,
            selector: None,
            strictness: Some(strictness),
            limit: None,
            max_files: None,
        }
        .validate()
        .unwrap();
        let with = compute_preview_with(&workspace, &params, EngineOptions::default(), None);
        let without = compute_preview_with(&workspace, &params, EngineOptions { prefilter: false, ..EngineOptions::default() }, None);
        prop_assert_eq!(summary(&with), summary(&without));
    }
}

/// The keyword needles really skip files: a file without `use` is not parsed, so its syntax
/// error is not reported, while the prefilter-off preview reports it.
#[test]
fn keyword_needle_skips_files_without_the_keyword() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "use std::io;\n").unwrap();
    std::fs::write(dir.path().join("broken.rs"), "fn broken( {\n").unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let params = AstEditParams {
        ops: vec![Op { pat: "use $A;".to_owned(), out: "pub use $A;".to_owned() }],
        paths: vec![".".to_owned()],
        lang: None,
        selector: None,
        strictness: None,
        limit: None,
        max_files: None,
    }
    .validate()
    .unwrap();
    let with = compute_preview_with(&workspace, &params, EngineOptions::default(), None).unwrap();
    let without = compute_preview_with(
        &workspace,
        &params,
        EngineOptions { prefilter: false, ..EngineOptions::default() },
        None,
    )
    .unwrap();
    assert_eq!(with.total_replacements(), 1);
    assert!(with.parse_errors.is_empty(), "{:?}", with.parse_errors);
    assert_eq!(without.total_replacements(), 1);
    assert_eq!(without.parse_errors.len(), 1, "{:?}", without.parse_errors);
}
