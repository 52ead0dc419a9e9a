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
from test_real_clients import HANG_SECONDS, REMINDER, REPO, base_env, client_bin, hook_bin, run_client, staged_bin

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


def install(root, *args, codex_home=None, binary=None, claude_config=None):
    env = None
    if codex_home is not None:
        env = {**base_env(codex_home.parent), "CODEX_HOME": str(codex_home)}
    if claude_config is not None:
        env = {**base_env(claude_config.parent), "CLAUDE_CONFIG_DIR": str(claude_config)}
    proc = subprocess.run([binary or staged_bin(), "--workspace", str(root), "hook", "install", *args],
                          capture_output=True, text=True, timeout=HANG_SECONDS, env=env)
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
    known = json.loads((config / ".claude.json").read_text()) if (config / ".claude.json").exists() else {}
    known.setdefault("projects", {}).setdefault(str(root), {})["hasTrustDialogAccepted"] = True
    (config / ".claude.json").write_text(json.dumps(known))
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


def stop_feedback(requests):
    """The Stop hook's feedback the client sent the model, request by request."""
    res = []
    for request in requests:
        last = request["messages"][-1]
        text = last["content"] if isinstance(last["content"], str) else "\n".join(
            b.get("text", "") for b in last["content"] if isinstance(b, dict))
        if "Stop hook feedback" in text:
            res.append(text)
    return res


def test_claude_code_stop_hook_names_a_refused_edit_until_it_is_made_again():
    """A second Edit of a file with a pending preview is refused; the model resolves the
    preview and wants to stop: the Stop hook names the refused edit until it is made again."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code")
        path = str(root / "src" / "a.ts")
        second = {"file_path": path, "old_string": "const x = oldApi(2, 3);", "new_string": "const x = newApi(2, 3);",
                  "replace_all": False}
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("tool", "Edit", second),
            ("text", "All done."),
            ("mcp", "resolve", {"action": "apply", "reason": "the first call"}),
            ("text", "Done."),
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", second),
            ("mcp", "resolve", {"action": "apply", "reason": "the second call"}),
            ("text", "Done now."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_claude(tmp, root, model, ["--permission-mode", "acceptEdits"])
        finally:
            model.stop()
        requests = main_requests(model)
        results = tool_results_anthropic(requests[-1])
        assert "src/a.ts already has a pending preview" in results[2][1], results[2]
        fed_back = stop_feedback(requests)
        assert len(fed_back) == 2, fed_back
        refusal = ("An edit refused in this session, because a preview of its file was pending, was never made "
                   "again: src/a.ts (refused while ")
        assert "A change staged in this session is still pending: " in fed_back[0], fed_back[0]
        assert refusal in fed_back[0], fed_back[0]
        assert "still pending" not in fed_back[1] and refusal in fed_back[1], fed_back[1]
        assert (root / "src" / "a.ts").read_text() == "newApi(1);\nconst x = newApi(2, 3);\n"
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


def test_claude_code_headless_turn_ending_with_a_preview_pending_tells_the_person():
    """A headless `claude -p` turn that ends with a preview pending (one only a person may
    apply, so the Stop lets the turn end): the Stop hook's `systemMessage` names it and
    `staged ui` / `staged review`. Claude Code 2.1.197 shows it, headless, only in
    `--output-format stream-json --include-hook-events` (measured: the plain text output has
    only the model's last text)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "claude-code")
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            proc = run_claude(tmp, root, model, ["--output-format", "stream-json", "--include-hook-events",
                                                 "--verbose"])
        finally:
            model.stop()
        ids = [p["id"] for p in pending(root)]
        assert len(ids) == 1, ids
        told = (f"staged: 1 preview is still pending, nothing of it written: {ids[0]} (Edit: src/a.ts "
                "(1 replacement)). Review it with `staged ui` (in a browser) or `staged review` (in a terminal).")
        events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip().startswith("{")]
        shown = [e for e in events if told in json.dumps(e) or json.dumps(told)[1:-1] in json.dumps(e)]
        assert shown, "\n".join(json.dumps(e)[:300] for e in events)
        assert (root / "src" / "a.ts").read_text() == SOURCE


