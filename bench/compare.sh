#!/usr/bin/env bash
# Benchmarks staged-ast-edit's preview against `ast-grep run` (ast-grep-cli 0.51.1, the same
# version as the crates we build on), on corpora anyone can rebuild from the registries:
#   rust: the crate sources cargo downloaded for this workspace (~/.cargo/registry/src);
#   js:   the typescript (5.x, the last release written in TypeScript) and @types/node packages
#         from npm.
# For each pattern it reports the median wall time of both tools (hyperfine), their ratio, our
# time when the preview also renders per-file unified diffs (`--diff`, what the ast_edit tool
# shows), and peak RSS (/usr/bin/time -v); then it applies the rewrite with both tools on copies
# of the corpus and diffs the results. Parse issues (files with syntax errors, which we skip
# like the reference does) are counted in results/summary-N.json.
#
# Usage: bench/compare.sh [--quick]     (--quick: 3 runs instead of 5, no correctness pass)
# Env:   CARGO_TARGET_DIR is honoured; RUNS overrides the run count; ONLY=rust or ONLY=js
#        restricts the run to one corpus.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CORPUS="$HERE/corpus"
VENV="$HERE/.venv"
RESULTS="$HERE/results"
WORK="$HERE/work"
RUNS="${RUNS:-5}"
CHECK=1
if [[ "${1:-}" == "--quick" ]]; then RUNS="${RUNS:-3}"; CHECK=0; fi
mkdir -p "$CORPUS" "$RESULTS" "$WORK"

log() { printf '[compare] %s\n' "$*" >&2; }

# --- tools ------------------------------------------------------------------------------
if ! command -v hyperfine >/dev/null || [[ ! -x /usr/bin/time ]]; then
  log "installing hyperfine and time (apt)"
  apt-get update -qq && apt-get install -y -qq hyperfine time >/dev/null
fi
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
  log "building the js/ts corpus from npm (typescript, @types/node)"
  mkdir -p "$WORK/npm"
  (cd "$WORK/npm" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund typescript@5 @types/node >/dev/null)
  # Copied out of node_modules so that neither tool skips them.
  mkdir -p "$CORPUS/js"
  cp -r "$WORK/npm/node_modules/typescript" "$CORPUS/js/typescript"
  cp -r "$WORK/npm/node_modules/@types/node" "$CORPUS/js/types-node"
fi

# --- patterns: corpus|lang|kind|pattern|rewrite -------------------------------------------
# Broad patterns are chosen so that matches cannot nest: we refuse overlapping edits at
# preview (ast-grep silently drops the inner one), which would make the runs incomparable.
PATTERNS=(
  "rust|rust|selective|from_utf8_unchecked(\$A)|from_utf8_checked(\$A)"
  "rust|rust|selective|mem::forget(\$A)|std::mem::forget(\$A)"
  "rust|rust|broad|use \$A;|pub(crate) use \$A;"
  "rust|rust|broad|#[derive(\$\$\$A)]|#[derive(Clone, \$\$\$A)]"
  "js|js|selective|getJSDocDeprecatedTag(\$A)|getDeprecatedTag(\$A)"
  "js|js|broad|Debug.assert(\$\$\$A)|Debug.check(\$\$\$A)"
  "js|ts|selective|interface ErrnoException extends \$B { \$\$\$C }|interface ErrnoError extends \$B { \$\$\$C }"
  "js|ts|broad|function \$F(\$\$\$P): \$R;|function \$F(\$\$\$P): (\$R);"
)

peak_kb() { # command... -> peak RSS in KiB
  /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'
}

median_ms() { # hyperfine json, command index -> median ms
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(round(d["results"][int(sys.argv[2])]["median"]*1000,1))' "$1" "$2"
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
  echo "| corpus | lang | kind | pattern | ours ms | ast-grep ms | speed-up | ours +diff ms | ours peak MiB | ast-grep peak MiB | replacements (ours/ast-grep) | applied output equal |"
  echo "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|"
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
  hf="$WORK/hf.json"
  hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$hf" \
    "$(printf '%q ' "${ours_cmd[@]}")" "$(printf '%q ' "${sg_cmd[@]}")" "$(printf '%q ' "${ours_cmd[@]}") --diff" >/dev/null
  ours_ms="$(median_ms "$hf" 0)"; sg_ms="$(median_ms "$hf" 1)"; diff_ms="$(median_ms "$hf" 2)"
  ratio="$(python3 -c "print(f'{$sg_ms/$ours_ms:.2f}x')")"
  ours_kb="$(peak_kb "${ours_cmd[@]}")"; sg_kb="$(peak_kb "${sg_cmd[@]}")"
  equal="skipped"
  if [[ "$CHECK" == 1 ]]; then
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
  printf '| %s | %s | %s | `%s` | %s | %s | %s | %s | %s | %s | %s / %s | %s |\n' \
    "$corpus" "$lang" "$kind" "$pat" "$ours_ms" "$sg_ms" "$ratio" "$diff_ms" \
    "$((ours_kb / 1024))" "$((sg_kb / 1024))" "$ours_n" "$sg_n" "$equal" >> "$REPORT"
done
rm -rf "$WORK/a" "$WORK/b"
cat "$REPORT"
