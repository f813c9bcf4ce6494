#!/usr/bin/env bash
# Runs on a GPU host, from the repository root, what scripts/gpu-build.sh built
# into gpu-bin/ (the host needs the NVIDIA driver and, for the peers and the CLI
# check, python3 with torch, cupy and pyarrow; no Go):
#   tests  the cuda test suite (GPU against the CPU backend, all types, ...)
#   cli    arrowagg-cuda --device gpu (and with --gpu-memory 1MiB) against --device cpu on a Parquet file,
#          and the command's own tests in the cuda build
#   bench  the GPU benchmarks (resident, end to end, with their ceilings)
#   peers  CuPy and PyTorch on the same data (scripts/gpu_peers.py)
#   pages  the GPU page route (dataset's TestGPUPagesCUDA: every kind, page
#          version, codec, dictionary setting and null density against the
#          CPU page path), then the same under compute-sanitizer's memcheck
#          when the host has it
#   groups (not by default) the grouped kernels' tests (backend/cuda's
#          TestGroup*) under compute-sanitizer's memcheck
#   big    (not by default) a BIG_GIB (default 20) GiB Arrow IPC file and its two
#          halves, made by gpu-bin/ipcgen in BIG_DIR (default /tmp; twice BIG_GIB
#          of free disk), aggregated by arrowagg-cuda --format json whole and as
#          the two halves (one dataset, per-file states merged) for each of
#          BIG_RUNS (default "auto gpu gpu:1GiB": --device, then :--gpu-memory),
#          with the time and peak RSS of each run; every answer must be the same
#          (floats within 1e-12 relative) and each peak RSS under
#          BIG_RSS_LIMIT_MIB (default 4096); a run is killed after
#          BIG_RUN_TIMEOUT seconds (default 600). The files are deleted
#          afterwards. ARROWAGG and IPCGEN override the binaries (e.g. a CPU
#          build: BIG_RUNS="auto cpu auto:1GiB" ARROWAGG=bin/arrowagg).
# Logs go to $OUT (default ./gpu-out); a summary and the table are printed last.
# GPU_CHECK_STEPS picks steps (default "tests cli bench peers"), GPU_BENCH the
# benchmarks of the bench step (default '^Benchmark(Resident|EndToEnd|Chunks|
# HostCopy)$': the table's), GPU_BENCHTIME their iterations (default 20x),
# GPU_BIN the binaries (default gpu-bin).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
BIN="$(cd "${GPU_BIN:-gpu-bin}" && pwd)" || { echo "gpu-check: no gpu-bin (run scripts/gpu-build.sh)" >&2; exit 2; }
"$root/scripts/gpu-unpack.sh" "$BIN" || { echo "gpu-check: could not unpack the binaries of $BIN" >&2; exit 2; }
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
  (cd backend/cuda && "$BIN/cuda.test" -test.v -test.count=1 -test.timeout="${GPU_TEST_TIMEOUT:-240s}") >"$OUT/tests.log" 2>&1
  result[tests]=$?
  grep -E -- '^(--- FAIL|FAIL|panic|ok|PASS)' "$OUT/tests.log" | head -20
fi

if has pages; then
  stamp "pages"
  (cd dataset && "$BIN/dataset.test" -test.v -test.count=1 -test.run '^TestGPUPagesCUDA$') >"$OUT/pages.log" 2>&1
  result[pages]=$?
  grep -E -- '^(--- FAIL|FAIL|panic|ok|PASS)' "$OUT/pages.log" | head -20
  if command -v compute-sanitizer >/dev/null 2>&1; then
    (cd dataset && compute-sanitizer --tool memcheck --error-exitcode 3 "$BIN/dataset.test" -test.count=1 -test.run '^TestGPUPagesCUDA$') >"$OUT/pages-memcheck.log" 2>&1
    result[pages-memcheck]=$?
    tail -5 "$OUT/pages-memcheck.log"
  fi
fi

if has groups; then
  # The grouped kernels' tests under memcheck. API errors are not reported:
  # the uploads ask cuPointerGetAttribute whether a host buffer is pinned,
  # and Go's pageable memory is answered CUDA_ERROR_INVALID_VALUE, as
  # expected.
  stamp "groups"
  if command -v compute-sanitizer >/dev/null 2>&1; then
    (cd backend/cuda && compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 "$BIN/cuda.test" -test.count=1 -test.run '^(TestGroupResident|TestGroupResidentColumns|TestGroupResidentErrors|TestGroupWideSets|TestGroupDevice)$') >"$OUT/groups-memcheck.log" 2>&1
    result[groups-memcheck]=$?
    tail -5 "$OUT/groups-memcheck.log"
  else
    echo "no compute-sanitizer on this host" >"$OUT/groups-memcheck.log"
    result[groups-memcheck]=2
  fi
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
def run(dev, *more):
    p = subprocess.run([exe, "--device", dev, *more, "--format", "json", "--explain", path], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"arrowagg-cuda --device {dev} {' '.join(more)}: exit {p.returncode}: {p.stderr}")
    print(f"--explain ({dev} {' '.join(more)}):\n{p.stderr}")
    return json.loads(p.stdout), p.stderr
