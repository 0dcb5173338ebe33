package bench

import (
	"container/heap"
	"hash/crc32"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/sim"
)

// The models against their baselines, built with the public API so that
// every figure of the table, CPU time included, comes from this module's
// test binary. They do the work of the benchmarks of the same name in the
// model packages (queue, eventlog, pubsub), which report wall time only.

// baseItem is a message in the heap baseline.
type baseItem struct {
	msg      sim.Message
	seq      uint64
	deadline sim.Tick
	index    int
}

type readyHeap []*baseItem

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)        { *h = append(*h, x.(*baseItem)) }
func (h *readyHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return x
}

type flightHeap []*baseItem

func (h flightHeap) Len() int           { return len(h) }
func (h flightHeap) Less(i, j int) bool { return h[i].deadline < h[j].deadline }
func (h flightHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *flightHeap) Push(x any) {
	it := x.(*baseItem)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *flightHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	x.index = -1
	return x
}

// BenchmarkHeapLifecycleBaseline is BenchmarkQueueLifecycle's work on a
// bare container/heap: push to a ready heap, pop, push to an in-flight
// heap keyed by deadline with a receipt map, remove on ack. No ledger, no
// trace.
func BenchmarkHeapLifecycleBaseline(b *testing.B) {
	var ids sim.IDs
	var ready readyHeap
	var flight flightHeap
	receipts := map[uint64]*baseItem{}
	var seq, receipt uint64
	body := []byte("payload")
	b.ReportAllocs()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		seq++
		heap.Push(&ready, &baseItem{msg: sim.Message{ID: ids.Next(), Key: "k", Body: body}, seq: seq})
		it := heap.Pop(&ready).(*baseItem)
		it.deadline = sim.Tick(seq) + 30
		heap.Push(&flight, it)
		receipt++
		receipts[receipt] = it
		got, ok := receipts[receipt]
		if !ok {
			b.Fatal("no receipt")
		}
		heap.Remove(&flight, got.index)
		delete(receipts, receipt)
	}
	reportCPU(b, cpu)
}

const (
	logPartitions = 4
	logBatch      = 64   // records produced between two polls
	logKeep       = 4096 // records kept per partition (retention by size)
)

var (
	logKeys = []string{"kunde-A", "kunde-B", "kunde-C", "kunde-D", "kunde-E", "kunde-F", "kunde-G", "kunde-H"}
	logBody = []byte("payload")
)

// logMessages creates the messages a producer would hand over, before the
// timer starts: creating and registering a message is the producer's work,
// not the log's.
func logMessages(env *sim.Env, n int) []sim.Message {
	msgs := make([]sim.Message, n)
	for i := range msgs {
		msgs[i] = env.NewMessage(logKeys[i%len(logKeys)], logBody, sim.Headers{})
	}
	return msgs
}

// BenchmarkLogProducePollCommit measures one record through a 4-partition
// log: produce (crc32 partitioning, the produced event, the ledger's
// fold), and, every logBatch records, one broker step (retention by size
// keeps logKeep records per partition) and one member step that polls,
// runs the handler, records the effect and commits after processing.
func BenchmarkLogProducePollCommit(b *testing.B) { logProducePollCommit(b, true, false) }

// BenchmarkLogProducePollCommitModel is BenchmarkLogProducePollCommit
// without the ledger: the world's trace is replaced by one with no sink
// before the log is built, so it measures the log's own share.
func BenchmarkLogProducePollCommitModel(b *testing.B) { logProducePollCommit(b, false, false) }

// BenchmarkLogProducePollCommitModelNow is BenchmarkLogProducePollCommitModel
// with every message created in the tick it is produced, as a producer
// makes them: a partition then keeps its records in the narrow form (64
// bytes each), while messages created earlier, as a relay hands them
// over (and as logMessages makes them, all at tick 0), get an aside each
// (88 bytes).
func BenchmarkLogProducePollCommitModelNow(b *testing.B) { logProducePollCommit(b, false, true) }

func logProducePollCommit(b *testing.B, ledger, now bool) {
	w, _ := sim.New(sim.Config{Seed: 1})
	if !ledger {
		w.Env().Trace = sim.NewTrace()
	}
	env := w.Env()
	t, err := eventlog.New(w, eventlog.Config{Name: "bench", Partitions: logPartitions, RetentionRecords: logKeep})
	if err != nil {
		b.Fatal(err)
	}
	g, _ := eventlog.NewGroup(w, t, eventlog.GroupConfig{Name: "g"})
	var sum int
	m, _ := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "a", Batch: logBatch * logPartitions, Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
		sum += len(d.Msg.Body)
		d.Apply("")
		return nil
	})})
	msgs := logMessages(env, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if now {
			msgs[i].Created = env.Now()
		}
		if _, err := t.Produce(msgs[i]); err != nil {
			b.Fatal(err)
		}
		if i%logBatch == logBatch-1 {
			now := env.Clock.Advance()
			t.Step(now)
			m.Step(now)
		}
	}
	m.Step(env.Clock.Advance())
	reportCPU(b, cpu)
	if g.Metrics().Lag != 0 || sum != b.N*len(logBody) {
		b.Fatalf("lag %d, sum %d", g.Metrics().Lag, sum)
	}
}

