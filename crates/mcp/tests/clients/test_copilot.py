"""staged's hooks inside the real, unmodified GitHub Copilot CLI (`@github/copilot`, pinned in
package.json).

Each test installs the hooks the way a user does (`staged hook install copilot`, which writes
`.github/hooks/staged.json` and the MCP server in `.github/mcp.json`), records the folder as
one a person trusted (`trustedFolders` in Copilot's `config.json`; in any other folder Copilot
skips a repository's hooks and MCP servers without a word), then runs `copilot -p` headless
against the scripted model on 127.0.0.1, spoken to as OpenAI Chat Completions
(`COPILOT_PROVIDER_BASE_URL`, `COPILOT_OFFLINE=true`: no GitHub sign-in, telemetry or update
check). The model uses Copilot's own `edit` tool, then `staged-resolve`.

Copilot unpacks its 235 MB package on every run unless `COPILOT_PKG_CACHE_HOME` is shared:
the tests share one under `target/`. A missing client fails the test; it is never skipped.
"""

import json
import subprocess
import tempfile
from pathlib import Path

from scripted_model import CHAT_MODEL, ScriptedTurns, tool_results_chat
from test_hooks import EDITED, NEWEST_FIRST, SOURCE, log_entries, new_repo, pending, staged
from test_real_clients import HANG_SECONDS, REMINDER, REPO, base_env, client_bin, hook_bin, run_client, staged_bin

PKG_CACHE = REPO / "target" / "copilot-pkg-cache"
DENIED = "Denied by preToolUse hook: "


class Watching(ScriptedTurns):
    """A scripted model that also notes, at each main request, the workspace's files."""

    def __init__(self, script, root, paths):
        super().__init__(script)
        self.root = root
        self.paths = paths
        self.seen = []

    def _chat(self, body):
        if any((t.get("function") or {}).get("name", "").startswith("staged-") for t in body.get("tools") or []):
            self.seen.append({p: (self.root / p).read_text() if (self.root / p).exists() else None
                              for p in self.paths})
        return super()._chat(body)


def install(root, *args, binary=None):
    proc = subprocess.run([binary or staged_bin(), "--workspace", str(root), "hook", "install", "copilot", *args],
                          capture_output=True, text=True, timeout=HANG_SECONDS)
    assert proc.returncode == 0, f"install failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def copilot_home(tmp, root):
    """Copilot's home, with `root` trusted as a person's trust prompt records it."""
    home = Path(tmp) / "home"
    config = home / ".copilot"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.json").write_text(json.dumps({"trustedFolders": [str(root)]}))
    return home


def run_copilot(tmp, root, model, prompt="Rename the first oldApi call to newApi.", allow=("--allow-all-tools",)):
    home = copilot_home(tmp, root)
    PKG_CACHE.mkdir(parents=True, exist_ok=True)
    env = {
        **base_env(home),
        "COPILOT_HOME": str(home / ".copilot"),
        "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{model.port}/v1",
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_PROVIDER_API_KEY": "sk-scripted-model",
        "COPILOT_MODEL": CHAT_MODEL,
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
        "COPILOT_PKG_CACHE_HOME": str(PKG_CACHE),
    }
    argv = [client_bin("copilot"), "-p", prompt, *allow, "--no-auto-update", "--disable-client-telemetry"]
    return run_client("copilot", argv, env, root)


def main_requests(model):
    assert not model.errors, model.errors
    requests = model.chat_main_requests()
    assert requests, "Copilot CLI never offered the staged MCP tools: .github/mcp.json was not loaded"
    return requests


def expected_deny(entry_id, label):
    return (
        f"{DENIED}staged holds this edit as a preview, and nothing was written yet: {entry_id} ({label}). "
        'To write it, call staged-resolve with action "apply" and a one-line reason (or "discard" to drop it); '
        f"{NEWEST_FIRST}\n\n{REMINDER}"
    )


def edit_turn(root, old="oldApi(1);", new="newApi(1);"):
    return ("tool", "edit", {"path": str(root / "src" / "a.ts"), "old_str": old, "new_str": new})


