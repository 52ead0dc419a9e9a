#!/usr/bin/env bash
# Benchmarks staged-ast-edit's preview against `ast-grep run` (ast-grep-cli 0.51.1, the same
# version as the crates we build on), on corpora anyone can rebuild from the registries:
#   rust: the crate sources cargo downloaded for this workspace (~/.cargo/registry/src);
#   js:   the typescript (5.x, the last release written in TypeScript), @types/node, eslint 9,
#         webpack 5, rxjs 7 and lodash 4 packages from npm.
# ast-grep silently skips every file over 3 MB that also has over 200,000 lines (its CLI's
# MAX_FILE_SIZE/MAX_LINE_COUNT; typescript/lib/typescript.js is one); we search such files. So
# that both tools do the same work, those files are moved out of the timed corpus, to
# corpus/js-oversize, and listed in results/oversize.txt.
#
# For each pattern it reports the median wall time of both tools, timed in interleaved rounds
# (bench/interleave.py: ours, ast-grep, ours --diff, ours, ...; a slow phase of a shared machine
# hits all three alike), the median ratio of the paired runs, our time when the preview also
# renders per-file unified diffs (`--diff`, what the ast_edit tool shows), and peak RSS (wait4);
# then it applies the rewrite with both tools on copies of the corpus and diffs the results.
# Parse issues (files with syntax errors, which ast_edit skips: docs/contract/ast-edit.md) are
# counted in results/summary-N.json.
#
# Then bench/bigfile.sh times whole `staged ast-edit` commands on one big generated file (1 to
# 100 MB, one match every 40 to 100 bytes) against ast-grep, and the database's growth.
#
# Usage: bench/compare.sh [--quick]     (--quick: 3 runs instead of 5, no correctness pass, and
#                                        no 100 MB big-file row)
# Env:   CARGO_TARGET_DIR is honoured; RUNS overrides the run count; ONLY=rust, ONLY=js or
#        ONLY=big restricts the run to one corpus (big: the big-file rows only).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CORPUS="$HERE/corpus"
VENV="$HERE/.venv"
RESULTS="$HERE/results"
WORK="$HERE/work"
CHECK=1
QUICK=0
if [[ "${1:-}" == "--quick" ]]; then RUNS="${RUNS:-3}"; CHECK=0; QUICK=1; fi
if [[ "${ONLY:-}" == big ]]; then QUICK="$QUICK" RUNS="${RUNS:-5}" exec bash "$HERE/bigfile.sh"; fi
RUNS="${RUNS:-5}"
mkdir -p "$CORPUS" "$RESULTS" "$WORK"

log() { printf '[compare] %s\n' "$*" >&2; }

# --- tools ------------------------------------------------------------------------------
if [[ ! -x "$VENV/bin/ast-grep" ]]; then
  log "installing ast-grep-cli==0.51.1 into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q 'ast-grep-cli==0.51.1'
fi
SG="$VENV/bin/ast-grep"
log "$("$SG" --version)"

log "building the preview example (release)"
(cd "$ROOT" && cargo build -q --release -p staged-ast-edit --example preview)
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
OURS="$TARGET_DIR/release/examples/preview"

