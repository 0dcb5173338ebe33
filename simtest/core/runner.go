package core

import (
	"runtime"
	"sync"
	"testing"
)

// A runner runs quiet seeds one after another on a goroutine of its own,
// so that a failure that ends f's goroutine (runtime.Goexit, through
// t.FailNow or a quiet World's stop) ends that goroutine and never the
// caller's. A seed that returns leaves the goroutine parked for the next
// one, with the stack it grew: a passing seed costs two channel handoffs
// instead of a goroutine start and its stack growth. A seed that ends by
// Goexit takes its goroutine with it, and the next seed starts a fresh one.
//
// A runner is used by one goroutine at a time; at most one goroutine runs
// for it, parked between seeds until close.
type runner struct {
	jobs  chan func()
	done  chan bool // true: the job returned and the goroutine waits for the next
	alive bool      // a goroutine is parked on jobs
}

func newRunner() *runner {
	return &runner{jobs: make(chan func()), done: make(chan bool)}
}

// do runs job on the runner's goroutine, starting one when none is
// parked, and returns when job has returned or ended its goroutine.
func (r *runner) do(job func()) {
	if !r.alive {
		go r.loop()
	}
	r.jobs <- job
	r.alive = <-r.done
}

// close ends the parked goroutine, if any, and waits until it has left
// its loop. The runner may be used again afterwards.
func (r *runner) close() {
	if r.alive {
		r.alive = false
		r.jobs <- nil
		<-r.done
	}
}

// loop runs jobs until close sends nil.
func (r *runner) loop() {
	for job := range r.jobs {
		if job == nil {
			r.done <- false
			return
		}
		r.run(job)
		r.done <- true
	}
}

// run runs job; when job ends the goroutine (runtime.Goexit) it reports
// that on done as the goroutine unwinds.
func (r *runner) run(job func()) {
	exited := true
	defer func() {
		if exited {
			r.done <- false
		}
	}()
	job()
	exited = false
}

// probeRunners keeps the runners Probe parks between calls, per test: a
// loop of Probe calls on one test reuses them, and the test's Cleanup
// ends them, so none outlives the test. A test keeps at most GOMAXPROCS
// parked runners (the most Probe calls that run at once on it, in the
// usual case); the rest end when their seed does. Only the testing
// package's own tests (*testing.T, *testing.B, *testing.F) are keyed: a
// test of another type gets a runner that ends with its Probe call.
var probeRunners struct {
	sync.Mutex
	idle map[testing.TB][]*runner
}

// takeRunner returns a parked runner of t's, or a new one; it registers
// the Cleanup that ends t's parked runners on t's first call.
func takeRunner(t testing.TB) *runner {
	if !keyed(t) {
		return newRunner()
	}
	probeRunners.Lock()
	idle, ok := probeRunners.idle[t]
	if n := len(idle); n > 0 {
		r := idle[n-1]
		probeRunners.idle[t] = idle[:n-1]
		probeRunners.Unlock()
		return r
	}
	if !ok {
		if probeRunners.idle == nil {
			probeRunners.idle = map[testing.TB][]*runner{}
		}
		probeRunners.idle[t] = nil
	}
	probeRunners.Unlock()
	if !ok {
		t.Cleanup(func() { endRunners(t) })
	}
	return newRunner()
}

// parkRunner keeps r for t's next Probe call, or ends it when t keeps
// enough already or has ended.
func parkRunner(t testing.TB, r *runner) {
	if keyed(t) && r.alive {
		probeRunners.Lock()
		idle, ok := probeRunners.idle[t]
		if ok && len(idle) < runtime.GOMAXPROCS(0) {
			probeRunners.idle[t] = append(idle, r)
			probeRunners.Unlock()
			return
		}
		probeRunners.Unlock()
	}
	r.close()
}

// endRunners ends t's parked runners and forgets t.
func endRunners(t testing.TB) {
	probeRunners.Lock()
	idle := probeRunners.idle[t]
	delete(probeRunners.idle, t)
	probeRunners.Unlock()
	for _, r := range idle {
		r.close()
	}
}

// keyed reports whether t can key probeRunners: a test of the testing
// package, compared by pointer.
func keyed(t testing.TB) bool {
	switch t.(type) {
	case *testing.T, *testing.B, *testing.F:
		return true
	}
	return false
}
