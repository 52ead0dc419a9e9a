#!/usr/bin/env python3
"""Times commands in interleaved rounds (A, B, C, A, B, C, ...) so that a slow phase of a
shared, noisy machine hits every command alike, then prints one JSON object: per command the
median wall time, median user+sys CPU time and peak RSS (from wait4, per run).

Usage: interleave.py RUNS WARMUP CMD1 CMD2 ...   (each CMD one shell-quoted string, run without a shell)
"""
import json
import os
import shlex
import statistics
import subprocess
import sys
import time


def run_once(argv):
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode


def main():
    args = sys.argv[1:]
    runs, warmup = int(args[0]), int(args[1])
    cmds = [shlex.split(c) for c in args[2:]]
    for _ in range(warmup):
        for argv in cmds:
            run_once(argv)
    samples = [[] for _ in cmds]
    for _ in range(runs):
        for i, argv in enumerate(cmds):
            samples[i].append(run_once(argv))
    out = []
    for argv, s in zip(cmds, samples):
        out.append({
            "command": shlex.join(argv),
            "wall_s": [round(x[0], 3) for x in s],
            "median_wall_s": round(statistics.median(x[0] for x in s), 3),
            "median_cpu_s": round(statistics.median(x[1] for x in s), 3),
            "peak_rss_mib": round(max(x[2] for x in s) / 1024, 1),
            "exit_codes": sorted({x[3] for x in s}),
        })
    # Ratios of paired runs (same round): robust to drifts between rounds.
    if len(cmds) >= 2:
        pairs = [b[0] / a[0] for a, b in zip(samples[0], samples[1])]
        out[0]["paired_ratio_second_over_first"] = round(statistics.median(pairs), 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
