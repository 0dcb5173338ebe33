package lab

import (
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/sweep"
)

// seedScenario is the queue sweep seed of the bench suite as a scenario
// file: 100 messages over 10 keys, three fault rules, a consumer, run
// until drained, two checks. seedAPI is the same seed through the Go API.
const seedScenario = `
title: queue sweep
run: {until: drained, max_ticks: 5000}
topology:
  queues: [{name: orders, visibility_timeout: 3}]
actors:
  producers: [{name: shop, to: {queue: orders}, count: 100, rate: 10, keys: "order-%d", key_count: 10}]
  consumers: [{name: billing, queue: orders}]
faults:
  - {name: flaky, point: handler.transient, probability: 0.05}
  - {name: dup, point: broker.duplicate, probability: 0.02}
  - {name: crash, point: consumer.crash_after_effect, probability: 0.02}
expect:
  - {check: no_loss}
  - {check: at_least_once, consumer: orders}
`

// seedAPI runs seedScenario's seed through the Go API and returns the
// checks' verdict.
func seedAPI(seed uint64) error {
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		return err
	}
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.05},
		{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.02},
		{Name: "crash", Point: faults.ConsumerCrashAfterEffect, Probability: 0.02},
	}}})
	if err != nil {
		return err
	}
	q, err := queue.New(w, queue.Config{Name: "orders", Faults: in, VisibilityTimeout: 3})
	if err != nil {
		return err
	}
	p, err := producer.New(w, producer.Config{Name: "shop", Target: q, Count: 100, Rate: 10, KeyPattern: "order-%d", KeyCount: 10})
	if err != nil {
		return err
	}
	if _, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "billing", Faults: in}); err != nil {
		return err
	}
	if err := w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 5000); err != nil {
		return err
	}
	return sim.Check(w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("orders"))
}

// BenchmarkSeed is one seed of a sweep per operation, a new seed each
// time: through the Go API (api), and through the runner as explore runs
// it (probe: lab.Probe on a scenario loaded once) and as a report
// (execute: lab.Execute, the bench suite's scenario row). The ratio of their
// cpu-ns/op is the runner's overhead per seed; the target is at
// most 1.2x. Run with a fixed -benchtime=Nx and compare CPU time, not
// wall time, on a busy machine.
func BenchmarkSeed(b *testing.B) {
	run := func(b *testing.B, seed func(uint64)) {
		b.ReportAllocs()
		var s uint64
		cpu := sweep.CPUTime()
		for b.Loop() {
			s++
			seed(s)
		}
		if used := sweep.CPUTime() - cpu; cpu != 0 && used > 0 {
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
	b.Run("api", func(b *testing.B) {
		run(b, func(s uint64) {
			if err := seedAPI(s); err != nil {
				b.Fatalf("seed %d: %v", s, err)
			}
		})
	})
	b.Run("probe", func(b *testing.B) {
		sc, err := scenario.Load("sweep.yaml", []byte(seedScenario))
		if err != nil {
			b.Fatal(err)
		}
		run(b, func(s uint64) {
			if f, failed, err := Probe(sc, s, Options{}); err != nil || failed {
				b.Fatalf("seed %d: %v %v", s, err, f)
			}
		})
	})
	b.Run("execute", func(b *testing.B) {
		sc, err := scenario.Load("sweep.yaml", []byte(seedScenario))
		if err != nil {
			b.Fatal(err)
		}
		run(b, func(s uint64) {
			if rep, err := Execute(sc, Options{Seed: &s}); err != nil || !rep.Pass || rep.Stats.Done < 100 {
				b.Fatalf("seed %d: %v %+v", s, err, rep)
			}
		})
	})
}

// BenchmarkSeedRatio runs, per operation, one seed through the Go API and
// the same seed through Execute, alternately, and reports the process CPU
// time of each and their ratio (execute/api, the "at most 1.2x").
// Alternating seed by seed keeps a machine whose load drifts from
// favouring either form; the collector's work is charged to whichever
// seed it interrupts, which evens out over many seeds.
func BenchmarkSeedRatio(b *testing.B) {
	sc, err := scenario.Load("sweep.yaml", []byte(seedScenario))
	if err != nil {
		b.Fatal(err)
	}
	var s uint64
	var api, exec int64
	for b.Loop() {
		s++
		t0 := sweep.CPUTime()
		if err := seedAPI(s); err != nil {
			b.Fatalf("seed %d: %v", s, err)
		}
		t1 := sweep.CPUTime()
		if rep, err := Execute(sc, Options{Seed: &s}); err != nil || !rep.Pass {
			b.Fatalf("seed %d: %v", s, err)
		}
		t2 := sweep.CPUTime()
		api += int64(t1 - t0)
		exec += int64(t2 - t1)
	}
	if api > 0 {
		b.ReportMetric(float64(api)/float64(b.N), "api-cpu-ns/op")
		b.ReportMetric(float64(exec)/float64(b.N), "execute-cpu-ns/op")
		b.ReportMetric(float64(exec)/float64(api), "ratio")
	}
}
