#!/usr/bin/env python3
"""What a staged hook adds to every edit of a client: the wall time of one hook
call, as the client makes it (a new process, the event on stdin, the reply on stdout), in
interleaved rounds against a no-op shell hook that reads the same event.

Each round runs, in turn:
  noop     sh -c 'cat >/dev/null'                      the cheapest hook a client can run
  pass     staged hook claude-code, a Read event       start-up and parsing only: not an edit
  gate     staged hook claude-code, a PreToolUse Edit  stages the edit as a preview, denies
  record   staged hook claude-code --mode record,      records an applied edit in the log
           a PostToolUse Edit                          (diff, hashes, undo data); its PreToolUse,
                                                       which snapshots the file, runs untimed before
  codex    staged hook codex, a PreToolUse apply_patch stages the patch, denies
  qwen     staged hook qwen-code, a PreToolUse edit    stages the edit, denies (Claude Code's format)
  gemini   staged hook gemini-cli, a BeforeTool        stages the edit, denies (its approval mode read
           replace                                     from its settings.json)
  opencode staged hook opencode, an edit's            stages the edit, denies (the plugin
           tool.execute.before                         runs this command)
  cursor   staged hook cursor, a preToolUse StrReplace stages the edit, denies
  copilot  staged hook copilot, a preToolUse edit      stages the edit, denies (Copilot's shape)
  cline    staged hook cline, a PreToolUse editor      stages the edit, skips (what staged's Cline
           call, as staged's plugin sends it           plugin runs for each editor call)

The workspace has a git root and a 200-line file. As in a client's session, staged's MCP server
(`staged mcp`, which every client staged installs its hooks into starts with the session, and
which keeps the workspace's database open) runs in the workspace while the hooks are timed, and
each gate's preview is resolved (discarded, untimed) right after the call that staged it, as the
model resolves it before its next edit: every gate call stages against the same state, whatever
its place in the round. `--no-mcp` times the hooks with no other process holding the database
(a client without staged's MCP server, or before it started: each hook call then rebuilds the
WAL's index from the WAL). Prints p50 and p95 of each, and
the ratio of each p50 to noop's; and the p50 of each call's CPU time (user + system of the
hook and of the processes it reaped, its forked worker), with its ratio to noop's: on a
loaded machine the wall times are mostly run-queue and fsync waits, the CPU time much less so.

Usage: bench/hooks.py [ROUNDS] [--no-mcp]   (default 200 rounds)
Env:   STAGED (default target/release/staged; build it with cargo build --release -p staged-cli)
       STAGED_HOOK, the binary the hooks run (default: `staged-hook` beside STAGED when it is
       there, as `staged hook install` writes it into the clients' hooks; else STAGED)
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(argv, stdin, cwd):
    """The wall time of one call, and its CPU time: user + system of the process and of every
    process it reaped (a gate's forked worker), from the rusage of the reaped children."""
    cpu_before = children_cpu()
    started = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    wall = time.perf_counter() - started
    return wall, children_cpu() - cpu_before, proc


def pct(values, p):
    values = sorted(values)
    k = (len(values) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def main():
    args = [a for a in sys.argv[1:] if a != "--no-mcp"]
    with_mcp = "--no-mcp" not in sys.argv[1:]
    rounds = int(args[0]) if args else 200
    staged = os.environ.get("STAGED", str(ROOT / "target" / "release" / "staged"))
    if not Path(staged).is_file():
        sys.exit(f"{staged} is missing: cargo build --release -p staged-cli, or set STAGED")
    beside = Path(staged).with_name("staged-hook")
    hook = os.environ.get("STAGED_HOOK", str(beside) if os.access(beside, os.X_OK) else staged)
    print(f"hooks run {hook}; staged mcp {'runs' if with_mcp else 'does not run'} beside them",
          file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp).resolve()
        (ws / ".git").mkdir()
        (ws / "src").mkdir()
        lines = [f"export const v{i} = compute({i});" for i in range(200)]
        source = "\n".join(lines) + "\n"
        target = ws / "src" / "a.ts"
        target.write_text(source)
        edited = source.replace("compute(100);", "compute(101);")
        base = {"session_id": "bench", "cwd": str(ws), "transcript_path": "/dev/null", "permission_mode": "default"}

        def event(**fields):
            return json.dumps({**base, **fields}).encode()

        edit_input = {"file_path": str(target), "old_string": "compute(100);", "new_string": "compute(101);",
                      "replace_all": False}
        cases = {
            "noop": (["sh", "-c", "cat >/dev/null"], event(hook_event_name="PreToolUse", tool_name="Edit",
                                                          tool_input=edit_input, tool_use_id="t")),
            "pass": ([hook, "hook", "claude-code"], event(hook_event_name="PreToolUse", tool_name="Read",
                                                           tool_input={"file_path": str(target)}, tool_use_id="t")),
            "gate": ([hook, "hook", "claude-code"], event(hook_event_name="PreToolUse", tool_name="Edit",
                                                           tool_input=edit_input, tool_use_id="t")),
            "record": ([hook, "hook", "claude-code", "--mode", "record"], None),
            "codex": ([hook, "hook", "codex"], event(
                hook_event_name="PreToolUse", tool_name="apply_patch", tool_use_id="c",
                tool_input={"command": "*** Begin Patch\n*** Update File: src/b.ts\n@@\n-export const v100 = compute(100);\n"
                                       "+export const v100 = compute(101);\n*** End Patch\n"})),
            "qwen": ([hook, "hook", "qwen-code"], event(
                hook_event_name="PreToolUse", tool_name="edit", tool_use_id="q", permission_mode="auto-edit",
                tool_input={**edit_input, "file_path": str(ws / "src" / "c.ts")})),
            "gemini": ([hook, "hook", "gemini-cli"], json.dumps({
                "session_id": "bench", "cwd": str(ws), "transcript_path": "/dev/null", "hook_event_name": "BeforeTool",
                "tool_name": "replace", "tool_input": {**edit_input, "file_path": "src/d.ts", "instruction": "bench"},
            }).encode()),
            "opencode": ([hook, "hook", "opencode"], json.dumps({
                "hook": "tool.execute.before", "tool": "edit", "sessionID": "ses_bench", "callID": "call_bench",
                "directory": str(ws), "args": {"filePath": str(ws / "src" / "e.ts"), "oldString": "compute(100);",
                                               "newString": "compute(101);"}}).encode()),
            "cursor": ([hook, "hook", "cursor"], json.dumps({
                "conversation_id": "bench", "generation_id": "g", "hook_event_name": "preToolUse",
                "cursor_version": "2.0.77", "workspace_roots": [str(ws)], "cwd": str(ws), "tool_name": "StrReplace",
                "tool_use_id": "t", "tool_input": {"file_path": str(ws / "src" / "f.ts"), "old_string": "compute(100);",
                                                  "new_string": "compute(101);"}}).encode()),
        }
        for name in ("b.ts", "c.ts", "d.ts", "e.ts", "f.ts", "g.ts", "h.ts"):
            (ws / "src" / name).write_text(source)
        # Gemini CLI's home, whose settings say its approval mode.
        gemini_home = Path(tmp) / "gemini-home"
        (gemini_home / ".gemini").mkdir(parents=True)
        (gemini_home / ".gemini" / "settings.json").write_text('{"general": {"defaultApprovalMode": "auto_edit"}}')
        os.environ["GEMINI_CLI_HOME"] = str(gemini_home)
        cases["copilot"] = ([hook, "hook", "copilot"], json.dumps({
            "sessionId": "bench", "timestamp": 1, "cwd": str(ws), "toolName": "edit",
            "toolArgs": {"path": str(ws / "src" / "g.ts"), "old_str": "compute(100);", "new_str": "compute(101);"},
        }).encode())
        cases["cline"] = ([hook, "hook", "cline"], event(
            hook_event_name="PreToolUse", tool_name="editor", tool_use_id="call_0",
            tool_input={"path": str(ws / "src" / "h.ts"), "old_text": "compute(100);", "new_text": "compute(101);"}))
        denies = {name: b'"deny"' for name in ("gate", "codex", "qwen", "gemini", "opencode", "cursor", "copilot")}
        denies["cline"] = b'"skip":true'
        samples = {name: [] for name in cases}
        cpu_samples = {name: [] for name in cases}
        # The MCP server, idle on its stdin as between a client's tool calls; its CPU is not
        # counted (it is not a child of the hook calls).
        mcp = None
        if with_mcp:
            mcp = subprocess.Popen([staged, "mcp"], cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while not (ws / ".staged" / "staged.db-shm").exists():
                if time.monotonic() > deadline or mcp.poll() is not None:
                    sys.exit("staged mcp did not open the workspace's store")
                time.sleep(0.01)
        for i in range(rounds + 2):
            for name, (argv, stdin) in cases.items():
                if name == "record":
                    # Record mode's PreToolUse (untimed) snapshots the file; Claude Code writes
                    # the edit; the timed PostToolUse records it in the log.
                    pre = subprocess.run(argv, input=event(hook_event_name="PreToolUse", tool_name="Edit",
                                                           tool_input=edit_input, tool_use_id=f"t{i}"),
                                         cwd=ws, capture_output=True)
                    if pre.returncode != 0:
                        sys.exit(f"record's PreToolUse exited {pre.returncode}: {pre.stderr.decode()}")
                    target.write_text(edited)
                    stdin = event(hook_event_name="PostToolUse", tool_name="Edit", tool_input=edit_input,
                                  tool_use_id=f"t{i}", tool_response={"filePath": str(target), "originalFile": source})
                wall, cpu, proc = run_once(argv, stdin, ws)
                if name == "record":
                    target.write_text(source)
                if proc.returncode != 0:
                    sys.exit(f"{name} exited {proc.returncode}: {proc.stderr.decode()}")
                if name == "record" and b"not recorded" in proc.stderr:
                    sys.exit(f"record did not record the edit: {proc.stderr.decode()}")
                if name in denies and denies[name] not in proc.stdout:
                    sys.exit(f"{name} did not deny: {proc.stdout.decode()} {proc.stderr.decode()}")
                if i >= 2:  # two warm-up rounds
                    samples[name].append(wall)
                    cpu_samples[name].append(cpu)
                if name in denies:  # its preview, resolved before the next edit
                    subprocess.run([staged, "--workspace", str(ws), "resolve", "discard", "--reason", "bench"],
                                   capture_output=True, check=True)
        if mcp is not None:
            mcp.stdin.close()
            mcp.wait(timeout=10)
        noop = statistics.median(samples["noop"])
        noop_cpu = statistics.median(cpu_samples["noop"])
        out = {}
        for name, values in samples.items():
            p50 = statistics.median(values)
            cpu = statistics.median(cpu_samples[name])
            out[name] = {"p50_ms": round(p50 * 1000, 2), "p95_ms": round(pct(values, 0.95) * 1000, 2),
                         "p50_over_noop": round(p50 / noop, 1), "cpu_p50_ms": round(cpu * 1000, 2),
                         "cpu_over_noop": round(cpu / noop_cpu, 1) if noop_cpu else None, "runs": len(values)}
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
