//! `staged hook opencode` and `staged hook cursor`, their installers and `staged doctor`
//! through the real binary: the replies staged's opencode plugin and Cursor read (in their own
//! shapes, never Claude Code's), and installs that merge into a user's files and come out
//! cleanly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    io::Write,
    path::Path,
    process::{Command, Stdio},
};

use common::{code, installed_hook, read, staged, staged_bin, stderr, stdout, workspace};
use serde_json::{Value, json};

/// Runs `staged args` in `dir` with `input` on stdin.
fn staged_with(dir: &Path, args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = Command::new(staged_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", dir.join(".no-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn edit_event(dir: &Path) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "hook": "tool.execute.before",
        "tool": "edit",
        "sessionID": "ses_1",
        "callID": "call_1",
        "args": {"filePath": dir.join("a.ts"), "oldString": "old", "newString": "new"},
        "directory": dir,
    }))
    .unwrap()
}

#[test]
fn the_hook_answers_in_opencodes_shape_and_refuses_what_it_cannot_read() {
    let ws = workspace(&[("a.ts", "old\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let out = staged_with(&dir, &["hook", "opencode"], &edit_event(&dir));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["decision"], "deny", "{reply}");
    let reason = reply["reason"].as_str().unwrap();
    assert!(reason.contains("call staged_resolve with action \"apply\""), "{reason}");
    assert_eq!(read(&dir, "a.ts"), "old\n");
    // What the gate cannot read is refused, in the shape the plugin reads.
    let out = staged_with(&dir, &["hook", "opencode"], b"not json");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["decision"], "deny", "{reply}");
    assert!(
        reply["reason"].as_str().unwrap().starts_with("staged could not read this hook event ("),
        "{reply}"
    );
    // Record mode lets it go and answers nothing.
    let out = staged_with(&dir, &["hook", "opencode", "--mode", "record"], &edit_event(&dir));
    assert_eq!((code(&out), stdout(&out)), (0, String::new()), "{}", stderr(&out));
}

#[test]
fn opencode_install_merges_into_opencode_json_and_uninstall_keeps_the_users_settings() {
    let users = json!({
        "$schema": "https://opencode.ai/config.json",
        "model": "anthropic/claude-sonnet-4-5",
        "mcp": {"other": {"type": "local", "command": ["other-server"]}},
        "permission": {"bash": "ask"},
    });
    let ws = workspace(&[("opencode.json", &serde_json::to_string_pretty(&users).unwrap())]);
    let dir = ws.path().canonicalize().unwrap();
    let config = || -> Value { serde_json::from_str(&read(&dir, "opencode.json")).unwrap() };
    for _ in 0..2 {
        let out = staged(&dir, &["hook", "install", "opencode"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let bin = staged_bin().canonicalize().unwrap().display().to_string();
    let mut expected = users.clone();
    expected["mcp"]["staged"] = json!({"type": "local", "command": [bin, "mcp"], "enabled": true});
    assert_eq!(config(), expected);
    let plugin = read(&dir, ".opencode/plugins/staged.js");
    assert!(plugin.starts_with(
        "// staged's plugin for opencode, written by `staged hook install opencode`."
    ));
    assert!(plugin.contains(&format!("const STAGED = {};", json!(installed_hook()))), "{plugin}");
    assert!(plugin.contains("const MODE = \"gate\";"), "{plugin}");
    let out = staged(&dir, &["doctor"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    for line in [
        "ok   opencode: staged's plugin in ",
        &format!("ok   opencode: the plugin runs {}", installed_hook()),
        "ok   opencode: the staged MCP server in ",
        "ok   opencode: the staged MCP server answers (",
        "note opencode's permission for edits, as staged reads it: allow",
    ] {
        assert!(stdout(&out).contains(line), "{line}\n{}", stdout(&out));
    }
    let out = staged(&dir, &["hook", "install", "opencode", "--mode", "record"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(read(&dir, ".opencode/plugins/staged.js").contains("const MODE = \"record\";"));
    let out = staged(&dir, &["hook", "install", "opencode", "--uninstall"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(config(), users);
    assert!(!dir.join(".opencode/plugins/staged.js").exists());
    let out = staged(&dir, &["doctor"]);
    assert!(
        stdout(&out).contains("--   opencode: staged's hooks are not installed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_plugin_staged_did_not_write_and_a_config_with_comments_are_left_alone() {
    let mine = "export const Mine = async () => ({});\n";
    let ws = workspace(&[(".opencode/plugins/staged.js", mine)]);
    let dir = ws.path();
    let out = staged(dir, &["hook", "install", "opencode"]);
    assert_ne!(code(&out), 0);
    assert!(stderr(&out).contains("it is not a plugin staged wrote"), "{}", stderr(&out));
    assert_eq!(read(dir, ".opencode/plugins/staged.js"), mine);
    assert!(!dir.join("opencode.json").exists());

    let commented = "{\n  // mine\n  \"model\": \"x\"\n}\n";
    let ws = workspace(&[("opencode.json", commented)]);
    let dir = ws.path();
    let out = staged(dir, &["hook", "install", "opencode"]);
    assert_ne!(code(&out), 0);
    assert!(stderr(&out).contains("opencode.json"), "{}", stderr(&out));
    assert_eq!(read(dir, "opencode.json"), commented);
    assert!(!dir.join(".opencode").exists());

    let out = staged(dir, &["hook", "install", "opencode", "--local"]);
    assert_ne!(code(&out), 0);
    assert!(stderr(&out).contains("--local is for Claude Code"), "{}", stderr(&out));
}

#[test]
fn the_cursor_hook_answers_in_cursors_shape_and_doctor_checks_its_install() {
    let ws = workspace(&[("a.ts", "old\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let event = serde_json::to_vec(&json!({
        "conversation_id": "c1",
        "generation_id": "g1",
        "hook_event_name": "preToolUse",
        "cursor_version": "2.0.77",
        "workspace_roots": [dir],
        "tool_name": "StrReplace",
        "tool_input": {"file_path": dir.join("a.ts"), "old_string": "old", "new_string": "new"},
        "tool_use_id": "t1",
        "cwd": dir,
    }))
    .unwrap();
    let out = staged_with(&dir, &["hook", "cursor"], &event);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["permission"], "deny", "{reply}");
    assert!(
        reply["agent_message"].as_str().unwrap().starts_with("staged holds this edit"),
        "{reply}"
    );
    assert_eq!(read(&dir, "a.ts"), "old\n");
    let out = staged(&dir, &["hook", "install", "cursor"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = staged(&dir, &["doctor"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    for line in [
        "ok   Cursor: hooks for Write, StrReplace and Edit in ",
        "ok   Cursor: the staged MCP server answers (",
        "note Cursor's agent writes edits without asking",
    ] {
        assert!(stdout(&out).contains(line), "{line}\n{}", stdout(&out));
    }
}

fn bash_event(dir: &Path, command: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "hook": "tool.execute.before",
        "tool": "bash",
        "sessionID": "ses_1",
        "callID": "call_1",
        "args": {"command": command, "description": "d"},
        "directory": dir,
    }))
    .unwrap()
}

/// opencode asks its permission `external_directory` before a command touches a path outside
/// its project folder, and asks by default; wrapped, the command is an argument of staged's and
/// opencode no longer sees the path. So a command naming such a path is wrapped only where that
/// permission allows, and otherwise refused in gate mode (run unwrapped in record mode).
#[test]
fn an_opencode_shell_call_naming_a_path_outside_the_project_follows_external_directory() {
    let dir = workspace(&[("a.ts", "old\n")]);
    let root = dir.path().canonicalize().unwrap();
    let hook = |mode: &str, command: &str| {
        let out =
            staged_with(&root, &["hook", "opencode", "--mode", mode], &bash_event(&root, command));
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        out
    };
    let reply =
        |command: &str| -> Value { serde_json::from_slice(&hook("gate", command).stdout).unwrap() };
    let wrapped = |reply: &Value| {
        reply["args"]["command"].as_str().is_some_and(|c| c.contains(" shell-run "))
    };
    for command in ["cp a.ts ../elsewhere.ts", "cat /etc/hostname", "cd ~ && ls", "ls \"../x\""] {
        let answer = reply(command);
        assert_eq!(answer["decision"], "deny", "{command}: {answer}");
        let reason = answer["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("staged runs an opencode shell command that names a path outside the project under its wrapper only where opencode's permission for external_directory is \"allow\" (it names "),
            "{reason}"
        );
        assert!(
            reason.contains("opencode's default for external_directory is \"ask\""),
            "{reason}"
        );
        assert!(hook("record", command).stdout.is_empty(), "record mode runs it unwrapped");
    }
    // Paths inside the project, and words that only look like paths, are wrapped.
    let inside = format!("cp a.ts {}/b.ts && sed -i 's/old/new/' a.ts", root.display());
    assert!(wrapped(&reply(&inside)), "{}", reply(&inside));
    // Allowed, every path is wrapped; a per-path rule staged does not match is not.
    std::fs::write(
        root.join("opencode.json"),
        r#"{"permission": {"external_directory": "allow"}}"#,
    )
    .unwrap();
    assert!(wrapped(&reply("cp a.ts ../elsewhere.ts")));
    let rules = r#"{"permission": {"external_directory": {"*": "allow", "/etc/*": "deny"}}}"#;
    std::fs::write(root.join("opencode.json"), rules).unwrap();
    let answer = reply("cat /etc/hostname");
    assert_eq!(answer["decision"], "deny", "{answer}");
    assert!(answer["reason"].as_str().unwrap().contains("\"/etc/*\":\"deny\""), "{answer}");
    assert_eq!(read(&root, "a.ts"), "old\n");
}
