package core

import (
	"bytes"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/sim"
)

// goid returns the id of the calling goroutine, from its stack header.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// settle waits until the number of goroutines is at most want, and
// returns the number it saw last: a goroutine that was told to end may
// still be unwinding.
func settle(want int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 1000 && n > want; i++ {
		time.Sleep(time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

// A runner keeps its goroutine across jobs that return, never runs a job
// on the caller's goroutine, starts a fresh goroutine after a job that
// ended its own by Goexit, and leaves no goroutine behind once closed.
func TestRunnerReusesItsGoroutineUntilGoexit(t *testing.T) {
	before := runtime.NumGoroutine()
	r := newRunner()
	var ids []uint64
	job := func() { ids = append(ids, goid()) }
	exit := func() { ids = append(ids, goid()); runtime.Goexit() }
	for _, f := range []func(){job, job, exit, job, job, exit, exit, job} {
		r.do(f)
	}
	if r.alive {
		// The last job returned: its goroutine is parked.
		r.close()
	} else {
		t.Fatal("the runner's goroutine did not survive a job that returned")
	}
	// Jobs 0-2 share a goroutine, 3-5 the next, 6 its own, 7 the last.
	same := [][]int{{0, 1, 2}, {3, 4, 5}, {6}, {7}}
	caller := goid()
	seen := map[uint64]bool{}
	for _, g := range same {
		id := ids[g[0]]
		if id == caller || seen[id] {
			t.Fatalf("job %d ran on goroutine %d (caller %d, ids %v): want a fresh one", g[0], id, caller, ids)
		}
		seen[id] = true
		for _, j := range g[1:] {
			if ids[j] != id {
				t.Fatalf("job %d ran on goroutine %d, job %d on %d: want the same (ids %v)", g[0], id, j, ids[j], ids)
			}
		}
	}
	r.close() // closing twice is harmless
	if n := settle(before); n > before {
		t.Fatalf("%d goroutines after close, %d before", n, before)
	}
}

// Probe in a loop keeps one goroutine parked for its test, whatever the
// seeds do, and none outlives the test.
func TestProbeLeavesNoGoroutineBehind(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("loop", func(t *testing.T) {
		inside := runtime.NumGoroutine()
		for seed := uint64(1); seed <= 200; seed++ {
			err := Probe(t, seed, func(t *testing.T, w *World) {
				w.Run(3)
				if seed%3 == 0 {
					w.Must(errors.New("stop")) // ends the seed's goroutine
				}
				w.Check(holds{})
			})
			if (err != nil) != (seed%3 == 0) {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if n := settle(inside + 1); n > inside+1 {
				t.Fatalf("seed %d: %d goroutines, %d before the loop", seed, n, inside)
			}
		}
	})
	if n := settle(before); n > before {
		t.Fatalf("%d goroutines after the test, %d before", n, before)
	}
}

// A Sweep's runners end when it returns, before its test does.
func TestSweepLeavesNoGoroutineBehind(t *testing.T) {
	t.Run("sweep", func(t *testing.T) {
		before := runtime.NumGoroutine()
		if s := Sweep(t, 100, func(t *testing.T, w *World) {
			w.Run(3)
			w.Check(holds{})
		}); s != nil {
			t.Fatalf("the sweep shrank %+v", s)
		}
		if n := settle(before); n > before {
			t.Fatalf("%d goroutines after the sweep returned, %d before", n, before)
		}
	})
}

// holds is a checker that always holds: the runs here have no model.
type holds struct{}

func (holds) Name() string                           { return "holds" }
func (holds) Violations(*sim.Ledger) []sim.Violation { return nil }
