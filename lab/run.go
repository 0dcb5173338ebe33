package lab

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/projection"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/saga"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// ErrRuntime marks the problems the runner itself finds while a file runs
// (an action whose subject it cannot act on, a cap reached at run time);
// the models' refusals keep their own sentinels (a seek past the end wraps
// eventlog.ErrOffsetOutOfRange). Every such problem is reported in the
// positioned *scenario.Errors of Run.Err, at the action that caused it.
var ErrRuntime = errors.New("lab: runtime error")

// Options adjust one run of a loaded scenario.
type Options struct {
	// Seed overrides the file's seed when non-nil (--seed).
	Seed *uint64
	// Sinks are extra trace sinks (text or JSON writers, recorders); they
	// see every event of the run, from the first.
	Sinks []sim.Sink
	// Handlers binds Go handlers to the file's queue consumers (every
	// instance), group members and pub/sub subscribers, by name. A bound
	// handler replaces the file's scripted behaviour for that name (its
	// handler kind, keys, failures, ticks and idempotency); the rest of the
	// file stays in force, the fault plan included: the injector wraps a
	// bound handler as it wraps a scripted one, so handler.* rules fire
	// before it runs. A name the scenario does not have is an error
	// (*BindError) that lists the names it has. A handler keeps its state
	// for the run it is bound to; bind a fresh one to every run.
	Handlers map[string]sim.Handler
	// Record makes the injector record which opportunity every firing
	// was (faults.Config.Record), so that the run's Faults().Fired() can
	// be replayed and turned into an explicit plan. It costs a map update
	// per consultation of a targeted fault point.
	Record bool
	// Replay, when non-nil, makes the injector fire exactly the decisions
	// listed and draw nothing (faults.Config.Replay): a schedule recorded
	// by a run of the same scenario and seed (Record), or a subset of one
	// while shrinking. It implies Record.
	Replay *faults.Schedule

	// budget replaces runBudget (tests that want a smaller one).
	budget *sim.Budget
}

// runBudget is the budget on derived work every run has (see sim.Budget):
// the caps scenario.MaxCopies, MaxDeliveriesPerTick, MaxCascadePerRoot, MaxSends,
// MaxEvents and MaxSteps. A run that exceeds one stops with a runtime error naming
// the cap and the likely cause.
var runBudget = sim.Budget{Messages: scenario.MaxCopies, DeliveriesPerTick: scenario.MaxDeliveriesPerTick, CascadePerRoot: scenario.MaxCascadePerRoot,
	Sends: scenario.MaxSends, Events: scenario.MaxEvents, Steps: scenario.MaxSteps}

// Run is one run of a scenario: the World built from it, the models, the
// actors and the timeline. It is driven by Step (one tick at a time) or
// Finish (to the end), from one goroutine. A Run is deterministic: the same
// scenario and seed give the same trace, byte for byte.
//
// The runner holds no actor logic of its own: every producer, consumer,
// group member, subscriber and relay is a model component (package
// producer, queue, eventlog, pubsub, outbox) built from the file's
// configuration, and the timeline calls the models' own operations.
type Run struct {
	s     *scenario.Scenario
	w     *sim.World
	env   *sim.Env
	inj   *faults.Injector
	seed  uint64
	limit sim.Tick

	over, drained bool
	fold          *MetricFold // the component metrics the expectations read, folded from the trace; nil when they read none
	report        *Report
	summed        bool // the ledger's summary is taken at the end (report.Stats), so its kept counts are up to date
	// judged holds, per expectation, the outcome of one judged at its
	// by: tick (nil until then, and for the others).
	judged []*Outcome
	byTick []int // the indexes of the expectations with a by: tick
	// checked caches Verdict's judgements of the ledger checks (see
	// Run.Verdict).
	checked []checkedJudgement
	errs    []scenario.Error
	narr    int // narration steps traced so far

	queues    []*runQueue
	queueBy   map[string]*runQueue
	broker    *pubsub.Broker
	topics    []*runTopic
	topicBy   map[string]*runTopic
	subBy     map[string]*runSub
	logs      []*runLog
	logBy     map[string]*runLog
	groups    []*runGroup
	groupBy   map[string]*runGroup
	services  []*runService
	serviceBy map[string]*runService
	producers []finisher // producers and commanders, in file order
	consumers []*runConsumer
	consBy    map[string]*runConsumer
	members   []*runMember
	memberBy  map[string]*runMember
	relays    []*runRelay
	relayBy   map[string]*runRelay
	sagaBy    map[string]*saga.Orchestrator
	manual    int // manual faults added at run time
	handlers  map[string]sim.Handler
	// The maps by name above are nil until put adds a first entry: a
	// kind of component the file does not have costs no map.
}

// put adds v under name to *m, making the map on first use.
func put[V any](m *map[string]V, name string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[name] = v
}

