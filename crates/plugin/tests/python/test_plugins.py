"""End-to-end tests of staged plugins with real Python and Node child processes.

Every test builds a temporary workspace with a `staged.toml` naming plugins: the two examples
(`examples/plugins/rename-py`, Python on the `mcp` SDK; `examples/plugins/regex-ts`,
TypeScript on `@modelcontextprotocol/sdk`), and the test plugins beside this file (`lab.py`
on the Python helper, whose apply can succeed, fail, crash or hang; `raw.py`, a hand-written
server that lists invalid tools and answers garbage). It then drives the real `staged`
binary: `staged tool`, `staged resolve`, `staged tools`, `staged trust`, `staged mcp` through
the official Python SDK client, and `staged agent` against a scripted model on 127.0.0.1.

Each staged process is a fresh process, so "kill everything and start again" is what happens
between staging and resolving. The helpers append one JSON line per callback run to
STAGED_PLUGIN_LOG, which is how the tests count applies.

Environment: STAGED_BIN (default target/debug/staged), STAGED_REGEX_PLUGIN (default
examples/plugins/regex-ts/dist/regex.js, built by scripts/test). The Python running pytest
must have `mcp` and the helper (`crates/plugin/helpers/python`) installed.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp import types

REPO = Path(__file__).resolve().parents[4]
STAGED = str((REPO / os.environ.get("STAGED_BIN", "target/debug/staged")).resolve())
REGEX_JS = str((REPO / os.environ.get("STAGED_REGEX_PLUGIN", "examples/plugins/regex-ts/dist/regex.js")).resolve())
RENAME_PY = str(REPO / "examples/plugins/rename-py/rename.py")
LAB = str(Path(__file__).parent / "plugins" / "lab.py")
SLOW_TS = str(Path(__file__).parent / "plugins" / "slow_note.mjs")
RAW = str(Path(__file__).parent / "plugins" / "raw.py")
PY = sys.executable
REMINDER = (
    "<system-reminder>\n"
    "This is a preview. Call the `resolve` tool to apply or discard these changes.\n"
    "</system-reminder>"
)


class Workspace:
    """A temporary workspace with its own user config directory and callback log."""

    def __init__(self, tmp):
        self.base = Path(tmp)
        self.root = self.base / "repo"
        self.root.mkdir()
        (self.root / ".git").mkdir()
        self.config_home = self.base / "config"
        self.log = self.base / "callbacks.log"

    def env(self):
        env = dict(os.environ)
        env["XDG_CONFIG_HOME"] = str(self.config_home)
        env["STAGED_PLUGIN_LOG"] = str(self.log)
        env.pop("RUST_LOG", None)
        return env

    def plugins(self, **plugins):
        """Writes staged.toml with `[plugins.NAME]` for each `NAME=(command, extra toml)`."""
        text = ""
        for name, spec in plugins.items():
            command, extra = spec if isinstance(spec, tuple) else (spec, "")
            text += f"[plugins.{name}]\ncommand = {json.dumps(command)}\n{extra}\n"
        (self.root / "staged.toml").write_text(text)

    def user_plugins(self, **plugins):
        folder = self.config_home / "staged"
        folder.mkdir(parents=True, exist_ok=True)
        text = "".join(f"[plugins.{n}]\ncommand = {json.dumps(c)}\n" for n, c in plugins.items())
        (folder / "staged.toml").write_text(text)

    def run(self, *args, timeout=60):
        return subprocess.run([STAGED, "--workspace", str(self.root), *args], cwd=self.root,
                              env=self.env(), capture_output=True, text=True, timeout=timeout)

    def ok(self, *args):
        res = self.run(*args)
        assert res.returncode == 0, (args, res.stdout, res.stderr)
        return res

    def json(self, *args, code=0):
        res = self.run("--json", *args)
        assert res.returncode == code, (args, res.stdout, res.stderr)
        return json.loads(res.stdout.splitlines()[-1])

    def trust(self):
        self.ok("trust")

    def callbacks(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def pending(self):
        return self.json("pending")["pending"]


@pytest.fixture
def ws():
    with tempfile.TemporaryDirectory() as tmp:
        yield Workspace(tmp)


LAB_PLUGIN = ([PY, LAB], "")


def stage_note(ws, text, mode="ok", reject="none"):
    out = ws.json("tool", "stage_note", "--args", json.dumps({"text": text, "mode": mode, "reject": reject}))
    assert not out["isError"], out
    return out["details"]["pendingId"]


# ---- the examples, through the CLI, across restarts ----------------------------------------


def test_rename_example_stages_then_another_process_applies_once(ws):
    (ws.root / "a.txt").write_text("a\n")
    (ws.root / "b.txt").write_text("b\n")
    ws.plugins(rename=[PY, RENAME_PY])
    ws.trust()
    out = ws.json("tool", "rename_files", "--args", json.dumps({"renames": [{"from": "a.txt", "to": "c.txt"}, {"from": "b.txt", "to": "d/e.txt"}]}))
    assert out["pending"] == {"id": "pending-action:rename_files:0", "label": "Rename: 2 files"}
    assert out["details"]["pendingId"] == "pending-action:rename_files:0"
    assert "a.txt -> c.txt" in out["text"]
    assert (ws.root / "a.txt").exists() and not (ws.root / "c.txt").exists(), "a preview moves nothing"

    # Every staged process has exited (and stopped its plugin); a new one applies.
    res = ws.json("resolve", "apply", "--reason", "names match")
    assert res["text"] == "Renamed 2 files. Reason: names match"
    assert res["details"]["sourceToolName"] == "rename_files"
    assert res["details"]["label"] == "Rename: 2 files"
    assert res["pending"] is None
    assert (ws.root / "c.txt").read_text() == "a\n" and (ws.root / "d" / "e.txt").read_text() == "b\n"
    applies = [c for c in ws.callbacks() if c["callback"] == "_apply_rename"]
    assert applies == [{"callback": "_apply_rename", "pendingId": "pending-action:rename_files:0", "reason": "names match"}]


def test_regex_example_stages_a_diff_and_applies_after_a_restart(ws):
    (ws.root / "src.ts").write_text("const a = fetchJson(x);\nconst b = other(y);\n")
    ws.plugins(regex=["node", REGEX_JS])
    ws.trust()
    out = ws.json("tool", "regex_replace", "--args", json.dumps({"path": "src.ts", "pattern": "fetchJson", "replacement": "getJson"}))
    assert out["pending"]["label"] == "Regex: 1 replacement in src.ts"
    assert "-const a = fetchJson(x);\n+const a = getJson(x);" in out["text"]
    assert (ws.root / "src.ts").read_text().startswith("const a = fetchJson")
    res = ws.json("resolve", "apply", "--reason", "rename the helper")
    assert res["text"] == "Replaced /fetchJson/ in src.ts. Reason: rename the helper"
    assert (ws.root / "src.ts").read_text() == "const a = getJson(x);\nconst b = other(y);\n"
    assert [c["callback"] for c in ws.callbacks()] == ["_apply_regex"]


def test_a_plugin_undo_callback_reverts_and_redoes_an_apply_from_the_log(ws):
    (ws.root / "a.txt").write_text("a\n")
    ws.plugins(rename=[PY, RENAME_PY])
    ws.trust()
    ws.json("tool", "rename_files", "--args", json.dumps({"renames": [{"from": "a.txt", "to": "b/c.txt"}]}))
    ws.json("resolve", "apply", "--reason", "clearer name")
    assert (ws.root / "b" / "c.txt").read_text() == "a\n" and not (ws.root / "a.txt").exists()
    [applied] = ws.json("log")["entries"]
    assert (applied["outcome"], applied["source"], applied["reason"]) == ("applied", "rename_files", "clearer name")

    # A new process undoes it through the plugin's undo callback.
    res = ws.json("undo", "--reason", "keep the old name")
    assert res["isError"] is False, res
    assert res["text"] == "Moved back 1 file. Reason: keep the old name"
    assert (ws.root / "a.txt").read_text() == "a\n" and not (ws.root / "b" / "c.txt").exists()
    undo = [c for c in ws.callbacks() if c["callback"] == "_undo_rename"]
    assert undo == [{"callback": "_undo_rename", "pendingId": "pending-action:rename_files:0", "reason": "keep the old name"}]
    entries = ws.json("log")["entries"]
    assert [e["outcome"] for e in entries] == ["undone", "applied"]
    assert entries[1]["revertedBy"] == entries[0]["entry"]

    # The same entry is never reverted twice.
    again = ws.json("undo", str(applied["entry"]), "--reason", "twice", code=1)
    assert "was already reverted by entry" in again["text"], again
    # Undoing the undo is a redo, through the same callback.
    res = ws.json("undo", str(entries[0]["entry"]), "--reason", "the new name after all")
    assert res["text"] == "Renamed again 1 file. Reason: the new name after all"
    assert (ws.root / "b" / "c.txt").read_text() == "a\n" and not (ws.root / "a.txt").exists()
    assert [e["outcome"] for e in ws.json("log")["entries"]] == ["redone", "undone", "applied"]

    # A file the plugin moved was changed by hand: the callback refuses, nothing moves, and
    # nothing is logged.
    (ws.root / "b" / "c.txt").unlink()
    newest = ws.json("log")["entries"][0]["entry"]
    res = ws.json("undo", str(newest), "--reason", "back again", code=1)
    assert res["text"] == "b/c.txt is no longer there; nothing was moved"
    assert not (ws.root / "a.txt").exists()
    assert len(ws.json("log")["entries"]) == 3


def test_undo_of_a_plugin_apply_without_an_undo_callback_is_not_available(ws):
    (ws.root / "src.ts").write_text("const a = fetchJson(x);\n")
    ws.plugins(regex=["node", REGEX_JS])
    ws.trust()
    ws.json("tool", "regex_replace", "--args", json.dumps({"path": "src.ts", "pattern": "fetchJson", "replacement": "getJson"}))
    ws.json("resolve", "apply", "--reason", "rename the helper")
    res = ws.json("undo", "--reason", "back", code=1)
    assert res["text"] == "Undo is not available for `regex_replace` entries: that tool declares no undo. Nothing was written."
    assert (ws.root / "src.ts").read_text() == "const a = getJson(x);\n"


def test_regex_example_refuses_a_stale_preview_and_keeps_it_pending(ws):
    (ws.root / "src.ts").write_text("fetchJson(1);\n")
    ws.plugins(regex=["node", REGEX_JS])
    ws.trust()
    ws.json("tool", "regex_replace", "--args", json.dumps({"path": "src.ts", "pattern": "fetchJson", "replacement": "getJson"}))
    (ws.root / "src.ts").write_text("fetchJson(2);\n")
    res = ws.json("resolve", "apply", "--reason", "go", code=1)
    assert res["isError"] and res["text"] == "src.ts changed since the preview; nothing was written"
    assert res["pending"]["id"] == "pending-action:regex_replace:0"
    assert (ws.root / "src.ts").read_text() == "fetchJson(2);\n"


# ---- through `staged mcp`, driven by the Python SDK client ---------------------------------


def mcp_client(ws):
    params = StdioServerParameters(command=STAGED, args=["--workspace", str(ws.root), "mcp"], cwd=str(ws.root), env=ws.env())
    return Client(params)


def texts(result):
    return [part.text for part in result.content if isinstance(part, types.TextContent)]


@pytest.mark.parametrize("example", ["rename", "regex"])
def test_staged_mcp_proxies_plugin_tools_and_a_restart_applies(ws, example):
    (ws.root / "a.txt").write_text("fetchJson(1);\n")
    ws.plugins(rename=[PY, RENAME_PY], regex=["node", REGEX_JS])
    ws.trust()
    if example == "rename":
        call = ("rename_files", {"renames": [{"from": "a.txt", "to": "b.txt"}]})
        source, label = "rename_files", "Rename: 1 file"
    else:
        call = ("regex_replace", {"path": "a.txt", "pattern": "fetchJson", "replacement": "getJson"})
        source, label = "regex_replace", "Regex: 1 replacement in a.txt"

    async def stage():
        async with mcp_client(ws) as client:
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            assert names == ["apply_patch", "ast_edit", "ast_grep", "edit", "pending", "regex_replace", "rename_files", "resolve", "write"]
            res = await client.call_tool(*call)
            assert not res.is_error, texts(res)
            assert texts(res)[-1] == REMINDER
            assert res.structured_content["pending"] == {"id": f"pending-action:{source}:0", "label": label}
            echo = await client.call_tool("pending", {})
            assert texts(echo)[-1] == REMINDER

    async def apply():
        async with mcp_client(ws) as client:
            res = await client.call_tool("resolve", {"action": "apply", "reason": "after a restart"})
            assert not res.is_error, texts(res)
            assert res.structured_content["details"]["sourceToolName"] == source
            assert REMINDER not in texts(res)
            return texts(res)[0]

    asyncio.run(stage())
    assert (ws.root / "a.txt").read_text() == "fetchJson(1);\n"
    text = asyncio.run(apply())
    if example == "rename":
        assert text == "Renamed 1 file. Reason: after a restart"
        assert (ws.root / "b.txt").read_text() == "fetchJson(1);\n"
    else:
        assert text == "Replaced /fetchJson/ in a.txt. Reason: after a restart"
        assert (ws.root / "a.txt").read_text() == "getJson(1);\n"
    assert len([c for c in ws.callbacks() if c["callback"].startswith("_apply")]) == 1
    assert ws.pending() == []


def test_callbacks_are_hidden_from_clients_and_cannot_be_called(ws):
    ws.plugins(lab=LAB_PLUGIN)
    ws.trust()
    listed = ws.json("tools")
    names = [t["name"] for t in listed["tools"]]
    assert names == ["ast_grep", "ast_edit", "edit", "write", "apply_patch", "stage_note", "echo", "pending", "resolve"], names
    assert listed["loadErrors"] == []
    res = ws.run("tool", "_apply_note", "--args", "{}")
    assert res.returncode == 2 and "unknown tool `_apply_note`" in res.stderr, res.stderr


# ---- discard, failures, timeouts -----------------------------------------------------------


def test_discard_with_and_without_a_reject_callback(ws):
    ws.plugins(lab=LAB_PLUGIN)
    ws.trust()
    stage_note(ws, "one", reject="none")
    res = ws.json("resolve", "discard", "--reason", "not needed")
    assert res["text"] == "Discarded: Note: one. Reason: not needed"
    stage_note(ws, "two", reject="report")
    res = ws.json("resolve", "discard", "--reason", "wrong", "--extra", '{"k": 1}')
    assert res["text"] == "Dropped the note 'two'. Reason: wrong"
    assert res["details"]["extra"] == {"k": 1}
    stage_note(ws, "three", reject="silent")
    res = ws.json("resolve", "discard", "--reason", "quiet")
    assert res["text"] == "Discarded: Note: three. Reason: quiet", "an empty reject result is the default text"
    assert [c["callback"] for c in ws.callbacks()] == ["_reject_note", "_reject_silently"]
    assert not (ws.root / "notes.txt").exists()
    assert ws.pending() == []


def test_an_apply_that_fails_keeps_the_preview_pending_under_the_same_id(ws):
    ws.plugins(lab=LAB_PLUGIN)
    ws.trust()
    pid = stage_note(ws, "x", mode="error")
    res = ws.json("resolve", "apply", "--reason", "try", code=1)
    assert res["isError"] and res["text"] == "the note was refused: x", "isError is the ToolError text"
    assert res["pending"] == {"id": pid, "label": "Note: x"}
    res = ws.json("resolve", "apply", "--reason", "again", code=1)
    assert res["text"] == "the note was refused: x"
    assert ws.pending()[0]["id"] == pid


def test_a_crash_during_apply_is_apply_failed_and_a_new_process_can_discard(ws):
    ws.plugins(lab=LAB_PLUGIN)
    ws.trust()
    pid = stage_note(ws, "boom", mode="crash")
    res = ws.json("resolve", "apply", "--reason", "go", code=1)
    assert res["text"] == 'Apply failed: plugin "lab" exited (exit status: 7) during `_apply_note`; `_apply_note` may have run, in part or in full', res
    assert res["pending"]["id"] == pid
    res = ws.json("resolve", "discard", "--reason", "it crashes")
    assert res["text"] == "Discarded: Note: boom. Reason: it crashes"


def test_a_hanging_apply_times_out_and_stays_pending(ws):
    ws.plugins(lab=([PY, LAB], "timeout_ms = 2000"))
    ws.trust()
    pid = stage_note(ws, "slow", mode="hang")
    res = ws.json("resolve", "apply", "--reason", "go", code=1)
    assert res["text"] == 'Apply failed: plugin "lab" did not answer `_apply_note` within 2000 ms; it was stopped; `_apply_note` may have run, in part or in full'
    assert res["pending"]["id"] == pid


def wait_until(check, what, seconds=20):
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("helper", ["python", "typescript"])
def test_an_apply_whose_answer_never_arrived_is_not_run_twice(ws, helper):
    """staged is killed while the callback runs; the callback finishes its work and the helper
    records its result under the pending id; the retry gets that result without a second run."""
    ws.plugins(lab=LAB_PLUGIN if helper == "python" else (["node", SLOW_TS], ""))
    ws.trust()
    out = ws.json("tool", "stage_note", "--args", json.dumps({"text": "once", "mode": "slow"}))
    pid = out["details"]["pendingId"]
    first = subprocess.Popen([STAGED, "--workspace", str(ws.root), "resolve", "apply", "--reason", "first"],
                             cwd=ws.root, env=ws.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: any(c["callback"] == "_apply_note" for c in ws.callbacks()), "the callback to start")
    first.kill()
    first.wait()
    records = ws.root / ".staged" / "plugins" / "lab"
    wait_until(lambda: list(records.glob("*.json")), "the helper's record")
    assert (ws.root / "notes.txt").read_text() == "once\n"
    assert [p["id"] for p in ws.pending()] == [pid], "staged never saw the answer"
    res = ws.json("resolve", "apply", "--reason", "retry")
    assert res["text"].startswith("Noted 'once'" if helper == "python" else "Noted once"), res
    assert "Reason: first" in res["text"], "the recorded result, not a second run"
    assert (ws.root / "notes.txt").read_text() == "once\n", "applied twice"
    assert ws.callbacks() == [
        {"callback": "_apply_note", "pendingId": pid, "reason": "first"},
        {"callback": "_apply_note", "pendingId": pid, "reason": "retry", "replayed": True},
    ]
    assert ws.pending() == []


def test_a_plugin_answering_garbage_fails_the_apply_and_keeps_the_preview(ws):
    ws.plugins(raw=([PY, RAW], "timeout_ms = 3000"))
    ws.trust()
    out = ws.json("tool", "stage_raw")
    assert out["pending"]["id"] == "pending-action:stage_raw:0"
    res = ws.json("resolve", "apply", "--reason", "go", code=1)
    assert res["text"].startswith('Apply failed: plugin "raw" '), res
    assert res["pending"]["id"] == "pending-action:stage_raw:0"


# ---- load errors ---------------------------------------------------------------------------


def test_load_errors_are_collected_and_the_rest_loads(ws):
    ws.plugins(
        crash=[PY, "-c", "import sys; sys.stderr.write('cannot start\\n'); sys.exit(3)"],
        hang=([PY, "-c", "import time; time.sleep(60)"], "timeout_ms = 1000"),
        missing=["/nonexistent/plugin"],
        lab=LAB_PLUGIN,
        lab2=LAB_PLUGIN,
        raw=([PY, RAW], ""),
    )
    ws.trust()
    res = ws.run("--json", "tools")
    assert res.returncode == 0, res.stderr
    listed = json.loads(res.stdout)
    assert [t["name"] for t in listed["tools"]] == ["ast_grep", "ast_edit", "edit", "write", "apply_patch", "stage_note", "echo", "stage_raw", "pending", "resolve"]
    errors = listed["loadErrors"]
    expected = [
        'plugin "crash": Failed to load tool: plugin "crash" exited (exit status: 3) during the MCP handshake: cannot start',
        'plugin "hang": Failed to load tool: plugin "hang" did not answer the MCP handshake within 1000 ms; it was stopped',
        'plugin "missing": Failed to load tool: cannot start plugin "missing" (`/nonexistent/plugin`): No such file or directory (os error 2)',
        'plugin "raw": Plugin returned invalid tool at index 3: the name "bad tool" must be 1 to 64 letters, digits, "_" or "-"',
        'plugin "raw": Plugin returned invalid tool at index 4: `nodesc` has no description; the model needs one',
        'plugin "lab2": Tool name "stage_note" conflicts with existing tool',
        'plugin "lab2": Tool name "echo" conflicts with existing tool',
        'plugin "raw": Tool name "ast_edit" conflicts with existing tool',
    ]
    assert sorted(errors) == sorted(expected), errors
    for error in expected:
        assert f"staged: warning: {error}" in res.stderr


# ---- exactly once --------------------------------------------------------------------------


def test_concurrent_resolves_from_two_processes_apply_once(ws):
    ws.plugins(lab=LAB_PLUGIN)
    ws.trust()
    stage_note(ws, "once", mode="slow")
    cmd = [STAGED, "--workspace", str(ws.root), "--json", "resolve", "apply", "--reason", "race"]
    procs = [subprocess.Popen(cmd, cwd=ws.root, env=ws.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    codes = sorted(p.returncode for p in procs)
    texts_ = sorted(json.loads(o[0].splitlines()[-1])["text"] for o in outs)
    assert codes == [0, 1], outs
    applied = [t for t in texts_ if t.startswith("Noted 'once'")]
    assert len(applied) == 1, texts_
    other = [t for t in texts_ if not t.startswith("Noted")][0]
    assert other.startswith("Cannot resolve now") or other.startswith("No pending action"), other
    assert (ws.root / "notes.txt").read_text() == "once\n"
    assert [c["callback"] for c in ws.callbacks()] == ["_apply_note"]


# ---- trust ---------------------------------------------------------------------------------


def test_workspace_plugins_start_only_once_trusted_and_a_change_untrusts(ws):
    ws.plugins(lab=LAB_PLUGIN)
    res = ws.run("tools")
    assert "stage_note" not in res.stdout
    warning = (f'staged: warning: plugin "lab" in {ws.root.resolve()}/staged.toml not started: '
               "this workspace is not trusted; read the file, then run `staged trust` to allow it\n")
    assert res.stderr == warning
    assert ws.json("trust", "--show")["status"] == "untrusted"
    ws.trust()
    assert ws.json("trust", "--show")["status"] == "trusted"
    assert "stage_note" in ws.ok("tools").stdout
    ws.plugins(lab=([PY, LAB], "timeout_ms = 5000"))
    assert ws.json("trust", "--show")["status"] == "changed"
    res = ws.run("tools")
    assert "stage_note" not in res.stdout and "it changed since you trusted it" in res.stderr
    ws.trust()
    assert ws.json("trust", "--revoke") == {"root": str(ws.root.resolve()), "revoked": True}
    assert "stage_note" not in ws.run("tools").stdout


def test_an_untrusted_workspace_cannot_apply_its_plugin_previews(ws):
    ws.plugins(lab=LAB_PLUGIN)
    ws.trust()
    pid = stage_note(ws, "later")
    ws.ok("trust", "--revoke")
    res = ws.json("resolve", "apply", "--reason", "go", code=1)
    assert res["text"].startswith("Apply failed: cannot apply `Note: later` here: plugin \"lab\" is not configured here"), res
    assert res["pending"]["id"] == pid
    assert ws.callbacks() == []


def test_user_level_plugins_need_no_trust(ws):
    ws.user_plugins(lab=[PY, LAB])
    listed = ws.json("tools")
    assert "stage_note" in [t["name"] for t in listed["tools"]]
    stage_note(ws, "mine")
    assert ws.json("resolve", "apply", "--reason", "ok")["text"].startswith("Noted 'mine'")


def test_trust_refuses_a_missing_file(ws):
    res = ws.run("trust")
    assert res.returncode == 2
    assert res.stderr == f"error: {ws.root.resolve()}/staged.toml does not exist: there is nothing to trust\n"


# ---- staged agent --------------------------------------------------------------------------


class ChatModel:
    """OpenAI Chat Completions on 127.0.0.1: answers each request with the next scripted turn
    (a tool call, or text) and records the requests."""

    def __init__(self, turns):
        self.turns = list(turns)
        self.requests = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests.append(body)
                turn = model.turns.pop(0) if model.turns else ("text", "Done.")
                if turn[0] == "call":
                    _, name, args = turn
                    delta = {"tool_calls": [{"index": 0, "id": f"call_{len(model.requests)}", "type": "function",
                                             "function": {"name": name, "arguments": json.dumps(args)}}]}
                    finish = "tool_calls"
                else:
                    delta, finish = {"content": turn[1]}, "stop"
                events = [{"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                          {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
                payload = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
                data = payload.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self):
        self.server.shutdown()


def test_staged_agent_offers_plugin_tools_and_resolves_their_previews(ws):
    (ws.root / "a.txt").write_text("a\n")
    ws.plugins(rename=[PY, RENAME_PY])
    ws.trust()
    model = ChatModel([
        ("call", "rename_files", {"renames": [{"from": "a.txt", "to": "b.txt"}]}),
        ("call", "resolve", {"action": "apply", "reason": "the rename is right"}),
        ("text", "Renamed."),
    ])
    try:
        env = ws.env()
        env["OPENAI_API_KEY"] = "sk-test"
        res = subprocess.run([STAGED, "--workspace", str(ws.root), "agent", "--provider", "openai-chat",
                              "--base-url", model.url, "--model", "m", "rename a.txt to b.txt"],
                             cwd=ws.root, env=env, capture_output=True, text=True, timeout=120)
    finally:
        model.stop()
    assert res.returncode == 0, (res.stdout, res.stderr)
    offered = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert "rename_files" in offered and offered[-1] == "resolve", offered
    assert not any(name.startswith("_") for name in offered), offered
    assert (ws.root / "b.txt").read_text() == "a\n" and not (ws.root / "a.txt").exists()
    assert [c["callback"] for c in ws.callbacks()] == ["_apply_rename"]


def test_staged_agent_refuses_provider_endpoints_of_an_untrusted_workspace(ws):
    (ws.root / "staged.toml").write_text('[providers.openai]\nbase_url = "http://127.0.0.1:9/v1"\n')
    env = ws.env()
    env["OPENAI_API_KEY"] = "sk-secret"
    res = subprocess.run([STAGED, "--workspace", str(ws.root), "agent", "do it"], cwd=ws.root, env=env,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr == (f"error: {ws.root.resolve()}/staged.toml sets `base_url` for provider `openai`, but this "
                          "workspace's staged.toml is not trusted; read it, then run `staged trust` to allow it\n")
    for field in ['headers = { "x-k" = "v" }', 'api_key_env = "OTHER"']:
        (ws.root / "staged.toml").write_text(f"[providers.openai]\n{field}\n")
        res = subprocess.run([STAGED, "--workspace", str(ws.root), "agent", "do it"], cwd=ws.root, env=env,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 2 and "is not trusted" in res.stderr, res.stderr
