#!/usr/bin/env bash
# The file benchmark: arrowagg (CPU build, and the cuda build with --device
# auto and gpu), DuckDB and pyarrow, each a whole process, on the same rows
# (four columns: int32 i32, int64 i64, float64 f64 with 5% nulls, float32 f32;
# bench/cmd/duckfiles/data.go) in five files:
#
#   pa-snappy.parquet   pyarrow, snappy, row groups of 2^20 rows
#   pa-none.parquet     pyarrow, uncompressed, the same row groups
#   pa-snappy-gpu.parquet  pyarrow, snappy, "GPU-friendly": row groups of 2^24
#                       rows, no dictionary, 1 MiB pages (not in FILES by default)
#   pa-snappy-one.parquet  pyarrow, snappy, one row group of every row (not in
#                       FILES by default)
#   pa.arrow            pyarrow, Arrow IPC file, uncompressed
#   pa-zstd.arrow       pyarrow, Arrow IPC file, zstd bodies
#   duck-zstd.parquet   DuckDB 1.5.6 as it writes Parquet by default
#                       (COPY ... (FORMAT parquet, COMPRESSION zstd))
#
# For a GPU host without Go (python3 with pyarrow and numpy; no network):
# scripts/gpu-build.sh puts the binaries in gpu-bin/: arrowagg.gz (the CPU
# build), arrowagg-cuda.gz and duckfiles.xz, unpacked here into $DATA/bin
# (plain gpu-bin/NAME binaries are used as they are). A binary that is
# missing is skipped with a note, and so are pyarrow's files and runs when
# `import pyarrow, numpy` fails.
#
# Each engine runs on each file it reads (DuckDB: the Parquet files) once as
# a warm-up, then REPS times, the engines interleaved (one run of each per
# round, the order rotated every round); the file is read into the page
# cache first.
# The table has the median wall time of the process, the file's bytes per
# second, the peak RSS (/usr/bin/time -f %M, or the child's rusage through
# scripts/bench_files.py where /usr/bin/time is missing), whether the answer
# agrees with the others (integers exactly, floats within 1e-9 relative),
# and the ratios of the targets: cuda auto / CPU build, DuckDB / ours.
#
#   arrowagg        --device cpu -a count,sum,min,max -f json --progress never FILE
#   arrowagg-cuda   --device auto (and --device gpu), the same otherwise
#   arrowagg-base   a baseline CPU build (gpu-bin/arrowagg-base, built from an
#                   earlier commit: GPU_BUILD_BASE=<commit> scripts/gpu-build.sh),
#                   --device cpu, the same otherwise: a change's cost, side by side
#   duckdb          duckfiles query FILE: an in-memory DuckDB,
#                   SELECT count(*), count(c), sum(c), min(c), max(c) ... FROM read_parquet(FILE)
#   pyarrow         python3 scripts/bench_files.py query FILE: pq.read_table (IPC:
#                   ipc.open_file over a memory map, read_all), then pc.count,
#                   pc.sum and pc.min_max of every column
#
# Usage, from the repository root:
#   scripts/bench-files.sh                  # 50M rows (about 1 GiB a file)
#   ROWS=5000000 scripts/bench-files.sh     # smaller files
# Environment:
#   ROWS      rows of every file (default 50000000)
#   REPS      timed runs of each engine on each file (default 3)
#   DATA      where the files are written, and kept for the next run
#             (default bench/data/files-$ROWS)
#   OUT       where the logs go (default bench/data/files-$ROWS-logs): runs.tsv,
#             answers/, stderr of each run, report.md
#   GPU_BIN   the binaries (default gpu-bin)
#   ENGINES   which to run (default "arrowagg arrowagg-cuda-auto arrowagg-cuda-gpu duckdb pyarrow")
#   FILES     which files (default: all five, by name as above)
#   TIMER     usrbintime (default where /usr/bin/time works) or python
# Exit status: 1 when a run failed or an answer differs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

