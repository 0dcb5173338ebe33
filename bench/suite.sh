# suite.sh holds the steps of brokerlab's benchmark suite. run.sh (one
# tree) and compare.sh (two trees, before and after) source it; it runs
# nothing by itself. Every path it is given must be absolute.

# suite_build OUT ROOT builds into OUT the test binaries of ROOT's bench
# module and outbox package, and ROOT's brokerlab command.
suite_build() {
	local out=$1 root=$2
	mkdir -p "$out"
	(cd "$root" && go test -c -o "$out/outbox.test" ./outbox/)
	(cd "$root/bench" && go test -c -o "$out/bench.test" .)
	(cd "$root" && go build -o "$out/brokerlab" ./cmd/brokerlab)
	(cd "$root/contrib/watermillsim" && go test -c -o "$out/watermillsim.test" .)
	# The player's frame benchmark lives with the session, in lab; a tree
	# from before lab existed has none, and its rows read n/a.
	if [ -d "$root/lab" ]; then
		(cd "$root" && go test -c -o "$out/lab.test" ./lab/)
	fi
}

# suite_build_kafka OUT ROOT builds the Kafka peer's test binary (its own
# module, imports nothing of brokerlab) into OUT.
suite_build_kafka() {
	(cd "$2/bench/kafkapeer" && GOWORK=off go test -c -o "$1/kafkapeer.test" .)
}

# suite_failed collects the benchmark runs that failed, for the caller to
# report at the end; a failure leaves its rows "n/a" instead of stopping a
# run of many minutes.
suite_failed=()

# suite_bench DIR BIN PATTERN BENCHTIME [FLAGS...] runs one test binary from
# the package directory DIR and appends its output to $suite_raw.
suite_bench() {
	local dir=$1 bin=$2 pattern=$3 benchtime=$4
	shift 4
	if ! (cd "$dir" && "$bin" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" -test.benchmem -test.count 1 "$@") >>"$suite_raw"; then
		echo "warning: $(basename "$bin") -test.bench '$pattern' failed (its rows read n/a)" >&2
		suite_failed+=("$(basename "$bin") $pattern")
	fi
}

# suite_explore EXE YAML JOBS SEEDS runs `brokerlab explore` on YAML once
# and appends a benchmark line for it to $suite_raw: wall and process CPU
# time per seed (the shell's `time`, user + system of the process), and,
# when explore prints a seeds-per-CPU-second figure of its own, that too
# (unit explore-seeds/cpu-s).
suite_explore() {
	local exe=$1 yaml=$2 jobs=$3 seeds=$4 err times real user sys own=""
	err=$(mktemp) times=$(mktemp)
	local TIMEFORMAT='%R %U %S'
	{ time "$exe" explore "$yaml" --seeds "$seeds" --jobs "$jobs" --no-shrink >/dev/null 2>"$err"; } 2>"$times" || true
	if ! grep -q "seeds in" "$err"; then
		echo "warning: brokerlab explore --jobs $jobs did not report its seeds: $(head -c 300 "$err")" >&2
		suite_failed+=("explore --jobs $jobs")
		rm -f "$err" "$times"
		return 0
	fi
	read -r real user sys <"$times"
	own=$(grep -oiE '[0-9]+(\.[0-9]+)? seeds (per CPU-second|/ ?CPU-s)' "$err" | head -1 | cut -d' ' -f1 || true)
	{
		echo "pkg: github.com/brokerlab/brokerlab/cmd/brokerlab"
		awk -v n="$seeds" -v j="$jobs" -v r="$real" -v u="$user" -v s="$sys" -v own="$own" 'BEGIN {
			printf "BenchmarkExplore/jobs=%d \t%d\t%.0f ns/op\t%.0f cpu-ns/op", j, n, r * 1e9 / n, (u + s) * 1e9 / n
			if (own != "") printf "\t%s explore-seeds/cpu-s", own
			printf "\n"
		}'
	} >>"$suite_raw"
	rm -f "$err" "$times"
}

# suite_explore_pair EXE YAML SEEDS runs two `brokerlab explore --jobs 1`
# processes on YAML at once and appends a benchmark line for the pair to
# $suite_raw (BenchmarkExplore/two-processes): wall time and the two
# processes' CPU time per seed. Against Explore/jobs=1 it says how much two
# runs slow each other down on this machine's cores with nothing shared
# between them, the ceiling of what --jobs 2 can give.
suite_explore_pair() {
	local exe=$1 yaml=$2 seeds=$3 times real user sys
	times=$(mktemp)
	local TIMEFORMAT='%R %U %S'
	if ! { time (
		"$exe" explore "$yaml" --seeds "$seeds" --jobs 1 --no-shrink >/dev/null 2>&1 &
		"$exe" explore "$yaml" --seeds "$seeds" --jobs 1 --no-shrink >/dev/null 2>&1
		wait
	); } 2>"$times"; then
		echo "warning: two brokerlab explore processes at once failed" >&2
		suite_failed+=("explore, two processes")
		rm -f "$times"
		return 0
	fi
	read -r real user sys <"$times"
	{
		echo "pkg: github.com/brokerlab/brokerlab/cmd/brokerlab"
		awk -v n="$seeds" -v r="$real" -v u="$user" -v s="$sys" 'BEGIN {
			printf "BenchmarkExplore/two-processes \t%d\t%.0f ns/op\t%.0f cpu-ns/op\n", 2 * n, r * 1e9 / (2 * n), (u + s) * 1e9 / (2 * n)
		}'
	} >>"$suite_raw"
	rm -f "$times"
}

