#!/usr/bin/env bash
# Compares arrowagg's count and null_count of every column of some files with
# pyarrow's (scripts/pyarrow_counts.py), column by column, matched by name.
# Prints each difference, and the columns one side has and the other lacks
# (arrowagg's notes say why it left a column out); exits 1 on a difference.
#
# Usage, from anywhere: scripts/check-pyarrow-counts.sh FILE...
#   e.g. scripts/check-pyarrow-counts.sh testdata/sample.*
#        scripts/check-pyarrow-counts.sh ../shared/corpus/parquet-testing/data/nested_*.parquet
# Needs python3 with pyarrow; arrowagg is $ARROWAGG (default: go run
# ./cmd/arrowagg, from the repository).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -gt 0 ] || { sed -n '2,10p' "${BASH_SOURCE[0]}" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [ -n "${ARROWAGG:-}" ]; then
  $ARROWAGG --format json --device cpu -a count,null_count "$@" >"$tmp/arrowagg.json"
else
  (cd "$root" && go build -o "$tmp/arrowagg" ./cmd/arrowagg)
  "$tmp/arrowagg" --format json --device cpu -a count,null_count "$@" >"$tmp/arrowagg.json"
fi
python3 "$root/scripts/pyarrow_counts.py" "$@" >"$tmp/pyarrow.json"

python3 - "$tmp/arrowagg.json" "$tmp/pyarrow.json" <<'PY'
import json, sys
ours, theirs = (json.load(open(p)) for p in sys.argv[1:3])
bad = 0
if ours["rows"] != theirs["rows"]:
    print("rows: arrowagg %d, pyarrow %d" % (ours["rows"], theirs["rows"]))
    bad += 1
want = {c["name"]: c for c in theirs["columns"]}
got = {c["name"]: c for c in ours["columns"]}
for name, c in got.items():
    if name not in want:
        print("%s: arrowagg only (pyarrow has no such column)" % name)
        continue
    for k in ("count", "null_count"):
        if c[k] != want[name][k]:
            print("%s (%s): %s arrowagg %d, pyarrow %d" % (name, want[name]["type"], k, c[k], want[name][k]))
            bad += 1
for name in want:
    if name not in got:
        print("%s (%s): pyarrow only (arrowagg left it out)" % (name, want[name]["type"]))
print("%d columns compared, %d differences" % (len(set(got) & set(want)), bad))
sys.exit(1 if bad else 0)
PY
