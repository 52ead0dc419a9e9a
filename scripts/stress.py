#!/usr/bin/env python3
"""Stress the promises that only concurrency and attack can break (not run in CI).

Usage: python3 scripts/stress.py [--runs N] [--staged PATH] [--only readers,swap,kill,undo-race,undo-kill,partial-kill,http,first-open,patch-kill,patch-swap,hook-race,only-race,plugin-timeout,stderr-flood,long-answer,warm-hardlink,warm-parent-ignore,hook-ulimit,line-edits,nofile,kinds-kill,session-race,revert-kill,shell-gate-kill,shell-record-kill,shell-outlive-kill]

Twenty-six experiments, each repeated N times (default 200) against the real `staged` binary
(default: target/release/staged), each on a fresh workspace:

* readers: a 100-file preview is applied while 12 threads run `staged pending` in a loop. Every
  apply must exit 0 with all 100 files new and the stack empty; no reader may report a rollback.
* swap: a thread swaps `src/sub` with a symlink to `outside/sub` (renameat2 RENAME_EXCHANGE), which
  holds byte-identical files, in a tight loop during `staged resolve apply`. Nothing outside may
  change, no temp file may be left, and the files inside are all old (exit 1, with a reason) or
  all new (exit 0).
* kill: `staged resolve apply` gets SIGKILL at a random moment. The next command recovers; files
  are all old or all new, and the preview is pending exactly when they are old.
* undo-race: after the apply, two `staged undo` processes start at once. Exactly one reverts
  (exit 0, all files old again, one `undone` log entry); the other writes nothing (exit 1).
* undo-kill: `staged undo` gets SIGKILL as in kill (a random moment, just after its commit
  point, or just after its journal is deleted). After recovery the files are all new
  with the apply not reverted in the log, or all old with exactly one `undone` entry.
* partial-kill: `staged resolve apply --only` (half the files) gets SIGKILL as in kill.
  After recovery either nothing was written and the whole preview is pending, or exactly the
  named files are new and the remainder (the other half) is the only pending preview.
* http: `staged mcp --http` on loopback with a token gets 11 attacks (no token, a wrong or
  partial token, the token as Basic, tool calls that would stage and apply without it, foreign,
  `null` and look-alike Origins, foreign Hosts): each must get 401 or 403, the file must not
  change and nothing may be staged; a request with the token must get 200.
* first-open: in a workspace that has no state yet, 4 `staged ast-edit` (each on its own file)
  and 4 `staged pending` start at once, so all 8 create or open the new database together.
  Every one must exit 0, and the 4 previews must all be pending.
* patch-kill: `staged resolve apply` of a mixed patch (120 files: 40 updated, 30 added in new
  folders, 30 deleted, 20 moved into new folders) gets SIGKILL as in kill. After recovery the
  tree is byte for byte (and mode for mode) the old one, with the preview pending and no folder
  the apply created left, or the new one, with nothing pending and one `applied` log entry.
* kinds-kill: `staged resolve apply` of a patch in which paths change kind (issue 33, finding
  10: 20 files deleted with files created below their paths, 20 folders of two files each
  emptied with a file created at their paths, 10 executables moved to `<name>/<name>`, and 10
  plain new files in a new folder) gets SIGKILL as in kill; after recovery the tree is the old
  one or the new one, byte for byte, mode for mode and folder for folder, with the stack and
  the log agreeing. When it is the new one, `staged undo` gets SIGKILL as in kill, and after
  recovery the tree is again wholly new (not undone) or wholly old (undone once in the log).
* session-race: two agent sessions in gate mode in one workspace, each a client process of its
  own that runs its hooks and its own `staged mcp` (issue 34): each stages an edit of its own
  file and resolves, in a random interleaving with both clients running at once, sometimes
  resolving again with nothing of its own left. Each file must be applied once, with its own
  session's reason: 0 cross-applies.
* revert-kill: a record-mode session rewrote 12 files (Claude Code's Write through the hooks)
  and, by a shell command, made `made/deep/` and removed the empty `gone/sub/` and `gone/`;
  `staged session revert S1` gets SIGKILL as in kill. After recovery every file and folder is
  the session's or every one is reverted, the log holds the revert exactly when they are
  reverted, `staged session show` agrees (12 files and 4 folders, or none), and the session's
  next hook event tells its model of the revert exactly when it happened, once.
* shell-gate-kill: `staged shell-run` in gate mode (a command that appends to 20 files, deletes
  10 and makes 10, deletes a folder of 5 files and an empty folder, makes a folder with a file
  in a new folder and an empty folder; the tree's folders are compared too) gets SIGKILL at a random moment of its run (issue 35); then the session's
  next hook calls finish the run. The tree is all old (gate mode never writes it), with one
  pending preview of exactly the command's changes (none when the kill came before the command
  ran), which applies all new.
* shell-record-kill: the same in record mode: afterwards the tree is all new with one `shell`
  log entry, or all old with none.
* shell-outlive-kill: a command leaves a process running (issue 35): its wrapper records or
  stages what the command wrote (now.txt), then the process appends to 20 files and makes one;
  the session's next hook call, which harvests that write, gets SIGKILL (its process group) at
  a random moment of it, in record and gate mode in turn. After the kill the 20 files are all
  old or all new (gate mode: all old), with one `Shell (background)` entry or preview exactly
  when they are new (gate mode: at most one preview); once the process ended, the session's
  next hook calls leave exactly one (gate mode: two previews, which apply all new), no run
  folder and no copy's temp file.
* patch-swap: the same patch is applied while `src/sub` (which holds files it updates, deletes
  and moves, and the folder it creates files in) is swapped with a symlink to an outside twin
  in a tight loop. Nothing outside may change, no temp file may be left, and the tree inside is
  all old (exit 1 or 2, with a reason) or all new (exit 0).
* hook-race: 8 `staged hook claude-code` processes of one session start at once, two Edits of
  each of 4 files (a client runs the hooks of parallel tool calls together). Every one must
  deny (a hook that answers nothing lets the edit through); exactly one preview per file may be
  pending, the other four denies must be refusals, no file may change, and the session's Stop
  must then block naming exactly the 4 previews, and the 4 refused edits as the session's.
* only-race: `staged resolve apply --only 'x*'` starts a random moment (up to 12 ms) after
  another process began staging a patch that adds x.txt and y.txt. The apply must refuse (nothing was
  pending when it looked) or write x.txt alone with y.txt left pending: y.txt written means a
  partial apply applied a preview it never picked from, whole.
* plugin-timeout: a plugin declared as `["sh", "-c", "python3 hostile.py; exit $?"]` (so python is
  the wrapper's child, as under npx or `uv run`) stages a preview whose apply sleeps 0.8 to 1.2
  times the 1000 ms timeout and then writes late.txt. `staged resolve apply` either answers (exit
  0, late.txt written) or fails saying the callback may have run (exit 1); then no process of the
  plugin may be left, and late.txt must not appear or change after staged reported.
* stderr-flood: `staged mcp` runs a plugin that draws a tqdm-like progress bar on stderr with `\r`
  and never `\n`, as fast as it can; after 5 s staged's peak RSS (VmHWM) must stay under 50 MiB (an
  idle `staged mcp` keeps 10 to 20).
* long-answer: a plugin's apply answers 17 MiB (timeout 30 s): `staged resolve apply` must fail
  at once (under 10 s) saying the message is longer than 16 MiB and that the callback may have
  run, with the preview still pending.
* warm-hardlink: a `staged mcp` with its warm index and one without (`STAGED_WARM_INDEX=0`)
  serve one tree whose files are hard-linked from outside it (before the servers start) and
  get new names inside it (in watched folders, some under names the walk ignores) while they
  run. Six times, a file is written in place through another name (which no watch of the
  index sees; half of the texts have the same length) or linked again, and `ast_grep` is
  asked at once (in some runs once after 3.1 s, when the change time no longer looks
  recent): the warm answer must be the cold one, and must come from the index.
* warm-parent-ignore: the same two servers, on a workspace two folders down; eight times, the
  ignore files the walk reads above the root (the parent's `.gitignore`, the grandparent's
  `.ignore`, the parent's `.git/info/exclude`, or a worktree's common `info/exclude` through a
  `.git` file) are written, removed or swapped, and `ast_grep` is asked at once: the warm
  answer must be the cold one, and must come from the index.

* hook-ulimit: the gate hook command `staged hook install claude-code` writes (the shell
  fail-safe included) runs under `ulimit -v` of a random size between 16 MiB and 3 GiB (too
  small for the binary to start, for its worker to read the event, or for the work) with one of
  three events: an ordinary Edit, a 1.2 KB Edit whose preview needs gigabytes (900,000
  replacements of `a` by 1,000 bytes), or a 50 MB Write. Every run must deny: a deny reply, or
  exit 2 with a reason on stderr (both clients' block); never exit 0 without a reply, or any other
  exit; and no file may change.
* line-edits: the property test of crates/edit/tests/line_edits.rs (the edits `write` and a
  multi-replacement `edit` stage, and their diff read back as a patch, must replay to exactly the
  asked text, and change as few lines as a second, independent diff) with a million cases in all, split over the runs (5,000 a run
  with the default 200 runs, each with its own random seed). Its test binary (the debug
  profile) is built once, with cargo, before the first run.
* nofile: under `ulimit -n 256` (soft and hard, so staged cannot raise it), a 5,000-file
  `staged ast-edit` (2,500 files in one folder, 2,500 each in a folder of its own) is applied
  and undone. Every command must exit 0, all 5,000 files new after the apply and old after the
  undo, with no temp file or journal left.

It prints one table row per experiment: runs, outcomes by kind, and failures (which must be 0).
"""

import argparse
import ctypes
import http.client
import json
import os
import random
import secrets
import shutil
import socket
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

RENAME_EXCHANGE = 2
SYS_RENAMEAT2 = 316  # x86_64
AT_FDCWD = -100
N_FILES = 100

libc = ctypes.CDLL(None, use_errno=True)


def rename_exchange(a: Path, b: Path) -> None:
    libc.syscall(SYS_RENAMEAT2, AT_FDCWD, bytes(a), AT_FDCWD, bytes(b), RENAME_EXCHANGE)


