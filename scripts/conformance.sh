#!/usr/bin/env bash
# scripts/conformance.sh DIR...: reads every file under the DIRs (the Arrow
# and Parquet projects' corpora, parquet-testing and arrow-testing, or
# folders of them) with `arrowagg --format json` and checks each answer
# against testdata/conformance (expectations.tsv, refusals.tsv) and the
# corpora's own X_expect.csv files: every file exits 0 with the right
# numbers, or 2 with the message refusals.tsv gives; corrupt and fuzzed
# inputs (bad_data, fuzz) exit 0 or 2; never a crash or a hang. It runs
# cmd/arrowagg's TestConformance (which `make test` runs over the corpus
# beside the repository). Extra `go test` flags: GOTESTFLAGS (e.g. -v).
set -euo pipefail
if [ $# -lt 1 ]; then
	echo "usage: scripts/conformance.sh DIR..." >&2
	exit 2
fi
dirs=()
for d in "$@"; do
	if [ ! -d "$d" ]; then
		echo "scripts/conformance.sh: $d is not a folder" >&2
		exit 2
	fi
	dirs+=("$(cd "$d" && pwd)")
done
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ARROWAGG_CONFORMANCE_DIRS="$(IFS=:; echo "${dirs[*]}")"
export ARROWAGG_CONFORMANCE_DIRS
# shellcheck disable=SC2086
exec go test ./cmd/arrowagg -run '^TestConformance$' -count=1 ${GOTESTFLAGS:-}
