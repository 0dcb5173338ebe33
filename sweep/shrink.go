package sweep

import (
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/faults"
)

// The errors of Shrink. Each wraps ErrShrink, so a caller can tell them
// apart with errors.Is and still catch them all.
var (
	// ErrShrink is wrapped by every error Shrink returns.
	ErrShrink = errors.New("sweep: cannot shrink")
	// ErrPasses: the seed's own run did not fail the same way.
	ErrPasses = fmt.Errorf("%w: the seed does not fail the same way when run again", ErrShrink)
	// ErrTooMany: more decisions fired than a schedule holds
	// (faults.MaxDecisions), so no replay can be exact.
	ErrTooMany = fmt.Errorf("%w: more fault decisions fired than a schedule holds", ErrShrink)
	// ErrReplay: replaying every decision that fired did not fail the
	// same way, so the run does not replay exactly.
	ErrReplay = fmt.Errorf("%w: replaying the decisions that fired does not fail the same way", ErrShrink)
	// ErrMinimal: the minimal schedule, replayed once more, no longer
	// failed the same way.
	ErrMinimal = fmt.Errorf("%w: the minimal schedule does not fail the same way when replayed", ErrShrink)
)

// Phase says why Shrink runs the seed.
type Phase int

const (
	// PhaseRecord runs the seed as it is, its rules drawing, recording
	// what fired (skipped when ShrinkConfig.Fired is given).
	PhaseRecord Phase = iota
	// PhaseVerify replays everything that fired.
	PhaseVerify
	// PhaseNoFaults replays the empty schedule: does the failure need a
	// fault at all?
	PhaseNoFaults
	// PhaseMinimize replays a subset that faults.Minimize asks about.
	PhaseMinimize
	// PhaseMinimal replays the 1-minimal schedule found, to recheck it and
	// record its own ticks and opportunities.
	PhaseMinimal
)

