"""The warm index of the real `staged mcp` (issue 32, findings 9 and 10), through the binary.

A warm server (its index on, with debug logs on stderr that say whether a search was answered
from the index) and a cold one (`STAGED_WARM_INDEX=0`, a walk per search) serve one workspace.
A file of the workspace is written through a hard link outside it, and an ignore file above the
workspace root changes: after each, the warm answer must be the cold one, and must come from
the index (so the test cannot pass by the index being bypassed). `scripts/stress.py`
(`warm-hardlink`, `warm-parent-ignore`) repeats random versions of both 200 times.

The server command comes from `STAGED_MCP_CMD` (default `target/debug/staged mcp`).
"""

import json
import os
import shlex
import subprocess
import tempfile
import threading
from pathlib import Path

STAGED = shlex.split(os.environ.get("STAGED_MCP_CMD", "target/debug/staged mcp"))[0]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "warm-test", "version": "1"}}}


class Server:
    """`staged mcp` over stdio, one call at a time; `warm` turns its index on."""

    def __init__(self, ws: Path, warm: bool):
        env = dict(os.environ, STAGED_WARM_INDEX="1" if warm else "0",
                   RUST_LOG="staged_ast_edit=debug" if warm else "off", NO_COLOR="1")
        self.proc = subprocess.Popen([STAGED, "--workspace", str(ws), "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ws)
        self.lines, self.ready, self.next_id = [], threading.Event(), 2
        threading.Thread(target=self._stderr, daemon=True).start()
        self.request(dict(INITIALIZE))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _stderr(self):
        for line in self.proc.stderr:
            line = line.decode(errors="replace")
            self.lines.append(line)
            if "warm index:" in line and "files indexed" in line:
                self.ready.set()

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, message):
        self.send(message)
        while True:
            line = self.proc.stdout.readline()
            assert line, f"staged mcp exited: {''.join(self.lines[-5:])}"
            reply = json.loads(line)
            if reply.get("id") == message["id"]:
                return reply

    def grep(self, pattern, lang):
        self.next_id += 1
        reply = self.request({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                              "params": {"name": "ast_grep", "arguments": {"pattern": pattern, "paths": ["."], "lang": lang}}})
        return reply["result"]["structuredContent"]["text"]

    def warm_answers(self):
        return sum(1 for line in list(self.lines) if "ast_grep search" in line and "warm=true" in line)

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def warm_and_cold(ws: Path, steps, pattern, lang):
    """After each step the warm answer is the cold one, answered from the index; returns the
    answers."""
    warm, cold = Server(ws, True), Server(ws, False)
    answers = []
    try:
        assert warm.ready.wait(60), "the warm index was never built"
        for step in steps:
            step()
            w, c = warm.grep(pattern, lang), cold.grep(pattern, lang)
            assert w == c, f"after {step.__name__}: warm {w!r} != cold {c!r}"
            answers.append(w)
        # The last search's log line.
        for _ in range(100):
            if warm.warm_answers() == len(steps):
                break
            threading.Event().wait(0.02)
        assert warm.warm_answers() == len(steps), f"{warm.warm_answers()} of {len(steps)} answered from the index"
    finally:
        warm.close()
        cold.close()
    return answers


def test_a_file_written_through_a_hard_link_outside_the_workspace_is_seen():
    with tempfile.TemporaryDirectory() as tmp:
        ws, outside = Path(tmp) / "ws", Path(tmp) / "outside"
        (ws / "src").mkdir(parents=True)
        outside.mkdir()
        (ws / "src" / "a.rs").write_text("fn a() {}\n")
        os.link(ws / "src" / "a.rs", outside / "a.rs")

        def nothing():
            pass

        def write_through_the_link():
            with open(outside / "a.rs", "r+") as f:  # in place: the same inode
                f.truncate(0)
                f.write("fn a() { std::mem::take(&mut x); }\n")

        before, after = warm_and_cold(ws, [nothing, write_through_the_link], "std::mem::take($A)", "rust")
        assert "No matches found" in before, before
        assert "src/a.rs" in after and "std::mem::take(&mut x)" in after, after


def test_an_ignore_file_above_the_workspace_is_read_again():
    with tempfile.TemporaryDirectory() as tmp:
        # The workspace is a folder of a git repository whose `.gitignore` is above it.
        parent = Path(tmp) / "parent"
        ws = parent / "ws"
        (ws / "src").mkdir(parents=True)
        (parent / ".git").mkdir()
        (ws / "src" / "a.js").write_text("baseFlatten(x, 1);\n")

        def nothing():
            pass

        def ignore_src_above_the_root():
            (parent / ".gitignore").write_text("ws/src/\n")

        def ignore_nothing():
            (parent / ".gitignore").write_text("")

        seen, ignored, again = warm_and_cold(
            ws, [nothing, ignore_src_above_the_root, ignore_nothing], "baseFlatten($$$A)", "javascript")
        assert "src/a.js" in seen, seen
        assert "No matches found" in ignored, ignored
        assert "src/a.js" in again, again
