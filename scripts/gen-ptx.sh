#!/usr/bin/env bash
# Regenerates the committed device code of the CUDA kernels, per kernels/*.cu:
#   kernels/NAME.ptx     PTX for the virtual architecture compute_60 (text, reviewed
#                        in diffs; the ladder lists its kernels from it);
#   kernels/NAME.fatbin  a fatbin with machine code (SASS) for sm_70, sm_75, sm_80,
#                        sm_86, sm_89 and sm_90 and PTX for compute_60 (nvcc's
#                        own for the fatbin: the same source and flags as NAME.ptx,
#                        not the same text), its entries compressed: the driver loads the SASS of the GPU
#                        at hand and JIT-compiles the PTX only for other GPUs
#                        (Pascal, and GPUs newer than Hopper).
# The CUDA backend and the ladder load the fatbins (package kernels embeds both).
# The output depends only on the sources (kernels/*.cu and kernels/policy.h, the
# launch policy they include, whose Go twin kernels/policy.go is written by
# `go generate ./kernels`) and the nvcc version (CI uses Debian's nvcc 11.8, see
# scripts/install-cuda-toolkit.sh): nvcc 11.8 writes the same bytes run after
# run, so CI regenerates both and fails when a committed file differs.
#
# Usage (from anywhere): scripts/gen-ptx.sh [output-dir]   (default: kernels/)
# GEN_PTX_ONLY=1 skips the fatbins (a few seconds instead of about three
# minutes on two cores).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/kernels}"
NVCC="${NVCC:-nvcc}"

if ! command -v "$NVCC" >/dev/null 2>&1; then
  echo "gen-ptx: $NVCC not found (install it with scripts/install-cuda-toolkit.sh)" >&2
  exit 1
fi
want="release 11.8"
if ! "$NVCC" --version | grep -q "$want"; then
  echo "gen-ptx: warning: $("$NVCC" --version | tail -1); the committed PTX and fatbins are made with nvcc 11.8" >&2
fi

# -fmad=false: no multiply-add contraction (the float paths are exact two-sums).
flags=(-O3 -std=c++14 -fmad=false)
# Keep in step with kernels.FatbinTargets.
sass=(70 75 80 86 89 90)
ptx_arch=60
gencode=()
for sm in "${sass[@]}"; do
  gencode+=(-gencode "arch=compute_$sm,code=sm_$sm")
done
gencode+=(-gencode "arch=compute_$ptx_arch,code=compute_$ptx_arch")

# The architectures of a fatbin are compiled in parallel (nvcc --threads;
# the output is the same bytes as one at a time): NVCC_THREADS, default the
# number of cores.
threads="${NVCC_THREADS:-$(nproc)}"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$root/kernels" # relative source names: the output must not depend on the checkout path
for src in *.cu; do
  base="$out/${src%.cu}"
  "$NVCC" -arch="compute_$ptx_arch" --ptx "${flags[@]}" -o "$base.ptx.tmp" "$src"
  mv "$base.ptx.tmp" "$base.ptx"
  echo "gen-ptx: $base.ptx"
  if [ "${GEN_PTX_ONLY:-0}" != 1 ]; then
    "$NVCC" "${gencode[@]}" -fatbin -Xfatbin -compress-all --threads "$threads" "${flags[@]}" -o "$base.fatbin.tmp" "$src"
    mv "$base.fatbin.tmp" "$base.fatbin"
    echo "gen-ptx: $base.fatbin ($(wc -c <"$base.fatbin") bytes)"
  fi
done
