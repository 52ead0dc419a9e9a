"""staged's hooks inside the real, unmodified Qwen Code (pinned in package.json).

Each test installs the hooks the way a user does (`staged hook install qwen-code`: the hooks
and the MCP server, trusted, in the workspace's `.qwen/settings.json`, and the server's
approval in the person's `mcpApprovals.json` in `QWEN_HOME`, without which Qwen Code skips a
project's server), then runs `qwen -p` headless against `ScriptedTurns` on
127.0.0.1 through OpenAI chat completions (`OPENAI_BASE_URL`). Qwen Code's `edit` requires a
`read_file` of the file first, and its MCP tools are hidden until the model calls
`tool_search`, so the scripts do both. Qwen Code runs in `--approval-mode auto-edit`, in which
it writes edits without asking, so the model may apply its own previews.

The client comes from `STAGED_CLIENTS_BIN`, `staged` from `STAGED_BIN`; a missing client
fails the test, it is never skipped. Its telemetry and update checks are off; it reaches
nothing but 127.0.0.1.
"""

import json
import tempfile
from pathlib import Path

from scripted_model import ScriptedTurns, chat_function_names, tool_results_chat
from test_hooks import (
    EDITED, MISSING, NEWEST_FIRST, NOTEBOOK, SOURCE, hooked, installed_by_a_copy, log_entries, new_repo, pending,
    staged,
)
from test_real_clients import REMINDER, base_env, client_bin, hook_bin, run_client, staged_bin

import subprocess

from test_real_clients import HANG_SECONDS

# The tools Qwen Code 0.24.4 offers a headless model (`--approval-mode auto-edit`): the ones
# that edit a file, which the installed matcher must name, and the rest.
QWEN_TOOLS_EDITING = {"edit", "write_file", "notebook_edit", "run_shell_command"}
QWEN_TOOLS_OTHER = {"agent", "get_goal", "glob", "grep_search", "list_agents", "read_file", "skill", "tool_call",
                    "tool_search", "update_goal", "todo_write", "web_fetch", "list_directory",
                    "save_memory", "ask_user_question", "exit_plan_mode", "enter_plan_mode"}
RESOLVE = "mcp__staged__resolve (load it with tool_search if it is not among your tools yet)"


class Watching(ScriptedTurns):
    """A scripted model that also notes, at each main request, the workspace's files."""

    # Qwen Code offers staged's tools only after tool_search: every request with tools is main.
    chat_any_tools = True

    def __init__(self, script, root, paths):
        super().__init__(script)
        self.root = root
        self.paths = paths
        self.seen = []

    def _chat(self, body):
        if body.get("tools"):
            self.seen.append({p: (self.root / p).read_text() if (self.root / p).exists() else None
                              for p in self.paths})
        return super()._chat(body)


def qwen_home(tmp):
    home = Path(tmp) / "home"
    (home / ".qwen").mkdir(parents=True, exist_ok=True)
    return home


def install(tmp, root, *args, binary=None):
    home = qwen_home(tmp)
    env = {**base_env(home), "QWEN_HOME": str(home / ".qwen")}
    proc = subprocess.run([binary or staged_bin(), "--workspace", str(root), "hook", "install", "qwen-code", *args],
                          capture_output=True, text=True, timeout=HANG_SECONDS, env=env)
    assert proc.returncode == 0, f"install failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def run_qwen(tmp, root, model, approval="auto-edit"):
    home = qwen_home(tmp)
    env = {
        **base_env(home),
        "QWEN_HOME": str(home / ".qwen"),
        "OPENAI_BASE_URL": f"http://127.0.0.1:{model.port}/v1",
        "OPENAI_API_KEY": "sk-scripted-model",
        "OPENAI_MODEL": "scripted",
        "QWEN_CODE_DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    settings = home / ".qwen" / "settings.json"
    user = json.loads(settings.read_text()) if settings.exists() else {}
    user.setdefault("privacy", {})["usageStatisticsEnabled"] = False
    user.setdefault("telemetry", {})["enabled"] = False
    user.setdefault("general", {})["enableAutoUpdate"] = False
    settings.write_text(json.dumps(user))
    argv = [client_bin("qwen"), "-p", "Rename the first oldApi call to newApi.", "--approval-mode", approval]
    return run_client("qwen", argv, env, root)


def results_of(model):
    assert not model.errors, model.errors
    requests = model.chat_main_requests()
    assert requests, "Qwen Code never asked the scripted model with its tools"
    return tool_results_chat(requests[-1])


def edit_script(path):
    return [
        ("tool", "read_file", {"file_path": path}),
        ("tool", "edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);"}),
    ]


