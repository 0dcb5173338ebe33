package tui

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// BrokerDownWindow is how many ticks the "broker down" action keeps every
// broker unavailable.
const BrokerDownWindow = lab.BrokerDownWindow

// exactStatsLimit is the number of messages up to which the driver
// recomputes the ledger statistics every tick; above it, every
// statsEvery ticks (Ledger.Stats costs O(messages x consumers)).
const (
	exactStatsLimit = 20_000
	statsEvery      = 32
	// histCap is the most samples per series the driver keeps (see
	// ScenarioDriver.series).
	histCap = 4 * MaxHistory
)

// ScenarioDriver is a Driver (and NarrationStepper) that plays a loaded
// scenario: it builds the run, steps it, samples the metric series every
// tick and turns the models' state into immutable Snapshots. A snapshot
// costs O(queues x MaxChips + topics x subscribers + partitions x groups +
// MaxTrace + series x MaxHistory), whatever the backlog. It is used from one
// goroutine, like every Driver.
type ScenarioDriver struct {
	s      *scenario.Scenario
	lesson string
	run    *lab.Run
	rec    *markRecorder
	subj   *subjectFold
	table  *EffectsView // per-key effects of the compared consumers
	// series holds up to histCap samples per series, one per tick from
	// tick histStart on; snapshots show the newest MaxHistory, and Seek
	// takes the older ones back instead of sampling again.
	series    []Series
	histStart sim.Tick
	lastPub   int
	// replaying is set while Seek re-executes the run: steps then take no
	// sample and fold the ledger only from tick foldFrom on.
	replaying bool
	foldFrom  sim.Tick
	// folds are the newest maxFolds ledger folds, oldest first, so that
	// going back a little takes the fold a run stepped there has instead
	// of folding again (a fold costs O(messages x consumers)).
	folds   []fold
	stats   sim.Stats
	effects []EffectView
	statsAt sim.Tick
	verdict lab.Verdict
	judged  bool // verdict is current
	chips   []queue.Resident
	notice  string
	tab     string // the model to open on
	// hand is every hand action of the current run with the tick it ran
	// at, in order, so that Seek can re-execute the run exactly.
	hand []handAction
}

// fold is one fold of the ledger and the tick it was taken at.
type fold struct {
	at      sim.Tick
	stats   sim.Stats
	effects []EffectView
	table   *EffectsView
}

// maxFolds is how many folds the driver keeps (see ScenarioDriver.folds).
const maxFolds = 4

// handAction is a hand action and the tick it ran at.
type handAction struct {
	at sim.Tick
	a  Action
}

