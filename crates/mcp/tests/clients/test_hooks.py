"""staged's hooks inside the real, unmodified clients: Claude Code and Codex.

Each test installs the hooks the way a user does (`staged hook install claude-code|codex`,
which also registers `staged mcp` and approves it), then runs the client headless against
`ScriptedTurns` on 127.0.0.1. The scripted model uses the client's own edit tools (Claude
Code's Read, Edit and Write; Codex's `apply_patch`, as its freeform tool and as a heredoc in
the shell) and then `resolve` through the staged MCP server. The tests read what the client
sent the model (the deny reasons, the Stop hook's feedback, the resolve results), the files
at each request, and the resolve log.

The gate never grants what the client would not: Claude Code runs in `acceptEdits` mode where
the model applies its own previews; in its default mode only a person may apply them, in plan
mode nothing is staged, a notebook edit never goes through, and the agents' control files and
`.git/` are never staged; Codex's sandbox (from its `config.toml`) is honoured likewise.

Codex runs without `--dangerously-bypass-hook-trust`: its hooks fire only because the
installer wrote trust entries whose hashes match. Its home is under `target/` (Codex refuses
hooks in a home under /tmp). Clients come from `STAGED_CLIENTS_BIN`, `staged` from
`STAGED_BIN`; a missing client fails the test, it is never skipped.
"""

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from scripted_model import ScriptedTurns, tool_results_anthropic, tool_results_responses
from test_real_clients import HANG_SECONDS, REMINDER, REPO, base_env, client_bin, run_client, staged_bin

SOURCE = "oldApi(1);\nconst x = oldApi(2, 3);\n"
EDITED = "newApi(1);\nconst x = oldApi(2, 3);\n"
CATALOG = Path(__file__).resolve().parent / "codex_catalog.json"
NEWEST_FIRST = ("resolve acts on the newest pending preview: with several pending, resolve them one at a time, "
                "newest first, each with its own reason.")
# Claude Code runs the model's resolve only where it would have written the edit itself: in
# its default mode it would have asked the person, so only a person may apply the preview.
ACCEPT_EDITS = ["--permission-mode", "acceptEdits"]


class Watching(ScriptedTurns):
    """A scripted model that also notes, at each request, the workspace's files."""

    def __init__(self, script, root, paths):
        super().__init__(script)
        self.root = root
        self.paths = paths
        self.seen = []

    def _note(self):
        self.seen.append({p: (self.root / p).read_text() if (self.root / p).exists() else None for p in self.paths})

    def _anthropic(self, body):
        if any(t.get("name", "").startswith("mcp__staged__") for t in body.get("tools", [])):
            self._note()
        return super()._anthropic(body)

    def _responses(self, body):
        self._note()
        return super()._responses(body)


def staged(root, *args):
    proc = subprocess.run([staged_bin(), "--workspace", str(root), *args], capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    return proc


def log_entries(root):
    proc = staged(root, "--json", "log")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["entries"]


def pending(root):
    proc = staged(root, "--json", "pending")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["pending"]


def install(root, *args, codex_home=None):
    env = None
    if codex_home is not None:
        env = {**base_env(codex_home.parent), "CODEX_HOME": str(codex_home)}
    proc = subprocess.run([staged_bin(), "--workspace", str(root), "hook", "install", *args], capture_output=True,
                          text=True, timeout=HANG_SECONDS, env=env)
    assert proc.returncode == 0, f"install failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def new_repo(tmp):
    root = Path(tmp) / "repo"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "src" / "a.ts").write_text(SOURCE)
    return root.resolve()


# --- Claude Code ---------------------------------------------------------------------------


def run_claude(tmp, root, model, extra_args=()):
    home = Path(tmp) / "home"
    home.mkdir(exist_ok=True)
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
    # The person trusted this folder once (Claude Code's trust dialog), as `staged doctor`
    # asks: until then Claude Code runs the project's hooks but ignores its permissions.
    config = home / ".claude"
    config.mkdir(exist_ok=True)
    (config / ".claude.json").write_text(json.dumps({"projects": {str(root): {"hasTrustDialogAccepted": True}}}))
    # No --mcp-config: the server comes from the .mcp.json the installer wrote, approved in
    # .claude/settings.json, as a user's would.
    argv = [client_bin("claude"), "-p", "Rename the first oldApi call to newApi.", *extra_args]
    return run_client("claude", argv, env, root)


