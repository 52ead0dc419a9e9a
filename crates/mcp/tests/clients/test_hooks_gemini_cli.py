"""staged's hooks inside the real, unmodified Gemini CLI (pinned in package.json).

Each test installs the hooks the way a user does (`staged hook install gemini-cli`: the hooks
and the trusted MCP server in the workspace's `.gemini/settings.json`), then runs `gemini -p`
headless against `ScriptedTurns` on 127.0.0.1 through Gemini's `streamGenerateContent`
(`GOOGLE_GEMINI_BASE_URL`; the person's settings select the `gemini-api-key` auth, without
which Gemini CLI refuses the base URL, and `-m` names the model, without which its router
retries side requests for minutes). The workspace is trusted (`GEMINI_CLI_TRUST_WORKSPACE`),
and the approval mode is `auto_edit`, on the command line and in the person's settings
(`general.defaultApprovalMode`), which is where staged reads it: there the model may apply its
own previews.

The client comes from `STAGED_CLIENTS_BIN`, `staged` from `STAGED_BIN`; a missing client
fails the test, it is never skipped. Its telemetry and update checks are off; it reaches
nothing but 127.0.0.1.
"""

import json
import subprocess
import tempfile
from pathlib import Path

from scripted_model import ScriptedTurns, gemini_function_names, tool_results_gemini
from test_hooks import EDITED, MISSING, NEWEST_FIRST, SOURCE, installed_by_a_copy, log_entries, new_repo, pending, staged
from test_real_clients import HANG_SECONDS, REMINDER, base_env, client_bin, hook_bin, run_client, staged_bin

BLOCKED = "Tool execution blocked: "
# The tools Gemini CLI 0.61.0 offers a headless model (`--approval-mode auto_edit`): the ones
# that edit a file, which the installed matcher must name, and the rest.
GEMINI_TOOLS_EDITING = {"replace", "write_file", "run_shell_command"}
GEMINI_TOOLS_OTHER = {"enter_plan_mode", "exit_plan_mode", "glob", "google_web_search", "grep_search", "invoke_agent",
                      "list_directory", "read_file", "read_many_files", "update_topic", "web_fetch", "save_memory",
                      "write_todos", "ask_user"}


class Watching(ScriptedTurns):
    """A scripted model that also notes, at each main request, the workspace's files."""

    def __init__(self, script, root, paths):
        super().__init__(script)
        self.root = root
        self.paths = paths
        self.seen = []

    def _gemini(self, body, stream):
        if stream and body.get("tools"):
            self.seen.append({p: (self.root / p).read_text() if (self.root / p).exists() else None
                              for p in self.paths})
        return super()._gemini(body, stream)


def gemini_home(tmp, approval="auto_edit"):
    home = Path(tmp) / "home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"defaultApprovalMode": approval, "enableAutoUpdate": False,
                    "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return home


def install(root, *args):
    proc = subprocess.run([staged_bin(), "--workspace", str(root), "hook", "install", "gemini-cli", *args],
                          capture_output=True, text=True, timeout=HANG_SECONDS)
    assert proc.returncode == 0, f"install failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def run_gemini(tmp, root, model, approval="auto_edit"):
    home = gemini_home(tmp, approval)
    env = {
        **base_env(home),
        "GEMINI_CLI_HOME": str(home),
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{model.port}",
        "GEMINI_API_KEY": "scripted-model",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "GEMINI_TELEMETRY_ENABLED": "false",
    }
    argv = [client_bin("gemini"), "-p", "Rename the first oldApi call to newApi.", "--approval-mode", approval,
            "-m", "gemini-2.5-flash"]
    return run_client("gemini", argv, env, root)


def results_of(model):
    assert not model.errors, model.errors
    requests = model.gemini_main_requests()
    assert requests, "Gemini CLI never asked the scripted model with its tools"
    return tool_results_gemini(requests[-1])


def replace(path):
    return ("tool", "replace", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                                "instruction": "Rename the first oldApi call to newApi."})


def expected_deny(entry_id, label):
    return (
        f"staged holds this edit as a preview, and nothing was written yet: {entry_id} ({label}). "
        'To write it, call mcp_staged_resolve with action "apply" and a one-line reason (or "discard" to drop it); '
        f"{NEWEST_FIRST}\n\n{REMINDER}"
    )


