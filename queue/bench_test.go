package queue

import (
	"container/heap"
	"io"
	"runtime"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// BenchmarkQueueLifecycle measures one message's life in a Queue: send,
// receive, ack, with the ledger on (including its growth) and the trace
// writing its text form to io.Discard: the queue's sent, received and
// acked events are built with every field the ledger folds, folded, and
// formatted. Compare with BenchmarkHeapLifecycleBaseline, measured in the
// same run.
func BenchmarkQueueLifecycle(b *testing.B) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	env := w.Env()
	env.Trace.Attach(sim.NewTextWriter(io.Discard))
	q, err := New(w, Config{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte("payload")
	var buf []Delivery
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := env.NewMessage("k", body, sim.Headers{})
		if err := q.Send(m, 0); err != nil {
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
	b.StopTimer()
	l := env.Ledger
	last := env.IDs.Last()
	if r, _ := l.Record(last); r.State != sim.StateDone || r.Sends != 1 {
		b.Fatalf("the ledger folded %+v for the last lifecycle", r)
	}
	if e := l.Entry(last, l.Consumer("bench")); e.Delivered != 1 || !e.Acked {
		b.Fatalf("the ledger folded %+v for the last delivery", e)
	}
}

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

// BenchmarkHeapLifecycleBaseline is the same lifecycle on a bare
// container/heap: push to a ready heap, pop, push to an in-flight heap
// keyed by deadline with a receipt map, remove on ack. No ledger, no trace.
func BenchmarkHeapLifecycleBaseline(b *testing.B) {
	var ids sim.IDs
	var ready readyHeap
	var flight flightHeap
	receipts := map[uint64]*baseItem{}
	var seq, receipt uint64
	body := []byte("payload")
	b.ReportAllocs()
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
}

// residentBytes measures the heap bytes a queue holds per resident
// message, beyond the messages' bodies (which are nil here). The ledger's
// own records are not counted: it is detached from the world's trace
// before the sends, as no model can do.
func residentBytes(n int, fifo bool) float64 {
	w, _ := sim.New(sim.Config{})
	w.Env().Trace = sim.NewTrace() // no ledger: measure the queue alone
	msgs := make([]sim.Message, n)
	for i := range msgs {
		msgs[i] = sim.Message{ID: sim.ID(i + 1), Key: "kunde-1"}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	q, _ := New(w, Config{Name: "mem", FIFO: fifo})
	for _, m := range msgs {
		_ = q.Send(m, 0)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(q)
	runtime.KeepAlive(msgs)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// BenchmarkResidentMemory reports the bytes per resident queued message.
func BenchmarkResidentMemory(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(residentBytes(100_000, false), "B/resident-msg")
	}
}

func TestResidentMemoryPerMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100k messages")
	}
	for _, fifo := range []bool{false, true} {
		if got := residentBytes(100_000, fifo); got > 256 {
			t.Errorf("fifo=%v: %.0f bytes per resident message, want <= 256", fifo, got)
		} else {
			t.Logf("fifo=%v: %.0f bytes per resident message", fifo, got)
		}
	}
}
