#!/usr/bin/env bash
# Unpacks the binaries that scripts/gpu-build.sh compressed into a gpu-bin
# directory (NAME.gz -> NAME, executable, kept beside NAME.gz), those not yet
# unpacked or older than their .gz. gpu-check.sh, ladder-run.sh and
# startup-check.sh run it first; nothing to do for a directory of plain binaries.
#
# Usage: scripts/gpu-unpack.sh DIR
set -euo pipefail

dir="${1:?usage: gpu-unpack.sh DIR}"
shopt -s nullglob
for gz in "$dir"/*.gz; do
  bin="${gz%.gz}"
  if [ ! -e "$bin" ] || [ "$gz" -nt "$bin" ]; then
    gzip -dc "$gz" >"$bin.tmp"
    chmod +x "$bin.tmp"
    mv "$bin.tmp" "$bin"
  fi
done
