#!/usr/bin/env bash
# compare.sh measures the whole benchmark suite before and after a change,
# in one run: it extracts revision REV (default HEAD) with git archive,
# builds the suite of REV (its own bench/ module, outbox package and
# brokerlab command) and of the working tree, and runs COUNT rounds
# (default 3) of every benchmark of suite.sh on both, the two sides
# alternating (odd rounds before first, even rounds after first) so they
# share the machine's state. It prints, and writes to bench/COMPARE.md,
# every row of the results table with its before and after figure and the
# after/before ratio, then the after/before ratio of every benchmark; the
# raw outputs go to bench/compare-before.txt and bench/compare-after.txt.
# The Kafka peer (a module of its own that imports nothing of brokerlab) is
# built once, from the working tree, and runs on both sides. A row whose
# benchmark REV lacks reads n/a on the before side. Usage, from anywhere in
# the repository:
#
#	bench/compare.sh [REV]          # e.g. bench/compare.sh main
#	COUNT=5 bench/compare.sh REV    # more rounds
#	BIG=1 bench/compare.sh REV      # also the 10^7 tier (GiBs, much longer)
#
# It prints how long each round took and an estimate of the time left: on a
# busy 2-core machine the builds took about 3 minutes and a round of both
# sides 4 to 6 without BIG (COUNT=3: 16 minutes in all); on a quiet one,
# under a minute each.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
root=$(cd .. && pwd)
rev=${1:-HEAD}
count=${COUNT:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=suite.sh
. ./suite.sh
export SUITE_BIG=${BIG:-0}
suite_scenario="$here/testdata/sweep-queue.yaml"
suite_kafka="$tmp/kafkapeer.test"
suite_kafka_dir="$here/kafkapeer"

sha=$(git -C "$root" rev-parse --verify "$rev^{commit}")
mkdir -p "$tmp/src"
git -C "$root" archive "$sha" | tar -x -C "$tmp/src"
start=$SECONDS
echo "== building $rev ($sha) and the working tree" >&2
suite_build "$tmp/before" "$tmp/src"
suite_build "$tmp/after" "$root"
suite_build_kafka "$tmp" "$root"
echo "== built in $((SECONDS - start)) s" >&2

before="$tmp/before.txt" after="$tmp/after.txt"
: >"$before"
: >"$after"
side() { # side before|after
	if [ "$1" = before ]; then
		suite_raw=$before suite_timed_round "$tmp/before" "$tmp/src"
	else
		suite_raw=$after suite_timed_round "$tmp/after" "$root"
	fi
}
t0=$SECONDS
for i in $(seq "$count"); do
	r0=$SECONDS
	if [ $((i % 2)) = 1 ]; then
		echo "== round $i of $count: $rev, then the working tree" >&2
		side before
		side after
	else
		echo "== round $i of $count: the working tree, then $rev" >&2
		side after
		side before
	fi
	took=$((SECONDS - r0))
	echo "== round $i took $took s; about $(((count - i) * took / 60)) min left" >&2
done
echo "== $count round(s) in $((SECONDS - t0)) s, $((SECONDS - start)) s with the builds" >&2

cp "$before" compare-before.txt
cp "$after" compare-after.txt
{
	echo "Before: $rev ($sha). After: the working tree. $count round(s), sides alternating."
	echo
	go run ./report -before compare-before.txt <compare-after.txt
} | tee COMPARE.md
if [ ${#suite_failed[@]} -gt 0 ]; then
	printf 'failed: %s\n' "${suite_failed[@]}" >&2
	exit 1
fi
