#!/usr/bin/env bash
# Installs Debian's CUDA toolkit (nvcc 11.8, /usr/include/cuda.h, libcuda.so) on a
# Debian 12 host so that `go build -tags cuda` and `make kernels` work with no CGO flags.
# It adds the contrib and non-free components to Debian's own archive entries, then
# installs nvidia-cuda-toolkit. Idempotent: it does nothing when nvcc is already there.
set -euo pipefail

if command -v nvcc >/dev/null 2>&1 && [ -f /usr/include/cuda.h ]; then
  echo "cuda toolkit present: $(nvcc --version | tail -1)"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ]; then
  # deb822 format: extend every "Components: main" line of Debian's own archive.
  if grep -q '^Components: main$' "$src"; then
    $SUDO sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$src"
  fi
elif [ -f /etc/apt/sources.list ]; then
  $SUDO sed -i -E '/debian/ s/^(deb .* main)$/\1 contrib non-free non-free-firmware/' /etc/apt/sources.list
else
  echo "install-cuda-toolkit: no apt sources found (is this Debian?)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit nvidia-cuda-dev >/dev/null
nvcc --version | tail -1
