#!/usr/bin/env bash
# Runs on a GPU host, from the repository root, after scripts/gpu-build.sh built
# gpu-bin/ (no Go needed; python3 for the timings, else a slower shell loop):
# the fixed start-up cost of the CUDA build against the CPU build.
#
#   1. arrowagg-startup: cuInit, the device, the primary context, the kernels'
#      module from the fatbin (SASS) and from the PTX alone, with the driver's
#      JIT cache and without it (CUDA_CACHE_DISABLE=1: a cold JIT).
#   2. One traced run (ARROWAGG_TRACE_STARTUP=1) of arrowagg-cuda per device on
#      the 3-row Parquet file: which costly steps each ran, and when.
#   3. The table: the median, min and max wall time of RUNS (default 20) runs of
#      gpu-bin/arrowagg (CPU build) and gpu-bin/arrowagg-cuda with --version,
#      and on gpu-bin/startup/tiny.parquet and tiny.arrow (3 rows) with
#      --device cpu, auto and gpu, after one run not counted (the first gpu run
#      measures the planner's calibration into a cache of its own, under
#      $OUT/cache); "+cuda" is the CUDA build's median less the CPU build's
#      for the same arguments (the target: at most 30 ms for cpu and auto). The
#      CPU build's --device gpu fails at once (no CUDA backend) and is timed
#      anyway, as the floor of a failing run.
#
# Usage: scripts/startup-check.sh   (RUNS=n, GPU_BIN=dir, OUT=dir: default ./gpu-out)
# Output: the table on stdout and in $OUT/startup.txt, the traces in $OUT/startup-trace.txt.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
BIN="$(cd "${GPU_BIN:-gpu-bin}" && pwd)" || { echo "startup-check: no gpu-bin (run scripts/gpu-build.sh)" >&2; exit 2; }
"$root/scripts/gpu-unpack.sh" "$BIN" || { echo "startup-check: could not unpack the binaries of $BIN" >&2; exit 2; }
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
RUNS="${RUNS:-20}"
data="$BIN/startup"
for f in "$BIN/arrowagg" "$BIN/arrowagg-cuda" "$BIN/arrowagg-startup" "$data/tiny.parquet" "$data/tiny.arrow"; do
  [ -e "$f" ] || { echo "startup-check: $f is missing (run scripts/gpu-build.sh)" >&2; exit 2; }
done
export XDG_CACHE_HOME="$OUT/cache" # the calibration cache of these runs
mkdir -p "$XDG_CACHE_HOME"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), kernel: $(uname -r), cpus: $(nproc)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  echo
  echo "== arrowagg-startup (driver JIT cache on)"
  "$BIN/arrowagg-startup" 2>&1
  echo
  echo "== arrowagg-startup (CUDA_CACHE_DISABLE=1: the PTX compiled cold)"
  CUDA_CACHE_DISABLE=1 "$BIN/arrowagg-startup" 2>&1
  echo
} | tee "$OUT/startup.txt"

{
  for dev in cpu auto gpu; do
    echo "== ARROWAGG_TRACE_STARTUP=1 arrowagg-cuda --device $dev tiny.parquet"
    ARROWAGG_TRACE_STARTUP=1 "$BIN/arrowagg-cuda" --device "$dev" "$data/tiny.parquet" 2>&1 >/dev/null | grep -v '^arrowagg: note:'
    echo "exit ${PIPESTATUS[0]}"
  done
} >"$OUT/startup-trace.txt" 2>&1
cat "$OUT/startup-trace.txt"
echo

# One line per case: binary label, then the arguments.
cases=()
for b in arrowagg arrowagg-cuda; do
  cases+=("$b --version")
  for f in tiny.parquet tiny.arrow; do
    for dev in cpu auto gpu; do
      cases+=("$b --device $dev $data/$f")
    done
  done
done

if command -v python3 >/dev/null 2>&1; then
  python3 - "$BIN" "$RUNS" "${cases[@]}" <<'PY' | tee -a "$OUT/startup.txt"
import os, statistics, subprocess, sys, time
bindir, runs, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows, med = [], {}
for case in cases:
    exe, *args = case.split()
    cmd = [os.path.join(bindir, exe)] + args
    first = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ts.append((time.perf_counter() - t0) * 1e3)
    what = " ".join(os.path.basename(a) for a in args)
    m = statistics.median(ts)
    med[(exe, what)] = m
    err = first.stderr.decode(errors="replace").strip().splitlines()
    err = [l for l in err if not l.startswith("arrowagg: note:")]
    rows.append((exe, what, m, min(ts), max(ts), p.returncode, err[-1][:70] if p.returncode and err else ""))
print(f"{'binary':<14} {'arguments':<30} {'median ms':>9} {'min':>7} {'max':>7} {'+cuda':>7} exit")
for exe, what, m, lo, hi, rc, err in rows:
    extra = ""
    if exe == "arrowagg-cuda" and ("arrowagg", what) in med:
        extra = f"{m - med[('arrowagg', what)]:+7.1f}"
    print(f"{exe:<14} {what:<30} {m:9.1f} {lo:7.1f} {hi:7.1f} {extra:>7} {rc} {err}")
print(f"({runs} runs each after one not counted; +cuda: the CUDA build's median less the CPU build's)")
PY
else
  echo "startup-check: no python3; timing with date +%s%N" | tee -a "$OUT/startup.txt"
  printf '%-14s %-30s %9s %7s %7s exit\n' binary arguments "median ms" min max | tee -a "$OUT/startup.txt"
  for c in "${cases[@]}"; do
    read -r exe args <<<"$c"
    cmd=("$BIN/$exe")
    read -r -a rest <<<"$args"
    cmd+=("${rest[@]}")
    "${cmd[@]}" >/dev/null 2>&1
    ts=()
    for ((i = 0; i < RUNS; i++)); do
      t0=$(date +%s%N)
      "${cmd[@]}" >/dev/null 2>&1
      rc=$?
      t1=$(date +%s%N)
      ts+=($(((t1 - t0) / 1000)))
    done
    sorted=($(printf '%s\n' "${ts[@]}" | sort -n))
    n=${#sorted[@]}
    median=$(((sorted[(n - 1) / 2] + sorted[n / 2]) / 2))
    printf '%-14s %-30s %9.1f %7.1f %7.1f %s\n' "$exe" "${args//$data\//}" \
      "$(echo "$median/1000" | bc -l)" "$(echo "${sorted[0]}/1000" | bc -l)" "$(echo "${sorted[n - 1]}/1000" | bc -l)" "$rc" |
      tee -a "$OUT/startup.txt"
  done
fi