ROWS=${ROWS:-50000000}
REPS=${REPS:-3}
DATA=${DATA:-bench/data/files-$ROWS}
OUT=${OUT:-bench/data/files-$ROWS-logs}
GPU_BIN=${GPU_BIN:-gpu-bin}
ENGINES=${ENGINES:-arrowagg arrowagg-base arrowagg-cuda-auto arrowagg-cuda-gpu duckdb pyarrow}
FILES=${FILES:-pa-snappy.parquet pa-none.parquet pa.arrow pa-zstd.arrow duck-zstd.parquet}
helper="$root/scripts/bench_files.py"

note() { echo "bench-files: $*" >&2; }

mkdir -p "$DATA" "$OUT/answers" "$OUT/stderr"
bin="$DATA/bin"
mkdir -p "$bin"

# binary NAME: the path of gpu-bin/NAME, or of NAME decompressed from
# gpu-bin/NAME.xz (or .gz) into $bin; nothing when there is neither.
binary() {
	local name=$1 src="$GPU_BIN/$1"
	if [ -x "$src" ]; then
		echo "$src"
	elif [ -f "$src.xz" ] || [ -f "$src.gz" ]; then
		local z="$src.xz" cat="xz -dc"
		[ -f "$z" ] || { z="$src.gz"; cat="gzip -dc"; }
		if [ ! -x "$bin/$name" ] || [ "$z" -nt "$bin/$name" ]; then
			$cat "$z" > "$bin/$name.tmp" && chmod +x "$bin/$name.tmp" && mv "$bin/$name.tmp" "$bin/$name"
		fi
		echo "$bin/$name"
	fi
}

cpu=$(binary arrowagg)
base=$(binary arrowagg-base)
cuda=$(binary arrowagg-cuda)
duck=$(binary duckfiles)
[ -n "$cpu" ] || note "no $GPU_BIN/arrowagg(.xz): the CPU build is skipped"
[ -n "$cuda" ] || note "no $GPU_BIN/arrowagg-cuda(.xz): the cuda build is skipped"
[ -n "$duck" ] || note "no $GPU_BIN/duckfiles(.xz): DuckDB (its file and its runs) is skipped"
have_pyarrow=0
if python3 -c 'import pyarrow, numpy' 2>/dev/null; then
	have_pyarrow=1
else
	note "python3 cannot import pyarrow and numpy: pyarrow's files and runs are skipped"
fi
python3 "$helper" selftest >/dev/null

# The files.
if [ "$have_pyarrow" = 1 ]; then
	python3 "$helper" write "$DATA" "$ROWS" $FILES
fi
if [ -n "$duck" ] && [[ " $FILES " == *" duck-zstd.parquet "* ]] && [ ! -f "$DATA/duck-zstd.parquet" ]; then
	"$duck" write -rows "$ROWS" -o "$DATA/duck-zstd.parquet.tmp"
	mv "$DATA/duck-zstd.parquet.tmp" "$DATA/duck-zstd.parquet"
fi
if [ -n "$duck" ] && [ -f "$DATA/duck-zstd.parquet" ]; then
	"$duck" info "$DATA/duck-zstd.parquet" > "$OUT/duck-zstd.parquet.layout.txt" || true
fi

timer=${TIMER:-}
if [ -z "$timer" ]; then
	if /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
		timer=usrbintime
	else
		timer=python
		note "/usr/bin/time is missing: timing through python3 (wall time and the child's peak RSS)"
	fi
fi

# timed STATS CMD...: runs CMD, its stdout to $answer, stderr to $errlog;
# writes "wall_s rss_kb" to STATS; returns CMD's exit status.
timed() {
	local stats=$1 rc=0
	shift
	if [ "$timer" = usrbintime ]; then
		local t0 t1 rss
		t0=$(date +%s%N)
		/usr/bin/time -f %M -o "$stats.rss" "$@" > "$answer" 2>> "$errlog" || rc=$?
		t1=$(date +%s%N)
		rss=$(tail -1 "$stats.rss" 2>/dev/null | tr -dc 0-9)
		echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }') ${rss:-0}" > "$stats"
		rm -f "$stats.rss"
	else
		python3 "$helper" exec "$stats" -- "$@" > "$answer" 2>> "$errlog" || rc=$?
	fi
	return $rc
}

