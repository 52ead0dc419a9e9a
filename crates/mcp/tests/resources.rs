//! Big previews and the stack as resources: a preview too big for one result is a summary and
//! a `resource_link`; `resources/read` serves its whole diff byte for byte while it is pending,
//! and says what became of it afterwards; a hostile URI reads nothing; and the client hears
//! `notifications/resources/list_changed` when another process stages or resolves
//! (`docs/contract/mcp.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{ClientSetup, Fixture, REMINDER, details, is_error, rename_args, text, write};
use rmcp::model::{
    ErrorCode, ProtocolVersion, ReadResourceRequestParams, ResourceContents, ServerNotification,
    SubscriptionFilter,
};
use serde_json::json;
use staged_core::{CancelToken, Tool};
use staged_mcp::{Approval, MAX_INLINE_RESULT_BYTES};

const PROTOCOLS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25];

/// A workspace of `files` TypeScript files, each with `calls` `oldApi` calls far enough apart
/// to be hunks of their own, with non-ASCII text and tabs in them.
fn big_fixture(files: usize, calls: usize) -> Fixture {
    let fx = Fixture::new(&[]);
    for f in 0..files {
        let mut source = String::new();
        for c in 0..calls {
            source.push_str(&format!("const v{c} = oldApi({f}, {c}, \"é\t→ {c}\");\n"));
            source.push_str(
                "// filler\n// filler\n// filler\n// filler\n// filler\n// filler\n// filler\n",
            );
        }
        write(fx.root(), &format!("src/f{f:02}.ts"), &source);
    }
    fx
}

fn setup(protocol: ProtocolVersion) -> ClientSetup {
    ClientSetup { protocol, answer: None, stage_while_asked: None }
}

/// The diff the store holds for the newest preview, as another process (`staged show`) reads it.
fn stored_diff(fx: &Fixture) -> String {
    let other = fx.open_session();
    let head = other.store().peek().unwrap().unwrap();
    head.action.details().unwrap()["diff"].as_str().unwrap().to_owned()
}

fn read_params(uri: &str) -> ReadResourceRequestParams {
    serde_json::from_value(json!({"uri": uri})).unwrap()
}

#[tokio::test]
async fn a_big_preview_is_a_summary_and_a_link_to_its_whole_diff() {
    for protocol in PROTOCOLS {
        big_preview(protocol).await;
    }
}

async fn big_preview(protocol: ProtocolVersion) {
    let fx = big_fixture(25, 20);
    let conn = fx.connect_with(Approval::None, setup(protocol.clone())).await;
    let staged = conn.call("ast_edit", rename_args(&["src"])).await;
    assert!(!is_error(&staged), "{}", text(&staged));
    let diff = stored_diff(&fx);
    assert!(diff.len() > MAX_INLINE_RESULT_BYTES, "{}", diff.len());

    // Text, link, reminder.
    assert_eq!(staged.content.len(), 3, "{:?}", staged.content);
    let summary = staged.content[0].as_text().unwrap().text.clone();
    let link = staged.content[1].as_resource_link().expect("a resource_link").clone();
    assert_eq!(staged.content[2].as_text().unwrap().text, REMINDER);

    let d = details(&staged);
    let id = d["pendingId"].as_str().unwrap().to_owned();
    let uri = format!("staged://preview/{id}.diff");
    assert_eq!(link.uri, uri);
    assert_eq!(link.mime_type.as_deref(), Some("text/x-diff"));
    assert_eq!(link.size, Some(diff.len() as u64));
    assert_eq!(link.title.as_deref(), Some("Diff of AST Edit: 500 replacements in 25 files"));

    let lines = diff.lines().count();
    let expected_head = format!(
        "Preview only: files are NOT modified yet. Call `resolve` with action \"apply\" to write these changes, or action \"discard\" to drop them.\n\n\
         Staged {id}: AST Edit: 500 replacements in 25 files\n\n\
         This preview is too big to show in a tool result (its diff is {} bytes in {lines} lines), so here is its summary: 25 files, 500 hunks, +500 -500 lines. \
         The whole diff is the resource {uri} (linked below; read it with `resources/read`), served while the preview is pending.\n\n\
         Files:\n- src/f00.ts: 20 hunks, +20 -20\n",
        diff.len()
    );
    assert!(summary.starts_with(&expected_head), "{summary}");
    assert!(
        summary.ends_with("\n- src/f19.ts: 20 hunks, +20 -20\n- and 5 more files"),
        "{summary}"
    );
    assert!(!summary.contains("src/f20.ts"), "{summary}");

    // What Claude Code and Codex hand the model: the summary and the reminder, small.
    let structured = staged.structured_content.clone().unwrap();
    assert_eq!(structured["text"], format!("{summary}\n{REMINDER}"));
    assert!(serde_json::to_string(&structured).unwrap().len() < MAX_INLINE_RESULT_BYTES / 2);
    assert_eq!(d["diffResource"]["uri"], uri);
    assert_eq!(d["diffResource"]["bytes"], diff.len());
    assert_eq!(d["diffResource"]["hunks"], 500);
    assert_eq!(d["totalReplacements"], 500);
    let omitted: Vec<&str> =
        d["omitted"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(omitted.contains(&"diff") && omitted.contains(&"fileReplacements"), "{omitted:?}");
    assert!(d.get("diff").is_none());

    // The whole diff, byte for byte, and listed.
    let read = conn.client.read_resource(read_params(&uri)).await.unwrap();
    let [ResourceContents::TextResourceContents { uri: got, mime_type, text: body, .. }] =
        read.contents.as_slice()
    else {
        panic!("{read:?}")
    };
    assert_eq!(got, &uri);
    assert_eq!(mime_type.as_deref(), Some("text/x-diff"));
    assert!(body == &diff, "the resource is not the stored diff");
    let listed = conn.client.list_all_resources().await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].uri, uri);
    assert_eq!(listed[0].size, Some(diff.len() as u64));

    // Resolved, the link says what became of it.
    let applied = conn.call("resolve", json!({"action": "apply", "reason": "rename"})).await;
    assert!(!is_error(&applied), "{}", text(&applied));
    let err = conn.client.read_resource(read_params(&uri)).await.unwrap_err();
    let err = format!("{err:?}");
    assert!(
        err.contains(&format!(
            "{id} is no longer pending: it was applied (log entry 1), and a preview's diff is served only while it is pending. `staged log show 1` shows what was resolved."
        )),
        "{err}"
    );
    assert!(conn.client.list_all_resources().await.unwrap().is_empty());
    conn.close().await;
}

