#!/usr/bin/env python3
"""The rows of the speed issue (selective, broad and nested previews) against ast-grep 0.51.1,
timed in interleaved rounds on the corpora of bench/compare.sh.

For each row both tools run once per round, in turn (ours, then `ast-grep run -p P -r R -l L
--json=compact`), so that a slow phase of a shared machine hits both alike. Prints one markdown
table: per tool the min and the median wall time over the rounds, the median of the paired
ratios (ast-grep's wall time over ours, round by round), the peak RSS of each (wait4) and their
ratio, and the replacement counts (ours from the preview's JSON summary, ast-grep's from its
match list; a nested row differs by design: one ast-grep pass rewrites only the outermost
match of a nest, a staged preview composes them).

Usage: bench/speed_rows.py --ours target/release/examples/preview --sg bench/.venv/bin/ast-grep \
           [--rust bench/corpus/rust] [--js bench/corpus/js] [--runs 3] [--only rust|js] \
           [--rows 1,4] [--work bench/work]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# corpus | lang | kind | pattern | rewrite
ROWS = [
    ("rust", "rust", "selective", "tokio::spawn($A)", "tokio::task::spawn($A)"),
    ("rust", "rust", "selective", "std::mem::take($A)", "core::mem::take($A)"),
    ("rust", "rust", "selective", "mem::take($A)", "core::mem::take($A)"),
    ("rust", "rust", "broad, nested", "$A.unwrap()", '$A.expect("...")'),
    ("js", "js", "selective", "baseFlatten($$$A)", "flatten($$$A)"),
    ("js", "js", "broad", "Debug.assert($$$A)", "Debug.check($$$A)"),
    ("js", "js", "broad, nested", "$A.length", "len($A)"),
]


def run_once(argv, out_path):
    """Wall time and peak RSS of one run, its stdout to `out_path`. The output is never read
    into this process: a child's peak RSS starts at its parent's (Linux copies the high-water
    mark at fork and exec), so this process must stay small."""
    with open(out_path, "wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{argv[:3]}... exited {code}")
    return wall, usage.ru_maxrss / 1024


COUNT = """import json, sys
d = json.load(open(sys.argv[1]))
print(d.get("totalReplacements", "error") if isinstance(d, dict) else len(d))"""


def count(out_path):
    """The replacements in an output, counted in a child (see run_once)."""
    return subprocess.run([sys.executable, "-c", COUNT, out_path], check=True,
                          capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--sg", required=True)
    ap.add_argument("--rust", default="bench/corpus/rust")
    ap.add_argument("--js", default="bench/corpus/js")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only")
    ap.add_argument("--work", default="bench/work")
    ap.add_argument("--rows", help="comma-separated row numbers (1-based) to run")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ours_out, sg_out = (os.path.join(args.work, f"rows-{t}.json") for t in ("ours", "sg"))
    wanted = {int(x) for x in args.rows.split(",")} if args.rows else None
    corpora = {"rust": os.path.abspath(args.rust), "js": os.path.abspath(args.js)}
    print("| row | pattern | ast-grep min s | staged min s | ast-grep median s | staged median s "
          "| speed-up (median of paired) | peak RSS staged / ast-grep MiB | RSS ratio "
          "| replacements staged / ast-grep |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for n, (corpus, lang, kind, pat, rew) in enumerate(ROWS, 1):
        if (args.only and args.only != corpus) or (wanted and n not in wanted):
            continue
        root = corpora[corpus]
        ours = [args.ours, "--root", root, "--lang", lang, "--pattern", pat, "--rewrite", rew, "."]
        sg = [args.sg, "run", "-p", pat, "-r", rew, "-l", lang, "--json=compact", root]
        o, s = [], []
        for _ in range(args.runs):
            o.append(run_once(ours, ours_out))
            s.append(run_once(sg, sg_out))
        ours_n, sg_n = count(ours_out), count(sg_out)
        ratio = statistics.median(b[0] / a[0] for a, b in zip(o, s))
        o_rss, s_rss = max(x[1] for x in o), max(x[1] for x in s)
        print(f"| {corpus} {kind} | `{pat}` | {min(x[0] for x in s):.3f} | {min(x[0] for x in o):.3f} "
              f"| {statistics.median(x[0] for x in s):.3f} | {statistics.median(x[0] for x in o):.3f} "
              f"| {ratio:.2f}x | {o_rss:.1f} / {s_rss:.1f} | {o_rss / s_rss:.2f} | {ours_n} / {sg_n} |",
              flush=True)


if __name__ == "__main__":
    main()
