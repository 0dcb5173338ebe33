package sweep

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// failsAt returns a probe factory whose seeds fail when bad says so.
func failsAt(bad func(uint64) bool) func() (Probe[uint64], error) {
	return func() (Probe[uint64], error) {
		return func(seed uint64) (uint64, bool, error) { return seed * 10, bad(seed), nil }, nil
	}
}

// The lowest failing seed, and under collect-all the whole report, are
// the same for any number of jobs.
func TestRunIsDeterministicAcrossJobs(t *testing.T) {
	bad := func(s uint64) bool { return s%97 == 0 || s == 333 }
	space := Seeds{From: 1, Count: 1000}
	var want []Failure[uint64]
	for _, jobs := range []int{1, 2, 3, 8} {
		all, err := Run(Config{Seeds: space, Jobs: jobs}, failsAt(bad))
		if err != nil {
			t.Fatal(err)
		}
		if all.Ran != 1000 || all.Failed != 11 || len(all.Failures) != 11 {
			t.Fatalf("jobs %d: ran %d, failed %d, listed %d", jobs, all.Ran, all.Failed, len(all.Failures))
		}
		if want == nil {
			want = all.Failures
		} else if !reflect.DeepEqual(all.Failures, want) {
			t.Fatalf("jobs %d: %v, want %v", jobs, all.Failures, want)
		}
		first, err := Run(Config{Seeds: space, Jobs: jobs, StopAtFirst: true}, failsAt(bad))
		if err != nil {
			t.Fatal(err)
		}
		if first.Failures[0] != (Failure[uint64]{Seed: 97, Value: 970}) {
			t.Fatalf("jobs %d: first failure %v", jobs, first.Failures[0])
		}
		if first.Ran < 97 || first.Ran >= 1000 {
			t.Fatalf("jobs %d: stop-at-first ran %d seeds", jobs, first.Ran)
		}
	}
}

