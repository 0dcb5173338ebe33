package lab

import (
	"errors"
	"strconv"

	"github.com/brokerlab/brokerlab/sim"
)

// Side is one run of a comparison: a short label naming it (the file or
// lesson, the seed or the variant) and the session that plays it.
type Side struct {
	Label   string
	Session *Session
}

// Tally is the ground truth of one side in numbers, folded from its run's
// ledger: the events sent (lineage roots), the effects applied, the
// repeated deliveries and the repeated effects among them, the losses that
// stand and the copies still held by a broker or an outbox. Known is false
// for a tally nobody folded (the zero value).
type Tally struct {
	Known      bool
	Sent       int
	Applied    int
	Duplicates int
	DupApplied int
	Lost       int
	Pending    int
}

// tallyOf folds ledger statistics into a Tally.
func tallyOf(s sim.Stats) Tally {
	return Tally{Known: true, Sent: s.Origins, Applied: s.Applied, Duplicates: s.Duplicates,
		DupApplied: s.DuplicateEffects, Lost: s.Lost, Pending: s.Pending}
}

// Text returns the tally as one line, "sent 20 applied 26 dup 6 (6
// applied) lost 0 pending 0", or "" when it is not Known.
func (t Tally) Text() string {
	if !t.Known {
		return ""
	}
	return "sent " + strconv.Itoa(t.Sent) + " applied " + strconv.Itoa(t.Applied) +
		" dup " + strconv.Itoa(t.Duplicates) + " (" + strconv.Itoa(t.DupApplied) + " applied)" +
		" lost " + strconv.Itoa(t.Lost) + " pending " + strconv.Itoa(t.Pending)
}

// Short returns the tally in at most about 40 columns, "sent 20 appl 26
// dup 6/6 lost 0 pend 0" (duplicates delivered/applied).
func (t Tally) Short() string {
	if !t.Known {
		return ""
	}
	return t.compact([5]string{"sent ", " appl ", " dup ", " lost ", " pend "})
}

// Terse returns the tally in the fewest columns, "s20 a26 d6/6 l0 p0":
// sent, applied, duplicates delivered/applied, lost, pending.
func (t Tally) Terse() string {
	if !t.Known {
		return ""
	}
	return t.compact([5]string{"s", " a", " d", " l", " p"})
}

// compact writes the tally's numbers after the five labels, duplicates as
// delivered/applied: the shape Short and Terse share.
func (t Tally) compact(label [5]string) string {
	return label[0] + strconv.Itoa(t.Sent) + label[1] + strconv.Itoa(t.Applied) +
		label[2] + strconv.Itoa(t.Duplicates) + "/" + strconv.Itoa(t.DupApplied) +
		label[3] + strconv.Itoa(t.Lost) + label[4] + strconv.Itoa(t.Pending)
}

// SideFrame is what the compare view shows of one side: its label, its
// snapshot (with the pair's play state and speed in the header) and its
// tally.
type SideFrame struct {
	Label string
	Snap  Snapshot
	Tally Tally
}

// CompareFrame is one frame of the compare view, both sides at the same
// tick. Like a Snapshot it is immutable once posted.
type CompareFrame struct {
	Title string // what is compared, shown on the top row
	Sides [2]SideFrame
}

// Pair plays two sessions in lockstep: every step, seek, restart and
// action applies to both, so the two runs are always at the same tick (a
// side whose run has ended stays at its last tick while the other goes
// on). It owns both sessions and, like a Session, is used from one
// goroutine only. It has a Session's methods, so a player drives it as it
// drives one session.
//
// The Snapshot it returns carries only what a player's controller reads:
// the header of side A (tick, seed, notice) with the later tick of the
// two, and a narration index that changes whenever either side's
// narration changes, with Pause set when the step that came up on either
// side asks for it. The views read both sides from Frame.
//
// A step costs the two sessions' steps; the tallies come from the
// summaries the sessions keep (see Session), O(consumers) each.
type Pair struct {
	sides   [2]Side
	snaps   [2]Snapshot
	tallies [2]Tally
	notices [2]string
	title   string
}

// maxNarrationSteps bounds how far NextNarration steps a pair whose
// narration does not change.
const maxNarrationSteps = 100000

// ErrPairSide is NewPair's error for a side without a label or a session.
var ErrPairSide = errors.New("lab: a compare side needs a label and a session")

// NewPair returns the pair of a and b, both at their current state.
func NewPair(a, b Side) (*Pair, error) {
	for _, s := range []Side{a, b} {
		if s.Session == nil || s.Label == "" {
			return nil, ErrPairSide
		}
	}
	p := &Pair{sides: [2]Side{a, b}}
	for i := range p.sides {
		p.snaps[i] = p.sides[i].Session.Snapshot()
	}
	p.refresh()
	return p, nil
}

// SetTitle sets the title the compare view shows on its top row, e.g. the
// lesson's title. Call it before the pair is handed to a Loop.
func (p *Pair) SetTitle(t string) { p.title = t }

// refresh takes both sides' tallies from the summaries their sessions
// keep, current as of their last event.
func (p *Pair) refresh() {
	for i := range p.sides {
		d := p.sides[i].Session
		d.refreshStats()
		p.tallies[i] = tallyOf(d.stats)
	}
}

