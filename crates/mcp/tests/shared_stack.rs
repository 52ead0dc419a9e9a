//! One shared stack: the server reads the workspace's durable store on every call, so a
//! preview staged over MCP is resolvable by another process (as the `staged` CLI would), and
//! a preview staged elsewhere is visible and resolvable over MCP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, RENAMED, SOURCE, ends_with_reminder, is_error, rename_args, text};
use serde_json::json;
use staged_core::{CancelToken, ResolveOptions, Tool};
use staged_mcp::Approval;
use staged_protocol::ResolveParams;

#[tokio::test]
async fn staged_over_mcp_resolved_by_another_session() {
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = fx.connect(Approval::None).await;
    let staged = conn.call("ast_edit", rename_args(&["a.ts"])).await;
    assert!(!is_error(&staged), "{}", text(&staged));

    let other = fx.open_session();
    assert_eq!(other.store().len().unwrap(), 1);
    let res = other
        .session()
        .resolve(
            ResolveParams::apply("from the terminal"),
            ResolveOptions::default(),
            &CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(res.text_content(), "Applied 2 replacements in 1 file.");
    assert_eq!(fx.read("a.ts"), RENAMED);

    let pending = conn.call("pending", json!({})).await;
    assert_eq!(text(&pending), "No pending actions.");
    assert!(!ends_with_reminder(&pending));
    conn.close().await;
}

#[tokio::test]
async fn staged_by_another_session_resolved_over_mcp() {
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = fx.connect(Approval::None).await;

    let other = fx.open_session();
    let staged =
        other.ast_edit_tool().execute(rename_args(&["a.ts"]), &CancelToken::new()).await.unwrap();
    assert!(!staged.is_error);

    let grep = conn.call("ast_grep", json!({"pattern": "oldApi($$$A)", "paths": ["."]})).await;
    assert!(ends_with_reminder(&grep), "the reminder follows the durable stack");
    let pending = conn.call("pending", json!({})).await;
    assert_eq!(common::details(&pending)["count"], 1);

    let res = conn.call("resolve", json!({"action": "discard", "reason": "no"})).await;
    assert!(!is_error(&res), "{}", text(&res));
    assert_eq!(fx.read("a.ts"), SOURCE);
    assert!(other.store().is_empty().unwrap());
    conn.close().await;
}
