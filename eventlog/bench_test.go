package eventlog_test

import (
	"hash/crc32"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
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
// ledger is always attached, as in every simulation; "ledger" is the name
// the benchmark table knows it by.
func BenchmarkLogProducePollCommit(b *testing.B) {
	b.Run("ledger", func(b *testing.B) { logProducePollCommit(b, true, false) })
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
	if sum != b.N*len(benchBody) {
		b.Fatalf("sum %d", sum)
	}
}

// BenchmarkLogModel is BenchmarkLogProducePollCommit without the ledger
// (the world's trace replaced by one with no sink): the model's own share.
// "now" produces every message in the tick it was created, as a producer
// does, which a partition keeps in its narrow form (64 bytes a record);
// "earlier" produces messages created before, as a relay does (and as
// benchMessages makes them, all at tick 0), which the partition keeps
// with an aside each (88 bytes a record).
func BenchmarkLogModel(b *testing.B) {
	b.Run("now", func(b *testing.B) { logProducePollCommit(b, false, true) })
	b.Run("earlier", func(b *testing.B) { logProducePollCommit(b, false, false) })
}

// logProducePollCommit is the loop of both benchmarks above: with the
// ledger or with a trace that has no sink, and with each message created
// in the tick it is produced (now) or at tick 0, as benchMessages makes
// them.
func logProducePollCommit(b *testing.B, ledger, now bool) {
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
	for i := 0; i < b.N; i++ {
		if now {
			msgs[i].Created = env.Now()
		}
		if _, err := t.Produce(msgs[i]); err != nil {
			b.Fatal(err)
		}
		if i%benchBatch == benchBatch-1 {
			tick := env.Clock.Advance()
			t.Step(tick)
			m.Step(tick)
		}
	}
	m.Step(env.Clock.Advance())
	if g.Metrics().Lag != 0 || sum != b.N*len(benchBody) {
		b.Fatalf("lag %d, sum %d", g.Metrics().Lag, sum)
	}
}
