package tui

import (
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// BrokerDownWindow is how many ticks the "broker down" action keeps every
// broker unavailable.
const BrokerDownWindow sim.Tick = 10

// exactStatsLimit is the number of messages up to which the driver
// recomputes the ledger statistics every tick; above it, every
// statsEvery ticks (Ledger.Stats costs O(messages x consumers)).
const (
	exactStatsLimit = 20_000
	statsEvery      = 32
)

// ScenarioDriver is a Driver (and NarrationStepper) that plays a loaded
// scenario: it builds the run, steps it, samples the metric series every
// tick and turns the models' state into immutable Snapshots. A snapshot
// costs O(queues x MaxChips + topics x subscribers + partitions x groups +
// MaxTrace + series x MaxHistory), whatever the backlog. It is used from one
// goroutine, like every Driver.
type ScenarioDriver struct {
	s       *scenario.Scenario
	lesson  string
	run     *scenario.Run
	rec     *sim.Recorder
	series  []Series // sample rings, MaxHistory each
	lastPub int
	stats   sim.Stats
	statsAt sim.Tick
	chips   []queue.Resident
	notice  string
}

// NewScenarioDriver builds the run of s with the file's seed, or *seed when
// seed is non-nil. Errors come from building the run (positioned, see
// scenario.Scenario.NewRun).
func NewScenarioDriver(s *scenario.Scenario, seed *uint64) (*ScenarioDriver, error) {
	if s == nil {
		return nil, errors.New("tui: nil scenario")
	}
	d := &ScenarioDriver{s: s}
	if err := d.build(seed); err != nil {
		return nil, err
	}
	return d, nil
}

// SetLesson names the lesson shown in the header ("" for a file).
func (d *ScenarioDriver) SetLesson(name string) { d.lesson = name }

// Run returns the current run, for inspection between ticks.
func (d *ScenarioDriver) Run() *scenario.Run { return d.run }

// build starts a fresh run.
func (d *ScenarioDriver) build(seed *uint64) error {
	rec := &sim.Recorder{Max: MaxTrace}
	r, err := d.s.NewRun(scenario.Options{Seed: seed, Sinks: []sim.Sink{rec}})
	if err != nil {
		return err
	}
	d.run, d.rec = r, rec
	d.series = d.series[:0]
	d.series = append(d.series, Series{Kind: SeriesPublishRate})
	for _, l := range r.Logs() {
		for _, g := range l.Groups() {
			d.series = append(d.series, Series{Kind: SeriesLag, Group: g.Name()})
		}
	}
	d.series = append(d.series, Series{Kind: SeriesDLQDepth}, Series{Kind: SeriesDuplicates}, Series{Kind: SeriesLost})
	d.lastPub = r.Published()
	d.stats = r.Env().Ledger.Stats()
	d.statsAt = r.Now()
	d.sample()
	return nil
}

// refreshStats recomputes the ledger statistics when they are stale.
func (d *ScenarioDriver) refreshStats(force bool) {
	now := d.run.Now()
	if d.statsAt == now {
		return
	}
	if force || d.run.Env().IDs.Last() <= exactStatsLimit || now-d.statsAt >= statsEvery || d.run.Done() {
		d.stats = d.run.Env().Ledger.Stats()
		d.statsAt = now
	}
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
		if len(s.Values) == MaxHistory {
			copy(s.Values, s.Values[1:])
			s.Values = s.Values[:MaxHistory-1]
		}
		s.Values = append(s.Values, v)
	}
	d.lastPub = pub
}

// Snapshot describes the current state without advancing.
func (d *ScenarioDriver) Snapshot() Snapshot {
	r := d.run
	now := r.Now()
	snap := Snapshot{Header: Header{Title: d.s.Title, Lesson: d.lesson, Tick: now, Seed: r.Seed(), Notice: d.notice}}
	d.notice = ""
	queues := r.Queues()
	byName := map[string]scenario.QueueInfo{}
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
	for _, s := range r.Services() {
		m := s.Service.Metrics()
		ov := OutboxView{Service: s.Name, Pending: m.Pending, Sent: m.Sent, Dead: m.DeadLetters}
		rows := s.Service.PendingRows(MaxChips)
		for _, rl := range s.Relays {
			ov.Relays = append(ov.Relays, RelayView{Name: rl.Name, Crashed: rl.Down, Claims: claims(rows, rl.Name, now)})
		}
		snap.Outboxes = append(snap.Outboxes, ov)
	}
	for _, s := range d.series {
		snap.Series = append(snap.Series, Series{Kind: s.Kind, Group: s.Group, Values: append([]float64(nil), s.Values...)})
	}
	snap.Trace = append([]sim.Event(nil), d.rec.Events()...)
	i, n, text := r.Narration()
	snap.Narration = Narration{Index: i, Total: n, Text: text}
	if i > 0 {
		snap.Narration.Pause = d.s.Narration[i-1].Pause
	}
	d.refreshStats(false)
	snap.Ledger = SummaryOf(d.stats)
	return snap
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
func (d *ScenarioDriver) queueView(q scenario.QueueInfo, byName map[string]scenario.QueueInfo) QueueView {
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
			v.Chips = append(v.Chips, Chip{ID: c.Msg, ReceiveCount: c.ReceiveCount, Where: w})
		}
	}
	if q.DLQ != "" {
		dq := byName[q.DLQ]
		v.DLQName = q.DLQ
		v.DLQDepth = dq.Queue.Len()
		d.chips = dq.Queue.AppendResidents(d.chips[:0], MaxChips)
		for _, c := range d.chips {
			v.Chips = append(v.Chips, Chip{ID: c.Msg, ReceiveCount: c.ReceiveCount, Where: WhereDLQ})
		}
	}
	clear(d.chips)
	return v
}

// Step advances the simulation by one tick.
func (d *ScenarioDriver) Step() Snapshot {
	if d.run.Step() {
		d.sample()
	}
	return d.Snapshot()
}

// NextNarration advances to the next narration step, or to the end.
func (d *ScenarioDriver) NextNarration() Snapshot {
	at, ok := d.run.NextNarration()
	for !d.run.Done() && (!ok || d.run.Now() < at) {
		if d.run.Step() {
			d.sample()
		}
	}
	return d.Snapshot()
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
// added to the run's injector).
func (d *ScenarioDriver) Do(a Action) (Snapshot, error) {
	var err error
	switch a.Kind {
	case ActionSeekEarliest:
		err = d.run.SeekEarliest(a.Target)
	case ActionRedriveDLQ:
		var n int
		n, err = d.run.Redrive(a.Target)
		if err == nil {
			d.notice = fmt.Sprintf("redrove %d message(s)", n)
		}
	case ActionCrashConsumer:
		err = d.run.CrashConsumer(a.Target)
	case ActionBrokerDown:
		err = d.run.BrokerDown(BrokerDownWindow)
	default:
		err = fmt.Errorf("tui: unknown action %d", a.Kind)
	}
	if err != nil {
		return d.Snapshot(), err
	}
	return d.Snapshot(), nil
}

// Done reports whether the run has ended.
func (d *ScenarioDriver) Done() bool { return d.run.Done() }
