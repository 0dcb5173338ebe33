package lab

import (
	"flag"
	"runtime"
	"strconv"
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
// default: settling 10^6 messages takes about 5 CPU-seconds and 1 GB.
var frameBig = flag.Bool("frame.big", false, "BenchmarkFrame: also settle 10^6 messages")

// frameScenario returns frameSource with its producers' counts set to
// total messages in all (40% + 30% + 30%): the file format caps a
// scenario at scenario.MaxMessages; frameOptions lifts the run budget
// that caps what a run may create to match.
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

// BenchmarkFrame measures what a user sees playing a big run: a Session
// on frameScenario stepped until its 10^4 or 10^5 messages (10^6 with
// -frame.big) are settled, then, per
// operation, 32 frames of play (Step, which samples the series and takes
// the ledger's summary and effect table, then Snapshot). It reports the
// CPU time of the slowest frame (max-frame-cpu-ns; the budget is 16 ms)
// and the mean (frame-cpu-ns), every frame judging the expectations
// (Run.Verdict, from the counts the ledger keeps), and the bytes
// allocated over 32 ticks (B/32ticks, the
// mean over operations, and max-B/32ticks, the most of one operation; the
// budget is 50 MB). settle-s is the CPU time of getting there, and
// max-settle-snapshot-cpu-ns the slowest Snapshot (view and verdict,
// the ledger's summary taken by the tick's sample) on the way, where
// thousands of messages move per tick.
func BenchmarkFrame(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if *frameBig {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run("messages="+strconv.Itoa(n), func(b *testing.B) { benchmarkFrame(b, n) })
	}
}

// frameOptions returns the session options of a frame scenario of total
// messages: the run budget's caps on copies and sends (scenario.MaxCopies,
// MaxSends) raised to twice total, the others as every run has them.
func frameOptions(total int) SessionOptions {
	b := runBudget
	b.Messages = max(b.Messages, uint64(2*total))
	b.Sends = max(b.Sends, uint64(2*total))
	return SessionOptions{budget: &b}
}

// settleFrame opens a session on frameScenario(total) and steps it until
// every message is sent and delivered, taking a Snapshot (and so the
// verdict) after every tick as the player does, and returns it with the
// CPU time of the slowest of those snapshots: the frames where the
// ledger moves most. It fails when the run ends first (a run the budget
// stops would otherwise never settle) or takes past t=1000.
func settleFrame(tb testing.TB, total int) (*Session, int64) {
	d, err := Open(frameScenario(tb, total), frameOptions(total))
	if err != nil {
		tb.Fatal(err)
	}
	l := d.run.Env().Ledger
	var worst int64
	for st := l.Stats(); st.Messages < total || st.Delivered < total; st = l.Stats() {
		if d.Now() > 1000 || d.Done() {
			tb.Fatalf("not settled by t=%d: %+v\n%+v", d.Now(), st, d.run.Verdict())
		}
		d.step()
		t0 := processCPU()
		d.Snapshot()
		worst = max(worst, processCPU()-t0)
	}
	return d, worst
}

func benchmarkFrame(b *testing.B, frameMessages int) {
	start := processCPU()
	d, busy := settleFrame(b, frameMessages)
	settle := processCPU() - start
	var ms runtime.MemStats
	var worst, total, frames int64
	var bytes, most uint64
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
		most = max(most, ms.TotalAlloc-before)
	}
	b.StopTimer()
	b.ReportMetric(float64(worst), "max-frame-cpu-ns")
	b.ReportMetric(float64(most), "max-B/32ticks")
	b.ReportMetric(float64(total)/float64(frames), "frame-cpu-ns")
	b.ReportMetric(float64(bytes)/float64(b.N), "B/32ticks")
	b.ReportMetric(float64(settle)/1e9, "settle-s")
	b.ReportMetric(float64(busy), "max-settle-snapshot-cpu-ns")
}

// TestFrameSettles: the frame scenario just past the run budget's copies
// settles in a session, rather than stopping at the run budget with
// messages still pending (which made the 10^6 point of BenchmarkFrame
// spin forever).
func TestFrameSettles(t *testing.T) {
	if testing.Short() {
		t.Skip("settles 520,000 messages")
	}
	const total = 520_000 // past scenario.MaxCopies
	d, _ := settleFrame(t, total)
	if st := d.Snapshot().Ledger; st.Messages != total {
		t.Fatalf("%d messages, want %d", st.Messages, total)
	}
}
