//! Snapshots of the model-facing preview text (tags redacted to `XXXX`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, redact_tags};
use serde_json::json;

#[tokio::test]
async fn preview_text_tree() {
    let body = "export const v = legacyWrap(x, value);\nlegacyWrap(a, b);\n";
    let fx = Fixture::new(&[
        ("packages/pkg-123/src/root.ts", body),
        ("packages/pkg-123/src/nested/child.ts", "legacyWrap(1, 2);\n"),
        ("top.ts", "legacyWrap(1, 2);\n"),
        ("broken.ts", "legacyWrap(1, 2) +++ ;;; {{{\n"),
    ]);
    let res = fx
        .edit(json!({"ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($B, $A)"}], "paths": ["."], "limit": 3}))
        .await
        .unwrap();
    insta::assert_snapshot!("preview_tree", redact_tags(&res.text_content()));
}

#[tokio::test]
async fn preview_text_single_file_and_label() {
    let fx = Fixture::new(&[("a.py", "print(1)\nprint('two', 2)\n")]);
    let res = fx
        .edit(json!({"ops": [{"pat": "print($$$ARGS)", "out": "logger.info($$$ARGS)"}], "paths": ["a.py"]}))
        .await
        .unwrap();
    insta::assert_snapshot!("preview_single", redact_tags(&res.text_content()));
    assert_eq!(
        fx.session.store().peek().unwrap().unwrap().label(),
        "AST Edit: 2 replacements in 1 file"
    );
}

/// Every trailer a model may see after the tree: nested matches left as they were, parse
/// issues, the language inferred, and the last line (a cap and files skipped for parse errors).
#[tokio::test]
async fn preview_text_trailers() {
    let fx = Fixture::new(&[
        ("a.js", "let x = y * 2 * 2;\nlet z = w * 2;\n"),
        ("b.js", "let v = u * 2;\n"),
        ("c.js", "let t = s * 2;\n"),
        ("broken.js", "let q = p * 2 +;\n"),
        ("package.json", "{\"name\": \"x\"}\n"),
    ]);
    let res = fx
        .edit(json!({"ops": [{"pat": "$A * 2", "out": "$A << 1"}], "paths": ["."], "max_files": 2}))
        .await
        .unwrap();
    insta::assert_snapshot!("preview_trailers", redact_tags(&res.text_content()));
    assert_eq!(
        fx.session.store().peek().unwrap().unwrap().label(),
        "AST Edit: 3 replacements in 2 files (capped by `max_files`: 1 more file left out)"
    );
}

/// With `includeParseErrors`, the files with parse errors that were rewritten are listed.
#[tokio::test]
async fn preview_text_with_parse_errors_included() {
    let fx =
        Fixture::new(&[("bad.rs", "fn f() {\n    a.unwrap();\n    let v = g(1 +).unwrap();\n}\n")]);
    let res = fx
        .edit(json!({"ops": [{"pat": "$X.unwrap()", "out": "$X.expect(\"x\")"}], "paths": ["."], "includeParseErrors": true}))
        .await
        .unwrap();
    insta::assert_snapshot!("preview_parse_errors_included", redact_tags(&res.text_content()));
}

/// A search marks the matches of files with parse errors, and says what a limit left out.
#[tokio::test]
async fn search_text_marks_and_cap() {
    let fx = Fixture::new(&[
        ("a.rs", "fn f() { a.unwrap(); b.unwrap(); }\n"),
        ("bad.rs", "fn g( { c.unwrap(); }\n"),
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
    ]);
    let res = fx.grep(json!({"pattern": "$X.unwrap()", "paths": ["."], "limit": 2})).await.unwrap();
    insta::assert_snapshot!("search_marks_and_cap", res.text_content());
}
