#!/usr/bin/env python3
"""A big agent session reviewed: `staged session show` and a whole-session revert, against git
doing the same on the same change, in the same run (issue 34's scale point).

The session: ENTRIES record-mode edits (Claude Code Writes, through `staged hook claude-code
--mode record`, as the client sends them) spread over FILES files of 60 lines, each edit
changing one line of one file. Then, timed in interleaved rounds:

  show      staged session show S1            the session's net change as one diff
  git-diff  git diff                          the same change against the commit before it
  revert    staged session revert S1          the whole session written back, through the journal
  git-rev   git apply -R (of git diff's output)  the same, by git
  git-rev+sync  git apply -R, then `sync --file-system`  the same made durable, as the revert's
                journal makes its files durable before it says they are written (git never
                syncs): the like-for-like peer of the revert's writing

Every round starts from the same state: the workspace as the session left it, files and
`.staged/` both, copied back (untimed) before each command, so that no round reads the entries
an earlier round's revert (and its undo) added. Such a copy is still being written out when
the command runs, and on ext4 without a journal each file the copy's deletion freed makes the
next creations search past it for 30 s; with STAGED_BENCH_SETTLE=S every round's copies are
made first instead, written out (`sync`), and left S seconds before the first round (35 is
past ext4's 30 s), as a person's review finds a session's files long after they were written. Round 1 also checks the revert gives back the
commit's bytes and that `staged undo` of it restores the session's. Prints each command's p50
and the ratios staged/git, and the same of each command's CPU time (user + system, from the
rusage of the reaped child: on a loaded machine the wall times measure the load).

With STAGED_BASE set to another build, each round also runs its `show` and `revert` on the
same copied workspace, interleaved with this build's, and the ratios between the two builds are
printed too (the machine's load then weighs on both alike).

Usage: bench/session.py [ROUNDS] [ENTRIES] [FILES]   (defaults 5, 1000, 300)
Env:   STAGED (default target/release/staged; build it with cargo build --release -p staged-cli)
       STAGED_BASE (another build to compare with, interleaved)
       STAGED_BENCH_KEEP (a folder to copy the recorded workspace to, for profiling one command)
       STAGED_BENCH_SETTLE (seconds: every round in its own copy, made and synced up front)
       TMPDIR (where the workspaces are: the filesystem measured)
"""
import json
import shutil
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINES = 60


def text(lines):
    return "".join(f"{line}\n" for line in lines)


def hook(staged, ws, event):
    out = subprocess.run([staged, "hook", "claude-code", "--mode", "record"], input=json.dumps(event).encode(),
                         cwd=ws, capture_output=True)
    if out.returncode != 0:
        raise SystemExit(f"hook failed: {out.stderr.decode()}")


