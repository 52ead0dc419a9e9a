#!/usr/bin/env bash
# The release profile with and without thin LTO and one codegen unit, on compare.sh's broad
# rows, against ast-grep in the same interleaved rounds. Builds the preview example twice into
# separate target folders (cold, so the build times compare), then prints, per row, the median
# wall times and the paired ratios. Needs bench/corpus (built by compare.sh) and the ast-grep
# binary compare.sh installs in bench/.venv.
#
# Usage: bash bench/lto.sh [ROUNDS]   (default 9; each build takes 8 to 13 minutes here)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
ROUNDS="${1:-9}"
SG="$HERE/.venv/bin/ast-grep"
BASE="${LTO_BASE_DIR:-/tmp/staged-lto-base}"
LTO="${LTO_DIR:-/tmp/staged-lto-thin}"

build() { # target dir, extra cargo --config flags...
  local dir="$1"; shift
  local start end
  start=$(date +%s)
  (cd "$ROOT" && CARGO_TARGET_DIR="$dir" cargo build -q --release --locked -p staged-ast-edit --example preview "$@")
  end=$(date +%s)
  echo "build $(basename "$dir"): $((end - start)) s" >&2
}
[[ -x "$BASE/release/examples/preview" ]] || build "$BASE"
[[ -x "$LTO/release/examples/preview" ]] || build "$LTO" --config 'profile.release.lto="thin"' --config 'profile.release.codegen-units=1'

ROWS=(
  "rust|rust|use \$A;|pub(crate) use \$A;"
  "rust|rust|#[derive(\$\$\$A)]|#[derive(Clone, \$\$\$A)]"
  "js|js|Debug.assert(\$\$\$A)|Debug.check(\$\$\$A)"
  "js|ts|function \$F(\$\$\$P): \$R;|function \$F(\$\$\$P): (\$R);"
)
for spec in "${ROWS[@]}"; do
  IFS='|' read -r corpus lang pat rew <<<"$spec"
  dir="$HERE/corpus/$corpus"
  echo "== $corpus/$lang: $pat"
  python3 "$HERE/interleave.py" "$ROUNDS" 1 \
    "$(printf '%q ' "$BASE/release/examples/preview" --root "$dir" --lang "$lang" --pattern "$pat" --rewrite "$rew" .)" \
    "$(printf '%q ' "$LTO/release/examples/preview" --root "$dir" --lang "$lang" --pattern "$pat" --rewrite "$rew" .)" \
    "$(printf '%q ' "$SG" run -p "$pat" -r "$rew" -l "$lang" --json=compact "$dir")" |
    python3 -c '
import json, statistics as st, sys
d = json.load(sys.stdin)
b, l, s = (r["wall_s"] for r in d)
print("median wall: base %.3f s, lto %.3f s, ast-grep %.3f s" % (st.median(b), st.median(l), st.median(s)))
print("paired: ast-grep/base %.3fx, ast-grep/lto %.3fx, base/lto %.3f" % (
    st.median(y / x for x, y in zip(b, s)), st.median(y / x for x, y in zip(l, s)), st.median(x / y for x, y in zip(b, l))))
print("peak MiB: base %s, lto %s, ast-grep %s" % tuple(r["peak_rss_mib"] for r in d))'
done
