package lab

import (
	"fmt"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/projection"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// Measure returns the current value of metric m. Like the verdicts, the
// metrics are folds of the trace: ledger metrics come from Ledger.Stats
// (O(messages x consumers)), consumer metrics from the ledger's deliveries
// to that one consumer (O(messages)), and the component metrics Folded
// names that the scenario's expectations read from the run's MetricFold
// (O(partitions) at most), so 'brokerlab verify --scenario' re-derives
// them from a recorded trace. A Folded component metric no expectation
// reads is not folded during the run, to keep a seed cheap; it is read
// from the models' counters, which equal the fold at every tick
// (TestMetricFoldEqualsTheModels). The others (a queue's visible,
// in-flight and delayed counts, a group's generation) are read from the
// models' counters.
func (r *Run) Measure(m scenario.Metric) (float64, error) {
	if m.Kind == "ledger" {
		if v, ok := m.Ledger(r.env.Ledger.Stats()); ok {
			return v, nil
		}
	}
	if r.fold != nil {
		r.fold.SetNow(r.w.Now())
		if v, ok := r.fold.Value(m); ok {
			return v, nil
		}
	}
	return r.measureModel(m)
}

// measureModel returns metric m from the models' counters (and consumer
// metrics from the ledger).
func (r *Run) measureModel(m scenario.Metric) (float64, error) {
	bad := func() (float64, error) {
		return 0, fmt.Errorf("%w: metric %s cannot be measured", ErrRuntime, m)
	}
	switch m.Kind {
	case "saga":
		if o := r.sagaBy[m.Name]; o != nil {
			if v, ok := sagaValue(o.Metrics(), m.Field); ok {
				return v, nil
			}
		}
		return bad()
	case "queue":
		q := r.queueBy[m.Name]
		if q == nil {
			return bad()
		}
		x := q.q.Metrics()
		switch m.Field {
		case "visible":
			return float64(x.Visible), nil
		case "in_flight":
			return float64(x.InFlight), nil
		case "delayed":
			return float64(x.Delayed), nil
		case "depth":
			return float64(x.Visible + x.InFlight + x.Delayed), nil
		case "dlq":
			if q.dlq == nil {
				return bad()
			}
			return float64(x.DLQDepth), nil
		case "oldest_age":
			return float64(x.OldestAge), nil
		case "receives":
			return float64(x.Receives), nil
		case "acks":
			return float64(x.Acks), nil
		case "redeliveries":
			return float64(x.Redeliveries), nil
		}
	case "topic":
		t := r.topicBy[m.Name]
		if t == nil {
			return bad()
		}
		var sm pubsub.SubscriberMetrics
		for _, s := range t.subs {
			x := s.sub.Metrics()
			sm.Delivered += x.Delivered
			sm.Missed += x.Missed
			sm.Dropped += x.Dropped
		}
		switch m.Field {
		case "published":
			return float64(t.published()), nil
		case "delivered":
			return float64(sm.Delivered), nil
		case "missed":
			return float64(sm.Missed), nil
		case "dropped":
			return float64(sm.Dropped), nil
		}
	case "log":
		l := r.logBy[m.Name]
		if l == nil {
			return bad()
		}
		x := l.t.Metrics()
		var start, end, recs int64
		for _, p := range x.Partitions {
			start += p.LogStart
			end += p.End
			recs += int64(p.Records)
		}
		switch m.Field {
		case "start":
			return float64(start), nil
		case "end":
			return float64(end), nil
		case "records":
			return float64(recs), nil
		case "partitions":
			return float64(len(x.Partitions)), nil
		}
	case "group":
		g := r.groupBy[m.Name]
		if g == nil {
			return bad()
		}
		x := g.g.Metrics()
		switch m.Field {
		case "lag":
			return float64(x.Lag), nil
		case "committed":
			return float64(committedSum(x)), nil
		case "rebalances":
			return float64(x.Rebalances), nil
		case "generation":
			return float64(x.Generation), nil
		case "reads", "stale_reads":
			var pm projection.Metrics // a group without a projection was never read
			if g.proj != nil {
				pm = g.proj.Metrics()
			}
			if m.Field == "reads" {
				return float64(pm.Reads), nil
			}
			return float64(pm.StaleReads), nil
		}
	case "consumer":
		if v, ok := consumerMetric(r.env.Ledger, r.s.LedgerConsumer(m.Name), m.Field); ok {
			return v, nil
		}
	case "outbox":
		s := r.serviceBy[m.Name]
		if s == nil {
			return bad()
		}
		x := s.svc.Metrics()
		switch m.Field {
		case "pending":
			return float64(x.Pending), nil
		case "published":
			return float64(x.Published), nil
		case "failed":
			return float64(x.Failed), nil
		case "dead":
			return float64(x.DeadLetters), nil
		case "relay_lag":
			return float64(x.MaxLag), nil
		}
	}
	return bad()
}

// consumerMetric returns field of the ledger consumer called name, folded
// per origin: its deliveries, repeated deliveries, applied effects,
// repeated effects, absorbed duplicates, origins missed by design, lost and
// still pending. A consumer the ledger has never heard of has zeros. It
// costs O(messages).
func consumerMetric(l *sim.Ledger, name, field string) (float64, bool) {
	switch field {
	case "delivered", "duplicates", "applied", "duplicate_effects", "absorbed", "missed", "lost", "pending":
	default:
		return 0, false
	}
	if l.Consumer(name) == sim.NoConsumer {
		return 0, true
	}
	n := 0
	for _, o := range l.Outcomes(name) {
		switch field {
		case "delivered":
			n += o.Deliveries
		case "duplicates":
			n += max(o.Deliveries-1, 0)
		case "applied":
			n += o.Effects
		case "duplicate_effects":
			n += max(o.Effects-1, 0)
		case "absorbed":
			n += o.Skipped
		case "missed":
			if o.Verdict == sim.VerdictMissed {
				n++
			}
		case "lost":
			if o.Verdict == sim.VerdictLost {
				n++
			}
		case "pending":
			if o.Verdict == sim.VerdictPending {
				n++
			}
		}
	}
	return float64(n), true
}

// committedSum is the sum of a group's committed offsets over its
// partitions (a partition without a commit counts 0).
func committedSum(x eventlog.GroupMetrics) int64 {
	var n int64
	for _, p := range x.Partitions {
		if p.Committed > 0 {
			n += p.Committed
		}
	}
	return n
}

// QueueInfo is one queue of a run, for players.
type QueueInfo struct {
	Name string
	// Queue is the live model; read it only between ticks.
	Queue *queue.Queue
	// DLQ is the dead-letter queue's name, "" without one.
	DLQ string
	// IsDLQ is set when the queue is some queue's dead-letter queue.
	IsDLQ bool
}

// Queues returns the run's queues in file order.
func (r *Run) Queues() []QueueInfo {
	out := make([]QueueInfo, len(r.queues))
	for i, q := range r.queues {
		out[i] = QueueInfo{Name: q.cfg.Name, Queue: q.q, IsDLQ: q.isDLQ}
		if q.dlq != nil {
			out[i].DLQ = q.dlq.cfg.Name
		}
	}
	return out
}

// TopicInfo is one pub/sub topic of a run, for players.
type TopicInfo struct {
	Name        string
	Published   int
	Subscribers []*pubsub.Subscriber
}

// Topics returns the run's topics in file order.
func (r *Run) Topics() []TopicInfo {
	out := make([]TopicInfo, len(r.topics))
	for i, t := range r.topics {
		out[i] = TopicInfo{Name: t.cfg.Name, Published: t.published()}
		for _, s := range t.subs {
			out[i].Subscribers = append(out[i].Subscribers, s.sub)
		}
	}
	return out
}

// Logs returns the run's log topics in file order; their groups are
// Topic.Groups.
func (r *Run) Logs() []*eventlog.Log {
	out := make([]*eventlog.Log, len(r.logs))
	for i, l := range r.logs {
		out[i] = l.t
	}
	return out
}

// RelayInfo is one outbox relay of a run.
type RelayInfo struct {
	Name string
	// Down is set while the relay is crashed or killed.
	Down bool
}

// ServiceInfo is one service of a run, for players.
type ServiceInfo struct {
	Name    string
	Service *outbox.Service
	Relays  []RelayInfo
}

// Services returns the run's services in file order.
func (r *Run) Services() []ServiceInfo {
	out := make([]ServiceInfo, len(r.services))
	for i, s := range r.services {
		out[i] = ServiceInfo{Name: s.cfg.Name, Service: s.svc}
		for _, rl := range s.relays {
			out[i].Relays = append(out[i].Relays, RelayInfo{Name: rl.cfg.Name, Down: rl.relay.Down()})
		}
	}
	return out
}

// Published returns how many messages the brokers accepted so far: queue
// sends, topic publishes and log appends.
func (r *Run) Published() int {
	n := 0
	for _, q := range r.queues {
		n += q.q.Metrics().Sent
	}
	for _, t := range r.topics {
		n += t.published()
	}
	for _, l := range r.logs {
		n += int(l.t.Metrics().Produced)
	}
	return n
}
