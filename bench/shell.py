#!/usr/bin/env python3
"""What staged adds to one shell call, against one `git status --porcelain` on the same tree
(issue 35; docs/contract/shell.md).

Usage: python3 bench/shell.py [--staged target/release/staged] [--base OLD_STAGED] [--fallback] [--runs 9]
                              [--sizes 10000,100000] [--real] [--bytes 1,10,50]

For each tree size, a generated tree (files of 40 lines in folders of 100) is committed to git;
with `--real`, a real tree of the same number of files too, copied from package sources on
this machine, in this order until it holds that many: the cargo registry's crate sources
(`~/.cargo/registry/src`, 28,884 files here), `/usr/share`, `/usr/include`,
`/usr/lib/python3`, `/work/venv` (a Python virtualenv), `/tmp/cm` (the real clients' npm
packages), then `/usr/lib`; symlinks and files over 1 MiB are left out (so no shared
library of `/usr/lib` dominates the bytes). The tree is written back to disk (`sync`, and a
wait for the kernel's dirty pages to drain) before anything is timed. Then, after one round of
first calls, `--runs` rounds of each of these (interleaved: the order turns by one place each
round; each command starts once the previous call's clean-up is done, its run folder and what
its commit left to free deleted, a wait reported on its own and not counted; medians):

- `git status --porcelain` (the peer);
- the command alone, `sh -c COMMAND`;
- the command as a hooked Claude Code Bash call in record mode costs: the PreToolUse hook
  (`staged-hook hook claude-code --mode record`, the Bash event on stdin: `staged-hook` beside
  `--staged`, as `staged hook install` writes it, or `staged` where there is none), the
  rewritten command (`staged-hook shell-run ... -- COMMAND`: the namespace, the overlay, the command, and recording
  what it wrote), and the PostToolUse hook. staged's cost is that sum minus the command alone,
  in wall time and in CPU time (user + system, from `wait4`, the command's own CPU time
  subtracted the same way); git's CPU time is given beside it. On a loaded shared machine
  the CPU figures are the steadier ones.

With `--base OLD_STAGED`, every round times the old binary's call too, on the same tree (each
in its own session), and the table has a row for each. With `--fallback`,
likewise the same binary's call with `STAGED_SHELL_ISOLATION=off` (row `fallback`): record
mode's snapshot fallback, a stat snapshot of the tree before the command and one after, the
bytes before of tracked files left to git's blobs and of the others copied (once: a copy of
an unchanged file is reused); `--no-overlay` leaves the overlay's row out.

COMMAND changes 1 file (an appended line) or 1,000 files (a line appended to each); with
`--bytes`, also one file of that many MB, committed in the tree, rewritten whole (every line
changes, so the changed bytes are that size removed and that size added). Peak memory is the
highest RSS of any staged process of one more call of each build, each process run under
`/usr/bin/time` (the wrapper waits for the command, so its figure is the larger of its own
and the command's). The first call of a session (the
workspace's state folder already made, its first run) is reported on its own. Trees are made
under target/bench-shell/ (the workspace's filesystem) and deleted after.
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

REAL_SOURCES = [
    Path.home() / ".cargo/registry/src",
    Path("/usr/share"),
    Path("/usr/include"),
    Path("/usr/lib/python3"),
    Path("/work/venv"),
    Path("/tmp/cm"),
    Path("/usr/lib"),
]
REAL_MAX_BYTES = 1 << 20


def timed(argv, cwd, stdin=None, env=None):
    """Wall seconds, CPU seconds (user + system, the process and its waited-for children) and
    peak RSS (KiB) of one process, and its stdout. `env`: variables to set for it."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **env} if env else None)
    if stdin is not None:
        proc.stdin.write(stdin)
        proc.stdin.close()
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]} exited {proc.returncode}: {err[-2000:]!r}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out


def hook_binary(staged):
    """What the installed hooks run (`staged hook install`): `staged-hook` beside `staged`
    when it is there (the hooks alone, which start faster), else `staged`. The wrapper the
    PreToolUse hook writes names the same binary, so all three processes of a call run it."""
    beside = os.path.join(os.path.dirname(staged), "staged-hook")
    return beside if os.access(beside, os.X_OK) else staged


