#!/usr/bin/env bash
# Regenerates the committed PTX of the CUDA kernels (kernels/*.cu -> kernels/*.ptx)
# with nvcc for the virtual architecture compute_60, which the driver JIT-compiles
# on every GPU from Pascal to Hopper. The output depends only on the sources
# (kernels/*.cu and kernels/policy.h, the launch policy they include, whose Go
# twin kernels/policy.go is written by `go generate ./kernels`) and the nvcc
# version (CI uses Debian's nvcc 11.8, see scripts/install-cuda-toolkit.sh),
# so CI can regenerate it and fail when the committed file differs.
#
# Usage (from anywhere): scripts/gen-ptx.sh [output-dir]   (default: kernels/)
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
  echo "gen-ptx: warning: $("$NVCC" --version | tail -1); the committed PTX is made with nvcc 11.8" >&2
fi

mkdir -p "$out"
cd "$root/kernels" # relative source names: the PTX must not depend on the checkout path
for src in *.cu; do
  ptx="$out/${src%.cu}.ptx"
  # -fmad=false: no multiply-add contraction (the float paths are exact two-sums).
  "$NVCC" -arch=compute_60 --ptx -O3 -std=c++14 -fmad=false -o "$ptx.tmp" "$src"
  mv "$ptx.tmp" "$ptx"
  echo "gen-ptx: $ptx"
done
