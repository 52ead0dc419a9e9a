#!/usr/bin/env bash
# One exact-string edit in one big file, staged and applied, against sed and ast-grep making the
# same edit on the same file, in interleaved rounds (bench/interleave.py).
#
# Each timed command makes the edit and then the reverse edit, so the file is the same before
# every run: `staged edit` + `staged resolve apply`, twice; `sed -i`, twice; `ast-grep run -U`,
# twice. The file is JavaScript (so ast-grep can parse it), one `marker_old()` call among SIZE
# bytes of other calls (bench/bigfile.py). staged reads the file at the preview, again at the
# apply for the stale check, and writes it through the journal with an fsync; sed and ast-grep
# write it in place (sed through a temp file and a rename, without fsync).
#
# Usage: bench/textedit.sh [SIZE_MB ...]     (default: 10 100)
# Env:   RUNS (default 5), CARGO_TARGET_DIR
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
RUNS="${RUNS:-5}"
VENV="$HERE/.venv"
if [[ ! -x "$VENV/bin/ast-grep" ]]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q 'ast-grep-cli==0.51.1'
fi
(cd "$ROOT" && cargo build -q --release -p staged-cli)
STAGED="${CARGO_TARGET_DIR:-$ROOT/target}/release/staged"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

for mb in "${@:-10 100}"; do
  for size in $mb; do
    ws="$WORK/ws$size"
    mkdir -p "$ws/.git"
    python3 "$HERE/bigfile.py" "$ws/big.js" $((size * 1000000)) $((size * 20000)) 100
    # The one site to edit, in the middle.
    python3 - "$ws/big.js" <<'PY'
import sys
path = sys.argv[1]
with open(path) as f:
    lines = f.readlines()
lines.insert(len(lines) // 2, "marker_old();\n")
with open(path, "w") as f:
    f.writelines(lines)
PY
    cat > "$WORK/staged$size.sh" <<SH
#!/bin/sh
set -e
cd "$ws"
"$STAGED" edit big.js --old 'marker_old();' --new 'marker_new();' >/dev/null
"$STAGED" resolve apply --reason bench >/dev/null
"$STAGED" edit big.js --old 'marker_new();' --new 'marker_old();' >/dev/null
"$STAGED" resolve apply --reason bench >/dev/null
SH
    cat > "$WORK/sed$size.sh" <<SH
#!/bin/sh
set -e
sed -i 's/marker_old();/marker_new();/' "$ws/big.js"
sed -i 's/marker_new();/marker_old();/' "$ws/big.js"
SH
    cat > "$WORK/sg$size.sh" <<SH
#!/bin/sh
set -e
"$VENV/bin/ast-grep" run -l js -p 'marker_old()' -r 'marker_new()' -U "$ws/big.js" >/dev/null
"$VENV/bin/ast-grep" run -l js -p 'marker_new()' -r 'marker_old()' -U "$ws/big.js" >/dev/null
SH
    chmod +x "$WORK"/*.sh
    echo "== ${size} MB ($(wc -c <"$ws/big.js") bytes): staged (edit + apply, twice) | sed -i (twice) | ast-grep -U (twice)"
    python3 "$HERE/interleave.py" "$RUNS" 1 "$WORK/staged$size.sh" "$WORK/sed$size.sh" "$WORK/sg$size.sh"
    grep -c 'marker_old();' "$ws/big.js" >/dev/null
  done
done
