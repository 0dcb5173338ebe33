package outbox

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

type nopPublisher struct{ n int }

func (p *nopPublisher) Publish(sim.Message) error { p.n++; return nil }

var benchCustomers = []string{"kunde-A", "kunde-B", "kunde-C", "kunde-D"}

// benchOrders places and relays b.N orders, perTick at a time, and reports
// ns per order, wall time and process CPU time (cpu-ns/op, steadier on a
// shared machine; it includes the garbage collector's work). Processed rows are removed outside the timer every few
// thousand orders so the table stays small in both benchmarks.
func benchOrders(b *testing.B, perTick int, cfg RelayConfig, place func(s *Service, reqs []OrderRequest) error) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	env := w.Env()
	s, err := New(w, Config{Name: "shop"})
	if err != nil {
		b.Fatal(err)
	}
	p := &nopPublisher{}
	cfg.Service, cfg.Target = s, p
	r, err := NewRelay(w, cfg)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]OrderRequest, perTick)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	done := 0
	for done < b.N {
		now := env.Clock.Advance()
		n := min(perTick, b.N-done)
		for i := range reqs[:n] {
			reqs[i] = OrderRequest{Customer: benchCustomers[(done+i)%len(benchCustomers)], Amount: int64(1 + (done+i)%100)}
		}
		if err := place(s, reqs[:n]); err != nil {
			b.Fatal(err)
		}
		for s.m.Pending > 0 {
			r.Step(now)
			if s.m.Pending > 0 {
				now = env.Clock.Advance()
			}
		}
		done += n
		if s.m.Sent >= 4096 {
			b.StopTimer()
			c := cpuTime()
			if _, err := s.Cleanup(0, 0); err != nil {
				b.Fatal(err)
			}
			cpu0 += cpuTime() - c // untimed work is not charged either
			b.StartTimer()
		}
	}
	b.StopTimer()
	if cpu0 > 0 {
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	}
	if p.n != b.N || s.m.Marked != b.N {
		b.Fatalf("published %d, marked %d, want %d", p.n, s.m.Marked, b.N)
	}
}

// BenchmarkOutboxOrderAndRelay places 64 orders per tick in one transaction
// (a group commit) and relays them with one claim and one mark transaction
// per batch of 64.
func BenchmarkOutboxOrderAndRelay(b *testing.B) {
	benchOrders(b, 64, RelayConfig{Batch: 64}, func(s *Service, reqs []OrderRequest) error {
		_, err := s.PlaceOrders(reqs)
		return err
	})
}

// BenchmarkOutboxOneTxnPerOpBaseline does the same work with one memdb
// transaction per operation: one per order (order and outbox row), one
// claim and one mark per row.
func BenchmarkOutboxOneTxnPerOpBaseline(b *testing.B) {
	benchOrders(b, 1, RelayConfig{Batch: 1, MarkEach: true}, func(s *Service, reqs []OrderRequest) error {
		for _, q := range reqs {
			if _, _, err := s.PlaceOrder(q.Customer, q.Amount); err != nil {
				return err
			}
		}
		return nil
	})
}
