#!/usr/bin/env bash
# One big file with many matches: `staged ast-edit` (the whole command: preview, diff, staging in
# the SQLite stack, printing the diff) against `ast-grep run --json=compact` (ast-grep-cli
# 0.51.1, as in compare.sh), on JavaScript files that bench/bigfile.py writes the same way on
# every run: calls `foo(<i>, "<pad>")`, rewritten to `bar("<pad>", <i>)`.
#
# Rows (size, matches, calls a line): 1 MB/25k/1, 4 MB/100k/1, 8 MB/200k/1 and, unless QUICK=1,
# 100 MB/1M/8 (ast-grep skips a file over 3 MB with over 200,000 lines, hence 8 calls a line).
# Each pair is timed in interleaved rounds (bench/interleave.py: ast-grep, ours, ast-grep, ...);
# the ratio is ours over ast-grep, the median of the paired rounds; peak RSS is wait4's.
# Then 20 previews of the 4 MB file are staged in a fresh workspace and the database's size is
# reported (each preview keeps its diff, compressed).
#
# Usage: bench/bigfile.sh          Env: RUNS (default 5; 3 for the 100 MB row), QUICK=1,
#        STAGED=path/to/staged to time another build (default: a release build of this tree).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
VENV="$HERE/.venv"
RESULTS="$HERE/results"
WORK="$HERE/work/big"
RUNS="${RUNS:-5}"
mkdir -p "$RESULTS" "$WORK"

log() { printf '[bigfile] %s\n' "$*" >&2; }

if [[ ! -x "$VENV/bin/ast-grep" ]]; then
  log "installing ast-grep-cli==0.51.1 into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q 'ast-grep-cli==0.51.1'
fi
SG="$VENV/bin/ast-grep"
if [[ -z "${STAGED:-}" ]]; then
  log "building staged (release)"
  (cd "$ROOT" && cargo build -q --release -p staged-cli)
  STAGED="${CARGO_TARGET_DIR:-$ROOT/target}/release/staged"
fi
log "$("$SG" --version); $STAGED"

PAT='foo($A, $B)'
REW='bar($B, $A)'
field() { # interleave.py json, command index, key -> value
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])][sys.argv[3]])' "$1" "$2" "$3"
}

ROWS=("1000000 25000 1" "4000000 100000 1" "8000000 200000 1")
if [[ "${QUICK:-0}" != 1 ]]; then ROWS+=("100000000 1000000 8"); fi

REPORT="$RESULTS/bigfile.md"
{
  echo "| file | matches | ours s | ast-grep s | ours / ast-grep (median of paired runs) | ours peak MiB | ast-grep peak MiB |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
} > "$REPORT"

for row in "${ROWS[@]}"; do
  read -r size matches per_line <<<"$row"
  dir="$WORK/w$size"
  rm -rf "$dir" && mkdir -p "$dir"
  python3 "$HERE/bigfile.py" "$dir/big.js" "$size" "$matches" "$per_line"
  runs="$RUNS"
  if [[ "$size" -ge 100000000 ]]; then runs="${RUNS_BIG:-3}"; fi
  log "$((size / 1000000)) MB, $matches matches: $runs interleaved rounds"
  ours=("$STAGED" --workspace "$dir" ast-edit --op "$PAT" "$REW" big.js)
  sg=("$SG" run -p "$PAT" -r "$REW" -l js --json=compact "$dir/big.js")
  t="$WORK/times-$size.json"
  python3 "$HERE/interleave.py" "$runs" 0 "$(printf '%q ' "${sg[@]}")" "$(printf '%q ' "${ours[@]}")" > "$t"
  cp "$t" "$RESULTS/bigfile-times-$size.json"
  printf '| %s MB | %s | %s | %s | %sx | %s | %s |\n' "$((size / 1000000))" "$matches" \
    "$(field "$t" 1 median_wall_s)" "$(field "$t" 0 median_wall_s)" \
    "$(field "$t" 0 paired_ratio_second_over_first)" \
    "$(field "$t" 1 peak_rss_mib)" "$(field "$t" 0 peak_rss_mib)" >> "$REPORT"
  rm -rf "$dir/.staged"
done

log "database size after 20 previews of the 4 MB file"
dir="$WORK/w4000000"
rm -rf "$dir" && mkdir -p "$dir"
python3 "$HERE/bigfile.py" "$dir/big.js" 4000000 100000 1
for _ in $(seq 20); do "$STAGED" --workspace "$dir" ast-edit --op "$PAT" "$REW" big.js > /dev/null; done
db_bytes="$(du -cb "$dir/.staged/staged.db"* | tail -1 | cut -f1)"
{
  echo
  echo "Database after 20 previews of the 4 MB file: $db_bytes bytes (.staged/staged.db and its WAL)."
} >> "$REPORT"
rm -rf "$WORK"
cat "$REPORT"
