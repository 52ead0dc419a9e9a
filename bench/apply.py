#!/usr/bin/env python3
"""Times a bulk rewrite applied by staged (preview, apply, undo) against `ast-grep run -U` on
the same files, in interleaved rounds, on one copy of a corpus that every round puts back.

Each round, on the copy W:
  1. `staged ast-edit --op P R --lang L .` (the preview, staged in W/.staged);
  2. `staged resolve apply` (the apply: the stale check re-runs the rewrite, then the journal
     writes every file, each temp fsynced, before its commit point);
  3. `staged undo --yes` (the files back through the same journal, after checking each is
     what the apply wrote);
  4. `ast-grep run -p P -r R -l L -U W` (writes in place, no fsync);
  5. the files ast-grep wrote (those modified since it started; it also rewrites files with
     syntax errors, which staged skips) are copied back from the pristine corpus.
After the last round W must equal the pristine corpus again (checked on the files the rewrite
touches: every one is compared byte for byte).

Prints one JSON object: per step the median wall time, CPU time and peak RSS, the medians of
the paired ratios (preview + apply against ast-grep -U, apply alone, undo), and the counts.

Usage: apply.py --staged BIN --sg BIN --pristine DIR --work DIR [--runs N] [--lang rust]
                [--pattern P] [--rewrite R]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


def run(argv, cwd=None):
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{argv[:4]}... exited {code}: {err.decode(errors='replace')[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024}


def restore(work, pristine, since):
    """Copies back from `pristine` every file of `work` modified after `since`."""
    n = 0
    for d, dirs, names in os.walk(work):
        dirs[:] = [x for x in dirs if not (d == work and x == ".staged")]
        for name in names:
            path = os.path.join(d, name)
            if os.lstat(path).st_mtime >= since:
                shutil.copy2(os.path.join(pristine, os.path.relpath(path, work)), path)
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--staged", required=True)
    ap.add_argument("--sg", required=True)
    ap.add_argument("--pristine", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lang", default="rust")
    ap.add_argument("--pattern", default="$A.unwrap()")
    ap.add_argument("--rewrite", default='$A.expect("...")')
    args = ap.parse_args()
    args.staged, args.sg = os.path.abspath(args.staged), os.path.abspath(args.sg)
    work = os.path.abspath(args.work)
    staged = [args.staged, "--workspace", work, "--color", "never"]
    preview = staged + ["--json", "ast-edit", "--op", args.pattern, args.rewrite, "--lang", args.lang, "."]

    # The files the rewrite touches, from one preview (discarded).
    out = subprocess.run(preview, cwd=work, check=True, capture_output=True).stdout
    details = json.loads(out)["details"]
    files = [f["path"] for f in details["fileReplacements"]]
    subprocess.run(staged + ["resolve", "discard", "--reason", "bench: listing"], cwd=work,
                   check=True, capture_output=True)

    steps = {"preview": [], "apply": [], "undo": [], "ast-grep -U": []}
    for _ in range(args.runs):
        steps["preview"].append(run(preview, cwd=work))
        steps["apply"].append(run(staged + ["resolve", "apply", "--reason", "bench"], cwd=work))
        steps["undo"].append(run(staged + ["undo", "--yes", "--reason", "bench"], cwd=work))
        started = time.time() - 1
        steps["ast-grep -U"].append(run([args.sg, "run", "-p", args.pattern, "-r", args.rewrite,
                                         "-l", args.lang, "-U", work]))
        restored = restore(work, args.pristine, started)

    differ = [p for p in files
              if open(os.path.join(work, p), "rb").read() != open(os.path.join(args.pristine, p), "rb").read()]
    med = lambda xs: round(statistics.median(xs), 3)
    res = {
        "files": len(files),
        "replacements": details["totalReplacements"],
        "runs": args.runs,
        "steps": {k: {"median_wall_s": med([x["wall"] for x in v]),
                      "median_cpu_s": med([x["cpu"] for x in v]),
                      "peak_rss_mib": round(max(x["rss_mib"] for x in v), 1)} for k, v in steps.items()},
        "ratios": {
            "preview+apply / ast-grep -U": med([(p["wall"] + a["wall"]) / s["wall"] for p, a, s in
                                                zip(steps["preview"], steps["apply"], steps["ast-grep -U"])]),
            "apply / ast-grep -U": med([a["wall"] / s["wall"] for a, s in zip(steps["apply"], steps["ast-grep -U"])]),
            "undo / ast-grep -U": med([u["wall"] / s["wall"] for u, s in zip(steps["undo"], steps["ast-grep -U"])]),
        },
        "files_ast_grep_wrote": restored,
        "files_not_restored": differ,
    }
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