def main_requests(model):
    assert not model.errors, model.errors
    requests = model.anthropic_main_requests()
    assert requests, "Claude Code never offered the staged MCP tools: the installed .mcp.json was not loaded"
    return requests


def expected_deny(entry_id, label, path):
    return (
        f"staged holds this edit as a preview, and nothing was written yet: {entry_id} ({label}). "
        'To write it, call mcp__staged__resolve with action "apply" and a one-line reason (or "discard" to drop it); '
        f"{NEWEST_FIRST} After applying, Read {path} again before editing it further.\n\n{REMINDER}"
    )


def test_claude_code_gate_stages_an_edit_and_resolve_writes_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code")
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("mcp", "resolve", {"action": "apply", "reason": "the first call moves to newApi"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_claude(tmp, root, model, ACCEPT_EDITS)
        finally:
            model.stop()
        last = main_requests(model)[-1]
        results = tool_results_anthropic(last)
        assert [name for name, _, _ in results] == ["Read", "Edit", "mcp__staged__resolve"], results
        _, denied, is_error = results[1]
        # Before the resolve call the file was untouched.
        assert model.seen[2]["src/a.ts"] == SOURCE, model.seen
        entries = log_entries(root)
        assert len(entries) == 1, (results, entries)
        entry = entries[0]
        assert is_error, results[1]
        assert denied == expected_deny(entry["id"], "Edit: src/a.ts (1 replacement)", "src/a.ts"), denied
        _, resolved, resolve_error = results[2]
        assert not resolve_error and "Applied Edit: src/a.ts (1 replacement)." in resolved, resolved
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert entry["reason"] == "the first call moves to newApi", entry
        assert entry["frontEnd"] == "hook:claude-code", entry
        assert (entry["outcome"], entry["source"]) == ("applied", "edit"), entry


def test_claude_code_stop_hook_holds_the_turn_until_the_preview_is_resolved():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code")
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("text", "All done."),
            ("mcp", "resolve", {"action": "apply", "reason": "resolved when the stop hook asked"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_claude(tmp, root, model, ACCEPT_EDITS)
        finally:
            model.stop()
        requests = main_requests(model)
        # The request after "All done." carries the Stop hook's feedback as the last user text.
        fed_back = [r for r in requests if "Stop hook feedback" in json.dumps(r["messages"][-1])]
        assert fed_back, [r["messages"][-1] for r in requests]
        last_user = fed_back[0]["messages"][-1]
        text = last_user["content"] if isinstance(last_user["content"], str) else "\n".join(
            b.get("text", "") for b in last_user["content"] if isinstance(b, dict))
        assert "Stop hook feedback:\nA change staged in this session is still pending: " in text, text
        assert "(Edit: src/a.ts (1 replacement))" in text and REMINDER in text, text
        assert model.seen[3]["src/a.ts"] == SOURCE, "nothing was written before the resolve"
        assert (root / "src" / "a.ts").read_text() == EDITED
        entry = log_entries(root)[0]
        assert (entry["reason"], entry["frontEnd"]) == ("resolved when the stop hook asked", "hook:claude-code"), entry
        assert pending(root) == []


def test_claude_code_write_of_a_new_file_is_gated_then_applied():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code")
        path = str(root / "src" / "new.ts")
        script = [
            ("tool", "Write", {"file_path": path, "content": "export const made = 1;\n"}),
            ("mcp", "resolve", {"action": "apply", "reason": "add the new module"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/new.ts"]).start()
        try:
            run_claude(tmp, root, model, ACCEPT_EDITS)
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Write", "mcp__staged__resolve"], results
        assert results[0][2] and "(Write: src/new.ts (new file, 1 line))" in results[0][1], results[0]
        assert model.seen[1]["src/new.ts"] is None, "the file did not exist before the resolve"
        assert (root / "src" / "new.ts").read_text() == "export const made = 1;\n"
        entry = log_entries(root)[0]
        assert (entry["source"], entry["frontEnd"], entry["reason"]) == ("write", "hook:claude-code", "add the new module")


def claude_results(model):
    return tool_results_anthropic(main_requests(model)[-1])


def test_claude_code_default_mode_stages_but_only_a_person_may_apply():
    """Claude Code `-p` in its default mode would have asked the person before the Edit: the
    gate stages it, the model's resolve is refused, and `staged resolve` (a person) applies it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code")
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("mcp", "resolve", {"action": "apply", "reason": "the model applies its own edit"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_claude(tmp, root, model)
        finally:
            model.stop()
        results = claude_results(model)
        assert [name for name, _, _ in results] == ["Read", "Edit", "mcp__staged__resolve"], results
        ids = [p["id"] for p in pending(root)]
        assert len(ids) == 1, ids
        _, denied, _ = results[1]
        assert ("Claude Code is in its default permission mode, in which it asks the person before an edit, "
                f"so only a person may apply it: tell them it waits for them (`staged review`, or "
                f"`staged resolve apply --id {ids[0]} --reason \"...\"` in the workspace).") in denied, denied
        _, refused, is_error = results[2]
        assert is_error and refused.startswith(
            f"Only a person may apply {ids[0]} (Edit: src/a.ts (1 replacement)): it was staged while Claude Code "
            "is in its default permission mode"), refused
        assert (root / "src" / "a.ts").read_text() == SOURCE
        assert log_entries(root) == []
        done = staged(root, "resolve", "apply", "--reason", "the person read the diff")
        assert done.returncode == 0, done.stderr
        assert (root / "src" / "a.ts").read_text() == EDITED


def test_claude_code_plan_mode_denies_without_staging():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code")
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("mcp", "resolve", {"action": "apply", "reason": "apply it anyway"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_claude(tmp, root, model, ["--permission-mode", "plan"])
        finally:
            model.stop()
        results = claude_results(model)
        assert [name for name, _, _ in results] == ["Read", "Edit", "mcp__staged__resolve"], results
        _, denied, is_error = results[1]
        assert is_error and ("staged refused this edit without staging it, and nothing was written: Claude Code is "
                             "in plan mode, in which it makes no edits.") in denied, denied
        assert "No pending action to resolve." in results[2][1], results[2]
        assert pending(root) == []
        assert (root / "src" / "a.ts").read_text() == SOURCE


# Claude Code 2.1.197's own tools, as it offers them to the model, and whether each edits a
# file. A tool the client adds fails the test until it is classified here, and an editing tool
# must be in the matcher the installer writes.
CLAUDE_TOOLS_EDITING = {"Edit", "MultiEdit", "Write", "NotebookEdit"}
# Bash writes through the shell: the shell-writes issue's, not a file-editing tool.
CLAUDE_TOOLS_OTHER = {
    "Agent", "Bash", "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "Read",
    "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill", "TaskCreate", "TaskGet", "TaskList", "TaskOutput",
    "TaskStop", "TaskUpdate", "WebFetch", "WebSearch", "Workflow",
}


NOTEBOOK = {
    "cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
               "source": ["print(1)\n"]}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}


def test_claude_code_notebook_edits_never_go_through_and_every_editing_tool_is_matched():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        notebook = root / "a.ipynb"
        notebook.write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
        before = notebook.read_text()
        install(root, "claude-code")
        settings = json.loads((root / ".claude" / "settings.json").read_text())
        matchers = [group.get("matcher", "") for group in settings["hooks"]["PreToolUse"]]
        matched = {name for m in matchers for name in m.split("|")}
        script = [
            ("tool", "Read", {"file_path": str(notebook)}),
            ("tool", "NotebookEdit", {"notebook_path": str(notebook), "cell_id": "c1",
                                      "new_source": "import os\nos.system('touch /tmp/pwned')", "edit_mode": "replace"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["a.ipynb"]).start()
        try:
            run_claude(tmp, root, model, ACCEPT_EDITS)
        finally:
            model.stop()
        results = claude_results(model)
        assert [name for name, _, _ in results] == ["Read", "NotebookEdit"], results
        _, denied, is_error = results[1]
        assert is_error and "staged refused this NotebookEdit without staging it, and nothing was written" in denied, denied
        assert "edit its JSON with Edit" in denied, denied
        assert notebook.read_text() == before
        assert pending(root) == []
        offered = {t["name"] for t in main_requests(model)[0].get("tools", []) if not t["name"].startswith("mcp__")}
        unknown = offered - CLAUDE_TOOLS_EDITING - CLAUDE_TOOLS_OTHER
        assert not unknown, f"Claude Code offers tools this test does not know; classify them: {sorted(unknown)}"
        missed = (offered & CLAUDE_TOOLS_EDITING) - matched
        assert not missed, f"editing tools the installed matcher misses: {sorted(missed)} (matchers {matchers})"


def test_claude_code_cannot_rewrite_its_own_settings_through_the_gate():
    """Even in bypassPermissions mode, a Write of .claude/settings.json is denied unstaged."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code")
        settings_path = root / ".claude" / "settings.json"
        before = settings_path.read_text()
        widened = json.loads(before)
        widened.setdefault("permissions", {}).setdefault("allow", []).append("Bash(*)")
        script = [
            ("tool", "Read", {"file_path": str(settings_path)}),
            ("tool", "Write", {"file_path": str(settings_path), "content": json.dumps(widened)}),
            ("mcp", "resolve", {"action": "apply", "reason": "allow every command"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, [".claude/settings.json"]).start()
        try:
            run_claude(tmp, root, model, ACCEPT_EDITS)
        finally:
            model.stop()
        results = claude_results(model)
        assert [name for name, _, _ in results] == ["Read", "Write", "mcp__staged__resolve"], results
        _, denied, is_error = results[1]
        assert is_error and ("staged refused this edit, and nothing was written: Refusing .claude/settings.json: "
                             ".claude/ is Claude Code's settings, permissions and hooks") in denied, denied
        assert "No pending action to resolve." in results[2][1], results[2]
        assert settings_path.read_text() == before
        assert pending(root) == []


def test_claude_code_record_mode_logs_the_edit_and_undo_restores_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code", "--mode", "record")
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_claude(tmp, root, model, ["--allowedTools", "Read,Edit"])
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Read", "Edit"], results
        assert not results[1][2], results[1]
        assert (root / "src" / "a.ts").read_text() == EDITED
        entry = log_entries(root)[0]
        assert (entry["outcome"], entry["frontEnd"], entry["source"]) == ("applied", "hook:claude-code", "edit"), entry
        assert "-oldApi(1);\n+newApi(1);\n" in entry["diff"], entry["diff"]
        undo = staged(root, "undo", "--yes")
        assert undo.returncode == 0, undo.stderr
        assert (root / "src" / "a.ts").read_text() == SOURCE


# --- Codex ---------------------------------------------------------------------------------


def codex_home_for(tmp):
    home = Path(tmp) / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    return home, codex_home


def run_codex(tmp, root, model, sandbox="danger-full-access"):
    """Writes the user's part of config.toml (the scripted provider), installs staged's hooks
    into it, and runs `codex exec` without any hook-trust bypass."""
    home, codex_home = codex_home_for(tmp)
    (codex_home / "config.toml").write_text(f"""# the user's own settings
model = "scripted"
model_provider = "scripted"
model_catalog_json = {json.dumps(str(CATALOG))}
check_for_update_on_startup = false
approval_policy = "never"
sandbox_mode = "{sandbox}"

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
""")
    said = install(root, "codex", codex_home=codex_home)
    assert "trusted: 2 hooks" in said, said
    env = {**base_env(home), "CODEX_HOME": str(codex_home), "SCRIPTED_MODEL_KEY": "scripted"}
    argv = [client_bin("codex"), "exec", "--skip-git-repo-check", "Rename the first oldApi call to newApi."]
    return run_client("codex", argv, env, root)


@pytest.fixture
def codex_tmp():
    base = REPO / "target" / "hook-tests"
    base.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=base)
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


PATCH = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-oldApi(1);\n+newApi(1);\n*** End Patch\n"


def check_codex_run(model, root, patch_tool):
    assert not model.errors, model.errors
    requests = model.responses_main_requests()
    assert requests, "Codex never offered the staged MCP tools"
    results = tool_results_responses(requests[-1])
    names = [name for name, _, _ in results]
    assert names == [patch_tool, "resolve"], results
    denied = results[0][1]
    assert "Command blocked by PreToolUse hook: staged holds this patch as a preview, and nothing was written yet: " in denied, denied
    assert "(Patch: 1 file (1 updated))" in denied, denied
    assert model.seen[1]["src/a.ts"] == SOURCE, "the patch was not applied by Codex"
    assert "Applied Patch: 1 file (1 updated)." in results[1][1], results[1]
    assert (root / "src" / "a.ts").read_text() == EDITED
    entry = log_entries(root)[0]
    assert (entry["source"], entry["frontEnd"], entry["reason"]) == ("apply_patch", "hook:codex", "apply the rename"), entry


def test_codex_gate_stages_apply_patch_and_resolve_writes_it(codex_tmp):
    root = new_repo(codex_tmp)
    script = [
        ("custom", "apply_patch", PATCH),
        ("mcp", "resolve", {"action": "apply", "reason": "apply the rename"}),
        ("text", "Done."),
    ]
    model = Watching(script, root, ["src/a.ts"]).start()
    try:
        run_codex(codex_tmp, root, model)
    finally:
        model.stop()
    check_codex_run(model, root, "apply_patch")


def test_codex_gate_stages_a_shell_heredoc_patch(codex_tmp):
    root = new_repo(codex_tmp)
    heredoc = f"apply_patch <<'EOF'\n{PATCH}EOF\n"
    script = [
        ("tool", "exec_command", {"cmd": heredoc}),
        ("mcp", "resolve", {"action": "apply", "reason": "apply the rename"}),
        ("text", "Done."),
    ]
    model = Watching(script, root, ["src/a.ts"]).start()
    try:
        run_codex(codex_tmp, root, model)
    finally:
        model.stop()
    check_codex_run(model, root, "exec_command")


def test_codex_gate_denies_a_patch_it_cannot_stage_and_writes_nothing(codex_tmp):
    root = new_repo(codex_tmp)
    bad = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-notInTheFile();\n+x();\n*** End Patch\n"
    script = [("custom", "apply_patch", bad), ("text", "Done.")]
    model = Watching(script, root, ["src/a.ts"]).start()
    try:
        run_codex(codex_tmp, root, model)
    finally:
        model.stop()
    results = tool_results_responses(model.responses_main_requests()[-1])
    assert [name for name, _, _ in results] == ["apply_patch"], results
    assert "Command blocked by PreToolUse hook: staged refused this edit, and nothing was written: " in results[0][1], results
    assert (root / "src" / "a.ts").read_text() == SOURCE
    assert pending(root) == []


GIT_CONFIG_PATCH = ("*** Begin Patch\n*** Update File: .git/config\n@@\n [core]\n"
                    "+\tfsmonitor = \"touch pwned\"\n*** End Patch\n")


def test_codex_gate_never_grants_what_its_sandbox_would_not(codex_tmp):
    """workspace-write: a patch of .git/config is denied unstaged; read-only: so is src/a.ts."""
    root = new_repo(codex_tmp)
    (root / ".git" / "config").write_text("[core]\n\tbare = false\n")
    script = [
        ("custom", "apply_patch", GIT_CONFIG_PATCH),
        ("mcp", "resolve", {"action": "apply", "reason": "add the monitor"}),
        ("text", "Done."),
    ]
    model = Watching(script, root, [".git/config"]).start()
    try:
        run_codex(codex_tmp, root, model, sandbox="workspace-write")
    finally:
        model.stop()
    results = tool_results_responses(model.responses_main_requests()[-1])
    assert [name for name, _, _ in results] == ["apply_patch", "resolve"], results
    assert ("staged refused this edit, and nothing was written: Refusing .git/config: .git/ is git's own folder"
            in results[0][1]), results[0]
    assert "No pending action to resolve." in results[1][1], results[1]
    assert (root / ".git" / "config").read_text() == "[core]\n\tbare = false\n"
    assert pending(root) == []


def test_codex_read_only_sandbox_denies_without_staging(codex_tmp):
    root = new_repo(codex_tmp)
    script = [
        ("custom", "apply_patch", PATCH),
        ("mcp", "resolve", {"action": "apply", "reason": "apply the rename"}),
        ("text", "Done."),
    ]
    model = Watching(script, root, ["src/a.ts"]).start()
    try:
        run_codex(codex_tmp, root, model, sandbox="read-only")
    finally:
        model.stop()
    results = tool_results_responses(model.responses_main_requests()[-1])
    assert [name for name, _, _ in results] == ["apply_patch", "resolve"], results
    assert ("staged refused this patch without staging it, and nothing was written: Codex runs with a `read-only` "
            "sandbox (sandbox_mode in CODEX_HOME/config.toml) and never asks for approval") in results[0][1], results[0]
    assert "No pending action to resolve." in results[1][1], results[1]
    assert (root / "src" / "a.ts").read_text() == SOURCE
    assert pending(root) == []
