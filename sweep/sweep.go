package sweep

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The errors of the package; the errors Run and Shrink return wrap one of
// them.
var (
	// ErrConfig is wrapped by the errors of Config.Validate.
	ErrConfig = errors.New("sweep: bad config")
	// ErrSeeds is wrapped by the errors of Seeds.Validate.
	ErrSeeds = errors.New("sweep: bad seeds")
)

// MaxJobs caps Config.Jobs: more workers than that only cost memory.
const MaxJobs = 1024

// DefaultMaxFailures is how many failing seeds a Report lists when
// Config.MaxFailures is 0.
const DefaultMaxFailures = 10_000

// DefaultProgressEvery is how often Run calls Config.Progress when
// Config.ProgressEvery is 0.
const DefaultProgressEvery = 100 * time.Millisecond

// batch is how many consecutive seeds a worker takes at a time: enough to
// make the shared counter cheap, few enough that a stop is seen soon.
const batch = 16

// Config says which seeds Run sweeps and how.
type Config struct {
	// Seeds is the space swept, in increasing order.
	Seeds Seeds
	// Jobs is how many workers run seeds at once; 0 means
	// runtime.GOMAXPROCS(0). With 1, the probe is called on one goroutine
	// in increasing seed order, so it may fold what it sees.
	Jobs int
	// StopAtFirst stops the sweep at the first failure: no seed above the
	// lowest failing seed known starts. The lowest failing seed is the
	// same as in a full sweep; which seeds above it ran is not.
	StopAtFirst bool
	// MaxFailures caps the failing seeds a Report lists, the lowest ones;
	// Report.Failed counts them all. 0 means DefaultMaxFailures.
	MaxFailures int
	// Progress, when not nil, is called on the goroutine that called Run
	// every ProgressEvery while the sweep runs, and once at its end.
	Progress func(Progress)
	// ProgressEvery is the interval of Progress; 0 means
	// DefaultProgressEvery.
	ProgressEvery time.Duration
}

// Validate reports a configuration Run refuses, wrapping ErrConfig or
// ErrSeeds.
func (c Config) Validate() error {
	if err := c.Seeds.Validate(); err != nil {
		return err
	}
	switch {
	case c.Jobs < 0 || c.Jobs > MaxJobs:
		return fmt.Errorf("%w: %d jobs: want 1 to %d (0 means one per processor)", ErrConfig, c.Jobs, MaxJobs)
	case c.MaxFailures < 0:
		return fmt.Errorf("%w: MaxFailures %d is negative (0 means %d)", ErrConfig, c.MaxFailures, DefaultMaxFailures)
	case c.ProgressEvery < 0:
		return fmt.Errorf("%w: ProgressEvery %v is negative (0 means %v)", ErrConfig, c.ProgressEvery, DefaultProgressEvery)
	}
	return nil
}

// Progress is how far a sweep got: seeds run and seeds failed of Total.
type Progress struct {
	Ran, Failed, Total uint64
}

// A Probe runs one seed and reports whether it failed, with what the
// caller keeps of it (R). An error means the seed could not be run at all
// (a bad binding, say), not that it failed: Run stops at it.
type Probe[R any] func(seed uint64) (r R, failed bool, err error)

// Failure is one failing seed and what its probe returned.
type Failure[R any] struct {
	Seed  uint64
	Value R
}

// Report is what Run found.
type Report[R any] struct {
	// Ran counts the seeds that ran, Failed those that failed.
	Ran, Failed uint64
	// Failures are the failing seeds in increasing order, at most
	// Config.MaxFailures of them: the lowest. Under StopAtFirst the first
	// is the lowest failing seed of the whole space.
	Failures []Failure[R]
	// Jobs is how many workers ran.
	Jobs int
	// Wall is the sweep's wall-clock time, CPU the process's CPU time
	// (user and system, every thread) over the same span; CPU is 0 where
	// the platform does not tell it.
	Wall, CPU time.Duration
}

// PerSecond returns the seeds run per wall-clock second.
func (r *Report[R]) PerSecond() float64 { return float64(r.Ran) / max(r.Wall.Seconds(), 1e-9) }

// PerCPUSecond returns the seeds run per second of the process's CPU
// time, 0 when that is unknown: the rate one core gives, which a busy
// machine does not distort.
func (r *Report[R]) PerCPUSecond() float64 {
	if r.CPU <= 0 {
		return 0
	}
	return float64(r.Ran) / r.CPU.Seconds()
}

// worker is what one worker goroutine found; each writes its own.
type worker[R any] struct {
	fails  []Failure[R]
	err    error
	errAt  uint64 // index of the seed whose probe failed with err
	hasErr bool
}

