#!/usr/bin/env python3
"""What staged adds to one shell call, against one `git status --porcelain` on the same tree
(issue 35; docs/contract/shell.md).

Usage: python3 bench/shell.py [--staged target/release/staged] [--runs 9] [--sizes 10000,100000]
                              [--real]

For each tree size, a generated tree (files of 40 lines in folders of 100) is committed to git;
with `--real`, a tree of the same number of files copied from the cargo registry's sources on
this machine (`~/.cargo/registry/src`) too. Then, `--runs` times each (interleaved, medians):

- `git status --porcelain` (the peer);
- the command alone, `sh -c COMMAND`;
- the command as a hooked Claude Code Bash call in record mode costs: the PreToolUse hook
  (`staged hook claude-code --mode record`, the Bash event on stdin), the rewritten command
  (`staged shell-run ... -- COMMAND`: the namespace, the overlay, the command, and recording
  what it wrote), and the PostToolUse hook. staged's cost is that sum minus the command alone.

COMMAND changes 1 file (an appended line) or 1,000 files (a line appended to each). Peak
memory is the highest RSS of any staged process (`wait4`'s `ru_maxrss`). The first call of a
session (the workspace's state folder already made, its first run) is reported on its own.
Trees are made under target/bench-shell/ (the workspace's filesystem) and deleted after.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(argv, cwd, stdin=None):
    """Wall seconds and peak RSS (KiB) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if stdin is not None:
        proc.stdin.write(stdin)
        proc.stdin.close()
    out = proc.stdout.read()
    proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]} exited {proc.returncode}")
    return wall, usage.ru_maxrss, out


def generated(root: Path, n: int):
    for i in range(n):
        d = root / f"d{i // 100:04d}"
        if i % 100 == 0:
            d.mkdir(parents=True)
        (d / f"f{i}.txt").write_text("".join(f"line {j} of file {i}\n" for j in range(40)))


def real(root: Path, n: int):
    src = Path.home() / ".cargo/registry/src"
    count = 0
    for dirpath, _, names in os.walk(src):
        for name in sorted(names):
            if count >= n:
                return
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            rel = path.relative_to(src)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, root / rel)
            count += 1
    if count < n:
        raise SystemExit(f"the cargo registry holds only {count} files")


def git(root, *args):
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=root, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def targets(root: Path, k: int):
    files = []
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".staged")]
        files += [(Path(dirpath) / n).relative_to(root) for n in names]
    files.sort()
    step = max(1, len(files) // k)
    return [str(f) for f in files[::step][:k]]


def command_for(paths):
    listed = " ".join(f"'{p}'" for p in paths)
    return f"for f in {listed}; do echo bench >> \"$f\"; done"


def bench_tree(staged, root: Path, runs: int, label: str, n: int):
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    rows = []
    for k in (1, 1000):
        command = command_for(targets(root, k))
        session = f"bench-{label}-{n}-{k}"
        event = json.dumps({"hook_event_name": "PreToolUse", "session_id": session, "cwd": str(root),
                            "permission_mode": "acceptEdits", "tool_name": "Bash",
                            "tool_input": {"command": command}, "tool_use_id": "call"}).encode()
        post = json.dumps({"hook_event_name": "PostToolUse", "session_id": session, "cwd": str(root),
                           "tool_name": "Bash", "tool_input": {"command": command},
                           "tool_response": {"stdout": ""}, "tool_use_id": "call"}).encode()
        git_s, alone_s, added_s, peaks = [], [], [], []
        first = None
        for run in range(runs):
            g, _, _ = timed(["git", "status", "--porcelain"], root)
            a, _, _ = timed(["sh", "-c", command], root)
            pre, m1, out = timed([staged, "hook", "claude-code", "--mode", "record"], root, event)
            wrapped = json.loads(out)["hookSpecificOutput"]["updatedInput"]["command"]
            w, m2, _ = timed(["sh", "-c", wrapped], root)
            p, m3, _ = timed([staged, "hook", "claude-code", "--mode", "record"], root, post)
            added = pre + w + p - a
            if run == 0:
                first = added
            git_s.append(g)
            alone_s.append(a)
            added_s.append(added)
            peaks.append(max(m1, m2, m3))
        g50, add50 = statistics.median(git_s), statistics.median(added_s)
        rows.append((label, n, k, g50, statistics.median(alone_s), add50, add50 / g50, first, max(peaks) / 1024))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staged", default=str(REPO / "target/release/staged"))
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--real", action="store_true")
    args = parser.parse_args()
    staged = os.path.abspath(args.staged)
    base = REPO / "target" / "bench-shell"
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        for label, make in [("generated", generated)] + ([("real", real)] if args.real else []):
            shutil.rmtree(base, ignore_errors=True)
            root = base / f"{label}-{n}"
            root.mkdir(parents=True)
            make(root, n)
            subprocess.run([staged, "--workspace", str(root), "pending"], stdout=subprocess.DEVNULL, check=True)
            rows.extend(bench_tree(staged, root, args.runs, label, n))
            shutil.rmtree(base, ignore_errors=True)
    print("| tree | files | files changed | git status p50 s | command alone p50 s | staged adds p50 s "
          "| ratio to git status | first call adds s | staged peak MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, n, k, g, a, add, ratio, first, peak in rows:
        print(f"| {label} | {n} | {k} | {g:.4f} | {a:.4f} | {add:.4f} | {ratio:.2f}x | {first:.4f} | {peak:.1f} |")


if __name__ == "__main__":
    main()
