#!/usr/bin/env bash
# Builds ladder/emu/harness.cc (kernels/ladder.cu on the CPU through emu.h)
# with g++ and runs it: the ladder's kernels checked without a GPU.
# Usage: ladder/emu/run.sh [build-dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
"${CXX:-g++}" -std=c++20 -O1 -pthread -Wall -Wno-volatile -Wno-unused-function -Wno-unknown-pragmas -x c++ \
  -include "$here/emu.h" -o "$out/harness" "$here/harness.cc"
"$out/harness"
