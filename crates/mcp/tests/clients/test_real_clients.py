"""`staged mcp` inside the real, unmodified MCP clients: Claude Code and Codex.

Each client runs headless against `ScriptedModel` on 127.0.0.1 (Claude Code through
`ANTHROPIC_BASE_URL`, Codex through a `model_providers` entry in a temporary `CODEX_HOME`),
with `staged mcp` registered as its MCP server. The scripted model calls `ast_edit`, then
`pending`, then `resolve` with action "apply". The test then reads the requests the client
sent the model, since their tool results are exactly what the model saw, and checks that the
preview text, the resolve reminder (in the `pending` result) and the apply text all reached
the model, and that the file changed. It also checks the two headless rules docs/guide/mcp.md
states: without `--allowedTools mcp__staged` Claude Code denies the calls, and without
`approval_mode = "approve"` for `resolve`, `codex exec` does not apply.

Clients come from `STAGED_CLIENTS_BIN` (the `node_modules/.bin` that `scripts/test` installs
from `package.json` here, pinned); `staged` from `STAGED_BIN`. A client that is missing or
cannot start fails the test with the reason: it is never skipped. The clients' telemetry,
error reporting and update checks are turned off, and their homes are temporary.
"""

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from scripted_model import (
    ScriptedModel,
    tool_results_anthropic,
    tool_results_responses,
)

REMINDER = (
    "<system-reminder>\n"
    "This is a preview. Call the `resolve` tool to apply or discard these changes.\n"
    "</system-reminder>"
)
PREVIEW = "Preview only: files are NOT modified yet."
APPLIED = "Applied 2 replacements in 1 file."
SOURCE = "oldApi(1);\nconst x = oldApi(2, 3);\n"
RENAMED = "newApi(1);\nconst x = newApi(2, 3);\n"
SCRIPT = [
    ("ast_edit", {"ops": [{"pat": "oldApi($$$ARGS)", "out": "newApi($$$ARGS)"}], "paths": ["src"]}),
    ("pending", {}),
    ("resolve", {"action": "apply", "reason": "route every call through newApi"}),
]
# A client run that takes longer than this is hung; no assertion is about speed.
HANG_SECONDS = 300
REPO = Path(__file__).resolve().parents[4]


def staged_bin():
    path = Path(os.environ.get("STAGED_BIN", REPO / "target" / "debug" / "staged"))
    if not path.is_file():
        pytest.fail(f"the staged binary is not at {path}; build it (cargo build -p staged-cli) or set STAGED_BIN")
    return str(path)


def hook_bin():
    """`staged-hook`, the hooks alone, built beside staged: the binary `staged hook install`
    names in the hooks (and opencode's and Cline's plugins)."""
    path = Path(staged_bin()).with_name("staged-hook")
    if not os.access(path, os.X_OK):
        pytest.fail(f"staged-hook is not beside staged at {path}; build both (cargo build -p staged-cli)")
    return str(path)


def client_bin(name):
    bin_dir = Path(os.environ.get("STAGED_CLIENTS_BIN", REPO / "target" / "mcp-clients" / "node_modules" / ".bin"))
    path = bin_dir / name
    if not path.exists():
        pytest.fail(f"{name} is not installed at {path}; run scripts/test, which installs the pinned clients")
    return str(path)


def base_env(home):
    """A clean environment: no coding client's variables leak in, and nothing phones home."""
    keep = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL", "TMPDIR") if key in os.environ}
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "NO_COLOR": "1",
    }


