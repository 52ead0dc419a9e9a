#!/usr/bin/env python3
"""Issue 23's acceptance: staged's applied result against ast-grep `-U` run to a fixpoint, file for
file, on copies of real corpora, with every difference classified.

A difference is *explained* when staged is right and ast-grep is not, in one of these ways:
  - dropped-tail: ast-grep's CLI replaces a matched node's whole text, where the match ends with
                the pattern: `var $A = $B` (no `;`) over `var a = 1, b = 2;` drops `, b = 2;`,
                the other declarators and the statement's `;`; staged keeps them (ast-grep's
                result is ours with the text after each match, in its node, removed: `;`,
                `,` and further declarators, trailing comments);
  - blank-line: ast-grep re-indents blank lines inside a multi-line capture into whitespace;
                staged leaves them blank (equal once whitespace-only lines are emptied);
  - parse-errors: the file's syntax tree has error nodes: staged skips it (or, with
                `--include-parse-errors`, leaves the matches whose node holds an error), ast-grep
                rewrites it regardless;
  - oversize:   ast-grep's CLI silently skips a file over 3 MB with over 200,000 lines;
and combinations of these. Every other differing file is unexplained, and fails the run.

Usage: bench/acceptance.py --ours target/release/examples/preview --sg .venv/bin/ast-grep \
           --corpus NAME=DIR [--corpus NAME=DIR ...] [--work DIR] [--only NAME]
Not in CI: it copies whole corpora and rewrites them several times.
"""

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import time

