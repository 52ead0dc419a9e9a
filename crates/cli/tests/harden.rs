//! Plugins, the agent's tools and the terminal under attack (issue 20), through the real
//! binary: a hostile plugin (`plugins/hostile.py`, plain Python) that floods stderr, outlives
//! its timeout behind a `sh -c` wrapper, answers 17 MiB or garbage, hangs, takes look-alike
//! names and labels that drive the terminal; a scripted model whose `find`, `read` and
//! `write` calls aim at huge globs, FIFOs, big files, the state folder and a symlinked plans
//! folder; and the human-facing commands fed control characters by every source.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use staged_agent_test_support::{MockModel, MockWire, Reply, Turn};
use staged_protocol::WireFormat;

use common::{code, json, pending_ids, staged, stderr, stdout, workspace};

fn hostile_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugins/hostile.py")
}

/// A user config directory declaring the hostile plugin as `hostile`, run as `command`.
fn user_config(command: &[String], timeout_ms: u64) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("staged")).unwrap();
    let toml = format!(
        "[plugins.hostile]\ncommand = {}\ntimeout_ms = {timeout_ms}\n",
        serde_json::to_string(command).unwrap()
    );
    std::fs::write(home.path().join("staged/staged.toml"), toml).unwrap();
    home
}

fn python_plugin(extra: &[&str]) -> Vec<String> {
    let mut command = vec!["python3".to_owned(), hostile_script().display().to_string()];
    command.extend(extra.iter().map(|s| (*s).to_owned()));
    command
}

