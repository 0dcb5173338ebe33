//go:build unix

package queue_test

import (
	"syscall"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// sweepRules are the fault rules of the queue sweep in bench/ (transient
// handler failures, broker duplicates, crashes after the effect).
var sweepRules = []faults.Rule{
	{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.05},
	{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.02},
	{Name: "crash", Point: faults.ConsumerCrashAfterEffect, Probability: 0.02},
}

// sweepSeed is one seed of the queue sweep in bench/: a world, an
// injector, a queue, a producer of 100 messages (10 per tick, 10 keys)
// and a consumer applying one effect per delivery; with run it runs until
// drained, with check it then judges the ledger.
func sweepSeed(b *testing.B, seed uint64, run, check bool) {
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		b.Fatal(err)
	}
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: sweepRules}})
	if err != nil {
		b.Fatal(err)
	}
	q, err := queue.New(w, queue.Config{Name: "orders", Faults: in, VisibilityTimeout: 3})
	if err != nil {
		b.Fatal(err)
	}
	p, err := producer.New(w, producer.Config{Name: "shop", Target: q, Count: 100, Rate: 10, KeyPattern: "order-%d", KeyCount: 10})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "billing", Faults: in}); err != nil {
		b.Fatal(err)
	}
	if !run {
		return
	}
	if err := w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 5000); err != nil {
		b.Fatal(err)
	}
	if check {
		if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("orders")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSweepSeed splits a queue sweep seed (bench's
// BenchmarkSweepQueue/api) into its parts, a new seed per operation:
// building the world and its components (setup), that plus running until
// drained (run), and that plus the checks (all). The differences say
// where a seed's CPU goes; cpu-ns/op is the process's CPU time per seed,
// the collector's included.
func BenchmarkSweepSeed(b *testing.B) {
	for _, part := range []struct {
		name       string
		run, check bool
	}{{"setup", false, false}, {"run", true, false}, {"all", true, true}} {
		b.Run(part.name, func(b *testing.B) {
			b.ReportAllocs()
			var seed uint64
			start := cpuTime()
			for b.Loop() {
				seed++
				sweepSeed(b, seed, part.run, part.check)
			}
			if used := cpuTime() - start; start != 0 && used > 0 {
				b.ReportMetric(float64(used)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// cpuTime returns the process's user plus system CPU time in
// nanoseconds, 0 when it is unavailable.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
