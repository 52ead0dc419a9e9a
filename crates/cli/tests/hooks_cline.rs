//! `staged hook cline`, `staged hook install cline` and `staged doctor` for Cline through the
//! real binary: the answers staged's plugin reads, the plugin and the MCP server an install
//! writes (merged into the user's MCP settings) and takes out again, and the doctor's checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{code, installed_hook, pending_ids, read, staged_bin, stderr, stdout, workspace};
use serde_json::{Value, json};

/// Runs `staged` in `dir` with `input` on stdin and Cline's MCP settings at `settings`.
fn staged_in(dir: &Path, args: &[&str], input: &[u8], settings: &Path) -> std::process::Output {
    let no_codex = dir.join(".no-codex-home");
    common::staged_with(
        dir,
        args,
        input,
        &[("CODEX_HOME", &no_codex), ("CLINE_MCP_SETTINGS_PATH", settings)],
    )
}

/// What staged's plugin sends for Cline 3.0.65's `editor` call with `input`.
fn pre_editor(dir: &Path, input: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "hook_event_name": "PreToolUse",
        "session_id": "1796551839327_4ma46",
        "cwd": dir,
        "tool_name": "editor",
        "tool_input": input,
        "tool_use_id": "call_0",
    }))
    .unwrap()
}

#[test]
fn the_hook_skips_the_call_naming_the_preview() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let settings = dir.join(".no-cline/cline_mcp_settings.json");
    let edit = json!({"path": dir.join("src/a.ts"), "old_text": "oldApi", "new_text": "newApi"});
    let out = staged_in(&dir, &["hook", "cline"], &pre_editor(&dir, edit), &settings);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["skip"], true, "{reply}");
    let ids = pending_ids(&dir);
    assert_eq!(ids.len(), 1);
    let reason = reply["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "staged holds this edit as a preview, and nothing was written yet: {} (Edit: src/a.ts (1 replacement)). To write it, call staged__resolve",
            ids[0]
        )),
        "{reason}"
    );
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
    // A create of a file that exists is refused without staging, as Cline refuses it.
    let create = json!({"path": dir.join("src/a.ts"), "new_text": "x"});
    let out = staged_in(&dir, &["hook", "cline"], &pre_editor(&dir, create), &settings);
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .contains("without old_text it creates a file, and this file already exists"),
        "{reply}"
    );
    assert_eq!(pending_ids(&dir).len(), 1);
    // Other tools: no answer.
    let read_files = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": dir,
        "tool_name": "read_files", "tool_input": {"files": [{"path": dir.join("src/a.ts")}]}});
    let out = staged_in(&dir, &["hook", "cline"], read_files.to_string().as_bytes(), &settings);
    assert_eq!((code(&out), stdout(&out)), (0, String::new()));
}

#[test]
fn an_apply_patch_call_is_staged_as_codexs_and_an_insert_line_call_is_refused() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let settings = dir.join(".no-cline/cline_mcp_settings.json");
    let patch =
        "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-oldApi(1);\n+newApi(1);\n*** End Patch\n";
    let event = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": dir,
        "tool_name": "apply_patch", "tool_input": patch, "tool_use_id": "call_1"});
    let out = staged_in(&dir, &["hook", "cline"], event.to_string().as_bytes(), &settings);
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["skip"], true, "{reply}");
    assert!(reply["reason"].as_str().unwrap().contains("call staged__resolve"), "{reply}");
    assert_eq!(pending_ids(&dir).len(), 1);
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
    let insert = json!({"path": dir.join("src/a.ts"), "new_text": "x\n", "insert_line": 1});
    let out = staged_in(&dir, &["hook", "cline"], &pre_editor(&dir, insert), &settings);
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(reply["reason"].as_str().unwrap().contains("does not stage insert_line"), "{reply}");
    assert_eq!(pending_ids(&dir).len(), 1);
}