// finisher is a producer-phase model that reports when its workload is
// done: a producer.Producer or an outbox.Commander.
type finisher interface {
	Done() bool
}

// runQueue is one queue of the topology.
type runQueue struct {
	cfg   *scenario.Queue
	q     *queue.Queue
	dlq   *runQueue
	isDLQ bool
}

// runTopic is one pub/sub topic: a subject of the run's broker.
type runTopic struct {
	r    *Run
	cfg  *scenario.Topic
	subs []*runSub
}

// Publish publishes m to the topic's subject: it makes the topic a
// sim.Publisher for producers and writers.
func (t *runTopic) Publish(m sim.Message) error { return t.r.broker.PublishTo(t.cfg.Name, m) }

// published returns how many publishes to the topic the broker accepted.
func (t *runTopic) published() int { return t.r.broker.PublishedTo(t.cfg.Name) }

// runSub is one subscriber.
type runSub struct {
	cfg   *scenario.Subscriber
	topic *runTopic
	sub   *pubsub.Subscriber
}

// runLog is one log topic.
type runLog struct {
	cfg *scenario.Log
	t   *eventlog.Log
}

// runGroup is one consumer group.
type runGroup struct {
	cfg   *scenario.Group
	log   *runLog
	g     *eventlog.Group
	dedup map[sim.IdempotencyKey]*sim.DedupTable // the members' shared dedup tables, by key
	proj  *projection.Projection                 // the members' projection, if the group builds one
}

// runService is one service with its writer.
type runService struct {
	cfg    *scenario.Service
	svc    *outbox.Service
	writer *outbox.Writer
	relays []*runRelay
}

// New builds the World of s: every queue, topic, log, group and service,
// every actor, the fault plan (one injector shared by every model) and the
// timeline. Errors that come from the file are positioned (*scenario.Errors).
func New(s *scenario.Scenario, opts Options) (*Run, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil scenario", ErrRuntime)
	}
	seed := s.Seed
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	if err := checkHandlers(s, opts.Handlers); err != nil {
		return nil, err
	}
	limit := s.Run.Cap()
	w, err := sim.New(sim.Config{Seed: seed, MaxTicks: limit})
	if err != nil {
		return nil, runErr(s, s.Run.Pos, err.Error())
	}
	r := &Run{s: s, w: w, env: w.Env(), seed: seed, limit: limit, handlers: opts.Handlers}
	for i := range s.Expect {
		if s.Expect[i].Judged() {
			r.byTick = append(r.byTick, i)
		}
	}
	// The run folds only the component metrics its expectations read;
	// Measure reads every other one from the models, whose counters the
	// fold equals at every tick (TestMetricFoldEqualsTheModels). A seed
	// whose expectations are all checks pays nothing for the fold.
	if scope := scopeOf(s); !scope.empty() {
		r.fold = newMetricFold(s, scope)
		r.env.Trace.Attach(r.fold)
	}
	for _, sk := range opts.Sinks {
		r.env.Trace.Attach(sk)
	}
	plan := s.FaultPlan()
	for i := range plan.Rules {
		if g := s.Faults[i].ConsumerGlob(); g != "" {
			plan.Rules[i].Match.Consumer = g
		}
		plan.Rules[i] = r.translate(plan.Rules[i])
	}
	if r.inj, err = faults.New(w, faults.Config{Plan: plan, Record: opts.Record, Replay: opts.Replay}); err != nil {
		return nil, runErr(s, s.Pos, "fault plan: "+err.Error())
	}
	// Narration steps are traced by the first component of every tick.
	if err := w.AddFunc("scenario/narration", sim.PhaseBroker, r.narrate); err != nil {
		return nil, runErr(s, s.Pos, err.Error())
	}
	// The steps at tick 0 come first in the trace, before the events the
	// models trace as they are built (a group subscribing, a member
	// joining).
	r.narrate(0)
	for _, build := range []func() error{r.buildQueues, r.buildTopics, r.buildLogs, r.buildServices,
		r.buildProducers, r.buildRelays, r.buildConsumers, r.buildSagas, r.buildMembers} {
		if err := build(); err != nil {
			return nil, err
		}
	}
	budget := runBudget
	if opts.budget != nil {
		budget = *opts.budget
	}
	w.SetBudget(budget)
	r.schedule()
	if s.Run.Until == scenario.UntilDrained && r.isDrained() {
		r.over, r.drained = true, true
	}
	return r, nil
}

// runErr returns a positioned *scenario.Errors with one runtime problem.
func runErr(s *scenario.Scenario, p scenario.Pos, msg string) error {
	return scenario.ErrorAt(s.File, p, msg)
}