def answer_elicitations(root, answer):
    """Adds a Claude Code `Elicitation` hook for the staged server that stands for the person:
    it keeps each question it is asked in `elicited-<n>.json` beside the workspace and answers
    `answer` (`{"action", "content"}`)."""
    asked = root.parent / "elicited"
    asked.mkdir(exist_ok=True)
    script = root.parent / "person.sh"
    reply = json.dumps({"hookSpecificOutput": {"hookEventName": "Elicitation", **answer}})
    script.write_text(f"#!/bin/sh\ncat > \"{asked}/elicited-$$.json\"\nprintf '%s\\n' '{reply}'\n")
    script.chmod(0o755)
    settings_path = root / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    settings["hooks"]["Elicitation"] = [{"matcher": "staged", "hooks": [{"type": "command", "command": str(script)}]}]
    settings_path.write_text(json.dumps(settings))
    return asked


@pytest.mark.parametrize("decision", ["accept", "decline"])
def test_claude_code_with_approve_human_waits_for_the_person(decision):
    """`staged hook install claude-code --approve human`: the model's resolve asks the person
    through MCP elicitation (answered here by Claude Code's `Elicitation` hook). Accepted, it
    applies; declined in the form (Claude Code sends a declined elicitation without its
    content, so the person's reason travels in an accepted form whose `approve` is false), the
    preview stays pending and the model reads the person's reason."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        said = install(root, "claude-code", "--approve", "human")
        assert "--approve human: the model's resolve apply waits for a person" in said, said
        content = {"approve": True} if decision == "accept" else {"approve": False,
                                                                   "reason": "keep oldApi until the release"}
        asked = answer_elicitations(root, {"action": "accept", "content": content})
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("mcp", "resolve", {"action": "apply", "reason": "the model wants it"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_claude(tmp, root, model, ACCEPT_EDITS)
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Read", "Edit", "mcp__staged__resolve"], results
        questions = [json.loads(p.read_text()) for p in asked.iterdir()]
        assert len(questions) == 1, questions
        question = questions[0]
        assert question["mcp_server_name"] == "staged", question
        assert "The agent wants to apply a staged change." in question["message"], question
        assert "Reason: the model wants it" in question["message"], question
        assert set(question["requested_schema"]["properties"]) == {"approve", "reason"}, question
        _, resolved, is_error = results[2]
        if decision == "accept":
            assert not is_error and "Applied Edit: src/a.ts (1 replacement)." in resolved, resolved
            assert (root / "src" / "a.ts").read_text() == EDITED
            assert pending(root) == []
        else:
            assert is_error, resolved
            assert shown_text("The person declined to apply `Edit: src/a.ts (1 replacement)`: "
                              "\"keep oldApi until the release\". Nothing was applied", resolved), resolved
            assert (root / "src" / "a.ts").read_text() == SOURCE
            assert len(pending(root)) == 1


def shown_text(needle, result):
    return needle in result or json.dumps(needle)[1:-1] in result


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
# Bash writes through the shell: its calls run under `staged shell-run` (test_shell.py), so the
# matcher must name it too.
CLAUDE_TOOLS_EDITING = {"Edit", "MultiEdit", "Write", "NotebookEdit", "Bash"}
CLAUDE_TOOLS_OTHER = {
    "Agent", "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "Read",
    "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill", "TaskCreate", "TaskGet", "TaskList", "TaskOutput",
    "TaskStop", "TaskUpdate", "WebFetch", "WebSearch", "Workflow",
    # Offered because staged's MCP server serves resources (each pending preview's diff): they
    # read MCP resources and edit nothing.
    "ListMcpResourcesTool", "ReadMcpResourceDirTool", "ReadMcpResourceTool",
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


def test_claude_code_record_mode_undo_gives_back_the_bytes_of_a_crlf_file():
    """Claude Code hands the hook `originalFile` with LF endings: undo must restore the bytes
    that were on disk (CRLF, mixed, or lone CRs), not those; and a Write over a CRLF file is
    undone to its bytes too."""
    crlf = b"oldApi(1);\r\nconst x = oldApi(2, 3);\r\n"
    mixed = b"oldApi(1);\r\nconst y = 2;\nz();\r\n"
    lone = b"oldApi(1);\rconst w = 4;\rlast();\r"
    written = b"keep(1);\r\nkeep(2);\r\n"
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        (root / "src" / "a.ts").write_bytes(crlf)
        (root / "src" / "m.ts").write_bytes(mixed)
        (root / "src" / "r.ts").write_bytes(lone)
        (root / "src" / "w.ts").write_bytes(written)
        install(root, "claude-code", "--mode", "record")
        script = []
        for name in ("a.ts", "m.ts", "r.ts"):
            path = str(root / "src" / name)
            script += [
                ("tool", "Read", {"file_path": path}),
                ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                                  "replace_all": False}),
            ]
        w = str(root / "src" / "w.ts")
        script += [("tool", "Read", {"file_path": w}),
                   ("tool", "Write", {"file_path": w, "content": "fresh(1);\nfresh(2);\n"})]
        script.append(("text", "Done."))
        model = Watching(script, root, []).start()
        try:
            run_claude(tmp, root, model, ["--allowedTools", "Read,Edit,Write"])
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Read", "Edit"] * 3 + ["Read", "Write"], results
        assert not any(is_error for _, _, is_error in results), results
        assert (root / "src" / "a.ts").read_bytes() == crlf.replace(b"oldApi(1);", b"newApi(1);")
        after = {name: (root / "src" / name).read_bytes() for name in ("a.ts", "m.ts", "r.ts", "w.ts")}
        # What Claude Code 2.1.197 writes: an Edit keeps CRLF and lone CRs but makes a mixed
        # file's endings all CRLF (its own rewrite, recorded as the session's); a Write writes
        # its content as given.
        assert after == {"a.ts": b"newApi(1);\r\nconst x = oldApi(2, 3);\r\n",
                         "m.ts": b"newApi(1);\r\nconst y = 2;\r\nz();\r\n",
                         "r.ts": b"newApi(1);\rconst w = 4;\rlast();\r",
                         "w.ts": b"fresh(1);\nfresh(2);\n"}, after
        entries = log_entries(root)
        assert len(entries) == 4, entries
        assert all(e["frontEnd"] == "hook:claude-code" for e in entries), entries
        # The session's diff is what the client did, byte for byte: reverted whole, then undone.
        reverted = staged(root, "session", "revert", "--reason", "all of it")
        assert reverted.returncode == 0, reverted.stdout + reverted.stderr
        before = {"a.ts": crlf, "m.ts": mixed, "r.ts": lone, "w.ts": written}
        assert {name: (root / "src" / name).read_bytes() for name in before} == before
        undone = staged(root, "undo", "--yes")
        assert undone.returncode == 0, undone.stderr
        assert {name: (root / "src" / name).read_bytes() for name in after} == after
        for _ in entries:
            undo = staged(root, "undo", "--yes")
            assert undo.returncode == 0, undo.stderr
        assert {name: (root / "src" / name).read_bytes() for name in before} == before


# --- Codex ---------------------------------------------------------------------------------


def codex_home_for(tmp):
    home = Path(tmp) / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    return home, codex_home


def run_codex(tmp, root, model, mode="gate", installed_in=None, binary=None, before_run=None,
              sandbox="danger-full-access", install_args=()):
    """Writes the user's part of config.toml (the scripted provider), installs staged's hooks
    (in `mode`) into it (for `installed_in`, else `root`; by `binary`, else `staged_bin()`), and
    runs `codex exec` in `root` without any hook-trust bypass (after `before_run(codex_home)`)."""
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
    said = install(installed_in or root, "codex", "--mode", mode, *install_args, codex_home=codex_home,
                   binary=binary)
    hooks = {"gate": 3, "record": 4}[mode]
    assert f"trusted: {hooks} hooks" in said, said
    if before_run is not None:
        before_run(codex_home)
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


def test_codex_exec_with_approve_human_never_applies_without_a_person(codex_tmp):
    """`staged hook install codex --approve human`: `codex exec` has no person to answer the
    approval form (it declines it itself), so the model's resolve applies nothing, and the
    preview stays pending for `staged ui` or `staged review` (the gate never fails open)."""
    root = new_repo(codex_tmp)
    script = [
        ("custom", "apply_patch", PATCH),
        ("mcp", "resolve", {"action": "apply", "reason": "apply the rename"}),
        ("text", "Done."),
    ]
    model = Watching(script, root, ["src/a.ts"]).start()
    try:
        run_codex(codex_tmp, root, model, install_args=("--approve", "human"))
    finally:
        model.stop()
    results = tool_results_responses(model.responses_main_requests()[-1])
    assert [name for name, _, _ in results] == ["apply_patch", "resolve"], results
    # Measured: codex exec 0.171.0 answers the approval form itself, with a decline.
    assert ("The person declined to apply `Patch: 1 file (1 updated)`. Nothing was applied; the preview is "
            "still pending.") in results[1][1], results[1]
    assert (root / "src" / "a.ts").read_text() == SOURCE
    assert len(pending(root)) == 1
    assert log_entries(root) == []


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


# --- When staged cannot run, or the folder is not the one installed (issue 32: 18, 20) -----


MISSING = "staged's hook could not run (exit 127), so this tool call is refused and nothing was written. "


def installed_by_a_copy(tmp):
    """A copy of staged and of staged-hook beside it, for the installer to name (the hooks run
    the copy of staged-hook, which the test deletes); returns the copy of staged."""
    copy = Path(tmp) / "bin" / "staged"
    copy.parent.mkdir()
    shutil.copy2(staged_bin(), copy)
    shutil.copy2(hook_bin(), hooked(copy))
    return copy


def hooked(copy):
    """The binary an install by `copy` (a copy of staged) names in the hooks: staged-hook beside it."""
    return copy.with_name("staged-hook")


def test_claude_code_blocks_the_edit_when_the_hooked_staged_is_missing():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        copy = installed_by_a_copy(tmp)
        install(root, "claude-code", binary=copy)
        # The MCP server still runs (the scripted model acts once it is offered); the binary
        # the hooks name is gone.
        mcp = json.loads((root / ".mcp.json").read_text())
        mcp["mcpServers"]["staged"]["command"] = str(staged_bin())
        (root / ".mcp.json").write_text(json.dumps(mcp))
        hooked(copy).unlink()
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_claude(tmp, root, model, ["--permission-mode", "acceptEdits"])
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Read", "Edit"], results
        _, blocked, is_error = results[1]
        assert is_error and MISSING in blocked, results[1]
        assert (root / "src" / "a.ts").read_text() == SOURCE


def test_codex_blocks_the_patch_when_the_hooked_staged_is_missing(codex_tmp):
    root = new_repo(codex_tmp)
    copy = installed_by_a_copy(codex_tmp)

    def remove_the_binary(codex_home):
        config = codex_home / "config.toml"
        config.write_text(config.read_text().replace(f'command = "{copy}"', f'command = "{staged_bin()}"'))
        hooked(copy).unlink()

    script = [("custom", "apply_patch", PATCH), ("text", "Done.")]
    model = Watching(script, root, ["src/a.ts"]).start()
    try:
        run_codex(codex_tmp, root, model, binary=copy, before_run=remove_the_binary)
    finally:
        model.stop()
    results = tool_results_responses(model.responses_main_requests()[-1])
    assert [name for name, _, _ in results] == ["apply_patch"], results
    # Codex runs the command with bash, whose own "No such file or directory" comes first.
    assert results[0][1].startswith("Command blocked by PreToolUse hook: "), results
    assert MISSING in results[0][1], results
    assert (root / "src" / "a.ts").read_text() == SOURCE


def test_codex_hooks_let_edits_through_in_a_folder_they_were_not_installed_in(codex_tmp):
    installed = new_repo(codex_tmp)
    elsewhere = Path(codex_tmp) / "elsewhere"
    (elsewhere / "src").mkdir(parents=True)
    (elsewhere / "src" / "a.ts").write_text(SOURCE)
    elsewhere = elsewhere.resolve()
    script = [("custom", "apply_patch", PATCH), ("text", "Done.")]
    model = Watching(script, elsewhere, ["src/a.ts"]).start()
    try:
        run_codex(codex_tmp, elsewhere, model, installed_in=installed)
    finally:
        model.stop()
    results = tool_results_responses(model.responses_main_requests()[-1])
    assert [name for name, _, _ in results] == ["apply_patch"], results
    assert "blocked" not in results[0][1], results
    assert (elsewhere / "src" / "a.ts").read_text() == EDITED, "Codex applied its own patch"
    assert not (elsewhere / ".staged").exists()
    assert not (installed / ".staged").exists()


def test_claude_code_local_install_gates_from_the_persons_own_files():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        config = Path(tmp) / "home" / ".claude"
        config.mkdir(parents=True)
        install(root, "claude-code", "--local", claude_config=config)
        assert not (root / ".mcp.json").exists() or "staged" not in (root / ".mcp.json").read_text()
        assert not (root / ".claude" / "settings.json").exists()
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
            run_claude(tmp, root, model, ["--permission-mode", "acceptEdits"])
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Read", "Edit", "mcp__staged__resolve"], results
        assert results[1][2] and "staged holds this edit as a preview" in results[1][1], results[1]
        assert model.seen[2]["src/a.ts"] == SOURCE, model.seen
        assert "Applied Edit: src/a.ts (1 replacement)." in results[2][1], results[2]
        assert (root / "src" / "a.ts").read_text() == EDITED


def test_claude_code_denies_an_edit_whose_work_runs_out_of_memory():
    """Issue 32, finding 7: a 210 KB file and an Edit whose preview needs hundreds of MB (70,000
    replacements of `a` by 400 bytes: 28 MB of changes, within the 32 MiB a preview may hold),
    under a memory limit the hook was started with (250 MB: on the system's allocator, which
    `staged-hook` runs on since issue 36's round 6, the work peaks near 270 MB resident and fits
    in 400 MB of address space, where jemalloc's did not). The worker aborts; before, the hook
    died with no reply and Claude Code ran the Edit."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        text = "ab\n" * 70_000
        (root / "src" / "mid.txt").write_text(text)
        install(root, "claude-code")
        settings_path = root / ".claude" / "settings.json"
        settings = json.loads(settings_path.read_text())
        for group in settings["hooks"]["PreToolUse"]:
            for hook in group["hooks"]:
                hook["command"] = "ulimit -v 250000 && " + hook["command"]
        settings_path.write_text(json.dumps(settings))
        path = str(root / "src" / "mid.txt")
        script = [
            ("tool", "Read", {"file_path": path}),
            ("tool", "Edit", {"file_path": path, "old_string": "a", "new_string": "b" * 400, "replace_all": True}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/mid.txt"]).start()
        try:
            run_claude(tmp, root, model, ["--permission-mode", "acceptEdits"])
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Read", "Edit"], results
        _, denied, is_error = results[1]
        assert is_error, results[1]
        assert ("staged could not finish staging this edit (its worker was killed by signal 6 (SIGABRT), as when the "
                "work needs more than the 244 MiB of memory it may take), so it refuses the tool call; nothing was "
                "written.") in denied, denied
        assert (root / "src" / "mid.txt").read_text() == text
        assert pending(root) == []


class PersonEdits(Watching):
    """A scripted model during whose turn a person edits `src/a.ts` and creates
    `src/person.ts`, just after Codex answered the first tool call."""

    def _responses(self, body):
        if len(self.seen) == 1:
            (self.root / "src" / "a.ts").write_text("person(1);\n")
            (self.root / "src" / "person.ts").write_text("made by a person\n")
        return super()._responses(body)


def test_codex_record_mode_never_logs_a_failed_patch_or_a_persons_edit_as_codexs(codex_tmp):
    """A patch Codex fails to apply writes nothing and fires no PostToolUse; a person edits the
    file it named during the turn. The Stop must not log the person's edit as Codex's (an undo
    would revert it), while the shell patch that did run is logged and undone."""
    root = new_repo(codex_tmp)
    bad = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-notInTheFile();\n+x();\n*** End Patch\n"
    add = "*** Begin Patch\n*** Add File: src/b.ts\n+export const b = 1;\n*** End Patch\n"
    script = [
        ("custom", "apply_patch", bad),
        ("tool", "exec_command", {"cmd": f"apply_patch <<'EOF'\n{add}EOF\n"}),
        ("text", "Done."),
    ]
    model = PersonEdits(script, root, ["src/a.ts", "src/b.ts"]).start()
    try:
        run_codex(codex_tmp, root, model, mode="record")
    finally:
        model.stop()
    assert not model.errors, model.errors
    results = tool_results_responses(model.responses_main_requests()[-1])
    assert [name for name, _, _ in results] == ["apply_patch", "exec_command"], results
    assert "verification failed" in results[0][1] or "Failed to find" in results[0][1], results[0]
    assert (root / "src" / "b.ts").read_text() == "export const b = 1;\n", "Codex applied the shell patch"
    entries = log_entries(root)
    assert len(entries) == 1, entries
    entry = entries[0]
    assert (entry["frontEnd"], entry["source"], entry["label"]) == ("hook:codex", "apply_patch", "Patch: 1 file (1 added)"), entry
    assert "src/a.ts" not in entry["diff"], entry["diff"]
    undo = staged(root, "undo", "--yes")
    assert undo.returncode == 0, undo.stderr
    assert not (root / "src" / "b.ts").exists()
    assert staged(root, "undo", "--yes").returncode != 0, "nothing else to undo"
    assert (root / "src" / "a.ts").read_text() == "person(1);\n"
    assert (root / "src" / "person.ts").read_text() == "made by a person\n"


def test_codex_shell_has_no_apply_patch_on_path_and_a_wrapped_run_is_refused(codex_tmp):
    """In Codex 0.171's shell `apply_patch` is not on PATH (docs/guide/hooks/codex.md says so); a
    command that runs it after a wrapper (`timeout 10 apply_patch < f`) is refused whole by the gate."""
    root = new_repo(codex_tmp)
    (root / "fix.patch").write_text(PATCH)
    script = [
        ("tool", "exec_command", {"cmd": "command -v apply_patch applypatch; echo rc=$?"}),
        ("tool", "exec_command", {"cmd": "timeout 10 apply_patch < fix.patch"}),
        ("tool", "exec_command", {"cmd": "\\apply_patch < fix.patch"}),
        ("text", "Done."),
    ]
    model = Watching(script, root, ["src/a.ts"]).start()
    try:
        run_codex(codex_tmp, root, model)
    finally:
        model.stop()
    assert not model.errors, model.errors
    results = tool_results_responses(model.responses_main_requests()[-1])
    assert [name for name, _, _ in results] == ["exec_command"] * 3, results
    assert "rc=1" in results[0][1] and "/apply_patch" not in results[0][1], results[0]
    for _, text, _ in results[1:]:
        assert "Command blocked by PreToolUse hook: staged refused this edit, and nothing was written: this shell command runs apply_patch" in text, text
    assert (root / "src" / "a.ts").read_text() == SOURCE
    assert pending(root) == []


def test_codex_stop_hook_holds_the_rest_of_a_partial_apply(codex_tmp):
    """The model applies one file of a two-file patch (`extra.files`); the rest stays pending
    under a new id, and the Stop hook holds the turn for it."""
    root = new_repo(codex_tmp)
    (root / "src" / "b.ts").write_text("oldApi(9);\n")
    two = ("*** Begin Patch\n*** Update File: src/a.ts\n@@\n-oldApi(1);\n+newApi(1);\n"
           "*** Update File: src/b.ts\n@@\n-oldApi(9);\n+newApi(9);\n*** End Patch\n")
    script = [
        ("custom", "apply_patch", two),
        ("mcp", "resolve", {"action": "apply", "reason": "only a.ts for now", "extra": {"files": ["src/a.ts"]}}),
        ("text", "All done."),
        ("mcp", "resolve", {"action": "discard", "reason": "b.ts stays as it is"}),
        ("text", "Done."),
    ]
    model = Watching(script, root, ["src/a.ts", "src/b.ts"]).start()
    try:
        run_codex(codex_tmp, root, model)
    finally:
        model.stop()
    assert not model.errors, model.errors
    requests = model.responses_main_requests()
    held = [json.dumps(r["input"][-1]) for r in requests
            if "A change staged in this session is still pending: " in json.dumps(r["input"][-1])]
    assert held, [r["input"][-1] for r in requests]
    assert "(Patch: 1 file (1 updated))" in held[0], held[0]
    results = tool_results_responses(requests[-1])
    assert [name for name, _, _ in results] == ["apply_patch", "resolve", "resolve"], results
    assert "The rest stays pending as the newest preview: " in results[1][1], results[1]
    assert (root / "src" / "a.ts").read_text() == EDITED
    assert (root / "src" / "b.ts").read_text() == "oldApi(9);\n"
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


# --- Sessions (issue 34) -------------------------------------------------------------------

LONG = "".join(f"line {n}\n" for n in range(1, 21))


def test_claude_code_session_is_one_diff_reverted_by_hunk_and_the_reason_reaches_the_model():
    """A record-mode Claude Code session edits a file twice (far apart) and another once and
    writes a new file; `staged session show` is one diff of three files; reverting the first
    edit's hunk keeps the second's, exactly; the resumed session's next request carries the
    person's reason, once."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        (root / "src" / "long.txt").write_text(LONG)
        install(root, "claude-code", "--mode", "record")
        a, long = str(root / "src" / "a.ts"), str(root / "src" / "long.txt")
        script = [
            ("tool", "Read", {"file_path": long}),
            ("tool", "Edit", {"file_path": long, "old_string": "line 2\n", "new_string": "line two\n",
                              "replace_all": False}),
            ("tool", "Edit", {"file_path": long, "old_string": "line 17\n", "new_string": "line seventeen\n",
                              "replace_all": False}),
            ("tool", "Read", {"file_path": a}),
            ("tool", "Edit", {"file_path": a, "old_string": "oldApi(1);", "new_string": "newApi(1);",
                              "replace_all": False}),
            ("tool", "Write", {"file_path": str(root / "src" / "new.ts"), "content": "export const n = 1;\n"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/long.txt"]).start()
        try:
            run_claude(tmp, root, model, ["--allowedTools", "Read,Edit,Write"])
        finally:
            model.stop()
        results = tool_results_anthropic(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["Read", "Edit", "Edit", "Read", "Edit", "Write"], results
        sessions = json.loads(staged(root, "--json", "session", "list").stdout)
        assert len(sessions) == 1 and sessions[0]["client"] == "claude-code", sessions
        assert (sessions[0]["files"], sessions[0]["entries"]) == (3, 4), sessions
        shown = staged(root, "session", "show")
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.count("diff --git ") == 3, shown.stdout
        # git takes the session's diff as it is: reversed, it is exactly the session undone.
        check = subprocess.run(["git", "apply", "--check", "-R", "-"], input=shown.stdout, text=True,
                               cwd=root, capture_output=True)
        assert check.returncode == 0, check.stderr
        reason = "line 2 is referenced by the docs; keep it"
        out = staged(root, "session", "revert", "--only", "src/long.txt:1", "--reason", reason)
        assert out.returncode == 0, out.stdout + out.stderr
        assert (root / "src" / "long.txt").read_text() == LONG.replace("line 17\n", "line seventeen\n")
        out = staged(root, "session", "revert", "--only", "src/new.ts", "--reason", "not needed")
        assert out.returncode == 0, out.stdout + out.stderr
        assert not (root / "src" / "new.ts").exists()
        assert (root / "src" / "a.ts").read_text() == EDITED
        reverts = [e for e in log_entries(root) if e["source"] == "session_revert"]
        assert [e["reason"] for e in reverts] == ["not needed", reason], reverts
        # The session goes on: its next request carries the person's reason, once.
        resumed = ScriptedTurns([("text", "Noted.")]).start()
        try:
            run_claude(tmp, root, resumed, ["--resume", sessions[0]["clientSessionId"]])
        finally:
            resumed.stop()
        told = [r for r in resumed.requests if reason in json.dumps(r)]
        assert told, "the resumed session's model was never told the person's reason"
        expected = f"A person reverted your change to src/long.txt (line 2): {reason}."
        assert expected in json.dumps(told[0]) or json.dumps(expected)[1:-1] in json.dumps(told[0]), told[0]
        # Undo of the revert gives the session's bytes back exactly.
        undo = staged(root, "undo", str(reverts[1]["entry"]), "--yes")
        assert undo.returncode == 0, undo.stdout + undo.stderr
        assert (root / "src" / "long.txt").read_text() == (
            LONG.replace("line 2\n", "line two\n").replace("line 17\n", "line seventeen\n"))
