package bench

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// residents are the backlog sizes of the scale curves. Each curve point
// first fills the backlog, then turns it over once untimed (n operations),
// so the model's buffers have reached the size they keep and the timed
// operations measure the steady state, not the one-off growth after the
// fill.
var residents = []int{1_000, 10_000, 100_000, 1_000_000}

// scaleBatch is how many messages go in between two consumer steps of the
// log and pub/sub curves.
const scaleBatch = 64

var scaleBody = []byte("payload")

// settle runs a collection before a curve point's timed loop. The loop
// allocates a few MB, far less than a 10^6-message heap, so whether a
// collection of that heap (hundreds of ms of marking) lands inside it
// depended on where the collector's cycle stood after the fill and after
// the benchmarks run before it in the process: the 10^6 points moved two-
// to threefold between runs that changed nothing in the model measured.
// Starting every point right after a collection measures every size the
// same way: the model's work and the collections the loop itself causes.
func settle() { runtime.GC() }

func residentName(n int) string { return "resident=" + strconv.Itoa(n) }

// BenchmarkScaleQueue measures send, receive and ack of one message while n
// older messages wait in the queue: the receive takes the oldest, the send
// adds the newest, so the backlog stays at n. Headless: the ledger, which
// folds every event, is the trace's only sink.
func BenchmarkScaleQueue(b *testing.B) {
	for _, n := range scaleResidents() {
		b.Run(residentName(n), func(b *testing.B) {
			w, err := sim.New(sim.Config{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			env := w.Env()
			q, err := queue.New(w, queue.Config{Name: "scale"})
			if err != nil {
				b.Fatal(err)
			}
			for range n {
				if err := q.Send(env.NewMessage("k", scaleBody, sim.Headers{}), 0); err != nil {
					b.Fatal(err)
				}
			}
			var buf []queue.Delivery
			op := func() {
				if err := q.Send(env.NewMessage("k", scaleBody, sim.Headers{}), 0); err != nil {
					b.Fatal(err)
				}
				buf, err = q.AppendReceive(buf[:0], "w", 1)
				if err != nil || len(buf) != 1 {
					b.Fatal(err)
				}
				if err := q.Ack(buf[0].Receipt); err != nil {
					b.Fatal(err)
				}
			}
			for range n {
				op()
			}
			b.ReportAllocs()
			settle()
			cpuLoop(b, op)
			if got := q.Len(); got != n {
				b.Fatalf("backlog %d, want %d", got, n)
			}
		})
	}
}

// partitionKeys returns one key per partition, so producing them in turn
// spreads records evenly.
func partitionKeys(parts int) []string {
	keys := make([]string, parts)
	found := 0
	for i := 0; found < parts; i++ {
		k := "kunde-" + strconv.Itoa(i)
		if p := eventlog.PartitionFor(k, parts); keys[p] == "" {
			keys[p] = k
			found++
		}
	}
	return keys
}

// BenchmarkScaleLog measures produce, poll and commit of one record while
// the group lags n records behind the end of a 4-partition log: every
// scaleBatch records, one broker step (retention keeps n records plus a
// margin, so consumed records are deleted) and one member step that polls
// scaleBatch of the oldest records and commits. Ledger on, headless.
func BenchmarkScaleLog(b *testing.B) {
	const parts = 4
	keys := partitionKeys(parts)
	for _, n := range scaleResidents() {
		b.Run(residentName(n), func(b *testing.B) {
			w, err := sim.New(sim.Config{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			env := w.Env()
			t, err := eventlog.New(w, eventlog.Config{Name: "scale", Partitions: parts, RetentionRecords: n/parts + 4*scaleBatch})
			if err != nil {
				b.Fatal(err)
			}
			g, err := eventlog.NewGroup(w, t, eventlog.GroupConfig{Name: "g"})
			if err != nil {
				b.Fatal(err)
			}
			// The member joins at once (the backlog starts at offset 0) and
			// records one effect per record, as every handler does.
			m, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "a", Batch: scaleBatch, Handler: sim.Effect("")})
			if err != nil {
				b.Fatal(err)
			}
			produced := 0
			produce := func() {
				if _, err := t.Produce(env.NewMessage(keys[produced%parts], scaleBody, sim.Headers{})); err != nil {
					b.Fatal(err)
				}
				produced++
			}
			for range n {
				produce()
			}
			op := func() {
				produce()
				if produced%scaleBatch == 0 {
					now := env.Clock.Advance()
					t.Step(now)
					m.Step(now)
				}
			}
			for range n {
				op()
			}
			b.ReportAllocs()
			settle()
			cpuLoop(b, op)
			if lag := g.Metrics().Lag; lag < int64(n)-int64(4*scaleBatch) || lag > int64(n)+int64(4*scaleBatch) {
				b.Fatalf("lag %d, want about %d", lag, n)
			}
			if lost := len(w.Ledger().Losses()); lost != 0 {
				b.Fatalf("%d records lost to retention", lost)
			}
		})
	}
}

// BenchmarkScalePubSub measures the publish and the handling of one copy
// while n earlier copies wait in a subscriber's buffer: every scaleBatch
// publishes, the world ticks (the broker has nothing held back; the
// subscriber handles the scaleBatch oldest). Ledger on, headless.
func BenchmarkScalePubSub(b *testing.B) {
	for _, n := range scaleResidents() {
		b.Run(residentName(n), func(b *testing.B) {
			w, err := sim.New(sim.Config{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			env := w.Env()
			br, err := pubsub.New(w, pubsub.Config{Name: "scale"})
			if err != nil {
				b.Fatal(err)
			}
			s, err := br.Subscribe(pubsub.SubscriberConfig{Name: "s", Pattern: "orders.>", Buffer: n + 2*scaleBatch, Rate: scaleBatch})
			if err != nil {
				b.Fatal(err)
			}
			h := sim.Headers{Type: "orders.created"}
			published := 0
			publish := func() {
				if err := br.PublishTo("orders.created", env.NewMessage("k", scaleBody, h)); err != nil {
					b.Fatal(err)
				}
				published++
			}
			for range n {
				publish()
			}
			op := func() {
				publish()
				if published%scaleBatch == 0 {
					w.Tick() // the broker (nothing held back) and its subscribers
				}
			}
			for range n {
				op()
			}
			b.ReportAllocs()
			settle()
			cpuLoop(b, op)
			if got := s.Len(); got < n-scaleBatch || got > n+scaleBatch {
				b.Fatalf("backlog %d, want about %d", got, n)
			}
		})
	}
}