# (--gpu-memory 1MiB: too little for a chunk of pages, so the page route's
# columns are read on the CPU, their plans saying so: planned so, or read
# again after the device found no room)
(gpu, _), (cpu, _), (short, why) = run("gpu"), run("cpu"), run("gpu", "--gpu-memory", "1MiB")
bad = 0
for name, other in (("gpu", gpu), ("gpu --gpu-memory 1MiB", short)):
    for g, c in zip(other["columns"], cpu["columns"]):
        for k in c:
            a, b = g.get(k), c[k]
            same = a == b
            if not same and isinstance(a, float) and isinstance(b, float):
                same = math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)
            if not same:
                bad += 1
                print(f"{name}: column {c['name']} {k}: {a!r}, cpu {b!r}")
fell = why.count("too little free memory for its pages") + why.count("more device memory than the GPU's limit")
print(f"cli: --gpu-memory 1MiB: {fell} columns' pages left to the cpu for want of device memory")
if fell == 0:
    bad += 1
print(f"cli: {len(cpu['columns'])} columns, {gpu['rows']} rows, {bad} differences between --device gpu (and with --gpu-memory 1MiB) and cpu")
sys.exit(1 if bad else 0)
PY
  } >"$OUT/cli.log" 2>&1
  result[cli]=$?
  tail -3 "$OUT/cli.log"
fi

if has bench; then
  stamp "bench"
  (cd backend/cuda && "$BIN/cuda.test" -test.run '^$' -test.bench "${GPU_BENCH:-^Benchmark(Resident|EndToEnd|Chunks|HostCopy)$}" -test.benchtime "${GPU_BENCHTIME:-20x}" \
    -test.timeout="${GPU_TEST_TIMEOUT:-240s}") >"$OUT/bench.log" 2>&1
  result[bench]=$?
  grep -E '^(ceilings|Benchmark|FAIL|panic)' "$OUT/bench.log" | head -60
fi

if has big; then
  stamp "big"
  python3 - "${ARROWAGG:-$BIN/arrowagg-cuda}" "${IPCGEN:-$BIN/ipcgen}" >"$OUT/big.log" 2>&1 <<'PY'
import json, math, os, shutil, subprocess, sys, tempfile, threading, time
exe, gen = sys.argv[1], sys.argv[2]
gib = float(os.environ.get("BIG_GIB", "20"))
base = os.environ.get("BIG_DIR", "/tmp")
runs = os.environ.get("BIG_RUNS", "auto gpu gpu:1GiB").split()
rss_limit = int(os.environ.get("BIG_RSS_LIMIT_MIB", "4096"))
run_timeout = float(os.environ.get("BIG_RUN_TIMEOUT", "600"))
MiB, GiB = 1 << 20, 1 << 30

def fail(msg):
    print(f"big: FAIL: {msg}")
    sys.exit(1)

def timed(args, out_path):
    """Runs args with stdout to out_path; returns (exit, seconds, peak RSS MiB, stderr)."""
    with open(out_path, "wb") as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        p = subprocess.Popen(args, stdout=out, stderr=err)
        timer = threading.Timer(run_timeout, p.kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)  # the rusage of this child alone
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        secs = time.monotonic() - start
        err.seek(0)
        return p.returncode, secs, ru.ru_maxrss / 1024, err.read().decode(errors="replace")

for b in (exe, gen):
    if not os.access(b, os.X_OK):
        fail(f"{b} is missing (run scripts/gpu-build.sh)")
print("binary:", subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip())
need = 2 * gib * GiB * 1.02 + GiB
free = shutil.disk_usage(base).free
print(f"disk: {free / GiB:.1f} GiB free in {base}, {need / GiB:.1f} GiB needed")
if free < need:
    fail(f"{free / GiB:.1f} GiB free in {base}, need {need / GiB:.1f} (set BIG_DIR or BIG_GIB)")