CPU = {}


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv, cwd, stdin=None, key=None):
    """Runs argv; its wall time and stdout. With `key`, its CPU time (user + system of the
    process and its threads, from the rusage of the reaped child) is kept under that key: the
    figure the machine's load moves least."""
    cpu = children_cpu()
    started = time.perf_counter()
    out = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True)
    wall = time.perf_counter() - started
    if key:
        CPU.setdefault(key, []).append(children_cpu() - cpu)
    if out.returncode != 0:
        raise SystemExit(f"{argv} failed: {out.stdout.decode()[-500:]} {out.stderr.decode()[-500:]}")
    return wall, out.stdout


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    n_entries = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    n_files = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    staged = os.environ.get("STAGED", str(ROOT / "target/release/staged"))
    other = os.environ.get("STAGED_BASE")
    keep = os.environ.get("STAGED_BENCH_KEEP")
    settle = float(os.environ["STAGED_BENCH_SETTLE"]) if os.environ.get("STAGED_BENCH_SETTLE") else None
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "src").mkdir(parents=True)
        contents = {}
        for f in range(n_files):
            lines = [f"const v{f}_{n} = {n};" for n in range(LINES)]
            contents[f] = lines
            (ws / "src" / f"f{f:03}.ts").write_text(text(lines))
        git = lambda *a: subprocess.run(["git", *a], cwd=ws, check=True, capture_output=True)
        git("init", "-q")
        git("-c", "user.email=b@b", "-c", "user.name=b", "add", "-A")
        git("-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "base")
        started = time.time()
        for e in range(n_entries):
            f = e % n_files
            line = (e // n_files * 7) % LINES
            contents[f][line] = f"const v{f}_{line} = {e} * 2; // edited by entry {e}"
            path = ws / "src" / f"f{f:03}.ts"
            new = text(contents[f])
            base = {"session_id": "bench", "cwd": str(ws), "tool_name": "Write", "tool_use_id": f"t{e}",
                    "tool_input": {"file_path": str(path), "content": new}, "permission_mode": "acceptEdits"}
            hook(staged, ws, dict(base, hook_event_name="PreToolUse"))
            original = path.read_text()
            path.write_text(new)
            hook(staged, ws, dict(base, hook_event_name="PostToolUse",
                                  tool_response={"type": "update", "filePath": str(path), "content": new,
                                                 "structuredPatch": [], "originalFile": original}))
        print(f"session of {n_entries} entries over {n_files} files recorded in {time.time() - started:.0f} s",
              file=sys.stderr)
        session_bytes = {p: p.read_bytes() for p in (ws / "src").iterdir()}
        saved = Path(tmp) / "saved"
        shutil.copytree(ws, saved, symlinks=True)
        if keep:
            shutil.copytree(ws, keep, symlinks=True)

        kinds = (["base"] if other else []) + ["staged", "git"]
        if settle is not None:
            # Every round's copies made now, written out, and left to settle (see the doc).
            for r in range(rounds):
                for kind in kinds:
                    shutil.copytree(saved, Path(tmp) / "rounds" / str(r) / kind, symlinks=True)
            os.sync()
            time.sleep(settle)

        def restore(r, kind):
            """The workspace, as the session left it, for round `r`'s `kind` of commands."""
            if settle is not None:
                return Path(tmp) / "rounds" / str(r) / kind
            shutil.rmtree(ws)
            shutil.copytree(saved, ws, symlinks=True)
            return ws

        times = {"show": [], "git-diff": [], "revert": [], "git-rev": [], "git-rev+sync": []}
        if other:
            times.update({"show-base": [], "revert-base": []})
        for r in range(rounds):
            if other:
                ws = restore(r, "base")
                times["show-base"].append(timed([other, "session", "show", "S1"], ws, key="show-base")[0])
                wall, _ = timed([other, "--json", "session", "revert", "S1", "--reason", "bench"], ws, key="revert-base")
                times["revert-base"].append(wall)
            ws = restore(r, "staged")
            wall, shown = timed([staged, "session", "show", "S1"], ws, key="show")
            times["show"].append(wall)
            wall, diff = timed(["git", "diff"], ws, key="git-diff")
            times["git-diff"].append(wall)
            if r == 0:
                files_shown = shown.count(b"diff --git ")
                files_git = diff.count(b"diff --git ")
                assert files_shown == files_git == n_files, (files_shown, files_git)
            wall, out = timed([staged, "--json", "session", "revert", "S1", "--reason", "bench"], ws, key="revert")
            times["revert"].append(wall)
            if r == 0:
                entry = json.loads(out)["entry"]
                committed = lambda p: subprocess.run(["git", "show", f"HEAD:src/{p.name}"], cwd=ws,
                                                     capture_output=True).stdout
                assert all(p.read_bytes() == committed(p) for p in sorted((ws / "src").iterdir())), \
                    "the revert did not give back the commit's bytes"
                timed([staged, "undo", str(entry), "--yes"], ws)
                assert all((ws / "src" / p.name).read_bytes() == b for p, b in session_bytes.items()), \
                    "undo did not restore the session"
            ws = restore(r, "git")
            wall, _ = timed(["git", "apply", "-R", "-"], ws, stdin=diff, key="git-rev")
            times["git-rev"].append(wall)
            synced, _ = timed(["sync", "--file-system", "."], ws)
            times["git-rev+sync"].append(wall + synced)
        p50 = {k: statistics.median(v) for k, v in times.items()}
        for k, v in p50.items():
            print(f"{k:<12} p50 {v * 1000:8.1f} ms")
        print(f"show / git diff        {p50['show'] / p50['git-diff']:.2f}x")
        print(f"revert / git apply -R  {p50['revert'] / p50['git-rev']:.2f}x")
        print(f"revert / git apply -R; sync -f  {p50['revert'] / p50['git-rev+sync']:.2f}x")
        cpu = {k: statistics.median(v) for k, v in CPU.items()}
        print("CPU (user + system), p50: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in cpu.items()))
        print(f"CPU: show / git diff {cpu['show'] / cpu['git-diff']:.2f}x, "
              f"revert / git apply -R {cpu['revert'] / cpu['git-rev']:.2f}x"
              + (f"; base: revert / git apply -R {cpu['revert-base'] / cpu['git-rev']:.2f}x" if other else ""))
        if other:
            print(f"base: show / git diff  {p50['show-base'] / p50['git-diff']:.2f}x, "
                  f"revert / git apply -R  {p50['revert-base'] / p50['git-rev']:.2f}x")
            print(f"this build / base: show {p50['show'] / p50['show-base']:.2f}x, "
                  f"revert {p50['revert'] / p50['revert-base']:.2f}x")


if __name__ == "__main__":
    main()