# --- corpora ----------------------------------------------------------------------------
if [[ ! -d "$CORPUS/rust" ]]; then
  log "building the rust corpus from the cargo registry"
  (cd "$ROOT" && cargo fetch -q)
  mkdir -p "$CORPUS/rust"
  for src in "$HOME"/.cargo/registry/src/*/; do cp -r "$src"/. "$CORPUS/rust/"; done
fi
if [[ ! -d "$CORPUS/js" ]]; then
  log "building the js/ts corpus from npm (typescript, @types/node, eslint, webpack, rxjs, lodash)"
  mkdir -p "$WORK/npm"
  (cd "$WORK/npm" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund \
    typescript@5 @types/node eslint@9 webpack@5 rxjs@7 lodash@4 >/dev/null)
  # Copied out of node_modules so that neither tool skips them.
  mkdir -p "$CORPUS/js"
  cp -r "$WORK/npm/node_modules/typescript" "$CORPUS/js/typescript"
  cp -r "$WORK/npm/node_modules/@types/node" "$CORPUS/js/types-node"
  for pkg in eslint webpack rxjs lodash; do cp -r "$WORK/npm/node_modules/$pkg" "$CORPUS/js/$pkg"; done
  # Files ast-grep would silently skip (see above) leave the timed corpus.
  python3 - "$CORPUS/js" "$CORPUS/js-oversize" "$RESULTS/oversize.txt" <<'PY'
import os, shutil, sys
src, dst, listing = sys.argv[1:]
moved = []
for d, _, files in os.walk(src):
    for f in files:
        p = os.path.join(d, f)
        if os.path.islink(p) or os.path.getsize(p) <= 3_000_000:
            continue
        with open(p, "rb") as fh:
            lines = fh.read().count(b"\n")
        if lines > 200_000:
            t = os.path.join(dst, os.path.relpath(p, src))
            os.makedirs(os.path.dirname(t), exist_ok=True)
            shutil.move(p, t)
            moved.append(f"{os.path.relpath(p, src)} ({os.path.getsize(t)} bytes, {lines} lines)")
with open(listing, "w") as out:
    out.write("\n".join(moved) + "\n")
PY
fi

# --- patterns: corpus|lang|kind|pattern|rewrite -------------------------------------------
# Broad patterns are chosen so that matches cannot nest: nested matches compose in one staged
# preview, while one ast-grep run rewrites only the outer one, so the applied outputs would
# differ by design; bench/fixpoint.py compares those against ast-grep run to a fixpoint.
PATTERNS=(
  "rust|rust|selective|from_utf8_unchecked(\$A)|from_utf8_checked(\$A)"
  "rust|rust|selective|mem::forget(\$A)|std::mem::forget(\$A)"
  "rust|rust|broad|use \$A;|pub(crate) use \$A;"
  "rust|rust|broad|#[derive(\$\$\$A)]|#[derive(Clone, \$\$\$A)]"
  "js|js|selective|util.deprecate(\$\$\$A)|deprecate(\$\$\$A)"
  "js|js|selective|getJSDocDeprecatedTag(\$A)|getDeprecatedTag(\$A)"
  "js|js|broad|Debug.assert(\$\$\$A)|Debug.check(\$\$\$A)"
  "js|ts|selective|interface ErrnoException extends \$B { \$\$\$C }|interface ErrnoError extends \$B { \$\$\$C }"
  "js|ts|broad|function \$F(\$\$\$P): \$R;|function \$F(\$\$\$P): (\$R);"
)

field() { # interleave.py json, command index, key -> value
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])][sys.argv[3]])' "$1" "$2" "$3"
}

copy_lang() { # src dst lang: copies only the files of that language (what both tools search)
  python3 - "$1" "$2" "$3" <<'PY'
import os, shutil, sys
src, dst, lang = sys.argv[1:]
exts = {"rust": (".rs",), "js": (".js", ".mjs", ".cjs", ".jsx"), "ts": (".ts", ".mts", ".cts")}[lang]
for d, dirs, files in os.walk(src):
    dirs[:] = [x for x in dirs if x not in (".git", "node_modules")]
    for f in files:
        if f.endswith(exts):
            s = os.path.join(d, f)
            if os.path.islink(s):
                continue
            t = os.path.join(dst, os.path.relpath(s, src))
            os.makedirs(os.path.dirname(t), exist_ok=True)
            shutil.copy2(s, t)
PY
}

REPORT="$RESULTS/latest${ONLY:+-$ONLY}.md"
{
  echo "| corpus | lang | kind | pattern | ours s | ast-grep s | speed-up (median of paired runs) | ours +diff s | ours peak MiB | ast-grep peak MiB | replacements (ours/ast-grep) | same edits without prefilter | applied output equal |"
  echo "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|"
} > "$REPORT"

idx=0
for spec in "${PATTERNS[@]}"; do
  idx=$((idx + 1))
  IFS='|' read -r corpus lang kind pat rew <<<"$spec"
  if [[ -n "${ONLY:-}" && "$ONLY" != "$corpus" ]]; then continue; fi
  dir="$CORPUS/$corpus"
  log "$corpus/$lang $kind: $pat"
  ours_cmd=("$OURS" --root "$dir" --lang "$lang" --pattern "$pat" --rewrite "$rew" .)
  sg_cmd=("$SG" run -p "$pat" -r "$rew" -l "$lang" --json=compact "$dir")
  ours_summary="$("${ours_cmd[@]}" || true)"
  echo "$ours_summary" > "$RESULTS/summary-$idx.json"
  ours_n="$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d.get("totalReplacements", "error: "+d.get("error","?").splitlines()[0]))' "$ours_summary")"
  sg_n="$("${sg_cmd[@]}" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
  t="$WORK/times.json"
  python3 "$HERE/interleave.py" "$RUNS" 0 \
    "$(printf '%q ' "${ours_cmd[@]}")" "$(printf '%q ' "${sg_cmd[@]}")" "$(printf '%q ' "${ours_cmd[@]}") --diff" > "$t"
  cp "$t" "$RESULTS/times-$idx.json"
  ours_s="$(field "$t" 0 median_wall_s)"; sg_s="$(field "$t" 1 median_wall_s)"; diff_s="$(field "$t" 2 median_wall_s)"
  ratio="$(field "$t" 0 paired_ratio_second_over_first)x"
  ours_mib="$(field "$t" 0 peak_rss_mib)"; sg_mib="$(field "$t" 1 peak_rss_mib)"
  equal="skipped"; unfiltered="skipped"
  if [[ "$CHECK" == 1 ]]; then
    # The prefilter (needles, subtree pruning) must change no edit.
    plain="$("${ours_cmd[@]}" --no-prefilter || true)"
    unfiltered="$(python3 -c 'import json,sys; a,b=(json.loads(x) for x in sys.argv[1:]); print("yes" if a.get("editsDigest")==b.get("editsDigest") and a.get("error")==b.get("error") else "NO")' "$ours_summary" "$plain")"
    rm -rf "$WORK/a" "$WORK/b"
    copy_lang "$dir" "$WORK/a" "$lang"; cp -r "$WORK/a" "$WORK/b"
    if "$OURS" --root "$WORK/a" --lang "$lang" --pattern "$pat" --rewrite "$rew" --apply . >/dev/null; then
      "$SG" run -p "$pat" -r "$rew" -l "$lang" -U "$WORK/b" >/dev/null
      # .staged is our state folder (journal); it is not part of the output.
      ndiff="$( (diff -r -q -x .staged "$WORK/a" "$WORK/b" || true) | tee "$RESULTS/diff-$idx.txt" | wc -l)"
      if [[ "$ndiff" == 0 ]]; then equal="yes"; else equal="NO: $ndiff file(s) differ (results/diff-$idx.txt)"; fi
    else
      equal="ours refused (overlap)"
    fi
  fi
  printf '| %s | %s | %s | `%s` | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s |\n' \
    "$corpus" "$lang" "$kind" "$pat" "$ours_s" "$sg_s" "$ratio" "$diff_s" \
    "$ours_mib" "$sg_mib" "$ours_n" "$sg_n" "$unfiltered" "$equal" >> "$REPORT"
done
rm -rf "$WORK/a" "$WORK/b"
cat "$REPORT"
if [[ "$CHECK" == 1 && -z "${ONLY:-}" ]]; then
  log "nested matches: one preview against ast-grep run to a fixpoint (bench/fixpoint.py)"
  python3 "$HERE/fixpoint.py" --ours "$OURS" --sg "$SG" --corpus "$CORPUS" | tee "$RESULTS/fixpoint.md"
fi
if [[ -z "${ONLY:-}" ]]; then QUICK="$QUICK" RUNS="$RUNS" bash "$HERE/bigfile.sh"; fi