// fail records a runtime error of the file at p and traces it.
func (r *Run) fail(p scenario.Pos, what string, err error) {
	if !p.IsValid() {
		p = scenario.Pos{Line: 1, Col: 1}
	}
	msg := what + ": " + err.Error()
	r.errs = append(r.errs, scenario.Error{File: r.s.File, Line: p.Line, Col: p.Col, Msg: msg})
	r.env.Emit(sim.Event{Kind: sim.KindRejected, Where: "timeline", Detail: p.String() + ": " + msg})
}

// Err returns the runtime errors so far as *scenario.Errors (wrapping scenario.ErrInvalid),
// or nil. Each is positioned at the action that caused it.
func (r *Run) Err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return scenario.ErrorList(r.s.File, append([]scenario.Error(nil), r.errs...))
}

// translate maps a rule's match from the file's vocabulary to the models'
// trace names: where "service:S" and "relay:R" become the outbox component
// (and R the matched consumer), "group:G" the group's log (and G the
// matched group). (A consumer pattern was widened to the instances of the
// consumers it names by scenario.Load: scenario.Fault.ConsumerGlob.)
func (r *Run) translate(rule faults.Rule) faults.Rule {
	m := &rule.Match
	if kind, name, ok := strings.Cut(m.Where, ":"); ok {
		switch kind {
		case "service":
			m.Where = "outbox:" + name
		case "relay":
			m.Where = "outbox:*"
			if scenario.Literal(name) {
				for i := range r.s.Actors.Relays {
					if x := &r.s.Actors.Relays[i]; x.Name == name {
						m.Where = "outbox:" + x.Service
					}
				}
			}
			if m.Consumer == "" {
				m.Consumer = name
			}
		case "group":
			m.Where = "log:*"
			if scenario.Literal(name) {
				for i := range r.s.Topology.Groups {
					if g := &r.s.Topology.Groups[i]; g.Name == name {
						m.Where = "log:" + g.Log
					}
				}
			}
			if m.Group == "" {
				m.Group = name
			}
		}
	}
	return rule
}

// buildQueues makes every queue, each dead-letter queue before the queues
// that use it; the queues register themselves with the World as they are
// made.
func (r *Run) buildQueues() error {
	qs := r.s.Topology.Queues
	for i := range qs {
		put(&r.queueBy, qs[i].Name, &runQueue{cfg: &qs[i]})
	}
	var build func(rq *runQueue, depth int) error
	build = func(rq *runQueue, depth int) error {
		if rq.q != nil {
			return nil
		}
		if depth > len(qs) {
			return runErr(r.s, rq.cfg.Pos, "dead-letter cycle at queue "+strconv.Quote(rq.cfg.Name))
		}
		c := rq.cfg.Config
		c.Faults = r.inj
		if dl := rq.cfg.DeadLetter; dl != nil {
			d := r.queueBy[dl.Queue]
			if d == nil {
				return runErr(r.s, dl.Pos, "dead-letter queue "+strconv.Quote(dl.Queue)+" is not defined")
			}
			if err := build(d, depth+1); err != nil {
				return err
			}
			d.isDLQ = true
			rq.dlq = d
			c.DeadLetter, c.MaxReceiveCount = d.q, dl.MaxReceiveCount
		}
		q, err := queue.New(r.w, c)
		if err != nil {
			return runErr(r.s, rq.cfg.Pos, err.Error())
		}
		rq.q = q
		return nil
	}
	for i := range qs {
		rq := r.queueBy[qs[i].Name]
		if err := build(rq, 0); err != nil {
			return err
		}
		r.queues = append(r.queues, rq)
	}
	return nil
}

// buildTopics makes the run's pub/sub broker (one for every topic: the
// topics are its subjects), its subscribers and its durable fan-outs, each
// with its topic's fan_out_retry (pubsub.DefaultForwardRetry when none is
// written).
func (r *Run) buildTopics() error {
	ts := r.s.Topology.Topics
	if len(ts) == 0 {
		return nil
	}
	b, err := pubsub.New(r.w, pubsub.Config{Name: "topics", Faults: r.inj, MaxDepth: scenario.MaxTicks})
	if err != nil {
		return runErr(r.s, ts[0].Pos, err.Error())
	}
	r.broker = b
	for i := range ts {
		t := &runTopic{r: r, cfg: &ts[i]}
		r.topics = append(r.topics, t)
		put(&r.topicBy, t.cfg.Name, t)
	}
	for _, t := range r.topics {
		for j := range t.cfg.Subscribers {
			sc := &t.cfg.Subscribers[j]
			sub, err := b.Subscribe(r.subscriberConfig(t, sc))
			if err != nil {
				return runErr(r.s, sc.Pos, err.Error())
			}
			rs := &runSub{cfg: sc, topic: t, sub: sub}
			t.subs = append(t.subs, rs)
			put(&r.subBy, sc.Name, rs)
		}
		for k, qn := range t.cfg.FanOutToQueues {
			rq := r.queueBy[qn]
			if rq == nil {
				return runErr(r.s, t.cfg.FanOutPos(k), "fan-out queue "+strconv.Quote(qn)+" is not defined")
			}
			// One fan-out per (topic, queue): the name is unique even
			// when several topics feed one queue.
			fc := pubsub.FanOutConfig{Name: t.cfg.Name + "->" + qn, Pattern: t.cfg.Name, Target: rq.q}
			if fr := t.cfg.FanOutRetry; fr != nil {
				p := fr.Policy()
				fc.Retry = &p
			}
			if err := b.FanOutWith(fc); err != nil {
				return runErr(r.s, t.cfg.FanOutPos(k), err.Error())
			}
		}
	}
	return nil
}

