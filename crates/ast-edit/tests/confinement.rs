//! Nothing is read or written outside the workspace root: not via `..`, not via an absolute
//! path elsewhere, not via a symlink pointing out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;

fn args(path: &str) -> serde_json::Value {
    json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": [path]})
}

#[tokio::test]
async fn dotdot_is_refused() {
    let outer = tempfile::tempdir().unwrap();
    common::write(outer.path(), "secret.ts", "foo(1);\n");
    common::write(outer.path(), "ws/a.ts", "foo(1);\n");
    let fx_ws = staged_journal::ConfinedRoot::new(outer.path().join("ws")).unwrap();
    let session = std::sync::Arc::new(staged_core::Session::new(std::sync::Arc::new(
        staged_core::InMemoryStore::new(),
    )));
    let tool = staged_ast_edit::AstEditTool::new(session, fx_ws);
    use staged_core::Tool;
    for path in ["../secret.ts", "../*.ts", "sub/../../secret.ts", "../nope.ts"] {
        let err = tool.execute(args(path), &staged_core::CancelToken::new()).await.unwrap_err();
        assert!(
            err.message().starts_with(&format!("Path is outside the workspace: {path}")),
            "{}",
            err.message()
        );
    }
    let abs = outer.path().join("secret.ts").canonicalize().unwrap();
    let err = tool
        .execute(args(abs.to_str().unwrap()), &staged_core::CancelToken::new())
        .await
        .unwrap_err();
    assert!(err.message().starts_with("Path is outside the workspace:"), "{}", err.message());
    assert_eq!(std::fs::read_to_string(outer.path().join("secret.ts")).unwrap(), "foo(1);\n");
}

#[tokio::test]
async fn absolute_path_inside_is_fine() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    let abs = fx.root().join("a.ts");
    let res = fx.edit(args(abs.to_str().unwrap())).await.unwrap();
    assert_eq!(common::details(&res)["fileReplacements"], json!([{"path": "a.ts", "count": 1}]));
}

#[cfg(unix)]
#[tokio::test]
async fn symlink_pointing_out_is_refused_and_never_followed_in_walks() {
    let outer = tempfile::tempdir().unwrap();
    common::write(outer.path(), "secret.ts", "foo(1);\n");
    common::write(outer.path(), "secretdir/b.ts", "foo(1);\n");
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    std::os::unix::fs::symlink(outer.path().join("secret.ts"), fx.root().join("link.ts")).unwrap();
    std::os::unix::fs::symlink(outer.path().join("secretdir"), fx.root().join("linkdir")).unwrap();
    let err = fx.edit(args("link.ts")).await.unwrap_err();
    assert!(
        err.message().starts_with("Path is outside the workspace: link.ts"),
        "{}",
        err.message()
    );
    let err = fx.edit(args("linkdir")).await.unwrap_err();
    assert!(
        err.message().starts_with("Path is outside the workspace: linkdir"),
        "{}",
        err.message()
    );
    // A walk skips symlinks entirely.
    let res = fx.edit(args(".")).await.unwrap();
    assert_eq!(common::details(&res)["fileReplacements"], json!([{"path": "a.ts", "count": 1}]));
    fx.apply().await;
    assert_eq!(std::fs::read_to_string(outer.path().join("secret.ts")).unwrap(), "foo(1);\n");
    assert_eq!(std::fs::read_to_string(outer.path().join("secretdir/b.ts")).unwrap(), "foo(1);\n");
}

#[tokio::test]
async fn missing_path_and_urls_are_clear_errors() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    let cases = [
        ("nope.ts", "Path not found: nope.ts"),
        (
            "https://example.com/a.ts",
            "Cannot rewrite external URL: https://example.com/a.ts. Use `read` or `search` to inspect fetched web content; ast_edit only applies to local files.",
        ),
        ("skill://x/a.ts", "Cannot rewrite internal URL without a backing file: skill://x/a.ts"),
        ("  ", "Search scope entries must be non-empty paths or globs"),
    ];
    for (path, message) in cases {
        let err = fx.edit(args(path)).await.unwrap_err();
        assert_eq!(err.message(), message);
    }
    let err = fx
        .edit(json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": []}))
        .await
        .unwrap_err();
    assert_eq!(err.message(), "`paths` must contain at least one path or glob");
}