// combined builds the Controller's view of the pair from prev, the
// snapshots before the call, and the current ones.
func (p *Pair) combined(prev [2]Snapshot) Snapshot {
	s := p.snaps[0]
	if t := p.snaps[1].Header.Tick; t > s.Header.Tick {
		s.Header.Tick = t
	}
	s.Narration.Index = p.snaps[0].Narration.Index + p.snaps[1].Narration.Index
	s.Narration.Total = p.snaps[0].Narration.Total + p.snaps[1].Narration.Total
	s.Narration.Pause = false
	for i := range p.snaps {
		if p.snaps[i].Narration.Index != prev[i].Narration.Index && p.snaps[i].Narration.Pause {
			s.Narration.Pause = true
		}
	}
	s.Header.Notice = ""
	return s
}

// each applies f to every side whose run has not ended (every side when
// all is set) and returns the combined snapshot.
func (p *Pair) each(all bool, f func(i int, d *Session) Snapshot) Snapshot {
	prev := p.snaps
	p.notices = [2]string{}
	for i := range p.sides {
		d := p.sides[i].Session
		if !all && d.Done() {
			continue
		}
		p.snaps[i] = f(i, d)
	}
	p.refresh()
	return p.combined(prev)
}

// Snapshot returns the combined snapshot without advancing.
func (p *Pair) Snapshot() Snapshot {
	return p.each(true, func(_ int, d *Session) Snapshot { return d.Snapshot() })
}

// Step advances both sides by one tick (a side that is done stays).
func (p *Pair) Step() Snapshot {
	return p.each(false, func(_ int, d *Session) Snapshot { return d.Step() })
}

// NextNarration steps both sides tick by tick until the narration of
// either changes, or both runs end.
func (p *Pair) NextNarration() Snapshot {
	start := [2]int{p.snaps[0].Narration.Index, p.snaps[1].Narration.Index}
	before := p.snaps
	for i := 0; i < maxNarrationSteps && !p.Done(); i++ {
		p.Step()
		if p.snaps[0].Narration.Index != start[0] || p.snaps[1].Narration.Index != start[1] {
			break
		}
	}
	return p.combined(before)
}

// Restart rebuilds both runs. Given side A's current seed (the Controller's
// restart) each side restarts with its own seed; given another seed (a new
// seed) side A takes it, and side B takes it too when the two sides shared
// a seed, or NextSeed of its own otherwise, so two seeds stay two seeds.
func (p *Pair) Restart(seed uint64) Snapshot {
	same := p.snaps[0].Header.Seed == p.snaps[1].Header.Seed
	seeds := [2]uint64{p.snaps[0].Header.Seed, p.snaps[1].Header.Seed}
	if seed != seeds[0] {
		seeds[0] = seed
		if same {
			seeds[1] = seed
		} else {
			seeds[1] = NextSeed(seeds[1])
		}
	}
	s := p.each(true, func(i int, d *Session) Snapshot {
		sn := d.Restart(seeds[i])
		if sn.Header.Notice == "" {
			p.notices[i] = "restarted with seed " + strconv.FormatUint(sn.Header.Seed, 10)
		}
		return sn
	})
	p.refresh()
	return s
}

// Do runs the action on both sides. Each side's outcome is shown in its
// own header; the error is nil when it applied to at least one side, and
// otherwise names both sides' reasons.
func (p *Pair) Do(a Action) (Snapshot, error) {
	var errs [2]error
	s := p.each(true, func(i int, d *Session) Snapshot {
		sn, err := d.Do(a)
		errs[i] = err
		if err != nil {
			p.notices[i] = FailedNotice(a, err)
		}
		return sn
	})
	if errs[0] != nil && errs[1] != nil {
		return s, errors.New(p.sides[0].Label + ": " + errs[0].Error() + "; " + p.sides[1].Label + ": " + errs[1].Error())
	}
	return s, nil
}

// Seek shows both runs as they were at tick t (each clamped to its run's
// ticks), by the sessions' own time travel.
func (p *Pair) Seek(t sim.Tick) Snapshot {
	return p.each(true, func(_ int, d *Session) Snapshot { return d.Seek(t) })
}

// PrevNarration takes both runs back to the start of the previous
// narration step: each side goes back to its own, then both to the later
// of the two ticks, so they stay in lockstep.
func (p *Pair) PrevNarration() Snapshot {
	prev := p.snaps
	var to sim.Tick
	for i := range p.sides {
		if t := p.sides[i].Session.PrevNarration().Header.Tick; t > to {
			to = t
		}
	}
	p.Seek(to)
	return p.combined(prev)
}

// Done reports whether both runs have ended.
func (p *Pair) Done() bool { return p.sides[0].Session.Done() && p.sides[1].Session.Done() }

// Frame returns both sides as the views show them, given the Controller's
// last snapshot c (for the play state, the speed and the notice). Call it
// on the goroutine that owns the pair, after the controller's call.
func (p *Pair) Frame(c Snapshot) CompareFrame {
	f := CompareFrame{Title: p.title}
	for i := range p.sides {
		s := p.snaps[i]
		s.Header.Speed = c.Header.Speed
		s.Header.State = c.Header.State
		if p.sides[i].Session.Done() {
			s.Header.State = StateFinished
		}
		switch {
		case p.notices[i] != "":
			s.Header.Notice = p.notices[i]
		case c.Header.Notice != "" && s.Header.Notice == "":
			s.Header.Notice = c.Header.Notice
		}
		s.Header.Title = p.sides[i].Label
		s.Header.Lesson = ""
		f.Sides[i] = SideFrame{Label: p.sides[i].Label, Snap: s, Tally: p.tallies[i]}
	}
	return f
}
