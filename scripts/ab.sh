#!/usr/bin/env bash
# A/B timing of two builds of the command, interleaved run by run so that
# the host's drift falls on both alike: for each FILE, ROUNDS rounds of
# (A, B) or (B, A) in alternation, after one warm-up each, every run a whole
# process (--device cpu -a count,sum,min,max -f json --progress never FILE,
# or ARGS). Prints per file the median and mean wall time of each build, the
# ratio of the medians B/A and of the means, with the spread (min, max).
#
# Usage: scripts/ab.sh A_BINARY B_BINARY FILE...
# Environment: ROUNDS (default 15), ARGS (the flags before FILE).
set -euo pipefail
a=$1 b=$2
shift 2
ROUNDS=${ROUNDS:-15}
ARGS=${ARGS:---device cpu -a count,sum,min,max -f json --progress never}
wall() { # wall seconds of one run of "$@"
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }'
}
printf 'file\tbuild\tmedian_s\tmean_s\tmin_s\tmax_s\n'
for f in "$@"; do
	cat "$f" >/dev/null # into the page cache
	wall "$a" $ARGS "$f" >/dev/null
	wall "$b" $ARGS "$f" >/dev/null
	ta=() tb=()
	for ((i = 0; i < ROUNDS; i++)); do
		if ((i % 2 == 0)); then
			ta+=("$(wall "$a" $ARGS "$f")")
			tb+=("$(wall "$b" $ARGS "$f")")
		else
			tb+=("$(wall "$b" $ARGS "$f")")
			ta+=("$(wall "$a" $ARGS "$f")")
		fi
	done
	stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1; s += $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.4f\t%.4f\t%.4f\t%.4f", m, s / NR, v[1], v[NR] }'; }
	sa=$(stats "${ta[@]}") sb=$(stats "${tb[@]}")
	printf '%s\tA\t%s\n%s\tB\t%s\n' "$(basename "$f")" "$sa" "$(basename "$f")" "$sb"
	awk -v a="$sa" -v b="$sb" -v f="$(basename "$f")" 'BEGIN { split(a, x, "\t"); split(b, y, "\t"); printf "%s\tB/A\tmedian %.3f\tmean %.3f\n", f, y[1] / x[1], y[2] / x[2] }'
done
