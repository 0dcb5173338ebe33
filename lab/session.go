// The session layer of package lab: a Session owns one running
// scenario, steps it, goes back and forward in time, takes hand actions
// and describes every tick as an immutable Snapshot, the view-model a
// front end renders (the terminal player in package tui, a recorded cast,
// a test). A Pair plays two sessions in lockstep for a comparison, and a
// Playback plays a Recording (a run recorded elsewhere, such as an
// exercise on a student's code) back with the same methods.
//
// A session is deterministic and uses no goroutine and no wall clock:
// every change is an explicit call (Step, Seek, Do, Restart), and the same
// scenario, seed, handlers and calls give the same snapshots. Going back
// rebuilds the run from its seed and re-executes it with the session's
// action log, so hand actions survive a trip into the past and back until
// the user acts differently there; then the session branches, drops the
// old future and says so in the snapshot's notice. A session is used from
// one goroutine.

package lab

import (
	"errors"
	"fmt"
	"strings"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// histCap is the most samples per series the session keeps (see
// Session.series).
const histCap = 4 * MaxHistory

// Session plays a loaded scenario: it builds the run, steps it, samples
// the metric series every tick, keeps the log of hand actions and turns
// the models' state into immutable Snapshots. A snapshot costs O(queues x
// MaxChips + topics x subscribers + partitions x groups + MaxTrace + series
// x MaxHistory), whatever the backlog. The ledger summary, the
// per-consumer effects and the per-key effect table are kept by the
// ledger (sim.Ledger.Stats and KeyStats) and taken again whenever an
// event was traced, at O(what changed since): no frame scans every
// outcome for them. The verdict is taken with every snapshot: before the
// end of the run, Run.Verdict judges the ledger checks from counts the
// ledger keeps (see Run.judgeKept) at O(what changed since), and it is a
// function of the run's state alone, so a run re-executed by Seek shows
// the verdict a run stepped there shows. It is used from one goroutine.
type Session struct {
	s        *scenario.Scenario
	lesson   string
	handlers func() map[string]sim.Handler
	run      *Run
	rec      *markRecorder
	subj     *subjectFold
	acts     *actCounter
	table    *EffectsView // per-key effects of the compared consumers
	// series holds up to histCap samples per series, one per tick from
	// tick histStart on; snapshots show the newest MaxHistory, and Seek
	// takes the older ones back instead of sampling again.
	series    []Series
	histStart sim.Tick
	lastPub   int
	// replaying is set while Seek re-executes the run with the samples
	// kept: steps then take no sample and no statistics.
	replaying bool
	// seeking is set while Seek goes back: the logged actions it applies
	// again leave no notice.
	seeking bool
	// stats, effects and table are taken from the ledger when the trace
	// was statsSeq events long (fresh: false until the first take).
	stats    sim.Stats
	effects  []EffectView
	statsSeq uint64
	fresh    bool
	budget   *sim.Budget // the run budget, when not the default (tests)
	chips    []queue.Resident
	notice   string
	tab      string // the model to open on
	// log is every hand action of the current run with the tick it ran
	// at, in order; the first done of them have been applied to the run
	// (those at or before its tick). Seek re-executes the run with them,
	// and stepping forward applies the rest as their ticks come up again.
	log  []Logged
	done int
}

// Logged is a hand action and the tick it ran at.
type Logged struct {
	At     sim.Tick
	Action Action
}

// SessionOptions configure a Session. The zero value plays the file's seed with
// the file's scripted handlers.
type SessionOptions struct {
	// Seed overrides the file's seed when non-nil.
	Seed *uint64
	// Variant, when set, plays the scenario as its variant of that name
	// makes it (see scenario.Scenario.Variant).
	Variant string
	// Lesson is the lesson's name shown in the header ("" for a file).
	Lesson string
	// Handlers returns Go handlers to bind to the scenario's queue
	// consumers, group members and subscribers by name (see
	// Options.Handlers). It is called for every run the session
	// builds (a restart and every seek back build one, and opening a
	// scenario that names no panel to open on runs up to 200 ticks ahead
	// to pick one), so that each run gets fresh handlers: a handler keeps
	// its state for one run, and must have no effect outside it. nil binds
	// none.
	Handlers func() map[string]sim.Handler

	// budget replaces the run budget (tests that play more than a file
	// may hold; see Options.budget).
	budget *sim.Budget
}

// ErrNoScenario is returned by Open for a nil scenario.
var ErrNoScenario = errors.New("lab: no scenario")

// Open builds the session of s as opt says. Errors come from choosing the
// variant and building the run (positioned, see New; a handler bound to a
// name the scenario lacks is a *BindError).
func Open(s *scenario.Scenario, opt SessionOptions) (*Session, error) {
	if s == nil {
		return nil, ErrNoScenario
	}
	if opt.Variant != "" {
		v, err := s.Variant(opt.Variant)
		if err != nil {
			return nil, err
		}
		s = v
	}
	d := &Session{s: s, lesson: opt.Lesson, handlers: opt.Handlers, budget: opt.budget}
	if err := d.build(opt.Seed); err != nil {
		return nil, err
	}
	d.tab = s.View.Tab
	if d.tab == "" {
		d.tab = d.subjectTab()
	}
	if d.tab == "" {
		d.tab = d.busiest()
	}
	return d, nil
}

// OpenFile loads the scenario file at path and builds its session.
func OpenFile(path string, opt SessionOptions) (*Session, error) {
	s, err := scenario.LoadFile(path)
	if err != nil {
		return nil, err
	}
	return Open(s, opt)
}

// OpenLesson loads the built-in lesson called name and builds its session,
// with the lesson's name in the header.
func OpenLesson(name string, opt SessionOptions) (*Session, error) {
	s, err := scenario.LoadLesson(name)
	if err != nil {
		return nil, err
	}
	if opt.Lesson == "" {
		opt.Lesson = name
	}
	return Open(s, opt)
}

// busiest looks ahead at most busiestTicks ticks, and stops after the tick
// in which it has seen busiestEvents events.
const (
	busiestTicks  = 200
	busiestEvents = 5_000
)

// busiest returns the name of the model most trace events of the first
// busiestTicks ticks of a run concern (or of the first ticks up to
// busiestEvents events), so the player opens where the lesson happens; ""
// when the run cannot be built. It runs a separate, identical run, so it
// costs up to busiestTicks ticks or busiestEvents events once (plus the
// last tick's events): a lesson's 200 ticks, or one tick of a large
// scenario.
func (d *Session) busiest() string {
	counts := map[string]int{}
	var order []string
	seen := 0
	sink := sim.SinkFunc(func(e *sim.Event) {
		seen++
		if e.Where == "" || e.Where == "lesson" || e.Where == "expect" {
			return
		}
		if counts[e.Where] == 0 {
			order = append(order, e.Where)
		}
		counts[e.Where]++
	})
	seed := d.run.Seed()
	r, err := d.newRun(&seed, sink)
	if err != nil {
		return ""
	}
	for i := 0; i < busiestTicks && seen < busiestEvents && r.Step(); i++ {
	}
	best, most := "", 0
	for _, w := range order {
		kind, name, ok := strings.Cut(w, ":")
		if !ok || kind != "queue" && kind != "topic" && kind != "log" && kind != "outbox" {
			continue
		}
		if counts[w] > most {
			best, most = name, counts[w]
		}
	}
	return best
}

// SetLesson names the lesson shown in the header ("" for a file).
func (d *Session) SetLesson(name string) { d.lesson = name }

// Scenario returns the scenario the session plays.
func (d *Session) Scenario() *scenario.Scenario { return d.s }

// Now returns the current tick.
func (d *Session) Now() sim.Tick { return d.run.Now() }

// Seed returns the seed of the current run.
func (d *Session) Seed() uint64 { return d.run.Seed() }

// Log returns the hand actions of the current run with their ticks, in
// order, those a seek back has left in the future included.
func (d *Session) Log() []Logged { return append([]Logged(nil), d.log...) }

// Ledger returns the ledger of the current run, for inspection between
// calls; the session goes on folding into it.
func (d *Session) Ledger() *sim.Ledger { return d.run.Env().Ledger }

// newRun builds a run of the session's scenario with fresh handlers.
func (d *Session) newRun(seed *uint64, sinks ...sim.Sink) (*Run, error) {
	var hs map[string]sim.Handler
	if d.handlers != nil {
		hs = d.handlers()
	}
	return New(d.s, Options{Seed: seed, Handlers: hs, Sinks: sinks, budget: d.budget})
}

// build starts a fresh run; the action log stays (Restart clears it).
func (d *Session) build(seed *uint64) error {
	rec := newMarkRecorder(MaxTrace, nil)
	subj := d.newSubject()
	acts := &actCounter{}
	r, err := d.newRun(seed, rec, subj, acts)
	if err != nil {
		return err
	}
	rec.ledger = r.Env().Ledger
	d.run, d.rec, d.subj, d.acts = r, rec, subj, acts
	d.done = 0
	d.fresh = false
	d.table = nil
	d.series, d.histStart = nil, 0
	d.series = append(d.series, Series{Kind: SeriesPublishRate})
	for _, l := range r.Logs() {
		for _, g := range l.Groups() {
			d.series = append(d.series, Series{Kind: SeriesLag, Group: g.Name()})
		}
	}
	d.series = append(d.series, Series{Kind: SeriesDLQDepth}, Series{Kind: SeriesDuplicates}, Series{Kind: SeriesLost})
	d.lastPub = r.Published()
	d.refreshStats()
	d.sample()
	return nil
}

// refreshStats takes the ledger summary, the per-consumer effects and
// the per-key effect table of the compared consumers again when an event
// was traced since the last take (the ledger changes only by traced
// events). The ledger keeps all three, so a take costs O(what the events
// since touched + keys), never a pass over every outcome (see
// sim.Ledger.Stats and KeyStats).
func (d *Session) refreshStats() {
	seq := d.run.Env().Trace.Len()
	if d.fresh && seq == d.statsSeq {
		return
	}
	l := d.run.Env().Ledger
	d.stats = l.Stats()
	d.effects = effectsOf(d.stats)
	if refs, names := compared(d.s); refs != nil {
		t := effectsViewOf(l, refs, names)
		d.table = &t
	}
	d.statsSeq, d.fresh = seq, true
}

// effectsViewOf returns the per-key effect table of the logical consumers
// named by refs (the ledger's names: a queue consumer is its queue), shown
// as names, in first-seen key order, at most maxProjKeys keys, from the
// sums the ledger keeps (sim.Ledger.KeyStats).
func effectsViewOf(l *sim.Ledger, refs, names []string) EffectsView {
	rows, more := l.KeyStats(refs, maxProjKeys)
	v := EffectsView{Consumers: names, MoreKeys: more}
	for _, r := range rows {
		k := EffectKey{Key: r.Key, Cells: make([]EffectCell, len(r.Cells))}
		for i, c := range r.Cells {
			k.Cells[i] = EffectCell{Effects: c.Effects, Origins: c.Origins, Repeated: c.Repeated, Absorbed: c.Absorbed}
		}
		v.Keys = append(v.Keys, k)
	}
	return v
}

// effectsOf returns the per-consumer effect counts of s, in the ledger's
// consumer order. O(consumers).
func effectsOf(s sim.Stats) []EffectView {
	var out []EffectView
	for _, c := range s.Consumers {
		out = append(out, EffectView{Consumer: c.Consumer, Applied: c.Applied, Repeated: c.Repeated,
			Worst: c.Worst, Absorbed: c.Absorbed, Repeats: c.Repeats})
	}
	return out
}

// judge returns the verdict on the run's state now (Run.Verdict): at
// the cost of what the run changed since it last judged, or of the
// checkers' walks once at the end.
func (d *Session) judge() Verdict { return d.run.Verdict() }

// sample appends one sample to every series.
func (d *Session) sample() {
	r := d.run
	d.refreshStats()
	pub := r.Published()
	dlq := 0
	for _, q := range r.Queues() {
		if q.IsDLQ {
			dlq += q.Queue.Len()
		}
	}
	lags := map[string]float64{}
	for _, l := range r.Logs() {
		for _, g := range l.Groups() {
			lags[g.Name()] = float64(g.Metrics().Lag)
		}
	}
	for i := range d.series {
		s := &d.series[i]
		var v float64
		switch s.Kind {
		case SeriesPublishRate:
			v = float64(pub - d.lastPub)
		case SeriesLag:
			v = lags[s.Group]
		case SeriesDLQDepth:
			v = float64(dlq)
		case SeriesDuplicates:
			v = float64(d.stats.Duplicates)
		case SeriesLost:
			v = float64(d.stats.Lost)
		}
		s.Values = append(s.Values, v)
	}
	if len(d.series) > 0 && len(d.series[0].Values) >= histCap {
		// Keep the newest histCap/2: O(1) amortized per sample.
		drop := len(d.series[0].Values) - histCap/2
		for i := range d.series {
			s := &d.series[i]
			s.Values = s.Values[:copy(s.Values, s.Values[drop:])]
		}
		d.histStart += sim.Tick(drop)
	}
	d.lastPub = pub
}

// Snapshot describes the current state without advancing.
func (d *Session) Snapshot() Snapshot {
	r := d.run
	now := r.Now()
	snap := Snapshot{Header: Header{Title: d.s.Title, Lesson: d.lesson, Tick: now, Seed: r.Seed(), Notice: d.notice, Tab: d.tab}}
	d.notice = ""
	queues := r.Queues()
	byName := map[string]QueueInfo{}
	for _, q := range queues {
		byName[q.Name] = q
	}
	for _, q := range queues {
		if q.IsDLQ {
			continue
		}
		snap.Queues = append(snap.Queues, d.queueView(q, byName))
	}
	for _, t := range r.Topics() {
		tv := TopicView{Name: t.Name, Published: t.Published}
		for _, s := range t.Subscribers {
			m := s.Metrics()
			tv.Subscribers = append(tv.Subscribers, SubscriberView{Name: s.Name(), Online: s.Online(), Buffered: m.Buffered,
				Delivered: m.Delivered, Missed: m.Missed, Dropped: m.Dropped})
		}
		snap.Topics = append(snap.Topics, tv)
	}
	for _, l := range r.Logs() {
		m := l.Metrics()
		lv := LogView{Name: l.Name()}
		for _, p := range m.Partitions {
			lv.Partitions = append(lv.Partitions, PartitionView{Index: p.Partition, Start: p.LogStart, End: p.End})
		}
		for _, g := range l.Groups() {
			gm := g.Metrics()
			gv := GroupView{Name: g.Name(), Generation: gm.Generation, Members: g.Members()}
			for _, p := range gm.Partitions {
				// Nothing committed, or a committed offset that retention
				// has deleted, resumes at the log start, where the lag is
				// counted from: the view never shows an offset the log no
				// longer has.
				gv.Committed = append(gv.Committed, max(p.Committed, p.LogStart))
				gv.Lag = append(gv.Lag, p.Lag)
			}
			lv.Groups = append(lv.Groups, gv)
		}
		snap.Logs = append(snap.Logs, lv)
	}
	for i, s := range r.Services() {
		m := s.Service.Metrics()
		ov := OutboxView{Service: s.Name, Pending: m.Pending, Sent: m.Sent, Dead: m.DeadLetters}
		if i < len(d.s.Topology.Services) {
			ov.Writer = d.s.Topology.Services[i].Writer.String()
		}
		if i < len(d.subj.outboxes) {
			d.subj.outboxes[i].view(&ov)
		}
		rows := s.Service.PendingRows(MaxChips)
		for _, rl := range s.Relays {
			ov.Relays = append(ov.Relays, RelayView{Name: rl.Name, Crashed: rl.Down, Claims: claims(rows, rl.Name, now)})
		}
		snap.Outboxes = append(snap.Outboxes, ov)
	}
	for _, s := range d.series {
		v := s.Values
		if len(v) > MaxHistory {
			v = v[len(v)-MaxHistory:]
		}
		snap.Series = append(snap.Series, Series{Kind: s.Kind, Group: s.Group, Values: append([]float64(nil), v...)})
	}
	evs, marks := d.rec.newest()
	snap.Trace = append([]sim.Event(nil), evs...)
	snap.Marks = append([]Mark(nil), marks...)
	i, n, text := r.Narration()
	snap.Narration = Narration{Index: i, Total: n, Text: text}
	if i > 0 {
		st := &d.s.Narration[i-1]
		snap.Narration.Pause, snap.Narration.Tab, snap.Narration.Filter = st.Pause, st.Tab, st.Filter
	}
	d.refreshStats()
	snap.Ledger = SummaryOf(d.stats)
	snap.Effects = append([]EffectView(nil), d.effects...)
	if d.table != nil {
		t := *d.table
		t.Keys = append([]EffectKey(nil), t.Keys...)
		snap.EffectTable = &t
	}
	replayed := d.replayed()
	for _, p := range d.subj.projs {
		if p.seeked || replayed[p.group] {
			snap.Projections = append(snap.Projections, p.view())
		}
	}
	snap.Verdict = d.judge()
	snap.Intro = d.intro()
	snap.Targets = d.targets()
	return snap
}

// newSubject returns the fold of the lesson's subject for a new run: every
// service's writes and every consumer group's projection.
func (d *Session) newSubject() *subjectFold {
	var services, groups []string
	for _, s := range d.s.Topology.Services {
		services = append(services, s.Name)
	}
	logOf := map[string]string{}
	for _, g := range d.s.Topology.Groups {
		groups = append(groups, g.Name)
		logOf[g.Name] = "log:" + g.Log
	}
	return newSubjectFold(services, groups, logOf)
}

// replayed returns the groups the scenario's timeline seeks: their
// projection panel is there from the start, so the student sees what the
// projection held before the replay. Other groups get one once seeked by
// hand.
func (d *Session) replayed() map[string]bool {
	out := map[string]bool{}
	for _, a := range d.s.Timeline {
		if a.Action == "seek" && a.Group != "" {
			out[a.Group] = true
		}
	}
	return out
}

// subjectTab returns the subject panel the player opens on when the
// scenario names no tab: the projection of the first group the timeline
// replays, else the effects table of the compared consumers, else "".
func (d *Session) subjectTab() string {
	for _, a := range d.s.Timeline {
		if a.Action == "seek" && a.Group != "" {
			return "projection " + a.Group
		}
	}
	if refs, _ := compared(d.s); refs != nil {
		return "effects"
	}
	return ""
}

// maxCompared is the most consumers the effects table compares.
const maxCompared = 4

// compared returns the queue consumers whose effects the lesson compares
// side by side: two to maxCompared consumers, each reading its own queue
// (e.g. a naive and an idempotent consumer fed the same stream), as the
// ledger names them (their queues) and by their own names; nil otherwise.
func compared(s *scenario.Scenario) (refs, names []string) {
	cs := s.Actors.Consumers
	if len(cs) < 2 || len(cs) > maxCompared {
		return nil, nil
	}
	queues := map[string]bool{}
	for _, c := range cs {
		if queues[c.Queue] {
			return nil, nil
		}
		queues[c.Queue] = true
		refs = append(refs, c.Queue)
		names = append(names, c.Name)
	}
	return refs, names
}

// intro returns the lesson's introduction: its description, what its
// expectations claim, and its last narration step.
func (d *Session) intro() Intro {
	in := Intro{Description: d.s.Description}
	for _, e := range d.s.Expect {
		in.Goals = append(in.Goals, e.String())
	}
	if n := len(d.s.Narration); n > 0 {
		in.Remember = d.s.Narration[n-1].Text
	}
	return in
}

// targets lists what the hand actions can act on.
func (d *Session) targets() Targets {
	var t Targets
	for _, q := range d.run.Queues() {
		if q.IsDLQ {
			t.DLQs = append(t.DLQs, q.Name)
		}
	}
	for _, l := range d.run.Logs() {
		for _, g := range l.Groups() {
			t.Groups = append(t.Groups, g.Name())
		}
	}
	for _, c := range d.s.Actors.Consumers {
		t.Consumers = append(t.Consumers, c.Name)
	}
	for _, m := range d.s.Actors.Members {
		t.Consumers = append(t.Consumers, m.Name)
	}
	return t
}

// claims returns the IDs of the rows relay holds a live lease on.
func claims(rows []outbox.Row, relay string, now sim.Tick) []int64 {
	var out []int64
	for _, row := range rows {
		if row.ClaimedBy == relay && row.LeaseUntil > now {
			out = append(out, int64(row.ID))
		}
	}
	return out
}

// queueView builds the panel of queue q with its dead-letter queue.
func (d *Session) queueView(q QueueInfo, byName map[string]QueueInfo) QueueView {
	m := q.Queue.Metrics()
	v := QueueView{Name: q.Name, Visible: m.Visible, InFlight: m.InFlight, Delayed: m.Delayed, OldestAge: m.OldestAge,
		Redeliveries: m.Redeliveries}
	var per [4]int
	d.chips = q.Queue.AppendResidents(d.chips[:0], 3*MaxChips)
	for _, c := range d.chips {
		w := WhereVisible
		switch c.Status {
		case queue.StatusInFlight:
			w = WhereInFlight
		case queue.StatusDelayed:
			w = WhereDelayed
		}
		if per[w] < MaxChips {
			per[w]++
			seen := c.ReceiveCount > 1 || d.rec.deliveries(c.Msg, q.Name) > c.ReceiveCount
			v.Chips = append(v.Chips, Chip{ID: c.Msg, ReceiveCount: c.ReceiveCount, Where: w, Seen: seen})
		}
	}
	if q.DLQ != "" {
		dq := byName[q.DLQ]
		v.DLQName = q.DLQ
		v.DLQDepth = dq.Queue.Len()
		d.chips = dq.Queue.AppendResidents(d.chips[:0], MaxChips)
		for _, c := range d.chips {
			v.Chips = append(v.Chips, Chip{ID: c.Msg, ReceiveCount: c.ReceiveCount, Where: WhereDLQ, Seen: c.ReceiveCount > 1})
		}
	}
	clear(d.chips)
	return v
}

// Step advances the simulation by one tick.
func (d *Session) Step() Snapshot {
	d.step()
	return d.Snapshot()
}

// step runs one tick and samples the series (while replaying: only
// follows the publish count).
func (d *Session) step() {
	if !d.run.Step() {
		return
	}
	if !d.replaying {
		d.sample()
	} else {
		d.lastPub = d.run.Published()
	}
	d.applyDue()
}

// applyDue applies the logged hand actions whose tick has come up again,
// after a seek back: each at the tick it first ran at, after that tick's
// sample, as it ran then. Outside a seek the notice says so.
func (d *Session) applyDue() {
	for d.done < len(d.log) && d.log[d.done].At <= d.run.Now() {
		h := d.log[d.done]
		d.done++
		what, err := d.do(h.Action)
		if !d.seeking && err == nil {
			d.notice = "again from the log: " + what
		}
	}
}

// NextNarration advances to the next narration step, or to the end.
func (d *Session) NextNarration() Snapshot {
	at, ok := d.run.NextNarration()
	for !d.run.Done() && (!ok || d.run.Now() < at) {
		d.step()
	}
	return d.Snapshot()
}

// Seek shows the run as it was at tick t (clamped to 0 and to the end of
// the run): going back rebuilds the run from its seed and re-executes it,
// hand actions included, each at the tick it ran at, so the state is
// exactly the one a fresh run stepped to t (with the same hand actions)
// has. Hand actions after t stay in the log, and the notice names them:
// going forward again (Step, Seek, NextNarration) applies each at its
// tick, until Do branches off.
// Going forward steps.
//
// Going back costs re-executing t ticks of the models (a world cannot be
// copied, so there is no checkpoint to start from). When the series
// samples of tick t are still kept (histCap ticks back) the re-execution
// takes no sample; the ledger keeps its summary and the per-key table
// itself, so they are taken once, at t, at O(what the run touched): one
// tick back costs the models' ticks alone, about 40 ms at t=500 and 70 ms
// at t=5000 in a 100,000-message scenario, under 1 ms in a lesson
// (BenchmarkSeekBack).
func (d *Session) Seek(t sim.Tick) Snapshot {
	if t < 0 {
		t = 0
	}
	back := t < d.run.Now()
	if back {
		old, start := append([]Series(nil), d.series...), d.histStart
		seed := d.run.Seed()
		if err := d.build(&seed); err != nil {
			d.notice = "going back failed: " + err.Error()
			return d.Snapshot()
		}
		d.seeking = true
		defer func() { d.seeking = false }()
		d.applyDue()
		kept := len(old) == len(d.series) && len(old) > 0 && t >= start && int(t-start) < len(old[0].Values)
		d.replaying = kept
		for d.run.Now() < t && !d.run.Done() {
			d.step()
		}
		if kept {
			d.replaying = false
			for i := range d.series {
				d.series[i].Values = old[i].Values[:d.run.Now()-start+1]
			}
			d.histStart = start
		}
	}
	for d.run.Now() < t && !d.run.Done() {
		d.step()
	}
	if back && d.done < len(d.log) {
		d.notice = aheadNotice(d.log[d.done:])
	}
	return d.Snapshot()
}

// aheadNotice says which logged actions lie ahead after going back: going
// forward applies them again, acting now drops them.
func aheadNotice(ahead []Logged) string {
	first := ahead[0]
	msg := fmt.Sprintf("ahead in the log: the %s at t=%d", ActionName(first.Action), first.At)
	switch n := len(ahead) - 1; n {
	case 0:
		return msg
	case 1:
		return msg + " and 1 more"
	default:
		return fmt.Sprintf("%s and %d more", msg, n)
	}
}

// PrevNarration goes back to the start of the narration step before the
// current one (to tick 0 from the first step).
func (d *Session) PrevNarration() Snapshot {
	i, _, _ := d.run.Narration()
	var at sim.Tick
	if i >= 2 {
		at = d.s.Narration[i-2].At
	}
	return d.Seek(at)
}

// Restart rebuilds the scenario from scratch with the given seed, with an
// empty action log. When the rebuild fails the current run stays and the
// header says why.
func (d *Session) Restart(seed uint64) Snapshot {
	if err := d.build(&seed); err != nil {
		d.notice = "restart failed: " + err.Error()
	} else {
		d.log = nil
	}
	return d.Snapshot()
}

// Do runs action a at the current tick and logs it: a timeline action of
// the file format (scenario.Action, its At and position ignored) or one of
// the hand actions SeekEarliest, Redrive, Crash and BrokerDown. The notice
// says what it did, e.g. "redrove 4 messages from orders-dlq"; an error is
// in words, without the package prefix, and leaves the log as it was.
//
// Done after a seek back, while the log still holds actions after the
// current tick, it branches: those actions are dropped (the future they
// made is no longer the one ahead) and the notice says so after what the
// action did, e.g. "crashed worker; dropped the redrive at t=14". What the
// action did comes first, so a header too narrow for the whole notice
// cuts the list of dropped actions, not the outcome.
func (d *Session) Do(a Action) (Snapshot, error) {
	at := d.run.Now()
	what, err := d.do(a)
	if err != nil {
		return d.Snapshot(), err
	}
	if dropped := d.log[d.done:]; len(dropped) > 0 {
		what += "; " + branchNotice(dropped)
	}
	d.log = append(d.log[:d.done], Logged{At: at, Action: a})
	d.done = len(d.log)
	d.notice = what
	return d.Snapshot(), nil
}

// branchNotice says which logged actions a branch drops, e.g. "dropped
// the redrive at t=14 and 1 later action". The branch's own tick is the
// current tick, which the header shows beside it.
func branchNotice(dropped []Logged) string {
	first := dropped[0]
	msg := fmt.Sprintf("dropped the %s at t=%d", ActionName(first.Action), first.At)
	switch n := len(dropped) - 1; n {
	case 0:
		return msg
	case 1:
		return msg + " and 1 later action"
	default:
		return fmt.Sprintf("%s and %d later actions", msg, n)
	}
}

// do runs a and says what it did.
func (d *Session) do(a Action) (string, error) {
	r := d.run
	switch {
	case a.Action == scenario.ActionSeek && a.To == eventlog.SeekToEarliest && a.Group == "":
		t := d.targets()
		if len(t.Groups) == 0 {
			return "", errors.New("nothing to replay: this lesson has no log to replay")
		}
		for _, g := range t.Groups {
			one := a
			one.Group = g
			if err := r.Do(one); err != nil {
				return "", words(err)
			}
		}
		return "replay: " + list(t.Groups) + " back to the earliest offset", nil
	case a.Action == scenario.ActionSeek && a.To == eventlog.SeekToEarliest:
		if err := r.Do(a); err != nil {
			return "", words(err)
		}
		return "replay: " + a.Group + " back to the earliest offset", nil
	case a.Action == scenario.ActionRedrive:
		t := d.targets()
		if len(t.DLQs) == 0 {
			return "", errors.New("nothing to redrive: this lesson has no dead-letter queue")
		}
		var from []string
		for _, q := range r.Queues() {
			if q.IsDLQ && q.Queue.Len() > 0 && (a.Queue == "" || a.Queue == q.Name) {
				from = append(from, q.Name)
			}
		}
		before := d.acts.redriven
		if err := r.Do(a); err != nil {
			return "", words(err)
		}
		n := d.acts.redriven - before
		if n == 0 {
			return "nothing to redrive: the dead-letter queue is empty", nil
		}
		msgs := "messages"
		if n == 1 {
			msgs = "message"
		}
		return fmt.Sprintf("redrove %d %s from %s", n, msgs, list(from)), nil
	case a.Action == scenario.ActionCrash:
		t := d.targets()
		if len(t.Consumers) == 0 {
			return "", errors.New("nothing to crash: this lesson has no consumer")
		}
		name := a.Consumer + a.Member
		if name == "" {
			name = t.Consumers[0]
			a.Consumer = name
		}
		if err := r.Do(a); err != nil {
			return "", words(err)
		}
		return "crashed " + name, nil
	case a.Action == ActionBrokerDown:
		if err := r.Do(a); err != nil {
			return "", words(err)
		}
		return fmt.Sprintf("brokers down until t=%d", r.Now()+BrokerDownWindow), nil
	}
	if err := r.Do(a); err != nil {
		return "", words(err)
	}
	return a.Action, nil
}

// list joins names with commas.
func list(names []string) string { return strings.Join(names, ", ") }

// Done reports whether the run has ended.
func (d *Session) Done() bool { return d.run.Done() }
