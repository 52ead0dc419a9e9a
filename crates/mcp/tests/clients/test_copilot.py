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
from test_real_clients import HANG_SECONDS, REMINDER, REPO, base_env, client_bin, run_client, staged_bin

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


def run_copilot(tmp, root, model, prompt="Rename the first oldApi call to newApi."):
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
    argv = [client_bin("copilot"), "-p", prompt, "--allow-all-tools", "--no-auto-update",
            "--disable-client-telemetry"]
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
