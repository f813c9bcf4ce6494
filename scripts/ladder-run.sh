#!/usr/bin/env bash
# Runs the reduction ladder on a GPU host, from the repository root, with the
# binaries scripts/gpu-build.sh built on a build machine (no Go needed here):
# gpu-bin/ladder.test and gpu-bin/arrowagg-ladder (the ladder's command).
# Steps (LADDER_STEPS, default "tests table sanitize"):
#   tests     the ladder's test suite (every variant on random inputs of many lengths)
#   table     the ladder twice on LADDER_N int32 (default 2^28+12345) with LADDER_REPS
#             repetitions (default 50), the first with --unsafe; two seeds show the spread
#   sanitize  compute-sanitizer memcheck and racecheck on a small input (if installed)
# Logs go to $OUT (default ./gpu-out); the table is printed last.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
OUT="${OUT:-./gpu-out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
BIN="$(cd "${GPU_BIN:-gpu-bin}" && pwd)" || { echo "ladder-run: no gpu-bin (see the top of this script)" >&2; exit 2; }
"$root/scripts/gpu-unpack.sh" "$BIN" || { echo "ladder-run: could not unpack the binaries of $BIN" >&2; exit 2; }
STEPS="${LADDER_STEPS:-tests table sanitize}"
N="${LADDER_N:-268447801}"
REPS="${LADDER_REPS:-50}"
declare -A result

has() { [[ " $STEPS " == *" $1 "* ]]; }
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

if [ ! -x "$BIN/arrowagg-ladder" ]; then
  echo "ladder-run: no $BIN/arrowagg-ladder (run scripts/gpu-build.sh)" >&2
  exit 2
fi
ladder=("$BIN/arrowagg-ladder")

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "kernel: $(uname -r), cpus: $(nproc)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit \
    --format=csv 2>&1 | sed 's/^/gpu: /'
  echo "ladder command: ${ladder[*]##*/}"
} >"$OUT/ladder-env.txt"
cat "$OUT/ladder-env.txt"

if has tests; then
  if [ -x "$BIN/ladder.test" ]; then
    stamp "tests"
    (cd ladder && "$BIN/ladder.test" -test.v -test.count=1 -test.timeout="${LADDER_TEST_TIMEOUT:-240s}") \
      >"$OUT/ladder-tests.log" 2>&1
    result[tests]=$?
    grep -E -- '^(--- FAIL|FAIL|panic|ok|PASS)|ladder_test.go' "$OUT/ladder-tests.log" | head -40
  else
    echo "ladder-run: no $BIN/ladder.test" >&2
    result[tests]=2
  fi
fi

if has table; then
  stamp "table: ${ladder[*]##*/} --n $N --reps $REPS --unsafe"
  "${ladder[@]}" --n "$N" --reps "$REPS" --unsafe --seed 1 >"$OUT/ladder-table.md" 2>"$OUT/ladder-table.err"
  result[table]=$?
  cat "$OUT/ladder-table.err"
  stamp "table again, another seed"
  "${ladder[@]}" --n "$N" --reps "$REPS" --seed 2 >"$OUT/ladder-table2.md" 2>>"$OUT/ladder-table.err"
  result[table2]=$?
fi

if has sanitize; then
  if command -v compute-sanitizer >/dev/null 2>&1; then
    stamp "sanitize (n = 70001)"
    for tool in memcheck racecheck; do
      timeout 50 compute-sanitizer --tool "$tool" --print-limit 20 "${ladder[@]}" --n 70001 --reps 1 --warmup 0 --unsafe \
        >"$OUT/ladder-$tool.log" 2>&1
      echo "$tool: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/ladder-$tool.log" | tr '\n' ' ')"
      grep -E -m6 'hazard|Invalid|at 0x|in ladder_' "$OUT/ladder-$tool.log" | head -6
    done
  else
    echo "ladder-run: compute-sanitizer not found, skipping"
  fi
fi

{
  echo "== summary"
  grep -E '^(date|gpu):' "$OUT/ladder-env.txt"
  for s in tests table table2; do
    [ -n "${result[$s]+x}" ] && echo "$s: exit ${result[$s]}"
  done
  if [ -f "$OUT/ladder-tests.log" ]; then
    echo "tests: $(grep -c -- '--- PASS' "$OUT/ladder-tests.log") passed, $(grep -c -- '--- FAIL' "$OUT/ladder-tests.log") failed"
  fi
  if [ -f "$OUT/ladder-table2.md" ]; then
    echo
    echo "second run (seed 2), time (ms) per variant:"
    grep -E '^\| [0-9]' "$OUT/ladder-table2.md" | awk -F'|' '{gsub(/ /,"",$2); gsub(/ /,"",$5); printf "%s=%s ", $2, $5} END {print ""}'
  fi
  if [ -f "$OUT/ladder-table.md" ]; then
    echo
    echo "command: ${ladder[*]##*/} --n $N --reps $REPS --unsafe --seed 1"
    cat "$OUT/ladder-table.md"
  fi
} | tee "$OUT/ladder-summary.txt"

for s in "${!result[@]}"; do
  [ "${result[$s]}" -eq 0 ] || exit 1
done
