#!/usr/bin/env bash
# The GPU page route on a GPU host (no Go; the binaries of
# scripts/gpu-build.sh in GPU_BIN: dataset.test, arrowagg, arrowagg-cuda,
# duckfiles for DuckDB's runs when present):
#   1. dataset's TestGPUPagesCUDA and the same under compute-sanitizer
#      (scripts/gpu-check.sh's pages step);
#   2. scripts/bench-files.sh on pyarrow's files of ROWS_SMALL rows (snappy,
#      the GPU-friendly snappy file, uncompressed; and DuckDB's zstd file
#      when duckfiles is there), then on pyarrow's snappy file of ROWS_LARGE
#      rows: the CPU build, the cuda build under --device auto and gpu
#      (and DuckDB), whole processes, REPS runs each;
#   3. the page kernels' own time (ARROWAGG_TRACE_STARTUP=1: the launches
#      after the copies, per column) on the GPU-friendly and the large file;
#   4. kinds: booleans (PLAIN in pages v1, RLE in v2) and decimals stored as
#      INT32 and INT64, pyarrow's files of ROWS_SMALL rows
#      (bench_files.py kinds): the page kernels' time per column, and the
#      CPU build (which decodes these columns through pqarrow) beside the
#      cuda build under --device gpu and auto, whole processes, REPS runs
#      each, their answers compared.
#   5. split (not by default): the files of SPLIT_FILES (NAME:ROWS ...,
#      default pa-split.parquet:320000000; pa-split.parquet is
#      bench_files.py split's, row groups of random and of compressible
#      int64 values alternating, the others bench_files.py write's), written
#      to DATA_SPLIT/ROWS and read by the CPU build (when GPU_BIN has it)
#      and by the cuda build
#      under --device cpu, gpu, auto with no calibration cached (the run
#      calibrates, which opens the device: the planner then routes chunk by
#      chunk) and auto with it cached, REPS runs each, whole processes: the
#      wall time, the fold's (ARROWAGG_TRACE_STARTUP's "chunks folded"),
#      the column's route and why (--explain), the answers (the JSON's
#      columns) compared.
# PAGES_STEPS picks steps (default "tests files kernels kinds").
# Logs in OUT (default bench/data/pages-logs). The files are written to
# DATA_SMALL and DATA_LARGE (default /tmp/pages-small, /tmp/pages-large) and
# kept.
#
# Usage: scripts/bench-pages.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
BIN="${GPU_BIN:-gpu-bin}"
OUT="${OUT:-bench/data/pages-logs}"
ROWS_SMALL="${ROWS_SMALL:-50000000}"
ROWS_LARGE="${ROWS_LARGE:-350000000}"
REPS="${REPS:-5}"
DATA_SMALL="${DATA_SMALL:-/tmp/pages-small}"
DATA_LARGE="${DATA_LARGE:-/tmp/pages-large}"
SPLIT_FILES="${SPLIT_FILES:-pa-split.parquet:320000000}"
DATA_SPLIT="${DATA_SPLIT:-/tmp/pages-split}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
scripts/gpu-unpack.sh "$BIN" || exit 2
engines="arrowagg arrowagg-cuda-auto arrowagg-cuda-gpu"
small="pa-snappy.parquet pa-snappy-gpu.parquet pa-none.parquet"
if [ -x "$BIN/duckfiles" ]; then
  engines="$engines duckdb"
  small="$small duck-zstd.parquet"
fi
STEPS="${PAGES_STEPS:-tests files kernels kinds}"
has() { [[ " $STEPS " == *" $1 "* ]]; }
rc=0
if has tests; then
  echo "== $(date -u +%H:%M:%S) pages: tests"
  GPU_BIN="$BIN" OUT="$OUT/check" GPU_CHECK_STEPS=pages scripts/gpu-check.sh || rc=1
fi
if has files; then
  echo "== $(date -u +%H:%M:%S) pages: $ROWS_SMALL rows"
  GPU_BIN="$BIN" ROWS="$ROWS_SMALL" REPS="$REPS" ENGINES="$engines" FILES="$small" DATA="$DATA_SMALL" \
    OUT="$OUT/small" scripts/bench-files.sh || rc=1
  echo "== $(date -u +%H:%M:%S) pages: $ROWS_LARGE rows"
  GPU_BIN="$BIN" ROWS="$ROWS_LARGE" REPS="$((REPS > 3 ? 3 : REPS))" ENGINES="$engines" FILES="pa-snappy.parquet" \
    DATA="$DATA_LARGE" OUT="$OUT/large" scripts/bench-files.sh || rc=1