# corpus kind | lang | pattern | rewrite | include parse errors
SPECS = [
    ("rust", "rust", "$X.unwrap()", '$X.expect("...")', True),
    ("rust", "rust", "Box::new($A)", "Box::from($A)", False),
    ("js", "js", "var $A = $B", "let $A = $B", False),
    ("js", "js", "$A.indexOf($B) !== -1", "$A.includes($B)", False),
    ("js", "ts", "var $A = $B", "let $A = $B", False),
    ("js", "ts", "$A.indexOf($B) !== -1", "$A.includes($B)", False),
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


def blank(text):
    return re.sub(r"(?m)^[ \t]+$", "", text)


def dropped_tails(ours, theirs):
    """Whether `theirs` is `ours` with runs of text removed, each starting with `;` or `,`:
    ast-grep's CLI replaces a matched node's whole text, where the match (and staged's edit)
    ends with the pattern: `var $A = $B` over `var a = 1, b = 2;` loses `, b = 2;` there."""
    a, b = ours.splitlines(keepends=True), theirs.splitlines(keepends=True)
    lines = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in lines.get_opcodes():
        if tag == "equal":
            continue
        mine, other = "".join(a[i1:i2]), "".join(b[j1:j2])
        # Only deletions (ast-grep lost text, added none), each starting at a `;` or `,` or at
        # the blank before a trailing comment (`= 0 /* None */;`), and holding a `;` or `,`
        # between them; the aligner may split a lost run at a line break it reuses.
        ops = [op for op in difflib.SequenceMatcher(None, mine, other, autojunk=False).get_opcodes()
               if op[0] != "equal"]
        if not ops or any(op[0] != "delete" for op in ops):
            return False
        lost = "".join(mine[k1:k2] for _, k1, k2, _, _ in ops)
        if any(mine[k1] not in ";, \t\n" for _, k1, _, _, _ in ops) or not any(c in lost for c in ";,"):
            return False
    return True


def oversize(path):
    size = os.path.getsize(path)
    if size <= 3_000_000:
        return False
    with open(path, "rb") as fh:
        return fh.read().count(b"\n") > 200_000


def classify(rel, a, b, orig, issues, errfiles):
    pa, pb, po = (os.path.join(x, rel) for x in (a, b, orig))
    ours = open(pa, encoding="utf-8", errors="replace").read()
    theirs = open(pb, encoding="utf-8", errors="replace").read()
    if rel in issues or rel in errfiles:
        return "parse-errors"
    if oversize(po) and theirs == open(po, encoding="utf-8", errors="replace").read():
        return "oversize"
    if blank(ours) == blank(theirs):
        return "blank-line"
    if dropped_tails(ours, theirs):
        return "dropped-tail"
    if dropped_tails(blank(ours), blank(theirs)):
        return "dropped-tail+blank-line"
    return None


def run(args, corpus_name, corpus_dir, spec):
    kind, lang, pat, rew, include = spec
    a, b, orig = (os.path.join(args.work, x) for x in ("a", "b", "orig"))
    shutil.rmtree(args.work, ignore_errors=True)
    copy_lang(corpus_dir, orig, lang)
    if not os.path.isdir(orig):
        return None
    shutil.copytree(orig, a)
    shutil.copytree(orig, b)
    cmd = [args.ours, "--root", a, "--lang", lang, "--pattern", pat, "--rewrite", rew, "--apply"]
    if include:
        cmd.append("--include-parse-errors")
    started = time.monotonic()
    out = subprocess.run(cmd + ["."], capture_output=True, text=True)
    ours_s = time.monotonic() - started
    summary = json.loads(out.stdout or "{}")
    if "error" in summary:
        return dict(corpus=corpus_name, lang=lang, pat=pat, error=summary["error"].splitlines()[0])
    issues = {i.split(": ", 1)[0] for i in summary.get("parseIssues") or []}
    errfiles = {f["path"] for f in summary.get("errorFiles") or [] if f["matchesSkipped"]}
    rounds, started = 0, time.monotonic()
    while rounds < 20:
        found = subprocess.run([args.sg, "run", "-p", pat, "-l", lang, "--json=compact", b],
                               capture_output=True, text=True)
        if not json.loads(found.stdout or "[]"):
            break
        subprocess.run([args.sg, "run", "-p", pat, "-r", rew, "-l", lang, "-U", b], capture_output=True)
        rounds += 1
    sg_s = time.monotonic() - started
    kinds, unexplained, differing = {}, [], 0
    for d, dirs, files in os.walk(a):
        dirs[:] = [x for x in dirs if x != ".staged"]
        for f in files:
            pa = os.path.join(d, f)
            rel = os.path.relpath(pa, a)
            if open(pa, "rb").read() == open(os.path.join(b, rel), "rb").read():
                continue
            differing += 1
            why = classify(rel, a, b, orig, issues, errfiles)
            if why is None:
                unexplained.append(rel)
            else:
                kinds[why] = kinds.get(why, 0) + 1
    touched = summary["filesTouched"]
    # `git diff --check` on our result: no whitespace error added (a blank line made whitespace);
    # `cr-at-eol`, since the `\r` of a CRLF file is its own line ending, not one we added.
    shutil.rmtree(os.path.join(a, ".staged"), ignore_errors=True)
    check = subprocess.run(["git", "-c", "core.whitespace=cr-at-eol", "diff", "--no-index", "--check", orig, a], capture_output=True, text=True)
    ws_errors = sum(1 for line in check.stdout.splitlines() if "trailing whitespace" in line)
    check = subprocess.run(["git", "-c", "core.whitespace=cr-at-eol", "diff", "--no-index", "--check", orig, b], capture_output=True, text=True)
    sg_ws_errors = sum(1 for line in check.stdout.splitlines() if "trailing whitespace" in line)
    return dict(corpus=corpus_name, lang=lang, pat=pat, include=include,
                replacements=summary["totalReplacements"], files=touched, rounds=rounds,
                differing=differing, kinds=kinds, unexplained=unexplained,
                skipped=summary.get("errorFilesSkipped", 0),
                nested_left=sum(n["inner"] for n in summary.get("nestedLeft") or []),
                ws_errors=ws_errors, sg_ws_errors=sg_ws_errors, ours_s=ours_s, sg_s=sg_s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--sg", required=True)
    ap.add_argument("--corpus", action="append", required=True, help="NAME=DIR; NAME rust or js-like")
    ap.add_argument("--work", default=os.path.join(os.path.dirname(__file__), "work", "acceptance"))
    ap.add_argument("--only", help="run only the specs whose pattern contains this")
    args = ap.parse_args()
    rows, failed = [], False
    for entry in args.corpus:
        name, _, directory = entry.partition("=")
        kind = "rust" if name == "rust" or name == "registry" else "js"
        for spec in SPECS:
            if spec[0] != kind or (args.only and args.only not in spec[2]):
                continue
            row = run(args, name, directory, spec)
            if row is None:
                continue
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            failed |= bool(row.get("error") or row["unexplained"] or row["rounds"] == 20 or row["ws_errors"])
    shutil.rmtree(args.work, ignore_errors=True)
    print("| corpus | lang | pattern | ours: replacements in files | ast-grep runs to fixpoint | files differing | explained | unexplained | files skipped (parse errors) | nested left | `git diff --check` ours / ast-grep |")
    print("|---|---|---|---|---:|---:|---|---|---:|---:|---|")
    for r in rows:
        if r.get("error"):
            print(f"| {r['corpus']} | {r['lang']} | `{r['pat']}` | refused: {r['error']} | | | | | | | |")
            continue
        pat = r["pat"] + (" (--include-parse-errors)" if r["include"] else "")
        kinds = ", ".join(f"{v} {k}" for k, v in sorted(r["kinds"].items())) or "0"
        unexplained = "0" if not r["unexplained"] else f"{len(r['unexplained'])}: {', '.join(r['unexplained'][:3])}"
        print(f"| {r['corpus']} | {r['lang']} | `{pat}` | {r['replacements']} in {r['files']} | {r['rounds']} | {r['differing']} | {kinds} | {unexplained} | {r['skipped']} | {r['nested_left']} | {r['ws_errors']} / {r['sg_ws_errors']} |")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