// subscriberConfig maps subscriber sc of topic t onto the broker's
// subscriber configuration: the handler applies one effect per copy, and
// the emits, source check and supervisor switch are the subscriber's own
// behaviour in the model. An emit's cascade limit is its target topic's.
func (r *Run) subscriberConfig(t *runTopic, sc *scenario.Subscriber) pubsub.SubscriberConfig {
	c := pubsub.SubscriberConfig{Name: sc.Name, Pattern: t.cfg.Name, Buffer: sc.Buffer, Policy: sc.Overflow, Offline: sc.Offline,
		SourceCheck: sc.SourceCheck, Supervisor: sc.Supervisor, Handler: r.bound(sc.Name)}
	for i := range sc.Emits {
		e := &sc.Emits[i]
		em := pubsub.Emit{Subject: e.Topic, Count: e.Count, Type: e.Type}
		if to := r.topicBy[e.Topic]; to != nil {
			em.CascadeLimit = to.cfg.CascadeLimit
		}
		c.Emits = append(c.Emits, em)
	}
	return c
}

// buildLogs makes every log topic and consumer group.
func (r *Run) buildLogs() error {
	for i := range r.s.Topology.Logs {
		lc := &r.s.Topology.Logs[i]
		c := eventlog.Config{Name: lc.Name, Faults: r.inj, Partitions: lc.Partitions, Compact: lc.Compaction}
		if lc.Retention != nil {
			c.RetentionTicks, c.RetentionRecords, c.RetentionBytes = lc.Retention.Ticks, lc.Retention.Records, lc.Retention.Bytes
		}
		t, err := eventlog.New(r.w, c)
		if err != nil {
			return runErr(r.s, lc.Pos, err.Error())
		}
		rl := &runLog{cfg: lc, t: t}
		r.logs = append(r.logs, rl)
		put(&r.logBy, lc.Name, rl)
	}
	for i := range r.s.Topology.Groups {
		gc := &r.s.Topology.Groups[i]
		rl := r.logBy[gc.Log]
		if rl == nil {
			return runErr(r.s, gc.FieldPos("log"), "log "+strconv.Quote(gc.Log)+" is not defined")
		}
		cfg := eventlog.GroupConfig{Name: gc.Name, SessionTimeout: gc.SessionTimeout, Strategy: gc.Assignment, Reset: gc.AutoOffsetReset}
		g, err := eventlog.NewGroup(r.w, rl.t, cfg)
		if err != nil {
			return runErr(r.s, gc.Pos, err.Error())
		}
		rg := &runGroup{cfg: gc, log: rl, g: g}
		if gc.Projection {
			p, err := projection.New(r.w, projection.Config{Name: gc.Name, Versioning: gc.Versioning, Source: projection.LogSource(rl.t)})
			if err != nil {
				return runErr(r.s, gc.Pos, err.Error())
			}
			rg.proj = p
		}
		r.groups = append(r.groups, rg)
		put(&r.groupBy, gc.Name, rg)
	}
	return nil
}

// target returns the publisher of t.
func (r *Run) target(t scenario.Target) (sim.Publisher, error) {
	switch t.Kind {
	case scenario.TargetQueue:
		if q := r.queueBy[t.Name]; q != nil {
			return q.q, nil
		}
	case scenario.TargetTopic:
		if x := r.topicBy[t.Name]; x != nil {
			return x, nil
		}
	case scenario.TargetLog:
		if l := r.logBy[t.Name]; l != nil {
			return l.t, nil
		}
	}
	return nil, runErr(r.s, t.Pos, t.String()+" is not defined")
}

