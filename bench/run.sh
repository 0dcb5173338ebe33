#!/usr/bin/env bash
# run.sh is brokerlab's benchmark suite in one command. It builds the test
# binaries of this module (models and their baselines, sweeps, peers, scale
# curves, memory, whole run), of the outbox package and of the Kafka peer
# module (kafkapeer/, built with GOWORK=off) once, runs every benchmark
# COUNT times (default 5) in interleaved rounds, so models, baselines and
# peers share the machine's state, and writes the table to bench/RESULTS.md
# and the raw output to bench/RESULTS.txt (readable by benchstat). Usage,
# from the repository root:
#
#	bench/run.sh            # or COUNT=3 bench/run.sh for a quicker look
#	BIG=1 bench/run.sh      # also 10^7 messages (several GiB, much longer)
#
# Every benchmark reports process CPU time (cpu-ns/op, getrusage) beside
# wall time; the table's ratios are of CPU time, with their range over the
# rounds. Iteration counts are fixed (-benchtime=Nx) so every round does the
# same work; the per-message benchmarks run up to a million messages, enough
# for the ledger to grow past the caches and for the baselines to shed their
# set-up costs.
set -euo pipefail
cd "$(dirname "$0")"
count=${COUNT:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== building test binaries" >&2
(cd .. && go test -c -o "$tmp/outbox.test" ./outbox/)
go test -c -o "$tmp/bench.test" .
(cd kafkapeer && GOWORK=off go test -c -o "$tmp/kafkapeer.test" .)

raw="$tmp/raw.txt"
: >"$raw"
# bench runs one test binary from its package directory.
bench() {
	local dir=$1 bin=$2 pattern=$3 benchtime=$4
	shift 4
	(cd "$dir" && "$tmp/$bin.test" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" -test.benchmem -test.count 1 "$@") >>"$raw"
}
# BIG=1 adds the 10^7 tier: a 10^7 point on the scale curves and the
# 10,000,000-message whole run with its peak RSS (in a process of its own).
big=()
if [ "${BIG:-0}" = 1 ]; then big=(-bench.big); fi
for i in $(seq "$count"); do
	echo "== round $i of $count" >&2
	bench . bench 'BenchmarkSweepQueue$' 1000x
	bench . bench 'BenchmarkPeerSeed$' 100x
	bench . bench 'BenchmarkSweepLog$' 1000x
	bench kafkapeer kafkapeer 'BenchmarkPeerSeed$' 20x
	bench . bench 'BenchmarkQueueLifecycle$|BenchmarkHeapLifecycleBaseline$|BenchmarkQueueLifecycleHeadless$' 1000000x
	bench . bench 'BenchmarkPeerGoChannelPublishAck$' 300000x
	bench . bench 'BenchmarkLogProducePollCommit$|BenchmarkSliceLogBaseline$' 1000000x
	bench . bench 'BenchmarkPubSubFanout16$|BenchmarkFanoutLoopBaseline$' 300000x
	bench ../outbox outbox 'BenchmarkOutboxOrderAndRelay$|BenchmarkOutboxOneTxnPerOpBaseline$' 20000x
	bench . bench 'BenchmarkScale' 200000x "${big[@]}"
	bench . bench 'BenchmarkResident' 1x
	bench . bench 'BenchmarkLedgerStats1M$' 3x
	bench . bench 'BenchmarkWholeRun1M$' 1x
	if [ ${#big[@]} -gt 0 ]; then bench . bench 'BenchmarkWholeRun10M$' 1x "${big[@]}"; fi
done

cp "$raw" RESULTS.txt
go run ./report <"$raw" >RESULTS.md
cat RESULTS.md
