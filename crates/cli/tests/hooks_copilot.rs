//! `staged hook copilot`, `staged hook install copilot` and `staged doctor` for GitHub Copilot
//! CLI through the real binary: the answers Copilot reads, installs that merge into a user's
//! `.github/hooks/*.json` and `.github/mcp.json` and come out cleanly, and the doctor's checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{code, installed_hook, pending_ids, read, stderr, stdout, workspace};
use serde_json::{Value, json};

/// Runs `staged` in `dir` with `input` on stdin, and Copilot's home `copilot_home`.
fn staged_in(dir: &Path, args: &[&str], input: &[u8], copilot_home: &Path) -> std::process::Output {
    let no_codex = dir.join(".no-codex-home");
    common::staged_with(
        dir,
        args,
        input,
        &[("CODEX_HOME", &no_codex), ("COPILOT_HOME", copilot_home)],
    )
}

/// A Copilot CLI 1.0.102 `preToolUse` of `edit`.
fn pre_edit(dir: &Path, old: &str, new: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "sessionId": "c-1",
        "timestamp": 1,
        "cwd": dir,
        "toolName": "edit",
        "toolArgs": {"path": dir.join("src/a.ts"), "old_str": old, "new_str": new},
    }))
    .unwrap()
}

fn json_of(dir: &Path, path: &str) -> Value {
    serde_json::from_str(&read(dir, path)).unwrap()
}

#[test]
fn the_hook_denies_in_copilots_shape_naming_the_preview() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let out =
        staged_in(&dir, &["hook", "copilot"], &pre_edit(&dir, "oldApi", "newApi"), home.path());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["permissionDecision"], "deny", "{reply}");
    let ids = pending_ids(&dir);
    assert_eq!(ids.len(), 1);
    let reason = reply["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "staged holds this edit as a preview, and nothing was written yet: {} (Edit: src/a.ts (1 replacement)). To write it, call staged-resolve",
            ids[0]
        )),
        "{reason}"
    );
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
    // Any other tool: no answer; an unreadable event: a deny, in Copilot's shape.
    let view =
        json!({"sessionId": "c-1", "cwd": dir, "toolName": "view", "toolArgs": {"path": dir}});
    let out = staged_in(&dir, &["hook", "copilot"], view.to_string().as_bytes(), home.path());
    assert_eq!((code(&out), stdout(&out)), (0, String::new()));
    let out = staged_in(&dir, &["hook", "copilot"], b"{not json", home.path());
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["permissionDecision"], "deny", "{reply}");
    assert!(
        reply["permissionDecisionReason"].as_str().unwrap().starts_with(
            "staged could not read this hook event (the Copilot CLI hook event is not valid: "
        ),
        "{reply}"
    );
}