// buildServices makes every service with its writer; a service whose
// relays include a CDC relay keeps a change log, and cleanup is the
// service's own.
func (r *Run) buildServices() error {
	for i := range r.s.Topology.Services {
		sc := &r.s.Topology.Services[i]
		cdc := false
		for _, rl := range r.s.Actors.Relays {
			cdc = cdc || rl.Service == sc.Name && rl.Mode == outbox.CDC
		}
		svc, err := outbox.New(r.w, outbox.Config{Name: sc.Name, ChangeLog: cdc, CleanupAfter: sc.Cleanup})
		if err != nil {
			return runErr(r.s, sc.Pos, err.Error())
		}
		tgt, err := r.target(sc.PublishTo)
		if err != nil {
			return err
		}
		wr, err := outbox.NewWriter(r.w, outbox.WriterConfig{Name: sc.Name, Service: svc, Mode: sc.Writer, Target: tgt, Faults: r.inj})
		if err != nil {
			return runErr(r.s, sc.Pos, err.Error())
		}
		rs := &runService{cfg: sc, svc: svc, writer: wr}
		r.services = append(r.services, rs)
		put(&r.serviceBy, sc.Name, rs)
	}
	return nil
}

// schedule puts every timeline action on the World's timeline.
func (r *Run) schedule() {
	for i := range r.s.Timeline {
		a := &r.s.Timeline[i]
		r.w.At(a.At, actionText(a), func() {
			if err := r.Do(*a); err != nil {
				r.fail(a.Pos, "action "+a.Action, err)
			}
		})
	}
}

// actionText describes a in the trace, e.g. "redrive queue=orders-dlq".
func actionText(a *scenario.Action) string {
	var b strings.Builder
	b.WriteString(a.Action)
	for _, f := range []struct{ k, v string }{{"queue", a.Queue}, {"log", a.Log}, {"group", a.Group}, {"consumer", a.Consumer},
		{"member", a.Member}, {"subscriber", a.Subscriber}, {"relay", a.Relay}, {"fault", a.Fault}} {
		if f.v != "" {
			b.WriteString(" " + f.k + "=" + f.v)
		}
	}
	switch a.Action {
	case scenario.ActionSeek:
		b.WriteString(" to=" + a.To.String())
		switch a.To {
		case eventlog.SeekToOffset:
			b.WriteString(" offset=" + strconv.FormatInt(a.Offset, 10))
		case eventlog.SeekToTick:
			b.WriteString(" tick=" + strconv.FormatInt(int64(a.Tick), 10))
		}
		if a.Partition >= 0 {
			b.WriteString(" partition=" + strconv.Itoa(a.Partition))
		}
	case scenario.ActionAddPartitions, scenario.ActionRedrive:
		if a.Count > 0 {
			b.WriteString(" count=" + strconv.Itoa(a.Count))
		}
	case scenario.ActionRead:
		b.WriteString(" key=" + a.Key + " from=" + a.From)
	}
	return b.String()
}

// errUnknown reports a subject that the run does not know.
func errUnknown(kind, name string) error {
	return fmt.Errorf("%w: %s %q is not defined", ErrRuntime, kind, name)
}

// ActionBrokerDown is an action a player gives by hand and a file cannot
// hold (Load refuses it; a file writes a broker.unavailable fault rule):
// every broker is unavailable from now for Count ticks (BrokerDownWindow
// when Count is 0), by a broker.unavailable fault rule added to the run's
// injector.
const ActionBrokerDown = "broker_down"

// BrokerDownWindow is how many ticks the BrokerDown action keeps every
// broker unavailable.
const BrokerDownWindow sim.Tick = 10

