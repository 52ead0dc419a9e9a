"""staged inside the real, unmodified opencode (`opencode-ai`, pinned in opencode/package.json
and its lock here).

Each test installs staged the way a user does (`staged hook install opencode`, which writes the
plugin `.opencode/plugins/staged.js` and the MCP server in `opencode.json`), then runs
`opencode run --format json` headless against `ScriptedChat` on 127.0.0.1: a provider with
`@ai-sdk/openai-compatible` whose `baseURL` is the scripted model. The model uses opencode's
own edit tools (`edit`, `write`, and `apply_patch`, which opencode offers a GPT model instead)
and then `staged_resolve` through the staged MCP server. The tests read what opencode sent the
model (the deny reasons, the resolve results), the files at each request, and the resolve log.

Nothing reaches the network: a `.opencode/` folder makes opencode install `@opencode-ai/plugin`
there, so the tests put the copy `scripts/test` installed from `opencode-plugin/`'s lock file in
place first, point npm's registry and every proxy at a closed port on 127.0.0.1 (an install
that tried the network would fail, and the tests check that none was tried), and turn off
opencode's model list fetch, update checks, sharing and LSP downloads. opencode takes the
project from `$PWD`, which is set to the workspace.
"""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from scripted_chat import ScriptedChat, tool_results_chat
from test_hooks import NEWEST_FIRST, SOURCE, EDITED, log_entries, new_repo, pending, staged
from test_real_clients import REMINDER, REPO, base_env, hook_bin, run_client, staged_bin

# What the plugin throws when `staged` cannot run; opencode gives the model the message.
CANNOT_RUN = "staged's hook could not run ("
CANNOT_RUN_END = ("), so this tool call is refused and nothing was written. Install staged, or remove its plugin: "
                  "staged hook install opencode --uninstall")
# The tools opencode 1.18.33 offers a model (a GPT model gets apply_patch instead of edit and
# write). The ones that write files are the plugin's; `bash` is not gated. The three
# `*_mcp_resource*` tools are offered because staged's MCP server serves resources (each pending
# preview's diff): they read MCP resources and edit nothing.
RESOURCES = ["list_mcp_resource_templates", "list_mcp_resources", "read_mcp_resource"]
OFFERED = sorted(["bash", "edit", "glob", "grep", "read", "skill", "task", "todowrite", "webfetch", "write", *RESOURCES])
OFFERED_GPT = sorted(["apply_patch", "bash", "glob", "grep", "read", "skill", "task", "todowrite", "webfetch", *RESOURCES])
# A port nothing listens on: npm's registry and every proxy point there.
CLOSED = "http://127.0.0.1:9"


class Watching(ScriptedChat):
    """A scripted model that also notes, at each main request, the workspace's files."""

    def __init__(self, script, root, paths):
        super().__init__(script)
        self.root = root
        self.paths = paths
        self.seen = []

    def _chat(self, body):
        if self._offers_staged(body):
            self.seen.append({p: (self.root / p).read_text() if (self.root / p).exists() else None
                              for p in self.paths})
        return super()._chat(body)


def opencode_bin():
    """opencode, as `scripts/test` installs it from `opencode/`'s lock."""
    path = Path(os.environ.get("STAGED_OPENCODE_BIN",
                               REPO / "target" / "mcp-clients" / "opencode" / "node_modules" / ".bin" / "opencode"))
    if not path.exists():
        pytest.fail(f"opencode is not installed at {path}; run scripts/test, which installs the pinned client")
    return str(path)


def plugin_modules():
    """The `@opencode-ai/plugin` install `scripts/test` made from `opencode-plugin/`'s lock."""
    path = Path(os.environ.get("STAGED_OPENCODE_PLUGIN_MODULES",
                               REPO / "target" / "mcp-clients" / "opencode-plugin" / "node_modules"))
    if not (path / "@opencode-ai" / "plugin" / "package.json").is_file():
        pytest.fail(f"@opencode-ai/plugin is not installed at {path}; run scripts/test, which installs it")
    return path


def installed_by_a_link(tmp):
    """A second name for staged for the installer to name (a hard link, which takes no room on
    disk), that the test then deletes or replaces."""
    link = Path(tmp) / "bin" / "staged"
    link.parent.mkdir()
    for source, name in ((staged_bin(), link), (hook_bin(), link.with_name("staged-hook"))):
        try:
            os.link(source, name)
        except OSError:
            shutil.copy2(source, name)
    return link


