#!/usr/bin/env bash
# The 2-core target of the IPC reader: an uncompressed Arrow IPC file read by
# the command against dd reading the same file, both from the page cache,
# alternately, RUNS rounds (default 15); prints the medians and their ratio
# (the target: arrowagg at most 1.5x dd's time).
#
# Usage: scripts/ipc-vs-dd.sh ARROWAGG_BINARY FILE [RUNS]
#   (a 1 GiB file: go run ./bench/cmd/ipcgen -size 1GiB -o FILE, from bench/)
set -euo pipefail
bin=$1 f=$2 n=${3:-15}
cat "$f" >/dev/null
python3 - "$bin" "$f" "$n" <<'PY'
import statistics, subprocess, sys, time
bin, f, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
dd, ours = [], []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(["dd", "if=" + f, "of=/dev/null", "bs=4M"], stderr=subprocess.DEVNULL, check=True)
    dd.append(time.perf_counter() - t)
    t = time.perf_counter()
    subprocess.run([bin, "--device", "cpu", "--format", "json", f], stdout=subprocess.DEVNULL, check=True)
    ours.append(time.perf_counter() - t)
md, mo = statistics.median(dd), statistics.median(ours)
print(f"dd median {md*1e3:.1f} ms (min {min(dd)*1e3:.1f}), arrowagg median {mo*1e3:.1f} ms (min {min(ours)*1e3:.1f}), ratio {mo/md:.2f}")
PY