/// `staged ARGS` in `dir` with the user config directory `home`.
fn run_in(dir: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(common::staged_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", home)
        .env_remove("COLUMNS")
        .output()
        .unwrap()
}

/// Stages a hostile preview with `args` (through `staged tool stage`) and returns its id.
fn stage(dir: &Path, home: &Path, args: Value) -> String {
    let out = run_in(dir, home, &["--json", "tool", "stage", "--args", &args.to_string()]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    json(&out)["details"]["pendingId"].as_str().unwrap().to_owned()
}

fn alive(pid: u32) -> bool {
    // A zombie has given up everything but its entry; it can write nothing.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

/// The output of `child`, read while it runs; kills it and fails when it still runs after
/// `limit` (a hang).
fn output_within(mut child: std::process::Child, limit: Duration, what: &str) -> Output {
    use std::io::Read;
    let mut pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        pipe.read_to_end(&mut buf).unwrap();
        buf
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        err_pipe.read_to_end(&mut buf).unwrap();
        buf
    });
    let code = wait_or_fail(&mut child, limit, what);
    let status = child.wait().unwrap();
    assert_eq!(status.code().unwrap_or(-1), code);
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// Waits for `child` up to `limit`; kills it and fails when it is still running then.
fn wait_or_fail(child: &mut std::process::Child, limit: Duration, what: &str) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---- 1. a glob that globset cannot compile -------------------------------------------------

#[test]
fn a_huge_glob_is_a_short_input_error_not_a_crash() {
    let dir = workspace(&[("a.ts", "console.log(1);\n")]);
    let glob = "*".repeat(100_000);
    let out = staged(dir.path(), &["ast-grep", "--pattern", "console.log($A)", &glob]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let shown = format!("`{}…`", "*".repeat(40));
    assert_eq!(
        stderr(&out),
        format!(
            "error: Invalid glob pattern: {shown} is 100000 bytes long; globs are limited to 4096 bytes\n"
        )
    );
}

// ---- 2. a plugin's stderr ------------------------------------------------------------------

#[test]
fn a_plugin_flooding_stderr_keeps_a_short_last_line() {
    let dir = workspace(&[]);
    let home = user_config(&python_plugin(&[]), 60_000);
    stage(dir.path(), home.path(), json!({"label": "Flood", "mode": "flood"}));
    let out = run_in(dir.path(), home.path(), &["--json", "resolve", "apply", "--reason", "go"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = json(&out)["text"].as_str().unwrap().to_owned();
    // Its last `\r`-separated segment, not the 12 MB it wrote on one line.
    assert!(text.len() < 1000, "{} bytes: {}", text.len(), &text[..300.min(text.len())]);
    assert_eq!(
        text,
        "Apply failed: plugin \"hostile\" exited (exit status: 3) during `_apply`: 100%|########################################| 200000/200000; `_apply` may have run, in part or in full"
    );
}

// ---- 3. a timed-out plugin behind a wrapper ------------------------------------------------

#[test]
fn a_timed_out_plugin_behind_a_wrapper_is_stopped_with_everything_it_started() {
    let dir = workspace(&[]);
    // `; exit $?` keeps the shell from replacing itself with python: the shape of npx or
    // `uv run`, where the plugin is a grandchild.
    let script = hostile_script().display().to_string();
    let command = vec!["sh".to_owned(), "-c".to_owned(), format!("python3 '{script}'; exit $?")];
    let home = user_config(&command, 1000);
    let id = stage(dir.path(), home.path(), json!({"label": "Slow", "mode": "slow", "seconds": 3}));
    let out = run_in(dir.path(), home.path(), &["--json", "resolve", "apply", "--reason", "go"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        json(&out)["text"],
        "Apply failed: plugin \"hostile\" did not answer `_apply` within 1000 ms; it was stopped; `_apply` may have run, in part or in full"
    );
    assert_eq!(pending_ids(dir.path()), [id], "the preview stays pending");
    // The python that would write late.txt three seconds in was stopped with its wrapper.
    let pids = std::fs::read_to_string(dir.path().join("pids.txt")).unwrap();
    let python: Vec<u32> =
        pids.lines().map(|l| l.split(' ').next().unwrap().parse().unwrap()).collect();
    for pid in &python {
        assert!(!alive(*pid), "plugin process {pid} outlived staged");
    }
    std::thread::sleep(Duration::from_secs(4));
    assert!(!dir.path().join("late.txt").exists(), "the stopped plugin wrote after the failure");
}

// ---- 4. an answer over 16 MiB, and garbage -------------------------------------------------

#[test]
fn an_answer_over_16_mib_fails_at_once_saying_so() {
    let dir = workspace(&[]);
    // Before, the 17 MiB line was dropped and staged waited out this timeout.
    let home = user_config(&python_plugin(&[]), 30_000);
    let id = stage(dir.path(), home.path(), json!({"label": "Huge", "mode": "huge"}));
    let out = run_in(dir.path(), home.path(), &["--json", "resolve", "apply", "--reason", "go"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        json(&out)["text"],
        "Apply failed: plugin \"hostile\" answered `_apply` with an error: it sent a message longer than 16 MiB, the most staged reads of one message; it was stopped; `_apply` may have run, in part or in full"
    );
    assert_eq!(pending_ids(dir.path()), [id]);
}

#[test]
fn a_garbage_answer_is_reported_as_garbage() {
    let dir = workspace(&[]);
    let home = user_config(&python_plugin(&[]), 30_000);
    stage(dir.path(), home.path(), json!({"label": "Garbage", "mode": "garbage"}));
    let out = run_in(dir.path(), home.path(), &["--json", "resolve", "apply", "--reason", "go"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        json(&out)["text"],
        "Apply failed: plugin \"hostile\" answered `_apply` with an error: it wrote something that is not a JSON-RPC message on its standard output (`this is not JSON-RPC`); a plugin writes only MCP messages there, and logs to stderr; it was stopped; `_apply` may have run, in part or in full"
    );
}

// ---- 7. control characters, labels and reasons ---------------------------------------------

const EVIL: &str = "Evil\x1b]0;pwned\x07\x1b[2J\r\nID  LABEL forged\u{9b}31m\u{202e}";

fn assert_inert(what: &str, text: &str) {
    for bad in ['\x1b', '\x07', '\r', '\u{9b}', '\u{202e}'] {
        assert!(!text.contains(bad), "{what} prints {bad:?} raw:\n{text}");
    }
}

#[test]
fn control_characters_from_every_source_are_shown_escaped() {
    let dir = workspace(&[("src/a.ts", "legacyWrap(1, 2);\n")]);
    let home = user_config(&python_plugin(&[]), 30_000);
    // A plugin's label.
    stage(dir.path(), home.path(), json!({"label": EVIL, "mode": "ok"}));
    let pending = run_in(dir.path(), home.path(), &["pending"]);
    assert_eq!(code(&pending), 0, "{}", stderr(&pending));
    assert_inert("pending", &stdout(&pending));
    assert_eq!(stdout(&pending).lines().count(), 2, "a label forged a row:\n{}", stdout(&pending));
    assert!(
        stdout(&pending)
            .contains("Evil\\x1b]0;pwned\\x07\\x1b[2J\\r\\nID  LABEL forged\\u{9b}31m\\u{202e}"),
        "{}",
        stdout(&pending)
    );
    let show = run_in(dir.path(), home.path(), &["show"]);
    assert_inert("show", &stdout(&show));
    // A reason, in the resolve block, the result text, the log and `log show`.
    let reason = format!("because\x1b[8m{EVIL}");
    let applied = run_in(dir.path(), home.path(), &["resolve", "apply", "--reason", &reason]);
    assert_eq!(code(&applied), 0, "{}", stderr(&applied));
    assert_inert("resolve", &stdout(&applied));
    let log = run_in(dir.path(), home.path(), &["log"]);
    assert_inert("log", &stdout(&log));
    assert_eq!(stdout(&log).lines().count(), 2, "{}", stdout(&log));
    let entry = run_in(dir.path(), home.path(), &["log", "show", "1"]);
    assert_inert("log show", &stdout(&entry));
    assert!(
        stdout(&entry).contains("reason:    because\\x1b[8mEvil\\x1b]0;pwned"),
        "{}",
        stdout(&entry)
    );
    // The discard text.
    let out = staged(
        dir.path(),
        &["ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "src"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let discarded = run_in(dir.path(), home.path(), &["resolve", "discard", "--reason", EVIL]);
    assert_eq!(code(&discarded), 0, "{}", stderr(&discarded));
    assert_inert("discard", &stdout(&discarded));
    // The reason is shown once, in the block, with its control characters dropped.
    assert!(stdout(&discarded).contains("\n Evil]0;pwned"), "{}", stdout(&discarded));
    // An error message that carries a model's or plugin's text.
    let err = staged(dir.path(), &["show", EVIL]);
    assert_eq!(code(&err), 2);
    assert_inert("an error", &stderr(&err));
}

#[test]
fn a_file_name_with_a_newline_is_quoted_in_the_diff_headers() {
    let dir =
        workspace(&[("src/a\nb.ts", "legacyWrap(1, 2);\n"), ("src/c.ts", "legacyWrap(3, 4);\n")]);
    let out = staged(
        dir.path(),
        &["ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "src"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let show = staged(dir.path(), &["show"]);
    let text = stdout(&show);
    assert!(
        text.contains("diff --git \"a/src/a\\nb.ts\" \"b/src/a\\nb.ts\"\n--- \"a/src/a\\nb.ts\"\n+++ \"b/src/a\\nb.ts\"\n@@ -1 +1 @@\n"),
        "{text}"
    );
    assert!(text.contains("diff --git a/src/c.ts b/src/c.ts\n"), "{text}");
    // Every line is a diff line: none of the name's pieces stands alone.
    assert!(!text.lines().any(|l| l == "b.ts" || l.starts_with("b.ts")), "{text}");
    // And the apply writes the file of that name.
    let applied = staged(dir.path(), &["resolve", "apply", "--reason", "names with newlines work"]);
    assert_eq!(code(&applied), 0, "{}", stderr(&applied));
    assert_eq!(common::read(dir.path(), "src/a\nb.ts"), "modernWrap(2, 1);\n");
}

#[test]
fn labels_and_reasons_have_a_length_cap() {
    let dir = workspace(&[("src/a.ts", "legacyWrap(1, 2);\n")]);
    let home = user_config(&python_plugin(&[]), 30_000);
    // The most one argument may be (MAX_ARG_STRLEN is 128 KiB).
    let label = "L".repeat(100_000);
    let out = run_in(
        dir.path(),
        home.path(),
        &["--json", "tool", "stage", "--args", &json!({"label": label}).to_string()],
    );
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert_eq!(
        stderr(&out),
        "error: Plugin \"hostile\" returned an invalid `staged/pending` from `stage`: `label` is 100000 characters long; a label is a one-line summary of at most 200 characters; nothing was staged\n"
    );
    assert!(pending_ids(dir.path()).is_empty());
    let out = staged(
        dir.path(),
        &["ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "src"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let reason = "r".repeat(4001);
    let out = staged(dir.path(), &["resolve", "apply", "--reason", &reason]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: --reason is 4001 characters long; a reason is at most 4000 characters\n"
    );
    assert_eq!(pending_ids(dir.path()).len(), 1, "nothing was resolved");
}

// ---- 10. rough edges -----------------------------------------------------------------------

#[test]
fn a_failed_only_names_the_label_and_keeps_the_reason() {
    let dir = workspace(&[("a.ts", "legacyWrap(1, 2);\n"), ("b.ts", "legacyWrap(3, 4);\n")]);
    let out =
        staged(dir.path(), &["ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "."]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // (`--only c.ts` is an input error found before resolving; a model's `extra` reaches the
    // tool.)
    let out = staged(
        dir.path(),
        &["resolve", "apply", "--extra", r#"{"files": ["c.ts"]}"#, "--reason", "only c"],
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "\n ✘ Failed: 2 replacements in 2 files ⟦AST Edit⟧\n\n only c\n\n`c.ts` is not a file of this preview, whose files are: a.ts, b.ts. Nothing was applied; the preview is still pending.\n"
    );
}

#[test]
fn a_file_whose_name_is_not_utf8_is_reported_not_skipped() {
    use std::os::unix::ffi::OsStrExt;
    let dir = workspace(&[("ok.ts", "console.log(2);\n")]);
    let bad = dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xff.ts"));
    std::fs::write(&bad, "console.log(1);\n").unwrap();
    let out = staged(dir.path(), &["ast-grep", "--pattern", "console.log($A)", "."]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).starts_with("2 matches in 2 files"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("- bad\u{fffd}.ts: its name is not valid UTF-8; it is shown with U+FFFD in place of the bytes that are not"),
        "{}",
        stdout(&out)
    );
    let out = staged(
        dir.path(),
        &["--json", "ast-edit", "--op", "console.log($A)", "logger.info($A)", "."],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let details = &json(&out)["details"];
    assert_eq!(details["filesTouched"], 1);
    assert_eq!(
        details["parseErrors"],
        json!([
            "bad\u{fffd}.ts: skipped: its name is not valid UTF-8 (shown with U+FFFD), and ast_edit rewrites only files it can name; rename it to rewrite it"
        ])
    );
}

#[test]
fn look_alike_plugin_tool_names_are_refused() {
    let dir = workspace(&[]);
    let home = user_config(&python_plugin(&["--lookalikes"]), 30_000);
    let out = run_in(dir.path(), home.path(), &["--json", "tools"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let value = json(&out);
    let names: Vec<&str> =
        value["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "ast_grep",
            "ast_edit",
            "edit",
            "write",
            "apply_patch",
            "stage",
            "hang",
            "my_tool",
            "pending",
            "resolve"
        ]
    );
    let why = "(tool names are compared ignoring case, \"-\" and \"_\", so that a model cannot mistake one for the other)";
    assert_eq!(
        value["loadErrors"],
        json!([
            format!(
                "plugin \"hostile\": Tool name \"Resolve\" conflicts with existing tool \"resolve\" {why}"
            ),
            format!(
                "plugin \"hostile\": Tool name \"AST_EDIT\" conflicts with existing tool \"ast_edit\" {why}"
            ),
            format!(
                "plugin \"hostile\": Tool name \"ast-edit\" conflicts with existing tool \"ast_edit\" {why}"
            ),
            format!(
                "plugin \"hostile\": Tool name \"Apply-Patch\" conflicts with existing tool \"apply_patch\" {why}"
            ),
            format!(
                "plugin \"hostile\": Tool name \"My-Tool\" conflicts with existing tool \"my_tool\" {why}"
            ),
        ])
    );
}

#[test]
fn the_state_folder_is_refused_to_ast_grep() {
    let dir = workspace(&[("a.ts", "x;\n")]);
    std::fs::create_dir(dir.path().join(".staged")).unwrap();
    std::fs::write(dir.path().join(".staged/t.ts"), "secret;\n").unwrap();
    for path in [".staged", ".staged/t.ts", ".staged/*.ts"] {
        let out = staged(dir.path(), &["ast-grep", "--pattern", "$X", "--lang", "ts", path]);
        assert_eq!(code(&out), 2, "{path}: {}", stdout(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error: Refusing {path}: it is in staged's state folder (.staged/), which holds staged's own state (tokens, transcripts, the database); tools never read or change it\n"
            )
        );
    }
}

// ---- the agent's tools: 1, 5, 8 and 10 -----------------------------------------------------

/// A workspace configured (in its own, trusted `staged.toml`) to reach `mock`.
fn agent_workspace(
    mock: &MockModel,
    files: &[(&str, &str)],
) -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = workspace(files);
    let toml = format!(
        "[agent]\nprovider = \"mock\"\n\n[providers.mock]\nwire = \"{}\"\nbase_url = \"{}\"\nmodel = \"mock-model\"\nmax_retries = 1\n",
        WireFormat::OpenaiChat.toml_name(),
        mock.base_url()
    );
    std::fs::write(dir.path().join("staged.toml"), toml).unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), home.path(), &["trust"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    (dir, home)
}

fn agent(dir: &Path, home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(common::staged_bin());
    command
        .arg("agent")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", home)
        .env_remove("COLUMNS")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn events(out: &Output) -> Vec<Value> {
    stdout(out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The text of each `tool_result` event, in order.
fn results(events: &[Value]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| (e["isError"].as_bool().unwrap(), e["text"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn the_model_cannot_end_a_run_with_a_glob_or_read_what_it_must_not() {
    let glob = "*".repeat(100_000);
    let big = format!("{}\n", "y".repeat(99)).repeat(100_000);
    let mock = MockModel::start(
        WireFormat::OpenaiChat,
        vec![
            Reply::Turn(Turn::call("c1", "find", json!({"pattern": glob}))),
            Reply::Turn(Turn::call("c2", "read", json!({"path": "pipe"}))),
            Reply::Turn(Turn::call("c3", "read", json!({"path": "big.txt", "offset": 83_880}))),
            Reply::Turn(Turn::call("c4", "read", json!({"path": ".staged/mcp-4242.token"}))),
            Reply::Turn(Turn::call("c5", "read", json!({"path": "state/mcp-4242.token"}))),
            Reply::Turn(Turn::call("c6", "find", json!({"pattern": "*", "path": ".staged"}))),
            Reply::Turn(Turn::call("c7", "read", json!({"path": ""}))),
            Reply::Turn(Turn::text("done")),
        ],
    );
    let (dir, home) = agent_workspace(&mock, &[("big.txt", &big)]);
    let dir_path = dir.path();
    std::fs::create_dir_all(dir_path.join(".staged")).unwrap();
    std::fs::write(dir_path.join(".staged/mcp-4242.token"), "s3cret-bearer-token\n").unwrap();
    std::os::unix::fs::symlink(".staged", dir_path.join("state")).unwrap();
    let status = Command::new("mkfifo").arg(dir_path.join("pipe")).status().unwrap();
    assert!(status.success());
    let child = agent(dir_path, home.path(), &["--json", "task"]).spawn().unwrap();
    // A FIFO nobody writes to used to hold `read` forever.
    let out = output_within(child, Duration::from_secs(60), "staged agent");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let events = events(&out);
    let results = results(&events);
    let star40 = "*".repeat(40);
    let refused = |path: &str| {
        format!(
            "Refusing {path}: it is in staged's state folder (.staged/), which holds staged's own state (tokens, transcripts, the database); tools never read or change it"
        )
    };
    assert_eq!(results.len(), 7, "{results:#?}");
    assert_eq!(
        results[0],
        (
            true,
            format!(
                "Invalid glob pattern: `{star40}…` is 100000 bytes long; globs are limited to 4096 bytes"
            )
        )
    );
    assert_eq!(
        results[1],
        (true, "pipe is not a regular file (it is a FIFO, a socket or a device); `read` reads only regular files".to_owned())
    );
    assert!(!results[2].0, "{:?}", results[2]);
    assert!(
        results[2].1.ends_with("[big.txt is 10000000 bytes; `read` reads only its first 8 MiB, 83886 lines, and stopped there.]"),
        "{}",
        &results[2].1[results[2].1.len().saturating_sub(300)..]
    );
    assert_eq!(results[3], (true, refused(".staged/mcp-4242.token")));
    assert_eq!(results[4], (true, refused("state/mcp-4242.token")));
    assert_eq!(results[5], (true, refused(".staged")));
    assert_eq!(
        results[6],
        (true, "`path` is empty: name a file of the workspace, relative to its root".to_owned())
    );
    assert!(!stdout(&out).contains("s3cret"), "the token reached the model");
    for request in mock.requests() {
        assert!(!request.body.to_string().contains("s3cret"), "the token reached the provider");
    }
    let end = events.iter().find(|e| e["type"] == "run_end").unwrap();
    assert_eq!(end["outcome"], "done");
    assert!(events.iter().any(|e| e["type"] == "transcript"), "the transcript was written");
}

#[test]
fn ctrl_c_cancels_a_tool_call_in_flight() {
    let mock = MockModel::start(
        WireFormat::OpenaiChat,
        vec![
            Reply::Turn(Turn::call("h1", "hang", json!({}))),
            Reply::Turn(Turn::text("never reached")),
        ],
    );
    let (dir, _) = agent_workspace(&mock, &[]);
    // The plugin never answers `hang`, and its timeout is far off.
    let home = user_config(&python_plugin(&[]), 600_000);
    let out = run_in(dir.path(), home.path(), &["trust"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut child = agent(dir.path(), home.path(), &["--json", "task"]).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let is_hang = event["type"] == "tool_call" && event["name"] == "hang";
        seen.push(event);
        if is_hang {
            std::thread::sleep(Duration::from_millis(300));
            let status =
                Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
            assert!(status.success());
            break;
        }
    }
    let rc = wait_or_fail(&mut child, Duration::from_secs(30), "staged agent after Ctrl-C");
    seen.extend(lines.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    assert_eq!(rc, 1, "{seen:#?}");
    let result = seen.iter().find(|e| e["type"] == "tool_result").expect("a result for the call");
    assert_eq!(result["text"], "Aborted: Interrupted");
    assert_eq!(seen.iter().find(|e| e["type"] == "run_end").unwrap()["outcome"], "cancelled");
    assert!(seen.iter().any(|e| e["type"] == "transcript"), "{seen:#?}");
    assert_eq!(mock.requests().len(), 1, "no model call after the interrupt");
}

#[test]
fn a_symlinked_plans_folder_is_refused_saying_why() {
    let mock = MockModel::start(
        WireFormat::OpenaiChat,
        vec![
            Reply::Turn(Turn::call(
                "w1",
                "write",
                json!({"path": "x-plan.md", "content": "# Plan\n"}),
            )),
            Reply::Turn(Turn::text("stuck")),
            Reply::Turn(Turn::text("stuck")),
        ],
    );
    let (dir, home) = agent_workspace(&mock, &[]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".staged")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".staged/plans")).unwrap();
    let out = agent(dir.path(), home.path(), &["--json", "--plan", "task"]).output().unwrap();
    let results = results(&events(&out));
    assert_eq!(
        results.first(),
        Some(&(true, "Cannot write .staged/plans/x-plan.md: .staged/plans is a symlink, and staged never follows one out of its own folder".to_owned())),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing was written outside"
    );
}