// String returns the phase as a word: record, replay-all, no-faults,
// step or minimal.
func (p Phase) String() string {
	switch p {
	case PhaseRecord:
		return "record"
	case PhaseVerify:
		return "replay-all"
	case PhaseNoFaults:
		return "no-faults"
	case PhaseMinimize:
		return "step"
	case PhaseMinimal:
		return "minimal"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// Step names one run of Shrink: its phase and, for PhaseMinimize, its
// number from 1.
type Step struct {
	Phase Phase
	N     int
}

// A Replay runs the failing seed once more. With s nil the fault rules
// draw as they say; otherwise exactly the decisions of s fire and no
// other. Either way the run records what fired, which Replay returns with
// whether the run failed the same way as the seed. An error means the run
// could not be made at all; Shrink stops at it.
//
// "The same way" is one target fixed before the first run, such as the
// seed's first failing expectation or checker, and a run fails it when
// the target still fails, whatever else fails too. A run that also fails
// something else (often something earlier, once a fault is removed) must
// still answer true: judging a run by its first failure alone rejects
// such a subset, and the result is then not 1-minimal for the target.
type Replay func(step Step, s *faults.Schedule) (fired faults.Schedule, same bool, err error)

// ShrinkConfig says how Shrink starts and how far it may go.
type ShrinkConfig struct {
	// Fired is what the seed's own run fired, when the caller recorded it;
	// nil means Shrink records it with a PhaseRecord run.
	Fired *faults.Schedule
	// NoVerify skips the PhaseVerify replay of everything that fired.
	NoVerify bool
	// MaxRuns caps the runs, the seed's own included; when reached, the
	// smallest failing schedule found so far is kept and Shrunk.Capped is
	// set. 0 means no cap.
	MaxRuns int
}

// Validate reports a configuration Shrink refuses, wrapping ErrConfig.
func (c ShrinkConfig) Validate() error {
	if c.MaxRuns < 0 {
		return fmt.Errorf("%w: MaxRuns %d is negative (0 means no cap)", ErrConfig, c.MaxRuns)
	}
	return nil
}

// Shrunk is what Shrink found.
type Shrunk struct {
	// Fired is every decision of the seed's own run.
	Fired faults.Schedule
	// Minimal is the 1-minimal subset of Fired that still fails the same
	// way, as its own replay recorded it: its ticks and opportunities are
	// those of that shorter run, so Minimal.Plan() fires exactly it.
	Minimal faults.Schedule
	// Faultless is set when the seed fails with no fault at all: then
	// Minimal is empty and no schedule explains the failure.
	Faultless bool
	// Runs counts the runs spent, the seed's own (recorded) run included.
	Runs int
	// Capped is set when ShrinkConfig.MaxRuns stopped the search early;
	// Minimal may then not be 1-minimal.
	Capped bool
}

// Shrink reduces the fault schedule of a failing seed. It records the
// seed's run (unless cfg.Fired is given), refuses a run that fired more
// than faults.MaxDecisions decisions, replays everything that fired to
// check that the failure replays (unless cfg.NoVerify), replays the empty
// schedule (a failure that needs no fault is Faultless), minimises the
// rest with faults.Minimize and replays the result once more to recheck
// it and record it. It returns what it found with the runs counted, and
// an error wrapping ErrShrink when a check failed, or replay's error.
//
// It is deterministic when replay is: the same answers give the same
// calls and result. Cost: O(log n) runs for one culprit among n fired
// decisions, O(n²) at worst, capped by cfg.MaxRuns; the empty schedule is
// run once.
func Shrink(cfg ShrinkConfig, replay Replay) (Shrunk, error) {
	var sh Shrunk
	if err := cfg.Validate(); err != nil {
		return sh, err
	}
	if replay == nil {
		return sh, fmt.Errorf("%w: no replay function", ErrConfig)
	}
	var runErr error
	run := func(step Step, s *faults.Schedule) (faults.Schedule, bool) {
		if runErr != nil {
			return faults.Schedule{}, false
		}
		sh.Runs++
		fired, same, err := replay(step, s)
		if err != nil {
			runErr = fmt.Errorf("sweep: %s run: %w", step.Phase, err)
			return faults.Schedule{}, false
		}
		return fired, same
	}
	// capped answers for a run the cap forbids.
	capped := func() bool {
		if cfg.MaxRuns > 0 && sh.Runs >= cfg.MaxRuns {
			sh.Capped = true
			return true
		}
		return false
	}
	if cfg.Fired != nil {
		sh.Fired, sh.Runs = *cfg.Fired, 1
	} else {
		fired, same := run(Step{Phase: PhaseRecord}, nil)
		if runErr != nil {
			return sh, runErr
		}
		if !same {
			return sh, ErrPasses
		}
		sh.Fired = fired
	}
	if sh.Fired.Omitted > 0 {
		return sh, fmt.Errorf("%w: %d fired; a schedule holds %d", ErrTooMany, sh.Fired.Len()+sh.Fired.Omitted, faults.MaxDecisions)
	}
	if !cfg.NoVerify && !capped() {
		all := sh.Fired
		if _, same := run(Step{Phase: PhaseVerify}, &all); runErr != nil {
			return sh, runErr
		} else if !same {
			return sh, fmt.Errorf("%w: %d decisions", ErrReplay, sh.Fired.Len())
		}
	}
	// The empty schedule is asked once, here or (when nothing fired) by
	// the recheck below; faults.Minimize asks it first, and gets the
	// answer without a run.
	noFaults := false
	if sh.Fired.Len() > 0 && !capped() {
		_, noFaults = run(Step{Phase: PhaseNoFaults}, &faults.Schedule{})
		if runErr != nil {
			return sh, runErr
		}
	}
	k := 0
	min := faults.Minimize(sh.Fired, func(sub faults.Schedule) bool {
		if sub.Len() == 0 {
			return noFaults
		}
		if capped() {
			return false
		}
		k++
		_, same := run(Step{Phase: PhaseMinimize, N: k}, &sub)
		return same
	})
	if runErr != nil {
		return sh, runErr
	}
	again, same := run(Step{Phase: PhaseMinimal}, &min)
	if runErr != nil {
		return sh, runErr
	}
	if !same {
		return sh, fmt.Errorf("%w: %s", ErrMinimal, min.Words())
	}
	sh.Minimal, sh.Faultless = again, min.Len() == 0
	return sh, nil
}
