//! `staged agent` end to end: the real binary against a mock model server for each wire
//! format. The loop scenarios of `docs/contract/agent-loop.md`, the exit codes, the configuration
//! sources, plan mode and `--approve human` at the terminal, and Ctrl-C during an apply.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    io::{BufRead, BufReader, Write},
    path::Path,
    process::{Command, Output, Stdio},
};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use staged_agent::SKIPPED_CALL_TEXT;
use staged_agent_test_support::{MockModel, MockWire, Recorded, Reply, Turn};
use staged_core::RESOLVE_REMINDER;
use staged_protocol::WireFormat;

use common::{code, pending_ids, read, staged, stderr, stdout, workspace};

const ABORT_TEXT: &str = "Soft tool requirement 'resolve' was not satisfied after 3 forced turns; aborting to avoid an unbounded force loop.";

/// A workspace with `src/a.ts` and `src/b.ts`, configured to reach `mock` as provider `mock`.
fn agent_workspace(mock: &MockModel, wire: WireFormat) -> tempfile::TempDir {
    let dir = workspace(&[
        ("src/a.ts", "legacyWrap(x, value);\n"),
        ("src/b.ts", "legacyWrap(y, other);\n"),
    ]);
    write_config(dir.path(), mock, wire);
    dir
}

fn write_config(dir: &Path, mock: &MockModel, wire: WireFormat) {
    let toml = format!(
        "[agent]\nprovider = \"mock\"\n\n[providers.mock]\nwire = \"{}\"\nbase_url = \"{}\"\nmodel = \"mock-model\"\nmax_retries = 1\n",
        wire.toml_name(),
        mock.base_url()
    );
    std::fs::write(dir.join("staged.toml"), toml).unwrap();
}