# command ENGINE FILE: the command line of ENGINE on FILE; nothing when the
# engine is skipped or does not read the file.
command_of() {
	local engine=$1 f=$2
	local flags=(-a count,sum,min,max -f json --progress never)
	case $engine in
	arrowagg) [ -n "$cpu" ] && echo "$cpu --device cpu ${flags[*]} $f" ;;
	arrowagg-base) [ -n "$base" ] && echo "$base --device cpu ${flags[*]} $f" ;;
	arrowagg-cuda-auto) [ -n "$cuda" ] && echo "$cuda --device auto ${flags[*]} $f" ;;
	arrowagg-cuda-gpu) [ -n "$cuda" ] && echo "$cuda --device gpu ${flags[*]} $f" ;;
	duckdb) [ -n "$duck" ] && [[ $f == *.parquet ]] && echo "$duck query $f" ;;
	pyarrow) [ "$have_pyarrow" = 1 ] && echo "python3 $helper query $f" ;;
	esac
	return 0
}

printf 'file\tsize\tengine\trep\twall_s\trss_kb\trc\n' > "$OUT/runs.tsv"
{
	echo "host: $(hostname), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' || true
	echo "rows: $ROWS, reps: $REPS after a warm-up, timer: $timer, date: $(date -u +%FT%TZ)"
	[ -n "$cpu" ] && echo "arrowagg: $("$cpu" --version 2>&1 | head -1)"
	[ -n "$cuda" ] && echo "arrowagg-cuda: $("$cuda" --version 2>&1 | head -1)"
	[ "$have_pyarrow" = 1 ] && echo "pyarrow: $(python3 -c 'import pyarrow; print(pyarrow.__version__)')"
} > "$OUT/host.txt" 2>&1 || true
cat "$OUT/host.txt" >&2

for name in $FILES; do
	f="$DATA/$name"
	if [ ! -f "$f" ]; then
		note "$name: not written (its writer is skipped), left out"
		continue
	fi
	size=$(stat -c %s "$f")
	# The engines that run on this file, and their command lines.
	engines=()
	for engine in $ENGINES; do
		[ -n "$(command_of "$engine" "$f")" ] || continue
		engines+=("$engine")
		: > "$OUT/stderr/$name.$engine.txt"
	done
	[ ${#engines[@]} -gt 0 ] || continue
	cat "$f" > /dev/null # into the page cache
	# Rep 0 (each engine's warm-up), then REPS rounds in which every engine
	# runs once, the order rotated each round: a drift of the host (another
	# tenant, the clock) spreads over every engine instead of biasing the
	# one that ran during it.
	declare -A failed=()
	for rep in $(seq 0 "$REPS"); do
		n=${#engines[@]}
		for k in $(seq 0 $((n - 1))); do
			engine=${engines[$(((k + rep) % n))]}
			[ -z "${failed[$engine]:-}" ] || continue
			cmd=$(command_of "$engine" "$f")
			answer="$OUT/answers/$name.$engine.json"
			errlog="$OUT/stderr/$name.$engine.txt"
			rc=0
			# shellcheck disable=SC2086 # the command line is split on purpose
			timed "$OUT/stats" $cmd || rc=$?
			read -r wall rss < "$OUT/stats"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$size" "$engine" "$rep" "$wall" "$rss" "$rc" >> "$OUT/runs.tsv"
			note "$name $engine rep $rep: ${wall}s ${rss} KB exit $rc"
			[ "$rc" = 0 ] || failed[$engine]=1
		done
	done
	unset failed
done
rm -f "$OUT/stats"

rc=0
python3 "$helper" report "$OUT" | tee "$OUT/report.md" || rc=$?
{
	echo
	echo '```'
	cat "$OUT/host.txt"
	[ -f "$OUT/duck-zstd.parquet.layout.txt" ] && cat "$OUT/duck-zstd.parquet.layout.txt"
	echo '```'
} >> "$OUT/report.md"
note "logs and report.md in $OUT"
exit $rc
