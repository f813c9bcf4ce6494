#!/usr/bin/env bash
# Measures arrowagg's peak memory on a generated 4 GiB Parquet file with
# /usr/bin/time -v, prints the peak resident set size and the elapsed time, and
# fails when the peak exceeds RSS_LIMIT_MIB (default 512).
#
# Environment:
#   RSS_LIMIT_MIB  limit on the peak RSS in MiB (default 512)
#   BENCH_SIZE     size of the generated file (default 4GiB)
#   BENCH_SEED     generator seed (default 1)
#   BENCH_FILE     file to use (default bench/data/bench-$BENCH_SIZE-seed$BENCH_SEED.parquet,
#                  generated if missing)
set -euo pipefail
cd "$(dirname "$0")/.."

RSS_LIMIT_MIB=${RSS_LIMIT_MIB:-512}
BENCH_SIZE=${BENCH_SIZE:-4GiB}
BENCH_SEED=${BENCH_SEED:-1}
BENCH_FILE=${BENCH_FILE:-bench/data/bench-${BENCH_SIZE}-seed${BENCH_SEED}.parquet}

if [ ! -x /usr/bin/time ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "bench-rss: installing /usr/bin/time" >&2
		apt-get install -y time >&2 || { apt-get update >&2 && apt-get install -y time >&2; }
	else
		echo "bench-rss: /usr/bin/time is missing (Debian/Ubuntu: apt-get install time)" >&2
		exit 1
	fi
fi

echo "bench-rss: building bin/arrowagg, bin/benchgen" >&2
mkdir -p bin
go build -o bin/arrowagg ./cmd/arrowagg
(cd bench && go build -o ../bin/benchgen ./cmd/benchgen)

if [ ! -f "$BENCH_FILE" ]; then
	echo "bench-rss: generating $BENCH_FILE ($BENCH_SIZE, seed $BENCH_SEED)" >&2
	bin/benchgen -o "$BENCH_FILE" -size "$BENCH_SIZE" -seed "$BENCH_SEED"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmd=(bin/arrowagg --device cpu --format json "$BENCH_FILE")
/usr/bin/time -v -o "$tmp/time" "${cmd[@]}" >"$tmp/out.json"

rss_kb=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$tmp/time")
elapsed=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time")
if [ -z "$rss_kb" ] || [ -z "$elapsed" ]; then
	echo "bench-rss: cannot read /usr/bin/time -v output:" >&2
	cat "$tmp/time" >&2
	exit 1
fi
rss_mib=$((rss_kb / 1024))
size_bytes=$(stat -c %s "$BENCH_FILE")

echo "machine:  $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ {printf "%.1f GiB RAM", $2/1048576}' /proc/meminfo)"
echo "date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "file:     $BENCH_FILE ($(awk -v b="$size_bytes" 'BEGIN {printf "%.2f GiB", b/1073741824}'), $size_bytes bytes)"
echo "command:  /usr/bin/time -v ${cmd[*]}"
echo "output:   $(tr -s ' \n' ' ' <"$tmp/out.json" | head -c 150)..."
echo "elapsed:  $elapsed"
echo "user/sys: $(sed -n 's/^[[:space:]]*User time (seconds): //p' "$tmp/time")s / $(sed -n 's/^[[:space:]]*System time (seconds): //p' "$tmp/time")s"
echo "peak RSS: $rss_mib MiB ($rss_kb kB; limit $RSS_LIMIT_MIB MiB)"
if [ "$rss_mib" -gt "$RSS_LIMIT_MIB" ]; then
	echo "bench-rss: FAIL: peak RSS $rss_mib MiB exceeds $RSS_LIMIT_MIB MiB" >&2
	exit 1
fi
echo "bench-rss: ok"