// Run sweeps cfg.Seeds: Jobs workers each build a probe with newProbe and
// take the seeds in batches of consecutive ones, in increasing order. It
// returns the report, or the error of a probe that could not be built or
// could not run a seed (the lowest such seed's when several did); it
// stops at the first such error. The report does not depend on the
// scheduling (see Config.StopAtFirst for what does).
//
// Cost: one probe call per seed, plus O(1) shared atomic operations per
// batch of 16 seeds; memory O(Jobs + MaxFailures) whatever the number of
// seeds.
func Run[R any](cfg Config, newProbe func() (Probe[R], error)) (*Report[R], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if newProbe == nil {
		return nil, fmt.Errorf("%w: no probe", ErrConfig)
	}
	jobs := cfg.Jobs
	if jobs == 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	keep := cfg.MaxFailures
	if keep == 0 {
		keep = DefaultMaxFailures
	}
	total := cfg.Seeds.Len()
	batches := (total + batch - 1) / batch
	jobs = int(min(uint64(jobs), max(batches, 1)))
	var (
		next        atomic.Uint64 // the next batch to take
		ran, failed atomic.Uint64
		stop        atomic.Uint64 // 1 + the index of the lowest failing seed known (StopAtFirst), 0 for none
		halt        atomic.Bool   // a probe could not run
		wg          sync.WaitGroup
	)
	ws := make([]worker[R], jobs)
	start, cpu := time.Now(), CPUTime()
	for j := range ws {
		wg.Add(1)
		go func(w *worker[R]) {
			defer wg.Done()
			probe, err := newProbe()
			if err != nil {
				w.err, w.hasErr = err, true
				halt.Store(true)
				return
			}
			for !halt.Load() {
				b := next.Add(1) - 1
				if b >= batches {
					return
				}
				lo, hi := b*batch, min((b+1)*batch, total)
				var nr, nf uint64
				for i := lo; i < hi; i++ {
					// Seeds are taken in increasing order, so every seed
					// below a failure has started already: skipping those
					// above keeps the lowest failing seed the same.
					if s := stop.Load(); s != 0 && i >= s {
						break
					}
					seed := cfg.Seeds.At(i)
					r, bad, err := probe(seed)
					if err != nil {
						w.err, w.errAt, w.hasErr = err, i, true
						halt.Store(true)
						break
					}
					nr++
					if !bad {
						continue
					}
					nf++
					w.fails = append(w.fails, Failure[R]{Seed: seed, Value: r})
					if len(w.fails) >= 2*keep {
						w.fails = lowest(w.fails, keep)
					}
					if cfg.StopAtFirst {
						lower(&stop, i+1)
					}
				}
				ran.Add(nr)
				failed.Add(nf)
				if s := stop.Load(); s != 0 && hi >= s {
					return
				}
			}
		}(&ws[j])
	}
	if cfg.Progress != nil {
		every := cfg.ProgressEvery
		if every == 0 {
			every = DefaultProgressEvery
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		tick := time.NewTicker(every)
	wait:
		for {
			select {
			case <-done:
				break wait
			case <-tick.C:
				cfg.Progress(Progress{Ran: ran.Load(), Failed: failed.Load(), Total: total})
			}
		}
		tick.Stop()
		cfg.Progress(Progress{Ran: ran.Load(), Failed: failed.Load(), Total: total})
	} else {
		wg.Wait()
	}
	rep := &Report[R]{Ran: ran.Load(), Failed: failed.Load(), Jobs: jobs,
		Wall: time.Since(start), CPU: max(CPUTime()-cpu, 0)}
	var bad *worker[R]
	for i := range ws {
		w := &ws[i]
		if w.hasErr && (bad == nil || w.errAt < bad.errAt) {
			bad = w
		}
		rep.Failures = append(rep.Failures, w.fails...)
	}
	if bad != nil {
		return nil, bad.err
	}
	rep.Failures = lowest(rep.Failures, keep)
	return rep, nil
}

// lowest sorts fs by seed and keeps the first n.
func lowest[R any](fs []Failure[R], n int) []Failure[R] {
	slices.SortFunc(fs, func(a, b Failure[R]) int {
		switch {
		case a.Seed < b.Seed:
			return -1
		case a.Seed > b.Seed:
			return 1
		}
		return 0
	})
	if len(fs) > n {
		fs = fs[:n:n]
	}
	return fs
}

// lower sets a to v unless it holds a smaller non-zero value.
func lower(a *atomic.Uint64, v uint64) {
	for {
		cur := a.Load()
		if cur != 0 && cur <= v || a.CompareAndSwap(cur, v) {
			return
		}
	}
}
