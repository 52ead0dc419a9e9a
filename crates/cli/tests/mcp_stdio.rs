//! `staged mcp` over stdio answers every bad frame with a JSON-RPC error and keeps serving:
//! bad JSON, invalid UTF-8, 100k-deep nesting, a line over 16 MiB, a message that is not
//! JSON-RPC. A line far over the limit is dropped without buffering it.
// See: issue 10 §7 (bad frames got no reply, so a client waiting on the id hung).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod mcp_process;

use mcp_process::McpProcess;
use serde_json::{Value, json};

const MIB: usize = 1024 * 1024;

fn pending_call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "pending", "arguments": {}}})
}

#[track_caller]
fn assert_error(reply: &Value, id: Value, code: i64, message_start: &str) {
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    assert_eq!(reply["id"], id, "{reply}");
    assert_eq!(reply["error"]["code"], code, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.starts_with(message_start), "{reply}");
}

#[test]
fn every_bad_frame_gets_an_error_reply_and_the_next_frame_is_served() {
    let dir = common::workspace(&[]);
    let mut server = McpProcess::initialized(dir.path());

    server.send(b"{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/list\"\n");
    assert_error(&server.next(), json!(2), -32700, "Parse error: EOF while parsing");

    server.send(b"this is not json\n");
    assert_error(&server.next(), Value::Null, -32700, "Parse error: expected");

    server.send(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"ast_grep\",\"arguments\":{\"pattern\":\"\xff\xfe\",\"paths\":[\".\"]}}}\n");
    assert_error(&server.next(), json!(3), -32700, "Parse error: the frame is not valid UTF-8");

    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"deep\",\"method\":\"tools/call\",\"params\":{{\"name\":\"pending\",\"arguments\":{{\"x\":{}{}}}}}}}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    server.send(deep.as_bytes());
    assert_error(&server.next(), json!("deep"), -32700, "Parse error: the JSON nests deeper");

    // Over 16 MiB, with the id at the end of the line.
    let mut long = b"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"pending\",\"arguments\":{\"pad\":\"".to_vec();
    long.resize(long.len() + 16 * MIB + 1, b'x');
    long.extend_from_slice(b"\"}},\"id\":4}\n");
    server.send(&long);
    assert_error(
        &server.next(),
        json!(4),
        -32600,
        "Invalid request: the frame is longer than 16777216 bytes",
    );

    server.send(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":7}\n");
    assert_error(&server.next(), json!(5), -32600, "Invalid request:");
    server.send(b"[1, 2, 3]\n");
    assert_error(&server.next(), Value::Null, -32600, "Invalid request:");

    // A notification that does not parse gets no reply; the next request does.
    server.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":5}\n");
    server.send_json(&pending_call(6));
    let reply = server.next();
    assert_eq!(reply["id"], 6, "{reply}");
    assert_eq!(reply["result"]["structuredContent"]["text"], "No pending actions.", "{reply}");

    let finished = server.finish();
    assert!(finished.rest.is_empty(), "{:?}", finished.rest);
    assert!(finished.status.success(), "{}", finished.stderr);
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
}

#[test]
fn a_line_ten_times_the_limit_is_dropped_without_buffering_it() {
    let dir = common::workspace(&[]);
    let mut server = McpProcess::initialized(dir.path());
    server.send_json(&pending_call(1));
    assert_eq!(server.next()["id"], 1);
    let before = server.peak_rss_kib();

    let mut chunk = vec![b'7'; MIB];
    chunk[0] = b'[';
    server.send(&chunk);
    chunk[0] = b'7';
    for _ in 1..160 {
        server.send(&chunk);
    }
    server.send(b"]\n");
    assert_error(&server.next(), Value::Null, -32600, "Invalid request: the frame is longer");
    server.send_json(&pending_call(2));
    assert_eq!(server.next()["id"], 2);

    // At most one 16 MiB frame is ever held, not the 160 MiB line.
    let grown_mib = (server.peak_rss_kib() - before) / 1024;
    assert!(grown_mib < 64, "peak memory grew by {grown_mib} MiB");
    let finished = server.finish();
    assert!(finished.status.success(), "{}", finished.stderr);
}

#[test]
fn another_process_staging_and_resolving_brings_list_changed_between_the_replies() {
    let ws = common::workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path();
    let mut server = McpProcess::initialized(dir);
    server.send_json(&pending_call(1));
    assert_eq!(server.next()["id"], 1);

    // Another process stages: the server, which polls the shared stack, tells the client.
    let out = common::staged(dir, &["ast-edit", "--op", "oldApi($A)", "newApi($A)", "src"]);
    assert_eq!(common::code(&out), 0, "{}", common::stderr(&out));
    let note = server.next_notification();
    assert_eq!(note, json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}));
    // The notification came between two replies: the next line read is still the reply.
    server.send_json(&pending_call(2));
    let reply = server.next();
    assert_eq!(reply["id"], 2, "{reply}");
    assert_eq!(reply["result"]["structuredContent"]["details"]["count"], 1, "{reply}");

    let out = common::staged(dir, &["resolve", "discard", "--reason", "not now"]);
    assert_eq!(common::code(&out), 0, "{}", common::stderr(&out));
    let note = server.next_notification();
    assert_eq!(note["method"], "notifications/resources/list_changed");
    let finished = server.finish();
    assert!(finished.status.success(), "{}", finished.stderr);
}

/// `staged mcp` in `dir` with `tmp` as its temporary folder, its stdin piped.
fn server_with_tmpdir(dir: &std::path::Path, tmp: &std::path::Path) -> std::process::Child {
    use std::process::{Command, Stdio};
    Command::new(common::staged_bin())
        .arg("mcp")
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_server_whose_client_goes_away_leaves_no_folder_in_the_temporary_folder() {
    let dir = common::workspace(&[("a.ts", "oldApi(1);\n")]);
    let tmp = tempfile::tempdir().unwrap();
    let watch_folders = || -> Vec<String> {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("staged-watch-"))
            .collect()
    };
    let mut child = server_with_tmpdir(dir.path(), tmp.path());
    // The warm index made its cookie folder; then the client goes away.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while watch_folders().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the server made no cookie folder");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert_eq!(watch_folders(), Vec::<String>::new());
}

#[test]
fn the_folder_a_killed_server_left_in_the_temporary_folder_goes_with_the_next_server() {
    let dir = common::workspace(&[("a.ts", "oldApi(1);\n")]);
    let tmp = tempfile::tempdir().unwrap();
    let watch_folders = || -> Vec<String> {
        let mut res: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("staged-watch-"))
            .collect();
        res.sort();
        res
    };
    let server = || server_with_tmpdir(dir.path(), tmp.path());
    let wait_for = |n: usize| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while watch_folders().len() < n {
            assert!(std::time::Instant::now() < deadline, "the server made no cookie folder");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    };
    // Two servers at once; the first is killed and cannot delete its folder.
    let mut killed = server();
    wait_for(1);
    let left = watch_folders();
    let live = server();
    wait_for(2);
    killed.kill().unwrap();
    killed.wait().unwrap();
    // The next server deletes the killed one's folder, and leaves the live one's.
    let next = server();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while watch_folders().contains(&left[0]) || watch_folders().len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the killed server's folder stayed: {:?}",
            watch_folders()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(watch_folders().len(), 2, "a live server's folder was deleted");
    for mut child in [live, next] {
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(watch_folders(), Vec::<String>::new());
}