// Do runs action a now, at the current tick, with the models' own
// operations: the timeline runs every action of the file through it at its
// tick, and a player runs the actions a user gives by hand through it too
// (see SeekEarliest, Redrive, Crash and BrokerDown, which build them).
// a.At is not read. A subject left empty, which Load never lets a file do,
// means every group for a seek, every dead-letter queue for a redrive, and
// the first consumer (else the first group member) for a crash. Do traces
// nothing of its own beyond what the models trace; the timeline traces the
// action itself. An action the run cannot carry out is an error wrapping
// ErrRuntime or the model's sentinel (a seek past the end wraps
// eventlog.ErrOffsetOutOfRange), and changes nothing: the timeline records
// it as a positioned runtime error of the file (Err), a player shows it.
// Cost: that of the model operation, O(1) beyond it except for a redrive
// or seek of every queue or group (O(queues) or O(groups)).
func (r *Run) Do(a scenario.Action) error {
	switch a.Action {
	case scenario.ActionConnect, scenario.ActionDisconnect:
		on := a.Action == scenario.ActionConnect
		switch {
		case a.Subscriber != "":
			s := r.subBy[a.Subscriber]
			if s == nil {
				return errUnknown("subscriber", a.Subscriber)
			}
			if on {
				return s.sub.Connect()
			}
			s.sub.Disconnect()
			return nil
		case a.Consumer != "":
			c := r.consBy[a.Consumer]
			if c == nil {
				return errUnknown("consumer", a.Consumer)
			}
			if on {
				c.c.Resume()
			} else {
				c.c.Pause()
			}
			return nil
		case a.Member != "":
			m := r.memberBy[a.Member]
			if m == nil {
				return errUnknown("member", a.Member)
			}
			return m.connect(on)
		}
	case scenario.ActionMute, scenario.ActionUnmute:
		s := r.subBy[a.Subscriber]
		if s == nil {
			return errUnknown("subscriber", a.Subscriber)
		}
		if a.Action == scenario.ActionMute {
			s.sub.Mute()
		} else {
			s.sub.Unmute()
		}
		return nil
	case scenario.ActionSeek:
		if a.Group == "" && a.To == eventlog.SeekToEarliest && a.Partition < 0 {
			return r.seekEarliest()
		}
		g := r.groupBy[a.Group]
		if g == nil {
			return errUnknown("group", a.Group)
		}
		p := a.Partition
		if p < 0 {
			p = eventlog.AllPartitions
		}
		return g.g.Seek(p, a.To, a.Offset, a.Tick)
	case scenario.ActionRedrive:
		_, err := r.redrive(a.Queue, a.Count)
		return err
	case scenario.ActionPurge:
		q := r.queueBy[a.Queue]
		if q == nil {
			return errUnknown("queue", a.Queue)
		}
		q.q.Purge()
		return nil
	case scenario.ActionAddPartitions:
		l := r.logBy[a.Log]
		if l == nil {
			return errUnknown("log", a.Log)
		}
		if n := l.t.Partitions() + a.Count; n > scenario.MaxPartitions {
			return fmt.Errorf("%w: log %q would have %d partitions; the cap is %d", ErrRuntime, a.Log, n, scenario.MaxPartitions)
		}
		return l.t.AddPartitions(a.Count)
	case scenario.ActionFixHandler:
		switch {
		case a.Consumer != "":
			c := r.consBy[a.Consumer]
			if c == nil {
				return errUnknown("consumer", a.Consumer)
			}
			if h := r.bound(a.Consumer); h != nil {
				return fixBound("consumer", a.Consumer, h)
			}
			c.script.Fix()
			return nil
		case a.Member != "":
			m := r.memberBy[a.Member]
			if m == nil {
				return errUnknown("member", a.Member)
			}
			if h := r.bound(a.Member); h != nil {
				return fixBound("member", a.Member, h)
			}
			m.script.Fix()
			return nil
		}
	case scenario.ActionCrash:
		switch {
		case a.Consumer != "":
			return r.crash(a.Consumer)
		case a.Member != "":
			return r.crash(a.Member)
		}
		return r.crash("")
	case ActionBrokerDown:
		window := BrokerDownWindow
		if a.Count != 0 {
			window = sim.Tick(a.Count)
		}
		return r.brokerDown(window)
	case scenario.ActionKillRelay, scenario.ActionStartRelay:
		rl := r.relayBy[a.Relay]
		if rl == nil {
			return errUnknown("relay", a.Relay)
		}
		if a.Action == scenario.ActionKillRelay {
			rl.relay.Kill()
		} else {
			rl.relay.Resume()
		}
		return nil
	case scenario.ActionDisableFault:
		return r.inj.Disable(a.Fault)
	case scenario.ActionRead:
		g := r.groupBy[a.Group]
		if g == nil || g.proj == nil {
			return errUnknown("projection", a.Group)
		}
		if a.From == scenario.ReadFromSource {
			g.proj.ReadSource("reader", a.Key)
		} else {
			g.proj.Read("reader", a.Key)
		}
		return nil
	}
	return fmt.Errorf("%w: action %q has no subject it can act on", ErrRuntime, a.Action)
}

// redrive moves up to count dead letters (0: all) of the dead-letter queue
// name back to their sources; "" redrives every dead-letter queue.
func (r *Run) redrive(name string, count int) (int, error) {
	total := 0
	found := false
	for _, q := range r.queues {
		if name != "" && q.cfg.Name != name {
			continue
		}
		if name == "" && !q.isDLQ {
			continue
		}
		found = true
		n := count
		if n <= 0 {
			n = q.q.Len()
		}
		if n == 0 {
			continue
		}
		moved, err := q.q.Redrive(n)
		total += moved
		if err != nil {
			return total, err
		}
	}
	if !found {
		if name == "" {
			return 0, fmt.Errorf("%w: the scenario has no dead-letter queue", ErrRuntime)
		}
		return 0, errUnknown("queue", name)
	}
	return total, nil
}

// narrate traces the narration steps due by now, each as a narration event
// at "lesson" whose detail is "N/TOTAL text" ("N/TOTAL [pause] text" for a
// pausing step); it is the first component of every tick.
func (r *Run) narrate(now sim.Tick) {
	steps := r.s.Narration
	for r.narr < len(steps) && steps[r.narr].At <= now {
		st := &steps[r.narr]
		r.narr++
		d := strconv.Itoa(r.narr) + "/" + strconv.Itoa(len(steps)) + " "
		if st.Pause {
			d += "[pause] "
		}
		r.env.Emit(sim.Event{Kind: sim.KindNarration, Where: "lesson", Detail: d + st.Text})
	}
}

