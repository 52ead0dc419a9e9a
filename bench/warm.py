#!/usr/bin/env python3
"""The warm index through a running `staged mcp`, driven by the official Python MCP SDK client,
against the same server with the index off (`STAGED_WARM_INDEX=0`, every call walks, reads and
prefilters the tree) and against ast-grep 0.51.1's CLI on the same query.

Both servers serve the same corpus. After the warm one has logged that its index is built
(`warm index: N of M files indexed, ...` on its stderr, `RUST_LOG=staged_ast_edit=info`), each
round calls every query once on each server and runs ast-grep once, in turn, so that a slow
phase of a shared machine hits all three alike. Each `ast_edit` preview is discarded at once.

Prints a markdown table: per query the p50 (median) and p95 wall time of a call on the warm
server, on the cold one and of `ast-grep run` (a whole process), and the ratios of the
medians; then the index's size against the corpus's, each server's peak RSS, and how long the
index took to build.

Usage: bench/warm.py --staged target/release/staged --sg bench/.venv/bin/ast-grep \
           --corpus bench/corpus/rust [--rounds 15]
Needs the `mcp` package (2.x) in the Python that runs it.
"""
import argparse
import asyncio
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

QUERIES = [
    ("ast_grep selective", "ast_grep",
     {"pattern": "std::mem::take($A)", "paths": ["."], "lang": "rust"}, "std::mem::take($A)"),
    ("ast_edit selective", "ast_edit",
     {"ops": [{"pat": "tokio::spawn($A)", "out": "tokio::task::spawn($A)"}], "paths": ["."],
      "lang": "rust"}, "tokio::spawn($A)"),
    # A pattern no earlier call asked for: nothing it finds can have been kept from before.
    ("ast_grep selective, a new pattern each round", "ast_grep", None, None),
    ("ast_grep broad", "ast_grep",
     {"pattern": "$A.unwrap()", "paths": ["."], "lang": "rust", "limit": 10}, "$A.unwrap()"),
]


# The new patterns, one per round (cycled if there are more rounds).
NEW_PATTERNS = [
    "std::mem::replace($A, $B)", "std::mem::swap($A, $B)", "Box::leak($A)", "Rc::clone($A)",
    "Arc::clone($A)", "std::process::exit($A)", "std::ptr::null_mut()", "String::from_utf8_lossy($A)",
    "std::env::var($A)", "Vec::with_capacity($A)", "std::thread::spawn($A)", "HashMap::new()",
    "std::fs::read_to_string($A)", "Duration::from_millis($A)", "Instant::now()",
]


def query(label, call, pattern, round_no):
    """The call and ast-grep pattern of one query in one round."""
    if call is not None:
        return call, pattern
    new = NEW_PATTERNS[round_no % len(NEW_PATTERNS)]
    return {"pattern": new, "paths": ["."], "lang": "rust"}, new


def server(staged, corpus, scratch, name, warm):
    """The parameters of one `staged mcp` in `corpus`, writing its pid and stderr to files."""
    pidfile, errfile = scratch / f"{name}.pid", scratch / f"{name}.err"
    script = f'echo $$ > "{pidfile}"; exec "{staged}" mcp --workspace "{corpus}" 2>>"{errfile}"'
    env = dict(os.environ, RUST_LOG="staged_ast_edit=info", STAGED_WARM_INDEX="1" if warm else "0")
    params = StdioServerParameters(command="sh", args=["-c", script], cwd=str(corpus), env=env)
    return params, pidfile, errfile


def peak_rss_mib(pidfile):
    pid = pidfile.read_text().strip()
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def timed_call(client, tool, args):
    started = time.perf_counter()
    result = await client.call_tool(tool, args)
    wall = time.perf_counter() - started
    if result.is_error:
        raise SystemExit(f"{tool} failed: {result.structured_content}")
    if tool == "ast_edit" and result.structured_content["pending"]:
        await client.call_tool("resolve", {"action": "discard", "reason": "benchmark"})
    return wall


def sg_run(sg, corpus, pattern):
    started = time.perf_counter()
    subprocess.run([sg, "run", "-p", pattern, "-l", "rust", "--json=compact", "."], cwd=corpus,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def p(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--staged", required=True)
    ap.add_argument("--sg", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sg-rounds", type=int, default=None,
                    help="time ast-grep in the first N rounds only (default: every round)")
    args = ap.parse_args()
    staged, sg = os.path.abspath(args.staged), os.path.abspath(args.sg)
    corpus = Path(args.corpus).resolve()
    scratch = Path(tempfile.mkdtemp(prefix="staged-warm-bench-"))
    warm_params, warm_pid, warm_err = server(staged, corpus, scratch, "warm", True)
    cold_params, cold_pid, cold_err = server(staged, corpus, scratch, "cold", False)
    times = {(label, who): [] for label, *_ in QUERIES for who in ("warm", "cold", "ast-grep")}
    started = time.perf_counter()
    async with Client(warm_params) as warm, Client(cold_params) as cold:
        # The first calls, before the index is built, are answered the cold way.
        first = await timed_call(warm, "ast_grep", {"pattern": "std::mem::forget($A)", "paths": ["."], "lang": "rust"})
        while "files indexed" not in (warm_err.read_text() if warm_err.exists() else ""):
            await asyncio.sleep(0.2)
        built = time.perf_counter() - started
        sg_rounds = args.rounds if args.sg_rounds is None else args.sg_rounds
        for round_no in range(args.rounds):
            for label, tool, call, pattern in QUERIES:
                call, pattern = query(label, call, pattern, round_no)
                times[(label, "warm")].append(await timed_call(warm, tool, call))
                times[(label, "cold")].append(await timed_call(cold, tool, call))
                if round_no < sg_rounds:
                    times[(label, "ast-grep")].append(sg_run(sg, corpus, pattern))
        rss_warm, rss_cold = peak_rss_mib(warm_pid), peak_rss_mib(cold_pid)
    print(f"corpus {corpus}, {args.rounds} interleaved rounds, staged mcp driven by the Python SDK")
    print()
    print("| query | warm p50 | warm p95 | cold p50 | ast-grep p50 | cold / warm | ast-grep / warm |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, *_ in QUERIES:
        w, c, s = (times[(label, who)] for who in ("warm", "cold", "ast-grep"))
        wm, cm = statistics.median(w), statistics.median(c)
        sm = statistics.median(s) if s else float("nan")
        print(f"| {label} | {wm * 1000:.1f} ms | {p(w, 0.95) * 1000:.1f} ms | {cm * 1000:.1f} ms "
              f"| {sm * 1000:.0f} ms | {cm / wm:.2f}x | {sm / wm:.1f}x |")
    line = [l for l in warm_err.read_text().splitlines() if "files indexed" in l][-1]
    numbers = [int(n) for n in re.findall(r"(\d+) (?:of|files|bytes)", line)]
    print()
    print(f"- index: `{line.split('warm index: ')[-1]}`")
    if len(numbers) >= 4 and numbers[3]:
        print(f"- index bytes per corpus byte: {numbers[2] / numbers[3]:.3f}")
    print(f"- peak RSS: warm server {rss_warm:.0f} MiB, cold server {rss_cold:.0f} MiB")
    print(f"- the first call, before the index was built: {first * 1000:.0f} ms; index built "
          f"{built:.1f} s after the servers started")


if __name__ == "__main__":
    asyncio.run(main())
