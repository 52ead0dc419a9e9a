#!/usr/bin/env python3
"""Writes one big JavaScript file, the same bytes on every run, for the one-big-file rows of
bench/bigfile.sh: MATCHES calls `foo(<i>, "<pad>")`, PER_LINE to a line, padded so that the
file is about SIZE bytes.

ast-grep's CLI silently skips a file over 3 MB that also has over 200,000 lines, so PER_LINE
must keep the line count at or under that for the comparison to mean anything.

Usage: bigfile.py OUT SIZE MATCHES PER_LINE
"""
import sys


def main():
    out, size, matches, per_line = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    lines = -(-matches // per_line)
    if size > 3_000_000 and lines > 200_000:
        sys.exit(f"{lines} lines: ast-grep would skip this file; raise PER_LINE")
    # `foo(i, "pad");` and a space or newline is 11 bytes plus the digits and the pad.
    digits = len(str(matches - 1))
    pad = max(1, size // matches - 11 - digits)
    with open(out, "w", encoding="ascii", newline="\n") as f:
        i = 0
        for _ in range(lines):
            calls = []
            for _ in range(min(per_line, matches - i)):
                # The pad varies with i so that lines are not all alike, as in real code.
                calls.append(f'foo({i}, "{chr(97 + i % 26) * pad}");')
                i += 1
            f.write(" ".join(calls) + "\n")


if __name__ == "__main__":
    main()
