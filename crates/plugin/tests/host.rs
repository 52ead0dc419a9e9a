//! `PluginHost` with a real child process (a plain-Python MCP server, `plugins/note.py`): its
//! tools load with the callbacks hidden, a preview it stages is applied by another host and
//! session (as another process would) with the documented callback arguments, failures keep
//! the preview pending under the same id, a crashed plugin starts again, and a plugin that
//! never answers is a load error once its timeout passes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{path::Path, sync::Arc};

use serde_json::{Value, json};
use staged_core::{CancelToken, ResolveOptions};
use staged_plugin::{ConfigOrigin, PluginHost, PluginsConfig};
use staged_protocol::ResolveParams;
use staged_workspace::WorkspaceSession;

fn plugins(extra: &str) -> PluginsConfig {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugins/note.py");
    let text = format!(
        "[plugins.note]\ncommand = [\"python3\", {:?}]\ntimeout_ms = 20000\n{extra}",
        script.display().to_string()
    );
    PluginsConfig::parse("staged.toml", ConfigOrigin::User, &text).unwrap()
}

/// A host and session on `root`, with the plugin's tools loaded.
async fn open(root: &Path, config: &PluginsConfig) -> (Arc<PluginHost>, WorkspaceSession) {
    let host = PluginHost::new(root, config);
    let loaded = host.load().await;
    let ws = host.register(loaded, WorkspaceSession::builder()).open(root).unwrap();
    (host, ws)
}

async fn stage(ws: &WorkspaceSession, text: &str, mode: &str) -> String {
    let tool = ws.custom_tools().iter().find(|t| t.name() == "stage_note").unwrap().clone();
    let res = tool.execute(json!({"text": text, "mode": mode}), &CancelToken::new()).await.unwrap();
    assert_eq!(res.text_content(), "staged");
    res.details.unwrap()["pendingId"].as_str().unwrap().to_owned()
}

fn calls(root: &Path) -> Vec<Value> {
    std::fs::read_to_string(root.join("calls.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_preview_survives_the_plugin_and_the_session_and_applies_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let config = plugins("");
    let (host, ws) = open(root, &config).await;
    assert!(ws.load_errors().is_empty(), "{:?}", ws.load_errors());
    let names: Vec<String> = ws.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(
        names,
        ["ast_grep", "ast_edit", "edit", "write", "apply_patch", "stage_note", "resolve"]
    );
    let id = stage(&ws, "hello", "ok").await;
    assert_eq!(id, "pending-action:stage_note:0");
    let head = ws.store().peek().unwrap().unwrap();
    assert_eq!((head.label(), head.source_tool_name()), ("Note: hello", "stage_note"));
    assert_eq!(head.action.details(), Some(&json!({"chars": 5})));
    host.shutdown().await;
    drop(ws);

    // Another host and session: nothing is loaded; the rehydrator starts the plugin.
    let other = PluginHost::new(root, &config);
    let ws = other.register_rehydrator(WorkspaceSession::builder()).open(root).unwrap();
    let extra = json!({"ticket": 7}).as_object().cloned();
    let params = ResolveParams { extra, ..ResolveParams::apply("looks right") };
    let res =
        ws.session().resolve(params, ResolveOptions::default(), &CancelToken::new()).await.unwrap();
    assert_eq!(res.text_content(), "noted: looks right");
    assert_eq!(res.details.as_ref().unwrap()["sourceToolName"], "stage_note");
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "hello\n");
    assert_eq!(
        calls(root),
        [json!({
            "tool": "_apply_note",
            "payload": {"text": "hello", "mode": "ok"},
            "reason": "looks right",
            "extra": {"ticket": 7},
            "pendingId": "pending-action:stage_note:0"
        })]
    );
    assert!(ws.store().is_empty().unwrap());
    other.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn failures_keep_the_preview_pending_and_a_crashed_plugin_starts_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (host, ws) = open(root, &plugins("")).await;
    let session = ws.session();
    let id = stage(&ws, "no", "error").await;
    let err = session
        .resolve(ResolveParams::apply("try"), ResolveOptions::default(), &CancelToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.message(), "refused");
    assert_eq!(ws.store().peek().unwrap().unwrap().id.as_str(), id);
    let res = session
        .resolve(ResolveParams::discard("no"), ResolveOptions::default(), &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(
        res.text_content(),
        "Discarded: Note: no. Reason: no",
        "an empty reject is the default"
    );

    let id = stage(&ws, "boom", "crash").await;
    let err = session
        .resolve(ResolveParams::apply("go"), ResolveOptions::default(), &CancelToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed: plugin \"note\" exited (exit status: 5) during `_apply_note`: the note plugin fell over; `_apply_note` may have run, in part or in full"
    );
    assert_eq!(ws.store().peek().unwrap().unwrap().id.as_str(), id);
    // The next call starts the plugin again.
    let res = session
        .resolve(
            ResolveParams::discard("it crashes"),
            ResolveOptions::default(),
            &CancelToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(res.text_content(), "Discarded: Note: boom. Reason: it crashes");
    let tools: Vec<String> =
        calls(root).iter().map(|c| c["tool"].as_str().unwrap().to_owned()).collect();
    assert_eq!(tools, ["_apply_note", "_reject_note", "_apply_note", "_reject_note"]);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_that_never_answers_is_a_load_error_after_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[plugins.mute]\ncommand = [\"python3\", \"-c\", \"import time; time.sleep(60)\"]\ntimeout_ms = 300\n";
    let config = PluginsConfig::parse("staged.toml", ConfigOrigin::User, text).unwrap();
    let (host, ws) = open(dir.path(), &config).await;
    let errors: Vec<String> = ws.load_errors().iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            "plugin \"mute\": Failed to load tool: plugin \"mute\" did not answer the MCP handshake within 300 ms; it was stopped"
        ]
    );
    host.shutdown().await;
}

#[test]
fn a_plugin_started_on_a_runtime_that_ended_is_started_again() {
    // As in `staged review`, which runs each resolve on a runtime of its own.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let config = plugins("");
    let runtime = || tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let first = runtime();
    let (host, ws) = first.block_on(open(root, &config));
    first.block_on(stage(&ws, "one", "ok"));
    first.block_on(stage(&ws, "two", "ok"));
    let res = first.block_on(ws.session().resolve(
        ResolveParams::apply("a"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ));
    assert_eq!(res.unwrap().text_content(), "noted: a");
    drop(first);
    let second = runtime();
    let res = second.block_on(ws.session().resolve(
        ResolveParams::apply("b"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ));
    assert_eq!(res.unwrap().text_content(), "noted: b");
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "two\none\n");
    second.block_on(host.shutdown());
}
