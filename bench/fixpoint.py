#!/usr/bin/env python3
"""Differential test on real corpora: one staged preview against ast-grep iterated to a fixpoint.

For rewrites whose output matches no pattern, composing nested matches (what `ast_edit` does)
must give what `ast-grep run -U`, repeated until nothing matches, gives: ast-grep rewrites the
outermost of nested matches and leaves the inner ones to the next run. Files with syntax errors
are skipped by staged (reported as parse issues) and rewritten by ast-grep, so they are counted
apart; every other differing file is a failure.

Usage: bench/fixpoint.py --ours PREVIEW_EXAMPLE --sg AST_GREP --corpus DIR [--work DIR]
Run by bench/compare.sh (not in CI: it copies and rewrites whole corpora several times).
"""

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys

# corpus | lang | pattern | rewrite: each nests in real code, and no output matches its pattern.
SPECS = [
    ("rust", "rust", "Box::new($A)", "Box::from($A)"),
    ("rust", "rust", "$X.unwrap()", '$X.expect("fixpoint")'),
    ("rust", "rust", "$A.clone()", "$A.to_owned()"),
    ("js", "js", "$A.then($B)", "$A.andThen($B)"),
    ("js", "ts", "Array<$T>", "ReadonlyArray<$T>"),
]

EXTS = {"rust": (".rs",), "js": (".js", ".mjs", ".cjs", ".jsx"), "ts": (".ts", ".mts", ".cts")}


def copy_lang(src, dst, lang):
    for d, dirs, files in os.walk(src):
        dirs[:] = [x for x in dirs if x not in (".git", "node_modules")]
        for f in files:
            s = os.path.join(d, f)
            if f.endswith(EXTS[lang]) and not os.path.islink(s):
                t = os.path.join(dst, os.path.relpath(s, src))
                os.makedirs(os.path.dirname(t), exist_ok=True)
                shutil.copy2(s, t)


def differing(a, b):
    res = []
    for d, dirs, files in os.walk(a):
        dirs[:] = [x for x in dirs if x != ".staged"]
        for f in files:
            pa = os.path.join(d, f)
            rel = os.path.relpath(pa, a)
            if not filecmp.cmp(pa, os.path.join(b, rel), shallow=False):
                res.append(rel)
    return sorted(res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--sg", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--work", default=os.path.join(os.path.dirname(__file__), "work", "fixpoint"))
    args = ap.parse_args()
    rows, failed = [], False
    for corpus, lang, pat, rew in SPECS:
        a, b = os.path.join(args.work, "a"), os.path.join(args.work, "b")
        shutil.rmtree(args.work, ignore_errors=True)
        copy_lang(os.path.join(args.corpus, corpus), a, lang)
        shutil.copytree(a, b)
        out = subprocess.run(
            [args.ours, "--root", a, "--lang", lang, "--pattern", pat, "--rewrite", rew, "--apply", "."],
            capture_output=True, text=True,
        )
        summary = json.loads(out.stdout or "{}")
        if "error" in summary:
            rows.append((corpus, lang, pat, "ours refused: " + summary["error"].splitlines()[0], "", "", ""))
            failed = True
            continue
        issues = {i.split(": ", 1)[0] for i in summary.get("parseIssues") or []}
        rounds = 0
        while rounds < 20:
            found = subprocess.run(
                [args.sg, "run", "-p", pat, "-l", lang, "--json=compact", b], capture_output=True, text=True
            )
            if not json.loads(found.stdout or "[]"):
                break
            subprocess.run([args.sg, "run", "-p", pat, "-r", rew, "-l", lang, "-U", b], capture_output=True)
            rounds += 1
        diff = differing(a, b)
        explained = [f for f in diff if f in issues]
        unexplained = [f for f in diff if f not in issues]
        failed |= bool(unexplained) or rounds == 20
        rows.append((
            corpus, lang, pat, str(summary["totalReplacements"]), str(rounds),
            f"{len(explained)} (files with syntax errors, skipped by staged)",
            "0" if not unexplained else f"{len(unexplained)}: {', '.join(unexplained[:3])}",
        ))
    shutil.rmtree(args.work, ignore_errors=True)
    print("| corpus | lang | pattern | our replacements | ast-grep runs to fixpoint | differing, explained | differing, unexplained |")
    print("|---|---|---|---:|---:|---|---|")
    for row in rows:
        print("| " + " | ".join(row[:2]) + f" | `{row[2]}` | " + " | ".join(row[3:]) + " |")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
