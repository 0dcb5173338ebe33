#!/usr/bin/env bash
# compare.sh measures the library before and after a change, interleaved in
# one run: it extracts revision REV (default HEAD) with git archive, builds
# the same benchmarks against it and against the working tree, and runs
# them in alternating rounds. The raw output goes to bench/compare-before.txt
# and bench/compare-after.txt (compare them with benchstat, or read the
# ratios report prints for each side). Usage, from the repository root:
#
#	bench/compare.sh [REV]          # COUNT=5 by default
set -euo pipefail
cd "$(dirname "$0")"
rev=${1:-HEAD}
count=${COUNT:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/before"
git -C .. archive "$rev" | tar -x -C "$tmp/before"
rm -rf "$tmp/before/bench"
cp -r . "$tmp/before/bench"

build() { # build side root
	local side=$1 root=$2
	mkdir -p "$tmp/$side"
	for p in queue eventlog; do
		(cd "$root" && go test -c -o "$tmp/$side/$p.test" "./$p/")
	done
	(cd "$root/bench" && go test -c -o "$tmp/$side/bench.test" .)
}
echo "== building $rev and the working tree" >&2
build before "$tmp/before"
build after ..

run() { # run side
	local side=$1 out=$2
	(cd ../queue && "$tmp/$side/queue.test" -test.run '^$' -test.bench 'BenchmarkQueueLifecycle$|BenchmarkHeapLifecycleBaseline$' -test.benchtime 1000000x -test.benchmem) >>"$out"
	(cd ../eventlog && "$tmp/$side/eventlog.test" -test.run '^$' -test.bench 'BenchmarkLogProducePollCommit$|BenchmarkSliceLogBaseline$' -test.benchtime 1000000x -test.benchmem) >>"$out"
	(cd . && "$tmp/$side/bench.test" -test.run '^$' -test.bench 'BenchmarkQueueLifecycle$' -test.benchtime 1000000x -test.benchmem) >>"$out"
	(cd . && "$tmp/$side/bench.test" -test.run '^$' -test.bench 'BenchmarkWholeRun1M$|BenchmarkResident' -test.benchtime 1x) >>"$out"
}
: >compare-before.txt
: >compare-after.txt
for i in $(seq "$count"); do
	echo "== round $i of $count" >&2
	run before compare-before.txt
	run after compare-after.txt
done
echo "== before ($rev)"
go run ./report -partial <compare-before.txt
echo "== after (working tree)"
go run ./report -partial <compare-after.txt
echo "== after / before (working tree / $rev)"
go run ./report -before compare-before.txt <compare-after.txt
