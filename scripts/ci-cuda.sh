#!/usr/bin/env bash
# CI for the CUDA build on a machine without a GPU (Debian): installs the toolkit,
# checks that kernels/policy.go is what kernels/policy.h generates,
# regenerates the kernels' PTX and fatbins and fails when one differs from the
# committed one (nvcc 11.8's output is the same bytes run after run), runs the
# kernels on the CPU through their emulation harness (kernels/emu) and the Go
# tests of their device functions (internal/emugpu, build tag emu) and of the
# GPU page route with its kernels emulated (dataset, build tag emu), compiles,
# without running, the cuda build and the cuda test binaries, runs the driver
# binding's tests (internal/cudrv: they need no GPU), and runs the cuda command
# without a GPU (the binaries open libcuda.so.1 when a plan needs the GPU, so
# this holds with or without the driver installed): --device cpu and auto must
# answer like the CPU build, --device gpu must fail with the no-GPU error.
#
# Usage, from anywhere: [GEN_PTX_DIR=DIR] [EMU_HARNESSES_PASSED=1] scripts/ci-cuda.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/install-cuda-toolkit.sh

echo "ci-cuda: checking kernels/policy.go against kernels/policy.h"
go test -count=1 ./kernels/...

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# GEN_PTX_DIR: a directory where scripts/gen-ptx.sh has already written the
# PTX and fatbins of this tree, which are compared instead of made again
# (.ci/run makes them beside its Go tests). EMU_HARNESSES_PASSED=1: the
# caller ran kernels/emu/run.sh on this tree and it passed.
gendir="${GEN_PTX_DIR:-}"
if [ -n "$gendir" ]; then
  echo "ci-cuda: comparing the PTX and the fatbins regenerated in $gendir"
else
  echo "ci-cuda: regenerating the PTX and the fatbins"
  gendir="$tmp"
  scripts/gen-ptx.sh "$gendir" >/dev/null
fi
# Each kernel source has its committed PTX and fatbin, and gen-ptx made both.
for cu in kernels/*.cu; do
  for ext in ptx fatbin; do
    name="$(basename "${cu%.cu}").$ext"
    [ -f "kernels/$name" ] || { echo "ci-cuda: no committed $ext for $cu" >&2; exit 1; }
    [ -f "$gendir/$name" ] || { echo "ci-cuda: gen-ptx made no $ext for $cu" >&2; exit 1; }
  done
done
for gen in "$gendir"/*.ptx "$gendir"/*.fatbin; do
  name="$(basename "$gen")"
  if ! cmp -s "$gen" "kernels/$name"; then
    echo "ci-cuda: kernels/$name differs from what scripts/gen-ptx.sh generates; run 'make kernels' and commit it" >&2
    case "$name" in
    *.ptx) diff -u "kernels/$name" "$gen" | head -40 >&2 || true ;;
    esac
    exit 1
  fi
done

if [ "${EMU_HARNESSES_PASSED:-}" = 1 ]; then
  echo "ci-cuda: the kernels' emulation harnesses (kernels/emu) passed already (EMU_HARNESSES_PASSED)"
else
  echo "ci-cuda: running the kernels on the CPU (kernels/emu)"
  kernels/emu/run.sh "$tmp/emu"
fi

echo "ci-cuda: running the kernels' device functions on the CPU from Go tests (internal/emugpu)"
go test -tags emu -count=1 ./internal/emugpu
echo "ci-cuda: the GPU page route with the page kernels emulated, on generated files, corrupted ones, its fuzz seeds, the parquet-testing corpus, chunks routed one by one and a device short of memory (dataset, -tags emu)"
go test -tags emu -count=1 -run '^(TestGPUPagesEmulated(Corpus)?|TestGPUPagesHostCorrupt|FuzzGPURoute|TestGPUPagesSplitByChunk|TestGPUPagesRefusedChunks|TestGPUPagesRefusedColumns|TestPageViewsOnGPU|TestGPUPagesShortOfDevice)$' ./dataset

echo "ci-cuda: building with -tags cuda"
go vet -tags cuda ./backend/cuda ./internal/cudadev ./kernels ./ladder ./cmd/arrowagg ./cmd/arrowagg-ladder ./dataset
go vet -tags emu ./internal/emugpu ./dataset
go build -tags cuda ./...
(cd arrow18 && go vet -tags cuda ./... && go build -tags cuda ./...)
ARROWAGG_REQUIRE_CUDA=1 go test -count=1 -run TestNoStateFieldWritesOutsideAgg ./agg
go test -tags cuda -c -o "$tmp/cuda.test" ./backend/cuda
go test -tags cuda -c -o "$tmp/ladder.test" ./ladder
if compgen -G "cmd/arrowagg/*_test.go" >/dev/null; then
  go test -tags cuda -c -o "$tmp/arrowagg.test" ./cmd/arrowagg
fi

go test -tags cuda -count=1 ./internal/cudrv

echo "ci-cuda: running the cuda command without a GPU"
go build -tags cuda -o "$tmp/arrowagg-cuda" ./cmd/arrowagg
go build -o "$tmp/arrowagg" ./cmd/arrowagg
go run ./testdata/gen -tiny "$tmp/tiny"
for input in testdata "$tmp/tiny"; do
  want="$("$tmp/arrowagg" --device cpu --format json "$input" 2>/dev/null)"
  for dev in cpu auto; do
    got="$("$tmp/arrowagg-cuda" --device "$dev" --format json "$input" 2>/dev/null)" || {
      echo "ci-cuda: arrowagg-cuda --device $dev $input failed" >&2
      exit 1
    }
    [ "$got" = "$want" ] || { echo "ci-cuda: arrowagg-cuda --device $dev $input differs from the CPU build" >&2; exit 1; }
  done
done
if err="$("$tmp/arrowagg-cuda" --device gpu "$tmp/tiny" 2>&1 >/dev/null)"; then
  echo "ci-cuda: arrowagg-cuda --device gpu succeeded without a GPU" >&2
  exit 1
fi
case "$err" in
*"no GPU backend"*) ;;
*) echo "ci-cuda: arrowagg-cuda --device gpu without a GPU: unexpected error: $err" >&2; exit 1 ;;
esac
echo "ci-cuda: ok"