#[test]
fn install_merges_into_the_users_files_and_uninstall_takes_out_only_staged() {
    let ws = workspace(&[
        (
            ".github/hooks/staged.json",
            r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./my-guard.sh", "timeoutSec": 5}], "sessionStart": [{"type": "command", "bash": "echo hi"}]}}"#,
        ),
        (
            ".github/mcp.json",
            r#"{"mcpServers": {"other": {"type": "local", "command": "other-mcp", "tools": ["*"]}}, "note": "mine"}"#,
        ),
    ]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let out = staged_in(&dir, &["hook", "install", "copilot"], b"", home.path());
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let hooks = json_of(&dir, ".github/hooks/staged.json");
    let pre = hooks["hooks"]["preToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "installing twice adds staged's hook once: {hooks}");
    assert_eq!(pre[0], json!({"type": "command", "bash": "./my-guard.sh", "timeoutSec": 5}));
    let ours = pre[1]["bash"].as_str().unwrap();
    assert!(ours.starts_with(&format!("{} hook copilot || {{", installed_hook())), "{ours}");
    assert!(ours.ends_with("staged hook install copilot --uninstall\" >&2; exit 2; }"), "{ours}");
    assert_eq!(pre[1]["timeoutSec"], 600);
    assert_eq!(hooks["hooks"]["agentStop"].as_array().unwrap().len(), 1);
    assert_eq!(hooks["hooks"]["sessionStart"], json!([{"type": "command", "bash": "echo hi"}]));
    let mcp = json_of(&dir, ".github/mcp.json");
    assert_eq!(mcp["note"], "mine");
    assert_eq!(mcp["mcpServers"]["other"]["command"], "other-mcp");
    assert_eq!(mcp["mcpServers"]["staged"]["args"], json!(["mcp"]));
    assert_eq!(mcp["mcpServers"]["staged"]["tools"], json!(["*"]));
    // Record mode replaces the gate's hooks.
    let out =
        staged_in(&dir, &["hook", "install", "copilot", "--mode", "record"], b"", home.path());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let hooks = json_of(&dir, ".github/hooks/staged.json");
    assert_eq!(hooks["hooks"]["preToolUse"].as_array().unwrap().len(), 2);
    assert!(
        hooks["hooks"]["preToolUse"][1]["bash"]
            .as_str()
            .unwrap()
            .ends_with("hook copilot --mode record")
    );
    assert_eq!(hooks["hooks"]["postToolUse"].as_array().unwrap().len(), 1);
    assert!(hooks["hooks"].get("agentStop").is_none(), "{hooks}");
    let out = staged_in(&dir, &["hook", "install", "copilot", "--uninstall"], b"", home.path());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let hooks = json_of(&dir, ".github/hooks/staged.json");
    assert_eq!(
        hooks,
        json!({"version": 1, "hooks": {
            "preToolUse": [{"type": "command", "bash": "./my-guard.sh", "timeoutSec": 5}],
            "sessionStart": [{"type": "command", "bash": "echo hi"}]}})
    );
    assert_eq!(
        json_of(&dir, ".github/mcp.json"),
        json!({"mcpServers": {"other": {"type": "local", "command": "other-mcp", "tools": ["*"]}}, "note": "mine"})
    );
}

#[test]
fn install_refuses_a_file_of_an_unexpected_shape_and_writes_nothing() {
    let ws = workspace(&[(".github/mcp.json", r#"{"mcpServers": ["staged"]}"#)]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = staged_in(&dir, &["hook", "install", "copilot"], b"", home.path());
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains(
            "mcp.json: `mcpServers` is an array, where an object belongs; nothing was changed"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join(".github/hooks/staged.json").exists());
    assert_eq!(read(&dir, ".github/mcp.json"), r#"{"mcpServers": ["staged"]}"#);
    let out = staged_in(&dir, &["hook", "install", "copilot", "--local"], b"", home.path());
    assert_ne!(code(&out), 0);
    assert!(stderr(&out).contains("--local is for Claude Code"), "{}", stderr(&out));
}

#[test]
fn doctor_checks_the_install_and_warns_until_the_folder_is_trusted() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = staged_in(&dir, &["doctor"], b"", home.path());
    assert!(
        stdout(&out).contains(
            "--   Copilot CLI: staged's hooks are not installed (`staged hook install copilot`)"
        ),
        "{}",
        stdout(&out)
    );
    let out = staged_in(&dir, &["hook", "install", "copilot"], b"", home.path());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = staged_in(&dir, &["doctor"], b"", home.path());
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let text = stdout(&out);
    let config = home.path().join("config.json");
    for line in [
        "ok   Copilot CLI: hooks for edit and create in ",
        "ok   Copilot CLI: the preToolUse hook's timeout is above the gate's own",
        "ok   Copilot CLI: the hooks block the edit when staged cannot run",
        "ok   Copilot CLI: the hook runs ",
        "ok   Copilot CLI: the staged MCP server in ",
        "ok   Copilot CLI: the staged MCP server answers",
        &format!(
            "warn Copilot CLI: this folder is trusted: {} does not list it in trustedFolders; until a person trusts it",
            config.display()
        ),
        "note Copilot CLI's events carry no permission mode",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    // Copilot's config.json starts with comment lines.
    std::fs::write(
        &config,
        format!(
            "// User settings belong in settings.json.\n{}\n",
            json!({"trustedFolders": [dir]})
        ),
    )
    .unwrap();
    let text = stdout(&staged_in(&dir, &["doctor"], b"", home.path()));
    assert!(text.contains("ok   Copilot CLI: this folder is trusted"), "{text}");
    // A hook whose timeout is Copilot's default fails open when it outlives it.
    let hooks = read(&dir, ".github/hooks/staged.json")
        .replace("\"timeoutSec\": 600", "\"timeoutSec\": 30");
    std::fs::write(dir.join(".github/hooks/staged.json"), hooks).unwrap();
    let out = staged_in(&dir, &["doctor"], b"", home.path());
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("FAIL Copilot CLI: the preToolUse hook's timeout is above the gate's own: Copilot CLI runs the edit when a hook outlives its timeoutSec; run `staged hook install copilot` again to set it to 600"),
        "{}",
        stdout(&out)
    );
}
