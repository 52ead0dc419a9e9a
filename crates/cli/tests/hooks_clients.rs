//! `staged hook install qwen-code|gemini-cli`, their hooks and `staged doctor`'s checks,
//! through the real binary: installs that merge into the client's files and a person's own
//! settings and come out cleanly, files that cannot be merged into refused with nothing
//! written, and each client's answer in its own format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{path::Path, process::Output};

use common::{code, installed_hook, read, staged_bin, stderr, stdout, workspace};
use serde_json::{Value, json};

/// `staged` in `dir` with `args`, `input` on stdin and `env`.
fn run(dir: &Path, args: &[&str], input: &[u8], env: &[(&str, &Path)]) -> Output {
    common::staged_with(dir, args, input, env)
}

fn json_at(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn gate_command(words: &str, client: &str) -> String {
    format!(
        "{words} || {{ echo \"staged's hook could not run (exit $?), so this tool call is refused and nothing was written. Install staged, or remove its hooks: staged hook install {client} --uninstall\" >&2; exit 2; }}"
    )
}

#[test]
fn qwen_code_install_merges_and_uninstall_keeps_the_users_settings() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let qwen_home = home.path().join(".qwen");
    std::fs::create_dir_all(&qwen_home).unwrap();
    std::fs::create_dir_all(dir.join(".qwen")).unwrap();
    let project = json!({
        "model": {"name": "qwen3-coder-plus"},
        "hooks": {"PreToolUse": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit.sh"}]}]},
        "mcpServers": {"other": {"command": "other-server"}},
    });
    std::fs::write(dir.join(".qwen/settings.json"), project.to_string()).unwrap();
    let approvals = json!({"/elsewhere": {"other": {"hash": "abc", "status": "approved"}}});
    let approvals_path = qwen_home.join("mcpApprovals.json");
    std::fs::write(&approvals_path, approvals.to_string()).unwrap();
    let env = [("QWEN_HOME", qwen_home.as_path())];
    for _ in 0..2 {
        let out = run(&dir, &["hook", "install", "qwen-code"], b"", &env);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(
            stdout(&out)
                .contains("approved: the record's hash checked against the server read back from "),
            "{}",
            stdout(&out)
        );
    }
    let bin = staged_bin().canonicalize().unwrap().display().to_string();
    let hook = installed_hook();
    let s: Value = serde_json::from_str(&read(&dir, ".qwen/settings.json")).unwrap();
    assert_eq!(s["model"], project["model"]);
    assert_eq!(
        s["hooks"]["PreToolUse"],
        json!([
            {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit.sh"}]},
            {"matcher": "write_file|edit|notebook_edit|run_shell_command", "hooks": [{"type": "command", "command": gate_command(&format!("{hook} hook qwen-code"), "qwen-code")}]},
        ]),
        "installed twice, listed once"
    );
    assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 1);
    assert_eq!(s["mcpServers"]["other"], project["mcpServers"]["other"]);
    assert_eq!(s["mcpServers"]["staged"], json!({"command": bin, "args": ["mcp"], "trust": true}));
    let a = json_at(&approvals_path);
    assert_eq!(a["/elsewhere"], approvals["/elsewhere"]);
    assert_eq!(a[dir.to_string_lossy().as_ref()]["staged"]["status"], "approved");
    assert_eq!(a[dir.to_string_lossy().as_ref()]["staged"]["hash"].as_str().unwrap().len(), 64);
    // Record mode replaces the gate's hooks.
    let out = run(&dir, &["hook", "install", "qwen-code", "--mode", "record"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s: Value = serde_json::from_str(&read(&dir, ".qwen/settings.json")).unwrap();
    assert!(s["hooks"].get("Stop").is_none(), "{s}");
    assert_eq!(
        s["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        format!("{hook} hook qwen-code --mode record")
    );
    let out = run(&dir, &["hook", "install", "qwen-code", "--uninstall"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(serde_json::from_str::<Value>(&read(&dir, ".qwen/settings.json")).unwrap(), project);
    assert_eq!(json_at(&approvals_path), approvals);
}

#[test]
fn qwen_code_settings_that_do_not_parse_are_refused_and_nothing_is_written() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let qwen_home = home.path().join(".qwen");
    std::fs::create_dir_all(&qwen_home).unwrap();
    let approvals_path = qwen_home.join("mcpApprovals.json");
    std::fs::write(&approvals_path, "[]").unwrap();
    let env = [("QWEN_HOME", qwen_home.as_path())];
    let out = run(&dir, &["hook", "install", "qwen-code"], b"", &env);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("mcpApprovals.json: it is not a JSON object"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join(".qwen/settings.json").exists());
    assert_eq!(std::fs::read_to_string(&approvals_path).unwrap(), "[]");
    // `--local` is Claude Code's.
    let out = run(&dir, &["hook", "install", "qwen-code", "--local"], b"", &env);
    assert_ne!(code(&out), 0);
    assert!(stderr(&out).contains("--local is for Claude Code"), "{}", stderr(&out));
}

#[test]
fn qwen_code_doctor_checks_the_hooks_the_server_its_trust_and_its_approval() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let qwen_home = home.path().join(".qwen");
    let env = [("QWEN_HOME", qwen_home.as_path()), ("CODEX_HOME", home.path())];
    let out = run(&dir, &["doctor"], b"", &env);
    assert!(
        stdout(&out).contains(
            "--   Qwen Code: staged's hooks are not installed (`staged hook install qwen-code`)"
        ),
        "{}",
        stdout(&out)
    );
    let out = run(&dir, &["hook", "install", "qwen-code"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = run(&dir, &["doctor"], b"", &env);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}");
    for line in [
        "ok   Qwen Code: hooks for write_file, edit and notebook_edit in ",
        "ok   Qwen Code: the hooks block the edit when staged cannot run",
        "ok   Qwen Code: the hook runs ",
        "ok   Qwen Code: the staged MCP server in ",
        "ok   Qwen Code: the staged MCP server is trusted (qwen -p runs resolve without asking)",
        "ok   Qwen Code: the staged MCP server is approved for this workspace",
        "ok   Qwen Code: the staged MCP server answers",
        "note Qwen Code's approval mode is read from each event: plan denies an edit without staging it;",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    // An edited server entry is one Qwen Code skips until approved again.
    let settings = dir.join(".qwen/settings.json");
    let mut value = json_at(&settings);
    value["mcpServers"]["staged"]["args"] = json!(["mcp", "--verbose"]);
    std::fs::write(&settings, value.to_string()).unwrap();
    let out = run(&dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out)
            .contains("FAIL Qwen Code: the staged MCP server is approved for this workspace: "),
        "{}",
        stdout(&out)
    );
    // A server that is not trusted: headless qwen -p would refuse resolve.
    value["mcpServers"]["staged"]["args"] = json!(["mcp"]);
    value["mcpServers"]["staged"]["trust"] = json!(false);
    std::fs::write(&settings, value.to_string()).unwrap();
    let out = run(&dir, &["doctor"], b"", &env);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("FAIL Qwen Code: the staged MCP server is trusted"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn qwen_code_hook_answers_in_its_format_and_carries_the_session() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let event = json!({
        "session_id": "6546391b-118c-4c42-b631-478f262ea16c",
        "cwd": dir,
        "hook_event_name": "PreToolUse",
        "permission_mode": "auto-edit",
        "tool_name": "edit",
        "tool_input": {"file_path": dir.join("src/a.ts"), "old_string": "oldApi(1);", "new_string": "newApi(1);"},
        "tool_use_id": "toolu_1",
    });
    let out = run(&dir, &["hook", "qwen-code"], event.to_string().as_bytes(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
    // The Stop of the same session is held for its preview.
    let stop = json!({"session_id": "6546391b-118c-4c42-b631-478f262ea16c", "cwd": dir,
                      "hook_event_name": "Stop", "stop_hook_active": false});
    let out = run(&dir, &["hook", "qwen-code"], stop.to_string().as_bytes(), &[]);
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["decision"], "block", "{reply}");
    // Another session's Stop is not held; the person is told what waits.
    let other = stop.to_string().replace("6546391b", "00000000");
    let out = run(&dir, &["hook", "qwen-code"], other.as_bytes(), &[]);
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply.get("decision"), None, "{reply}");
    assert!(
        reply["systemMessage"].as_str().unwrap().starts_with("staged: 1 preview is still pending"),
        "{reply}"
    );
}

#[test]
fn gemini_cli_install_merges_and_uninstall_keeps_the_users_settings() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join(".gemini")).unwrap();
    let project = json!({
        "general": {"defaultApprovalMode": "auto_edit"},
        "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit.sh"}]}]},
        "mcpServers": {"other": {"command": "other-server"}},
    });
    std::fs::write(dir.join(".gemini/settings.json"), project.to_string()).unwrap();
    for _ in 0..2 {
        let out = run(&dir, &["hook", "install", "gemini-cli"], b"", &[]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let bin = staged_bin().canonicalize().unwrap().display().to_string();
    let hook = installed_hook();
    let s: Value = serde_json::from_str(&read(&dir, ".gemini/settings.json")).unwrap();
    assert_eq!(s["general"], project["general"]);
    assert_eq!(
        s["hooks"]["BeforeTool"],
        json!([
            {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit.sh"}]},
            {"matcher": "write_file|replace|run_shell_command", "hooks": [{"type": "command", "command": gate_command(&format!("{hook} hook gemini-cli"), "gemini-cli")}]},
        ]),
        "installed twice, listed once; a BeforeTool that cannot run blocks"
    );
    let after_agent = format!(
        "{hook} hook gemini-cli || {{ echo \"staged's Stop hook could not run (exit $?), so pending previews were not checked. Install staged, or remove its hooks: staged hook install gemini-cli --uninstall\" >&2; exit 1; }}"
    );
    assert_eq!(
        s["hooks"]["AfterAgent"],
        json!([{"hooks": [{"type": "command", "command": after_agent}]}])
    );
    assert_eq!(s["mcpServers"]["other"], project["mcpServers"]["other"]);
    assert_eq!(s["mcpServers"]["staged"], json!({"command": bin, "args": ["mcp"], "trust": true}));
    let out = run(&dir, &["hook", "install", "gemini-cli", "--mode", "record"], b"", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s: Value = serde_json::from_str(&read(&dir, ".gemini/settings.json")).unwrap();
    assert!(s["hooks"].get("AfterAgent").is_none(), "{s}");
    assert_eq!(
        s["hooks"]["AfterTool"][0]["hooks"][0]["command"],
        format!("{hook} hook gemini-cli --mode record")
    );
    let out = run(&dir, &["hook", "install", "gemini-cli", "--uninstall"], b"", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        serde_json::from_str::<Value>(&read(&dir, ".gemini/settings.json")).unwrap(),
        project
    );
    // A key of the wrong shape: refused, nothing written.
    let odd = r#"{"hooks": {"BeforeTool": "audit.sh"}}"#;
    std::fs::write(dir.join(".gemini/settings.json"), odd).unwrap();
    let out = run(&dir, &["hook", "install", "gemini-cli"], b"", &[]);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out)
            .contains("`hooks.BeforeTool` is a string, where a list of hook groups belongs"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&dir, ".gemini/settings.json"), odd);
}

#[test]
fn gemini_cli_doctor_checks_the_hooks_the_server_the_trust_and_the_approval_mode() {
    let ws = workspace(&[]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = [("GEMINI_CLI_HOME", home.path()), ("CODEX_HOME", home.path())];
    let out = run(&dir, &["doctor"], b"", &env);
    assert!(
        stdout(&out).contains(
            "--   Gemini CLI: staged's hooks are not installed (`staged hook install gemini-cli`)"
        ),
        "{}",
        stdout(&out)
    );
    let out = run(&dir, &["hook", "install", "gemini-cli"], b"", &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = run(&dir, &["doctor"], b"", &env);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}");
    for line in [
        "ok   Gemini CLI: hooks for write_file and replace in ",
        "ok   Gemini CLI: the hooks block the edit when staged cannot run",
        "ok   Gemini CLI: the hook runs ",
        "ok   Gemini CLI: the staged MCP server in ",
        "ok   Gemini CLI: the staged MCP server is trusted (its tools reach the model)",
        "ok   Gemini CLI: the staged MCP server answers",
        "warn Gemini CLI: this folder is trusted: ",
        "note Gemini CLI's approval mode as staged reads it: not set (",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    // The person trusts the folder and sets auto_edit.
    let gemini = home.path().join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let trusted = json!({ dir.to_string_lossy(): "TRUST_FOLDER" });
    std::fs::write(gemini.join("trustedFolders.json"), trusted.to_string()).unwrap();
    std::fs::write(
        gemini.join("settings.json"),
        r#"{"general": {"defaultApprovalMode": "auto_edit"}}"#,
    )
    .unwrap();
    let text = stdout(&run(&dir, &["doctor"], b"", &env));
    assert!(text.contains("ok   Gemini CLI: this folder is trusted"), "{text}");
    assert!(
        text.contains("note Gemini CLI's approval mode as staged reads it: auto_edit ("),
        "{text}"
    );
}

#[test]
fn gemini_cli_hook_answers_in_its_format() {
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    std::fs::write(
        home.path().join(".gemini/settings.json"),
        r#"{"general": {"defaultApprovalMode": "auto_edit"}}"#,
    )
    .unwrap();
    let env = [("GEMINI_CLI_HOME", home.path())];
    let event = json!({
        "session_id": "ba8534fb-95a0-4d9f-b1ae-63c77d1ee672",
        "cwd": dir,
        "hook_event_name": "BeforeTool",
        "tool_name": "replace",
        "tool_input": {"file_path": "src/a.ts", "old_string": "oldApi(1);", "new_string": "newApi(1);", "instruction": "rename"},
    });
    let out = run(&dir, &["hook", "gemini-cli"], event.to_string().as_bytes(), &env);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["decision"], "deny", "{reply}");
    assert!(
        reply["reason"].as_str().unwrap().starts_with("staged holds this edit as a preview"),
        "{reply}"
    );
    assert_eq!(read(&dir, "src/a.ts"), "oldApi(1);\n");
    let stop = json!({"session_id": "ba8534fb-95a0-4d9f-b1ae-63c77d1ee672", "cwd": dir,
                      "hook_event_name": "AfterAgent", "stop_hook_active": false});
    let out = run(&dir, &["hook", "gemini-cli"], stop.to_string().as_bytes(), &env);
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["decision"], "block", "{reply}");
    // An event that cannot be read is a deny in Gemini CLI's format, never a pass.
    let out = run(&dir, &["hook", "gemini-cli"], b"not json", &env);
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reply["decision"], "deny", "{reply}");
}

#[test]
fn a_gemini_cli_gate_whose_work_fails_denies_in_gemini_clis_format() {
    // Gemini CLI reads `decision`; Claude Code's `hookSpecificOutput` alone would let the
    // tool run there, so the supervisor's own refusal must be in the client's format too.
    let ws = workspace(&[("src/a.ts", "oldApi(1);\n")]);
    let dir = ws.path().canonicalize().unwrap();
    let line = format!("{}\n", "x".repeat(99));
    let event = json!({
        "session_id": "s", "cwd": dir, "hook_event_name": "BeforeTool", "tool_name": "write_file",
        "tool_input": {"file_path": "src/big.txt", "content": line.repeat(30 * 1024 * 1024 / 100)},
    });
    let out = run(
        &dir,
        &["hook", "gemini-cli", "--max-memory", "320"],
        event.to_string().as_bytes(),
        &[],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reply: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        reply,
        json!({"decision": "deny", "reason": "staged could not finish staging this edit (its worker was killed by signal 6 (SIGABRT), as when the work needs more than the 320 MiB of memory it may take), so it refuses the tool call; nothing was written."}),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join("src/big.txt").exists());
}