// World returns the simulated world.
func (r *Run) World() *sim.World { return r.w }

// Env returns the run's environment (clock, trace, ledger).
func (r *Run) Env() *sim.Env { return r.env }

// Scenario returns the scenario being run.
func (r *Run) Scenario() *scenario.Scenario { return r.s }

// Seed returns the seed in force.
func (r *Run) Seed() uint64 { return r.seed }

// Now returns the current tick.
func (r *Run) Now() sim.Tick { return r.w.Now() }

// Faults returns the injector every model of the run shares.
func (r *Run) Faults() *faults.Injector { return r.inj }

// Step runs one tick and reports whether it did; it returns false, running
// nothing, once the run is over: the ticks were reached, the system
// drained (run until drained) or max_ticks was reached.
func (r *Run) Step() bool {
	if r.over {
		return false
	}
	if r.w.Now() >= r.limit {
		r.over = true
		return false
	}
	r.w.Tick()
	if err := r.w.Err(); err != nil {
		r.over = true
		r.fail(r.s.Run.Pos, "the run stopped at t="+strconv.FormatInt(int64(r.w.Now()), 10)+" because it "+budgetWhat(err), errors.New(r.budgetCause()))
		return true
	}
	r.judgeDue()
	if r.w.Now() >= r.limit {
		r.over = true
	}
	if r.s.Run.Until == scenario.UntilDrained && r.isDrained() {
		r.over, r.drained = true, true
	}
	return true
}

// Done reports whether the run is over.
func (r *Run) Done() bool { return r.over }

// Drained reports whether a run until drained stopped because the system
// drained (rather than at max_ticks).
func (r *Run) Drained() bool { return r.drained }

// isDrained reports the until: drained condition, from the models' own
// state: no timeline action to come, every producer and commander done, no
// message resident (visible, delayed or in flight) in a queue that is not a
// dead-letter queue, the pub/sub broker idle, every group at zero lag with
// nothing outstanding and, when it has members, caught up (nothing to read
// again below its committed offset), and no outbox row pending.
func (r *Run) isDrained() bool {
	if r.w.Pending() > 0 {
		return false
	}
	for _, p := range r.producers {
		if !p.Done() {
			return false
		}
	}
	for _, q := range r.queues {
		if !q.isDLQ && q.q.Len() > 0 {
			return false
		}
	}
	if r.broker != nil && !r.broker.Idle() {
		return false
	}
	for _, g := range r.groups {
		if m := g.g.Metrics(); m.Lag > 0 || m.Outstanding > 0 || m.Members > 0 && !g.g.CaughtUp() {
			return false
		}
	}
	for _, s := range r.services {
		if s.svc.Metrics().Pending > 0 {
			return false
		}
	}
	return true
}

// Narration returns the narration step in force at the current tick: its
// 1-based index (0 before the first step), the number of steps and its
// text.
func (r *Run) Narration() (index, total int, text string) {
	steps := r.s.Narration
	now := r.w.Now()
	for i := range steps {
		if steps[i].At > now {
			break
		}
		index, text = i+1, steps[i].Text
	}
	return index, len(steps), text
}

// NextNarration returns the tick of the next narration step after the
// current tick, and false when there is none.
func (r *Run) NextNarration() (sim.Tick, bool) {
	now := r.w.Now()
	for i := range r.s.Narration {
		if at := r.s.Narration[i].At; at > now {
			return at, true
		}
	}
	return 0, false
}

// Finish runs to the end if needed, evaluates every expectation (each
// traced as a "checked" event) and returns the report. Later calls return
// the same report.
//
// The summary is taken before the verdict when the run has not been
// judged yet: it brings the ledger's kept counts up to date, so the
// verdict reads the checkers' counts from them (see checksHold) instead
// of walking every outcome a second time.
func (r *Run) Finish() *Report {
	if r.report == nil {
		for r.Step() {
		}
		st := r.env.Ledger.Stats()
		r.summed = true
		rep := r.verdictOnly()
		rep.Stats = st
		return rep
	}
	if !r.summed {
		r.report.Stats, r.summed = r.env.Ledger.Stats(), true
	}
	return r.report
}

// verdictOnly is Finish without the ledger summary: the report's Stats
// stay zero (until Finish fills them in), which saves a fold of every
// outcome for callers that read only the outcomes and errors, as Probe
// and Shrink do for every seed. The summary is taken on the ledger as the
// run ended; the "checked" events do not change the ledger.
func (r *Run) verdictOnly() *Report {
	if r.report != nil {
		return r.report
	}
	for r.Step() {
	}
	r.report = r.evaluate()
	return r.report
}