tmp = tempfile.mkdtemp(prefix="arrowagg-big.", dir=base)
try:
    whole, first, second = (os.path.join(tmp, n) for n in ("whole.arrow", "a.arrow", "b.arrow"))
    code, gen_secs, rss, err = timed([gen, "-o", whole, "-first", first, "-second", second, "-size", f"{gib}GiB"],
                                     os.path.join(tmp, "gen.json"))
    print(err, end="")
    if code != 0:
        fail(f"ipcgen: exit {code}")
    with open(os.path.join(tmp, "gen.json")) as f:
        files = json.loads(f.read().strip().splitlines()[-1])["files"]
    rows, size = files[0]["rows"], files[0]["bytes"]
    print(f"generated: {size / GiB:.2f} GiB, {rows} rows, halves of {files[1]['rows']} and {files[2]['rows']} rows,"
          f" in {gen_secs:.1f}s (peak RSS {rss:.0f} MiB)")

    outs, total, peak, failures = {}, 0.0, 0.0, []
    for run in runs:
        dev, _, mem = run.partition(":")
        args = [exe, "--format", "json", "--explain", "--device", dev] + (["--gpu-memory", mem] if mem else [])
        for name, inputs in (("whole", [whole]), ("halves", [first, second])):
            label = f"{run}/{name}"
            out_path = os.path.join(tmp, "out.json")
            code, secs, rss, err = timed(args + inputs, out_path)
            total += secs
            peak = max(peak, rss)
            print(f"run {label}: {' '.join(args[1:])} {' '.join(os.path.basename(i) for i in inputs)}: exit {code},"
                  f" {secs:.1f}s, {size / GiB / secs:.2f} GiB/s, peak RSS {rss:.0f} MiB")
            if code != 0:
                print(err, end="")
                failures.append(f"{label}: exit {code}")
                continue
            with open(out_path) as f:
                res = json.load(f)
            backends = " ".join(f"{p['name']}:{p['backend']}" for p in res.get("plan", []))
            print(f"  backends: {backends}")
            if rss > rss_limit:
                failures.append(f"{label}: peak RSS {rss:.0f} MiB over {rss_limit} MiB")
            if res["rows"] != rows:
                failures.append(f"{label}: {res['rows']} rows, the generator wrote {rows}")
            outs[label] = res

    def differences(a, b):
        out = []
        if a["rows"] != b["rows"]:
            out.append(f"rows {a['rows']} vs {b['rows']}")
        for x, y in zip(a["columns"], b["columns"]):
            for k in sorted(set(x) | set(y)):
                u, v = x.get(k), y.get(k)
                same = u == v
                if not same and isinstance(u, float) and isinstance(v, float):
                    same = math.isclose(u, v, rel_tol=1e-12, abs_tol=0)
                if not same:
                    out.append(f"column {x.get('name')} {k}: {u!r} vs {v!r}")
        if len(a["columns"]) != len(b["columns"]):
            out.append(f"{len(a['columns'])} vs {len(b['columns'])} columns")
        return out

    pairs = [(f"{r}/halves", f"{r}/whole") for r in runs]
    pairs += [(f"{r}/whole", f"{runs[0]}/whole") for r in runs[1:]]
    ndiff = 0
    for x, y in pairs:
        if x in outs and y in outs:
            d = differences(outs[x], outs[y])
            ndiff += len(d)
            print(f"compare {x} with {y}: {len(d)} differences")
            for line in d[:20]:
                print("  " + line)
    if ndiff:
        failures.append(f"{ndiff} differences")
    if failures:
        print("failures: " + "; ".join(failures))
    print(f"big: {'ok' if not failures else 'FAIL'}: {size / GiB:.1f} GiB, {rows} rows, runs"
          f" {' '.join(runs)} on the whole file and on its halves: {ndiff} differences, peak RSS at most"
          f" {peak:.0f} MiB; generated in {gen_secs:.0f}s, aggregated in {total:.0f}s")
    sys.exit(1 if failures else 0)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
PY
  result[big]=$?
  tail -3 "$OUT/big.log"
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
  for s in tests pages pages-memcheck groups-memcheck cli bench peers big; do
    [ -n "${result[$s]+x}" ] && echo "$s: exit ${result[$s]}"
  done
  if [ -f "$OUT/tests.log" ]; then
    echo "tests: $(grep -c -- '^--- PASS' "$OUT/tests.log") passed, $(grep -c -- '^--- FAIL' "$OUT/tests.log") failed"
    grep -- '--- FAIL' "$OUT/tests.log" | head -10
  fi
  [ -f "$OUT/cli.log" ] && grep -E '^(cli:|command tests)' "$OUT/cli.log"
  [ -f "$OUT/big.log" ] && grep -E '^big:' "$OUT/big.log"
  if [ -f "$OUT/bench.log" ]; then
    echo
    python3 scripts/gpu_peers.py table --go-bench "$OUT/bench.log" --peers "$OUT/peers.json" | tee "$OUT/table.md"
  fi
} | tee "$OUT/summary.txt"

for s in "${!result[@]}"; do
  [ "${result[$s]}" -eq 0 ] || exit 1
done
