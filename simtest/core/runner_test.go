package core

import (
	"bytes"
	"errors"
	"runtime"
	"strconv"
	"strings"
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

// Probe runs f on the caller's goroutine and starts none. A seed its
// World stops (a failure outside Check, a failing Check, the trace asked
// for after the run began) ends f where it stands, with f's deferred
// calls run, and Probe returns the failure to a caller that carries on;
// a panic of f's own reaches the caller unrecovered, as it was raised.
func TestProbeRunsOnTheCallersGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	caller := goid()
	for seed := uint64(1); seed <= 200; seed++ {
		var ran, deferred, after int
		err := Probe(t, seed, func(t *testing.T, w *World) {
			ran++
			if id := goid(); id != caller {
				t.Fatalf("seed %d ran on goroutine %d, the caller is %d", seed, id, caller)
			}
			defer func() { deferred++ }()
			w.Run(3)
			switch seed % 4 {
			case 1:
				w.Must(errors.New("stop")) // a failure outside Check
			case 2:
				w.Check(breaks{}) // a failing Check
			case 3:
				w.Trace().Emit(sim.Event{Tick: w.Now(), Kind: sim.KindSent, Msg: 1, Actor: "test"})
				w.Events() // the trace, asked for after the run began: run again with it
			}
			w.Check(holds{})
			after++
		})
		fails := seed%4 == 1 || seed%4 == 2
		if (err != nil) != fails {
			t.Fatalf("seed %d: Probe returned %v", seed, err)
		}
		runs := 1
		if seed%4 == 3 {
			runs = 2
		}
		if ran != runs || deferred != runs {
			t.Fatalf("seed %d: f ran %d times, its deferred call %d; want %d", seed, ran, deferred, runs)
		}
		if fails && after != 0 || !fails && after != 1 {
			t.Fatalf("seed %d: f went on %d times after its World stopped it (err %v)", seed, after, err)
		}
	}
	if n := settle(before); n > before {
		t.Fatalf("%d goroutines after the Probe calls, %d before", n, before)
	}
	boom := errors.New("boom")
	got := func() (x any) {
		defer func() { x = recover() }()
		Probe(t, 1, func(t *testing.T, w *World) { panic(boom) })
		return nil
	}()
	if got != boom {
		t.Fatalf("a panic of f's own reached the caller as %v, want %v", got, boom)
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

// breaks is a checker that always finds a violation.
type breaks struct{}

func (breaks) Name() string { return "breaks" }
func (breaks) Violations(*sim.Ledger) []sim.Violation {
	return []sim.Violation{{Check: "breaks", Detail: "always"}}
}

// TestProbeStopIsNotSwallowed: a deferred recover in f that takes the
// World's stop does not make a failed seed pass: Probe reports the seed
// failed and says f recovered the stop. A Probe nested in f recovers only
// its own World's stop, never the outer one's.
func TestProbeStopIsNotSwallowed(t *testing.T) {
	var got any
	err := Probe(t, 1, func(t *testing.T, w *World) {
		func() {
			defer func() { got = recover() }()
			w.Must(errors.New("stop"))
		}()
	})
	if err == nil || !strings.Contains(err.Error(), "f recovered the World's stop") || !strings.Contains(err.Error(), "stop") {
		t.Errorf("a swallowed stop: Probe returned %v", err)
	}
	if e, ok := got.(error); !ok || !strings.Contains(e.Error(), "must not recover this panic") {
		t.Errorf("the stop recovered in f reads %v, want an error that says what it is", got)
	}

	var inner error
	outerRan := false
	err = Probe(t, 2, func(t *testing.T, w *World) {
		inner = Probe(t, 3, func(t *testing.T, iw *World) {
			w.Must(errors.New("outer stop")) // the outer World stops inside the inner f
		})
		outerRan = true
	})
	if outerRan || err == nil || !strings.Contains(err.Error(), "outer stop") {
		t.Errorf("the outer World's stop inside a nested Probe: outer went on %v, outer error %v", outerRan, err)
	}
	if inner != nil {
		t.Errorf("the inner Probe returned %v for a stop that was not its own", inner)
	}
}