def run_client(name, argv, env, cwd):
    """Runs a client; fails with its output if it cannot start, hangs or exits non-zero."""
    try:
        proc = subprocess.run(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=HANG_SECONDS,
        )
    except OSError as err:
        pytest.fail(f"{name} could not start: {err}")
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"{name} did not finish within {HANG_SECONDS}s\nstdout:\n{err.stdout}\nstderr:\n{err.stderr}")
    if proc.returncode != 0:
        pytest.fail(f"{name} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def shown(result, needle):
    """Whether the model saw `needle` in a tool result, as plain text or inside the JSON of
    `structuredContent` (where newlines are escaped)."""
    return needle in result or json.dumps(needle)[1:-1] in result


def workspace(tmp, big=False):
    """`src/a.ts` with two `oldApi` calls; with `big`, also 40 files of 30 calls far apart, so
    that the rename's diff is over 200 KB (a preview too big for one tool result)."""
    root = Path(tmp) / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.ts").write_text(SOURCE)
    if big:
        for f in range(40):
            lines = [f"const v{c} = oldApi({f}, {c});\n" + "// filler line\n" * 7 for c in range(30)]
            (root / "src" / f"f{f:02}.ts").write_text("".join(lines))
    return root


def check_the_model_saw_everything(results, root, client):
    names = [name for name, _, _ in results]
    assert len(results) == 3, f"{client} sent {names}"
    (edit_name, edit, _), (pending_name, pending, _), (resolve_name, resolve, _) = results
    assert edit_name.endswith("ast_edit") and pending_name.endswith("pending"), names
    assert resolve_name.endswith("resolve"), names
    assert shown(edit, PREVIEW), f"{client}: the preview notice did not reach the model:\n{edit}"
    assert shown(edit, REMINDER), f"{client}: the reminder did not reach the model after ast_edit:\n{edit}"
    assert shown(pending, REMINDER), f"{client}: the reminder did not reach the model in pending:\n{pending}"
    assert shown(pending, "1 pending action, newest first"), pending
    assert shown(resolve, APPLIED), f"{client}: the apply text did not reach the model:\n{resolve}"
    assert not shown(resolve, REMINDER), resolve
    assert (root / "src" / "a.ts").read_text() == RENAMED


def claude(tmp, model, allowed_tools=True, big=False):
    """Runs `claude -p` with `staged mcp` as its only MCP server; returns (root, process)."""
    root = workspace(tmp, big)
    home = Path(tmp) / "home"
    home.mkdir()
    config = Path(tmp) / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"staged": {
        "command": staged_bin(), "args": ["--workspace", str(root), "mcp"],
    }}}))
    env = {
        **base_env(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{model.port}",
        "ANTHROPIC_API_KEY": "sk-ant-scripted-model",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    argv = [client_bin("claude"), "-p", "Rename oldApi to newApi in src.", "--mcp-config", str(config),
            "--strict-mcp-config"]
    if allowed_tools:
        argv += ["--allowedTools", "mcp__staged"]
    return root, run_client("claude", argv, env, root)


def codex(tmp, model, approve_resolve=True):
    """Runs `codex exec` with `staged mcp` configured in a temporary CODEX_HOME."""
    root = workspace(tmp)
    home = Path(tmp) / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    config = f"""
model = "scripted"
model_provider = "scripted"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.scripted]
name = "scripted model"
base_url = "http://127.0.0.1:{model.port}/v1"
wire_api = "responses"
env_key = "SCRIPTED_MODEL_KEY"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.staged]
command = {json.dumps(staged_bin())}
args = ["--workspace", {json.dumps(str(root))}, "mcp"]
"""
    if approve_resolve:
        config += '\n[mcp_servers.staged.tools.resolve]\napproval_mode = "approve"\n'
    (codex_home / "config.toml").write_text(config)
    env = {**base_env(home), "CODEX_HOME": str(codex_home), "SCRIPTED_MODEL_KEY": "scripted"}
    argv = [client_bin("codex"), "exec", "--skip-git-repo-check", "Rename oldApi to newApi in src."]
    return root, run_client("codex", argv, env, root)


def only_result(model, requests):
    assert not model.errors, model.errors
    assert requests, f"the client never offered the staged tools to the model: {[r['path'] for r in model.requests]}"
    return requests[-1]


def test_claude_code_shows_the_model_the_preview_the_reminder_and_the_apply():
    model = ScriptedModel(SCRIPT).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root, proc = claude(tmp, model)
            last = only_result(model, model.anthropic_main_requests())
            check_the_model_saw_everything(tool_results_anthropic(last), root, "Claude Code")
            assert "Done." in proc.stdout, proc.stdout
    finally:
        model.stop()


def test_claude_code_shows_the_model_a_big_preview_as_its_summary_and_link():
    """A diff over 200 KB: the model gets the summary, the resource's URI and the reminder,
    not the diff, and far less than Claude Code's warning at 10,000 tokens."""
    model = ScriptedModel([SCRIPT[0], ("resolve", {"action": "discard", "reason": "too broad"})]).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root, _ = claude(tmp, model, big=True)
            results = tool_results_anthropic(only_result(model, model.anthropic_main_requests()))
            assert [name.rsplit("__", 1)[-1] for name, _, _ in results] == ["ast_edit", "resolve"], results
            edit = results[0][1]
            assert shown(edit, PREVIEW), edit[:2000]
            assert shown(edit, "This preview is too big to show in a tool result"), edit[:2000]
            assert shown(edit, "The whole diff is the resource staged://preview/pending-action:ast_edit:"), edit[:2000]
            assert shown(edit, "41 files, 1201 hunks, +1202 -1202 lines"), edit[:2000]
            assert shown(edit, REMINDER), edit[-2000:]
            assert "+const v0 = newApi(0, 0);" not in edit, "the diff itself is not in the result"
            assert len(edit) < 20_000, len(edit)
            assert (root / "src" / "a.ts").read_text() == SOURCE
    finally:
        model.stop()


def test_claude_code_headless_without_allowed_tools_denies_the_calls():
    model = ScriptedModel(SCRIPT).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root, _ = claude(tmp, model, allowed_tools=False)
            results = tool_results_anthropic(only_result(model, model.anthropic_main_requests()))
            assert len(results) == 3, results
            for name, text, is_error in results:
                assert is_error and "haven't granted it yet" in text, (name, text)
            assert (root / "src" / "a.ts").read_text() == SOURCE
    finally:
        model.stop()


def test_codex_shows_the_model_the_preview_the_reminder_and_the_apply():
    model = ScriptedModel(SCRIPT).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root, proc = codex(tmp, model)
            last = only_result(model, model.responses_main_requests())
            check_the_model_saw_everything(tool_results_responses(last), root, "Codex")
    finally:
        model.stop()


def test_codex_exec_without_approval_mode_does_not_apply():
    model = ScriptedModel(SCRIPT).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root, proc = codex(tmp, model, approve_resolve=False)
            results = tool_results_responses(only_result(model, model.responses_main_requests()))
            assert [name for name, _, _ in results] == ["ast_edit", "pending", "resolve"], results
            resolve = results[-1][1]
            assert "requires approval" in resolve, resolve
            assert not shown(resolve, APPLIED), resolve
            assert (root / "src" / "a.ts").read_text() == SOURCE, "nothing is applied"
            listed = subprocess.run(
                [staged_bin(), "--workspace", str(root), "--json", "pending"],
                capture_output=True, text=True, timeout=HANG_SECONDS,
            )
            assert len(json.loads(listed.stdout)["pending"]) == 1, "the preview is still pending"
    finally:
        model.stop()
