#!/usr/bin/env python3
"""One hooked Claude Code Bash call per build, old and new interleaved, split per process
(issue 35): the PreToolUse hook, the wrapper (`sh -c` of the rewritten command: `staged
shell-run` and the command), the PostToolUse hook, against one `git status --porcelain`;
medians in ms, and the wrapper's CPU time (user + system, `wait4`).

Usage: python3 bench/shell_ab.py ROOT FILES RUNS   (ROOT a committed git tree; the builds are
../shspeed-base-staged and ../shspeed-new-staged beside this checkout, or $STAGED_BASE and
$STAGED_NEW). The tree keeps the appended lines (restore it with `git checkout .`).
"""
import json, os, subprocess, sys, time, statistics
root, k, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
builds = {"base": os.environ.get("STAGED_BASE", os.path.join(here, "..", "shspeed-base-staged")),
          "new": os.environ.get("STAGED_NEW", os.path.join(here, "..", "shspeed-new-staged"))}
files = sorted(subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout.split())
files = [f for f in files if not f.startswith("big-")]
step = max(1, len(files) // k); t = files[::step][:k]
cmd = "for f in " + " ".join(f"'{p}'" for p in t) + "; do echo bench >> \"$f\"; done"
def timed(argv, inp=None):
    s = time.perf_counter()
    p = subprocess.Popen(argv, cwd=root, stdin=subprocess.PIPE if inp else subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if inp: p.stdin.write(inp); p.stdin.close()
    out = p.stdout.read(); p.stderr.read()
    _, st, ru = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(st) == 0, argv
    return time.perf_counter() - s, ru.ru_utime + ru.ru_stime, out
R = {b: {"pre": [], "wrap": [], "post": [], "wcpu": []} for b in builds}
G = []
for i in range(runs):
    G.append(timed(["git", "status", "--porcelain"])[0])
    for b, S in builds.items():
        ev = json.dumps({"hook_event_name": "PreToolUse", "session_id": f"abw-{b}-{k}", "cwd": root, "permission_mode": "acceptEdits", "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "c"}).encode()
        post = json.dumps({"hook_event_name": "PostToolUse", "session_id": f"abw-{b}-{k}", "cwd": root, "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_response": {}, "tool_use_id": "c"}).encode()
        e, c, o = timed([S, "hook", "claude-code", "--mode", "record"], ev); R[b]["pre"].append(e)
        w = json.loads(o)["hookSpecificOutput"]["updatedInput"]["command"]
        e, c, _ = timed(["sh", "-c", w]); R[b]["wrap"].append(e); R[b]["wcpu"].append(c)
        e, c, _ = timed([S, "hook", "claude-code", "--mode", "record"], post); R[b]["post"].append(e)
m = lambda v: round(statistics.median(v) * 1000, 1)
print(f"files={k} runs={runs} git status p50 {m(G)} ms")
for b in builds:
    r = R[b]; tot = [a + w + p for a, w, p in zip(r["pre"], r["wrap"], r["post"])]
    print(b, {x: m(v) for x, v in r.items()}, "sum p50", m(tot), "ratio", round(statistics.median(tot) / statistics.median(G), 2))