// NewScenarioDriver builds the run of s with the file's seed, or *seed when
// seed is non-nil. Errors come from building the run (positioned, see
// lab.New).
func NewScenarioDriver(s *scenario.Scenario, seed *uint64) (*ScenarioDriver, error) {
	if s == nil {
		return nil, errors.New("tui: nil scenario")
	}
	d := &ScenarioDriver{s: s}
	if err := d.build(seed); err != nil {
		return nil, err
	}
	d.tab = s.View.Tab
	if d.tab == "" {
		d.tab = d.subjectTab()
	}
	if d.tab == "" {
		d.tab = busiest(s, d.run.Seed())
	}
	return d, nil
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
func busiest(s *scenario.Scenario, seed uint64) string {
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
	r, err := lab.New(s, lab.Options{Seed: &seed, Sinks: []sim.Sink{sink}})
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
func (d *ScenarioDriver) SetLesson(name string) { d.lesson = name }

// Run returns the current run, for inspection between ticks.
func (d *ScenarioDriver) Run() *lab.Run { return d.run }

// build starts a fresh run.
func (d *ScenarioDriver) build(seed *uint64) error {
	rec := newMarkRecorder(MaxTrace, nil)
	subj := d.newSubject()
	r, err := lab.New(d.s, lab.Options{Seed: seed, Sinks: []sim.Sink{rec, subj}})
	if err != nil {
		return err
	}
	rec.ledger = r.Env().Ledger
	d.run, d.rec, d.subj = r, rec, subj
	d.hand = d.hand[:0]
	d.judged = false
	d.series, d.histStart = nil, 0
	d.folds = nil
	d.series = append(d.series, Series{Kind: SeriesPublishRate})
	for _, l := range r.Logs() {
		for _, g := range l.Groups() {
			d.series = append(d.series, Series{Kind: SeriesLag, Group: g.Name()})
		}
	}
	d.series = append(d.series, Series{Kind: SeriesDLQDepth}, Series{Kind: SeriesDuplicates}, Series{Kind: SeriesLost})
	d.lastPub = r.Published()
	d.statsAt = -1
	d.refreshStats(true)
	d.sample()
	return nil
}

// refreshStats recomputes the ledger statistics when they are stale.
func (d *ScenarioDriver) refreshStats(force bool) {
	now := d.run.Now()
	if d.statsAt == now {
		return
	}
	// The schedule depends on the tick only (every tick up to
	// exactStatsLimit messages, else at each multiple of statsEvery), so a
	// run re-executed by Seek folds at the same ticks as one stepped there.
	if force || d.statsAt < 0 || d.run.Env().IDs.Last() <= exactStatsLimit || now/statsEvery != d.statsAt/statsEvery || d.run.Done() {
		l := d.run.Env().Ledger
		d.stats = l.Stats()
		d.statsAt = now
		d.effects = effectsOf(l)
		if refs, names := compared(d.s); refs != nil {
			t := effectKeysOf(l, refs, names)
			d.table = &t
		}
		d.judged = false
		if len(d.folds) == maxFolds {
			d.folds = append(d.folds[:0], d.folds[1:]...)
		}
		d.folds = append(d.folds, fold{at: now, stats: d.stats, effects: d.effects, table: d.table})
	}
}

// effectsOf folds the ledger's outcomes into per-consumer effect counts,
// in the ledger's consumer order. O(origins x consumers).
func effectsOf(l *sim.Ledger) []EffectView {
	var out []EffectView
	at := map[string]int{}
	for _, name := range l.Consumers() {
		at[name] = len(out)
		out = append(out, EffectView{Consumer: name})
	}
	for _, o := range l.Outcomes("") {
		i, ok := at[o.Consumer]
		if !ok {
			continue
		}
		ev := &out[i]
		ev.Applied += o.Effects
		ev.Absorbed += o.Skipped
		if o.Effects > 1 {
			ev.Repeated += o.Effects - 1
		}
		if o.Effects > ev.Worst {
			ev.Worst = o.Effects
		}
		if o.Deliveries > 1 {
			ev.Repeats += o.Deliveries - 1
		}
	}
	return out
}

// judge returns the verdict on the current state, recomputed only when
// the statistics were (the checkers cost what Ledger.Stats costs).
func (d *ScenarioDriver) judge() lab.Verdict {
	if !d.judged || d.verdict.Final != d.run.Done() {
		d.verdict = d.run.Verdict()
		d.judged = true
	}
	return d.verdict
}

// sample appends one sample to every series.
func (d *ScenarioDriver) sample() {
	r := d.run
	d.refreshStats(false)
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
func (d *ScenarioDriver) Snapshot() Snapshot {
	r := d.run
	now := r.Now()
	snap := Snapshot{Header: Header{Title: d.s.Title, Lesson: d.lesson, Tick: now, Seed: r.Seed(), Notice: d.notice, Tab: d.tab}}
	d.notice = ""
	queues := r.Queues()
	byName := map[string]lab.QueueInfo{}
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
				c := p.Committed
				if c < 0 {
					c = p.LogStart
				}
				gv.Committed = append(gv.Committed, c)
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
	d.refreshStats(false)
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
func (d *ScenarioDriver) newSubject() *subjectFold {
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
func (d *ScenarioDriver) replayed() map[string]bool {
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
func (d *ScenarioDriver) subjectTab() string {
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
func (d *ScenarioDriver) intro() Intro {
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
func (d *ScenarioDriver) targets() Targets {
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
func (d *ScenarioDriver) queueView(q lab.QueueInfo, byName map[string]lab.QueueInfo) QueueView {
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
func (d *ScenarioDriver) Step() Snapshot {
	d.step()
	return d.Snapshot()
}

// step runs one tick and samples the series (while replaying: only
// follows the publish count, and folds the ledger from foldFrom on).
func (d *ScenarioDriver) step() {
	if !d.run.Step() {
		return
	}
	if !d.replaying {
		d.sample()
		return
	}
	d.lastPub = d.run.Published()
	if d.run.Now() >= d.foldFrom {
		d.refreshStats(false)
	}
}

// NextNarration advances to the next narration step, or to the end.
func (d *ScenarioDriver) NextNarration() Snapshot {
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
// has. Hand actions after t are forgotten. Going forward steps.
//
// Going back costs re-executing t ticks of the models (a world cannot be
// copied, so there is no checkpoint to start from). When the series
// samples of tick t are still kept (histCap ticks back) the re-execution
// takes no sample, and when a kept fold of the ledger (maxFolds, about
// maxFolds x statsEvery ticks back) is the one a run stepped to t would
// show, it folds nothing either: one tick back costs the models' ticks
// alone, about 40 ms at t=500 and 70 ms at t=5000 in a 100,000-message
// scenario, under 1 ms in a lesson (BenchmarkSeekBack). Further back it
// folds once or a few times, O(messages x consumers) each.
func (d *ScenarioDriver) Seek(t sim.Tick) Snapshot {
	if t < 0 {
		t = 0
	}
	if t < d.run.Now() {
		hand := append([]handAction(nil), d.hand...)
		old, start, folds := append([]Series(nil), d.series...), d.histStart, d.folds
		seed := d.run.Seed()
		if err := d.build(&seed); err != nil {
			d.notice = "going back failed: " + err.Error()
			return d.Snapshot()
		}
		kept := len(old) == len(d.series) && len(old) > 0 && t >= start && int(t-start) < len(old[0].Values)
		d.replaying, d.foldFrom = kept, t-t%statsEvery
		// The newest fold at or before t that the earlier execution took
		// is the one this one would take: the schedule depends on the tick
		// only. It is known when the kept folds reach back to t.
		last := -1
		for i, f := range folds {
			if f.at <= t {
				last = i
			}
		}
		if kept && last >= 0 {
			d.foldFrom = math.MaxInt64
		}
		for _, h := range hand {
			if h.at > t {
				break
			}
			for d.run.Now() < h.at && !d.run.Done() {
				d.step()
			}
			_, _ = d.do(h.a)
		}
		for d.run.Now() < t && !d.run.Done() {
			d.step()
		}
		if kept && last >= 0 && d.run.Now() == t {
			f := folds[last]
			d.stats, d.effects, d.table, d.statsAt = f.stats, f.effects, f.table, f.at
			d.folds = append(d.folds[:0], folds[:last+1]...)
			d.judged = false
		} else if kept && last >= 0 {
			d.refreshStats(true)
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
	return d.Snapshot()
}

// PrevNarration goes back to the start of the narration step before the
// current one (to tick 0 from the first step).
func (d *ScenarioDriver) PrevNarration() Snapshot {
	i, _, _ := d.run.Narration()
	var at sim.Tick
	if i >= 2 {
		at = d.s.Narration[i-2].At
	}
	return d.Seek(at)
}

// Restart rebuilds the scenario from scratch with the given seed. When the
// rebuild fails the current run stays and the header says why.
func (d *ScenarioDriver) Restart(seed uint64) Snapshot {
	if err := d.build(&seed); err != nil {
		d.notice = "restart failed: " + err.Error()
	}
	return d.Snapshot()
}

// Do runs a replay action or a manual fault at the current tick: seek
// groups to earliest, redrive dead-letter queues, crash a consumer, or take
// every broker down for BrokerDownWindow ticks (a broker.unavailable rule
// added to the run's injector). The notice says what it did, e.g.
// "redrove 4 messages from orders-dlq"; an error is in words, without the
// package prefix.
func (d *ScenarioDriver) Do(a Action) (Snapshot, error) {
	at := d.run.Now()
	what, err := d.do(a)
	if err != nil {
		return d.Snapshot(), err
	}
	d.hand = append(d.hand, handAction{at: at, a: a})
	d.notice = what
	d.judged = false
	return d.Snapshot(), nil
}

// do runs a and says what it did.
func (d *ScenarioDriver) do(a Action) (string, error) {
	r := d.run
	switch a.Kind {
	case ActionSeekEarliest:
		t := d.targets()
		if len(t.Groups) == 0 {
			return "", errors.New("nothing to replay: this lesson has no log to replay")
		}
		if err := r.Do(lab.SeekEarliest(a.Target)); err != nil {
			return "", words(err)
		}
		if a.Target == "" {
			return "replay: " + list(t.Groups) + " back to the earliest offset", nil
		}
		return "replay: " + a.Target + " back to the earliest offset", nil
	case ActionRedriveDLQ:
		t := d.targets()
		if len(t.DLQs) == 0 {
			return "", errors.New("nothing to redrive: this lesson has no dead-letter queue")
		}
		var from []string
		for _, q := range r.Queues() {
			if q.IsDLQ && q.Queue.Len() > 0 && (a.Target == "" || a.Target == q.Name) {
				from = append(from, q.Name)
			}
		}
		before := redriven(r)
		err := r.Do(lab.Redrive(a.Target))
		n := redriven(r) - before
		if err != nil {
			return "", words(err)
		}
		if n == 0 {
			return "nothing to redrive: the dead-letter queue is empty", nil
		}
		msgs := "messages"
		if n == 1 {
			msgs = "message"
		}
		return fmt.Sprintf("redrove %d %s from %s", n, msgs, list(from)), nil
	case ActionCrashConsumer:
		t := d.targets()
		if len(t.Consumers) == 0 {
			return "", errors.New("nothing to crash: this lesson has no consumer")
		}
		name := a.Target
		if name == "" {
			name = t.Consumers[0]
		}
		if err := r.Do(lab.Crash(name)); err != nil {
			return "", words(err)
		}
		return "crashed " + name, nil
	case ActionBrokerDown:
		if err := r.Do(lab.BrokerDown()); err != nil {
			return "", words(err)
		}
		return fmt.Sprintf("brokers down until t=%d", r.Now()+BrokerDownWindow), nil
	}
	return "", fmt.Errorf("unknown action %d", a.Kind)
}

// words strips the "lab: runtime error: " prefix of a run-time error,
// so the notice says what was wrong in words.
func words(err error) error {
	msg := err.Error()
	for _, p := range []string{lab.ErrRuntime.Error() + ": ", "scenario: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return errors.New(msg)
}

// redriven counts the messages redriven out of r's dead-letter queues so
// far.
func redriven(r *lab.Run) int {
	n := 0
	for _, q := range r.Queues() {
		n += q.Queue.Metrics().Redriven
	}
	return n
}

// list joins names with commas.
func list(names []string) string { return strings.Join(names, ", ") }

// Done reports whether the run has ended.
func (d *ScenarioDriver) Done() bool { return d.run.Done() }
