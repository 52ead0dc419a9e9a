//! The preview-then-resolve flow over MCP: stage with `ast_edit`, see the reminder on other
//! tools' results, list with `pending`, then `resolve` apply or discard; and how errors reach
//! the client (isError results with the exact message, never protocol errors).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{
    ClientSetup, Fixture, REMINDER, RENAMED, SOURCE, details, ends_with_reminder, head, is_error,
    rename_args, text, texts,
};
use rmcp::model::ProtocolVersion;
use serde_json::json;
use staged_core::NO_PENDING_APPLY_TEXT;
use staged_mcp::Approval;

#[tokio::test]
async fn staging_shows_the_reminder_everywhere_but_resolve_and_apply_writes() {
    for protocol in [ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25] {
        stage_remind_apply(protocol).await;
    }
}

async fn stage_remind_apply(protocol: ProtocolVersion) {
    let fx = Fixture::new(&[("src/a.ts", SOURCE)]);
    let conn = fx
        .connect_with(
            Approval::None,
            ClientSetup { protocol, answer: None, stage_while_asked: None },
        )
        .await;

    let grep = conn.call("ast_grep", json!({"pattern": "oldApi($$$A)", "paths": ["src"]})).await;
    assert!(!is_error(&grep), "{}", text(&grep));
    assert!(!ends_with_reminder(&grep), "nothing pending yet: {}", text(&grep));
    assert_eq!(head(&grep), json!(null));

    let staged = conn.call("ast_edit", rename_args(&["src"])).await;
    assert!(!is_error(&staged), "{}", text(&staged));
    assert!(ends_with_reminder(&staged), "{:?}", texts(&staged));
    // Clients that hand the model only `structuredContent` still show it the preview notice
    // and the reminder.
    let structured = staged.structured_content.clone().unwrap();
    let model_text = structured["text"].as_str().unwrap();
    assert!(model_text.starts_with("Preview only: files are NOT modified yet."), "{model_text}");
    assert!(model_text.ends_with(&format!("\n{REMINDER}")), "{model_text}");
    let details = details(&staged);
    assert_eq!(details["totalReplacements"], 2);
    assert_eq!(head(&staged)["id"], details["pendingId"]);
    assert_eq!(head(&staged)["label"], "AST Edit: 2 replacements in 1 file");
    assert!(details["diff"].as_str().unwrap().contains("+newApi(1);"));
    assert_eq!(fx.read("src/a.ts"), SOURCE, "a preview writes nothing");

    let grep = conn.call("ast_grep", json!({"pattern": "oldApi($$$A)", "paths": ["src"]})).await;
    assert!(ends_with_reminder(&grep), "{:?}", texts(&grep));

    let pending = conn.call("pending", json!({})).await;
    assert!(ends_with_reminder(&pending));
    let listed = common::details(&pending);
    assert_eq!(listed["count"], 1);
    assert_eq!(listed["pending"][0]["source"], "ast_edit");
    assert_eq!(listed["pending"][0]["id"], details["pendingId"]);
    assert!(text(&pending).contains(listed["pending"][0]["label"].as_str().unwrap()));

    let applied = conn.call("resolve", json!({"action": "apply", "reason": "rename"})).await;
    assert!(!is_error(&applied), "{}", text(&applied));
    assert!(!ends_with_reminder(&applied));
    assert_eq!(text(&applied), "Applied 2 replacements in 1 file.");
    assert_eq!(common::details(&applied)["action"], "apply");
    assert_eq!(head(&applied), json!(null));
    assert_eq!(fx.read("src/a.ts"), RENAMED);

    let pending = conn.call("pending", json!({})).await;
    assert_eq!(text(&pending), "No pending actions.");
    assert!(!ends_with_reminder(&pending));
    conn.close().await;
}

#[tokio::test]
async fn discard_leaves_files_alone_and_empties_the_stack() {
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = fx.connect(Approval::None).await;
    let staged = conn.call("ast_edit", rename_args(&["a.ts"])).await;
    assert!(ends_with_reminder(&staged));
    let discarded = conn.call("resolve", json!({"action": "discard", "reason": "not now"})).await;
    assert!(!is_error(&discarded), "{}", text(&discarded));
    assert!(text(&discarded).starts_with("Discarded: "), "{}", text(&discarded));
    assert!(!ends_with_reminder(&discarded));
    assert_eq!(fx.read("a.ts"), SOURCE);
    assert!(fx.open_session().store().is_empty().unwrap());
    conn.close().await;
}

#[tokio::test]
async fn resolve_with_nothing_pending_is_an_error_result_with_the_exact_message() {
    let fx = Fixture::new(&[]);
    let conn = fx.connect(Approval::None).await;
    let res = conn.call("resolve", json!({"action": "apply", "reason": "go"})).await;
    assert!(is_error(&res));
    assert_eq!(texts(&res), [NO_PENDING_APPLY_TEXT]);
    conn.close().await;
}