// Every seed of a shard runs once, and only those.
func TestRunShard(t *testing.T) {
	var seen [31]atomic.Int32
	space := Seeds{From: 3, Count: 28, Shard: 2, Shards: 4}
	rep, err := Run(Config{Seeds: space, Jobs: 3}, func() (Probe[int], error) {
		return func(seed uint64) (int, bool, error) { seen[seed].Add(1); return 0, false, nil }, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran != space.Len() || rep.Ran != 7 {
		t.Fatalf("ran %d of %d", rep.Ran, space.Len())
	}
	for s := range seen {
		want := int32(0)
		if s >= 3 && s <= 30 && s%4 == 1 {
			want = 1
		}
		if got := seen[s].Load(); got != want {
			t.Errorf("seed %d ran %d times, want %d", s, got, want)
		}
	}
}

// MaxFailures keeps the lowest failing seeds and counts the rest.
func TestRunKeepsTheLowestFailures(t *testing.T) {
	rep, err := Run(Config{Seeds: Seeds{From: 1, Count: 500}, Jobs: 4, MaxFailures: 5}, failsAt(func(uint64) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, f := range rep.Failures {
		got = append(got, f.Seed)
	}
	if rep.Failed != 500 || !reflect.DeepEqual(got, []uint64{1, 2, 3, 4, 5}) {
		t.Fatalf("failed %d, listed %v", rep.Failed, got)
	}
}

// A probe that cannot run stops the sweep with its error; so does one
// that cannot be built.
func TestRunErrors(t *testing.T) {
	boom := errors.New("bad binding")
	_, err := Run(Config{Seeds: Seeds{From: 1, Count: 100}, Jobs: 2}, func() (Probe[int], error) {
		return func(seed uint64) (int, bool, error) {
			if seed >= 40 {
				return 0, false, fmt.Errorf("seed %d: %w", seed, boom)
			}
			return 0, false, nil
		}, nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if _, err := Run(Config{Seeds: Seeds{From: 1, Count: 100}}, func() (Probe[int], error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	for _, c := range []Config{
		{},
		{Seeds: Seeds{Count: 1, Shard: 3, Shards: 2}},
		{Seeds: Seeds{Count: 1}, Jobs: -1},
		{Seeds: Seeds{Count: 1}, Jobs: MaxJobs + 1},
		{Seeds: Seeds{Count: 1}, MaxFailures: -1},
	} {
		if _, err := Run(c, failsAt(func(uint64) bool { return false })); !errors.Is(err, ErrConfig) && !errors.Is(err, ErrSeeds) {
			t.Errorf("%+v: got %v", c, err)
		}
	}
	if _, err := Run[int](Config{Seeds: Seeds{Count: 1}}, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("nil probe: got %v", err)
	}
}

// Progress ends with the whole count, on the caller's goroutine.
func TestRunProgress(t *testing.T) {
	var last Progress
	calls := 0
	rep, err := Run(Config{Seeds: Seeds{From: 1, Count: 300}, Jobs: 2, Progress: func(p Progress) { last = p; calls++ }},
		failsAt(func(s uint64) bool { return s%100 == 0 }))
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != (Progress{Ran: 300, Failed: 3, Total: 300}) || rep.Jobs != 2 || rep.Wall <= 0 {
		t.Fatalf("%d calls, last %+v, report %+v", calls, last, rep)
	}
}

// schedule returns n decisions at ticks 1..n.
func schedule(n int) faults.Schedule {
	var s faults.Schedule
	for i := range n {
		s.Decisions = append(s.Decisions, faults.Decision{Tick: sim.Tick(i + 1), Rule: "r", Point: faults.BrokerDuplicate})
	}
	return s
}

// needs returns a replay over fired that fails when every tick of need is
// in the replayed schedule, and counts its runs by phase.
func needs(fired faults.Schedule, phases map[Phase]int, need ...sim.Tick) Replay {
	return func(step Step, s *faults.Schedule) (faults.Schedule, bool, error) {
		phases[step.Phase]++
		if s == nil {
			s = &fired
		}
		for _, t := range need {
			found := false
			for _, d := range s.Decisions {
				found = found || d.Tick == t
			}
			if !found {
				return *s, false, nil
			}
		}
		return *s, true, nil
	}
}

func TestShrink(t *testing.T) {
	fired := schedule(12)
	phases := map[Phase]int{}
	sh, err := Shrink(ShrinkConfig{}, needs(fired, phases, 5))
	if err != nil {
		t.Fatal(err)
	}
	if sh.Minimal.Len() != 1 || sh.Minimal.Decisions[0].Tick != 5 || sh.Faultless || sh.Capped || sh.Fired.Len() != 12 {
		t.Fatalf("%+v", sh)
	}
	if phases[PhaseRecord] != 1 || phases[PhaseVerify] != 1 || phases[PhaseNoFaults] != 1 || phases[PhaseMinimal] != 1 {
		t.Fatalf("phases %v", phases)
	}
	total := 0
	for _, n := range phases {
		total += n
	}
	if sh.Runs != total {
		t.Fatalf("runs %d, made %d", sh.Runs, total)
	}
}

// A failure that needs no fault is faultless, and the empty schedule
// runs once.
func TestShrinkFaultless(t *testing.T) {
	phases := map[Phase]int{}
	sh, err := Shrink(ShrinkConfig{}, needs(schedule(4), phases))
	if err != nil || !sh.Faultless || sh.Minimal.Len() != 0 || sh.Runs != 4 || phases[PhaseMinimize] != 0 {
		t.Fatalf("%+v %v %v", sh, phases, err)
	}
	// Nothing fired at all: the verify run is the faultless one.
	phases = map[Phase]int{}
	sh, err = Shrink(ShrinkConfig{}, needs(faults.Schedule{}, phases))
	if err != nil || !sh.Faultless || sh.Runs != 3 || phases[PhaseNoFaults] != 0 {
		t.Fatalf("%+v %v %v", sh, phases, err)
	}
}

// A schedule the caller recorded is not recorded again, and NoVerify
// skips the full replay.
func TestShrinkFromRecorded(t *testing.T) {
	fired := schedule(6)
	phases := map[Phase]int{}
	sh, err := Shrink(ShrinkConfig{Fired: &fired, NoVerify: true}, needs(fired, phases, 2, 6))
	if err != nil || sh.Minimal.Len() != 2 || phases[PhaseRecord]+phases[PhaseVerify] != 0 {
		t.Fatalf("%+v %v %v", sh, phases, err)
	}
	if sh.Runs != 1+phases[PhaseNoFaults]+phases[PhaseMinimize]+phases[PhaseMinimal] {
		t.Fatalf("runs %d, phases %v", sh.Runs, phases)
	}
}

func TestShrinkErrors(t *testing.T) {
	fired := schedule(3)
	pass := func(Step, *faults.Schedule) (faults.Schedule, bool, error) { return fired, false, nil }
	if _, err := Shrink(ShrinkConfig{}, pass); !errors.Is(err, ErrPasses) || !errors.Is(err, ErrShrink) {
		t.Errorf("passing seed: %v", err)
	}
	// Fails when it draws, not when replayed.
	flaky := func(_ Step, s *faults.Schedule) (faults.Schedule, bool, error) { return fired, s == nil, nil }
	if _, err := Shrink(ShrinkConfig{}, flaky); !errors.Is(err, ErrReplay) {
		t.Errorf("flaky: %v", err)
	}
	over := faults.Schedule{Decisions: fired.Decisions, Omitted: 1}
	if _, err := Shrink(ShrinkConfig{Fired: &over}, pass); !errors.Is(err, ErrTooMany) {
		t.Errorf("too many: %v", err)
	}
	boom := errors.New("cannot bind")
	broken := func(Step, *faults.Schedule) (faults.Schedule, bool, error) { return faults.Schedule{}, false, boom }
	if _, err := Shrink(ShrinkConfig{}, broken); !errors.Is(err, boom) {
		t.Errorf("broken: %v", err)
	}
	if _, err := Shrink(ShrinkConfig{MaxRuns: -1}, pass); !errors.Is(err, ErrConfig) {
		t.Errorf("bad config: %v", err)
	}
	if _, err := Shrink(ShrinkConfig{}, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("nil replay: %v", err)
	}
}

// The cap keeps the smallest failing schedule found so far.
func TestShrinkCap(t *testing.T) {
	phases := map[Phase]int{}
	sh, err := Shrink(ShrinkConfig{MaxRuns: 5}, needs(schedule(40), phases, 7, 33))
	if err != nil {
		t.Fatal(err)
	}
	if !sh.Capped || sh.Runs != 6 || sh.Minimal.Len() < 2 {
		t.Fatalf("%+v", sh)
	}
}
