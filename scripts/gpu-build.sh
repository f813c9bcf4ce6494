#!/usr/bin/env bash
# Builds, on a build machine with a CUDA 11 or 12 toolkit (no GPU needed; see
# scripts/install-cuda-toolkit.sh), everything scripts/gpu-check.sh runs on a GPU
# host that has no Go: the cuda test binaries (tests and benchmarks of backend/cuda,
# the reduction ladder's tests), the command (arrowagg-cuda) and the reduction
# ladder's command (arrowagg-ladder, which scripts/ladder-run.sh runs), with
# -tags cuda, the start-up probe (arrowagg-startup, cuda build), the command's
# CPU build (arrowagg, which scripts/startup-check.sh times beside arrowagg-cuda),
# and the generator of the large Arrow IPC files of the `big` check (ipcgen,
# from the bench/ module), stripped and compressed (gzip: NAME.gz; the scripts
# that run them on the GPU host unpack them first, scripts/gpu-unpack.sh), into
# gpu-bin/ (git-ignored), under 60 MiB in all (about 100 MiB unpacked); and gpu-bin/startup/tiny.parquet and tiny.arrow, 3-row inputs of
# the start-up check (go run ./testdata/gen -tiny). The command's test binary
# is large, so it is built only with GPU_BUILD_CLI_TESTS=1. GPU_BUILD_BASE=<commit>
# also builds the CPU command of that commit as arrowagg-base (the baseline
# scripts/bench-files.sh runs beside arrowagg).
#
# Usage, from anywhere: scripts/gpu-build.sh   (GPU_BIN=dir to build elsewhere)
# Then copy the repository with gpu-bin/ to the GPU host and run
# scripts/gpu-check.sh there from the repository root.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${GPU_BIN:-$root/gpu-bin}"
cd "$root"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -f "$out"/*.gz "$out"/*.xz "$out"/duckfiles "$out"/*.test "$out"/arrowagg "$out"/arrowagg-base "$out"/arrowagg-cuda "$out"/arrowagg-ladder "$out"/arrowagg-startup "$out"/ladder "$out"/ipcgen
rm -rf "$out/startup"

flags=(-tags cuda -trimpath "-ldflags=-s -w")
echo "gpu-build: $(go version), $(nvcc --version 2>/dev/null | tail -1 || echo 'no nvcc')"
go test "${flags[@]}" -c -o "$out/cuda.test" ./backend/cuda
go test "${flags[@]}" -c -o "$out/ladder.test" ./ladder
go test "${flags[@]}" -c -o "$out/dataset.test" ./dataset
# The Arrow Go v18 front end's examples, Example_gpu among them (module arrow18).
(cd arrow18 && go test "${flags[@]}" -c -o "$out/arrow18-gpuagg.test" ./gpuagg)
go build "${flags[@]}" -o "$out/arrowagg-cuda" ./cmd/arrowagg
go build "${flags[@]}" -o "$out/arrowagg-ladder" ./cmd/arrowagg-ladder
go build "${flags[@]}" -o "$out/arrowagg-startup" ./cmd/arrowagg-startup
go build -trimpath "-ldflags=-s -w" -o "$out/arrowagg" ./cmd/arrowagg
if [ -n "${GPU_BUILD_BASE:-}" ]; then
  # A baseline CPU build of an earlier commit, for scripts/bench-files.sh's
  # arrowagg-base: built in a temporary worktree.
  base="$(mktemp -d)"
  git worktree add --detach "$base" "$GPU_BUILD_BASE" >/dev/null
  (cd "$base" && go build -trimpath "-ldflags=-s -w" -o "$out/arrowagg-base" ./cmd/arrowagg)
  git worktree remove --force "$base"
fi
go run ./testdata/gen -tiny "$out/startup"
(cd bench && go build -trimpath "-ldflags=-s -w" -o "$out/ipcgen" ./cmd/ipcgen)
if [ "${GPU_BUILD_CLI_TESTS:-0}" = 1 ] && compgen -G "cmd/arrowagg/*_test.go" >/dev/null; then
  go test "${flags[@]}" -c -o "$out/arrowagg.test" ./cmd/arrowagg
fi

for f in "$out"/*; do
  case "$f" in *.gz | *.xz) continue ;; esac # compressed already
  if [ -f "$f" ] && [ -x "$f" ]; then
    gzip -6 -f "$f"
  fi
done
# duckfiles (bench/ module; DuckDB through cgo, whose first build takes minutes),
# for scripts/bench-files.sh: 88 MB stripped, 20 with xz -9 (29 with gzip).
(cd bench && go build -trimpath "-ldflags=-s -w" -o "$out/duckfiles" ./cmd/duckfiles)
xz -9 -T0 -f "$out/duckfiles"
ls -l "$out"
total=$(du -scb "$out" | tail -1 | cut -f1)
limit=$((60 << 20))
echo "gpu-build: $((total >> 20)) MiB in $out"
if [ "$total" -ge "$limit" ]; then
  # (A warning: a trip to the GPU host takes the binaries its checks need.)
  echo "gpu-build: note: $out is $total bytes, over $limit: carry only the binaries a run needs to the GPU host" >&2
fi
