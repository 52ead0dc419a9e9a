//! Shared helpers of the CLI's end-to-end tests: temporary workspaces and running the real
//! `staged` binary in them.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
};

pub(crate) fn staged_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_staged"))
}

/// `staged-hook`, the hooks alone, built beside `staged`: what `staged hook install` writes
/// into the clients' hooks.
pub(crate) fn hook_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_staged-hook"))
}

/// [`hook_bin`]'s canonical path, as an install names it.
pub(crate) fn installed_hook() -> String {
    hook_bin().canonicalize().unwrap().display().to_string()
}

/// Runs `staged` in `dir` with `args` (`hook claude-code --mode record`, ...) and `event` on
/// stdin, as an agent runs a hook: without a terminal, without colour, and with no Codex home.
pub(crate) fn hook(dir: &Path, args: &[&str], event: &serde_json::Value) -> Output {
    let no_codex = dir.join(".no-codex-home");
    let input = serde_json::to_vec(event).unwrap();
    staged_with(dir, args, &input, &[("CODEX_HOME", no_codex.as_path())])
}

/// Starts `staged` in `dir` with `args` and `event` on stdin, as a client starts a hook (its
/// stdin closed after the event), with stdout and stderr piped.
pub(crate) fn spawn_with_event(dir: &Path, args: &[&str], event: &serde_json::Value) -> Child {
    let mut child = spawn_piped(&staged_bin(), dir, args, &[]);
    child.stdin.take().unwrap().write_all(event.to_string().as_bytes()).unwrap();
    child
}

/// Starts `bin` in `dir` with `args` and the environment `env`, without colour, its stdin,
/// stdout and stderr piped.
pub(crate) fn spawn_piped(bin: &Path, dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Child {
    let mut command = Command::new(bin);
    command.args(args).current_dir(dir).env("NO_COLOR", "1");
    for (key, value) in env {
        command.env(key, value);
    }
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    command.spawn().unwrap()
}

/// The output of `child` once it exits, failing the test (and killing it) rather than
/// waiting past a minute: for calls that must not hang on what a test planted. `what` names
/// the call in the failure.
pub(crate) fn output_within_a_minute(mut child: Child, what: &str) -> Output {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed().as_secs() > 60 {
            let _ = child.kill();
            panic!("{what} hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// How long a command run by [`run_within`] may take before the test calls it hung (a hung
/// hook is one the client times out, and Claude Code then runs the tool: a gate that fails
/// open).
pub(crate) const HUNG: std::time::Duration = std::time::Duration::from_secs(120);

/// Runs `staged` in `dir` with `args`, `input` on stdin and the environment `env`, without
/// a terminal and without colour (a client's hook call, with the client's homes in `env`).
pub(crate) fn staged_with(
    dir: &Path,
    args: &[&str],
    input: &[u8],
    env: &[(&str, &Path)],
) -> Output {
    run_within(&staged_bin(), dir, args, input, env)
}

/// Runs `bin` (`staged`, `staged-hook`, or a copy of either) in `dir` with `args`, `input` on
/// stdin and the environment `env`, without a terminal and without colour; fails the test if
/// it has not exited after [`HUNG`]. It may answer before it read all its input (a hook's
/// refusal): a closed stdin is not a failure.
pub(crate) fn run_within(
    bin: &Path,
    dir: &Path,
    args: &[&str],
    input: &[u8],
    env: &[(&str, &Path)],
) -> Output {
    use std::io::Read;
    let mut child = spawn_piped(bin, dir, args, env);
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > HUNG {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`{} {}` hung: no exit after {} s",
                bin.display(),
                args.join(" "),
                HUNG.as_secs()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// A temporary workspace (a git root) with the given files.
pub(crate) fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".git")).expect("mkdir .git");
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

/// Runs `staged` in `dir` with `args`, without a terminal and without colour.
pub(crate) fn staged(dir: &Path, args: &[&str]) -> Output {
    Command::new(staged_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .expect("run staged")
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

pub(crate) fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|err| panic!("stdout is not JSON ({err}): {}", stdout(out)))
}

pub(crate) fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).expect("read")
}

/// The ids of the pending stack, newest first.
pub(crate) fn pending_ids(dir: &Path) -> Vec<String> {
    let out = staged(dir, &["--json", "pending"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json(&out)["pending"]
        .as_array()
        .expect("pending array")
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_owned())
        .collect()
}

/// The arguments of `staged shell-run` running `command` for Claude Code's session
/// `session-1` in `mode`.
pub(crate) fn shell_run_args<'a>(mode: &'a str, command: &'a str) -> [&'a str; 9] {
    [
        "shell-run",
        "--client",
        "claude-code",
        "--session",
        "session-1",
        "--mode",
        mode,
        "--",
        command,
    ]
}

/// Claude Code's Write of `text` to `path` in session `session`, recorded: PreToolUse, the
/// client's write, PostToolUse.
pub(crate) fn recorded_write(dir: &Path, session: &str, call: &str, path: &str, text: &str) {
    let file = dir.join(path);
    let input = serde_json::json!({"file_path": file, "content": text});
    let pre = serde_json::json!({"session_id": session, "cwd": dir, "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": input, "tool_use_id": call,
        "permission_mode": "acceptEdits"});
    let out = hook(dir, &["hook", "claude-code", "--mode", "record"], &pre);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let original = std::fs::read_to_string(&file).ok();
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&file, text).unwrap();
    let kind = if original.is_some() { "update" } else { "create" };
    let post = serde_json::json!({"session_id": session, "cwd": dir, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": input, "tool_use_id": call,
        "permission_mode": "acceptEdits",
        "tool_response": {"type": kind, "filePath": file, "content": text, "structuredPatch": [],
            "originalFile": original}});
    let out = hook(dir, &["hook", "claude-code", "--mode", "record"], &post);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}