#[tokio::test]
async fn a_small_preview_is_sent_whole_and_still_listed() {
    let fx = Fixture::new(&[("src/a.ts", common::SOURCE)]);
    let conn = fx.connect(Approval::None).await;
    let staged = conn.call("ast_edit", rename_args(&["src"])).await;
    assert!(staged.content.iter().all(|block| block.as_resource_link().is_none()));
    let d = details(&staged);
    assert!(d.get("diffResource").is_none());
    let uri = format!("staged://preview/{}.diff", d["pendingId"].as_str().unwrap());
    let read = conn.client.read_resource(read_params(&uri)).await.unwrap();
    let [ResourceContents::TextResourceContents { text: body, .. }] = read.contents.as_slice()
    else {
        panic!("{read:?}")
    };
    assert_eq!(body, d["diff"].as_str().unwrap());
    conn.close().await;
}

#[tokio::test]
async fn a_hostile_uri_reads_nothing_and_says_why() {
    for protocol in PROTOCOLS {
        let fx = Fixture::new(&[("src/a.ts", common::SOURCE), ("secret.txt", "TOP-SECRET\n")]);
        let conn = fx.connect_with(Approval::None, setup(protocol.clone())).await;
        let staged = conn.call("ast_edit", rename_args(&["src"])).await;
        let id = details(&staged)["pendingId"].as_str().unwrap().to_owned();
        let root = fx.root().display().to_string();
        let long = format!("staged://preview/{}.diff", "a".repeat(100_000));
        let hostile = [
            "file:///etc/passwd".to_owned(),
            format!("file://{root}/secret.txt"),
            format!("{root}/secret.txt"),
            "secret.txt".to_owned(),
            "staged://preview/../../secret.txt".to_owned(),
            "staged://preview/../secret.txt.diff".to_owned(),
            format!("staged://preview/{}.diff", id.replace(':', "%3A")),
            format!("staged://preview/{id}.diff\n"),
            format!("staged://preview/{id}.diff?x=1"),
            format!("STAGED://preview/{id}.diff"),
            "staged://preview/\u{0}.diff".to_owned(),
            long.clone(),
            String::new(),
        ];
        for uri in &hostile {
            let err = conn.client.read_resource(read_params(uri)).await.unwrap_err();
            let rmcp::ServiceError::McpError(data) = &err else { panic!("{err:?}") };
            let expected = if protocol >= ProtocolVersion::V_2026_07_28 {
                ErrorCode::INVALID_PARAMS
            } else {
                ErrorCode::RESOURCE_NOT_FOUND
            };
            let shown: String = uri.chars().take(80).collect();
            assert_eq!(data.code, expected, "{shown:?}: {}", data.message.len());
            assert!(!data.message.contains("TOP-SECRET"), "{shown:?}");
            assert!(data.message.len() < 1_000, "{shown:?}: {}", data.message.len());
        }
        // The messages say what the server serves, and repeat a hostile URI escaped and cut.
        let err = conn.client.read_resource(read_params(&hostile[0])).await.unwrap_err();
        assert!(
            format!("{err:?}").contains(
                "Unknown resource \\\"file:///etc/passwd\\\": this server serves only the diffs of pending previews, as `staged://preview/<id>.diff` (`resources/list` lists them)."
            ),
            "{err:?}"
        );
        let err = format!("{:?}", conn.client.read_resource(read_params(&long)).await.unwrap_err());
        assert!(err.contains("(cut; 100000 characters) is not a pending preview"), "{}", err.len());
        let never = "staged://preview/pending-action:ast_edit:999.diff";
        let err = conn.client.read_resource(read_params(never)).await.unwrap_err();
        assert!(
            format!("{err:?}").contains(
                "pending-action:ast_edit:999 is not a pending preview this server can show (it was resolved, or it belongs to another agent session), and a preview's diff is served only while it is pending. `pending` lists the previews that are."
            ),
            "{err:?}"
        );
        // Nothing was resolved or written meanwhile.
        assert_eq!(fx.read("src/a.ts"), common::SOURCE);
        assert_eq!(fx.open_session().store().len().unwrap(), 1);
        conn.close().await;
    }
}

