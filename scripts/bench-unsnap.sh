#!/usr/bin/env bash
# Times kernels/unsnap.cuh's snappy decompressor alone on a GPU host
# (needs nvcc, python3 with pyarrow and numpy): writes the pages of
# scripts/unsnap_pages.py for ROWS rows once (into PAGES, default
# /tmp/unsnap-pages-ROWS), builds bench/cuda/unsnap_bench.cu against each
# directory given (a directory holding an unsnap.cuh: kernels/, or a copy of
# it with a change to try), then runs the builds REPS times (default 3) over
# each column's pages (UNSNAP_COLUMNS, default "i32 i64 f64 f32"), the builds
# interleaved. A DIR may carry nvcc flags of its own after commas
# (kernels,-DUNSNAP_BENCH_MINB=6); NVCCFLAGS adds flags to every build. Logs
# in OUT (default bench/data/unsnap-logs).
#
# Usage: scripts/bench-unsnap.sh ROWS DIR[,FLAG...]...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 2 ] || { sed -n '2,13p' "$0"; exit 2; }
rows="$1"
shift
PAGES="${PAGES:-/tmp/unsnap-pages-$rows}"
OUT="${OUT:-$root/bench/data/unsnap-logs}"
REPS="${REPS:-3}"
UNSNAP_COLUMNS="${UNSNAP_COLUMNS:-i32 i64 f64 f32}"
mkdir -p "$OUT"
missing=()
for c in $UNSNAP_COLUMNS; do [ -f "$PAGES/$c.pages" ] || missing+=("$c"); done
if [ ${#missing[@]} -gt 0 ]; then
  python3 "$root/scripts/unsnap_pages.py" "$PAGES" "$rows" "${missing[@]}" | tee -a "$OUT/pages-$rows.txt"
fi
bins=()
k=0
for arg in "$@"; do
  IFS=, read -r -a parts <<<"$arg"
  dir="$(cd "${parts[0]}" && pwd)"
  bin="$OUT/unsnap_bench.$k"
  nvcc -O3 -std=c++17 -arch=native ${NVCCFLAGS:-} "${parts[@]:1}" -I "$dir" -o "$bin" "$root/bench/cuda/unsnap_bench.cu" &
  bins+=("$bin")
  echo "build $k: $arg" | tee -a "$OUT/builds.txt"
  k=$((k + 1))
done
wait
for r in $(seq "$REPS"); do
  for c in $UNSNAP_COLUMNS; do
    for k in "${!bins[@]}"; do
      echo "build $k $(${bins[$k]} "$PAGES/$c.pages" 20)"
    done
  done
done | tee "$OUT/times-$rows.txt"
