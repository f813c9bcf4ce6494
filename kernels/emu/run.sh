#!/usr/bin/env bash
# Builds kernels/emu/harness.cc (agg.cu on the CPU through emu.h) with g++ and
# runs it: the kernels' logic checked on a machine without a GPU.
# Usage: kernels/emu/run.sh [build-dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
"${CXX:-g++}" -std=c++20 -O1 -pthread -Wall -Wno-unused-function -Wno-unknown-pragmas -o "$out/harness" "$here/harness.cc"
"$out/harness"
