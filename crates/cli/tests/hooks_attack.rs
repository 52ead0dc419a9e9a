//! Hostile hook events in gate mode (`docs/contract/hooks.md`): a tool call that names no
//! tool, Copilot CLI's edit without its arguments, or a Copilot event naming neither a tool
//! nor a stop, is refused in the client's own format, never let through.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{path::Path, process::Output};

use common::{code, read, stderr, stdout, workspace};
use serde_json::{Value, json};

fn hook(dir: &Path, client: &str, event: &Value) -> Output {
    let homes = [
        ("CODEX_HOME", dir.join(".no-codex-home")),
        ("COPILOT_HOME", dir.join(".no-copilot-home")),
        ("GEMINI_CLI_HOME", dir.join(".no-gemini-home")),
        ("CLINE_MCP_SETTINGS_PATH", dir.join(".no-cline.json")),
    ];
    let env: Vec<(&str, &Path)> = homes.iter().map(|(key, path)| (*key, path.as_path())).collect();
    common::staged_with(
        dir,
        &["hook", client, "--mode", "gate"],
        event.to_string().as_bytes(),
        &env,
    )
}

const NO_TOOL: &str = "staged could not read this hook event (the tool call names no tool), so it refuses the tool call; nothing was written.";

#[test]
fn a_tool_call_that_names_no_tool_is_refused_in_each_clients_format() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let input = json!({"file_path": dir.join("src/a.ts"), "old_string": "oldApi(1);",
                       "new_string": "newApi(1);"});
    let common = json!({"session_id": "s", "cwd": dir, "tool_input": input.clone(),
                        "tool_use_id": "t1"});
    let with = |extra: Value| {
        let mut event = common.clone();
        for (key, value) in extra.as_object().unwrap() {
            event[key] = value.clone();
        }
        event
    };
    let cases = [
        (
            "claude-code",
            with(json!({"hook_event_name": "PreToolUse"})),
            "/hookSpecificOutput/permissionDecisionReason",
        ),
        (
            "claude-code",
            with(json!({"hook_event_name": "PreToolUse", "tool_name": " "})),
            "/hookSpecificOutput/permissionDecisionReason",
        ),
        (
            "qwen-code",
            with(json!({"hook_event_name": "PreToolUse"})),
            "/hookSpecificOutput/permissionDecisionReason",
        ),
        ("gemini-cli", with(json!({"hook_event_name": "BeforeTool"})), "/reason"),
        ("cline", with(json!({"hook_event_name": "PreToolUse"})), "/reason"),
        (
            "cursor",
            with(json!({"hook_event_name": "preToolUse", "conversation_id": "c",
                               "workspace_roots": [dir]})),
            "/agent_message",
        ),
        (
            "opencode",
            json!({"hook": "tool.execute.before", "sessionID": "s", "callID": "c",
                            "args": input, "directory": dir}),
            "/reason",
        ),
        (
            "copilot",
            json!({"sessionId": "c-1", "timestamp": 1, "cwd": dir,
                   "toolArgs": {"path": dir.join("src/a.ts"), "old_str": "oldApi",
                                "new_str": "newApi"}}),
            "/permissionDecisionReason",
        ),
    ];
    for (client, event, at) in cases {
        let out = hook(&dir, client, &event);
        assert_eq!(code(&out), 0, "{client}: {}", stderr(&out));
        let reply: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{client}: no deny: {:?}", stdout(&out)));
        assert_eq!(reply.pointer(at).and_then(Value::as_str), Some(NO_TOOL), "{client}: {reply}");
    }
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}

#[test]
fn copilots_edit_or_create_without_its_arguments_is_refused_never_let_through() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    for (tool, why) in [
        ("edit", "the edit names no file_path"),
        ("create", "the Write call's arguments are not readable: missing field `path`"),
    ] {
        let event = json!({"sessionId": "c-1", "timestamp": 1, "cwd": dir, "toolName": tool});
        let out = hook(&dir, "copilot", &event);
        assert_eq!(code(&out), 0, "{tool}: {}", stderr(&out));
        let reply: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{tool}: no deny: {:?}", stdout(&out)));
        assert_eq!(reply["permissionDecision"], "deny", "{tool}: {reply}");
        assert_eq!(
            reply["permissionDecisionReason"],
            format!("staged refused this edit, and nothing was written: {why}"),
            "{tool}: {reply}"
        );
    }
}

#[test]
fn a_copilot_event_naming_neither_a_tool_nor_a_stop_is_refused_by_the_gate() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    for event in [
        json!({"sessionId": "c-1", "timestamp": 1, "cwd": dir}),
        json!({"sessionId": "c-1", "cwd": dir, "source": "new"}),
    ] {
        let out = hook(&dir, "copilot", &event);
        assert_eq!(code(&out), 0, "{event}: {}", stderr(&out));
        let reply: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{event}: no deny: {:?}", stdout(&out)));
        assert_eq!(reply["permissionDecision"], "deny", "{event}: {reply}");
        assert_eq!(
            reply["permissionDecisionReason"],
            "staged could not read this hook event (the Copilot CLI hook event is neither a tool call (no toolName or toolArgs) nor an agentStop (no stopReason)), so it refuses the tool call; nothing was written.",
            "{event}: {reply}"
        );
    }
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
}
