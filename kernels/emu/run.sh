#!/usr/bin/env bash
# Builds the emulation harnesses (the kernels' CUDA source on the CPU through
# emu.h) with g++ and runs them: the kernels' logic checked on a machine
# without a GPU.
#   agg_harness.cc     kernels/agg.cu against a sequential reference, and its
#                      many-columns kernel against the per-kind kernels
#   group_harness.cc   the grouped kernels (kernels/group.cuh) against a
#                      sequential reference
#   ladder_harness.cc  kernels/ladder.cu the way package ladder launches it
# Every harness runs even if one fails; the exit status is non-zero if any
# failed to build or to pass.
# Usage: kernels/emu/run.sh [build-dir]
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out" || exit 1
flags=(-std=c++20 -O1 -pthread -Wall -Wno-volatile -Wno-unused-function -Wno-unknown-pragmas)
failed=()
for h in agg group ladder; do
  echo "== $h: build"
  if ! "${CXX:-g++}" "${flags[@]}" -o "$out/${h}_harness" "$here/${h}_harness.cc"; then
    failed+=("$h (build)")
    continue
  fi
  echo "== $h: run"
  if ! "$out/${h}_harness"; then
    failed+=("$h")
  fi
done
if ((${#failed[@]})); then
  echo "emu: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "emu: all harnesses passed"