// Execute runs s to the end and returns its report. The error is non-nil
// when the run could not be built or an action failed at run time; both
// are positioned (*scenario.Errors). The report is returned whenever the run was
// built.
func Execute(s *scenario.Scenario, opts Options) (*Report, error) {
	r, err := New(s, opts)
	if err != nil {
		return nil, err
	}
	rep := r.Finish()
	return rep, r.Err()
}

// SeekEarliest returns the action that moves group (every group when
// group is "") back to the start of its log, for replays.
func SeekEarliest(group string) scenario.Action {
	return scenario.Action{Action: scenario.ActionSeek, Group: group, To: eventlog.SeekToEarliest, Partition: -1}
}

// Redrive returns the action that moves every dead letter of queue (of
// every dead-letter queue when queue is "") back to its source; the
// queues' Metrics().Redriven count how many moved.
func Redrive(queue string) scenario.Action {
	return scenario.Action{Action: scenario.ActionRedrive, Queue: queue}
}

// Crash returns the action that crashes a queue consumer (every instance)
// or a group member by name; "" picks the first consumer, else the first
// member.
func Crash(name string) scenario.Action {
	return scenario.Action{Action: scenario.ActionCrash, Consumer: name}
}

// BrokerDown returns the action that makes every broker unavailable from
// now for BrokerDownWindow ticks (ActionBrokerDown; set Count for another
// window).
func BrokerDown() scenario.Action { return scenario.Action{Action: ActionBrokerDown} }

// seekEarliest moves every group back to the start of its log.
func (r *Run) seekEarliest() error {
	if len(r.groups) == 0 {
		return fmt.Errorf("%w: the scenario has no consumer group", ErrRuntime)
	}
	for _, g := range r.groups {
		if err := g.g.SeekEarliest(eventlog.AllPartitions); err != nil {
			return err
		}
	}
	return nil
}

// crash crashes a queue consumer (every instance) or a group member now;
// "" picks the first consumer, else the first member.
func (r *Run) crash(name string) error {
	if name == "" {
		switch {
		case len(r.consumers) > 0:
			name = r.consumers[0].cfg.Name
		case len(r.members) > 0:
			name = r.members[0].cfg.Name
		default:
			return fmt.Errorf("%w: the scenario has no consumer", ErrRuntime)
		}
	}
	if c := r.consBy[name]; c != nil {
		c.c.Crash("crashed by hand")
		return nil
	}
	if m := r.memberBy[name]; m != nil {
		if !m.m.Active() {
			return fmt.Errorf("%w: member %q is not active in its group", ErrRuntime, name)
		}
		m.m.Crash("")
		return nil
	}
	return errUnknown("consumer", name)
}

// brokerDown makes every broker unavailable from now for window ticks by
// adding a broker.unavailable fault rule at run time.
func (r *Run) brokerDown(window sim.Tick) error {
	if window < 1 {
		return fmt.Errorf("%w: window %d must be at least 1", ErrRuntime, window)
	}
	r.manual++
	now := r.w.Now()
	_, err := r.inj.Add(faults.Rule{Name: "manual-broker-down-" + strconv.Itoa(r.manual), Point: faults.BrokerUnavailable,
		From: now, Until: now + window, Error: "broker down (by hand)"})
	return err
}

// budgetWhat says which cap of the budget err names.
func budgetWhat(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "budget exceeded: "); i >= 0 {
		msg = msg[i+len("budget exceeded: "):]
	}
	return "exceeded its budget on derived work: " + msg
}

// budgetCause names the likely cause of a run that exceeded its budget,
// from the shapes that can only grow: a loop of topics nothing bounds, a
// broker.duplicate rule that fires on every delivery (duplicating its own
// duplicates), a timeline that redrives again and again.
func (r *Run) budgetCause() string {
	if ws := r.s.Warnings(); len(ws) > 0 {
		return "likely cause: " + ws[0].Msg
	}
	for i := range r.s.Faults {
		f := &r.s.Faults[i]
		if f.Point == faults.BrokerDuplicate && (f.Probability == 0 || f.Probability == 1) && f.Count == 0 {
			return "likely cause: fault " + strconv.Quote(f.Name) + " duplicates every delivery, doubling the work; give it a probability below 1 or a count"
		}
	}
	redrives := 0
	for i := range r.s.Timeline {
		if r.s.Timeline[i].Action == scenario.ActionRedrive {
			redrives++
		}
	}
	if redrives > 1 {
		return "likely cause: the timeline redrives dead letters " + strconv.Itoa(redrives) + " times, and each redrive makes new copies; redrive once, after the fix"
	}
	return "likely cause: handlers, fan-outs, retries or faults derive more work than the caps allow (" + scenario.BudgetCaps() + ")"
}