/// Stages a rewrite of `paths` with `staged ast-edit`.
fn stage(dir: &Path, paths: &[&str]) {
    let mut args = vec!["ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)"];
    args.extend_from_slice(paths);
    let out = staged(dir, &args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

/// The `staged` command with an empty user config dir and no API keys in the environment.
///
/// A workspace `staged.toml` (here it points a provider at the mock) counts only once trusted,
/// so the person running these tests trusts it first, in that user config dir.
fn agent_command(dir: &Path, config_home: &Path, args: &[&str]) -> Command {
    if dir.join("staged.toml").is_file() {
        trust(dir, config_home);
    }
    let mut command = Command::new(common::staged_bin());
    command
        .arg("agent")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", config_home)
        .env_remove("COLUMNS")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY");
    command
}

/// `staged trust` in `dir`, recorded in `config_home`.
fn trust(dir: &Path, config_home: &Path) {
    let out = Command::new(common::staged_bin())
        .arg("trust")
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", config_home)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

fn run_agent(dir: &Path, args: &[&str], input: &str) -> Output {
    let config_home = tempfile::tempdir().unwrap();
    run_agent_in(dir, config_home.path(), args, input)
}

fn run_agent_in(dir: &Path, config_home: &Path, args: &[&str], input: &str) -> Output {
    let mut child = agent_command(dir, config_home, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The `--json` events.
fn events(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// How many times the reminder appears in a request.
fn reminders(request: &Recorded) -> usize {
    let body = request.body.to_string();
    let encoded = serde_json::to_string(RESOLVE_REMINDER).unwrap();
    body.matches(&encoded[1..encoded.len() - 1]).count()
}

fn tool_choices(requests: &[Recorded]) -> Vec<Option<Value>> {
    requests.iter().map(|r| r.tool_choice().cloned()).collect()
}

const OLD_A: &str = "legacyWrap(x, value);\n";
const NEW_A: &str = "modernWrap(value, x);\n";

#[test]
fn a_compliant_model_resolves_in_two_calls_without_tool_choice_and_one_reminder() {
    for wire in WireFormat::ALL {
        let mock = MockModel::start(
            wire,
            vec![
                Reply::Turn(Turn::resolve("r1", "apply", "the rewrite is right")),
                Reply::Turn(Turn::text("Applied the rewrite.")),
            ],
        );
        let dir = agent_workspace(&mock, wire);
        stage(dir.path(), &["src/a.ts"]);
        let out = run_agent(dir.path(), &["--json", "rewrite legacyWrap"], "");
        assert_eq!(code(&out), 0, "{wire:?}: {}", stderr(&out));
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{wire:?}");
        assert_eq!(tool_choices(&requests), [None, None], "{wire:?}");
        assert_eq!(requests.iter().map(reminders).collect::<Vec<_>>(), [1, 1], "{wire:?}");
        assert_eq!(read(dir.path(), "src/a.ts"), NEW_A);
        assert!(pending_ids(dir.path()).is_empty());
        let events = events(&out);
        assert_eq!(of_type(&events, "reminder_injected").len(), 1);
        let resolve = of_type(&events, "resolve");
        assert_eq!(resolve[0]["text"], "Applied 1 replacement in 1 file.");
        assert_eq!(resolve[0]["label"], "AST Edit: 1 replacement in 1 file");
        assert_eq!(of_type(&events, "run_end")[0]["outcome"], "done");
        assert!(of_type(&events, "message_delta").len() >= 2);
        let transcript = of_type(&events, "transcript")[0]["path"].as_str().unwrap().to_owned();
        let saved: Value = serde_json::from_str(&read(dir.path(), &transcript)).unwrap();
        assert!(transcript.starts_with(".staged/transcripts/"), "{transcript}");
        assert_eq!(saved["outcome"], "done");
        assert_eq!(saved["messages"].as_array().unwrap().len(), 5, "{:#}", saved["messages"]);
    }
}

#[test]
fn a_detour_batch_is_skipped_then_resolve_is_forced() {
    for wire in WireFormat::ALL {
        let mock = MockModel::start(
            wire,
            vec![
                Reply::Turn(Turn::call("d1", "read", json!({"path": "src/a.ts"})).and_call(
                    "d2",
                    "find",
                    json!({"pattern": "**/*.ts"}),
                )),
                Reply::Turn(Turn::resolve("r1", "apply", "ok")),
                Reply::Turn(Turn::text("Done.")),
            ],
        );
        let dir = agent_workspace(&mock, wire);
        stage(dir.path(), &["src/a.ts"]);
        let out = run_agent(dir.path(), &["--json", "task"], "");
        assert_eq!(code(&out), 0, "{wire:?}: {}", stderr(&out));
        let requests = mock.requests();
        assert_eq!(tool_choices(&requests), [None, Some(wire.forced_resolve()), None], "{wire:?}");
        let events = events(&out);
        let skipped = of_type(&events, "calls_skipped");
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0]["text"], SKIPPED_CALL_TEXT);
        assert_eq!(
            skipped[0]["calls"],
            json!([{"id": "d1", "name": "read"}, {"id": "d2", "name": "find"}])
        );
        assert!(of_type(&events, "tool_result").is_empty(), "no skipped call ran");
        assert_eq!(
            of_type(&events, "tool_choice_forced")[0]["toolChoice"],
            json!({"type": "tool", "name": "resolve"})
        );
        assert_eq!(read(dir.path(), "src/a.ts"), NEW_A);
    }
}

#[test]
fn bare_text_escalates_instead_of_ending_the_run() {
    for wire in WireFormat::ALL {
        let mock = MockModel::start(
            wire,
            vec![
                Reply::Turn(Turn::text("I think this is fine.")),
                Reply::Turn(Turn::resolve("r1", "discard", "not needed")),
                Reply::Turn(Turn::text("Discarded.")),
            ],
        );
        let dir = agent_workspace(&mock, wire);
        stage(dir.path(), &["src/a.ts"]);
        let out = run_agent(dir.path(), &["--json", "task"], "");
        assert_eq!(code(&out), 0, "{wire:?}: {}", stderr(&out));
        let requests = mock.requests();
        assert_eq!(tool_choices(&requests), [None, Some(wire.forced_resolve()), None], "{wire:?}");
        assert_eq!(
            of_type(&events(&out), "resolve")[0]["text"],
            "Discarded: AST Edit: 1 replacement in 1 file. Reason: not needed"
        );
        assert_eq!(read(dir.path(), "src/a.ts"), OLD_A);
        assert!(pending_ids(dir.path()).is_empty());
    }
}

#[test]
fn the_gate_aborts_after_three_forced_turns_with_the_exact_text() {
    for wire in WireFormat::ALL {
        let mock = MockModel::start(
            wire,
            vec![
                Reply::Turn(Turn::text("no")),
                Reply::Turn(Turn::call("d1", "read", json!({"path": "src/a.ts"}))),
                Reply::Turn(Turn::text("still no")),
                Reply::Turn(Turn::text("never")),
                Reply::Turn(Turn::text("unreachable")),
            ],
        );
        let dir = agent_workspace(&mock, wire);
        stage(dir.path(), &["src/a.ts"]);
        let before = pending_ids(dir.path());
        let out = run_agent(dir.path(), &["--json", "task"], "");
        assert_eq!(code(&out), 1, "{wire:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(&format!("error: {ABORT_TEXT}")), "{}", stderr(&out));
        let requests = mock.requests();
        let forced = Some(wire.forced_resolve());
        assert_eq!(
            tool_choices(&requests),
            [None, forced.clone(), forced.clone(), forced],
            "{wire:?}"
        );
        assert_eq!(mock.remaining(), 1);
        let events = events(&out);
        assert_eq!(of_type(&events, "abort")[0]["message"], ABORT_TEXT);
        assert_eq!(of_type(&events, "run_end")[0]["outcome"], "aborted");
        assert_eq!(pending_ids(dir.path()), before, "the preview is still pending");
        assert_eq!(read(dir.path(), "src/a.ts"), OLD_A);
    }
}

#[test]
fn with_nothing_pending_no_tool_choice_and_no_reminder_are_sent() {
    for wire in WireFormat::ALL {
        let mock = MockModel::start(wire, vec![Reply::Turn(Turn::text("Nothing to do."))]);
        let dir = agent_workspace(&mock, wire);
        let out = run_agent(dir.path(), &["task"], "");
        assert_eq!(code(&out), 0, "{wire:?}: {}", stderr(&out));
        assert!(stdout(&out).contains("Nothing to do."), "{}", stdout(&out));
        let requests = mock.requests();
        assert_eq!(tool_choices(&requests), [None]);
        assert_eq!(reminders(&requests[0]), 0);
    }
}

#[test]
fn an_apply_failure_keeps_the_preview_pending_without_a_second_reminder() {
    for wire in WireFormat::ALL {
        let mock = MockModel::start(
            wire,
            vec![
                Reply::Turn(Turn::resolve("r1", "apply", "looks right")),
                Reply::Turn(Turn::text("That failed.")),
                Reply::Turn(Turn::resolve("r2", "apply", "again")),
                Reply::Turn(Turn::resolve("r3", "discard", "cannot write")),
                Reply::Turn(Turn::text("Gave up.")),
            ],
        );
        let dir = agent_workspace(&mock, wire);
        stage(dir.path(), &["src"]);
        // A folder where the commit lock must go: the commit cannot start, so the apply
        // fails before writing anything.
        std::fs::create_dir_all(dir.path().join(".staged/journal/commit.lock")).unwrap();
        let out = run_agent(dir.path(), &["--json", "task"], "");
        assert_eq!(code(&out), 0, "{wire:?}: {}", stderr(&out));
        let requests = mock.requests();
        assert_eq!(requests.iter().map(reminders).collect::<Vec<_>>(), [1, 1, 1, 1, 1], "{wire:?}");
        assert_eq!(tool_choices(&requests)[2], Some(wire.forced_resolve()));
        let events = events(&out);
        let resolves = of_type(&events, "resolve");
        assert_eq!(resolves.len(), 3);
        for failed in &resolves[..2] {
            assert_eq!(failed["isError"], true);
            assert!(failed["text"].as_str().unwrap().starts_with("Apply failed: "), "{failed}");
        }
        assert_eq!(
            resolves[2]["text"],
            "Discarded: AST Edit: 2 replacements in 2 files. Reason: cannot write"
        );
        assert_eq!(of_type(&events, "reminder_injected").len(), 1);
        assert_eq!(
            (read(dir.path(), "src/a.ts").as_str(), read(dir.path(), "src/b.ts").as_str()),
            (OLD_A, "legacyWrap(y, other);\n")
        );
    }
}

#[test]
fn a_new_head_re_injects_the_reminder() {
    for wire in WireFormat::ALL {
        let mock = MockModel::start(
            wire,
            vec![
                Reply::Turn(Turn::resolve("r1", "apply", "b first")),
                Reply::Turn(Turn::resolve("r2", "apply", "then a")),
                Reply::Turn(Turn::text("Both applied.")),
            ],
        );
        let dir = agent_workspace(&mock, wire);
        stage(dir.path(), &["src/a.ts"]);
        stage(dir.path(), &["src/b.ts"]);
        let ids = pending_ids(dir.path());
        let out = run_agent(dir.path(), &["--json", "task"], "");
        assert_eq!(code(&out), 0, "{wire:?}: {}", stderr(&out));
        let requests = mock.requests();
        assert_eq!(requests.iter().map(reminders).collect::<Vec<_>>(), [1, 2, 2], "{wire:?}");
        assert_eq!(tool_choices(&requests), [None, None, None]);
        let events = events(&out);
        let injected: Vec<&str> = of_type(&events, "reminder_injected")
            .iter()
            .map(|e| e["pendingId"].as_str().unwrap())
            .collect();
        assert_eq!(injected, ids, "newest first, once each");
        assert_eq!(read(dir.path(), "src/a.ts"), NEW_A);
        assert_eq!(read(dir.path(), "src/b.ts"), "modernWrap(other, y);\n");
    }
}

#[test]
fn a_person_sees_streamed_text_the_diff_and_the_resolve_block() {
    let mock = MockModel::start(
        WireFormat::AnthropicMessages,
        vec![
            Reply::Turn(Turn::call(
                "e1",
                "ast_edit",
                json!({"ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($B, $A)"}], "paths": ["src/a.ts"]}),
            )),
            Reply::Turn(Turn::resolve("r1", "apply", "argument order fixed")),
            Reply::Turn(Turn::text("Rewrote one call.")),
        ],
    );
    let dir = agent_workspace(&mock, WireFormat::AnthropicMessages);
    let out = run_agent(dir.path(), &["rewrite"], "");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    for expected in [
        "→ ast_edit {",
        "-legacyWrap(x, value);",
        "+modernWrap(value, x);",
        "· reminder: resolve the pending preview pending-action:ast_edit:",
        "Resolve: apply",
        "Accept: 1 replacement in 1 file",
        "Applied 1 replacement in 1 file.",
        "Rewrote one call.",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(
        stderr(&out).contains("staged: transcript saved to .staged/transcripts/"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn configuration_comes_from_the_user_dir_then_the_workspace_then_the_flags() {
    let mock = MockModel::start(
        WireFormat::OpenaiChat,
        vec![
            Reply::Turn(Turn::text("a")),
            Reply::Turn(Turn::text("b")),
            Reply::Turn(Turn::text("c")),
        ],
    );
    let dir = workspace(&[("src/a.ts", OLD_A)]);
    let config_home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(config_home.path().join("staged")).unwrap();
    std::fs::write(
        config_home.path().join("staged/staged.toml"),
        format!("[agent]\nprovider = \"local\"\n[providers.local]\nwire = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"user-model\"\napi_key_env = \"STAGED_TEST_KEY\"\nheaders = {{ \"x-team\" = \"core\" }}\n", mock.base_url()),
    )
    .unwrap();
    let mut user_only = agent_command(dir.path(), config_home.path(), &["task"]);
    let out = user_only.env("STAGED_TEST_KEY", "k-123").output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    std::fs::write(dir.path().join("staged.toml"), "[providers.local]\nmodel = \"root-model\"\n")
        .unwrap();
    let out = agent_command(dir.path(), config_home.path(), &["task"])
        .env("STAGED_TEST_KEY", "k-123")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = agent_command(dir.path(), config_home.path(), &["--model", "flag-model", "task"])
        .env("STAGED_TEST_KEY", "k-123")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let requests = mock.requests();
    let models: Vec<&str> = requests.iter().map(|r| r.body["model"].as_str().unwrap()).collect();
    assert_eq!(models, ["user-model", "root-model", "flag-model"]);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].headers["authorization"], "Bearer k-123");
    assert_eq!(requests[0].headers["x-team"], "core");
}

#[test]
fn base_url_replaces_a_builtin_providers_url() {
    let mock =
        MockModel::start(WireFormat::AnthropicMessages, vec![Reply::Turn(Turn::text("hello"))]);
    let dir = workspace(&[("src/a.ts", OLD_A)]);
    let config_home = tempfile::tempdir().unwrap();
    let args =
        ["--provider", "anthropic", "--base-url", mock.base_url(), "--model", "claude-x", "task"];
    let out = agent_command(dir.path(), config_home.path(), &args)
        .env("ANTHROPIC_API_KEY", "sk-ant")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let requests = mock.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].headers["x-api-key"], "sk-ant");
    assert_eq!(requests[0].headers["anthropic-version"], "2023-06-01");
    assert_eq!(requests[0].body["model"], "claude-x");
}

#[test]
fn bad_configuration_exits_2_naming_the_problem() {
    let dir = workspace(&[("src/a.ts", OLD_A)]);
    let cases: [(&[&str], &str); 4] = [
        (
            &["--provider", "anthropic", "task"],
            "error: ANTHROPIC_API_KEY is not set: provider `anthropic` needs an API key",
        ),
        (&["task"], "error: OPENAI_API_KEY is not set: provider `openai` needs an API key"),
        (
            &["--provider", "nope", "task"],
            "error: unknown provider `nope`; known providers: anthropic, ollama, openai, openai-chat",
        ),
        (&["--provider", "ollama", "task"], "error: provider `ollama`: no model: pass --model"),
    ];
    for (args, expected) in cases {
        let out = run_agent(dir.path(), args, "");
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(stderr(&out).starts_with(expected), "{args:?}: {}", stderr(&out));
    }
    assert!(!dir.path().join(".staged").exists(), "nothing was touched");
}

#[test]
fn an_unreachable_provider_exits_2() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = workspace(&[("src/a.ts", OLD_A)]);
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = run_agent(
        dir.path(),
        &["--provider", "ollama", "--model", "qwen3", "--base-url", &url, "task"],
        "",
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains(&format!("error: cannot reach ollama at {url}/chat/completions")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn approve_human_keeps_a_declined_preview_pending_and_tells_the_model_why() {
    let mock = MockModel::start(
        WireFormat::OpenaiResponses,
        vec![
            Reply::Turn(Turn::resolve("r1", "apply", "looks right")),
            Reply::Turn(Turn::resolve("r2", "discard", "the person said no")),
            Reply::Turn(Turn::text("Left it.")),
        ],
    );
    let dir = agent_workspace(&mock, WireFormat::OpenaiResponses);
    stage(dir.path(), &["src/a.ts"]);
    let out =
        run_agent(dir.path(), &["--approve", "human", "--json", "task"], "n wrong call sites\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("-legacyWrap(x, value);"),
        "the person saw the diff: {}",
        stderr(&out)
    );
    let requests = mock.requests();
    let output = requests[1].body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["call_id"] == "r1" && i["type"] == "function_call_output")
        .unwrap()["output"]
        .clone();
    assert_eq!(
        output,
        "The person declined to apply `AST Edit: 1 replacement in 1 file`: wrong call sites. Nothing was applied; the preview is still pending. Discard it with `resolve` (action \"discard\") or change the approach."
    );
    assert_eq!(read(dir.path(), "src/a.ts"), OLD_A);
}

#[test]
fn plan_mode_asks_the_person_refines_then_implements_in_the_same_run() {
    let mock = MockModel::start(
        WireFormat::AnthropicMessages,
        vec![
            Reply::Turn(Turn::call(
                "w1",
                "write",
                json!({"path": "wrap-plan.md", "content": "# Wrap\n\n1. Swap the arguments.\n"}),
            )),
            Reply::Turn(Turn::call(
                "p1",
                "resolve",
                json!({"action": "apply", "reason": "ready", "extra": {"title": "wrap"}}),
            )),
            Reply::Turn(Turn::call(
                "w2",
                "write",
                json!({"path": "wrap-plan.md", "content": "# Wrap\n\n1. Swap the arguments in src/a.ts only.\n"}),
            )),
            Reply::Turn(Turn::call(
                "p2",
                "resolve",
                json!({"action": "apply", "reason": "updated", "extra": {"title": "wrap"}}),
            )),
            Reply::Turn(Turn::call(
                "e1",
                "ast_edit",
                json!({"ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($B, $A)"}], "paths": ["src/a.ts"]}),
            )),
            Reply::Turn(Turn::resolve("r1", "apply", "as planned")),
            Reply::Turn(Turn::text("Done.")),
        ],
    );
    let dir = agent_workspace(&mock, WireFormat::AnthropicMessages);
    let out = run_agent(
        dir.path(),
        &["--plan", "--json", "swap the arguments"],
        "only src/a.ts please\na\n",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let requests = mock.requests();
    let names = |r: &Recorded| {
        r.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&requests[0]), ["read", "find", "ast_grep", "write", "resolve"]);
    assert_eq!(
        names(&requests[4]),
        ["read", "find", "ast_grep", "ast_edit", "edit", "write", "apply_patch", "resolve"]
    );
    let events = events(&out);
    let resolves = of_type(&events, "resolve");
    assert_eq!(
        resolves[0]["text"],
        "Plan refinement requested. Update the plan file, then call `resolve { action: \"apply\" }` again when ready.\n\nThe person asked for: only src/a.ts please"
    );
    assert_eq!(
        resolves[1]["text"],
        "Plan approved at .staged/plans/wrap-plan.md. Plan mode exited; proceed with the implementation."
    );
    assert_eq!(of_type(&events, "plan_approved").len(), 1);
    assert!(stderr(&out).contains("1. Swap the arguments in src/a.ts only."), "{}", stderr(&out));
    assert_eq!(read(dir.path(), "src/a.ts"), NEW_A);
    assert_eq!(read(dir.path(), "src/b.ts"), "legacyWrap(y, other);\n");
    assert_eq!(
        read(dir.path(), ".staged/plans/wrap-plan.md"),
        "# Wrap\n\n1. Swap the arguments in src/a.ts only.\n"
    );
}

#[test]
fn ctrl_c_during_an_apply_leaves_every_file_old_and_the_preview_pending() {
    const N: usize = 2000;
    let files: Vec<(String, String)> =
        (0..N).map(|i| (format!("src/f{i:04}.ts"), format!("legacyWrap({i}, 0);\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let mock = MockModel::start(
        WireFormat::OpenaiChat,
        vec![
            Reply::Turn(Turn::resolve("r1", "apply", "all of them")),
            Reply::Turn(Turn::text("never reached")),
        ],
    );
    let dir = workspace(&refs);
    write_config(dir.path(), &mock, WireFormat::OpenaiChat);
    let out = staged(
        dir.path(),
        &[
            "ast-edit",
            "--max-files",
            "5000",
            "--op",
            "legacyWrap($A, $B)",
            "modernWrap($B, $A)",
            "src",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let before = pending_ids(dir.path());
    let config_home = tempfile::tempdir().unwrap();
    let mut child = agent_command(dir.path(), config_home.path(), &["--json", "task"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let is_resolve_call = event["type"] == "tool_call" && event["name"] == "resolve";
        seen.push(event);
        if is_resolve_call {
            // The apply starts right after this event: interrupt it.
            let status =
                Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
            assert!(status.success());
            break;
        }
    }
    seen.extend(lines.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{seen:#?}");
    let resolve = seen.iter().find(|e| e["type"] == "resolve").expect("a resolve event");
    assert_eq!(resolve["text"], "Aborted: Interrupted");
    assert_eq!(seen.iter().find(|e| e["type"] == "run_end").unwrap()["outcome"], "cancelled");
    for (path, old) in &files {
        assert_eq!(&read(dir.path(), path), old, "{path} was written");
    }
    assert_eq!(pending_ids(dir.path()), before);
    assert_eq!(mock.requests().len(), 1, "no model call after the interrupt");
}

#[test]
fn an_untrusted_workspace_cannot_point_a_provider_elsewhere() {
    let mock = MockModel::start(WireFormat::OpenaiChat, vec![]);
    let dir = agent_workspace(&mock, WireFormat::OpenaiChat);
    let config_home = tempfile::tempdir().unwrap();
    let out = Command::new(common::staged_bin())
        .args(["agent", "task"])
        .current_dir(dir.path())
        .env("XDG_CONFIG_HOME", config_home.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}/staged.toml sets `base_url` for provider `mock`, but this workspace's staged.toml is not trusted; read it, then run `staged trust` to allow it\n",
            root.display()
        )
    );
    assert!(mock.requests().is_empty(), "nothing was sent");
}

#[test]
fn an_ordinary_coding_task_writes_and_edits_files_as_previews() {
    for wire in WireFormat::ALL {
        let mock = MockModel::start(
            wire,
            vec![
                Reply::Turn(Turn::call(
                    "w1",
                    "write",
                    json!({"path": "src/util/greet.ts", "content": "export const greet = () => 'hi';\n"}),
                )),
                Reply::Turn(Turn::resolve("r1", "apply", "the helper is needed")),
                Reply::Turn(Turn::call(
                    "e1",
                    "edit",
                    json!({"path": "src/a.ts", "old_string": "legacyWrap(x, value);", "new_string": "greet();"}),
                )),
                // Changing the file again while its edit is pending: the gate skips the turn.
                Reply::Turn(Turn::call(
                    "e2",
                    "edit",
                    json!({"path": "src/a.ts", "old_string": "greet", "new_string": "wave"}),
                )),
                Reply::Turn(Turn::resolve("r2", "apply", "call the helper")),
                Reply::Turn(Turn::text("Added greet and used it.")),
            ],
        );
        let dir = agent_workspace(&mock, wire);
        let out = run_agent(dir.path(), &["--json", "add a greet helper and call it in a.ts"], "");
        assert_eq!(code(&out), 0, "{wire:?}: {}", stderr(&out));
        assert_eq!(read(dir.path(), "src/util/greet.ts"), "export const greet = () => 'hi';\n");
        assert_eq!(read(dir.path(), "src/a.ts"), "greet();\n");
        let events = events(&out);
        let resolves = of_type(&events, "resolve");
        assert_eq!(resolves[0]["label"], "Write: src/util/greet.ts (new file, 1 line)", "{wire:?}");
        assert_eq!(resolves[1]["label"], "Edit: src/a.ts (1 replacement)", "{wire:?}");
        assert_eq!(resolves[1]["text"], "Applied Edit: src/a.ts (1 replacement).");
        // The turn that edited again while the edit was pending ran nothing: the gate skipped it.
        let skipped = of_type(&events, "calls_skipped");
        assert_eq!(skipped.len(), 1, "{wire:?}");
        assert_eq!(skipped[0]["calls"], json!([{"id": "e2", "name": "edit"}]));
        let log = common::json(&staged(dir.path(), &["--json", "log"]));
        let fronts: Vec<&str> = log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["frontEnd"].as_str().unwrap())
            .collect();
        assert_eq!(fronts, ["agent", "agent"], "{wire:?}");
    }
}

// ---- issue 24: what a person reads --------------------------------------------------------

#[test]
fn a_skipped_bare_text_turn_says_so_plainly() {
    let mock = MockModel::start(
        WireFormat::OpenaiResponses,
        vec![
            Reply::Turn(Turn::text("I think this is fine.")),
            Reply::Turn(Turn::resolve("r1", "discard", "not needed")),
            Reply::Turn(Turn::text("Discarded.")),
        ],
    );
    let dir = agent_workspace(&mock, WireFormat::OpenaiResponses);
    stage(dir.path(), &["src/a.ts"]);
    let out = run_agent(dir.path(), &["task"], "");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("· the model answered with text only while a preview is pending; it must resolve it first\n"),
        "{text}"
    );
    assert!(!text.contains("skipped "), "{text}");
}

#[test]
fn a_plan_refinement_is_not_shown_as_an_accept() {
    let mock = MockModel::start(
        WireFormat::AnthropicMessages,
        vec![
            Reply::Turn(Turn::call(
                "w1",
                "write",
                json!({"path": "wrap-plan.md", "content": "# Wrap\n\n1. Swap the arguments.\n"}),
            )),
            Reply::Turn(Turn::call(
                "p1",
                "resolve",
                json!({"action": "apply", "reason": "ready", "extra": {"title": "wrap"}}),
            )),
            Reply::Turn(Turn::call(
                "p2",
                "resolve",
                json!({"action": "apply", "reason": "updated", "extra": {"title": "wrap"}}),
            )),
            Reply::Turn(Turn::text("Done.")),
        ],
    );
    let dir = agent_workspace(&mock, WireFormat::AnthropicMessages);
    let out = run_agent(dir.path(), &["--plan", "swap the arguments"], "only src/a.ts please\na\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let refined = text
        .find("· plan not approved; the model revises it (you asked for: only src/a.ts please)\n")
        .expect(&text);
    // Only the approval is an `Accept`, after the refinement.
    assert_eq!(text.matches("✓ Accept").count(), 1, "{text}");
    assert!(text.find("✓ Accept: Plan ready for approval").unwrap() > refined, "{text}");
    assert!(
        text.contains("· plan approved (.staged/plans/wrap-plan.md); implementing\n"),
        "{text}"
    );
}

#[test]
fn an_abort_says_the_preview_is_still_pending_and_how_to_resolve_it() {
    let mock = MockModel::start(
        WireFormat::OpenaiResponses,
        vec![
            Reply::Turn(Turn::text("no")),
            Reply::Turn(Turn::text("still no")),
            Reply::Turn(Turn::text("never")),
            Reply::Turn(Turn::text("not at all")),
        ],
    );
    let dir = agent_workspace(&mock, WireFormat::OpenaiResponses);
    stage(dir.path(), &["src/a.ts"]);
    let id = pending_ids(dir.path()).remove(0);
    let out = run_agent(dir.path(), &["task"], "");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("error: {ABORT_TEXT}\n")), "{err}");
    assert!(
        err.contains(&format!("staged: the preview `AST Edit: 1 replacement in 1 file` ({id}) is still pending; nothing of it was written. Resolve it with `staged review`, or `staged resolve apply|discard --reason \"...\"`.\n")),
        "{err}"
    );
    assert_eq!(pending_ids(dir.path()), [id]);
}

#[test]
fn with_approve_human_the_resolve_line_comes_before_the_question() {
    let mock = MockModel::start(
        WireFormat::OpenaiResponses,
        vec![
            Reply::Turn(Turn::resolve("r1", "apply", "looks right")),
            Reply::Turn(Turn::text("Applied.")),
        ],
    );
    let dir = agent_workspace(&mock, WireFormat::OpenaiResponses);
    stage(dir.path(), &["src/a.ts"]);
    let config_home = tempfile::tempdir().unwrap();
    // stdout and stderr into one file, in the order they were written.
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = agent_command(dir.path(), config_home.path(), &["--approve", "human", "task"])
        .stdin(Stdio::piped())
        .stdout(log.as_file().try_clone().unwrap())
        .stderr(log.as_file().try_clone().unwrap())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"y fine\n").unwrap();
    assert!(child.wait().unwrap().success());
    let all = std::fs::read_to_string(log.path()).unwrap();
    let call = all.find("⏳ Resolve: apply ⟦proposed -> resolved⟧ looks right").expect(&all);
    let question = all.find("Apply it? Answer y or n").expect(&all);
    let block = all.find("✓ Accept: 1 replacement in 1 file").expect(&all);
    assert!(call < question && question < block, "{all}");
    assert_eq!(all.matches("⏳ Resolve:").count(), 1, "{all}");
    assert_eq!(read(dir.path(), "src/a.ts"), NEW_A);
}
