package bench

import (
	"testing"

	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// statsMessages is how many messages the ledger holds when its summary is
// taken: the size of run at which the player's stats refresh is measured.
const statsMessages = 1_000_000

// BenchmarkLedgerStats1M measures what the player's stats panel pays on a
// big run: with 10^6 settled messages in the ledger, one operation is 32
// more lifecycles (send, receive, ack: a stretch of play) followed by
// Ledger.Stats, the summary the panel shows. A summary kept incrementally
// costs about the 32 lifecycles; one that scans every outcome costs
// O(messages x consumers) per refresh. The frame budget is 16 ms.
// first-cpu-ns is the CPU time of the first summary, which folds every
// copy once.
func BenchmarkLedgerStats1M(b *testing.B) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	env := w.Env()
	q, err := queue.New(w, queue.Config{Name: "stats"})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte("payload")
	var buf []queue.Delivery
	lifecycle := func() {
		if err := q.Send(env.NewMessage("k", body, sim.Headers{}), 0); err != nil {
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
	for range statsMessages {
		lifecycle()
	}
	// The player asks for the summary from its first frame on, so the
	// ledger keeps it from then: the first call, which folds every copy
	// once, is measured apart (first-cpu-ns), and the operations measure
	// the refreshes that follow.
	l := w.Ledger()
	first := cpuTime()
	if st := l.Stats(); st.Done != statsMessages {
		b.Fatalf("stats: %+v", st)
	}
	if first != 0 {
		first = cpuTime() - first
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		for range 32 {
			lifecycle()
		}
		if st := l.Stats(); st.Done < statsMessages {
			b.Fatalf("stats: %+v", st)
		}
	}
	reportCPU(b, cpu)
	if first != 0 {
		b.ReportMetric(float64(first), "first-cpu-ns")
	}
}
