package bench

import (
	"flag"
	"testing"
	"time"
)

// big adds the 10^7 tier: the scale curves get a point at 10^7 resident
// messages and BenchmarkWholeRun10M runs. It is off by default because a
// round then needs several GiB and minutes; `BIG=1 bench/run.sh` sets it.
var big = flag.Bool("bench.big", false, "also measure 10^7 messages (scale curves, whole run with peak RSS)")

// scaleResidents returns the backlog sizes of the scale curves.
func scaleResidents() []int {
	if *big {
		return append(residents[:len(residents):len(residents)], 10_000_000)
	}
	return residents
}

// BenchmarkWholeRun10M is BenchmarkWholeRun1M with 10,000,000 messages,
// run once per process (run.sh starts a process for it alone), so the
// process's peak RSS is the run's: it reports peak-MiB and peak-B/msg
// beside the cost per message. Skipped without -bench.big.
func BenchmarkWholeRun10M(b *testing.B) {
	if !*big {
		b.Skip("needs -bench.big")
	}
	const n = 10_000_000
	var elapsed time.Duration
	var cpu int64
	runs := 0
	for b.Loop() {
		r := newWholeRun(b, n)
		start, cpu0 := time.Now(), cpuTime()
		r.run(b)
		elapsed += time.Since(start)
		cpu += cpuTime() - cpu0
		runs++
		if got := r.settled(); got < n {
			b.Fatalf("%d of %d messages settled", got, n)
		}
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(runs*n), "ns/msg")
	b.ReportMetric(float64(cpu)/float64(runs*n), "cpu-ns/msg")
	rss := peakRSS()
	b.ReportMetric(float64(rss)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(rss)/n, "peak-B/msg")
}