/// Stages the rename in `fx` as another process would (its own session on the workspace).
async fn stage_elsewhere(fx: &Fixture) {
    let other = fx.open_session();
    let res =
        other.ast_edit_tool().execute(rename_args(&["src"]), &CancelToken::new()).await.unwrap();
    assert!(!res.is_error, "{}", res.text_content());
}

/// Discards the newest preview as another process would.
async fn discard_elsewhere(fx: &Fixture) {
    let other = fx.open_session();
    let resolve = other.resolve_tool();
    let res = resolve
        .execute(json!({"action": "discard", "reason": "not now"}), &CancelToken::new())
        .await
        .unwrap();
    assert!(!res.is_error, "{}", res.text_content());
}

#[tokio::test]
async fn a_legacy_client_hears_of_changes_made_by_another_process() {
    let fx = Fixture::new(&[("src/a.ts", common::SOURCE)]);
    let conn = fx.connect_with(Approval::None, setup(ProtocolVersion::V_2025_11_25)).await;
    let caps = conn.client.peer_info().unwrap().capabilities.resources.clone().unwrap();
    assert_eq!(caps.list_changed, Some(true));
    // Give the watcher its first look at the stack.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(conn.list_changed(), 0, "nothing changed yet");

    stage_elsewhere(&fx).await;
    wait_for(|| conn.list_changed() >= 1).await;
    let after_stage = conn.list_changed();
    assert_eq!(conn.client.list_all_resources().await.unwrap().len(), 1);

    discard_elsewhere(&fx).await;
    wait_for(|| conn.list_changed() > after_stage).await;
    assert!(conn.client.list_all_resources().await.unwrap().is_empty());
    conn.close().await;
}

#[tokio::test]
async fn a_2026_client_hears_of_changes_on_its_listen_stream() {
    let fx = Fixture::new(&[("src/a.ts", common::SOURCE)]);
    let conn = fx.connect_with(Approval::None, setup(ProtocolVersion::V_2026_07_28)).await;
    let filter = SubscriptionFilter::builder().resources_list_changed().build();
    let mut sub = conn.client.listen(filter).await.unwrap();
    assert_eq!(sub.acknowledged().resources_list_changed, Some(true));
    tokio::time::sleep(Duration::from_millis(700)).await;

    stage_elsewhere(&fx).await;
    let got = tokio::time::timeout(Duration::from_secs(10), sub.next()).await.unwrap().unwrap();
    assert!(matches!(got, Some(ServerNotification::ResourceListChangedNotification(_))), "{got:?}");
    discard_elsewhere(&fx).await;
    let got = tokio::time::timeout(Duration::from_secs(10), sub.next()).await.unwrap().unwrap();
    assert!(matches!(got, Some(ServerNotification::ResourceListChangedNotification(_))), "{got:?}");
    conn.close().await;
}

/// Waits up to ten seconds for `done`.
async fn wait_for(done: impl Fn() -> bool) {
    for _ in 0..100 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out");
}

#[tokio::test]
async fn a_big_write_is_summarized_as_a_new_file() {
    let fx = Fixture::new(&[]);
    let conn = fx.connect(Approval::None).await;
    let content: String =
        (0..1000).map(|n| format!("line {n} of a new file, with é and ✓\n")).collect();
    let staged = conn.call("write", json!({"path": "big.txt", "content": content})).await;
    assert!(!is_error(&staged), "{}", text(&staged));
    let d = details(&staged);
    let id = d["pendingId"].as_str().unwrap().to_owned();
    let summary = staged.content[0].as_text().unwrap().text.clone();
    assert!(
        summary.starts_with(&format!(
            "Preview only: files are NOT modified yet. Call `resolve` with action \"apply\" to write these changes, or action \"discard\" to drop them.\n\nStaged {id}: Write: big.txt (new file, 1000 lines)\n\nThis preview is too big"
        )),
        "{summary}"
    );
    assert!(summary.ends_with("Files:\n- big.txt: 1 hunk, +1000 -0 (new file)"), "{summary}");
    let link = staged.content[1].as_resource_link().unwrap();
    let read = conn.client.read_resource(read_params(&link.uri)).await.unwrap();
    let [ResourceContents::TextResourceContents { text: body, .. }] = read.contents.as_slice()
    else {
        panic!("{read:?}")
    };
    assert_eq!(body, &stored_diff(&fx));
    assert!(body.contains("+line 999 of a new file, with é and ✓\n"));
    conn.close().await;
}
