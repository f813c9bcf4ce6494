#!/usr/bin/env bash
# CI for the CUDA build on a machine without a GPU (Debian): installs the toolkit,
# checks that kernels/policy.go is what kernels/policy.h generates,
# regenerates the kernels' PTX and fails when it differs from the committed one,
# runs the kernels on the CPU through their emulation harness (kernels/emu), and
# compiles, without running, the cuda build and the cuda test binaries (a cuda
# binary exits at start when no GPU is visible).
#
# Usage, from anywhere: scripts/ci-cuda.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/install-cuda-toolkit.sh

echo "ci-cuda: checking kernels/policy.go against kernels/policy.h"
go test -count=1 ./kernels/...

echo "ci-cuda: regenerating the PTX"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
scripts/gen-ptx.sh "$tmp" >/dev/null
for ptx in "$tmp"/*.ptx; do
  name="$(basename "$ptx")"
  if ! cmp -s "$ptx" "kernels/$name"; then
    echo "ci-cuda: kernels/$name differs from what scripts/gen-ptx.sh generates; run 'make kernels' and commit it" >&2
    diff -u "kernels/$name" "$ptx" | head -40 >&2 || true
    exit 1
  fi
done
for cu in kernels/*.cu; do
  [ -f "kernels/$(basename "${cu%.cu}").ptx" ] || { echo "ci-cuda: no committed PTX for $cu" >&2; exit 1; }
done

echo "ci-cuda: running the kernels on the CPU (kernels/emu)"
kernels/emu/run.sh "$tmp/emu"

echo "ci-cuda: building with -tags cuda"
go vet -tags cuda ./backend/cuda ./internal/cudadev ./kernels ./ladder ./cmd/arrowagg ./cmd/arrowagg-ladder
go build -tags cuda ./...
ARROWAGG_REQUIRE_CUDA=1 go test -count=1 -run TestNoStateFieldWritesOutsideAgg ./agg
go test -tags cuda -c -o "$tmp/cuda.test" ./backend/cuda
go test -tags cuda -c -o "$tmp/ladder.test" ./ladder
if compgen -G "cmd/arrowagg/*_test.go" >/dev/null; then
  go test -tags cuda -c -o "$tmp/arrowagg.test" ./cmd/arrowagg
fi
echo "ci-cuda: ok"
