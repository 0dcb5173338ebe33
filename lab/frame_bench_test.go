package lab

import (
	"flag"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// frameSource is a run that settles 10^6 messages: two queues with a
// consumer each (so the player shows the compared per-key effect table)
// and a log read by a group of two members, judged by three ledger checks
// and a metric. The producers' counts are set past the file's cap by
// frameScenario.
const frameSource = `title: A million settled
seed: 1
run: {ticks: 100000}
topology:
  queues: [{name: orders}, {name: billing}]
  logs: [{name: events, partitions: 4}]
  groups: [{name: audit, log: events}]
actors:
  producers:
    - {name: shop, to: {queue: orders}, count: 1000, rate: 10000, keys: "kunde-%d", key_count: 100}
    - {name: bill, to: {queue: billing}, count: 1000, rate: 10000, keys: "kunde-%d", key_count: 100}
    - {name: feed, to: {log: events}, count: 1000, rate: 10000, keys: "kunde-%d", key_count: 100}
  consumers:
    - {name: worker, queue: orders, batch: 10000}
    - {name: biller, queue: billing, batch: 10000}
  members:
    - {name: a1, group: audit, batch: 10000}
    - {name: a2, group: audit, batch: 10000}
expect:
  - {check: no_loss}
  - {check: exactly_once, consumer: worker}
  - {check: ordered_per_key, consumer: audit}
  - {metric: ledger.lost, op: "==", value: 0}
`

// frameBig adds the 10^6-message point to BenchmarkFrame. It is off by
// default: settling 10^6 messages in a session takes many CPU-minutes.
var frameBig = flag.Bool("frame.big", false, "BenchmarkFrame: also settle 10^6 messages")

// frameScenario returns frameSource with its producers' counts set to
// total messages in all (40% + 30% + 30%): the file format caps a
// scenario at scenario.MaxMessages, the player does not.
func frameScenario(tb testing.TB, total int) *scenario.Scenario {
	s, err := scenario.Load("frame.yaml", []byte(frameSource))
	if err != nil {
		tb.Fatal(err)
	}
	for i, share := range []int{4, 3, 3} {
		s.Actors.Producers[i].Count = total / 10 * share
	}
	return s
}

// processCPU returns the process's user plus system CPU time in
// nanoseconds (every thread, the collector's included), or 0 when it is
// unavailable.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkFrame measures what a user sees playing a big run: a Session
// on frameScenario stepped until its 10^4 or 10^5 messages (10^6 with
// -frame.big) are settled, then, per
// operation, 32 frames of play (Step, which samples the series and folds
// the ledger's summary, then Snapshot). It reports the CPU time of the
// slowest frame (max-frame-cpu-ns; the budget is 16 ms) and the mean
// (frame-cpu-ns), and the bytes allocated over the 32 ticks (B/32ticks;
// the budget is 50 MB). settle-s is the CPU time of getting there.
func BenchmarkFrame(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if *frameBig {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run("messages="+strconv.Itoa(n), func(b *testing.B) { benchmarkFrame(b, n) })
	}
}

func benchmarkFrame(b *testing.B, frameMessages int) {
	s := frameScenario(b, frameMessages)
	start := processCPU()
	d, err := Open(s, SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	l := d.run.Env().Ledger
	for st := l.Stats(); st.Messages < frameMessages || st.Delivered < frameMessages; st = l.Stats() {
		if d.Now() > 1000 {
			b.Fatalf("not settled by t=%d: %+v", d.Now(), l.Stats())
		}
		d.Step()
	}
	settle := processCPU() - start
	var ms runtime.MemStats
	var worst, total, frames int64
	var bytes uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		for range 32 {
			t0 := processCPU()
			d.Step()
			snap := d.Snapshot()
			dt := processCPU() - t0
			if snap.Ledger.Messages < frameMessages {
				b.Fatalf("t=%d: %+v", d.Now(), snap.Ledger)
			}
			worst = max(worst, dt)
			total += dt
			frames++
		}
		runtime.ReadMemStats(&ms)
		bytes += ms.TotalAlloc - before
	}
	b.StopTimer()
	b.ReportMetric(float64(worst), "max-frame-cpu-ns")
	b.ReportMetric(float64(total)/float64(frames), "frame-cpu-ns")
	b.ReportMetric(float64(bytes)/float64(b.N), "B/32ticks")
	b.ReportMetric(float64(settle)/1e9, "settle-s")
}
