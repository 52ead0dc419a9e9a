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
import subprocess
import tempfile
from pathlib import Path

from scripted_model import CHAT_MODEL, ScriptedTurns, tool_results_chat
from test_hooks import EDITED, NEWEST_FIRST, SOURCE, log_entries, new_repo, pending, staged
from test_real_clients import HANG_SECONDS, REMINDER, base_env, client_bin, run_client, staged_bin

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
    run_client("cline", auth, env, root)
    return run_client("cline", [client_bin("cline"), "--json", prompt], env, root)


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