fi
kernels() { # the page kernels' own time, per column, on each file given
  for f in "$@"; do
    [ -f "$f" ] || continue
    echo "-- $f"
    ARROWAGG_TRACE_STARTUP=1 "$BIN/arrowagg-cuda" --device gpu -a count,sum,min,max -f json --progress never "$f" 2>&1 >/dev/null |
      grep -E 'page kernels|chunks folded|main'
  done
}
if has kernels; then
  echo "== $(date -u +%H:%M:%S) pages: the kernels' time"
  kernels "$DATA_SMALL/pa-snappy-gpu.parquet" "$DATA_SMALL/pa-snappy.parquet" "$DATA_LARGE/pa-snappy.parquet" |
    tee "$OUT/kernels.txt"
fi
if has kinds; then
  echo "== $(date -u +%H:%M:%S) pages: booleans and decimals, $ROWS_SMALL rows"
  python3 scripts/bench_files.py kinds "$DATA_SMALL" "$ROWS_SMALL" || rc=1
  kernels "$DATA_SMALL/pa-kinds-v1.parquet" "$DATA_SMALL/pa-kinds-v2.parquet" | tee "$OUT/kinds-kernels.txt"
  for f in "$DATA_SMALL/pa-kinds-v1.parquet" "$DATA_SMALL/pa-kinds-v2.parquet"; do
    [ -f "$f" ] || { echo "no $f"; exit 1; }
    for e in "arrowagg" "arrowagg-cuda --device gpu" "arrowagg-cuda --device auto"; do
      for r in $(seq "$REPS"); do
        s=$(date +%s%N)
        $BIN/$e -a count,sum,min,max -f json --progress never "$f" >"$OUT/kinds.out" 2>&1 || exit 1
        echo "$(basename "$f") $e: $((($(date +%s%N) - s) / 1000000)) ms"
      done
      if [ "$e" = arrowagg ]; then
        cp "$OUT/kinds.out" "$OUT/kinds.cpu"
      elif ! cmp -s "$OUT/kinds.out" "$OUT/kinds.cpu"; then
        echo "$(basename "$f") $e: answers differ from the CPU build's"; diff "$OUT/kinds.cpu" "$OUT/kinds.out" | head; exit 1
      fi
    done
  done | tee "$OUT/kinds.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi
if has split; then
  bad=0
  for spec in $SPLIT_FILES; do
    name="${spec%%:*}" rows="${spec#*:}"
    dir="$DATA_SPLIT/$rows"
    echo "== $(date -u +%H:%M:%S) pages: chunks routed one by one, $name of $rows rows"
    if [ "$name" = pa-split.parquet ]; then
      python3 scripts/bench_files.py split "$dir" "$rows" || bad=1
    else
      python3 scripts/bench_files.py write "$dir" "$rows" "$name" || bad=1
    fi
    f="$dir/$name"
    cache="$(mktemp -d)"
    modes="cpu gpu auto-first auto"
    [ -x "$BIN/arrowagg" ] && modes="cpu-build $modes"
    first="${modes%% *}"
    for mode in $modes; do
      for r in $(seq "$REPS"); do
        exe="$BIN/arrowagg-cuda"
        dev="${mode%-first}"
        case "$mode" in
          cpu-build) exe="$BIN/arrowagg" dev=cpu ;;
          auto-first) rm -rf "$cache" && mkdir -p "$cache" ;;
        esac
        XDG_CACHE_HOME="$cache" ARROWAGG_TRACE_STARTUP=1 python3 scripts/bench_files.py exec "$OUT/split.stats" -- \
          "$exe" --device "$dev" --explain -a count,sum,min,max -f json --progress never "$f" >"$OUT/split.out" 2>"$OUT/split.err" || {
          echo "$name $mode: failed"; cat "$OUT/split.err"; bad=1; continue; }
        read -r wall rss <"$OUT/split.stats"
        fold=$(grep -o 'chunks folded *[0-9.]* ms' "$OUT/split.err" | grep -o '[0-9.]* ms')
        echo "$name $mode run $r: wall $wall s, peak RSS $((rss / 1024)) MiB, fold $fold"
        grep -E '^(i32|i64|f64|f32) ' "$OUT/split.err" | sed 's/  */ /g; s/^/  /'
        if [ "$mode" = "$first" ] && [ "$r" = 1 ]; then
          cp "$OUT/split.out" "$OUT/split.want"
        elif ! python3 - "$OUT/split.want" "$OUT/split.out" <<'PY'; then
import json, math, sys
a, b = (json.load(open(p))["columns"] for p in sys.argv[1:])
def same(x, y):
    if isinstance(x, float) and isinstance(y, float):
        return math.isclose(x, y, rel_tol=1e-9)
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
    return x == y
sys.exit(not same(a, b))
PY
          echo "$name $mode run $r: answers differ from the $first run's"; diff "$OUT/split.want" "$OUT/split.out" | head; bad=1
        fi
      done
    done > >(tee -a "$OUT/split.txt")
    wait
    rm -rf "$cache"
  done
  [ "$bad" = 0 ] || rc=1
fi
exit $rc
