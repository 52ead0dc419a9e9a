#!/usr/bin/env python3
"""The memory a long-running `staged mcp` keeps after one big preview: starts the server on
WORKSPACE, stages one `ast_edit` of FILE (`foo($A, $B)` -> `bar($B, $A)`, the rewrite of
bench/bigfile.sh), prints the server's RSS at 0.5, 3, 10, 20 and 40 seconds after the answer,
then discards the preview.

Usage: idle_rss.py STAGED WORKSPACE FILE
(for the 100 MB row: python3 bench/bigfile.py W/big.js 100000000 1000000 8)
"""
import json
import subprocess
import sys
import time


def main():
    staged, workspace, file = sys.argv[1:4]
    server = subprocess.Popen([staged, "mcp", "--workspace", workspace], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def call(ident, method, params):
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n").encode())
        server.stdin.flush()
        while True:
            line = server.stdout.readline()
            if not line:
                sys.exit("the server closed its output")
            msg = json.loads(line)
            if msg.get("id") == ident:
                return msg

    def rss_mib():
        with open(f"/proc/{server.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) // 1024
        return -1

    call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "idle_rss", "version": "0"}})
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    server.stdin.flush()
    started = time.time()
    answer = call(2, "tools/call", {"name": "ast_edit", "arguments": {
        "ops": [{"pat": "foo($A, $B)", "out": "bar($B, $A)"}], "lang": "javascript", "paths": [file]}})
    print("preview: %.1f s, isError=%s" % (time.time() - started, answer.get("result", {}).get("isError")))
    answered = time.time()
    samples = []
    for at in (0.5, 3, 10, 20, 40):
        time.sleep(max(0.0, at - (time.time() - answered)))
        samples.append(f"{at} s: {rss_mib()} MiB")
    print("RSS after the answer: " + ", ".join(samples))
    call(3, "tools/call", {"name": "resolve", "arguments": {"action": "discard", "reason": "idle_rss"}})
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