// BenchmarkSliceLogBaseline does the same work on a bare slice per
// partition: crc32 partitioning, append, read the new records in batches
// through a handler, store the committed offset, and trim each slice to
// the same retention.
func BenchmarkSliceLogBaseline(b *testing.B) {
	type rec struct {
		off  int64
		tick sim.Tick
		msg  sim.Message
	}
	parts := make([][]rec, logPartitions)
	committed := make([]int64, logPartitions) // next offset to read
	var sum int
	handler := func(r eventlog.Record) error {
		sum += len(r.Message.Body)
		return nil
	}
	poll := func() {
		for p := range parts {
			recs := parts[p]
			if len(recs) > 2*logKeep {
				n := copy(recs, recs[len(recs)-logKeep:])
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
	next := make([]int64, logPartitions)
	w, _ := sim.New(sim.Config{Seed: 1})
	msgs := logMessages(w.Env(), b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		msg := &msgs[i]
		p := crc32.ChecksumIEEE([]byte(msg.Key)) % logPartitions
		parts[p] = append(parts[p], rec{off: next[p], msg: *msg})
		next[p]++
		if i%logBatch == logBatch-1 {
			poll()
		}
	}
	poll()
	reportCPU(b, cpu)
	if sum != b.N*len(logBody) {
		b.Fatalf("sum %d", sum)
	}
}

const (
	fanoutSubs  = 16
	fanoutBatch = 64 // publishes between two subscriber steps
)

func fanoutMessage() sim.Message {
	return sim.Message{ID: 1, Key: "order-1", Body: make([]byte, 64), Headers: sim.Headers{Type: "orders.created", CorrelationID: "c1"}, Created: 1}
}

// BenchmarkPubSubFanout16 publishes to 16 subscribers of a wildcard
// pattern and lets them drain their buffers every 64 publishes (one world
// tick): routing, 16 buffer copies with their events, and 16 handler
// calls, each applying an effect, per operation, with the ledger folding
// every event.
func BenchmarkPubSubFanout16(b *testing.B) { pubsubFanout(b, true) }

// BenchmarkPubSubFanout16Model is BenchmarkPubSubFanout16 without the
// ledger: the world's trace is replaced by one with no sink before the
// broker is built (as memWorld does), so it measures the model's share of
// a fan-out, events counted but not built.
func BenchmarkPubSubFanout16Model(b *testing.B) { pubsubFanout(b, false) }

func pubsubFanout(b *testing.B, ledger bool) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if !ledger {
		w.Env().Trace = sim.NewTrace()
	}
	br, err := pubsub.New(w, pubsub.Config{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range fanoutSubs {
		if _, err := br.Subscribe(pubsub.SubscriberConfig{Name: "s" + strconv.Itoa(i), Pattern: "orders.>", Buffer: fanoutBatch}); err != nil {
			b.Fatal(err)
		}
	}
	env := w.Env()
	m := fanoutMessage()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		m.ID = env.IDs.Next()
		if err := br.PublishTo("orders.created", m); err != nil {
			b.Fatal(err)
		}
		if i%fanoutBatch == fanoutBatch-1 {
			w.Tick()
		}
	}
	reportCPU(b, cpu)
	b.StopTimer()
	if got := br.Metrics().Delivered; got != fanoutSubs*b.N {
		b.Fatalf("delivered %d, want %d", got, fanoutSubs*b.N)
	}
}

// BenchmarkFanoutLoopBaseline is the simplest structure doing the same
// fan-out: copy each message into 16 slices, emptied every 64 messages.
func BenchmarkFanoutLoopBaseline(b *testing.B) {
	bufs := make([][]sim.Message, fanoutSubs)
	for i := range bufs {
		bufs[i] = make([]sim.Message, 0, fanoutBatch)
	}
	m := fanoutMessage()
	handled := 0
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		for j := range bufs {
			bufs[j] = append(bufs[j], m)
		}
		if i%fanoutBatch == fanoutBatch-1 {
			for j := range bufs {
				for k := range bufs[j] {
					if bufs[j][k].ID != 0 {
						handled++
					}
				}
				bufs[j] = bufs[j][:0]
			}
		}
	}
	reportCPU(b, cpu)
	b.StopTimer()
	if handled > fanoutSubs*b.N {
		b.Fatal("impossible count")
	}
}
