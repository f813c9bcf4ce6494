#!/usr/bin/env bash
# Times arrowagg against DuckDB (through duckdb-go, in the separate bench/
# module) on one generated Parquet file of at least 1 GiB, with the same thread
# count, checks that both compute the same aggregates, and prints a table and
# the ratio DuckDB time / arrowagg time (>= 1.0: arrowagg at least as fast).
#
# Environment:
#   THREADS     threads for both engines (default: all cores, nproc)
#   REPS        timed repetitions of each engine (default 5)
#   BENCH_SIZE  size of the generated file (default 1GiB)
#   BENCH_SEED  generator seed (default 1)
#   BENCH_FILE  file to use (default bench/data/bench-$BENCH_SIZE-seed$BENCH_SEED.parquet,
#               generated if missing)
#
# The first build of bench/ compiles duckdb-go (cgo, static DuckDB library),
# which takes several minutes on a small machine; later builds are cached.
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-$(nproc)}
REPS=${REPS:-5}
BENCH_SIZE=${BENCH_SIZE:-1GiB}
BENCH_SEED=${BENCH_SEED:-1}
BENCH_FILE=${BENCH_FILE:-bench/data/bench-${BENCH_SIZE}-seed${BENCH_SEED}.parquet}

echo "bench-cpu: building bin/arrowagg, bin/benchgen, bin/benchcmp" >&2
mkdir -p bin
go build -o bin/arrowagg ./cmd/arrowagg
(cd bench && go build -o ../bin/benchgen ./cmd/benchgen && go build -o ../bin/benchcmp ./cmd/benchcmp)

if [ ! -f "$BENCH_FILE" ]; then
	echo "bench-cpu: generating $BENCH_FILE ($BENCH_SIZE, seed $BENCH_SEED)" >&2
	bin/benchgen -o "$BENCH_FILE" -size "$BENCH_SIZE" -seed "$BENCH_SEED"
fi

bin/benchcmp -file "$BENCH_FILE" -arrowagg bin/arrowagg -threads "$THREADS" -reps "$REPS"
