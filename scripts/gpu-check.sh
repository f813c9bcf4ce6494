#!/usr/bin/env bash
# Runs on a GPU host, from the repository root, what scripts/gpu-build.sh built
# into gpu-bin/ (the host needs the NVIDIA driver and, for the peers and the CLI
# check, python3 with torch, cupy and pyarrow; no Go):
#   tests  the cuda test suite (GPU against the CPU backend, all types, ...)
#   cli    arrowagg-cuda --device gpu against --device cpu on a Parquet file,
#          and the command's own tests in the cuda build
#   bench  the GPU benchmarks (resident, end to end, with their ceilings)
#   peers  CuPy and PyTorch on the same data (scripts/gpu_peers.py)
# Logs go to $OUT (default ./gpu-out); a summary and the table are printed last.
# GPU_CHECK_STEPS picks steps (default "tests cli bench peers"), GPU_BENCHTIME
# the benchmark iterations (default 20x), GPU_BIN the binaries (default gpu-bin).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
BIN="$(cd "${GPU_BIN:-gpu-bin}" && pwd)" || { echo "gpu-check: no gpu-bin (run scripts/gpu-build.sh)" >&2; exit 2; }
STEPS="${GPU_CHECK_STEPS:-tests cli bench peers}"
export PYTHONUNBUFFERED=1
declare -A result

has() { [[ " $STEPS " == *" $1 "* ]]; }
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "kernel: $(uname -r), cpus: $(nproc)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  python3 -c 'import torch; print("torch:", torch.__version__, "cuda", torch.version.cuda)' 2>&1
  python3 -c 'import cupy; print("cupy:", cupy.__version__)' 2>&1
} >"$OUT/env.txt"
cat "$OUT/env.txt"

if has tests; then
  stamp "tests"
  (cd gpuagg/cuda && "$BIN/cuda.test" -test.v -test.count=1 -test.timeout="${GPU_TEST_TIMEOUT:-240s}") >"$OUT/tests.log" 2>&1
  result[tests]=$?
  grep -E -- '^(--- FAIL|FAIL|panic|ok|PASS)' "$OUT/tests.log" | head -20
fi

if has cli; then
  stamp "cli"
  {
    if [ -x "$BIN/arrowagg.test" ]; then
      (cd cmd/arrowagg && "$BIN/arrowagg.test" -test.count=1 -test.timeout=300s)
      echo "command tests (cuda build): exit $?"
    fi
    python3 - "$BIN/arrowagg-cuda" <<'PY'
import json, math, os, subprocess, sys, tempfile
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
exe = sys.argv[1]
rng = np.random.default_rng(7)
n = 3_000_003
def nulls(p):
    return rng.random(n) < p
cols = {
    "i8": pa.array(rng.integers(-128, 128, n, dtype=np.int8), mask=nulls(0.1)),
    "i32": pa.array(rng.integers(-2**31, 2**31, n, dtype=np.int32), mask=nulls(0.01)),
    "i64": pa.array(rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64), mask=nulls(0.5)),
    "u64": pa.array(rng.integers(0, 2**64 - 1, n, dtype=np.uint64)),
    "f32": pa.array(rng.standard_normal(n).astype(np.float32), mask=nulls(0.2)),
    "f64": pa.array(rng.standard_normal(n) * 1e6),
    "b": pa.array(rng.random(n) < 0.3, mask=nulls(0.3)),
    "ts": pa.array(rng.integers(0, 2**50, n), type=pa.timestamp("us", tz="UTC")),
    "d": pa.array(rng.integers(-10**15, 10**15, n), mask=nulls(0.05)).cast(pa.decimal128(38, 2)),
    "s": pa.array([f"s{x}" for x in rng.integers(0, 1000, n)]),
}
path = os.path.join(tempfile.mkdtemp(), "t.parquet")
pq.write_table(pa.table(cols), path, row_group_size=1 << 20)
def run(dev):
    p = subprocess.run([exe, "--device", dev, "--format", "json", "--explain", path], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"arrowagg-cuda --device {dev}: exit {p.returncode}: {p.stderr}")
    print(f"--explain ({dev}):\n{p.stderr}")
    return json.loads(p.stdout)
gpu, cpu = run("gpu"), run("cpu")
bad = 0
for g, c in zip(gpu["columns"], cpu["columns"]):
    for k in c:
        a, b = g.get(k), c[k]
        same = a == b
        if not same and isinstance(a, float) and isinstance(b, float):
            same = math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)
        if not same:
            bad += 1
            print(f"column {c['name']} {k}: gpu {a!r} cpu {b!r}")
print(f"cli: {len(cpu['columns'])} columns, {gpu['rows']} rows, {bad} differences between --device gpu and cpu")
sys.exit(1 if bad else 0)
PY
  } >"$OUT/cli.log" 2>&1
  result[cli]=$?
  tail -3 "$OUT/cli.log"
fi

if has bench; then
  stamp "bench"
  (cd gpuagg/cuda && "$BIN/cuda.test" -test.run '^$' -test.bench "${GPU_BENCH:-Resident|EndToEnd|Chunks|HostCopy}" -test.benchtime "${GPU_BENCHTIME:-20x}" \
    -test.timeout="${GPU_TEST_TIMEOUT:-240s}") >"$OUT/bench.log" 2>&1
  result[bench]=$?
  grep -E '^(ceilings|Benchmark|FAIL|panic)' "$OUT/bench.log" | head -60
fi

if has peers; then
  stamp "peers"
  python3 scripts/gpu_peers.py measure --json "$OUT/peers.json" >"$OUT/peers.log" 2>&1
  result[peers]=$?
  tail -3 "$OUT/peers.log"
fi

{
  echo "== summary"
  grep -E '^(date|gpu):' "$OUT/env.txt"
  for s in tests cli bench peers; do
    [ -n "${result[$s]+x}" ] && echo "$s: exit ${result[$s]}"
  done
  if [ -f "$OUT/tests.log" ]; then
    echo "tests: $(grep -c -- '^--- PASS' "$OUT/tests.log") passed, $(grep -c -- '^--- FAIL' "$OUT/tests.log") failed"
    grep -- '--- FAIL' "$OUT/tests.log" | head -10
  fi
  [ -f "$OUT/cli.log" ] && grep -E '^(cli:|command tests)' "$OUT/cli.log"
  if [ -f "$OUT/bench.log" ]; then
    echo
    python3 scripts/gpu_peers.py table --go-bench "$OUT/bench.log" --peers "$OUT/peers.json" | tee "$OUT/table.md"
  fi
} | tee "$OUT/summary.txt"

for s in "${!result[@]}"; do
  [ "${result[$s]}" -eq 0 ] || exit 1
done
