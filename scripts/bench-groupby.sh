#!/usr/bin/env bash
# The grouped-aggregation benchmark: arrowagg --group-by against DuckDB's
# GROUP BY, each a whole process, on the file bench/cmd/groupgen writes:
#
#   (cd bench && go build -o groupgen ./cmd/groupgen)
#   bench/groupgen -rows 10000000 -o /tmp/groups-10m.parquet
#   make build
#   scripts/bench-groupby.sh /tmp/groups-10m.parquet [THREADS]
#
# For each key (k10, k1k, k1m, k50m, s1k) and filter (none, sel < 1, sel < 50):
#
#   arrowagg   $ARROWAGG --device cpu --threads T --progress never --group-by K
#                -c i32,i64,f64 -a count,sum,min,max [--where F] -f csv FILE
#   duckdb     bench/groupduck -threads T -group-by K -c i32,i64,f64
#                -a count,sum,min,max [-where F] -o OUT FILE
#              (COPY (SELECT K, count(*) AS count_all, count(i32) AS i32_count,
#               ... FROM read_parquet(FILE) [WHERE F] GROUP BY K
#               ORDER BY K NULLS LAST) TO OUT (FORMAT csv, HEADER))
#
# each REPS times (the two interleaved, their order swapped every round)
# after the file is read into the page cache, timed by /usr/bin/time -f
# '%e %M'. A case whose first run takes over SLOW seconds runs once. The
# table has the best wall time of each, the ratio arrowagg / DuckDB (over 1:
# arrowagg is slower), the peak RSS of each (the largest of its runs), and
# whether the two CSVs agree (bench/cmd/groupcmp: the same groups in the
# same order, integers exactly, floats within 1e-9 relative). The filtered
# cases are skipped, with a note, while arrowagg says --where is not
# available.
#
# Environment:
#   ARROWAGG  the arrowagg binary (default ./bin/arrowagg, from make build)
#   ARROWAGG_FLAGS  more arrowagg flags, split at spaces (--memory 8GiB: the
#             default budget, 768 MiB at most, refuses a few million groups)
#   REPS      timed runs of each (default 3)
#   SLOW      seconds past which a case runs once (default 120)
#   KEYS      the keys (default "k10 k1k k1m k50m s1k")
#   FILTERS   the filters, separated by ';' ("none" for no filter; default
#             "none;sel < 1;sel < 50"), in the grammar both take
#   OUT       where the CSVs, logs and report.md go (default: a new
#             directory under $TMPDIR; the CSVs are removed once compared
#             unless KEEP=1)
#   NOBUILD   1: use bench/groupduck and bench/groupcmp as they are
# Exit status: 1 when a run failed or the answers disagree.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: scripts/bench-groupby.sh FILE [THREADS]" >&2
	exit 2
fi
FILE=$1
THREADS=${2:-$(nproc)}
ARROWAGG=${ARROWAGG:-./bin/arrowagg}
read -r -a aflags <<<"${ARROWAGG_FLAGS:-}"
REPS=${REPS:-3}
SLOW=${SLOW:-120}
KEYS=${KEYS:-k10 k1k k1m k50m s1k}
FILTERS=${FILTERS:-none;sel < 1;sel < 50}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-groupby.XXXXXX")}
KEEP=${KEEP:-0}

note() { echo "bench-groupby: $*" >&2; }

[ -f "$FILE" ] || { note "$FILE: no such file"; exit 2; }
[ -x "$ARROWAGG" ] || { note "$ARROWAGG: not an executable (make build, or set ARROWAGG)"; exit 2; }
[ -x /usr/bin/time ] || { note "/usr/bin/time is missing (apt-get install time)"; exit 2; }
if [ "${NOBUILD:-0}" != 1 ]; then
	(cd bench && go build -o groupduck ./cmd/groupduck && go build -o groupcmp ./cmd/groupcmp)
fi
duck=bench/groupduck
cmp=bench/groupcmp
mkdir -p "$OUT"

cols=i32,i64,f64
aggs=count,sum,min,max

# Is --where there? arrowagg refuses it with "not available" until it is.
where_ok=1
if ! probe=$("$ARROWAGG" --device cpu --progress never --group-by k10 -c i32 -a count --where 'sel < 1' -f csv "$FILE" 2>&1 >/dev/null); then
	if grep -q 'not available' <<<"$probe"; then
		where_ok=0
		note "skipping the filtered cases: $probe"
	else
		note "arrowagg --where failed ($probe); the filtered cases run anyway"
	fi
