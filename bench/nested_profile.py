#!/usr/bin/env python3
"""Where a preview's CPU time goes, from `perf script` output: each sample is put in one
bucket by the functions on its stack (parsing each file once, parsing again for nested
matches, freeing syntax trees, matching, ...), and the buckets are printed with their share.

Used for the nested rows of the speed issue, before and after nested rewrites reparsed
incrementally (bench/RESULTS.md):

    perf record -F 999 -g --call-graph dwarf,65528 -o P.data \\
        target/release/examples/preview --root bench/corpus/js --lang js \\
        --pattern '$A.length' --rewrite 'len($A)' . >/dev/null
    perf script -i P.data | python3 bench/nested_profile.py

The stacks must be deep (`dwarf,65528`): with shorter ones tree-sitter's frames hide the
caller that tells a first parse from a second.
"""
import collections
import sys

NESTED = ("nesting::compose", "compose_edits", "rematch", "edit_tree")
PARSING = ("ts_parser_parse", "ts_parser__", "ts_lexer")


def bucket(frames):
    stack = " | ".join(frames)
    if "tree_reaper" in stack or "source::dispose" in stack or "ts_tree_delete" in stack:
        return "freeing syntax trees"
    parsing = any(p in stack for p in PARSING)
    nested = any(n in stack for n in NESTED)
    if parsing and nested:
        return "parsing again for nested matches"
    if parsing:
        return "parsing each file once"
    if nested:
        return "composing nested matches (besides parsing)"
    if "each_match" in stack or "segment_edits" in stack or "match_tree" in stack:
        return "matching"
    if "read_text" in stack or "prefilter" in stack or "active_rules" in stack:
        return "reading and prefiltering"
    if "scope::" in stack:
        return "listing files"
    return "other"


def main():
    counts, total, frames = collections.Counter(), 0, []
    for line in list(sys.stdin) + [""]:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                counts[bucket(frames)] += 1
                total += 1
            frames = []
        elif line[0] in " \t":
            parts = line.strip().split(" ", 1)
            if len(parts) == 2:
                frames.append(parts[1])
        else:
            frames = []
    print(f"{total} samples")
    for name, n in counts.most_common():
        print(f"- {name}: {n} ({100 * n / max(total, 1):.1f}%)")


if __name__ == "__main__":
    main()
