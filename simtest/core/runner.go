package core

// A runner runs a sweep worker's quiet seeds one after another on a
// goroutine of its own, so that a t.FailNow in f (runtime.Goexit) ends
// that goroutine and never the worker's. A seed that returns, or that its
// World stopped (World.stop, recovered by quiet), leaves the goroutine
// parked for the next one, with the stack it grew: a seed costs two
// channel handoffs instead of a goroutine start and its stack growth. A
// seed that ends by Goexit takes its goroutine with it, and the next seed
// starts a fresh one.
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
