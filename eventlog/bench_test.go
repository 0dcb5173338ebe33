package eventlog_test

import (
	"hash/crc32"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

const (
	benchPartitions = 4
	benchBatch      = 64   // records produced between two polls
	benchKeep       = 4096 // records kept per partition (retention by size)
)

var (
	benchKeys = []string{"kunde-A", "kunde-B", "kunde-C", "kunde-D", "kunde-E", "kunde-F", "kunde-G", "kunde-H"}
	benchBody = []byte("payload")
)

// benchMessages creates the messages a producer would hand over, before
// the timer starts: creating and registering a message is the producer's
// work, not the log's.
func benchMessages(env *sim.Env, n int) []sim.Message {
	msgs := make([]sim.Message, n)
	for i := range msgs {
		msgs[i] = env.NewMessage(benchKeys[i%len(benchKeys)], benchBody, sim.Headers{})
	}
	return msgs
}

// BenchmarkLogProducePollCommit measures one record through the model:
// produce (crc32 partitioning, the produced event, the ledger's fold),
// and, every benchBatch records, one broker Step (retention by size keeps
// benchKeep records per partition) and one member Step that polls, runs
// the handler, records the effects and commits after processing. The
// ledger is attached, as in every simulation ("ledger", the name the
// benchmark table knows it by); "no-ledger" replaces the world's trace
// with a bare one, as BenchmarkPubSubFanout16Model does, so the difference
// is what the ledger's fold costs.
func BenchmarkLogProducePollCommit(b *testing.B) {
	b.Run("ledger", func(b *testing.B) { logProducePollCommit(b, true) })
	b.Run("no-ledger", func(b *testing.B) { logProducePollCommit(b, false) })
}

func logProducePollCommit(b *testing.B, ledger bool) {
	w, _ := sim.New(sim.Config{Seed: 1})
	env := w.Env()
	if !ledger {
		env.Trace = sim.NewTrace()
	}
	t, err := eventlog.New(w, eventlog.Config{Name: "bench", Partitions: benchPartitions, RetentionRecords: benchKeep})
	if err != nil {
		b.Fatal(err)
	}
	g, _ := eventlog.NewGroup(w, t, eventlog.GroupConfig{Name: "g"})
	var sum int
	m, _ := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "a", Batch: benchBatch * benchPartitions, Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
		sum += len(d.Msg.Body)
		d.Apply("")
		return nil
	})})
	msgs := benchMessages(env, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := t.Produce(msgs[i]); err != nil {
			b.Fatal(err)
		}
		if i%benchBatch == benchBatch-1 {
			now := env.Clock.Advance()
			t.Step(now)
			m.Step(now)
		}
	}
	m.Step(env.Clock.Advance())
	reportCPU(b, cpu)
	if g.Lag() != 0 || sum != b.N*len(benchBody) {
		b.Fatalf("lag %d, sum %d", g.Lag(), sum)
	}
}

// BenchmarkSliceLogBaseline does the same work on a bare slice per
// partition: crc32 partitioning, append, read the new records in batches
// through the same handler, store the committed offset, and trim each
// slice to the same retention.
func BenchmarkSliceLogBaseline(b *testing.B) {
	type rec struct {
		off  int64
		tick sim.Tick
		msg  sim.Message
	}
	parts := make([][]rec, benchPartitions)
	committed := make([]int64, benchPartitions) // next offset to read
	var sum int
	handler := func(r eventlog.Record) error {
		sum += len(r.Message.Body)
		return nil
	}
	poll := func() {
		for p := range parts {
			recs := parts[p]
			if len(recs) > 2*benchKeep {
				n := copy(recs, recs[len(recs)-benchKeep:])
				clear(recs[n:])
				recs = recs[:n]
				parts[p] = recs
			}
			start := 0
			if len(recs) > 0 {
				start = int(committed[p] - recs[0].off)
			}
			for _, r := range recs[start:] {
				if err := handler(eventlog.Record{Partition: p, Offset: r.off, Tick: r.tick, Message: r.msg}); err != nil {
					b.Fatal(err)
				}
				committed[p] = r.off + 1
			}
		}
	}
	next := make([]int64, benchPartitions)
	w, _ := sim.New(sim.Config{Seed: 1})
	msgs := benchMessages(w.Env(), b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		msg := &msgs[i]
		p := crc32.ChecksumIEEE([]byte(msg.Key)) % benchPartitions
		parts[p] = append(parts[p], rec{off: next[p], msg: *msg})
		next[p]++
		if i%benchBatch == benchBatch-1 {
			poll()
		}
	}
	poll()
	reportCPU(b, cpu)
	if sum != b.N*len(benchBody) {
		b.Fatalf("sum %d", sum)
	}
}

// BenchmarkSweepLogSeed is one seed of the log sweep (6 partitions, 3
// members, 100 records over 10 keys, a crash before and after an effect
// at 2% each, the checks at the end), a new seed per operation, run until
// the producer is done and the group's lag is 0: "metrics" reads the lag
// from Metrics every tick, "lag" from Lag.
func BenchmarkSweepLogSeed(b *testing.B) {
	for _, c := range []struct {
		name string
		lag  func(*eventlog.Group) int64
	}{
		{"metrics", func(g *eventlog.Group) int64 { return g.Metrics().Lag }},
		{"lag", (*eventlog.Group).Lag},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var seed uint64
			cpu := cpuTime()
			for b.Loop() {
				seed++
				if err := sweepLogSeed(seed, c.lag); err != nil {
					b.Fatalf("seed %d: %v", seed, err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// sweepLogSeed runs one seed of BenchmarkSweepLogSeed.
func sweepLogSeed(seed uint64, lag func(*eventlog.Group) int64) error {
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		return err
	}
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash", Point: faults.MemberCrash, Probability: 0.02},
		{Name: "crash-after", Point: faults.ConsumerCrashAfterEffect, Probability: 0.02},
	}}})
	if err != nil {
		return err
	}
	t, err := eventlog.New(w, eventlog.Config{Name: "orders", Faults: in, Partitions: 6})
	if err != nil {
		return err
	}
	g, err := eventlog.NewGroup(w, t, eventlog.GroupConfig{Name: "billing"})
	if err != nil {
		return err
	}
	for i := range 3 {
		if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "m" + strconv.Itoa(i), Handler: sim.Effect(""), RestartAfter: 2}); err != nil {
			return err
		}
	}
	p, err := producer.New(w, producer.Config{Name: "shop", Target: t, Count: 100, Rate: 10, KeyPattern: "order-%d", KeyCount: 10})
	if err != nil {
		return err
	}
	if err := w.RunUntil(func() bool { return p.Done() && lag(g) == 0 }, 5000); err != nil {
		return err
	}
	return sim.Check(w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("billing"))
}