def install(root, *args, binary=None):
    proc = subprocess.run([binary or staged_bin(), "--workspace", str(root), "hook", "install", "opencode", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"install failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def run_opencode(tmp, root, model, model_id="scripted"):
    """Runs `opencode run` in `root` with the scripted model as its provider; returns the
    process and the session id opencode printed."""
    home = Path(tmp) / "home"
    # opencode installs the plugin package in each of its config folders: the project's
    # `.opencode/` and the global one.
    for dot in (root / ".opencode", home / ".config" / "opencode"):
        dot.mkdir(parents=True, exist_ok=True)
        here = Path(__file__).resolve().parent / "opencode-plugin"
        for name in ("package.json", "package-lock.json"):
            shutil.copy(here / name, dot / name)
        if not (dot / "node_modules").exists():
            (dot / "node_modules").symlink_to(plugin_modules())
    config_path = root / "opencode.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    # The person's own settings, merged with what the installer wrote.
    config["provider"] = {"scripted": {
        "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
        "options": {"baseURL": f"http://127.0.0.1:{model.port}/v1", "apiKey": "sk-scripted-model"},
        "models": {model_id: {"name": "Scripted"}},
    }}
    config["model"] = f"scripted/{model_id}"
    config["autoupdate"] = False
    config["share"] = "disabled"
    config_path.write_text(json.dumps(config, indent=2))
    env = {
        **base_env(home),
        "PWD": str(root),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "npm_config_registry": f"{CLOSED}/",
        "HTTP_PROXY": CLOSED,
        "HTTPS_PROXY": CLOSED,
        "NO_PROXY": "127.0.0.1,localhost",
    }
    argv = [opencode_bin(), "run", "--format", "json", "--print-logs", "Rename the first oldApi call to newApi."]
    proc = run_client("opencode", argv, env, root)
    assert "background dependency install failed" not in proc.stderr, proc.stderr
    sessions = set(re.findall(r'"sessionID":"(ses_[A-Za-z0-9]+)"', proc.stdout))
    assert len(sessions) == 1, proc.stdout
    return proc, sessions.pop()


def main_requests(model):
    assert not model.errors, model.errors
    requests = model.chat_main_requests()
    assert requests, "opencode never offered the staged MCP tools: the installed opencode.json was not loaded"
    return requests


def expected_deny(entry_id, label):
    return (
        f"staged holds this edit as a preview, and nothing was written yet: {entry_id} ({label}). "
        'To write it, call staged_resolve with action "apply" and a one-line reason (or "discard" to drop it); '
        f"{NEWEST_FIRST}\n\n{REMINDER}"
    )


def remembered(root, session):
    """The previews the hook remembers staging in opencode's `session`: its state is a row of
    the workspace's database (`hook_state`, schema 5), plain text while it is under 1 KB."""
    db = sqlite3.connect(f"file:{root / '.staged' / 'staged.db'}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT state FROM hook_state WHERE client = 'opencode' AND session = ?", (session,)
        ).fetchall()
    finally:
        db.close()
    assert len(rows) == 1, rows
    state = rows[0][0]
    assert isinstance(state, str), f"the state is stored compressed: {state[:8]!r}"
    return json.loads(state)["staged"]


def test_opencode_gate_stages_an_edit_and_resolve_writes_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "edit", {"filePath": path, "oldString": "oldApi(1);", "newString": "newApi(1);"}),
            ("mcp", "resolve", {"action": "apply", "reason": "the first call moves to newApi"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            _, session = run_opencode(tmp, root, model)
        finally:
            model.stop()
        last = main_requests(model)[-1]
        # Every tool opencode offers this model, but staged's: a new one that writes files
        # would need the plugin's list (edit, write, apply_patch) to grow.
        offered = sorted(t["function"]["name"] for t in last["tools"] if not t["function"]["name"].startswith("staged_"))
        assert offered == OFFERED, offered
        results = tool_results_chat(last)
        assert [name for name, _, _ in results] == ["edit", "staged_resolve"], results
        # When the model called resolve, the file was untouched.
        assert model.seen[1]["src/a.ts"] == SOURCE, model.seen
        entries = log_entries(root)
        assert len(entries) == 1, (results, entries)
        entry = entries[0]
        assert results[0][1] == expected_deny(entry["id"], "Edit: src/a.ts (1 replacement)"), results[0]
        assert "Applied Edit: src/a.ts (1 replacement)." in results[1][1], results[1]
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert entry["reason"] == "the first call moves to newApi", entry
        assert entry["frontEnd"] == "hook:opencode", entry
        assert (entry["outcome"], entry["source"]) == ("applied", "edit"), entry
        # The preview was staged in opencode's session, as opencode named it.
        assert remembered(root, session) == [entry["id"]]


def test_opencode_gate_stages_write_and_apply_patch():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        patch = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-oldApi(1);\n+newApi(1);\n*** End Patch"
        script = [
            ("tool", "apply_patch", {"patchText": patch}),
            ("mcp", "resolve", {"action": "apply", "reason": "patched"}),
            ("text", "Done."),
        ]
        # opencode offers a GPT model apply_patch instead of edit and write.
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_opencode(tmp, root, model, model_id="gpt-5")
        finally:
            model.stop()
        last = main_requests(model)[-1]
        offered = sorted(t["function"]["name"] for t in last["tools"] if not t["function"]["name"].startswith("staged_"))
        assert offered == OFFERED_GPT, offered
        results = tool_results_chat(last)
        assert [name for name, _, _ in results] == ["apply_patch", "staged_resolve"], results
        assert model.seen[1]["src/a.ts"] == SOURCE, model.seen
        assert results[0][1].startswith("staged holds this edit as a preview, and nothing was written yet: "), results[0]
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert [(e["frontEnd"], e["reason"]) for e in log_entries(root)] == [("hook:opencode", "patched")]

    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        script = [
            ("tool", "write", {"filePath": str(root / "src" / "new.ts"), "content": "export const a = 1;\n"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/new.ts"]).start()
        try:
            run_opencode(tmp, root, model)
        finally:
            model.stop()
        results = tool_results_chat(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["write"], results
        assert "(Write: src/new.ts (new file, 1 line))" in results[0][1], results[0]
        assert not (root / "src" / "new.ts").exists()
        assert [p["label"] for p in pending(root)] == ["Write: src/new.ts (new file, 1 line)"]


def test_opencode_record_mode_logs_the_edit_and_undo_restores_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "--mode", "record")
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "edit", {"filePath": path, "oldString": "oldApi(1);", "newString": "newApi(1);"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_opencode(tmp, root, model)
        finally:
            model.stop()
        results = tool_results_chat(main_requests(model)[-1])
        assert results == [("edit", "Edit applied successfully.", False)], results
        assert (root / "src" / "a.ts").read_text() == EDITED
        entries = log_entries(root)
        assert len(entries) == 1, entries
        entry = entries[0]
        assert (entry["outcome"], entry["frontEnd"], entry["source"]) == ("applied", "hook:opencode", "edit"), entry
        assert entry["reason"] == "opencode's edit, recorded by staged's hook", entry
        assert "-oldApi(1);\n+newApi(1);\n" in entry["diff"], entry["diff"]
        undo = staged(root, "undo", "--yes")
        assert undo.returncode == 0, undo.stderr
        assert (root / "src" / "a.ts").read_text() == SOURCE


@pytest.mark.parametrize("how", ["missing", "crash"])
def test_opencode_blocks_the_edit_when_the_hooked_staged_cannot_run(how):
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        copy = installed_by_a_link(tmp)
        install(root, binary=copy)
        # The MCP server still runs (the scripted model acts once it is offered); the binary
        # the plugin runs is gone, or crashes.
        config = json.loads((root / "opencode.json").read_text())
        config["mcp"]["staged"]["command"][0] = str(staged_bin())
        (root / "opencode.json").write_text(json.dumps(config))
        # The plugin runs the staged-hook beside the copy.
        hooked = copy.with_name("staged-hook")
        hooked.unlink()
        if how == "crash":
            hooked.write_text("#!/bin/sh\nkill -SEGV $$\n")
            hooked.chmod(0o755)
        path = str(root / "src" / "a.ts")
        script = [
            ("tool", "edit", {"filePath": path, "oldString": "oldApi(1);", "newString": "newApi(1);"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_opencode(tmp, root, model)
        finally:
            model.stop()
        results = tool_results_chat(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["edit"], results
        blocked = results[0][1]
        assert blocked.startswith(CANNOT_RUN) and blocked.endswith(CANNOT_RUN_END), blocked
        why = "ENOENT" if how == "missing" else "it was killed by SIGSEGV"
        assert why in blocked, blocked
        assert (root / "src" / "a.ts").read_text() == SOURCE
        assert not (root / ".staged").exists() or not pending(root)
