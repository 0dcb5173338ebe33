package lab

import (
	"testing"

	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

const benchMessages = 2000

const benchScenario = `
title: bench
run: {until: drained, max_ticks: 100000}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 2000, rate: 100, keys: "k-%d", key_count: 10}]
  consumers: [{name: c, queue: q, batch: 100}]
`

// BenchmarkRunQueue runs a scenario of benchMessages messages through a
// queue with the runner; compare with BenchmarkQueueDirect, the same
// workload wired by hand, for the runner's overhead.
func BenchmarkRunQueue(b *testing.B) {
	s, err := scenario.Load("bench.yaml", []byte(benchScenario))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rep, err := Execute(s, Options{})
		if err != nil || rep.Stats.Done != benchMessages {
			b.Fatalf("%v %+v", err, rep.Stats)
		}
	}
}

// BenchmarkQueueDirect is the baseline of BenchmarkRunQueue: the queue
// model's own producer and consumer on a World.
func BenchmarkQueueDirect(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w, _ := sim.New(sim.Config{Seed: 1})
		q, _ := queue.New(w, queue.Config{Name: "q"})
		p, _ := producer.New(w, producer.Config{Name: "p", Target: q, Count: benchMessages, Rate: 100, KeyPattern: "k-%d", KeyCount: 10})
		_, _ = queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "c", Batch: 100})
		if err := w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 100000); err != nil {
			b.Fatal(err)
		}
		if st := w.Env().Ledger.Stats(); st.Done != benchMessages {
			b.Fatalf("%+v", st)
		}
	}
}
