"""staged's plugin inside the real, unmodified Cline CLI (`cline`, pinned in package.json).

Each test installs the gate the way a user does (`staged hook install cline`, which writes the
plugin `.cline/plugins/staged.js` and registers `staged mcp` in Cline's own MCP settings, since
Cline reads no project MCP servers), points Cline at the scripted model on 127.0.0.1 as an
OpenAI-compatible provider (`cline auth --provider openai --baseurl ...`), and runs `cline
--json "task"` headless. The model uses Cline's own `editor` tool, then `staged__resolve`.
Telemetry and update checks are off (`telemetryOptOut`, `autoUpdateEnabled: false`,
`CLINE_NO_AUTO_UPDATE`), and its home is temporary. A missing client fails the test; it is
never skipped.
"""

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from scripted_model import CHAT_MODEL, ScriptedTurns, tool_results_chat
from test_hooks import EDITED, NEWEST_FIRST, SOURCE, log_entries, new_repo, pending, staged
from test_real_clients import HANG_SECONDS, REMINDER, base_env, client_bin, hook_bin, run_client, staged_bin

PLUGIN_FAILED = ("staged's hook could not run ({why}), so this tool call is refused and nothing was written. "
                 "Install staged, or remove its plugin: staged hook install cline --uninstall")


class Watching(ScriptedTurns):
    """A scripted model that also notes, at each main request, the workspace's files."""

    def __init__(self, script, root, paths):
        super().__init__(script)
        self.root = root
        self.paths = paths
        self.seen = []

    def _chat(self, body):
        if any((t.get("function") or {}).get("name", "").startswith("staged__") for t in body.get("tools") or []):
            self.seen.append({p: (self.root / p).read_text() if (self.root / p).exists() else None
                              for p in self.paths})
        return super()._chat(body)


def cline_env(tmp):
    home = Path(tmp) / "home"
    settings = home / ".cline" / "data" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "global-settings.json").write_text(json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False}))
    return {**base_env(home), "CLINE_NO_AUTO_UPDATE": "1", "DO_NOT_TRACK": "1"}


def install(tmp, root, *args, binary=None):
    proc = subprocess.run([binary or staged_bin(), "--workspace", str(root), "hook", "install", "cline", *args],
                          capture_output=True, text=True, timeout=HANG_SECONDS, env=cline_env(tmp))
    assert proc.returncode == 0, f"install failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def run_cline(tmp, root, model, prompt="Rename the first oldApi call to newApi."):
    env = cline_env(tmp)
    auth = [client_bin("cline"), "auth", "--provider", "openai", "--apikey", "sk-scripted-model",
            "--modelid", CHAT_MODEL, "--baseurl", f"http://127.0.0.1:{model.port}/v1"]
    try:
        run_client("cline", auth, env, root)
        return run_client("cline", [client_bin("cline"), "--json", prompt], env, root)
    finally:
        stop_hub(root)


def stop_hub(root):
    """Stops the hub daemon Cline starts for `root` (`cline --cline-hub-daemon --cwd ROOT`),
    which may outlive the Cline that started it on a busy machine, and waits until it is gone:
    writing into the test's folder while that is deleted, it failed the test's cleanup."""
    hubs = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--cline-hub-daemon" in args and str(root).encode() in args:
            hubs.append(int(pid))
    for pid in hubs:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + HANG_SECONDS
    while any(alive(pid) for pid in hubs):
        assert time.monotonic() < deadline, f"Cline's hub daemon {hubs} did not stop"
        time.sleep(0.05)


