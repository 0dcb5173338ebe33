#!/usr/bin/env bash
# run.sh is brokerlab's benchmark suite in one command. It builds the test
# binaries of the models (queue, eventlog, pubsub, outbox) and of this
# module (peer, scale curves, memory, whole run) once, runs every benchmark
# COUNT times (default 10) in interleaved rounds, so models, baselines and
# the peer share the machine's state, and writes the table of ratios
# (medians of per-round ratios) to bench/RESULTS.md and the raw output to bench/RESULTS.txt
# (readable by benchstat). Usage, from the repository root:
#
#	bench/run.sh            # or COUNT=5 bench/run.sh for a quicker look
#
# Iteration counts are fixed (-benchtime=Nx) so every round does the same
# work; the model benchmarks run a million messages, enough for the ledger
# to grow past the caches and for the baselines to shed their set-up costs.
set -euo pipefail
cd "$(dirname "$0")"
count=${COUNT:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== building test binaries" >&2
for p in queue eventlog pubsub outbox; do
	(cd .. && go test -c -o "$tmp/$p.test" "./$p/")
done
go test -c -o "$tmp/bench.test" .

raw="$tmp/raw.txt"
: >"$raw"
# bench runs one test binary from its package directory.
bench() {
	local dir=$1 bin=$2 pattern=$3 benchtime=$4
	(cd "$dir" && "$tmp/$bin.test" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" -test.benchmem -test.count 1) >>"$raw"
}
for i in $(seq "$count"); do
	echo "== round $i of $count" >&2
	bench ../queue queue 'BenchmarkQueueLifecycle$|BenchmarkHeapLifecycleBaseline$' 1000000x
	bench ../eventlog eventlog 'BenchmarkLogProducePollCommit$|BenchmarkSliceLogBaseline$' 1000000x
	bench ../pubsub pubsub 'BenchmarkPubSubFanout16$|BenchmarkFanoutLoopBaseline$' 300000x
	bench ../outbox outbox 'BenchmarkOutboxOrderAndRelay$|BenchmarkOutboxOneTxnPerOpBaseline$' 100000x
	bench . bench 'BenchmarkQueueLifecycle$|BenchmarkQueueLifecycleHeadless$|BenchmarkPeerGoChannelPublishAck$' 300000x
	bench . bench 'BenchmarkScale' 200000x
	bench . bench 'BenchmarkResident' 1x
	bench . bench 'BenchmarkWholeRun1M$' 1x
done

cp "$raw" RESULTS.txt
go run ./report <"$raw" >RESULTS.md
cat RESULTS.md
