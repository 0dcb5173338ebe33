#!/usr/bin/env bash
# run.sh is brokerlab's benchmark suite in one command. It builds the test
# binaries of this module (models and their baselines, sweeps, peers, scale
# curves, memory, whole run), of the outbox package, of the Kafka peer
# module (kafkapeer/, built with GOWORK=off) and the brokerlab command once,
# runs every benchmark COUNT times (default 5) in interleaved rounds, so
# models, baselines and peers share the machine's state, and writes the
# table to bench/RESULTS.md and the raw output to bench/RESULTS.txt
# (readable by benchstat). The steps are in suite.sh, shared with
# compare.sh. Usage, from the repository root:
#
#	bench/run.sh            # or COUNT=3 bench/run.sh for a quicker look
#	BIG=1 bench/run.sh      # also 10^7 messages (several GiB, much longer)
#
# Every benchmark reports process CPU time (cpu-ns/op, getrusage) beside
# wall time; the table's ratios are of CPU time, with their range over the
# rounds. Iteration counts are fixed (-benchtime=Nx) so every round does the
# same work. A benchmark that fails leaves its rows n/a, and the script
# names it and exits 1 after writing the table.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
root=$(cd .. && pwd)
count=${COUNT:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=suite.sh
. ./suite.sh
export SUITE_BIG=${BIG:-0}
suite_scenario="$here/testdata/sweep-queue.yaml"
suite_kafka="$tmp/kafkapeer.test"
suite_kafka_dir="$here/kafkapeer"
suite_raw="$tmp/raw.txt"
: >"$suite_raw"

echo "== building test binaries" >&2
suite_build "$tmp" "$root"
suite_build_kafka "$tmp" "$root"

start=$SECONDS
for i in $(seq "$count"); do
	echo "== round $i of $count ($((SECONDS - start)) s so far)" >&2
	suite_timed_round "$tmp" "$root"
done
echo "== $count round(s) in $((SECONDS - start)) s" >&2

cp "$suite_raw" RESULTS.txt
go run ./report <"$suite_raw" >RESULTS.md
cat RESULTS.md
if [ ${#suite_failed[@]} -gt 0 ]; then
	printf 'failed: %s\n' "${suite_failed[@]}" >&2
	exit 1
fi