def alive(pid):
    """Whether process `pid` still runs (a zombie no one reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def main_requests(model):
    assert not model.errors, model.errors
    requests = model.chat_main_requests()
    assert requests, "Cline never offered the staged MCP tools: its MCP settings were not loaded"
    return requests


def skipped(reason):
    """What Cline shows the model for a call the plugin skipped."""
    return json.dumps({"error": reason}, separators=(",", ":"))


def expected_deny(entry_id, label):
    return (
        f"staged holds this edit as a preview, and nothing was written yet: {entry_id} ({label}). "
        'To write it, call staged__resolve with action "apply" and a one-line reason (or "discard" to drop it); '
        f"{NEWEST_FIRST}\n\n{REMINDER}"
    )


def edit_turn(root, old="oldApi(1);", new="newApi(1);"):
    return ("tool", "editor", {"path": str(root / "src" / "a.ts"), "old_text": old, "new_text": new})


def test_cline_gate_stages_an_edit_and_resolve_writes_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(tmp, root)
        script = [
            edit_turn(root),
            ("mcp", "resolve", {"action": "apply", "reason": "the first call moves to newApi"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_cline(tmp, root, model)
        finally:
            model.stop()
        results = tool_results_chat(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["editor", "staged__resolve"], results
        assert model.seen[1]["src/a.ts"] == SOURCE, model.seen
        entries = log_entries(root)
        assert len(entries) == 1, (results, entries)
        entry = entries[0]
        assert results[0][1] == skipped(expected_deny(entry["id"], "Edit: src/a.ts (1 replacement)")), results[0]
        assert "Applied Edit: src/a.ts (1 replacement)." in results[1][1], results[1]
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert (entry["reason"], entry["frontEnd"]) == ("the first call moves to newApi", "hook:cline"), entry
        assert (entry["outcome"], entry["source"]) == ("applied", "edit"), entry
        assert pending(root) == []


def test_cline_record_mode_lets_the_edit_through_and_undo_restores_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(tmp, root, "--mode", "record")
        new_file = root / "src" / "b.ts"
        script = [
            edit_turn(root),
            ("tool", "editor", {"path": str(new_file), "new_text": "export const b = 1;\n"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_cline(tmp, root, model)
        finally:
            model.stop()
        results = tool_results_chat(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["editor", "editor"], results
        assert not any('"error"' in text for _, text, _ in results), results
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert new_file.read_text() == "export const b = 1;\n"
        entries = log_entries(root)
        assert [(e["frontEnd"], e["source"], e["reason"]) for e in entries] == [
            ("hook:cline", "write", "Cline's editor, recorded by staged's hook"),
            ("hook:cline", "edit", "Cline's editor, recorded by staged's hook"),
        ], entries
        for _ in entries:
            proc = staged(root, "undo")
            assert proc.returncode == 0, proc.stderr
        assert (root / "src" / "a.ts").read_text() == SOURCE
        assert not new_file.exists()


def hook_that_cannot_run(tmp, root, replacement):
    """Installs with a copy of staged, then replaces the copy of staged-hook with `replacement` (None: deletes
    it); the MCP server runs the real staged, so the model is offered its tools."""
    copy = Path(tmp) / "bin" / "staged"
    copy.parent.mkdir()
    copy.write_bytes(Path(staged_bin()).read_bytes())
    copy.chmod(0o755)
    # The hooks run the copy of staged-hook beside it, which is what goes.
    hooked = copy.with_name("staged-hook")
    hooked.write_bytes(Path(hook_bin()).read_bytes())
    hooked.chmod(0o755)
    install(tmp, root, binary=str(copy))
    settings = Path(tmp) / "home" / ".cline" / "data" / "settings" / "cline_mcp_settings.json"
    mcp = json.loads(settings.read_text())
    assert mcp["mcpServers"]["staged"]["command"] == str(copy), mcp
    mcp["mcpServers"]["staged"]["command"] = staged_bin()
    settings.write_text(json.dumps(mcp))
    hooked.unlink()
    if replacement is not None:
        hooked.write_text(replacement)
        hooked.chmod(0o755)


def check_blocked(tmp, root, why):
    model = Watching([edit_turn(root), ("text", "Done.")], root, ["src/a.ts"]).start()
    try:
        run_cline(tmp, root, model)
    finally:
        model.stop()
    results = tool_results_chat(main_requests(model)[-1])
    assert results == [("editor", skipped(PLUGIN_FAILED.format(why=why)), False)], results
    assert (root / "src" / "a.ts").read_text() == SOURCE
    assert pending(root) == []


def test_cline_gate_blocks_the_edit_when_staged_is_missing():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        hook_that_cannot_run(tmp, root, None)
        check_blocked(tmp, root, f"spawnSync {Path(tmp) / 'bin' / 'staged-hook'} ENOENT")


def test_cline_gate_blocks_the_edit_when_staged_crashes_or_answers_nonsense():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        hook_that_cannot_run(tmp, root, "#!/bin/sh\ncat >/dev/null\nkill -SEGV $$\n")
        check_blocked(tmp, root, "killed by SIGSEGV")
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        hook_that_cannot_run(tmp, root, "#!/bin/sh\ncat >/dev/null\necho '{\"skip\": false}'\n")
        check_blocked(tmp, root, "its answer is not one staged gives")


# Cline 3.0.65's own tools with an OpenAI-compatible model. `editor` (and `apply_patch`, which
# Cline offers some models) are gated; `run_commands` is not. A new tool fails this test until
# it is known whether it edits files.
CLINE_TOOLS = {
    "read_files", "search_codebase", "run_commands", "fetch_web_content", "editor", "ask_question", "spawn_agent",
    "team_spawn_teammate", "team_shutdown_teammate", "team_status", "team_task", "team_run_task", "team_cancel_run",
    "team_list_runs", "team_await_runs", "team_send_message", "team_broadcast", "team_read_mailbox",
    "team_mission_log", "team_cleanup", "team_create_outcome", "team_attach_outcome_fragment",
    "team_review_outcome_fragment", "team_finalize_outcome", "team_list_outcomes",
}


def test_cline_gate_refuses_insert_line_and_its_plugin_and_knows_every_tool_cline_offers():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(tmp, root)
        plugin = root / ".cline" / "plugins" / "staged.js"
        before = plugin.read_text()
        script = [
            ("tool", "editor", {"path": str(root / "src" / "a.ts"), "new_text": "// x\n", "insert_line": 1}),
            ("tool", "editor", {"path": str(plugin), "old_text": "const RECORD = false;", "new_text": "const RECORD = true;"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_cline(tmp, root, model)
        finally:
            model.stop()
        requests = main_requests(model)
        results = tool_results_chat(requests[-1])
        assert [name for name, _, _ in results] == ["editor", "editor"], results
        assert results[0][1] == skipped(
            "staged refused this editor call without staging it, and nothing was written: staged stages an edit as a "
            "replacement, and does not stage insert_line. Make the same change with old_text (the exact lines around "
            "the place, which must match once) and new_text (those lines with the new ones added)."), results[0]
        assert results[1][1].startswith(
            '{"error":"staged refused this edit, and nothing was written: Refusing .cline/plugins/staged.js: '), results[1]
        assert (root / "src" / "a.ts").read_text() == SOURCE
        assert plugin.read_text() == before
        assert pending(root) == []
        offered = {(t.get("function") or {}).get("name") for t in requests[0].get("tools") or []}
        assert {name for name in offered if not name.startswith("staged__")} == CLINE_TOOLS, offered
