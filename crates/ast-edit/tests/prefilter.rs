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
}
