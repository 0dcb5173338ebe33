package sweep_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/sweep"
)

// A sweep over seeds 1..100 on two workers stops at the first failure;
// the lowest failing seed is the same whatever the scheduling.
func ExampleRun() {
	cfg := sweep.Config{Seeds: sweep.Seeds{From: 1, Count: 100}, Jobs: 2, StopAtFirst: true}
	rep, err := sweep.Run(cfg, func() (sweep.Probe[string], error) {
		return func(seed uint64) (string, bool, error) {
			if seed%37 == 0 {
				return "seed is a multiple of 37", true, nil
			}
			return "", false, nil
		}, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	first := rep.Failures[0]
	fmt.Printf("seed %d failed: %s\n", first.Seed, first.Value)
	// Output:
	// seed 37 failed: seed is a multiple of 37
}

// Shard 2 of 3 of seeds 1..10 holds the seeds s with s mod 3 == 1.
func ExampleSeeds() {
	s := sweep.Seeds{From: 1, Count: 10, Shard: 2, Shards: 3}
	for seed := range s.All() {
		fmt.Print(seed, " ")
	}
	fmt.Printf("(%d seeds; %s)\n", s.Len(), s)
	// Output:
	// 1 4 7 10 (4 seeds; seeds 1..10, shard 2/3)
}

// Shrink reduces ten decisions to the two that together make the
// failure; replay stands for rerunning the seed with exactly the
// decisions it is given.
func ExampleShrink() {
	var fired faults.Schedule
	for i := range 10 {
		fired.Decisions = append(fired.Decisions, faults.Decision{Tick: sim.Tick(i + 1), Rule: "dup", Point: faults.BrokerDuplicate})
	}
	has := func(s *faults.Schedule, tick sim.Tick) bool {
		for _, d := range s.Decisions {
			if d.Tick == tick {
				return true
			}
		}
		return false
	}
	replay := func(step sweep.Step, s *faults.Schedule) (faults.Schedule, bool, error) {
		if s == nil { // the seed's own run: everything fires
			s = &fired
		}
		return *s, has(s, 3) && has(s, 8), nil
	}
	sh, err := sweep.Shrink(sweep.ShrinkConfig{}, replay)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d decisions shrunk to %d in %d runs: %s\n", sh.Fired.Len(), sh.Minimal.Len(), sh.Runs, sh.Minimal.Words())
	// Output:
	// 10 decisions shrunk to 2 in 21 runs: broker.duplicate at t=3, then broker.duplicate at t=8
}