def meminfo(field):
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def settle_disk():
    """Writes back what the bench itself wrote (its tree, git's objects, a deleted tree's
    blocks) before anything is timed: otherwise the kernel's flusher writes it during the
    first 30 s of timed calls (`dirty_expire_centisecs`), and every fsync of staged's waits
    behind it (the ratio swung 1.2x-1.8x from one run to the next on a quiet machine)."""
    os.sync()
    for _ in range(100):
        if meminfo("Dirty") + meminfo("Writeback") < 16 * 1024:
            break
        time.sleep(0.1)
        os.sync()


def settle_runs(root, timeout=2.0):
    """Waits until the clean-up of earlier calls is done: no finished run folder left
    (`.staged/shell/gone-*`) and nothing left to free in the journal folder
    (`.staged/journal/*.freed-*`), both deleted by the wrapper's child after the wrapper has
    returned; so that no timed command shares the disk with the previous call's clean-up: a
    client's next shell call comes after the model's turn, not a millisecond later. Returns
    the seconds waited (not part of any call's time; reported as the clean-up's own column)."""
    start = time.monotonic()

    def busy():
        for folder, mark in ((root / ".staged" / "shell", "gone-"), (root / ".staged" / "journal", ".freed-")):
            try:
                if any(mark in name for name in os.listdir(folder)):
                    return True
            except FileNotFoundError:
                pass
        return False

    while busy() and time.monotonic() - start < timeout:
        time.sleep(0.001)
    return time.monotonic() - start


