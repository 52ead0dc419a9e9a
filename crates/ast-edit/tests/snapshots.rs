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
