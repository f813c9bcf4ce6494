#!/usr/bin/env bash
# Times kernels of kernels/agg.cu from several fatbins or cubins on a GPU
# host (needs nvcc and the driver): builds bench/cuda/agg_bench.cu once, then
# for each kernel of KERNELS (default: the six's and the moments kernels of
# int32, int64, float32 and float64) and each null percentage of NULLS
# (default "0 10") runs every FILE given over a resident column of BYTES
# (default 1 GiB), LAUNCHES launches each (default 20), the files interleaved,
# REPS rounds (default 2). A file is a fatbin or cubin of agg.cu: the
# committed kernels/agg.fatbin, or a build of a change to try (nvcc
# -gencode arch=compute_90,code=sm_90 -cubin ... agg.cu). Output lines are
# agg_bench's, each after the file's name.
#
# Usage: scripts/bench-agg.sh FILE...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] || { sed -n '2,13p' "$0"; exit 2; }
BYTES="${BYTES:-1073741824}"
LAUNCHES="${LAUNCHES:-20}"
REPS="${REPS:-2}"
NULLS="${NULLS:-0 10}"
KERNELS="${KERNELS:-arrowagg_int32 arrowagg_moments_int32 arrowagg_int64 arrowagg_moments_int64 arrowagg_float32 arrowagg_moments_float32 arrowagg_float64 arrowagg_moments_float64}"
bin="$(mktemp -d)/agg_bench"
nvcc -O3 -arch=native -o "$bin" "$root/bench/cuda/agg_bench.cu" -lcuda
for r in $(seq "$REPS"); do
  for k in $KERNELS; do
    for p in $NULLS; do
      for f in "$@"; do
        echo "$(basename "$f") round $r $("$bin" "$f" "$k" "$BYTES" "$p" "$LAUNCHES")"
      done
    done
  done
done
