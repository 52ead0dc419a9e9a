#!/usr/bin/env python3
"""The floor of a whole-session revert's writes against git's, in the same rounds (issue 34).

In each round, five fresh copies of FOLDER (a workspace kept by bench/session.py with
STAGED_BENCH_KEEP) are made (untimed, then `sync`), and on each one thing is timed:

  protocol     bench/write_floor.c mode 0: the journal's temps, fsyncs and renames alone
  nosync       the same without any fsync
  git-way      write_floor.c mode 2: unlink, create, write, as git apply does, one thread
  git-apply-R  `git apply -R` of the session's `git diff`
  staged       `staged --json session revert S1` (STAGED, default target/release/staged)
  staged-base  the same with another build (STAGED_BASE, if set), in the same rounds

Prints each one's p50 wall time and CPU time (user + system of the reaped child). What the
journal's protocol costs over git's way is the filesystem's price of all-or-nothing; what a
revert costs over the protocol is staged's own work (reading the session, the checks, the log).

Usage: bench/write_floor.py FOLDER [ROUNDS]   (default 7)
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main():
    keep = Path(sys.argv[1]).resolve()
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    staged = os.environ.get("STAGED", str(ROOT / "target/release/staged"))
    n = len(list((keep / "src").glob("f*.ts")))
    with tempfile.TemporaryDirectory(dir=keep.parent) as tmp:
        floor = Path(tmp) / "write_floor"
        subprocess.run(["cc", "-O2", "-pthread", "-o", floor, ROOT / "bench/write_floor.c"], check=True)
        diff = subprocess.run(["git", "diff"], cwd=keep, capture_output=True, check=True).stdout
        names = ["protocol", "nosync", "git-way", "git-apply-R", "staged"]
        base = os.environ.get("STAGED_BASE")
        if base:
            names.append("staged-base")
        res = {k: [] for k in names}
        for r in range(rounds):
            for k in names:
                shutil.copytree(keep, Path(tmp) / f"{k}{r}", symlinks=True)
            subprocess.run(["sync"], check=True)
            for k in names:
                ws = Path(tmp) / f"{k}{r}"
                if k == "git-apply-R":
                    argv, stdin = ["git", "apply", "-R", "-"], diff
                elif k in ("staged", "staged-base"):
                    build = staged if k == "staged" else base
                    argv, stdin = [build, "--json", "session", "revert", "S1", "--reason", "bench"], None
                else:
                    mode = {"protocol": "0", "nosync": "1", "git-way": "2"}[k]
                    argv, stdin = [floor, ws / "src", str(n), mode], None
                usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = usage.ru_utime + usage.ru_stime
                started = time.perf_counter()
                subprocess.run(argv, cwd=ws, input=stdin, capture_output=True, check=True)
                wall = time.perf_counter() - started
                usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                res[k].append((wall * 1000, (usage.ru_utime + usage.ru_stime - cpu) * 1000))
            for k in names:
                shutil.rmtree(Path(tmp) / f"{k}{r}")
        for k, v in res.items():
            print(f"{k:<12} wall p50 {statistics.median(x[0] for x in v):7.1f} ms   "
                  f"CPU p50 {statistics.median(x[1] for x in v):6.1f} ms   "
                  f"walls {' '.join(f'{x[0]:.1f}' for x in v)}")


if __name__ == "__main__":
    main()
