#!/usr/bin/env bash
# compare.sh measures the library before and after a change, interleaved in
# one run, as ratios. It extracts revision REV (default HEAD) with git
# archive and, for both REV and the working tree, builds each side's own
# queue benchmarks (BenchmarkQueueLifecycle: send + receive + ack with the
# ledger on and a text trace to io.Discard) and the scenario package with
# bench/compare/faulty_seed_bench_test.go.txt dropped in (one seed of a
# 100-message scenario under four probabilistic faults: setup, run until
# drained, checks), which uses only API both sides share. Rounds alternate
# between the sides; the script prints the median of the per-round ratios
# after/before for each benchmark. Usage, from the repository root:
#
#	bench/compare.sh [REV]          # COUNT=5 by default
set -euo pipefail
cd "$(dirname "$0")"
rev=${1:-HEAD}
count=${COUNT:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/src-before"
git -C .. archive "$rev" | tar -x -C "$tmp/src-before"

build() { # build SIDE ROOT
	local side=$1 root=$2
	mkdir -p "$tmp/$side"
	(cd "$root" && go test -c -o "$tmp/$side/queue.test" ./queue/)
	cp compare/faulty_seed_bench_test.go.txt "$root/scenario/zz_compare_bench_test.go"
	(cd "$root" && go test -c -o "$tmp/$side/scenario.test" ./scenario/) || { rm -f "$root/scenario/zz_compare_bench_test.go"; exit 1; }
	rm -f "$root/scenario/zz_compare_bench_test.go"
}
echo "== building $rev and the working tree" >&2
build before "$tmp/src-before"
build after ..

run() { # run SIDE OUT
	local side=$1 out=$2
	(cd ../queue && "$tmp/$side/queue.test" -test.run '^$' -test.bench 'BenchmarkQueueLifecycle$' -test.benchtime 1000000x -test.benchmem) >>"$out"
	(cd ../scenario && "$tmp/$side/scenario.test" -test.run '^$' -test.bench 'BenchmarkCompareFaultySeed$' -test.benchtime 2000x -test.benchmem) >>"$out"
}
before="$tmp/before.txt" after="$tmp/after.txt"
: >"$before"
: >"$after"
for i in $(seq "$count"); do
	echo "== round $i of $count" >&2
	run before "$before"
	run after "$after"
done
cp "$before" compare-before.txt
cp "$after" compare-after.txt
# ratio prints, per benchmark, the median over rounds of after/before ns/op.
awk '
	FNR == 1 { side++ }
	/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name); n[side, name]++; v[side, name, n[side, name]] = $3; names[name] = 1 }
	END {
		for (name in names) {
			k = 0
			for (i = 1; i <= n[1, name] && i <= n[2, name]; i++) r[++k] = v[2, name, i] / v[1, name, i]
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
			med = (k % 2) ? r[(k + 1) / 2] : (r[k / 2] + r[k / 2 + 1]) / 2
			printf "%-32s after/before = %.2fx (median of %d rounds)\n", name, med, k
		}
	}' "$before" "$after" | sort