def test_copilot_gate_stages_an_edit_and_resolve_writes_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        script = [
            edit_turn(root),
            ("mcp", "resolve", {"action": "apply", "reason": "the first call moves to newApi"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_copilot(tmp, root, model)
        finally:
            model.stop()
        results = tool_results_chat(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["edit", "staged-resolve"], results
        # Before the resolve call the file was untouched.
        assert model.seen[1]["src/a.ts"] == SOURCE, model.seen
        entries = log_entries(root)
        assert len(entries) == 1, (results, entries)
        entry = entries[0]
        assert results[0][1] == expected_deny(entry["id"], "Edit: src/a.ts (1 replacement)"), results[0]
        assert "Applied Edit: src/a.ts (1 replacement)." in results[1][1], results[1]
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert (entry["reason"], entry["frontEnd"]) == ("the first call moves to newApi", "hook:copilot"), entry
        assert (entry["outcome"], entry["source"]) == ("applied", "edit"), entry
        assert pending(root) == []


def test_copilot_agent_stop_holds_the_turn_until_the_preview_is_resolved():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        script = [
            edit_turn(root),
            ("text", "All done."),
            ("mcp", "resolve", {"action": "apply", "reason": "resolved when the stop hook asked"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_copilot(tmp, root, model)
        finally:
            model.stop()
        requests = main_requests(model)
        # The request after "All done." carries the agentStop hook's reason as the user's message.
        fed_back = [r["messages"][-1] for r in requests if r["messages"][-1].get("role") == "user"
                    and "A change staged in this session is still pending: " in str(r["messages"][-1].get("content"))]
        assert len(fed_back) == 1, [r["messages"][-1] for r in requests]
        text = str(fed_back[0]["content"])
        assert "(Edit: src/a.ts (1 replacement))" in text and "call staged-resolve" in text, text
        assert model.seen[2]["src/a.ts"] == SOURCE, "nothing was written before the resolve"
        assert (root / "src" / "a.ts").read_text() == EDITED
        entry = log_entries(root)[0]
        assert (entry["reason"], entry["frontEnd"]) == ("resolved when the stop hook asked", "hook:copilot"), entry
        assert pending(root) == []


def test_copilot_record_mode_lets_the_edit_through_and_undo_restores_it():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root, "--mode", "record")
        new_file = root / "src" / "b.ts"
        script = [
            edit_turn(root),
            ("tool", "create", {"path": str(new_file), "file_text": "export const b = 1;\n"}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_copilot(tmp, root, model)
        finally:
            model.stop()
        results = tool_results_chat(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["edit", "create"], results
        assert not any(text.startswith(DENIED) for _, text, _ in results), results
        assert (root / "src" / "a.ts").read_text() == EDITED
        assert new_file.read_text() == "export const b = 1;\n"
        entries = log_entries(root)
        assert [(e["frontEnd"], e["source"], e["reason"]) for e in entries] == [
            ("hook:copilot", "write", "Copilot CLI's create, recorded by staged's hook"),
            ("hook:copilot", "edit", "Copilot CLI's edit, recorded by staged's hook"),
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
    install(root, binary=str(copy))
    mcp = json.loads((root / ".github" / "mcp.json").read_text())
    assert mcp["mcpServers"]["staged"]["command"] == str(copy), mcp
    mcp["mcpServers"]["staged"]["command"] = staged_bin()
    (root / ".github" / "mcp.json").write_text(json.dumps(mcp))
    hooked.unlink()
    if replacement is not None:
        hooked.write_text(replacement)
        hooked.chmod(0o755)


def check_blocked(tmp, root):
    model = Watching([edit_turn(root), ("text", "Done.")], root, ["src/a.ts"]).start()
    try:
        run_copilot(tmp, root, model)
    finally:
        model.stop()
    results = tool_results_chat(main_requests(model)[-1])
    # The fail-safe exits 2, which Copilot takes as a deny; it shows the model the exit code.
    assert results == [("edit", "Denied by preToolUse hook: hook exited with code 2", False)], results
    assert (root / "src" / "a.ts").read_text() == SOURCE
    assert pending(root) == []


def test_copilot_gate_blocks_the_edit_when_staged_is_missing():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        hook_that_cannot_run(tmp, root, None)
        check_blocked(tmp, root)


def test_copilot_gate_blocks_the_edit_when_staged_crashes():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        hook_that_cannot_run(tmp, root, "#!/bin/sh\nkill -SEGV $$\n")
        check_blocked(tmp, root)


# Copilot CLI 1.0.102's own tools. `edit` and `create` are gated; `bash` (and what it runs) is
# not. A new tool fails this test until it is known whether it edits files.
COPILOT_TOOLS = {
    "bash", "read_bash", "stop_bash", "list_bash", "view", "create", "edit", "fetch_copilot_cli_documentation",
    "skill", "sql", "session_store_sql", "read_agent", "list_agents", "write_agent", "grep", "glob", "task",
}


def test_copilot_gate_refuses_its_own_mcp_config_and_knows_every_tool_copilot_offers():
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        mcp = root / ".github" / "mcp.json"
        before = mcp.read_text()
        script = [
            ("tool", "edit", {"path": str(mcp), "old_str": '"mcp"', "new_str": '"mcp", "--allow-remote"'}),
            ("text", "Done."),
        ]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_copilot(tmp, root, model)
        finally:
            model.stop()
        requests = main_requests(model)
        results = tool_results_chat(requests[-1])
        assert len(results) == 1 and results[0][0] == "edit", results
        assert results[0][1].startswith(
            f"{DENIED}staged refused this edit, and nothing was written: Refusing .github/mcp.json: "), results
        assert mcp.read_text() == before
        assert pending(root) == []
        offered = {(t.get("function") or {}).get("name") for t in requests[0].get("tools") or []}
        assert {name for name in offered if not name.startswith("staged-")} == COPILOT_TOOLS, offered


def test_copilot_asks_the_person_before_staged_resolve_where_its_tools_are_not_allowed():
    """Copilot's events carry no permission mode, so every preview is the model's to apply; but
    `staged-resolve` is a tool call, and where Copilot would ask the person first (headless,
    without --allow-all-tools, it denies), the preview is not written."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        script = [edit_turn(root), ("mcp", "resolve", {"action": "apply", "reason": "r"}), ("text", "Done.")]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_copilot(tmp, root, model, allow=("--allow-tool", "edit"))
        finally:
            model.stop()
        results = tool_results_chat(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["edit", "staged-resolve"], results
        assert results[0][1].startswith(f"{DENIED}staged holds this edit as a preview"), results[0]
        assert results[1][1].startswith("Permission denied because no interactive user response was available."), results[1]
        assert (root / "src" / "a.ts").read_text() == SOURCE
        assert len(pending(root)) == 1


def test_copilot_with_claude_codes_hooks_installed_too_stages_an_edit_once():
    """Copilot reads `.mcp.json` (Claude Code's) as well as `.github/mcp.json`, but not Claude
    Code's hooks: with both installed, an edit is staged once, by staged's Copilot hook."""
    with tempfile.TemporaryDirectory() as tmp:
        root = new_repo(tmp)
        install(root)
        proc = subprocess.run([staged_bin(), "--workspace", str(root), "hook", "install", "claude-code"],
                              capture_output=True, text=True, timeout=HANG_SECONDS)
        assert proc.returncode == 0, proc.stderr
        script = [edit_turn(root), ("mcp", "resolve", {"action": "apply", "reason": "once"}), ("text", "Done.")]
        model = Watching(script, root, ["src/a.ts"]).start()
        try:
            run_copilot(tmp, root, model)
        finally:
            model.stop()
        results = tool_results_chat(main_requests(model)[-1])
        assert [name for name, _, _ in results] == ["edit", "staged-resolve"], results
        assert "Applied Edit: src/a.ts (1 replacement)." in results[1][1], results[1]
        assert [(e["frontEnd"], e["reason"]) for e in log_entries(root)] == [("hook:copilot", "once")]
        assert (root / "src" / "a.ts").read_text() == EDITED