def test_gemini_cli_gate_stages_an_edit_and_resolve_writes_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        path = str(root / "src" / "a.ts")
        script = [
            replace(path),
            ("mcp", "resolve", {"action": "apply", "reason": "the first call moves to newApi"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_gemini(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["replace", "mcp_staged_resolve"], results
        # Before the resolve call the file was untouched.
        assert model.seen[1]["src/a.ts"] == SOURCE, model.seen
        entries = log_entries(root)
        assert len(entries) == 1, (results, entries)
        entry = entries[0]
        _, denied, is_error = results[0]
        assert is_error, results[0]
        assert denied == BLOCKED + expected_deny(entry["id"], "Edit: src/a.ts (1 replacement)"), denied
        assert "Applied Edit: src/a.ts (1 replacement)." in results[1][1], results[1]
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert entry["reason"] == "the first call moves to newApi", entry
        assert entry["frontEnd"] == "hook:gemini-cli", entry
        assert (entry["outcome"], entry["source"]) == ("applied", "edit"), entry
        settings = json.loads((root / ".gemini" / "settings.json").read_text())
        matched = {name for group in settings["hooks"]["BeforeTool"] for name in group.get("matcher", "").split("|")}
        offered = {name for name in gemini_function_names(model.gemini_main_requests()[0]) if not name.startswith("mcp_")}
        unknown = offered - GEMINI_TOOLS_EDITING - GEMINI_TOOLS_OTHER
        assert not unknown, f"Gemini CLI offers tools this test does not know; classify them: {sorted(unknown)}"
        missed = (offered & GEMINI_TOOLS_EDITING) - matched
        assert not missed, f"editing tools the installed matcher misses: {sorted(missed)}"


def test_gemini_cli_after_agent_hook_holds_the_turn_until_the_preview_is_resolved():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        path = str(root / "src" / "a.ts")
        script = [
            replace(path),
            ("text", "All done."),
            ("mcp", "resolve", {"action": "apply", "reason": "resolved when the hook asked"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_gemini(tmp, root, model)
        finally:
            model.stop()
        assert not model.errors, model.errors
        held = [part.get("text", "") for r in model.gemini_main_requests() for c in r.get("contents", [])
                if c.get("role") == "user" for part in c.get("parts", [])
                if "A change staged in this session is still pending" in part.get("text", "")]
        assert held, "the AfterAgent hook's reason never reached the model"
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert pending(root) == []
        assert log_entries(root)[0]["reason"] == "resolved when the hook asked"


def test_gemini_cli_write_file_of_a_new_file_is_gated_then_applied():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        script = [
            ("tool", "write_file", {"file_path": "src/b.ts", "content": "export const b = 1;\n"}),
            ("mcp", "resolve", {"action": "apply", "reason": "add b"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/b.ts"]).start()
        try:
            run_gemini(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["write_file", "mcp_staged_resolve"], results
        assert results[0][1].startswith(BLOCKED + "staged holds this edit as a preview"), results[0]
        assert model.seen[1]["src/b.ts"] is None, model.seen
        assert (root / "src" / "b.ts").read_text() == "export const b = 1;\n"
        assert log_entries(root)[0]["frontEnd"] == "hook:gemini-cli"


def test_gemini_cli_default_approval_mode_headless_has_no_edit_tool_and_nothing_is_staged():
    """In its default approval mode, headless Gemini CLI offers the model no edit tool at all
    (no person to ask): the gate grants nothing there. (Interactively, the hook reads `default`
    from the settings and stages a preview only a person may apply; the hooks crate's tests
    cover it.)"""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        path = str(root / "src" / "a.ts")
        model = Watching([replace(path), ("text", "Done.")], root, ["src/a.ts"]).start()
        try:
            run_gemini(tmp, root, model, approval="default")
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["replace"], results
        assert results[0][1].startswith('Tool "replace" not found.'), results[0]
        assert (root / "src" / "a.ts").read_text() == SOURCE
        assert pending(root) == []


def test_gemini_cli_record_mode_logs_the_edit_and_undo_restores_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "--mode", "record")
        path = str(root / "src" / "a.ts")
        model = Watching([replace(path), ("text", "Done.")], root, ["src/a.ts"]).start()
        try:
            run_gemini(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["replace"], results
        assert (root / "src" / "a.ts").read_text() == EDITED
        entries = log_entries(root)
        assert len(entries) == 1, entries
        entry = entries[0]
        assert (entry["outcome"], entry["frontEnd"], entry["source"]) == ("applied", "hook:gemini-cli", "edit"), entry
        assert entry["reason"] == "Gemini CLI's replace, recorded by staged's hook", entry
        assert "-oldApi(1);\n+newApi(1);\n" in entry["diff"], entry["diff"]
        undo = staged(root, "undo", "--yes")
        assert undo.returncode == 0, undo.stderr
        assert (root / "src" / "a.ts").read_text() == SOURCE


def hooked_to(root, binary):
    """Points the installed hooks (not the MCP server) at `binary`."""
    settings = root / ".gemini" / "settings.json"
    value = json.loads(settings.read_text())
    for groups in value["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["command"].startswith(hook_bin() + " "), hook
                hook["command"] = str(binary) + hook["command"][len(hook_bin()):]
    settings.write_text(json.dumps(value))


def test_gemini_cli_blocks_the_edit_when_the_hooked_staged_is_missing():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        hooked_to(root, Path(tmp) / "gone" / "staged")
        path = str(root / "src" / "a.ts")
        model = Watching([replace(path), ("text", "Done.")], root, ["src/a.ts"]).start()
        try:
            run_gemini(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["replace"], results
        assert results[0][1].startswith(BLOCKED) and MISSING in results[0][1], results[0]
        assert (root / "src" / "a.ts").read_text() == SOURCE


def test_gemini_cli_blocks_the_edit_when_the_hook_crashes():
    """A staged that dies before it answers (a signal) is a block too: the installed command
    turns any failure into exit 2, where Gemini CLI lets exit 1 through."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        crash = Path(tmp) / "bin" / "staged"
        crash.parent.mkdir()
        crash.write_text("#!/bin/sh\nkill -SEGV $$\n")
        crash.chmod(0o755)
        install(root)
        hooked_to(root, crash)
        path = str(root / "src" / "a.ts")
        model = Watching([replace(path), ("text", "Done.")], root, ["src/a.ts"]).start()
        try:
            run_gemini(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["replace"], results
        assert "staged's hook could not run (exit 139), so this tool call is refused and nothing was written." in results[0][1], results[0]
        assert (root / "src" / "a.ts").read_text() == SOURCE