# suite_test DIR BIN TEST RUNS NAME runs the test TEST of a test binary
# once from DIR and appends a benchmark line BenchmarkNAME for it to
# $suite_raw: wall and process CPU time per run, RUNS being the runs the
# test makes; its package line names the binary.
suite_test() {
	local dir=$1 bin=$2 test=$3 runs=$4 name=$5 times real user sys
	times=$(mktemp)
	local TIMEFORMAT='%R %U %S'
	if ! { time (cd "$dir" && "$bin" -test.run "^$test\$" -test.count 1 >/dev/null 2>&1); } 2>"$times"; then
		echo "warning: $(basename "$bin") -test.run $test failed (its row reads n/a)" >&2
		suite_failed+=("$(basename "$bin") $test")
		rm -f "$times"
		return 0
	fi
	read -r real user sys <"$times"
	{
		echo "pkg: github.com/brokerlab/brokerlab/$(basename "$bin" .test)"
		awk -v n="$runs" -v name="$name" -v r="$real" -v u="$user" -v s="$sys" 'BEGIN {
			printf "Benchmark%s \t%d\t%.0f ns/op\t%.0f cpu-ns/op\n", name, n, r * 1e9 / n, (u + s) * 1e9 / n
		}'
	} >>"$suite_raw"
	rm -f "$times"
}

# suite_round OUT ROOT runs one round of every benchmark with the binaries
# in OUT (built from ROOT by suite_build), from ROOT's package directories,
# appending to $suite_raw; the Kafka peer is $suite_kafka (a binary built
# by suite_build_kafka), run from $suite_kafka_dir, and explore sweeps
# $suite_scenario. Each model runs right next to its baseline, each
# sweep next to its floor and the peers, with fixed iteration counts so
# every round does the same work. SUITE_BIG=1 adds the 10^7 tier.
suite_round() {
	local out=$1 root=$2
	local big=()
	if [ "${SUITE_BIG:-0}" = 1 ]; then big=(-bench.big); fi
	local b="$root/bench" t="$out/bench.test"
	suite_bench "$b" "$t" 'BenchmarkSweepQueue$' 1000x
	suite_explore "$out/brokerlab" "$suite_scenario" 1 10000
	suite_explore "$out/brokerlab" "$suite_scenario" 2 10000
	suite_explore_pair "$out/brokerlab" "$suite_scenario" 10000
	suite_bench "$b" "$t" 'BenchmarkPeerSeed$' 100x
	suite_bench "$b" "$t" 'BenchmarkSweepLog$' 1000x
	suite_bench "$suite_kafka_dir" "$suite_kafka" 'BenchmarkPeerSeed$' 20x
	suite_bench "$b" "$t" 'BenchmarkQueueLifecycle$|BenchmarkHeapLifecycleBaseline$|BenchmarkQueueLifecycleHeadless$' 1000000x
	suite_bench "$b" "$t" 'BenchmarkPeerGoChannelPublishAck$' 300000x
	suite_bench "$b" "$t" 'BenchmarkLogProducePollCommit$|BenchmarkLogProducePollCommitModel$|BenchmarkLogProducePollCommitModelNow$|BenchmarkSliceLogBaseline$' 1000000x
	suite_bench "$b" "$t" 'BenchmarkPubSubFanout16$|BenchmarkPubSubFanout16Model$|BenchmarkFanoutLoopBaseline$' 300000x
	suite_bench "$root/outbox" "$out/outbox.test" 'BenchmarkOutboxOrderAndRelay$|BenchmarkOutboxOneTxnPerOpBaseline$' 20000x
	# One process per model's curve: run after the log's curve in the same
	# process, the pub/sub point at 10^6 read 1.8x its figure in a process
	# of its own (the heap and memory the log's curve left behind).
	suite_bench "$b" "$t" 'BenchmarkScaleQueue$' 200000x "${big[@]}"
	suite_bench "$b" "$t" 'BenchmarkScaleLog$' 200000x "${big[@]}"
	suite_bench "$b" "$t" 'BenchmarkScalePubSub$' 200000x "${big[@]}"
	suite_bench "$b" "$t" 'BenchmarkResident' 1x
	suite_bench "$b" "$t" 'BenchmarkLedgerSettled$' 1x
	suite_bench "$b" "$t" 'BenchmarkLedgerStats1M$' 3x
	# The player's frames on a big run: 32 frames of play after settling
	# 10^4 and 10^5 messages (and 10^6 with BIG=1) in a session.
	if [ -x "$out/lab.test" ]; then
		local frame=()
		if [ ${#big[@]} -gt 0 ]; then frame=(-frame.big); fi
		suite_bench "$root/lab" "$out/lab.test" 'BenchmarkFrame$' 1x "${frame[@]}"
	fi
	suite_bench "$b" "$t" 'BenchmarkWholeRun1M$' 1x
	if [ ${#big[@]} -gt 0 ]; then suite_bench "$b" "$t" 'BenchmarkWholeRun10M$' 1x "${big[@]}"; fi
	# The claim of contrib/watermillsim/README.md: its acceptance test's 60
	# router runs take about 0.1 s.
	suite_test "$root/contrib/watermillsim" "$out/watermillsim.test" TestRouterTraceIsReproducible 60 RouterTraceIsReproducible
}

# suite_timed_round OUT ROOT is suite_round followed by a line for the
# round's own wall time (BenchmarkRound of package suite), a row of the
# table.
suite_timed_round() {
	local r0=$SECONDS
	suite_round "$@"
	printf 'pkg: github.com/brokerlab/brokerlab/suite\nBenchmarkRound \t1\t%d ns/op\n' "$(((SECONDS - r0) * 1000000000))" >>"$suite_raw"
}
