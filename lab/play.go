package lab

import (
	"errors"
	"strconv"

	"github.com/brokerlab/brokerlab/sim"
)

// Recording is a finished run to play back: its trace, the properties it
// was judged by with the tick each broke at, and narration steps. Code
// that runs a world of its own (an exercise bound to a student's
// functions) records the run once, deterministically, and the player
// steps through the recording as it steps a scenario.
type Recording struct {
	Title  string
	Lesson string
	Seed   uint64
	// End is the run's last tick; the replay is done there.
	End sim.Tick
	// Trace is every event of the run, in order.
	Trace []sim.Event
	// Checks are what the verdict panel shows, in order.
	Checks []RecordedCheck
	// Steps are the narration, in tick order.
	Steps []RecordedStep
	// Description and Goals fill the introduction.
	Description string
	Goals       []string
}

// RecordedCheck is one property of a Recording: it holds to the end
// unless Broken, and then it is broken from tick At on, for the reason
// Why. A check the run never got to judge (Unjudged) stays open to the
// end, so the verdict does not claim it held.
type RecordedCheck struct {
	Text     string
	Broken   bool
	At       sim.Tick
	Why      string
	Unjudged bool
}

// RecordedStep is a narration step shown from tick At on.
type RecordedStep struct {
	At    sim.Tick
	Text  string
	Pause bool
}

// ErrRecorded is wrapped by the error Do returns: a recorded run takes no
// hand actions.
var ErrRecorded = errors.New("lab: a recorded run takes no hand actions")

// Playback plays a Recording back with a Session's methods (Step, Seek,
// NextNarration, PrevNarration, Restart, Do), so a player shows it as it
// shows a running scenario. A snapshot costs O(MaxTrace + checks +
// log(events)); the playback keeps the recording and copies what a
// snapshot shows, so every snapshot is immutable.
type Playback struct {
	rec    Recording
	now    sim.Tick
	notice string
	// ledger is folded from the first folded events of the trace; a seek
	// back folds again from the start.
	ledger *sim.Ledger
	folded int
}

// NewPlayback returns the playback of rec at tick 0. The ledger line
// is folded from the recorded trace as the replay goes, O(events) in all
// going forward and again after each seek back.
func NewPlayback(rec Recording) *Playback {
	return &Playback{rec: rec}
}

// shown returns how many events of the trace happened by tick t.
func (d *Playback) shown(t sim.Tick) int {
	lo, hi := 0, len(d.rec.Trace)
	for lo < hi {
		m := (lo + hi) / 2
		if d.rec.Trace[m].Tick <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// step returns the index (from 1) of the narration step shown at t, 0
// before the first.
func (d *Playback) step(t sim.Tick) int {
	i := 0
	for i < len(d.rec.Steps) && d.rec.Steps[i].At <= t {
		i++
	}
	return i
}

// Snapshot describes the recording at the current tick.
func (d *Playback) Snapshot() Snapshot {
	n := d.shown(d.now)
	lo := max(0, n-MaxTrace)
	snap := Snapshot{
		Header: Header{Title: d.rec.Title, Lesson: d.rec.Lesson, Tick: d.now, Seed: d.rec.Seed, Notice: d.notice},
		Trace:  append([]sim.Event(nil), d.rec.Trace[lo:n]...),
		Intro:  Intro{Description: d.rec.Description, Goals: append([]string(nil), d.rec.Goals...)},
	}
	d.notice = ""
	if d.ledger == nil || d.folded > n {
		d.ledger, d.folded = sim.NewLedger(), 0
	}
	for ; d.folded < n; d.folded++ {
		d.ledger.Emit(&d.rec.Trace[d.folded])
	}
	snap.Ledger = SummaryOf(d.ledger.Stats())
	if i := d.step(d.now); i > 0 {
		s := d.rec.Steps[i-1]
		snap.Narration = Narration{Index: i, Total: len(d.rec.Steps), Text: s.Text, Pause: s.Pause}
	} else {
		snap.Narration.Total = len(d.rec.Steps)
	}
	final := d.Done()
	snap.Verdict.Final = final
	for _, c := range d.rec.Checks {
		j := Judgement{Text: c.Text}
		switch {
		case c.Broken && c.At <= d.now:
			j.Standing, j.Measured = Broken, c.Why
		case final && c.Unjudged:
			// A run leaves a check unjudged when the code never reached
			// it, or when the seed drew no fault that puts it to the test:
			// the words must fit both.
			j.Measured = "not judged: nothing in this run put it to the test"
		case final:
			j.Standing, j.Measured = Holds, "held on every tick"
		}
		snap.Verdict.Judgments = append(snap.Verdict.Judgments, j)
	}
	return snap
}

// Step advances one tick.
func (d *Playback) Step() Snapshot {
	if !d.Done() {
		d.now++
	}
	return d.Snapshot()
}

// Restart goes back to tick 0. A recording is one seed: asking for
// another one says so in the notice.
func (d *Playback) Restart(seed uint64) Snapshot {
	d.now = 0
	if seed != d.rec.Seed {
		d.notice = "this replay is the recorded run of seed " + strconv.FormatUint(d.rec.Seed, 10)
	}
	return d.Snapshot()
}

// Do refuses every action: the recorded run cannot change.
func (d *Playback) Do(a Action) (Snapshot, error) {
	return d.Snapshot(), ErrRecorded
}

// Done reports whether the replay reached the run's end.
func (d *Playback) Done() bool { return d.now >= d.rec.End }

// NextNarration advances to the next narration step, or to the end.
func (d *Playback) NextNarration() Snapshot {
	i := d.step(d.now)
	if i < len(d.rec.Steps) {
		d.now = min(d.rec.Steps[i].At, d.rec.End)
	} else {
		d.now = d.rec.End
	}
	return d.Snapshot()
}

// Seek shows the recording at tick t, clamped to [0, End].
func (d *Playback) Seek(t sim.Tick) Snapshot {
	d.now = min(max(t, 0), d.rec.End)
	return d.Snapshot()
}

// PrevNarration goes back to the start of the step before the current
// one, or to tick 0.
func (d *Playback) PrevNarration() Snapshot {
	i := d.step(d.now)
	switch {
	case i >= 2:
		d.now = d.rec.Steps[i-2].At
	default:
		d.now = 0
	}
	return d.Snapshot()
}