#[tokio::test]
async fn bad_arguments_are_error_results_naming_the_problem() {
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = fx.connect(Approval::None).await;
    let res =
        conn.call("ast_edit", json!({"ops": [{"pat": "oldApi($A)"}], "paths": ["a.ts"]})).await;
    assert!(is_error(&res));
    assert!(text(&res).contains("out"), "{}", text(&res));
    let res = conn.call("resolve", json!({"action": "maybe", "reason": "x"})).await;
    assert!(is_error(&res));
    assert!(text(&res).contains("maybe"), "{}", text(&res));
    conn.close().await;
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused_with_the_tools_message() {
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = fx.connect(Approval::None).await;
    let res = conn.call("ast_edit", rename_args(&["../outside.ts"])).await;
    assert!(is_error(&res));
    assert!(
        text(&res).starts_with("Path is outside the workspace: ../outside.ts"),
        "{}",
        text(&res)
    );
    let res = conn.call("ast_grep", json!({"pattern": "oldApi($A)", "paths": ["/etc"]})).await;
    assert!(is_error(&res));
    assert!(text(&res).starts_with("Path is outside the workspace:"), "{}", text(&res));
    conn.close().await;
}

#[tokio::test]
async fn an_error_result_while_something_is_pending_still_ends_with_the_reminder() {
    let fx = Fixture::new(&[("a.ts", SOURCE)]);
    let conn = fx.connect(Approval::None).await;
    conn.call("ast_edit", rename_args(&["a.ts"])).await;
    let res = conn.call("ast_grep", json!({"pattern": "oldApi($A)", "paths": ["../x"]})).await;
    assert!(is_error(&res));
    assert!(ends_with_reminder(&res), "{:?}", texts(&res));
    conn.close().await;
}

#[tokio::test]
async fn unknown_tool_is_a_protocol_error() {
    let fx = Fixture::new(&[]);
    let conn = fx.connect(Approval::None).await;
    let err =
        conn.client.call_tool(rmcp::model::CallToolRequestParams::new("nope")).await.unwrap_err();
    assert!(err.to_string().contains("Unknown tool: `nope`"), "{err}");
    conn.close().await;
}

#[tokio::test]
async fn resolve_reminds_when_it_leaves_another_preview_on_top() {
    let fx = Fixture::new(&[("a.ts", SOURCE), ("b.ts", SOURCE)]);
    let conn = fx.connect(Approval::None).await;
    let first = conn.call("ast_edit", rename_args(&["a.ts"])).await;
    let second = conn.call("ast_edit", rename_args(&["b.ts"])).await;
    assert!(ends_with_reminder(&second));

    let applied = conn.call("resolve", json!({"action": "apply", "reason": "b first"})).await;
    assert!(!is_error(&applied), "{}", text(&applied));
    assert!(ends_with_reminder(&applied), "the older preview is now on top: {:?}", texts(&applied));
    assert_eq!(head(&applied), head(&first));
    assert_eq!(fx.read("b.ts"), RENAMED);

    // The file changed since the preview: the apply writes nothing and retires the stale
    // preview, so nothing is left to remind of.
    std::fs::write(fx.root().join("a.ts"), "oldApi(9);\n").unwrap();
    let stale = conn.call("resolve", json!({"action": "apply", "reason": "a next"})).await;
    assert!(is_error(&stale), "{}", text(&stale));
    assert!(!ends_with_reminder(&stale), "{:?}", texts(&stale));
    assert_eq!(head(&stale), json!(null));
    assert_eq!(fx.read("a.ts"), "oldApi(9);\n");
    conn.close().await;
}

#[tokio::test]
async fn text_previews_stage_remind_and_apply_over_mcp() {
    let fx = Fixture::new(&[("src/a.ts", SOURCE), ("src/old.ts", "gone\n")]);
    let conn = fx.connect(Approval::None).await;
    let edited = conn
        .call(
            "edit",
            json!({"path": "src/a.ts", "old_string": "oldApi(1);", "new_string": "newApi(1);"}),
        )
        .await;
    assert!(!is_error(&edited), "{}", text(&edited));
    assert!(ends_with_reminder(&edited), "{:?}", texts(&edited));
    assert_eq!(head(&edited)["label"], "Edit: src/a.ts (1 replacement)");
    let structured = edited.structured_content.clone().unwrap();
    assert!(
        structured["text"]
            .as_str()
            .unwrap()
            .starts_with("Preview only: files are NOT modified yet.")
    );
    assert_eq!(details(&edited)["files"][0]["change"], "updated");
    // The same file again, while its edit is pending: an error result naming the preview.
    let again = conn.call("write", json!({"path": "src/a.ts", "content": "other\n"})).await;
    assert!(is_error(&again));
    assert!(
        text(&again).starts_with(&format!(
            "src/a.ts already has a pending preview: {} (Edit: src/a.ts (1 replacement)).",
            head(&edited)["id"].as_str().unwrap()
        )),
        "{}",
        text(&again)
    );
    let applied = conn.call("resolve", json!({"action": "apply", "reason": "rename one"})).await;
    assert_eq!(text(&applied), "Applied Edit: src/a.ts (1 replacement).");
    assert!(fx.read("src/a.ts").starts_with("newApi(1);"));

    let patch = "*** Begin Patch\n*** Delete File: src/old.ts\n*** Add File: src/new.ts\n+new\n*** End Patch";
    let patched = conn.call("apply_patch", json!({"input": patch})).await;
    assert!(!is_error(&patched), "{}", text(&patched));
    assert_eq!(head(&patched)["label"], "Patch: 2 files (1 added, 1 deleted)");
    let applied = conn
        .call(
            "resolve",
            json!({"action": "apply", "reason": "replace old", "extra": {"files": ["src/new.ts"]}}),
        )
        .await;
    assert!(!is_error(&applied), "{}", text(&applied));
    assert_eq!(fx.read("src/new.ts"), "new\n");
    assert!(fx.root().join("src/old.ts").exists(), "only the file named was applied");
    assert_eq!(head(&applied)["label"], "Patch: 1 file (1 deleted)");
    conn.close().await;
}