fi

cat "$FILE" >/dev/null # into the page cache

# timed LOG OUTFILE CMD...: runs CMD with its standard output to OUTFILE
# (or nowhere: -), appending "wall rss" to LOG; fails when CMD does.
timed() {
	local log=$1 out=$2
	shift 2
	local t
	t=$(mktemp)
	if [ "$out" = - ]; then out=/dev/null; fi
	if ! /usr/bin/time -f '%e %M' -o "$t" "$@" >"$out" 2>>"$log.stderr"; then
		rm -f "$t"
		return 1
	fi
	tail -n 1 "$t" >>"$log"
	rm -f "$t"
}

# best LOG: the least wall time and the largest RSS (MiB) of LOG's runs.
best() { awk 'NR == 1 || $1 < w { w = $1 } $2 > r { r = $2 } END { printf "%.2f %.0f", w, r / 1024 }' "$1"; }

status=0
report="$OUT/report.md"
{
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), threads $THREADS${ARROWAGG_FLAGS:+, arrowagg $ARROWAGG_FLAGS}, load average $(cut -d' ' -f1-3 /proc/loadavg) before, $(basename "$FILE") ($(du -h "$FILE" | cut -f1)), best of $REPS"
	echo
	echo "| case | arrowagg s | DuckDB s | arrowagg/DuckDB | arrowagg RSS MiB | DuckDB RSS MiB | agree |"
	echo "|---|---:|---:|---:|---:|---:|---|"
} | tee "$report"

IFS=';' read -r -a filters <<<"$FILTERS"
for key in $KEYS; do
	for filter in "${filters[@]}"; do
		name=$key
		wa=() wd=()
		if [ "$filter" != none ]; then
			name="$key, $filter"
			if [ $where_ok = 0 ]; then
				echo "| $name | skipped: arrowagg --where is not available | | | | | |" | tee -a "$report"
				continue
			fi
			wa=(--where "$filter")
			wd=(-where "$filter")
		fi
		tag=$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_')
		la="$OUT/$tag.arrowagg" ld="$OUT/$tag.duckdb"
		: >"$la"
		: >"$ld"
		run_a() { timed "$la" "$la.csv" "$ARROWAGG" --device cpu --threads "$THREADS" --progress never "${aflags[@]}" --group-by "$key" -c $cols -a $aggs "${wa[@]}" -f csv "$FILE"; }
		run_d() { timed "$ld" - "$duck" -threads "$THREADS" -group-by "$key" -c $cols -a $aggs "${wd[@]}" -o "$ld.csv" "$FILE"; }
		failed=
		reps=$REPS
		for ((r = 0; r < reps; r++)); do
			if ((r % 2 == 0)); then
				run_a || failed="arrowagg failed"
				run_d || failed="${failed:+$failed, }DuckDB failed"
			else
				run_d || failed="${failed:+$failed, }DuckDB failed"
				run_a || failed="${failed:+$failed, }arrowagg failed"
			fi
			[ -z "$failed" ] || break
			if ((r == 0)) && awk -v s="$SLOW" '$1 > s { slow = 1 } END { exit !slow }' "$la" "$ld"; then
				reps=1
			fi
		done
		if [ -n "$failed" ]; then
			status=1
			echo "| $name | $failed (logs: $la.stderr, $ld.stderr) | | | | | |" | tee -a "$report"
			continue
		fi
		read -r ta ra <<<"$(best "$la")"
		read -r td rd <<<"$(best "$ld")"
		ratio=$(awk -v a="$ta" -v d="$td" 'BEGIN { if (d > 0) printf "%.2f", a / d; else print "-" }')
		if "$cmp" -names arrowagg,duckdb "$la.csv" "$ld.csv" >"$OUT/$tag.cmp" 2>&1; then
			agree=yes
		else
			agree="no ($OUT/$tag.cmp)"
			status=1
		fi
		runs=""
		if ((reps == 1)); then runs=" (1 run)"; fi
		echo "| $name$runs | $ta | $td | $ratio | $ra | $rd | $agree |" | tee -a "$report"
		if [ "$KEEP" != 1 ]; then rm -f "$la.csv" "$ld.csv"; fi
	done
done
for f in "$OUT"/*.cmp; do
	[ -e "$f" ] || continue
	if ! head -n 1 "$f" | grep -q '^agree'; then
		echo
		echo "$(basename "$f" .cmp):"
		head -n 12 "$f"
	fi
done | tee -a "$report"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$report"
note "logs and report.md in $OUT"
exit $status
