#!/usr/bin/env bash
# Unpacks the binaries that scripts/gpu-build.sh compressed into a gpu-bin
# directory (NAME.gz or NAME.xz -> NAME, executable, kept beside it), those
# not yet unpacked or older than their packed form. gpu-check.sh, ladder-run.sh and
# startup-check.sh run it first; nothing to do for a directory of plain binaries.
#
# Usage: scripts/gpu-unpack.sh DIR
set -euo pipefail

dir="${1:?usage: gpu-unpack.sh DIR}"
shopt -s nullglob
for packed in "$dir"/*.gz "$dir"/*.xz; do
  bin="${packed%.*}"
  if [ ! -e "$bin" ] || [ "$packed" -nt "$bin" ]; then
    case "$packed" in
      *.gz) gzip -dc "$packed" >"$bin.tmp" ;;
      *.xz) xz -dc "$packed" >"$bin.tmp" ;;
    esac
    chmod +x "$bin.tmp"
    mv "$bin.tmp" "$bin"
  fi
done
