package queue_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// seedRules are the fault rules of BenchmarkSeed, those of the queue sweep
// in bench.
var seedRules = []faults.Rule{
	{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.05},
	{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.02},
	{Name: "crash", Point: faults.ConsumerCrashAfterEffect, Probability: 0.02},
}

// runSeed is one seed of the queue sweep: a world, an injector with
// seedRules, a queue, a producer of 100 messages over 10 keys (10 per
// tick) and one consumer, run until drained, then the checks.
func runSeed(seed uint64) (*sim.World, error) {
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		return nil, err
	}
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: seedRules}})
	if err != nil {
		return nil, err
	}
	q, err := queue.New(w, queue.Config{Name: "orders", Faults: in, VisibilityTimeout: 3})
	if err != nil {
		return nil, err
	}
	p, err := producer.New(w, producer.Config{Name: "shop", Target: q, Count: 100, Rate: 10, KeyPattern: "order-%d", KeyCount: 10})
	if err != nil {
		return nil, err
	}
	if _, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "billing", Faults: in}); err != nil {
		return nil, err
	}
	if err := w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 5000); err != nil {
		return nil, err
	}
	return w, sim.Check(w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("orders"))
}

// BenchmarkSeed measures one seed of the queue sweep (bench's
// BenchmarkSweepQueue/api) per op: its allocation per seed is the figure
// the queue, producer and fault injector keep small.
func BenchmarkSeed(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		if _, err := runSeed(uint64(i) + 1); err != nil {
			b.Fatal(err)
		}
	}
}