def cpu_iowait():
    """(iowait, total) jiffies of all CPUs since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[4], sum(fields)


def spread(values):
    """p50, p25 and p75 of `values`."""
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[1], q[0], q[2]


def generated(root: Path, n: int):
    for i in range(n):
        d = root / f"d{i // 100:04d}"
        if i % 100 == 0:
            d.mkdir(parents=True)
        (d / f"f{i}.txt").write_text("".join(f"line {j} of file {i}\n" for j in range(40)))


def real(root: Path, n: int):
    """`n` files copied from REAL_SOURCES; prints what the tree holds."""
    count, size, taken = 0, 0, {}
    for src in REAL_SOURCES:
        if count >= n:
            break
        for dirpath, dirs, names in os.walk(src):
            dirs[:] = sorted(d for d in dirs if d not in (".git", ".staged"))
            for name in sorted(names):
                if count >= n:
                    break
                path = Path(dirpath) / name
                try:
                    if path.is_symlink() or not path.is_file() or path.stat().st_size > REAL_MAX_BYTES:
                        continue
                    rel = Path(src.as_posix().lstrip("/").replace("/", "_")) / path.relative_to(src)
                    (root / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, root / rel)
                except OSError:
                    continue
                count += 1
                size += (root / rel).stat().st_size
                taken[str(src)] = taken.get(str(src), 0) + 1
            if count >= n:
                break
    if count < n:
        raise SystemExit(f"the sources hold only {count} files")
    print(f"real tree of {count} files, {size / (1 << 20):.0f} MiB: "
          + ", ".join(f"{k} {v}" for k, v in taken.items()), flush=True)


def git(root, *args):
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=root, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def targets(root: Path, k: int):
    files = []
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".staged")]
        files += [(Path(dirpath) / n).relative_to(root) for n in names if not n.startswith("big-")]
    files.sort()
    step = max(1, len(files) // k)
    return [str(f) for f in files[::step][:k]]


def command_for(paths):
    listed = " ".join(f"'{p}'" for p in paths)
    return f"for f in {listed}; do echo bench >> \"$f\"; done"


def big_name(mb):
    return f"big-{mb}mb.txt"


def big_text(mb, tag):
    """`mb` MB of 64-byte lines that all differ from another tag's."""
    line = f"{tag:>8} bench line of a big text file, rewritten whole each run\n"
    line = line[:63] + "\n"
    return line * ((mb << 20) // 64)


def big_command(mb):
    """Rewrites the big file whole, every line different from the last run's (the tag is the
    run's own nanosecond clock)."""
    return (f"t=$(date +%N); python3 -c \"import sys; l=('%8s bench line of a big text file, "
            f"rewritten whole each run' % sys.argv[1])[:63]+chr(10); "
            f"open('{big_name(mb)}','w').write(l*(({mb}<<20)//64))\" $t")


def events(root, command, session):
    pre = json.dumps({"hook_event_name": "PreToolUse", "session_id": session, "cwd": str(root),
                      "permission_mode": "acceptEdits", "tool_name": "Bash",
                      "tool_input": {"command": command}, "tool_use_id": "call"}).encode()
    post = json.dumps({"hook_event_name": "PostToolUse", "session_id": session, "cwd": str(root),
                       "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_response": {"stdout": ""}, "tool_use_id": "call"}).encode()
    return pre, post


def hooked(staged, root, command, session, peak=False, env=None):
    """One hooked call: wall and CPU time of the three staged processes (the wrapper's
    figures include the command's); with `peak`, each process runs under `/usr/bin/time`
    and the third figure is the highest RSS (MiB) of any of them. (A child's `ru_maxrss`
    from `wait4` counts this Python process's own pages between `fork` and `exec`, so it is
    not used.)"""
    pre_ev, post_ev = events(root, command, session)
    peaks = []

    def run(argv, stdin=None):
        if not peak:
            return timed(argv, root, stdin, env)
        out_file = root.parent / "peak.txt"
        res = timed(["/usr/bin/time", "-f", "%M", "-o", str(out_file), *argv], root, stdin, env)
        peaks.append(int(out_file.read_text().split()[-1]) / 1024)
        return res

    hook = hook_binary(staged)
    pre, pre_cpu, _, out = run([hook, "hook", "claude-code", "--mode", "record"], pre_ev)
    wrapped = json.loads(out)["hookSpecificOutput"]["updatedInput"]["command"]
    w, w_cpu, _, _ = run(["sh", "-c", wrapped])
    p, p_cpu, _, _ = run([hook, "hook", "claude-code", "--mode", "record"], post_ev)
    return pre + w + p, pre_cpu + w_cpu + p_cpu, max(peaks) if peaks else 0.0


def bench_case(builds, root, runs, label, n, case, command):
    """Rows of one case (`case`: files changed, or MB rewritten) for each build.

    Round 0 is each build's first call of its session (reported on its own, not in the
    p50s). Then `runs` rounds, each timing `git status`, the command alone and one hooked call
    of each build, in an order that turns by one place each round (so each command follows
    each other equally often: a command timed right after another pays for what that one
    left behind), every timed command started only once the previous call's clean-up is
    done (`settle_runs`). The ratio is given as p50 of staged adds over p50 of `git status`,
    and as the p50 (p25-p75) of each round's own ratio, staged adds in that round over
    `git status` in that round, which a drift of the machine's speed moves much less."""
    stats = {name: {"add": [], "cpu": [], "ratio": [], "clean": [], "peak": [], "first": None}
             for name, _, _ in builds}
    git_s, git_cpu, alone_s, alone_cpu = [], [], [], []
    io0 = cpu_iowait()
    for run in range(runs + 1):
        jobs = ["git", "alone"] + [name for name, _, _ in builds]
        turn = run % len(jobs)
        timed_now, walls, cpus, clean = jobs[turn:] + jobs[:turn], {}, {}, {}
        for job in timed_now:
            settle_runs(root)
            if job == "git":
                walls[job], cpus[job], _, _ = timed(["git", "status", "--porcelain"], root)
            elif job == "alone":
                walls[job], cpus[job], _, _ = timed(["sh", "-c", command], root)
            else:
                staged, env = next((b[1], b[2]) for b in builds if b[0] == job)
                walls[job], cpus[job], _ = hooked(staged, root, command, f"bench-{job}-{label}-{n}-{case}", env=env)
                clean[job] = settle_runs(root)
        a, ac = walls["alone"], cpus["alone"]
        if run == 0:
            for name, _, _ in builds:
                stats[name]["first"] = walls[name] - a
            continue
        git_s.append(walls["git"])
        git_cpu.append(cpus["git"])
        alone_s.append(a)
        alone_cpu.append(ac)
        for name, _, _ in builds:
            s = stats[name]
            s["add"].append(walls[name] - a)
            s["cpu"].append(cpus[name] - ac)
            s["ratio"].append((walls[name] - a) / walls["git"])
            s["clean"].append(clean[name])
    io1 = cpu_iowait()
    iowait = 100 * (io1[0] - io0[0]) / max(1, io1[1] - io0[1])
    # Peak memory: one more call of each build, each process under /usr/bin/time.
    for name, staged, env in builds:
        settle_runs(root)
        stats[name]["peak"].append(
            hooked(staged, root, command, f"bench-{name}-{label}-{n}-{case}", peak=True, env=env)[2])
    if "new" in stats and "base" in stats:
        # Each round's new against the same round's base: the pair ran seconds apart, so the
        # disk's and the CPUs' state, which moves both, cancels out of it.
        paired = [n / b for n, b in zip(stats["new"]["add"], stats["base"]["add"]) if b > 0]
        p50, p25, p75 = spread(paired)
        print(f"{label} {n} {case}: new/base per round p50 {p50:.2f} (p25-p75 {p25:.2f}-{p75:.2f}), "
              f"new faster in {sum(1 for r in paired if r < 1)} of {len(paired)} rounds", flush=True)
    rows = []
    for name, _, _ in builds:
        s = stats[name]
        g50, add50 = statistics.median(git_s), statistics.median(s["add"])
        r50, r25, r75 = spread(s["ratio"])
        rows.append((name, label, n, case, g50, statistics.median(git_cpu), statistics.median(alone_s), add50,
                     add50 / g50, (r50, r25, r75), statistics.median(s["cpu"]),
                     statistics.median(s["cpu"]) / statistics.median(git_cpu), s["first"], max(s["peak"]),
                     iowait, statistics.median(s["clean"])))
    return rows


def bench_tree(builds, root: Path, runs: int, label: str, n: int, sizes_mb):
    for mb in sizes_mb:
        (root / big_name(mb)).write_text(big_text(mb, "initial"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    # Warm the page cache and git's index the same for every case, and write back what
    # making the tree left dirty before anything is timed.
    timed(["git", "status", "--porcelain"], root)
    settle_disk()
    rows = []
    for k in (1, 1000):
        rows += bench_case(builds, root, runs, label, n, f"{k} files", command_for(targets(root, k)))
        print(rows[-1], flush=True)
        settle_disk()
    for mb in sizes_mb:
        rows += bench_case(builds, root, runs, label, n, f"1 file of {mb} MB", big_command(mb))
        print(rows[-1], flush=True)
        settle_disk()
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staged", default=str(REPO / "target/release/staged"))
    parser.add_argument("--base", help="an older staged binary, timed interleaved with --staged")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--real", action="store_true")
    parser.add_argument("--only-real", action="store_true", help="the real trees only")
    parser.add_argument("--bytes", default="", help="MB sizes of the whole-file rewrites, e.g. 1,10,50")
    parser.add_argument("--fallback", action="store_true",
                        help="also time the record-mode snapshot fallback (STAGED_SHELL_ISOLATION=off) of --staged")
    parser.add_argument("--no-overlay", action="store_true", help="with --fallback: the fallback only")
    args = parser.parse_args()
    builds = [] if args.no_overlay else [("new", os.path.abspath(args.staged), None)]
    if args.fallback:
        builds.append(("fallback", os.path.abspath(args.staged), {"STAGED_SHELL_ISOLATION": "off"}))
    if args.base:
        builds.append(("base", os.path.abspath(args.base), None))
    sizes_mb = [int(s) for s in args.bytes.split(",") if s]
    base = REPO / "target" / "bench-shell"
    kinds = [("generated", generated)] if not args.only_real else []
    if args.real or args.only_real:
        kinds.append(("real", real))
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        for label, make in kinds:
            shutil.rmtree(base, ignore_errors=True)
            settle_disk()
            root = base / f"{label}-{n}"
            root.mkdir(parents=True)
            make(root, n)
            for _, staged, _ in builds:
                subprocess.run([staged, "--workspace", str(root), "pending"], stdout=subprocess.DEVNULL, check=True)
            rows.extend(bench_tree(builds, root, args.runs, label, n, sizes_mb))
            shutil.rmtree(base, ignore_errors=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}; staged runs {hook_binary(os.path.abspath(args.staged))}")
    print("| build | tree | files | change | git status p50 s | git CPU s | command alone p50 s "
          "| staged adds p50 s | ratio of p50s | round ratio p50 (p25-p75) | staged adds CPU s "
          "| CPU ratio to git | first call adds s | staged peak MiB | iowait % | clean-up after p50 s |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, label, n, case, g, gc, a, add, ratio, (r50, r25, r75), cpu, cratio, first, peak, io, cl in rows:
        print(f"| {name} | {label} | {n} | {case} | {g:.4f} | {gc:.4f} | {a:.4f} | {add:.4f} | {ratio:.2f}x "
              f"| {r50:.2f}x ({r25:.2f}-{r75:.2f}) | {cpu:.4f} | {cratio:.2f}x | {first:.4f} | {peak:.1f} | {io:.1f} "
              f"| {cl:.4f} |")


if __name__ == "__main__":
    main()