#[test]
fn install_writes_the_plugin_merges_the_server_and_uninstall_takes_out_only_staged() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join("settings/cline_mcp_settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let theirs = json!({"mcpServers": {"other": {"command": "other-mcp", "disabled": false}}, "note": "mine"});
    std::fs::write(&settings, theirs.to_string()).unwrap();
    for _ in 0..2 {
        let out = staged_in(&dir, &["hook", "install", "cline"], b"", &settings);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let plugin = read(&dir, ".cline/plugins/staged.js");
    assert!(
        plugin.starts_with(
            "// staged's gate for Cline, written by `staged hook install cline` (gate mode)."
        ),
        "{plugin}"
    );
    let binary = staged_bin().canonicalize().unwrap();
    assert!(plugin.contains(&format!("const STAGED = {};", json!(installed_hook()))), "{plugin}");
    assert!(plugin.contains(r#"const ARGS = ["hook", "cline"];"#), "{plugin}");
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["note"], "mine");
    assert_eq!(merged["mcpServers"]["other"], theirs["mcpServers"]["other"]);
    assert_eq!(merged["mcpServers"]["staged"], json!({"command": binary, "args": ["mcp"]}));
    let out = staged_in(&dir, &["hook", "install", "cline", "--mode", "record"], b"", &settings);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        read(&dir, ".cline/plugins/staged.js")
            .contains(r#"const ARGS = ["hook", "cline", "--mode", "record"];"#)
    );
    let out = staged_in(&dir, &["hook", "install", "cline", "--uninstall"], b"", &settings);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!dir.join(".cline/plugins/staged.js").exists());
    let left: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        left,
        json!({"mcpServers": {"other": {"command": "other-mcp", "disabled": false}}, "note": "mine"})
    );
}

#[test]
fn install_refuses_a_plugin_staged_did_not_write_and_settings_of_an_unexpected_shape() {
    let ws = workspace(&[(".cline/plugins/staged.js", "export default { name: \"mine\" };\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join("cline_mcp_settings.json");
    for args in [&["hook", "install", "cline"][..], &["hook", "install", "cline", "--uninstall"]] {
        let out = staged_in(&dir, args, b"", &settings);
        assert_ne!(code(&out), 0);
        assert!(
            stderr(&out).contains("staged.js: it is not the plugin staged writes (its first line is not staged's); nothing was changed"),
            "{}",
            stderr(&out)
        );
        assert_eq!(read(&dir, ".cline/plugins/staged.js"), "export default { name: \"mine\" };\n");
        assert!(!settings.exists());
    }
    std::fs::remove_file(dir.join(".cline/plugins/staged.js")).unwrap();
    std::fs::write(&settings, r#"{"mcpServers": "staged"}"#).unwrap();
    let out = staged_in(&dir, &["hook", "install", "cline"], b"", &settings);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("cline_mcp_settings.json: `mcpServers` is a string, where an object belongs; nothing was changed"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join(".cline/plugins/staged.js").exists());
}

#[test]
fn doctor_checks_the_plugin_and_the_server() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join("cline_mcp_settings.json");
    let out = staged_in(&dir, &["doctor"], b"", &settings);
    assert!(
        stdout(&out)
            .contains("--   Cline: staged's hooks are not installed (`staged hook install cline`)"),
        "{}",
        stdout(&out)
    );
    let out = staged_in(&dir, &["hook", "install", "cline"], b"", &settings);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = staged_in(&dir, &["doctor"], b"", &settings);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let text = stdout(&out);
    for line in [
        "ok   Cline: staged's plugin in ",
        "ok   Cline: the hook runs ",
        &format!("ok   Cline: the staged MCP server in {}", settings.display()),
        "ok   Cline: the staged MCP server answers",
        "note Cline's plugin events carry no permission mode",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    std::fs::write(&settings, "{}").unwrap();
    let out = staged_in(&dir, &["doctor"], b"", &settings);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("FAIL Cline: the staged MCP server in ")
            && stdout(&out).contains(": it is not there: run `staged hook install cline`"),
        "{}",
        stdout(&out)
    );
}
