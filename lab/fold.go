package lab

import (
	"strings"

	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/projection"
	"github.com/brokerlab/brokerlab/saga"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// outboxMarked is the kind of a row marked sent.
const outboxMarked = outbox.KindMarked

// MetricFold re-derives component metrics from trace events, as the
// ledger re-derives delivery facts: it is a sim.Sink whose only input is
// Emit, so the same fold over a recorded JSON Lines trace gives the values
// the live run measured. A Run measures the metrics its expectations read
// from its own MetricFold, which folds only those kinds of component (see
// Folded and Run.Measure); 'brokerlab verify --scenario' folds a recorded
// trace with a fold of every kind (NewMetricFold).
//
// It reads only structured fields (Kind, Where, Actor, Consumer, Partition,
// Offset), and the Detail of "subscribed" ("earliest"), as the ledger does.
// Memory is O(components + partitions + log records deleted out of order +
// resident queue copies): per log partition it keeps only the offsets
// deleted past the log start, and a queue's resident copies only when its
// scope includes oldest_age. Emit costs amortised O(1) per event, and
// one map lookup for an event of a kind out of scope.
type MetricFold struct {
	now    sim.Tick          // the tick the values are read at (see SetNow)
	ages   bool              // queues keep their resident copies, for oldest_age
	dlqOf  map[string]string // queue -> its dead-letter queue
	queues map[string]*queueFold
	topics map[string]*topicFold
	logs   map[string]*logFold
	groups map[string]*groupFold
	boxes  map[string]*outboxFold
	sagas  map[string]*sagaFold
}

// sagaFold is one saga orchestrator: its counters, and per open saga
// (by order) its applied, uncompensated steps with a compensation, which
// count as held if the saga ends failed. Memory is O(open sagas x steps).
type sagaFold struct {
	m       saga.Metrics
	held    map[sim.ID]map[string]bool
	comp    map[string]string // compensation -> step it undoes
	hasComp map[string]bool   // steps with a compensation
}

// outboxFold is one service's outbox: its rows by message, while they
// may still be published, and its counters.
type outboxFold struct {
	created                           map[sim.ID]sim.Tick // rows not yet marked sent, and when they were stored
	dead                              map[sim.ID]bool
	pending, published, failed, deadN int
	maxLag                            sim.Tick
}

type queueFold struct {
	receives, acks, redeliveries, depth int
	residents                           residentFold
}

// residentFold keeps a queue's resident copies in the order they entered
// it, for the age of the oldest: a copy enters on sent, duplicated,
// dead-lettered (into the dead-letter queue) and redriven, and leaves on
// acked, expired, purged, dead-lettered (out of its queue) and redriven
// (out of the dead-letter queue). A copy that leaves is the oldest copy of
// its message ID there. Memory is O(resident copies), about 40 bytes each:
// a copy's place in order is its sequence number minus base, copies that
// left are dropped from the front as they reach it, and the slice is
// compacted when half of it is dropped. An ID held more than once (a
// broker duplicate) keeps its later copies in more.
type residentFold struct {
	seq   uint64 // the last sequence number given out
	base  uint64 // the sequence number of order[0]
	order []residentCopy
	head  int
	live  map[sim.ID]uint64   // the oldest resident copy of an ID
	more  map[sim.ID][]uint64 // later resident copies of an ID, oldest first
}

type residentCopy struct {
	at   sim.Tick
	gone bool
}

func (r *residentFold) enter(id sim.ID, at sim.Tick) {
	if r.live == nil {
		r.live, r.more, r.base = map[sim.ID]uint64{}, map[sim.ID][]uint64{}, r.seq+1
	}
	r.seq++
	r.order = append(r.order, residentCopy{at: at})
	if _, ok := r.live[id]; !ok {
		r.live[id] = r.seq
	} else {
		r.more[id] = append(r.more[id], r.seq)
	}
}

func (r *residentFold) leave(id sim.ID) {
	seq, ok := r.live[id]
	if !ok {
		return
	}
	if m := r.more[id]; len(m) > 0 {
		r.live[id] = m[0]
		if len(m) == 1 {
			delete(r.more, id)
		} else {
			r.more[id] = m[1:]
		}
	} else {
		delete(r.live, id)
	}
	r.order[seq-r.base].gone = true
	for r.head < len(r.order) && r.order[r.head].gone {
		r.head++
	}
	if r.head > 64 && r.head*2 > len(r.order) {
		r.base += uint64(r.head)
		r.order = append(r.order[:0], r.order[r.head:]...)
		r.head = 0
	}
}

// oldestAge is the age at now of the oldest resident copy, 0 when none
// is (as queue.Metrics.OldestAge).
func (r *residentFold) oldestAge(now sim.Tick) sim.Tick {
	for i := r.head; i < len(r.order); i++ {
		if !r.order[i].gone {
			if age := now - r.order[i].at; age > 0 {
				return age
			}
			return 0
		}
	}
	return 0
}

type topicFold struct{ published, delivered, missed, dropped int }

// logFold is one log topic: per partition its end, its start and the
// deleted offsets at or past the start.
type logFold struct {
	end, start []int64
	deleted    []map[int64]bool
	records    int64
}

// groupFold is one consumer group: where each partition's reading
// resumes from (committed, or the start position while nothing is) and
// its rebalances.
type groupFold struct {
	log        *logFold
	committed  []int64 // -1 = none
	initial    []int64
	rebalances int
	reads      int // reads of the group's projection and of its source
	stale      int // reads of the projection that saw an older value
}

// foldScope says which kinds of component a MetricFold folds: a kind
// left out has no entries, so Value reports false for its metrics and
// Emit skips its events after one map lookup.
type foldScope struct {
	queues bool // the queue counters and depths
	ages   bool // the queues' resident copies too, for oldest_age (about 40 bytes per resident copy)
	topics bool
	logs   bool
	groups bool // needs logs
	boxes  bool
	sagas  bool
}

// foldEverything is the scope of NewMetricFold: every component metric
// Folded names.
var foldEverything = foldScope{queues: true, ages: true, topics: true, logs: true, groups: true, boxes: true, sagas: true}

// scopeOf returns the scope that serves the component metrics s's
// expectations read: a kind is folded when an expectation names one of
// its folded fields; a group needs its log, and oldest_age the queues'
// resident copies. Ledger and consumer metrics are the ledger's, not the
// fold's. A scenario whose expectations are all checks needs no fold.
func scopeOf(s *scenario.Scenario) foldScope {
	var sc foldScope
	for i := range s.Expect {
		m := s.Expect[i].Metric
		if s.Expect[i].Check != "" || !Folded(m) {
			continue
		}
		switch m.Kind {
		case "queue":
			sc.queues = true
			sc.ages = sc.ages || m.Field == "oldest_age"
		case "topic":
			sc.topics = true
		case "log":
			sc.logs = true
		case "group":
			sc.logs, sc.groups = true, true
		case "outbox":
			sc.boxes = true
		case "saga":
			sc.sagas = true
		}
	}
	return sc
}

// empty reports whether the scope folds nothing.
func (sc foldScope) empty() bool { return sc == foldScope{} }

// NewMetricFold returns an empty fold for the components of s.
func NewMetricFold(s *scenario.Scenario) *MetricFold { return newMetricFold(s, foldEverything) }

// newMetricFold returns an empty fold for the components of s that
// scope names. Cost: O(components + partitions).
func newMetricFold(s *scenario.Scenario, scope foldScope) *MetricFold {
	f := &MetricFold{ages: scope.ages, dlqOf: map[string]string{}, queues: map[string]*queueFold{}, topics: map[string]*topicFold{},
		logs: map[string]*logFold{}, groups: map[string]*groupFold{}, boxes: map[string]*outboxFold{}, sagas: map[string]*sagaFold{}}
	// A kind out of scope gets no entries.
	sagas, services, queues, topics, logs, groups := s.Actors.Sagas, s.Topology.Services, s.Topology.Queues,
		s.Topology.Topics, s.Topology.Logs, s.Topology.Groups
	if !scope.sagas {
		sagas = nil
	}
	if !scope.boxes {
		services = nil
	}
	if !scope.queues {
		queues = nil
	}
	if !scope.topics {
		topics = nil
	}
	if !scope.logs {
		logs = nil
	}
	if !scope.groups {
		groups = nil
	}
	for i := range sagas {
		g := &sagas[i]
		sf := &sagaFold{held: map[sim.ID]map[string]bool{}, comp: map[string]string{}, hasComp: map[string]bool{}}
		for _, st := range g.Steps {
			if st.Compensation != "" {
				sf.comp[st.Compensation] = st.Name
				sf.hasComp[st.Name] = true
			}
		}
		f.sagas[g.Name] = sf
	}
	for i := range services {
		f.boxes[services[i].Name] = &outboxFold{created: map[sim.ID]sim.Tick{}, dead: map[sim.ID]bool{}}
	}
	for i := range queues {
		q := &queues[i]
		f.queues[q.Name] = &queueFold{}
		if q.DeadLetter != nil {
			f.dlqOf[q.Name] = q.DeadLetter.Queue
		}
	}
	for i := range topics {
		f.topics[topics[i].Name] = &topicFold{}
	}
	for i := range logs {
		l := &logs[i]
		n := max(l.Partitions, 1)
		f.logs[l.Name] = &logFold{end: make([]int64, n), start: make([]int64, n), deleted: make([]map[int64]bool, n)}
	}
	for i := range groups {
		g := &groups[i]
		if l := f.logs[g.Log]; l != nil {
			gf := &groupFold{log: l, committed: make([]int64, len(l.end)), initial: make([]int64, len(l.end))}
			for p := range gf.committed {
				gf.committed[p] = -1
			}
			f.groups[g.Name] = gf
		}
	}
	return f
}

// SetNow sets the tick the values are read at, for the metrics that
// depend on it (a queue's oldest age). Emit moves it to each event's tick;
// a run sets it to the world's tick before it measures, since a tick may
// have no event.
func (f *MetricFold) SetNow(now sim.Tick) { f.now = now }

// Emit folds one event.
func (f *MetricFold) Emit(e *sim.Event) {
	if e.Tick > f.now {
		f.now = e.Tick
	}
	kind, name, _ := strings.Cut(e.Where, ":")
	switch kind {
	case "queue":
		f.queueEvent(name, e)
	case "topic":
		t := f.topics[name]
		if t == nil {
			return
		}
		switch e.Kind {
		case sim.KindPublished:
			t.published++
		case sim.KindDelivered:
			t.delivered++
		case sim.KindMissed:
			t.missed++
		case sim.KindDropped:
			t.dropped++
		}
	case "log":
		f.logEvent(name, e)
	case "saga":
		if g := f.sagas[name]; g != nil {
			g.event(e)
		}
	case "outbox":
		if b := f.boxes[name]; b != nil {
			b.emit(e)
		}
	case "projection": // a group's projection is named after the group
		if g := f.groups[name]; g != nil {
			switch e.Kind {
			case projection.KindRead:
				g.reads++
			case projection.KindStaleRead:
				g.reads++
				g.stale++
			}
		}
	}
}

// emit folds one event of the outbox.
func (b *outboxFold) emit(e *sim.Event) {
	switch e.Kind {
	case sim.KindStored:
		if b.dead[e.Msg] {
			delete(b.dead, e.Msg) // a dead row retried by hand keeps its creation
			b.deadN--
		} else {
			b.created[e.Msg] = e.Tick
		}
		b.pending++
	case outboxMarked:
		if _, ok := b.created[e.Msg]; ok {
			delete(b.created, e.Msg)
		}
		b.pending--
	case sim.KindFailed:
		b.failed++
	case sim.KindDeadLettered:
		b.failed++
		b.deadN++
		b.dead[e.Msg] = true
		b.pending--
	case sim.KindRelayed:
		b.published++
		if t, ok := b.created[e.Msg]; ok && e.Tick-t > b.maxLag {
			b.maxLag = e.Tick - t
		}
	}
}

// NeedsDetail reports that the fold reads no Detail text a model builds
// only for people (see sim.Trace.Attach).
func (f *MetricFold) NeedsDetail() bool { return false }

func (f *MetricFold) queueEvent(name string, e *sim.Event) {
	q := f.queues[name]
	if q == nil {
		return
	}
	dlq := f.queues[f.dlqOf[name]]
	switch e.Kind {
	case sim.KindSent, sim.KindDuplicated:
		q.depth++
		f.enter(q, e.Msg, e.Tick)
	case sim.KindReceived:
		q.receives++
	case sim.KindRedelivered:
		q.receives++
		q.redeliveries++
	case sim.KindAcked:
		q.acks++
		q.depth--
		f.leave(q, e.Msg)
	case sim.KindExpired, sim.KindPurged:
		q.depth--
		f.leave(q, e.Msg)
	case sim.KindDeadLettered:
		q.depth--
		f.leave(q, e.Msg)
		if dlq != nil {
			dlq.depth++
			f.enter(dlq, e.Msg, e.Tick)
		}
	case sim.KindRedriven:
		q.depth++ // traced by the queue it goes back to
		f.enter(q, e.Msg, e.Tick)
		if dlq != nil {
			dlq.depth--
			f.leave(dlq, e.Origin)
		}
	}
}

// enter notes a copy of id entering q at tick at, when the fold keeps
// the queues' resident copies (oldest_age); it costs nothing otherwise.
func (f *MetricFold) enter(q *queueFold, id sim.ID, at sim.Tick) {
	if f.ages {
		q.residents.enter(id, at)
	}
}

// leave notes a copy of id leaving q, as enter.
func (f *MetricFold) leave(q *queueFold, id sim.ID) {
	if f.ages {
		q.residents.leave(id)
	}
}

func (f *MetricFold) logEvent(name string, e *sim.Event) {
	l := f.logs[name]
	if l == nil {
		return
	}
	p := e.Partition
	switch e.Kind {
	case sim.KindSubscribed:
		if g := f.groups[e.Consumer]; g != nil {
			for q := range g.initial {
				if e.Detail == "earliest" {
					g.initial[q] = l.start[q]
				} else {
					g.initial[q] = l.end[q]
				}
			}
		}
		return
	case sim.KindRebalanced:
		if g := f.groups[e.Consumer]; g != nil {
			g.rebalances++
		}
		return
	case sim.KindAction:
		if e.HasPos && e.Partition >= len(l.end) && e.Partition < 1<<16 {
			f.grow(l, e.Partition+1) // partitions added
		}
		return
	}
	if !e.HasPos || p < 0 || p >= len(l.end) {
		return
	}
	switch e.Kind {
	case sim.KindProduced:
		if e.Offset+1 > l.end[p] {
			l.end[p] = e.Offset + 1
		}
		l.records++
	case sim.KindExpired, sim.KindPurged:
		if e.Offset < l.start[p] || l.deleted[p][e.Offset] {
			return
		}
		if l.deleted[p] == nil {
			l.deleted[p] = map[int64]bool{}
		}
		l.deleted[p][e.Offset] = true
		l.records--
		for l.start[p] < l.end[p] && l.deleted[p][l.start[p]] {
			delete(l.deleted[p], l.start[p])
			l.start[p]++
		}
	case sim.KindCommitted:
		if g := f.groups[e.Consumer]; g != nil {
			g.committed[p] = e.Offset
		}
	case sim.KindSeeked:
		if g := f.groups[e.Consumer]; g != nil && e.Actor == e.Consumer {
			g.committed[p] = e.Offset // a seek of the group moves its committed offset
		}
	}
}

// grow adds empty partitions to l up to n, and to the groups reading it.
func (f *MetricFold) grow(l *logFold, n int) {
	for len(l.end) < n {
		l.end, l.start, l.deleted = append(l.end, 0), append(l.start, 0), append(l.deleted, nil)
	}
	for _, g := range f.groups {
		if g.log == l {
			for len(g.committed) < n {
				g.committed, g.initial = append(g.committed, -1), append(g.initial, 0)
			}
		}
	}
}

// next returns the first offset at or after off of partition p that
// still holds a record, or the end.
func (l *logFold) next(p int, off int64) int64 {
	for off < l.end[p] && l.deleted[p][off] {
		off++
	}
	return min(off, l.end[p])
}

// event folds one event of the orchestrator, as saga.Orchestrator counts
// it: "processed" starts a saga, "step_done" notes a step that has a
// compensation, "compensated" releases it (or, marked duplicate, counts a
// duplicate), "saga_ended" counts the end state and, for failed, what
// the saga still holds.
func (g *sagaFold) event(e *sim.Event) {
	switch e.Kind {
	case sim.KindProcessed:
		g.m.Started++
	case sim.KindStepDone:
		if g.hasComp[e.Type] {
			if g.held[e.Msg] == nil {
				g.held[e.Msg] = map[string]bool{}
			}
			g.held[e.Msg][e.Type] = true
		}
	case sim.KindCompensated:
		if strings.HasSuffix(e.Detail, saga.DuplicateMark) {
			g.m.Duplicates++
			return
		}
		g.m.Compensations++
		delete(g.held[e.Msg], g.comp[e.Type])
	case sim.KindSagaEnded:
		switch e.Detail {
		case saga.Completed.String():
			g.m.Completed++
		case saga.Compensated.String():
			g.m.Compensated++
		case saga.Failed.String():
			g.m.Failed++
			g.m.Held += len(g.held[e.Msg])
		case saga.Parked.String():
			g.m.Parked++
		}
		delete(g.held, e.Msg)
	}
}

// sagaValue returns field of m.
func sagaValue(m saga.Metrics, field string) (float64, bool) {
	switch field {
	case "started":
		return float64(m.Started), true
	case "completed":
		return float64(m.Completed), true
	case "compensated":
		return float64(m.Compensated), true
	case "failed":
		return float64(m.Failed), true
	case "parked":
		return float64(m.Parked), true
	case "compensations":
		return float64(m.Compensations), true
	case "duplicates":
		return float64(m.Duplicates), true
	case "held":
		return float64(m.Held), true
	}
	return 0, false
}

// Value returns metric m as folded so far, and false for a metric the
// fold does not re-derive (see Folded).
func (f *MetricFold) Value(m scenario.Metric) (float64, bool) {
	if !Folded(m) {
		return 0, false
	}
	switch m.Kind {
	case "queue":
		q := f.queues[m.Name]
		if q == nil || m.Field == "dlq" && f.queues[f.dlqOf[m.Name]] == nil {
			return 0, false
		}
		switch m.Field {
		case "receives":
			return float64(q.receives), true
		case "acks":
			return float64(q.acks), true
		case "redeliveries":
			return float64(q.redeliveries), true
		case "depth":
			return float64(q.depth), true
		case "oldest_age":
			if !f.ages {
				return 0, false
			}
			return float64(q.residents.oldestAge(f.now)), true
		case "dlq":
			return float64(f.queues[f.dlqOf[m.Name]].depth), true
		}
	case "topic":
		t := f.topics[m.Name]
		if t == nil {
			return 0, false
		}
		switch m.Field {
		case "published":
			return float64(t.published), true
		case "delivered":
			return float64(t.delivered), true
		case "missed":
			return float64(t.missed), true
		case "dropped":
			return float64(t.dropped), true
		}
	case "log":
		l := f.logs[m.Name]
		if l == nil {
			return 0, false
		}
		var start, end int64
		for p := range l.end {
			start += min(l.start[p], l.end[p])
			end += l.end[p]
		}
		switch m.Field {
		case "start":
			return float64(start), true
		case "end":
			return float64(end), true
		case "records":
			return float64(l.records), true
		case "partitions":
			return float64(len(l.end)), true
		}
	case "saga":
		if g := f.sagas[m.Name]; g != nil {
			return sagaValue(g.m, m.Field)
		}
		return 0, false
	case "outbox":
		b := f.boxes[m.Name]
		if b == nil {
			return 0, false
		}
		switch m.Field {
		case "pending":
			return float64(b.pending), true
		case "published":
			return float64(b.published), true
		case "failed":
			return float64(b.failed), true
		case "dead":
			return float64(b.deadN), true
		case "relay_lag":
			return float64(b.maxLag), true
		}
	case "group":
		g := f.groups[m.Name]
		if g == nil {
			return 0, false
		}
		switch m.Field {
		case "lag":
			var lag int64
			for p := range g.committed {
				from := g.committed[p]
				if from < 0 {
					from = g.initial[p]
				}
				if from <= g.log.end[p] {
					lag += g.log.end[p] - g.log.next(p, max(from, g.log.start[p]))
				}
			}
			return float64(lag), true
		case "committed":
			var n int64
			for _, c := range g.committed {
				n += max(c, 0)
			}
			return float64(n), true
		case "rebalances":
			return float64(g.rebalances), true
		case "reads":
			return float64(g.reads), true
		case "stale_reads":
			return float64(g.stale), true
		}
	}
	return 0, false
}

// foldedFields lists, per metric kind, the component metrics a
// MetricFold re-derives from the trace; the ledger and consumer kinds are
// folds of the ledger. TestMetricFoldEqualsTheModels holds each to the
// models' own counters over every lesson and test file.
var foldedFields = map[string][]string{
	"queue":    {"receives", "acks", "redeliveries", "depth", "dlq", "oldest_age"},
	"topic":    {"published", "delivered", "missed", "dropped"},
	"log":      {"start", "end", "records", "partitions"},
	"group":    {"lag", "committed", "rebalances", "reads", "stale_reads"},
	"outbox":   {"pending", "published", "failed", "dead", "relay_lag"},
	"saga":     scenario.MetricFields["saga"],
	"consumer": scenario.MetricFields["consumer"],
	"ledger":   scenario.MetricFields["ledger"],
}

// Folded reports whether metric m is re-derived from the trace: by the
// ledger (ledger and consumer metrics) or by a MetricFold. The others are
// read from the models' counters and cannot be audited from a trace.
func Folded(m scenario.Metric) bool {
	for _, f := range foldedFields[m.Kind] {
		if f == m.Field {
			return true
		}
	}
	return false
}