def expected_deny(entry_id, label, path):
    return (
        f"staged holds this edit as a preview, and nothing was written yet: {entry_id} ({label}). "
        f'To write it, call {RESOLVE} with action "apply" and a one-line reason (or "discard" to drop it); '
        f"{NEWEST_FIRST} After applying, Read {path} again before editing it further.\n\n{REMINDER}"
    )


def test_qwen_code_gate_stages_an_edit_and_resolve_writes_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(tmp, root)
        path = str(root / "src" / "a.ts")
        script = edit_script(path) + [
            ("tool", "tool_search", {"query": "staged resolve"}),
            ("mcp", "resolve", {"action": "apply", "reason": "the first call moves to newApi"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_qwen(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        names = [name for name, _, _ in results]
        assert names == ["read_file", "edit", "tool_search", "mcp__staged__resolve"], results
        # Before the resolve call the file was untouched.
        assert model.seen[3]["src/a.ts"] == SOURCE, model.seen
        entries = log_entries(root)
        assert len(entries) == 1, (results, entries)
        entry = entries[0]
        denied = results[1][1]
        assert expected_deny(entry["id"], "Edit: src/a.ts (1 replacement)", "src/a.ts") in denied, denied
        assert "Applied Edit: src/a.ts (1 replacement)." in results[3][1], results[3]
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert entry["reason"] == "the first call moves to newApi", entry
        assert entry["frontEnd"] == "hook:qwen-code", entry
        assert (entry["outcome"], entry["source"]) == ("applied", "edit"), entry
        settings = json.loads((root / ".qwen" / "settings.json").read_text())
        matched = {name for group in settings["hooks"]["PreToolUse"] for name in group.get("matcher", "").split("|")}
        offered = {name for name in chat_function_names(model.chat_main_requests()[0]) if not name.startswith("mcp__")}
        unknown = offered - QWEN_TOOLS_EDITING - QWEN_TOOLS_OTHER
        assert not unknown, f"Qwen Code offers tools this test does not know; classify them: {sorted(unknown)}"
        missed = (offered & QWEN_TOOLS_EDITING) - matched
        assert not missed, f"editing tools the installed matcher misses: {sorted(missed)}"


def test_qwen_code_notebook_edits_never_go_through():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        notebook = root / "a.ipynb"
        notebook.write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
        before = notebook.read_text()
        install(tmp, root)
        script = [
            ("tool", "read_file", {"file_path": str(notebook)}),
            ("tool", "notebook_edit", {"notebook_path": str(notebook), "cell_id": "c1",
                                       "new_source": "import os\nos.system('touch /tmp/pwned')", "edit_mode": "replace"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["a.ipynb"]).start()
        try:
            run_qwen(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["read_file", "notebook_edit"], results
        assert "staged refused this notebook_edit without staging it, and nothing was written" in results[1][1], results[1]
        assert notebook.read_text() == before
        assert pending(root) == []


def test_qwen_code_stop_hook_holds_the_turn_until_the_preview_is_resolved():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(tmp, root)
        path = str(root / "src" / "a.ts")
        script = edit_script(path) + [
            ("text", "All done."),
            ("tool", "tool_search", {"query": "staged resolve"}),
            ("mcp", "resolve", {"action": "apply", "reason": "resolved when the stop hook asked"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_qwen(tmp, root, model)
        finally:
            model.stop()
        assert not model.errors, model.errors
        requests = model.chat_main_requests()
        held = [m for r in requests for m in r.get("messages", []) if m.get("role") == "user"
                and "A change staged in this session is still pending" in json.dumps(m.get("content"))]
        assert held, [r.get("messages", [])[-1] for r in requests]
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert pending(root) == []
        assert log_entries(root)[0]["reason"] == "resolved when the stop hook asked"


def test_qwen_code_write_file_of_a_new_file_is_gated_then_applied():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(tmp, root)
        path = str(root / "src" / "b.ts")
        script = [
            ("tool", "write_file", {"file_path": path, "content": "export const b = 1;\n"}),
            ("tool", "tool_search", {"query": "staged resolve"}),
            ("mcp", "resolve", {"action": "apply", "reason": "add b"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/b.ts"]).start()
        try:
            run_qwen(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["write_file", "tool_search", "mcp__staged__resolve"], results
        assert "staged holds this edit as a preview" in results[0][1], results[0]
        assert model.seen[2]["src/b.ts"] is None, model.seen
        assert (root / "src" / "b.ts").read_text() == "export const b = 1;\n"
        assert log_entries(root)[0]["frontEnd"] == "hook:qwen-code"


def test_qwen_code_default_mode_headless_refuses_the_edit_itself_and_nothing_is_staged():
    """In its default approval mode, headless Qwen Code declines an edit before any hook runs
    (no person to ask): the gate grants nothing there. (Interactively, the hook's reading of
    `default` stages a preview only a person may apply; the hooks crate's tests cover it.)"""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(tmp, root)
        path = str(root / "src" / "a.ts")
        model = Watching(edit_script(path) + [("text", "Done.")], root, ["src/a.ts"]).start()
        try:
            run_qwen(tmp, root, model, approval="default")
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["read_file", "edit"], results
        assert 'Qwen Code requires permission to use "edit", but that permission was declined.' in results[1][1], results[1]
        assert (root / "src" / "a.ts").read_text() == SOURCE
        assert pending(root) == []


def test_qwen_code_record_mode_logs_the_edit_and_undo_restores_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(tmp, root, "--mode", "record")
        path = str(root / "src" / "a.ts")
        model = Watching(edit_script(path) + [("text", "Done.")], root, ["src/a.ts"]).start()
        try:
            run_qwen(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["read_file", "edit"], results
        assert (root / "src" / "a.ts").read_text() == EDITED
        entries = log_entries(root)
        assert len(entries) == 1, entries
        entry = entries[0]
        assert (entry["outcome"], entry["frontEnd"], entry["source"]) == ("applied", "hook:qwen-code", "edit"), entry
        assert entry["reason"] == "Qwen Code's edit, recorded by staged's hook", entry
        assert "-oldApi(1);\n+newApi(1);\n" in entry["diff"], entry["diff"]
        undo = staged(root, "undo", "--yes")
        assert undo.returncode == 0, undo.stderr
        assert (root / "src" / "a.ts").read_text() == SOURCE


def test_qwen_code_blocks_the_edit_when_the_hooked_staged_is_missing():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        copy = installed_by_a_copy(tmp)
        install(tmp, root, binary=copy)
        # The binary the hooks name (the copy of staged-hook) is gone.
        hooked(copy).unlink()
        path = str(root / "src" / "a.ts")
        model = Watching(edit_script(path) + [("text", "Done.")], root, ["src/a.ts"]).start()
        try:
            run_qwen(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["read_file", "edit"], results
        assert MISSING in results[1][1], results[1]
        assert (root / "src" / "a.ts").read_text() == SOURCE


def test_qwen_code_blocks_the_edit_when_the_hook_crashes():
    """A staged that dies (here: killed by a signal before it answers) is a block too: the
    installed command turns any failure into exit 2, where Qwen Code lets exit 1 through."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        crash = Path(tmp) / "bin" / "staged"
        crash.parent.mkdir()
        crash.write_text("#!/bin/sh\nkill -SEGV $$\n")
        crash.chmod(0o755)
        install(tmp, root)
        # The hooks run a staged that crashes; the MCP server is the real one.
        settings = root / ".qwen" / "settings.json"
        value = json.loads(settings.read_text())
        for groups in value["hooks"].values():
            for group in groups:
                for hook in group["hooks"]:
                    assert hook["command"].startswith(hook_bin() + " "), hook
                    hook["command"] = str(crash) + hook["command"][len(hook_bin()):]
        settings.write_text(json.dumps(value))
        path = str(root / "src" / "a.ts")
        model = Watching(edit_script(path) + [("text", "Done.")], root, ["src/a.ts"]).start()
        try:
            run_qwen(tmp, root, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["read_file", "edit"], results
        assert "staged's hook could not run (exit 139), so this tool call is refused and nothing was written." in results[1][1], results[1]
        assert (root / "src" / "a.ts").read_text() == SOURCE


def test_qwen_code_passes_in_a_folder_staged_was_not_installed_in():
    """The hooks and the server are the workspace's own, approved for it alone: in another
    folder an edit goes through, no staged server starts, and staged writes nothing there."""
    with tempfile.TemporaryDirectory() as tmp:
        installed = new_repo(tmp)
        install(tmp, installed)
        other = Path(tmp) / "other"
        (other / "src").mkdir(parents=True)
        (other / ".git").mkdir()
        (other / "src" / "a.ts").write_text(SOURCE)
        path = str(other / "src" / "a.ts")
        model = Watching(edit_script(path) + [("tool", "tool_search", {"query": "staged pending"}),
                                              ("text", "Done.")],
                         other, ["src/a.ts"]).start()
        try:
            run_qwen(tmp, other, model)
        finally:
            model.stop()
        results = results_of(model)
        assert [name for name, _, _ in results] == ["read_file", "edit", "tool_search"], results
        assert (other / "src" / "a.ts").read_text() == EDITED
        assert "mcp__staged__" not in results[2][1], results[2]
        assert sorted(p.name for p in other.iterdir()) == [".git", "src"]