def run(staged, ws, *args, check=False):
    out = subprocess.run([staged, "--workspace", str(ws), *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise RuntimeError(f"{args}: exit {out.returncode}: {out.stderr}")
    return out


def old(i):
    return f"legacyWrap({i}, 0);\n"


def new(i):
    return f"modernWrap(0, {i});\n"


def stage(staged, ws):
    run(staged, ws, "ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "src", check=True)


def fresh_workspace(root: Path, n_files: int):
    """A workspace of `n_files` old files in src/ and no state yet; returns (ws, [(i, path)])."""
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    files = [(i, ws / "src" / f"f{i:03}.ts") for i in range(n_files)]
    for i, p in files:
        p.write_text(old(i))
    return ws, files


def staged_workspace(staged, root: Path):
    """A fresh workspace of 100 files with one preview staged over all of them; returns
    (ws, [(i, path)])."""
    ws, files = fresh_workspace(root, N_FILES)
    stage(staged, ws)
    return ws, files


def pending_ids(staged, ws):
    out = run(staged, ws, "--json", "pending", check=True)
    return [e["id"] for e in json.loads(out.stdout)["pending"]]


def stray_temps(*dirs):
    res = []
    for base in dirs:
        for dirpath, _, names in os.walk(base):
            res += [os.path.join(dirpath, n) for n in names if ".staged-" in n and n.endswith(".tmp")]
    return res


def states(paths):
    res = Counter()
    for i, p in paths:
        text = p.read_text()
        res["new" if text == new(i) else "old" if text == old(i) else "torn"] += 1
    return res


def readers_once(staged, root: Path):
    ws, files = staged_workspace(staged, root)
    stop = threading.Event()
    reader_problems = []

    def reader():
        while not stop.is_set():
            out = run(staged, ws, "pending")
            if out.returncode != 0 or "rolled back" in out.stderr or "recovered" in out.stderr:
                reader_problems.append((out.returncode, out.stderr.strip()))

    threads = [threading.Thread(target=reader) for _ in range(12)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    applied = run(staged, ws, "resolve", "apply", "--reason", "stress")
    stop.set()
    for t in threads:
        t.join()
    seen = states(files)
    left = pending_ids(staged, ws)
    problems = []
    if seen["new"] != N_FILES:
        problems.append(f"files: {dict(seen)}")
    if applied.returncode != 0:
        problems.append(f"apply exit {applied.returncode}: {applied.stdout.strip()[:200]}")
    if left:
        problems.append(f"still pending: {left}")
    if reader_problems:
        problems.append(f"readers: {reader_problems[:3]}")
    if stray_temps(ws):
        problems.append("temp files left")
    kind = "applied, all new" if not problems else "FAILED"
    return kind, problems


def swap_once(staged, root: Path):
    ws, outside = root / "ws", root / "outside"
    (ws / "src" / "sub").mkdir(parents=True)
    (outside / "sub").mkdir(parents=True)
    inside = [(i, ws / "src" / f"top{i}.ts") for i in range(5)]
    for i, p in inside:
        p.write_text(old(i))
    for i in range(10):
        (ws / "src" / "sub" / f"f{i}.ts").write_text(old(100 + i))
        (outside / "sub" / f"f{i}.ts").write_text(old(100 + i))
    os.symlink(outside / "sub", ws / "src" / "link")
    stage(staged, ws)
    before_outside = {p: p.read_bytes() for p in (outside / "sub").iterdir()}
    stop = threading.Event()
    a, b = bytes(ws / "src" / "sub"), bytes(ws / "src" / "link")

    def swapper():
        while not stop.is_set():
            libc.syscall(SYS_RENAMEAT2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)

    t = threading.Thread(target=swapper)
    t.start()
    applied = run(staged, ws, "resolve", "apply", "--reason", "stress")
    stop.set()
    t.join()
    # Wherever the real folder ended up, it is the one inside.
    real = ws / "src" / "sub"
    if real.is_symlink():
        real = ws / "src" / "link"
    problems = []
    after_outside = {p: p.read_bytes() for p in (outside / "sub").iterdir()}
    if after_outside != before_outside:
        problems.append("a file outside changed")
    if stray_temps(ws, outside):
        problems.append(f"temp files left: {stray_temps(ws, outside)[:3]}")
    seen = states(inside + [(100 + i, real / f"f{i}.ts") for i in range(10)])
    if seen["torn"] or (seen["new"] and seen["old"]):
        problems.append(f"mixed files: {dict(seen)}")
    if seen["new"] == 15 and applied.returncode != 0:
        problems.append(f"all new but exit {applied.returncode}")
    if seen["old"] == 15 and (applied.returncode == 0 or not applied.stdout.strip()):
        problems.append(f"nothing written but exit {applied.returncode} without a reason")
    if problems:
        return "FAILED", problems
    return ("applied, all new" if seen["new"] == 15 else "refused, nothing written"), []


def apply_seconds(staged):
    """How long an unkilled apply of the kill experiment takes here (median of 3)."""
    times = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            (ws / "src").mkdir(parents=True)
            for i in range(N_FILES):
                (ws / "src" / f"f{i:03}.ts").write_text(old(i))
            stage(staged, ws)
            started = time.time()
            run(staged, ws, "resolve", "apply", "--reason", "calibrate", check=True)
            times.append(time.time() - started)
    return sorted(times)[1]


def kill_once(staged, root: Path, rng: random.Random, window: float, n_run: int):
    ws, files = staged_workspace(staged, root)
    preview = pending_ids(staged, ws)
    child = subprocess.Popen(
        [staged, "--workspace", str(ws), "resolve", "apply", "--reason", "stress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    kill_in_turn(child, ws, rng, window, n_run)
    left = pending_ids(staged, ws)  # recovers first
    seen = states(files)
    problems = []
    if seen["torn"] or (seen["new"] and seen["old"]):
        problems.append(f"mixed files: {dict(seen)}")
    if seen["new"] == N_FILES and left:
        problems.append(f"all new but still pending: {left}")
    if seen["old"] == N_FILES and left != preview:
        problems.append(f"all old but the stack is {left}, not {preview}")
    return kill_verdict(ws, child, problems, "killed after the commit point, all new", "killed before it, all old",
                        committed=bool(seen["new"]))


def applied_workspace(staged, root: Path):
    """A workspace whose 100-file preview was applied; returns (ws, files)."""
    ws, files = staged_workspace(staged, root)
    run(staged, ws, "resolve", "apply", "--reason", "stress", check=True)
    return ws, files


def log_entries(staged, ws):
    out = run(staged, ws, "--json", "log", "-n", "100", check=True)
    return json.loads(out.stdout)["entries"]


def journal_left(ws):
    journal = ws / ".staged" / "journal"
    # The two lock files are never deleted; anything else is a journal or temp left behind.
    return [n for n in os.listdir(journal) if n not in ("commit.lock", "write.lock")] if journal.exists() else []


def leftovers(ws):
    """Temp files or journal entries a finished, failed or recovered command left behind."""
    temps, journal = stray_temps(ws), journal_left(ws)
    return [f"left behind: temps {temps}, journal {journal}"] if temps or journal else []


def kill_verdict(ws, child, problems, after: str, before: str, committed: bool):
    """The outcome of one killed command: FAILED with its problems (and leftovers), else whether
    it finished before the kill or was killed after (`after`) or before (`before`) its commit
    point."""
    problems = problems + leftovers(ws)
    if problems:
        return "FAILED", problems
    if child.returncode == 0:
        return "finished before the kill", []
    return (after if committed else before), []


def undo_race_once(staged, root: Path):
    ws, files = applied_workspace(staged, root)
    argv = [staged, "--workspace", str(ws), "undo", "--reason", "race"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    codes = sorted(p.wait() for p in procs)
    seen = states(files)
    entries = log_entries(staged, ws)
    undone = [e for e in entries if e["outcome"] == "undone"]
    problems = []
    if codes != [0, 1]:
        problems.append(f"exit codes {codes}")
    if seen["old"] != N_FILES:
        problems.append(f"files: {dict(seen)}")
    if len(undone) != 1:
        problems.append(f"{len(undone)} undone entries")
    problems += leftovers(ws)
    return ("one undo, one refusal" if not problems else "FAILED"), problems


def kill_in_turn(child, ws: Path, rng: random.Random, window: float, n_run: int):
    """SIGKILLs `child` (a staged command that commits through the journal). A third of the
    kills land anywhere in the command's life (`window` is how long it takes unkilled); a third
    just after its commit point; a third just after its journal is deleted (section 6 of the
    hardening issue)."""
    strategy = n_run % 3
    journal = ws / ".staged" / "journal"

    def journal_files():
        try:
            return [n for n in os.listdir(journal) if n.endswith(".json")]
        except FileNotFoundError:
            return []

    if strategy == 0:
        time.sleep(rng.uniform(0.0, window * 1.1))
    elif strategy == 1:
        while child.poll() is None:
            names = journal_files()
            try:
                text = (journal / names[0]).read_text(errors="replace") if names else ""
            except FileNotFoundError:
                text = ""
            if '"committed"' in text:
                time.sleep(rng.uniform(0.0, 0.02))
                break
    else:
        seen = False
        while child.poll() is None:
            names = journal_files()
            if names:
                seen = True
            elif seen:
                break
    child.send_signal(signal.SIGKILL)
    child.wait()


def undo_kill_once(staged, root: Path, rng: random.Random, window: float, n_run: int):
    ws, files = applied_workspace(staged, root)
    child = subprocess.Popen([staged, "--workspace", str(ws), "undo", "--reason", "stress"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_in_turn(child, ws, rng, window, n_run)
    entries = log_entries(staged, ws)  # recovers first
    seen = states(files)
    undone = [e for e in entries if e["outcome"] == "undone"]
    applied = [e for e in entries if e["outcome"] == "applied"]
    problems = []
    if seen["torn"] or (seen["new"] and seen["old"]):
        problems.append(f"mixed files: {dict(seen)}")
    elif seen["new"] == N_FILES and (undone or applied[0].get("revertedBy") is not None):
        problems.append(f"all new but the log says undone: {[e['outcome'] for e in entries]}")
    elif seen["old"] == N_FILES and (len(undone) != 1 or applied[0].get("revertedBy") != undone[0]["entry"]):
        problems.append(f"all old but the log is {[(e['outcome'], e.get('revertedBy')) for e in entries]}")
    return kill_verdict(ws, child, problems, "killed after the commit point, all old", "killed before it, all new",
                        committed=bool(seen["old"]))


def partial_kill_once(staged, root: Path, rng: random.Random, window: float, n_run: int):
    ws, files = staged_workspace(staged, root)
    preview = pending_ids(staged, ws)
    chosen = [(i, p) for i, p in files if i % 2 == 0]
    rest = [(i, p) for i, p in files if i % 2 == 1]
    only = [f"src/{p.name}" for _, p in chosen]
    child = subprocess.Popen([staged, "--workspace", str(ws), "resolve", "apply", "--reason", "stress", "--only", *only],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_in_turn(child, ws, rng, window, n_run)
    out = run(staged, ws, "--json", "pending", check=True)  # recovers first
    left = json.loads(out.stdout)["pending"]
    a, b = states(chosen), states(rest)
    half = N_FILES // 2
    problems = []
    if a["torn"] or b["torn"] or b["new"]:
        problems.append(f"files: chosen {dict(a)}, rest {dict(b)}")
    elif a["old"] == half:
        if [e["id"] for e in left] != preview:
            problems.append(f"nothing written but the stack is {left}")
    elif a["new"] == half:
        label = f"AST Edit: {half} replacements in {half} files"
        if len(left) != 1 or left[0]["id"] in preview or left[0]["label"] != label:
            problems.append(f"the chosen files are new but the stack is {left}")
    else:
        problems.append(f"mixed chosen files: {dict(a)}")
    return kill_verdict(ws, child, problems, "killed after the commit point, half new, rest pending",
                        "killed before it, all old", committed=bool(a["new"]))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(port, body, headers, host=None):
    """POSTs `body` to /mcp with exactly `headers` (and `host` as the Host header); returns the
    status and the response headers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host or f"127.0.0.1:{port}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Accept", "application/json, text/event-stream")
        for name, value in headers.items():
            conn.putheader(name, value)
        data = json.dumps(body).encode()
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        res = conn.getresponse()
        return res.status, dict(res.getheaders())
    finally:
        conn.close()


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "stress", "version": "1"}}}


def call(name, arguments):
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def http_once(staged, root: Path):
    """`staged mcp --http` on loopback with a token: every request without the token, with a
    wrong one, or with a foreign Origin or Host is refused (401 or 403), including tool calls
    that would stage and apply an edit; the file stays as it was and nothing is staged. One
    request with the token is the control (200)."""
    ws = root / "ws"
    (ws / ".git").mkdir(parents=True)
    target = ws / "a.ts"
    target.write_text("foo(1);\n")
    token = secrets.token_urlsafe(24)
    port = free_port()
    env = dict(os.environ, STAGED_MCP_TOKEN=token)
    server = subprocess.Popen([staged, "--workspace", str(ws), "mcp", "--http", f"127.0.0.1:{port}"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    problems = []
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.02)
        good = {"Authorization": f"Bearer {token}"}
        status, headers = post(port, INITIALIZE, good)
        if status != 200:
            return "FAILED", [f"control: {status}"]
        session = {"Mcp-Session-Id": headers.get("mcp-session-id", "")}
        edit = call("ast_edit", {"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["a.ts"]})
        apply = call("resolve", {"action": "apply", "reason": "attack"})
        wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
        attacks = [
            ("no token", INITIALIZE, {}, None, 401),
            ("wrong token", INITIALIZE, {"Authorization": f"Bearer {wrong}"}, None, 401),
            ("token as Basic", INITIALIZE, {"Authorization": f"Basic {token}"}, None, 401),
            ("token prefix", INITIALIZE, {"Authorization": f"Bearer {token[:8]}"}, None, 401),
            ("edit without token", edit, session, None, 401),
            ("apply without token", apply, session, None, 401),
            ("foreign Origin", INITIALIZE, {**good, "Origin": "http://evil.example"}, None, 403),
            ("null Origin", INITIALIZE, {**good, "Origin": "null"}, None, 403),
            ("look-alike Origin", edit, {**good, **session, "Origin": f"http://127.0.0.1.evil.example:{port}"}, None, 403),
            ("foreign Host", edit, {**good, **session}, f"evil.example:{port}", 403),
            ("rebinding Host", apply, {**good, **session}, f"attacker.localhost.evil:{port}", 403),
        ]
        for name, body, headers, host, expected in attacks:
            status, _ = post(port, body, headers, host)
            if status != expected:
                problems.append(f"{name}: {status}, not {expected}")
        if target.read_text() != "foo(1);\n":
            problems.append("the file changed")
        if pending_ids(staged, ws):
            problems.append(f"staged: {pending_ids(staged, ws)}")
        # The attacks were well-formed: with the token, the same edit call is served.
        status, _ = post(port, edit, {**good, **session})
        if status != 200:
            problems.append(f"the edit call with the token: {status}")
    finally:
        server.terminate()
        server.wait()
    return ("11 attacks refused, control served" if not problems else "FAILED"), problems


HOSTILE = Path(__file__).resolve().parent.parent / "crates/cli/tests/plugins/hostile.py"


def plugin_env(root: Path, command, timeout_ms: int):
    """An environment whose user config directory declares the hostile plugin as `hostile`."""
    home = root / "home"
    (home / "staged").mkdir(parents=True)
    (home / "staged" / "staged.toml").write_text(
        f"[plugins.hostile]\ncommand = {json.dumps(command)}\ntimeout_ms = {timeout_ms}\n")
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(home)
    return env


def run_env(staged, ws, env, *args):
    return subprocess.run([staged, "--workspace", str(ws), *args], capture_output=True, text=True, env=env, cwd=ws)


def stage_hostile(staged, ws, env, args):
    out = run_env(staged, ws, env, "--json", "tool", "stage", "--args", json.dumps(args))
    if out.returncode != 0:
        raise RuntimeError(f"stage: exit {out.returncode}: {out.stdout} {out.stderr}")


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not stat.rsplit(")", 1)[1].strip().startswith("Z")


def plugin_timeout_once(staged, root: Path, rng: random.Random):
    ws, _ = fresh_workspace(root, 0)
    env = plugin_env(root, ["sh", "-c", f"python3 '{HOSTILE}'; exit $?"], 1000)
    seconds = round(rng.uniform(0.8, 1.2), 3)
    stage_hostile(staged, ws, env, {"label": "Slow", "mode": "slow", "seconds": seconds})
    late = ws / "late.txt"
    applied = run_env(staged, ws, env, "--json", "resolve", "apply", "--reason", "stress")
    seen = late.stat().st_mtime_ns if late.exists() else None
    pids = [int(line.split()[0]) for line in (ws / "pids.txt").read_text().splitlines()]
    left = [pid for pid in pids if alive(pid)]
    time.sleep(1.5)
    after = late.stat().st_mtime_ns if late.exists() else None
    problems = []
    text = json.loads(applied.stdout)["text"] if applied.stdout.strip() else applied.stderr
    if left:
        problems.append(f"plugin processes left after staged exited: {left}")
    if after != seen:
        problems.append(f"late.txt written after staged reported (exit {applied.returncode}): {text}")
    if applied.returncode == 0:
        kind = "answered in time"
        if seen is None:
            problems.append("exit 0 but nothing written")
    elif applied.returncode == 1 and "may have run" in text and "did not answer" in text:
        kind = "timed out, written before the report" if seen is not None else "timed out, nothing written"
    else:
        kind = "FAILED"
        problems.append(f"exit {applied.returncode}: {text}")
    return (kind if not problems else "FAILED"), problems


def vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


FLOOD_LIMIT_MIB = 50
FLOOD_SECONDS = 5


def stderr_flood_once(staged, root: Path):
    ws, _ = fresh_workspace(root, 0)
    env = plugin_env(root, ["python3", str(HOSTILE), "--flood-forever"], 30000)
    proc = subprocess.Popen([staged, "--workspace", str(ws), "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ws)
    problems = []
    try:
        deadline = time.time() + 20
        while not (ws / "pids.txt").exists() and time.time() < deadline:
            time.sleep(0.05)
        if not (ws / "pids.txt").exists():
            problems.append("the plugin never started")
        time.sleep(FLOOD_SECONDS)
        if proc.poll() is not None:
            problems.append(f"staged mcp exited ({proc.returncode})")
            hwm = 0
        else:
            hwm = vm_hwm_kib(proc.pid)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            problems.append("staged mcp did not exit when its stdin closed")
    mib = hwm / 1024
    if mib > FLOOD_LIMIT_MIB:
        problems.append(f"peak RSS {mib:.0f} MiB")
    bucket = f"peak RSS {int(mib // 10) * 10}-{int(mib // 10) * 10 + 10} MiB"
    return (bucket if not problems else "FAILED"), problems


def long_answer_once(staged, root: Path):
    ws, _ = fresh_workspace(root, 0)
    env = plugin_env(root, ["python3", str(HOSTILE)], 30000)
    stage_hostile(staged, ws, env, {"label": "Huge", "mode": "huge"})
    started = time.time()
    applied = run_env(staged, ws, env, "--json", "resolve", "apply", "--reason", "stress")
    elapsed = time.time() - started
    problems = []
    out = json.loads(applied.stdout) if applied.stdout.strip() else {}
    text = out.get("text", applied.stderr)
    if applied.returncode != 1 or "longer than 16 MiB" not in text or "may have run" not in text:
        problems.append(f"exit {applied.returncode}: {text[:300]}")
    if elapsed >= 10:
        problems.append(f"took {elapsed:.1f} s")
    if (out.get("pending") or {}).get("label") != "Huge":
        problems.append(f"pending: {out.get('pending')}")
    kind = f"refused in {'<1' if elapsed < 1 else int(elapsed)} s"
    return (kind if not problems else "FAILED"), problems


FIRST_OPEN_EDITS = 4
FIRST_OPEN_READERS = 4


def first_open_once(staged, root: Path):
    ws, files = fresh_workspace(root, FIRST_OPEN_EDITS)
    base = [staged, "--workspace", str(ws)]
    argvs = [base + ["ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", str(p)] for _, p in files]
    argvs += [base + ["--json", "pending"]] * FIRST_OPEN_READERS
    procs = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for a in argvs]
    problems = []
    for argv, proc in zip(argvs, procs):
        _, err = proc.communicate()
        if proc.returncode != 0:
            problems.append(f"{argv[3]} exit {proc.returncode}: {err.strip()}")
    n_pending = len(pending_ids(staged, ws))
    if n_pending != FIRST_OPEN_EDITS:
        problems.append(f"{n_pending} pending, expected {FIRST_OPEN_EDITS}")
    if states(files)["old"] != FIRST_OPEN_EDITS:
        problems.append(f"files: {dict(states(files))}")
    n_procs = FIRST_OPEN_EDITS + FIRST_OPEN_READERS
    return (f"all {n_procs} opened, {FIRST_OPEN_EDITS} pending" if not problems else "FAILED"), problems


PATCH_UPDATED, PATCH_ADDED, PATCH_DELETED, PATCH_MOVED = 40, 30, 30, 20


def patch_files():
    """The mixed patch's workspace files (path -> text) and the patch."""
    files = {}
    hunks = []
    for i in range(PATCH_UPDATED):
        files[f"src/sub/u{i:03}.ts"] = old(i)
        hunks.append(f"*** Update File: src/sub/u{i:03}.ts\n@@\n-{old(i).rstrip()}\n+{new(i).rstrip()}")
    for i in range(PATCH_ADDED):
        hunks.append(f"*** Add File: src/sub/made/a{i:03}.ts\n+{new(i).rstrip()}")
    for i in range(PATCH_DELETED):
        files[f"src/sub/d{i:03}.ts"] = old(i)
        hunks.append(f"*** Delete File: src/sub/d{i:03}.ts")
    for i in range(PATCH_MOVED):
        files[f"src/sub/m{i:03}.ts"] = old(i)
        hunks.append(
            f"*** Update File: src/sub/m{i:03}.ts\n*** Move to: moved/deep/m{i:03}.ts\n@@\n-{old(i).rstrip()}\n+{new(i).rstrip()}"
        )
    return files, "*** Begin Patch\n" + "\n".join(hunks) + "\n*** End Patch\n"


def snapshot(ws: Path):
    """Every file (bytes and mode) and folder under `ws`, but `.staged`."""
    res = {}
    for dirpath, dirnames, names in os.walk(ws):
        rel = os.path.relpath(dirpath, ws)
        if rel.split(os.sep)[0] == ".staged":
            continue
        if rel != ".":
            res[rel + "/"] = None
        for n in names:
            p = Path(dirpath) / n
            res[os.path.join(rel, n) if rel != "." else n] = (p.read_bytes(), p.stat().st_mode & 0o7777)
    return res


def patch_workspace(staged, root: Path):
    """A workspace with the mixed patch staged; returns ws."""
    ws = root / "ws"
    files, patch = patch_files()
    for path, text in files.items():
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(text)
    (ws / ".git").mkdir()
    out = subprocess.run([staged, "--workspace", str(ws), "patch"], input=patch, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"staging the patch: {out.stderr}")
    return ws


_PATCH_TREES = {}


def patch_trees(staged):
    """The tree before and after the mixed patch, from one undisturbed apply."""
    if not _PATCH_TREES:
        with tempfile.TemporaryDirectory() as tmp:
            ws = patch_workspace(staged, Path(tmp))
            _PATCH_TREES["old"] = snapshot(ws)
            run(staged, ws, "resolve", "apply", "--reason", "reference", check=True)
            _PATCH_TREES["new"] = snapshot(ws)
    return _PATCH_TREES["old"], _PATCH_TREES["new"]


def patch_apply_seconds(staged):
    """How long an unkilled apply of the mixed patch takes here (median of 3)."""
    times = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as tmp:
            ws = patch_workspace(staged, Path(tmp))
            started = time.time()
            run(staged, ws, "resolve", "apply", "--reason", "calibrate", check=True)
            times.append(time.time() - started)
    return sorted(times)[1]


def patch_kill_once(staged, root: Path, rng: random.Random, window: float, n_run: int):
    before, after = patch_trees(staged)
    ws = patch_workspace(staged, root)
    preview = pending_ids(staged, ws)
    child = subprocess.Popen([staged, "--workspace", str(ws), "resolve", "apply", "--reason", "stress"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_in_turn(child, ws, rng, window, n_run)
    left = pending_ids(staged, ws)  # recovers first
    now = snapshot(ws)
    applied = [e for e in log_entries(staged, ws) if e["outcome"] == "applied"]
    problems = []
    if now == after:
        if left or len(applied) != 1:
            problems.append(f"all new but pending {left}, applied entries {len(applied)}")
    elif now == before:
        if left != preview or applied:
            problems.append(f"all old but pending {left} (not {preview}), applied entries {len(applied)}")
    else:
        extra = sorted(set(now) - set(before) - set(after))[:3]
        problems.append(f"neither all old nor all new (e.g. {extra or sorted(set(now) ^ set(after))[:3]})")
    return kill_verdict(ws, child, problems, "killed after the commit point, all new", "killed before it, all old",
                        committed=now == after)


KINDS_TO_FOLDER, KINDS_TO_FILE, KINDS_MOVED, KINDS_PLAIN = 20, 20, 10, 10


def kinds_files():
    """The kind-changing patch's workspace files (path -> (text, mode)) and the patch."""
    files = {}
    hunks = []
    for i in range(KINDS_TO_FOLDER):
        files[f"f{i:02}"] = (old(i), 0o644)
        hunks.append(f"*** Delete File: f{i:02}")
        hunks.append(f"*** Add File: f{i:02}/inner/n.ts\n+{new(i).rstrip()}")
    for i in range(KINDS_TO_FILE):
        files[f"g{i:02}/x.ts"] = (old(i), 0o644)
        files[f"g{i:02}/sub/y.ts"] = (old(i + 1), 0o644)
        hunks.append(f"*** Delete File: g{i:02}/x.ts")
        hunks.append(f"*** Delete File: g{i:02}/sub/y.ts")
        hunks.append(f"*** Add File: g{i:02}\n+{new(i).rstrip()}")
    for i in range(KINDS_MOVED):
        files[f"t{i:02}"] = (f"#!/bin/sh\necho {i}\n", 0o755)
        hunks.append(f"*** Update File: t{i:02}\n*** Move to: t{i:02}/t{i:02}\n@@\n-echo {i}\n+echo {i}!")
    for i in range(KINDS_PLAIN):
        hunks.append(f"*** Add File: plain/p{i:02}.ts\n+{new(i).rstrip()}")
    return files, "*** Begin Patch\n" + "\n".join(hunks) + "\n*** End Patch\n"


def kinds_workspace(staged, root: Path):
    """A workspace with the kind-changing patch staged; returns ws."""
    ws = root / "ws"
    files, patch = kinds_files()
    for path, (text, mode) in files.items():
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(text)
        os.chmod(ws / path, mode)
    (ws / ".git").mkdir()
    out = subprocess.run([staged, "--workspace", str(ws), "patch"], input=patch, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"staging the patch: {out.stderr}")
    return ws


_KINDS_TREES = {}


def kinds_trees(staged):
    """The tree before and after the kind-changing patch, from one undisturbed apply."""
    if not _KINDS_TREES:
        with tempfile.TemporaryDirectory() as tmp:
            ws = kinds_workspace(staged, Path(tmp))
            _KINDS_TREES["old"] = snapshot(ws)
            run(staged, ws, "resolve", "apply", "--reason", "reference", check=True)
            _KINDS_TREES["new"] = snapshot(ws)
    return _KINDS_TREES["old"], _KINDS_TREES["new"]


def kinds_apply_seconds(staged):
    """How long an unkilled apply of the kind-changing patch takes here (median of 3)."""
    times = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as tmp:
            ws = kinds_workspace(staged, Path(tmp))
            started = time.time()
            run(staged, ws, "resolve", "apply", "--reason", "calibrate", check=True)
            times.append(time.time() - started)
    return sorted(times)[1]


def kinds_kill_once(staged, root: Path, rng: random.Random, window: float, n_run: int):
    before, after = kinds_trees(staged)
    ws = kinds_workspace(staged, root)
    preview = pending_ids(staged, ws)
    child = subprocess.Popen([staged, "--workspace", str(ws), "resolve", "apply", "--reason", "stress"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_in_turn(child, ws, rng, window, n_run)
    left = pending_ids(staged, ws)  # recovers first
    now = snapshot(ws)
    entries = log_entries(staged, ws)
    applied = [e for e in entries if e["outcome"] == "applied"]
    problems = []
    if now == after:
        if left or len(applied) != 1:
            problems.append(f"all new but pending {left}, applied entries {len(applied)}")
    elif now == before:
        if left != preview or applied:
            problems.append(f"all old but pending {left} (not {preview}), applied entries {len(applied)}")
    else:
        problems.append(f"apply: neither all old nor all new (e.g. {sorted(set(now) ^ set(after))[:3]})")
    verdict, problems = kill_verdict(ws, child, problems, "killed after the commit point, all new",
                                     "killed before it, all old", committed=now == after)
    verdict = f"apply {verdict}"
    if problems or now != after:
        return verdict, problems
    # The undo of the new tree, killed in turn.
    child = subprocess.Popen([staged, "--workspace", str(ws), "undo", "--yes", "--reason", "stress"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_in_turn(child, ws, rng, window, n_run + rng.randrange(3))
    entries = log_entries(staged, ws)  # recovers first
    now = snapshot(ws)
    undone = [e for e in entries if e["outcome"] == "undone"]
    if now == before:
        if len(undone) != 1:
            problems.append(f"undo: all old but {len(undone)} undone entries")
    elif now == after:
        if undone:
            problems.append("undo: all new but logged as undone")
    else:
        problems.append(f"undo: neither all old nor all new (e.g. {sorted(set(now) ^ set(before))[:3]})")
    undo_verdict, problems = kill_verdict(ws, child, problems, "killed after its commit point, all old",
                                          "killed before it, all new", committed=now == before)
    if problems:
        return "FAILED", problems
    return f"{verdict}; undo {undo_verdict}", []


def patch_swap_once(staged, root: Path):
    before, after = patch_trees(staged)
    ws = patch_workspace(staged, root)
    outside = root / "outside"
    shutil.copytree(ws / "src" / "sub", outside / "sub")
    os.symlink(outside / "sub", ws / "src" / "link")
    before_outside = snapshot(outside)
    stop = threading.Event()
    a, b = bytes(ws / "src" / "sub"), bytes(ws / "src" / "link")

    def swapper():
        while not stop.is_set():
            libc.syscall(SYS_RENAMEAT2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)

    t = threading.Thread(target=swapper)
    t.start()
    applied = run(staged, ws, "resolve", "apply", "--reason", "stress")
    stop.set()
    t.join()
    # Put the real folder back at its name, wherever the swaps left it.
    if (ws / "src" / "sub").is_symlink():
        rename_exchange(ws / "src" / "sub", ws / "src" / "link")
    problems = []
    if snapshot(outside) != before_outside:
        problems.append("a file outside changed")
    if stray_temps(ws, outside):
        problems.append(f"temp files left: {stray_temps(ws, outside)[:3]}")
    now = snapshot(ws)
    now.pop("src/link", None)
    want_old = {k: v for k, v in before.items()}
    want_new = {k: v for k, v in after.items()}
    if now == want_new:
        if applied.returncode != 0:
            problems.append(f"all new but exit {applied.returncode}")
        kind = "applied, all new"
    elif now == want_old:
        if applied.returncode == 0 or not (applied.stdout + applied.stderr).strip():
            problems.append(f"nothing written but exit {applied.returncode} without a reason")
        kind = "refused, nothing written"
    else:
        problems.append(f"neither all old nor all new: {sorted(set(now) ^ set(want_new))[:4]}")
        kind = "FAILED"
    return ("FAILED" if problems else kind), problems


def only_race_once(staged, root: Path, rng):
    ws = root / "ws"
    ws.mkdir()
    run(staged, ws, "pending", check=True)
    patch = "*** Begin Patch\n*** Add File: x.txt\n+x\n*** Add File: y.txt\n+y\n*** End Patch\n"
    # The patch is staged while the apply starts: the apply's process starts a random moment
    # (up to 12 ms) after the patch's, so it looks at the stack before, during or after.
    staging = subprocess.Popen([staged, "--workspace", str(ws), "patch"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    staging.stdin.write(patch)
    staging.stdin.close()
    time.sleep(rng.uniform(0, 0.012))
    apply = subprocess.run([staged, "--workspace", str(ws), "resolve", "apply", "--only", "x*", "--reason", "only x"],
                           capture_output=True, text=True)
    staging.wait()
    staging_err = staging.stderr.read()
    problems = []
    if staging.returncode != 0:
        problems.append(f"patch exit {staging.returncode}: {staging_err.strip()}")
    x, y = (ws / "x.txt").exists(), (ws / "y.txt").exists()
    pending = pending_ids(staged, ws)
    if y:
        problems.append(f"y.txt written by an apply of --only 'x*' (exit {apply.returncode}): {apply.stdout.strip()[-200:]}")
        kind = "FAILED"
    elif x:
        if apply.returncode != 0 or len(pending) != 1:
            problems.append(f"x.txt written, exit {apply.returncode}, {len(pending)} pending")
        kind = "x alone applied, y pending"
    else:
        if apply.returncode == 0 or len(pending) != 1:
            problems.append(f"nothing written but exit {apply.returncode}, {len(pending)} pending: {apply.stdout + apply.stderr}")
        kind = "refused, the patch left pending"
    return ("FAILED" if problems else kind), problems


def hook_bin(staged):
    """The binary the installed hooks run: `staged-hook` beside `staged` when it is there."""
    beside = Path(staged).with_name("staged-hook")
    return str(beside) if os.access(beside, os.X_OK) else staged


def hook_race_once(staged, root: Path):
    ws = root / "ws"
    (ws / ".git").mkdir(parents=True)
    files = []
    for i in range(4):
        path = ws / f"f{i}.ts"
        path.write_text(f"oldApi({i});\n")
        files.append(path)
    ws = ws.resolve()

    def event(name, **fields):
        # acceptEdits: the model may apply its own previews, so the Stop holds the turn for them.
        return json.dumps({"session_id": "race", "cwd": str(ws), "hook_event_name": name,
                           "permission_mode": "acceptEdits", **fields}).encode()

    procs = []
    for path in files * 2:
        text = path.read_text().strip()
        ev = event("PreToolUse", tool_name="Edit", tool_use_id=secrets.token_hex(4), tool_input={
            "file_path": str(ws / path.name), "old_string": text, "new_string": text.replace("old", "new"),
            "replace_all": False})
        proc = subprocess.Popen([hook_bin(staged), "hook", "claude-code"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=ws)
        procs.append((proc, ev))
    for proc, ev in procs:
        proc.stdin.write(ev)
        proc.stdin.close()
    problems, reasons = [], []
    for proc, _ in procs:
        out = proc.stdout.read()
        proc.wait()
        try:
            reply = json.loads(out)
            reasons.append(reply["hookSpecificOutput"]["permissionDecisionReason"])
            if reply["hookSpecificOutput"]["permissionDecision"] != "deny":
                problems.append(f"not a deny: {reply}")
        except (ValueError, KeyError, TypeError):
            problems.append(f"no deny (exit {proc.returncode}): {out[:200]!r} {proc.stderr.read()[:200]!r}")
    staged_ = [r for r in reasons if r.startswith("staged holds this edit as a preview")]
    refused = [r for r in reasons if r.startswith("staged refused this edit")]
    if (len(staged_), len(refused)) != (4, 4):
        problems.append(f"{len(staged_)} staged and {len(refused)} refused, not 4 and 4: {reasons[:2]}")
    pending = pending_ids(staged, ws)
    if len(pending) != 4:
        problems.append(f"{len(pending)} previews pending, not 4")
    if any(p.read_text() != f"oldApi({i});\n" for i, p in enumerate(files)):
        problems.append("a file changed")
    stop = subprocess.run([hook_bin(staged), "hook", "claude-code"], input=event("Stop", stop_hook_active=False),
                          capture_output=True, cwd=ws)
    try:
        reason = json.loads(stop.stdout)["reason"]
        if sorted(i for i in pending if i in reason) != sorted(pending):
            problems.append(f"the Stop does not name every staged preview: {reason[:200]}")
        refusals = reason.split("was never made again: ", 1)[-1] if "was never made again: " in reason else ""
        if sorted(p.name for p in files if f"{p.name} (refused while " in refusals) != sorted(p.name for p in files):
            problems.append(f"the Stop does not name every refused edit as the session's: {reason[-900:]}")
    except (ValueError, KeyError):
        problems.append(f"the Stop did not block: {stop.stdout[:200]!r}")
    return ("FAILED" if problems else "4 staged, 4 refused, Stop names all 8"), problems


class McpServer:
    """`staged mcp` over stdio, answering one call at a time; with `warm`, its warm index on
    (debug logs on stderr tell whether each search was answered from it), else off."""

    def __init__(self, staged, ws: Path, warm: bool):
        env = dict(os.environ, STAGED_WARM_INDEX="1" if warm else "0",
                   RUST_LOG="staged_ast_edit=debug" if warm else "off", NO_COLOR="1")
        self.proc = subprocess.Popen([staged, "--workspace", str(ws), "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ws)
        self.lines, self.ready = [], threading.Event()
        self.ids = iter(range(2, 1 << 30))
        threading.Thread(target=self._stderr, daemon=True).start()
        self.request(INITIALIZE)
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
            if not line:
                raise RuntimeError(f"staged mcp exited: {''.join(self.lines[-5:])}")
            reply = json.loads(line)
            if reply.get("id") == message["id"]:
                return reply

    def grep(self, pattern, lang):
        message = call("ast_grep", {"pattern": pattern, "paths": ["."], "lang": lang})
        message["id"] = next(self.ids)
        reply = self.request(message)
        return json.dumps(reply.get("result", reply.get("error")), sort_keys=True)

    def warm_answers(self):
        """How many searches were answered from the warm index so far."""
        return sum(1 for line in list(self.lines) if "ast_grep search" in line and "warm=true" in line)

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def warm_and_cold(staged, ws: Path, steps, pattern, lang):
    """Runs `steps` (each changes the tree behind the servers' backs and says what it did) on a
    warm `staged mcp` and a cold one: after each, the warm answer must be the cold one, and
    must come from the index."""
    warm, cold = McpServer(staged, ws, True), McpServer(staged, ws, False)
    problems = []
    try:
        if not warm.ready.wait(60):
            return ["the warm index was never built"]
        asked = 0
        for step in steps:
            what = step()
            asked += 1
            w, c = warm.grep(pattern, lang), cold.grep(pattern, lang)
            if w != c:
                problems.append(f"after {what}: warm {w[:300]} != cold {c[:300]}")
                break
        time.sleep(0.05)  # the last search's log line
        if not problems and warm.warm_answers() != asked:
            problems.append(f"{warm.warm_answers()} of {asked} searches answered from the index")
    finally:
        warm.close()
        cold.close()
    return problems


RUST_TEXTS = ["fn a() { std::mem::take(&mut x); }\n", "fn a() { std::mem::swap(&mut x); }\n",
              "fn b() {}\n", "fn c() { let y = std::mem::take(&mut v); }\n"]


def warm_hardlink_once(staged, root: Path, rng: random.Random, n_run: int):
    """Files of the tree hard-linked from outside it before the server starts, and new names
    made inside it while it runs, are written in place through the other names (half of the
    texts have the same length), then searched at once or after their change time stopped
    being recent (3.1 s)."""
    ws, outside = root / "ws", root / "outside"
    for d in ("src", "lib", "ignored"):
        (ws / d).mkdir(parents=True)
    outside.mkdir()
    (ws / ".gitignore").write_text("ignored/\n*.hidden\n")
    for i in range(4):
        (ws / "src" / f"a{i}.rs").write_text(rng.choice(RUST_TEXTS))
        os.link(ws / "src" / f"a{i}.rs", outside / f"a{i}.rs")
        (ws / "lib" / f"c{i}.rs").write_text(rng.choice(RUST_TEXTS))
    names = [outside / f"a{i}.rs" for i in range(4)]
    # In half of the runs, one step waits until its change time is old (change times count in
    # whole seconds, and 2 of them are recent).
    wait_at, waited = rng.randrange(12), []

    def write_through(n):
        path = rng.choice(names)
        with open(path, "r+") as f:  # in place: the same inode
            f.truncate(0)
            f.write(rng.choice(RUST_TEXTS))
        if n == wait_at:
            time.sleep(3.1)
            waited.append(n)
            return f"wrote {path}, waited 3.1 s"
        return f"wrote {path}"

    def link_inside(n):
        # In a folder the index watches (a link made in `ignored/`, which it does not watch, to
        # a file listed with one link is not seen, as documented), under a name the walk lists
        # or one it ignores.
        src = ws / "lib" / f"c{rng.randrange(4)}.rs"
        to = ws / rng.choice(["src", "lib"]) / f"l{len(names)}.{rng.choice(['rs', 'hidden'])}"
        os.link(src, to)
        names.append(to)
        return f"linked {src} as {to}"

    steps = [lambda n=n: rng.choice([write_through, write_through, link_inside])(n) for n in range(6)]
    problems = warm_and_cold(staged, ws, steps, "std::mem::take($A)", "rust")
    kind = "warm == cold, one asked after 3.1 s" if waited else "warm == cold, all asked at once"
    return ("FAILED" if problems else kind), problems


JS_TEXT = "baseFlatten(x, 1);\n"
IGNORES = ["ws/src/\n", "*.js\n", "b.js\n", "src\n", "/ws/b.js\n", "", "*.js\n!b.js\n"]


def warm_parent_ignore_once(staged, root: Path, rng: random.Random):
    """The ignore files the walk reads above the workspace (a parent's `.gitignore`, a
    grandparent's `.ignore`, the parent's `.git/info/exclude`, or a worktree's common exclude
    through a `.git` file) are written, removed and swapped while the server runs; each change
    is searched at once."""
    top = root / "top"
    parent = top / "parent"
    ws = parent / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.js").write_text(JS_TEXT)
    (ws / "b.js").write_text(JS_TEXT)
    common = top / "main.git"
    (common / "worktrees" / "ws").mkdir(parents=True)
    (common / "info").mkdir()
    (common / "worktrees" / "ws" / "commondir").write_text("../..\n")

    def git_reset():
        git = parent / ".git"
        if git.is_dir():
            shutil.rmtree(git)
        elif git.exists():
            git.unlink()

    def gitignore():
        text = rng.choice(IGNORES)
        (parent / ".gitignore").write_text(text)
        return f"parent/.gitignore {text!r}"

    def dot_ignore():
        text = rng.choice(IGNORES)
        (top / ".ignore").write_text(text)
        return f"top/.ignore {text!r}"

    def exclude():
        git_reset()
        (parent / ".git" / "info").mkdir(parents=True)
        text = rng.choice(IGNORES)
        (parent / ".git" / "info" / "exclude").write_text(text)
        return f"parent/.git/info/exclude {text!r}"

    def worktree():
        if not (parent / ".git").is_file():
            git_reset()
            (parent / ".git").write_text(f"gitdir: {common / 'worktrees' / 'ws'}\n")
        text = rng.choice(IGNORES)
        (common / "info" / "exclude").write_text(text)
        return f"the worktree's common exclude {text!r}"

    def remove():
        victim = rng.choice([parent / ".gitignore", top / ".ignore", parent / ".git"])
        if victim.is_dir():
            shutil.rmtree(victim)
        elif victim.exists():
            victim.unlink()
        return f"removed {victim}"

    steps = [lambda: rng.choice([gitignore, dot_ignore, exclude, worktree, remove])() for _ in range(8)]
    problems = warm_and_cold(staged, ws, steps, "baseFlatten($$$A)", "js")
    return ("FAILED" if problems else "warm == cold after 8 changes"), problems
def hook_ulimit_once(staged, root: Path, rng: random.Random):
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "src" / "a.ts").write_text("oldApi(1);\n")
    big = "ab" * 900_000
    (ws / "src" / "big.txt").write_text(big)
    ws = ws.resolve()
    installed = subprocess.run([staged, "hook", "install", "claude-code"], cwd=ws, capture_output=True, text=True)
    if installed.returncode != 0:
        return "FAILED", [f"install failed: {installed.stderr}"]
    settings = json.loads((ws / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    kind = rng.choice(["edit", "heavy-edit", "write-50MB"])
    if kind == "edit":
        tool, tool_input = "Edit", {"file_path": str(ws / "src/a.ts"), "old_string": "oldApi(1);",
                                    "new_string": "newApi(1);", "replace_all": False}
    elif kind == "heavy-edit":
        tool, tool_input = "Edit", {"file_path": str(ws / "src/big.txt"), "old_string": "a",
                                    "new_string": "b" * 1000, "replace_all": True}
    else:
        tool, tool_input = "Write", {"file_path": str(ws / "src/new.txt"), "content": "line of text\n" * 4_000_000}
    event = json.dumps({"session_id": "ulimit", "cwd": str(ws), "hook_event_name": "PreToolUse",
                        "permission_mode": "default", "tool_name": tool, "tool_input": tool_input,
                        "tool_use_id": "toolu_1"}).encode()
    limit_kib = int(2 ** rng.uniform(14, 21.585))  # 16 MiB to 3 GiB
    proc = subprocess.run(["sh", "-c", f"ulimit -v {limit_kib}; {command}"], input=event, capture_output=True,
                          cwd=ws, timeout=300)
    problems = []
    verdict = None
    if proc.returncode == 0:
        try:
            reply = json.loads(proc.stdout)["hookSpecificOutput"]
            reason = reply["permissionDecisionReason"]
            if reply["permissionDecision"] != "deny":
                problems.append(f"not a deny: {reply}")
            verdict = ("staged" if reason.startswith("staged holds this edit as a preview")
                       else "worker died" if reason.startswith("staged could not finish staging this edit")
                       else "unreadable" if reason.startswith("staged could not read this hook event")
                       else "refused" if reason.startswith("staged refused this edit") else "other deny")
        except (ValueError, KeyError, TypeError):
            problems.append(f"exit 0 without a deny (a pass): {proc.stdout[:200]!r} {proc.stderr[-300:]!r}")
    elif proc.returncode == 2 and proc.stdout == b"" and proc.stderr.strip():
        err = proc.stderr.decode(errors="replace")
        verdict = ("block: staged could not run" if "staged's hook could not run" in err
                   else "block: worker died" if "staged could not finish this hook call" in err else "block: other")
    else:
        problems.append(f"exit {proc.returncode}: {proc.stdout[:200]!r} {proc.stderr[-300:]!r}")
    if (ws / "src/a.ts").read_text() != "oldApi(1);\n" or (ws / "src/big.txt").read_text() != big \
            or (ws / "src/new.txt").exists():
        problems.append("a file changed")
    return ("FAILED" if problems else f"{kind}: {verdict}"), problems
LINE_EDITS_CASES = 1_000_000


def line_edits_binary():
    """The test binary of crates/edit/tests/line_edits.rs, built (debug profile) if need be."""
    out = subprocess.run(["cargo", "test", "--no-run", "--message-format=json", "-p", "staged-edit", "--test", "line_edits"],
                         cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "line_edits":
            return msg["executable"]
    raise SystemExit("cargo built no line_edits test binary")


def line_edits_once(binary, cases: int):
    """One run of the line_edits property with `cases` cases (a new random seed each run)."""
    env = dict(os.environ, PROPTEST_CASES=str(cases))
    env.pop("PROPTEST_RNG_SEED", None)
    done = subprocess.run([binary, "--exact", "line_edits_rebuild_the_asked_text_with_a_minimal_diff", "--quiet"],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return "FAILED", [(done.stdout + done.stderr)[-2000:]]
    return f"{cases} cases passed", []


def nofile_once(staged, root: Path):
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    ws = root / "ws"
    files = []
    for i in range(2500):
        files.append((i, ws / "src" / f"f{i:04}.ts"))
        files.append((2500 + i, ws / "pkg" / f"p{i:04}" / "index.ts"))
    for i, p in files:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(old(i))
    (ws / ".git").mkdir()
    problems = []
    for args, want in ((("ast-edit", "--op", "legacyWrap($A, $B)", "modernWrap($B, $A)", "."), None),
                       (("resolve", "--reason", "nofile", "apply"), new), (("undo", "--yes"), old)):
        out = subprocess.run([staged, "--workspace", str(ws), *args], capture_output=True, text=True,
                             preexec_fn=limit)
        if out.returncode != 0:
            problems.append(f"{args[0]}: exit {out.returncode}: {(out.stdout + out.stderr)[-300:]}")
            break
        if want and any(p.read_text() != want(i) for i, p in files):
            problems.append(f"{args[0]}: not every file is {want.__name__}")
            break
    problems += leftovers(ws)
    return ("FAILED" if problems else "applied and undone"), problems


SESSION_FILES = 12


def hook_event(staged, ws: Path, event, mode=None, env=None):
    """Runs `staged hook claude-code` (record mode when `mode`) in `ws` on `event`."""
    argv = [staged, "hook", "claude-code"] + (["--mode", mode] if mode else [])
    return subprocess.run(argv, input=json.dumps(event).encode(), cwd=ws, capture_output=True,
                          env=dict(os.environ, NO_COLOR="1", **(env or {})))


def recorded_write(staged, ws: Path, session: str, call: str, rel: str, text: str):
    """Claude Code's Write of `text` to `rel` in `session`, in record mode: PreToolUse, the
    client's write, PostToolUse."""
    path = ws / rel
    tool_input = {"file_path": str(path), "content": text}
    base = {"session_id": session, "cwd": str(ws), "tool_name": "Write", "tool_input": tool_input,
            "tool_use_id": call, "permission_mode": "acceptEdits"}
    hook_event(staged, ws, dict(base, hook_event_name="PreToolUse"), "record")
    original = path.read_text() if path.exists() else None
    path.write_text(text)
    response = {"type": "update" if original is not None else "create", "filePath": str(path),
                "content": text, "structuredPatch": [], "originalFile": original}
    hook_event(staged, ws, dict(base, hook_event_name="PostToolUse", tool_response=response), "record")


def session_workspace(staged, root: Path):
    """A workspace whose record-mode session S1 rewrote SESSION_FILES files, and, by a shell
    command, made the folders `made/deep/` and removed the empty `gone/sub/` and `gone/`;
    returns (ws, files)."""
    ws, files = fresh_workspace(root, SESSION_FILES)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for i, p in files:
        recorded_write(staged, ws, "claude-s", f"t{i}", str(p.relative_to(ws)), new(i))
    (ws / "gone" / "sub").mkdir(parents=True)
    subprocess.run([staged, "--workspace", str(ws), "shell-run", "--client", "claude-code", "--session",
                    "claude-s", "--mode", "record", "--", "mkdir -p made/deep && rmdir gone/sub gone"],
                   cwd=ws, capture_output=True, check=True)
    return ws, files


def session_folders(ws: Path):
    """`new` (the session's folders made and removed), `old` (as before it) or `torn`."""
    made, gone = (ws / "made" / "deep").is_dir(), (ws / "gone" / "sub").is_dir()
    kept = (ws / "made").is_dir() == made and (ws / "gone").is_dir() == gone
    return "new" if made and not gone and kept else "old" if gone and not made and kept else "torn"


def revert_seconds(staged):
    """How long an unkilled whole-session revert takes here (median of 3)."""
    times = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as tmp:
            ws, _ = session_workspace(staged, Path(tmp))
            started = time.time()
            run(staged, ws, "session", "revert", "S1", "--reason", "calibrate", check=True)
            times.append(time.time() - started)
    return sorted(times)[1]


def revert_kill_once(staged, root: Path, rng: random.Random, window: float, n_run: int):
    """SIGKILLs a whole-session revert at any step: afterwards every file is the session's
    (`new`) or every file is reverted (`old`), the log holds the revert exactly when the files
    are reverted, the session's diff agrees, and the session's model is told of the revert
    (once) exactly when the files are reverted."""
    ws, files = session_workspace(staged, root)
    child = subprocess.Popen([staged, "--workspace", str(ws), "session", "revert", "S1", "--reason", "stress"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_in_turn(child, ws, rng, window, n_run)
    entries = log_entries(staged, ws)  # recovers first
    seen = states(files)
    reverts = [e for e in entries if e["source"] == "session_revert"]
    shown = json.loads(run(staged, ws, "--json", "session", "show", "S1", check=True).stdout)
    folders = session_folders(ws)
    prompt = {"session_id": "claude-s", "cwd": str(ws), "hook_event_name": "UserPromptSubmit",
              "prompt": "go on", "permission_mode": "acceptEdits"}
    told = [b"A person reverted your change" in hook_event(staged, ws, prompt, "record").stdout
            for _ in range(2)]
    problems = []
    if seen["torn"] or (seen["new"] and seen["old"]):
        problems.append(f"mixed files: {dict(seen)}")
    elif folders != ("old" if seen["old"] else "new"):
        problems.append(f"files {dict(seen)} but folders {folders}")
    elif len(shown.get("folders", [])) != (0 if seen["old"] else 4):
        problems.append(f"files {dict(seen)} but the diff has {len(shown.get('folders', []))} folders")
    elif seen["old"] == SESSION_FILES and (len(reverts) != 1 or shown["files"]):
        problems.append(f"all reverted but the log holds {len(reverts)} reverts and the diff {len(shown['files'])} files")
    elif seen["new"] == SESSION_FILES and (reverts or len(shown["files"]) != SESSION_FILES):
        problems.append(f"all the session's but the log holds {len(reverts)} reverts and the diff {len(shown['files'])} files")
    elif told != [bool(seen["old"]), False]:
        problems.append(f"files {dict(seen)} but the model was told {told}")
    return kill_verdict(ws, child, problems, "killed after the commit point, all reverted",
                        "killed before it, all the session's", committed=bool(seen["old"]))


# A client process of its own: hooks and MCP servers it starts find it above themselves, as a
# real client's do. Commands on stdin, one JSON line each; answers on stdout.
CLIENT_SRC = r"""
import json, os, subprocess, sys
staged, ws, session = sys.argv[1], sys.argv[2], sys.argv[3]
env = dict(os.environ, NO_COLOR="1", CLAUDE_CODE_SESSION_ID=session)
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
        "capabilities": {}, "clientInfo": {"name": "stress-client", "version": "1"}}}
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd["do"] == "stage":
        event = {"session_id": session, "cwd": ws, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                 "permission_mode": "acceptEdits", "tool_use_id": cmd["call"],
                 "tool_input": {"file_path": os.path.join(ws, cmd["file"]), "old_string": cmd["old"],
                                "new_string": cmd["new"], "replace_all": False}}
        out = subprocess.run([staged, "hook", "claude-code"], input=json.dumps(event).encode(), cwd=ws,
                             capture_output=True, env=env)
        answer = {"code": out.returncode, "out": out.stdout.decode(errors="replace")}
    else:
        proc = subprocess.Popen([staged, "--workspace", ws, "mcp"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=ws)
        def request(message):
            proc.stdin.write((json.dumps(message) + "\n").encode()); proc.stdin.flush()
            while True:
                reply = json.loads(proc.stdout.readline())
                if reply.get("id") == message.get("id"):
                    return reply
        request(init)
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n").encode())
        reply = request({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "resolve",
                         "arguments": {"action": "apply", "reason": cmd["reason"]}}})
        proc.stdin.close(); proc.wait(timeout=30)
        answer = {"reply": reply}
    print(json.dumps(answer), flush=True)
"""


class Client:
    """One agent session's client process (see CLIENT_SRC)."""

    def __init__(self, staged, ws: Path, session: str):
        self.proc = subprocess.Popen([sys.executable, "-c", CLIENT_SRC, staged, str(ws), session],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def session_race_once(staged, root: Path, rng: random.Random):
    """Two agent sessions in gate mode in one workspace, each a client process with its hooks
    and its own `staged mcp`: each stages an edit of its own file, then resolves, in a random
    interleaving, the two clients running at once. Each `resolve` must apply its own session's
    preview with its own reason, never the other's; a resolve with nothing of its own pending
    applies nothing."""
    ws = root / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("a = 1\n")
    (ws / "b.txt").write_text("b = 1\n")
    run(staged, ws, "pending", check=True)  # the state folder
    clients = {"A": Client(staged, ws, "sess-a"), "B": Client(staged, ws, "sess-b")}
    files = {"A": "a.txt", "B": "b.txt"}
    # Each session: stage, then resolve, then (sometimes) resolve again with nothing left.
    plans = {k: ["stage", "resolve"] + (["resolve-again"] if rng.random() < 0.5 else []) for k in clients}
    order = []
    while any(plans.values()):
        k = rng.choice([k for k, v in plans.items() if v])
        order.append((k, plans[k].pop(0)))
    problems = []
    answers = {"A": [], "B": []}

    def drive(k, steps):
        for step in steps:
            if step == "stage":
                letter = k.lower()
                answers[k].append(clients[k].ask(do="stage", call=f"c{k}", file=files[k],
                                                 old=f"{letter} = 1", new=f"{letter} = 2"))
            else:
                answers[k].append(clients[k].ask(do="resolve", reason=f"reason of {k}"))
            time.sleep(rng.uniform(0, 0.01))

    # Run the interleaving: consecutive steps of one session go in its thread, in order.
    threads = [threading.Thread(target=drive, args=(k, [s for kk, s in order if kk == k])) for k in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for c in clients.values():
        c.close()
    entries = log_entries(staged, ws)
    applied = [e for e in entries if e["outcome"] == "applied"]
    for k in clients:
        mine = [e for e in applied if any(f["path"] == files[k] for f in e.get("files", []))]
        if len(mine) != 1:
            problems.append(f"{files[k]} applied {len(mine)} times: {[(e['label'], e['reason']) for e in applied]}")
        elif mine[0]["reason"] != f"reason of {k}":
            problems.append(f"{files[k]} was applied with {mine[0]['reason']!r}: a cross-apply")
    if (ws / "a.txt").read_text() != "a = 2\n" or (ws / "b.txt").read_text() != "b = 2\n":
        problems.append("a file was not written")
    if len(applied) != 2:
        problems.append(f"{len(applied)} applies, not 2")
    kind = "FAILED" if problems else "each session applied its own"
    return kind, problems


# --- shell commands (issue 35) --------------------------------------------------------------

SHELL_FILES = 40


def shell_workspace(root: Path):
    """40 files: the command appends to the first 20, deletes the next 10, and makes 10 new;
    and folders: it deletes `src/gone/` (5 files and an empty folder), makes `src/made/deep/`
    with a file in it, and makes the empty `src/emptynew/`."""
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / ".git").mkdir()
    for i in range(SHELL_FILES):
        (ws / "src" / f"f{i:02}.txt").write_text(old(i))
    (ws / "src" / "gone" / "empty").mkdir(parents=True)
    for i in range(5):
        (ws / "src" / "gone" / f"g{i}.txt").write_text(old(i))
    command = ("for i in $(seq -w 0 19); do echo appended >> src/f$i.txt; done; "
               "for i in $(seq 20 29); do rm src/f$i.txt; done; "
               "for i in $(seq 40 49); do echo new > src/n$i.txt; done; "
               "rm -rf src/gone; mkdir -p src/made/deep src/emptynew; echo x > src/made/deep/x.txt")
    return ws, command


def src_tree(src: Path):
    """Every path under `src`, relative: a folder as `/`, a file as its text."""
    return {str(p.relative_to(src)): "/" if p.is_dir() else p.read_text() for p in src.rglob("*")}


def shell_tree(ws: Path):
    """`old` (every file and folder as before, nothing new), `new` (every change made, folders
    included) or `torn`."""
    now = src_tree(ws / "src")
    before = {f"f{i:02}.txt": old(i) for i in range(SHELL_FILES)}
    before.update({"gone": "/", "gone/empty": "/"})
    before.update({f"gone/g{i}.txt": old(i) for i in range(5)})
    after = {f"f{i:02}.txt": old(i) + "appended\n" for i in range(20)}
    after.update({f"f{i:02}.txt": old(i) for i in range(30, SHELL_FILES)})
    after.update({f"n{i}.txt": "new\n" for i in range(40, 50)})
    after.update({"made": "/", "made/deep": "/", "made/deep/x.txt": "x\n", "emptynew": "/"})
    return "old" if now == before else "new" if now == after else "torn"


def shell_run_seconds(staged):
    with tempfile.TemporaryDirectory() as tmp:
        ws, command = shell_workspace(Path(tmp))
        start = time.time()
        out = subprocess.run([staged, "--workspace", str(ws), "shell-run", "--client", "claude-code", "--session",
                              "s", "--mode", "gate", "--", command], capture_output=True, text=True, cwd=ws)
        if out.returncode != 0:
            raise RuntimeError(f"shell-run: exit {out.returncode}: {out.stderr}")
        took = time.time() - start
        wait_cleaned(ws)
        return took


def wait_cleaned(ws: Path, seconds=30):
    """Waits until the wrapper's cleaning child, which outlives the call, has deleted the run's
    folder and what its commit left to free, so that the workspace can be deleted."""
    deadline = time.time() + seconds
    runs, journal = ws / ".staged" / "shell", ws / ".staged" / "journal"
    while time.time() < deadline:
        left = [p for p in runs.iterdir() if not p.name.startswith("kept")] if runs.is_dir() else []
        freed = [p for p in journal.iterdir() if ".freed-" in p.name] if journal.is_dir() else []
        if not left and not freed:
            return
        time.sleep(0.02)
    raise RuntimeError(f"the shell run's clean-up in {ws} did not end within {seconds} s")


def sweep(staged, ws: Path, session: str):
    """The session's next hook calls, until no run of it is left (its command's processes may
    still run for a moment after the wrapper was killed)."""
    event = json.dumps({"hook_event_name": "PostToolUse", "session_id": session, "cwd": str(ws),
                        "tool_name": "Read", "tool_input": {}, "tool_use_id": "next"}).encode()
    deadline = time.time() + 30
    while True:
        subprocess.run([staged, "hook", "claude-code", "--mode", "record"], input=event, cwd=ws,
                       capture_output=True)
        runs = ws / ".staged" / "shell"
        left = [p for p in runs.iterdir() if not p.name.startswith("kept")] if runs.is_dir() else []
        if not left or time.time() > deadline:
            return left
        time.sleep(0.05)


def shell_kill_once(staged, root: Path, rng: random.Random, window: float, mode: str):
    """SIGKILLs `staged shell-run` (gate or record mode) at a random moment of its run; then the
    session's next hook call finishes the run. Gate: the tree is all old, with one pending
    preview of exactly the command's 40 files (none when the kill came before the command ran),
    which applies all new. Record: the tree is all new with one `shell` log entry, or all old
    with none."""
    ws, command = shell_workspace(root)
    subprocess.run([staged, "--workspace", str(ws), "pending"], capture_output=True, check=True)
    child = subprocess.Popen([staged, "--workspace", str(ws), "shell-run", "--client", "claude-code",
                              "--session", "s", "--mode", mode, "--", command],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ws)
    time.sleep(rng.uniform(0, window))
    child.kill()
    child.wait()
    problems = []
    left = sweep(staged, ws, "s")
    if left:
        problems.append(f"runs left after the sweep: {left}")
    tree = shell_tree(ws)
    entries = [e for e in json.loads(run(staged, ws, "--json", "log", check=True).stdout)["entries"]
               if e["source"] == "shell"]
    pending = json.loads(run(staged, ws, "--json", "pending", check=True).stdout)["pending"]
    if mode == "gate":
        if tree != "old":
            problems.append(f"gate mode wrote the tree: {tree}")
        if len(pending) > 1:
            problems.append(f"{len(pending)} previews pending")
        if pending:
            out = run(staged, ws, "resolve", "apply", "--reason", "stress")
            if out.returncode != 0 or shell_tree(ws) != "new":
                problems.append(f"the preview did not apply to all new: {out.returncode} {shell_tree(ws)}")
        kind = "staged" if pending else "nothing ran"
    else:
        if tree == "torn":
            problems.append("torn tree")
        elif tree == "new" and len(entries) != 1:
            problems.append(f"all new with {len(entries)} shell entries")
        elif tree == "old" and entries:
            problems.append(f"all old with {len(entries)} shell entries")
        kind = "recorded" if tree == "new" else "nothing ran"
    if child.returncode is None:
        problems.append("the wrapper did not end")
    return kind, problems


OUTLIVE_FILES = 20


def outlive_workspace(root: Path, signals: Path):
    """20 files the background process appends to, and the command that leaves it running: it
    waits for `signals/0`, writes, says so in `signals/written`, and waits for `signals/1`."""
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / ".git").mkdir()
    for i in range(OUTLIVE_FILES):
        (ws / "src" / f"f{i:02}.txt").write_text(old(i))
    wait = "w() { for i in $(seq 3000); do [ -e \"$1\" ] && return; sleep 0.01; done; }"
    command = (f"({wait}; w '{signals}/0'; "
               f"for i in $(seq -w 0 {OUTLIVE_FILES - 1}); do echo late >> src/f$i.txt; done; "
               f"echo late > src/late.txt; touch '{signals}/written'; w '{signals}/1') & echo now > now.txt")
    return ws, command


def outlive_tree(ws: Path):
    """`old` (the background write not there), `new` (all of it there) or `torn`."""
    src = ws / "src"
    now = {p.name: p.read_text() for p in src.iterdir()}
    before = {f"f{i:02}.txt": old(i) for i in range(OUTLIVE_FILES)}
    after = {f"f{i:02}.txt": old(i) + "late\n" for i in range(OUTLIVE_FILES)}
    after["late.txt"] = "late\n"
    return "old" if now == before else "new" if now == after else "torn"


def outlive_event(ws: Path):
    return json.dumps({"hook_event_name": "PostToolUse", "session_id": "s", "cwd": str(ws),
                       "tool_name": "Read", "tool_input": {}, "tool_use_id": "next"}).encode()


def outlive_start(staged, root: Path, mode: str):
    """The workspace after the wrapper returned and the process wrote; returns (ws, signals)."""
    signals = root / "signals"
    signals.mkdir()
    ws, command = outlive_workspace(root, signals)
    # Its output to a file: the process it leaves running keeps the descriptor open.
    with open(root / "wrapper.err", "w+b") as err:
        out = subprocess.run([staged, "--workspace", str(ws), "shell-run", "--client", "claude-code", "--session",
                              "s", "--call", "c1", "--mode", mode, "--", command],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, cwd=ws)
        err.seek(0)
        told = err.read()
    if out.returncode != 0 or b"still running" not in told:
        raise RuntimeError(f"shell-run: exit {out.returncode}: {told!r}")
    (signals / "0").touch()
    deadline = time.time() + 30
    while not (signals / "written").exists():
        if time.time() > deadline:
            raise RuntimeError("the background process never wrote")
        time.sleep(0.01)
    return ws, signals


def outlive_harvest_seconds(staged):
    """How long the unkilled hook call that harvests the background write takes (median of 3)."""
    times = []
    for mode in ("record", "gate", "record"):
        with tempfile.TemporaryDirectory() as tmp:
            ws, signals = outlive_start(staged, Path(tmp), mode)
            start = time.time()
            subprocess.run([staged, "hook", "claude-code", "--mode", mode], input=outlive_event(ws), cwd=ws,
                           capture_output=True, check=True)
            times.append(time.time() - start)
            (signals / "1").touch()
    return sorted(times)[1]


def background_entries(staged, ws: Path):
    entries = json.loads(run(staged, ws, "--json", "log", check=True).stdout)["entries"]
    return [e for e in entries if e["label"].startswith("Shell (background): ")]


def background_previews(staged, ws: Path):
    pending = json.loads(run(staged, ws, "--json", "pending", check=True).stdout)["pending"]
    return [p for p in pending if p["label"].startswith("Shell (background): ")], pending


def outlive_kill_once(staged, root: Path, rng: random.Random, window: float, n_run: int):
    """SIGKILLs the hook call that harvests a background process's write (record and gate mode
    in turn); see the experiment's description above."""
    mode = "record" if n_run % 2 == 0 else "gate"
    ws, signals = outlive_start(staged, root, mode)
    child = subprocess.Popen([staged, "hook", "claude-code", "--mode", mode], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ws, start_new_session=True)
    child.stdin.write(outlive_event(ws))
    child.stdin.close()
    # Past the measured time too: a killed call is often slower than the unkilled ones were.
    time.sleep(rng.uniform(0, 1.5 * window))
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()
    problems = []
    # Opening the workspace finishes or rolls back a commit the kill interrupted.
    run(staged, ws, "pending", check=True)
    tree = outlive_tree(ws)
    if mode == "record":
        entries = background_entries(staged, ws)
        if tree == "torn":
            problems.append("torn tree after the kill")
        elif tree == "new" and len(entries) != 1:
            problems.append(f"all new with {len(entries)} background entries")
        elif tree == "old" and entries:
            problems.append(f"all old with {len(entries)} background entries")
        kind = "taken before the kill" if tree == "new" else "taken after the kill"
    else:
        previews, _ = background_previews(staged, ws)
        if tree != "old" or (ws / "now.txt").exists():
            problems.append(f"gate mode wrote the tree: {tree}")
        if len(previews) > 1:
            problems.append(f"{len(previews)} background previews after the kill")
        kind = "staged before the kill" if previews else "staged after the kill"
    # The process ends; the session's next hook calls take the rest and delete the run (gate
    # mode: once the previews are resolved, when the killed call staged one and could not say
    # so in the run's manifest).
    (signals / "1").touch()
    event = outlive_event(ws)
    runs = ws / ".staged" / "shell"

    def sweep_until_gone(seconds):
        deadline = time.time() + seconds
        while True:
            subprocess.run([staged, "hook", "claude-code", "--mode", mode], input=event, cwd=ws, capture_output=True)
            left = [p for p in runs.iterdir() if not p.name.startswith("kept") and not p.name.startswith("gone-")] \
                if runs.is_dir() else []
            if not left or time.time() > deadline:
                return left
            time.sleep(0.05)

    left = sweep_until_gone(3 if mode == "gate" else 30)
    if left and mode == "record":
        problems.append(f"runs left: {left}")
    temps = [p for p in ws.rglob("*staged-copy-*")]
    if temps:
        problems.append(f"copies' temp files left: {temps}")
    if mode == "record":
        entries = background_entries(staged, ws)
        if outlive_tree(ws) != "new" or len(entries) != 1:
            problems.append(f"after the process ended: {outlive_tree(ws)} with {len(entries)} background entries")
        if (ws / "now.txt").read_text() != "now\n":
            problems.append("now.txt is not the command's")
    else:
        previews, pending = background_previews(staged, ws)
        if outlive_tree(ws) != "old" or len(previews) != 1 or len(pending) != 2:
            problems.append(f"after the process ended: {outlive_tree(ws)} with {len(previews)} background previews "
                            f"of {len(pending)} pending")
        for _ in range(len(pending)):
            out = run(staged, ws, "resolve", "apply", "--reason", "stress")
            if out.returncode != 0:
                problems.append(f"apply: {out.returncode} {out.stderr}")
        left = sweep_until_gone(30)
        if left:
            problems.append(f"runs left: {left}")
        if background_previews(staged, ws)[1]:
            problems.append("a preview was staged again after they were applied")
        if outlive_tree(ws) != "new" or not (ws / "now.txt").exists():
            problems.append(f"the previews did not apply all new: {outlive_tree(ws)}")
    return kind, problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--staged", default=str(Path(__file__).resolve().parent.parent / "target/release/staged"))
    parser.add_argument("--only", default="readers,swap,kill,undo-race,undo-kill,partial-kill,http,first-open,patch-kill,patch-swap,hook-race,only-race,plugin-timeout,stderr-flood,long-answer,warm-hardlink,warm-parent-ignore,hook-ulimit,line-edits,nofile,kinds-kill,session-race,revert-kill,shell-gate-kill,shell-record-kill,shell-outlive-kill")
    args = parser.parse_args()
    staged = os.path.abspath(shutil.which(args.staged) or args.staged)  # some runs start it in the workspace
    rng = random.Random(1)
    window = apply_seconds(staged) if any(k in args.only.split(",") for k in ("kill", "undo-kill", "partial-kill")) else 0.0
    patch_window = patch_apply_seconds(staged) if "patch-kill" in args.only.split(",") else 0.0
    kinds_window = kinds_apply_seconds(staged) if "kinds-kill" in args.only.split(",") else 0.0
    line_edits_bin = line_edits_binary() if "line-edits" in args.only.split(",") else None
    line_edits_cases = -(-LINE_EDITS_CASES // args.runs)
    revert_window = revert_seconds(staged) if "revert-kill" in args.only.split(",") else 0.0
    outlive_window = outlive_harvest_seconds(staged) if "shell-outlive-kill" in args.only.split(",") else 0.0
    shell_window = shell_run_seconds(staged) if any(k in args.only.split(",") for k in ("shell-gate-kill", "shell-record-kill")) else 0.0
    experiments = {
        "readers": lambda root, n: readers_once(staged, root),
        "swap": lambda root, n: swap_once(staged, root),
        "kill": lambda root, n: kill_once(staged, root, rng, window, n),
        "undo-race": lambda root, n: undo_race_once(staged, root),
        "undo-kill": lambda root, n: undo_kill_once(staged, root, rng, window, n),
        "partial-kill": lambda root, n: partial_kill_once(staged, root, rng, window, n),
        "http": lambda root, n: http_once(staged, root),
        "first-open": lambda root, n: first_open_once(staged, root),
        "patch-kill": lambda root, n: patch_kill_once(staged, root, rng, patch_window, n),
        "patch-swap": lambda root, n: patch_swap_once(staged, root),
        "hook-race": lambda root, n: hook_race_once(staged, root),
        "only-race": lambda root, n: only_race_once(staged, root, rng),
        "plugin-timeout": lambda root, n: plugin_timeout_once(staged, root, rng),
        "stderr-flood": lambda root, n: stderr_flood_once(staged, root),
        "long-answer": lambda root, n: long_answer_once(staged, root),
        "warm-hardlink": lambda root, n: warm_hardlink_once(staged, root, rng, n),
        "warm-parent-ignore": lambda root, n: warm_parent_ignore_once(staged, root, rng),
        "hook-ulimit": lambda root, n: hook_ulimit_once(staged, root, rng),
        "line-edits": lambda root, n: line_edits_once(line_edits_bin, line_edits_cases),
        "nofile": lambda root, n: nofile_once(staged, root),
        "kinds-kill": lambda root, n: kinds_kill_once(staged, root, rng, kinds_window, n),
        "session-race": lambda root, n: session_race_once(staged, root, rng),
        "revert-kill": lambda root, n: revert_kill_once(staged, root, rng, revert_window, n),
        "shell-gate-kill": lambda root, n: shell_kill_once(staged, root, rng, shell_window, "gate"),
        "shell-record-kill": lambda root, n: shell_kill_once(staged, root, rng, shell_window, "record"),
        "shell-outlive-kill": lambda root, n: outlive_kill_once(staged, root, rng, outlive_window, n),
    }
    rows = []
    for name in args.only.split(","):
        outcomes, failures = Counter(), []
        started = time.time()
        for n in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                kind, problems = experiments[name](Path(tmp), n)
            outcomes[kind] += 1
            if problems:
                failures.append((n, problems))
                print(f"{name} run {n}: {problems}", file=sys.stderr)
        rows.append((name, args.runs, dict(outcomes), len(failures), time.time() - started))
        print(f"{name}: {len(failures)} failures in {args.runs} runs", file=sys.stderr, flush=True)
    print(f"{'experiment':<18} {'runs':>5} {'failures':>8} {'seconds':>8}  outcomes")
    for name, runs, outcomes, n_failed, secs in rows:
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items()))
        print(f"{name:<18} {runs:>5} {n_failed:>8} {secs:>8.1f}  {kinds}")
    sys.exit(1 if any(r[3] for r in rows) else 0)


if __name__ == "__main__":
    main()
