package lab

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// growthSeeds are small files whose work can only grow: the shapes the
// budget on derived work exists for, seeded into FuzzRunUnderBudget's
// corpus so the fuzzer mutates around them.
var growthSeeds = []string{
	`{version: 1, title: t, run: {ticks: 100000}, topology: {topics: [{name: s, subscribers: [{name: e, buffer: 100000, emits: [{topic: s, count: 2}]}]}]}, actors: {producers: [{name: p, to: {topic: s}, count: 1}]}}`,
	`{version: 1, title: t, run: {ticks: 100}, topology: {topics: [{name: s, subscribers: [{name: a, buffer: 1000, emits: [{topic: s, count: 50}]}, {name: b, buffer: 1000, emits: [{topic: s, count: 50}]}]}]}, actors: {producers: [{name: p, to: {topic: s}, count: 3}]}}`,
	`{version: 1, title: t, run: {until: drained, max_ticks: 5000}, topology: {queues: [{name: q}]}, actors: {producers: [{name: p, to: {queue: q}, count: 10}], consumers: [{name: c, queue: q}]}, faults: [{name: d, point: broker.duplicate}]}`,
	`{version: 1, title: t, run: {ticks: 300}, topology: {queues: [{name: q, dead_letter: {queue: d, max_receive_count: 1}}, {name: d}]}, actors: {producers: [{name: p, to: {queue: q}, count: 5000, rate: 5000}], consumers: [{name: c, queue: q, batch: 5000, handler: {kind: poison}}]}, timeline: [{at: 2, action: redrive, queue: d}, {at: 3, action: redrive, queue: d}, {at: 4, action: redrive, queue: d}]}`,
}

// fuzzBudget is the run budget scaled down by ten: the properties below
// hold at any scale, and at this one every seed runs in about a second,
// well under the fuzzer's ten seconds per input. The full caps are
// exercised by cmd/brokerlab's TestRunawayFilesHitTheBudget and
// scripts/hostile-shapes.sh.
var fuzzBudget = sim.Budget{Messages: scenario.MaxCopies / 10, DeliveriesPerTick: scenario.MaxDeliveriesPerTick / 10,
	CascadePerRoot: scenario.MaxCascadePerRoot / 10, Events: scenario.MaxEvents / 10, Steps: scenario.MaxSteps / 10}

// FuzzRunUnderBudget loads arbitrary bytes and runs whatever loads to its
// end under a budget of fuzzBudget, growth-shaped inputs included. A run
// must never panic, must end (the budget and max_ticks bound it), must
// stay within its budget (a run that exceeds one stops with a positioned
// runtime error naming it, having created at most a step's worth more),
// and must be repeatable.
func FuzzRunUnderBudget(f *testing.F) {
	for _, s := range growthSeeds {
		f.Add([]byte(s))
	}
	addSeedFiles(f, "../scenario/testdata/valid/*.yaml", "../scenario/lessons/*.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Load("fuzz.yaml", data)
		if err != nil {
			return
		}
		var sums [2]int
		for i := range sums {
			b := fuzzBudget
			r, err := New(s, Options{budget: &b})
			if err != nil {
				return
			}
			deadline := time.Now().Add(30 * time.Second)
			for r.Step() {
				if time.Now().After(deadline) {
					t.Fatalf("a run is still going after 30 s at t=%d", r.Now())
				}
			}
			rep := r.Finish()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > 512<<20 {
				t.Fatalf("a run holds %d MiB", ms.HeapAlloc>>20)
			}
			runtime.KeepAlive(r)
			if err := r.World().Err(); err != nil {
				if !errors.Is(err, sim.ErrBudget) || r.Err() == nil {
					t.Fatalf("a run over its budget must stop with a positioned error: %v / %v", err, r.Err())
				}
			}
			// The message cap bounds what a run created, give or take the
			// work of the one step in which it was crossed.
			if n := rep.Stats.Messages; n > 2*int(fuzzBudget.Messages) {
				t.Fatalf("%d copies created, cap %d", n, fuzzBudget.Messages)
			}
			if n, steps := r.World().Env().Trace.Len(), r.World().Env().Steps(); n > 2*fuzzBudget.Events || steps > fuzzBudget.Steps+1 {
				t.Fatalf("%d events and %d steps, caps %d and %d", n, steps, fuzzBudget.Events, fuzzBudget.Steps)
			}
			sums[i] = rep.Stats.Messages*31 + rep.Stats.Delivered
		}
		if sums[0] != sums[1] {
			t.Fatalf("two runs differ: %v", sums)
		}
	})
}
