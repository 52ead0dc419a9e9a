"""The round trip of a plugin tool call through `staged mcp`, against a direct call to the same
plugin, both with the official MCP Python SDK client over stdio.

The plugin is `crates/plugin/tests/python/plugins/lab.py` (on the Python helper); the tool is
its `echo`, which stages nothing, so what is measured is staged's proxying: its MCP server,
the tool dispatch, a read of the pending stack, and its MCP client to the plugin.

    python bench/plugin_roundtrip.py --staged target/release/staged
        Starts both clients once, then runs rounds of calls alternately (direct, staged, ...)
        and prints the median per-call time of each, the paired ratio staged/direct (one
        ratio per round, their median) and the median added milliseconds per call.

    python bench/plugin_roundtrip.py --staged target/release/staged --mode staged --calls N
    python bench/plugin_roundtrip.py --mode direct --calls N
        One client, N calls, then exit: whole-process commands to time from outside (with two
        values of N, the difference of the differences is the per-call cost without start-up).

Run it with a Python that has `mcp` and `crates/plugin/helpers/python` installed (scripts/test
sets up target/mcp-venv).
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
PLUGIN = [sys.executable, str(REPO / "crates/plugin/tests/python/plugins/lab.py")]


def direct_params(workdir):
    return StdioServerParameters(command=PLUGIN[0], args=PLUGIN[1:], cwd=str(workdir))


def staged_params(staged, workdir):
    config = Path(workdir) / "config" / "staged"
    config.mkdir(parents=True, exist_ok=True)
    command = ", ".join(f'"{part}"' for part in PLUGIN)
    (config / "staged.toml").write_text(f"[plugins.lab]\ncommand = [{command}]\n")
    root = Path(workdir) / "repo"
    root.mkdir(exist_ok=True)
    env = dict(os.environ, XDG_CONFIG_HOME=str(Path(workdir) / "config"))
    env.pop("STAGED_PLUGIN_LOG", None)
    return StdioServerParameters(command=staged, args=["--workspace", str(root), "mcp"], cwd=str(root), env=env)


async def calls(client, n):
    """Per-call seconds of `n` echo calls."""
    res = []
    for idx in range(n):
        start = time.perf_counter()
        out = await client.call_tool("echo", {"text": f"ping {idx}"})
        res.append(time.perf_counter() - start)
        assert not out.is_error, out
    return res


async def one(params, n):
    async with Client(params) as client:
        await calls(client, n)


async def paired(staged, rounds, per_round):
    with tempfile.TemporaryDirectory() as tmp:
        async with Client(direct_params(tmp)) as direct, Client(staged_params(staged, tmp)) as via:
            await calls(direct, 50)  # warm-up: imports, caches, the plugin behind staged started
            await calls(via, 50)
            ratios, added, all_direct, all_staged = [], [], [], []
            for _ in range(rounds):
                d = statistics.median(await calls(direct, per_round))
                s = statistics.median(await calls(via, per_round))
                ratios.append(s / d)
                added.append((s - d) * 1000)
                all_direct.append(d)
                all_staged.append(s)
    print(f"rounds: {rounds} x {per_round} calls each way, alternating")
    print(f"direct per call:      median {statistics.median(all_direct) * 1000:.3f} ms "
          f"(min {min(all_direct) * 1000:.3f}, max {max(all_direct) * 1000:.3f})")
    print(f"through staged:       median {statistics.median(all_staged) * 1000:.3f} ms "
          f"(min {min(all_staged) * 1000:.3f}, max {max(all_staged) * 1000:.3f})")
    print(f"paired ratio staged/direct: median {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")
    print(f"added per call:       median {statistics.median(added):.3f} ms "
          f"(min {min(added):.3f}, max {max(added):.3f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--staged", default=str(REPO / "target/release/staged"))
    parser.add_argument("--mode", choices=["paired", "staged", "direct"], default="paired")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--per-round", type=int, default=200)
    args = parser.parse_args()
    staged = str(Path(args.staged).resolve())
    if args.mode == "paired":
        asyncio.run(paired(staged, args.rounds, args.per_round))
        return
    with tempfile.TemporaryDirectory() as tmp:
        params = staged_params(staged, tmp) if args.mode == "staged" else direct_params(tmp)
        asyncio.run(one(params, args.calls))


if __name__ == "__main__":
    main()
