package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// ErrRuntime marks the problems the runner itself finds while a file runs
// (an action whose subject it cannot act on, a cap reached at run time);
// the models' refusals keep their own sentinels (a seek past the end wraps
// eventlog.ErrOffsetOutOfRange). Every such problem is reported in the
// positioned *Errors of Run.Err, at the action that caused it.
var ErrRuntime = errors.New("scenario: runtime error")

// Options adjust one run of a loaded scenario.
type Options struct {
	// Seed overrides the file's seed when non-nil (--seed).
	Seed *uint64
	// Sinks are extra trace sinks (text or JSON writers, recorders); they
	// see every event of the run, from the first.
	Sinks []sim.Sink
}

// Run is one run of a scenario: the World built from it, the models, the
// actors and the timeline. It is driven by Step (one tick at a time) or
// Finish (to the end), from one goroutine. A Run is deterministic: the same
// scenario and seed give the same trace, byte for byte.
type Run struct {
	s     *Scenario
	w     *sim.World
	env   *sim.Env
	inj   *faults.Injector
	seed  uint64
	limit sim.Tick

	over, drained bool
	report        *Report
	errs          []Error
	narr          int // narration steps traced so far
	published     int // publishes accepted by topics (producers and emits)

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
	producers []*runProducer
	consumers []*runConsumer
	consBy    map[string]*runConsumer
	members   []*runMember
	memberBy  map[string]*runMember
	relays    []*runRelay
	relayBy   map[string]*runRelay
	manual    int // manual faults added at run time
}

// runQueue is one queue of the topology.
type runQueue struct {
	cfg   *Queue
	q     *queue.Queue
	dlq   *runQueue
	isDLQ bool
}

// runTopic is one pub/sub topic: a subject of the run's broker.
type runTopic struct {
	r         *Run
	cfg       *Topic
	subs      []*runSub
	published int
}

// Publish publishes m to the topic as a root event.
func (t *runTopic) Publish(m sim.Message) error {
	if err := t.r.broker.PublishTo(t.cfg.Name, m); err != nil {
		return err
	}
	t.published++
	return nil
}

// runSub is one subscriber.
type runSub struct {
	r     *Run
	cfg   *Subscriber
	topic *runTopic
	sub   *pubsub.Subscriber
	muted bool
}

// handle is the subscriber's handler: while muted (the timeline's mute)
// and, with source_check, for its own messages it ignores what it gets;
// otherwise it publishes its emits, with the broker's supervisor switch on
// for a supervisor subscriber.
func (s *runSub) handle(ctx *pubsub.Context, m sim.Message) error {
	if s.muted {
		ctx.Note("muted: ignored")
		return nil
	}
	if s.cfg.SourceCheck && m.Headers.Source == s.cfg.Name {
		ctx.Note("own change ignored (source check)")
		return nil
	}
	if s.cfg.Supervisor {
		_ = ctx.Muted(func() error { s.emit(ctx, m); return nil })
		return nil
	}
	s.emit(ctx, m)
	return nil
}

// emit publishes the subscriber's emits for m.
func (s *runSub) emit(ctx *pubsub.Context, m sim.Message) {
	for i := range s.cfg.Emits {
		e := &s.cfg.Emits[i]
		t := s.r.topicBy[e.Topic]
		if t == nil {
			continue // Load checked every emit's topic
		}
		depth := ctx.Depth() + 1
		for n := 0; n < e.Count; n++ {
			if t.cfg.CascadeLimit > 0 && depth > t.cfg.CascadeLimit {
				s.r.env.Emit(sim.Event{Kind: pubsub.KindCascadeLimited, Where: "topic:" + e.Topic, Actor: s.cfg.Name, Msg: m.ID, Key: m.Key,
					Detail: "depth " + strconv.Itoa(depth) + " > cascade_limit " + strconv.Itoa(t.cfg.CascadeLimit)})
				break
			}
			typ := e.Type
			if typ == "" {
				typ = m.Headers.Type
			}
			if _, err := ctx.PublishHeaders(e.Topic, m.Key, m.Body, sim.Headers{Type: typ}); err == nil {
				t.published++
			}
		}
	}
}

// runLog is one log topic.
type runLog struct {
	cfg *Log
	t   *eventlog.Topic
}

// runGroup is one consumer group.
type runGroup struct {
	cfg *Group
	log *runLog
	g   *eventlog.Group
}

// runService is one service with its writer.
type runService struct {
	cfg    *Service
	svc    *outbox.Service
	writer *outbox.Writer
	relays []*runRelay
}

// NewRun builds the World of s: every queue, topic, log, group and service,
// every actor, the fault plan (one injector shared by every model) and the
// timeline. Errors that come from the file are positioned (*Errors).
func (s *Scenario) NewRun(opts Options) (*Run, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil scenario", ErrRuntime)
	}
	seed := s.Seed
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	limit := s.Run.Cap()
	w, err := sim.New(sim.Config{Seed: seed, MaxTicks: limit})
	if err != nil {
		return nil, s.runErr(s.Run.Pos, err.Error())
	}
	r := &Run{s: s, w: w, env: w.Env(), seed: seed, limit: limit,
		queueBy: map[string]*runQueue{}, topicBy: map[string]*runTopic{}, subBy: map[string]*runSub{},
		logBy: map[string]*runLog{}, groupBy: map[string]*runGroup{}, serviceBy: map[string]*runService{},
		consBy: map[string]*runConsumer{}, memberBy: map[string]*runMember{}, relayBy: map[string]*runRelay{}}
	for _, sk := range opts.Sinks {
		r.env.Trace.Attach(sk)
	}
	plan := s.FaultPlan()
	for i := range plan.Rules {
		if g := s.Faults[i].consumerGlob; g != "" {
			plan.Rules[i].Match.Consumer = g
		}
		plan.Rules[i] = r.translate(plan.Rules[i])
	}
	if r.inj, err = faults.New(faults.Config{Plan: plan, Env: r.env}); err != nil {
		return nil, s.runErr(s.Pos, "fault plan: "+err.Error())
	}
	// Narration steps are traced by the first component of every tick.
	if err := w.Add(sim.PhaseBroker, "scenario/narration", sim.ActorFunc(r.narrate)); err != nil {
		return nil, s.runErr(s.Pos, err.Error())
	}
	for _, build := range []func() error{r.buildQueues, r.buildTopics, r.buildLogs, r.buildServices,
		r.buildProducers, r.buildRelays, r.buildConsumers, r.buildMembers} {
		if err := build(); err != nil {
			return nil, err
		}
	}
	r.schedule()
	r.narrate(0)
	if s.Run.Until == UntilDrained && r.isDrained() {
		r.over, r.drained = true, true
	}
	return r, nil
}

// runErr returns a positioned *Errors with one runtime problem.
func (s *Scenario) runErr(p Pos, msg string) error {
	c := collector{file: s.File}
	c.add(p, msg)
	return c.result()
}

// fail records a runtime error of the file at p and traces it.
func (r *Run) fail(p Pos, what string, err error) {
	if !p.IsValid() {
		p = Pos{1, 1}
	}
	msg := what + ": " + err.Error()
	r.errs = append(r.errs, Error{File: r.s.File, Line: p.Line, Col: p.Col, Msg: msg})
	r.env.Emit(sim.Event{Kind: sim.KindRejected, Where: "timeline", Detail: p.String() + ": " + msg})
}

// Err returns the runtime errors so far as *Errors (wrapping ErrInvalid),
// or nil. Each is positioned at the action that caused it.
func (r *Run) Err() error {
	if len(r.errs) == 0 {
		return nil
	}
	c := collector{file: r.s.File, list: append([]Error(nil), r.errs...)}
	return c.result()
}

// instanceName is the name of instance i (from 1) of a consumer with n
// instances: the consumer's own name when it runs alone, NAME#i otherwise.
func instanceName(name string, i, n int) string {
	if n == 1 {
		return name
	}
	return name + "#" + strconv.Itoa(i)
}

// translate maps a rule's match from the file's vocabulary to the models'
// trace names: where "service:S" and "relay:R" become the outbox component
// (and R the matched consumer), "group:G" the group's log (and G the
// matched group). (A consumer pattern was widened to the instances of the
// consumers it names by Load: Fault.consumerGlob.)
func (r *Run) translate(rule faults.Rule) faults.Rule {
	m := &rule.Match
	if kind, name, ok := strings.Cut(m.Where, ":"); ok {
		switch kind {
		case "service":
			m.Where = "outbox:" + name
		case "relay":
			m.Where = "outbox:*"
			if literal(name) {
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
			if literal(name) {
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

func (r *Run) buildQueues() error {
	qs := r.s.Topology.Queues
	for i := range qs {
		r.queueBy[qs[i].Name] = &runQueue{cfg: &qs[i]}
	}
	var build func(rq *runQueue, depth int) error
	build = func(rq *runQueue, depth int) error {
		if rq.q != nil {
			return nil
		}
		if depth > len(qs) {
			return r.s.runErr(rq.cfg.Pos, "dead-letter cycle at queue "+strconv.Quote(rq.cfg.Name))
		}
		c := queue.Config{Name: rq.cfg.Name, Env: r.env, Faults: r.inj, VisibilityTimeout: rq.cfg.VisibilityTimeout,
			Retention: rq.cfg.Retention, FIFO: rq.cfg.FIFO, DedupWindow: rq.cfg.DedupWindow}
		if dl := rq.cfg.DeadLetter; dl != nil {
			d := r.queueBy[dl.Queue]
			if d == nil {
				return r.s.runErr(dl.Pos, "dead-letter queue "+strconv.Quote(dl.Queue)+" is not defined")
			}
			if err := build(d, depth+1); err != nil {
				return err
			}
			d.isDLQ = true
			rq.dlq = d
			c.DeadLetter, c.MaxReceiveCount = d.q, dl.MaxReceiveCount
		}
		q, err := queue.New(c)
		if err != nil {
			return r.s.runErr(rq.cfg.Pos, err.Error())
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
	for _, rq := range r.queues {
		if err := r.w.Add(sim.PhaseBroker, rq.q.Where(), rq.q); err != nil {
			return r.s.runErr(rq.cfg.Pos, err.Error())
		}
	}
	return nil
}

func (r *Run) buildTopics() error {
	ts := r.s.Topology.Topics
	if len(ts) == 0 {
		return nil
	}
	b, err := pubsub.New(pubsub.Config{Name: "topics", Env: r.env, Faults: r.inj, MaxDepth: MaxTicks})
	if err != nil {
		return r.s.runErr(ts[0].Pos, err.Error())
	}
	r.broker = b
	for i := range ts {
		t := &runTopic{r: r, cfg: &ts[i]}
		r.topics = append(r.topics, t)
		r.topicBy[t.cfg.Name] = t
	}
	for _, t := range r.topics {
		for j := range t.cfg.Subscribers {
			sc := &t.cfg.Subscribers[j]
			pol := pubsub.DropNewest
			switch sc.Overflow {
			case DropOldest:
				pol = pubsub.DropOldest
			case Block:
				pol = pubsub.Block
			}
			rs := &runSub{r: r, cfg: sc, topic: t}
			sub, err := b.Subscribe(pubsub.SubscriberConfig{Name: sc.Name, Pattern: t.cfg.Name, Buffer: sc.Buffer,
				Policy: pol, Handler: rs.handle, Offline: sc.Offline})
			if err != nil {
				return r.s.runErr(sc.Pos, err.Error())
			}
			rs.sub = sub
			t.subs = append(t.subs, rs)
			r.subBy[sc.Name] = rs
		}
		for k, qn := range t.cfg.FanOutToQueues {
			rq := r.queueBy[qn]
			if rq == nil {
				return r.s.runErr(t.cfg.fanOutPos[k], "fan-out queue "+strconv.Quote(qn)+" is not defined")
			}
			if err := b.FanOut(rq.q.Config().Consumer, t.cfg.Name, rq.q); err != nil {
				return r.s.runErr(t.cfg.Pos, err.Error())
			}
		}
	}
	if err := b.Attach(r.w); err != nil {
		return r.s.runErr(ts[0].Pos, err.Error())
	}
	return nil
}

func (r *Run) buildLogs() error {
	for i := range r.s.Topology.Logs {
		lc := &r.s.Topology.Logs[i]
		c := eventlog.Config{Name: lc.Name, Env: r.env, Faults: r.inj, Partitions: lc.Partitions, Compact: lc.Compaction}
		if lc.Retention != nil {
			c.RetentionTicks, c.RetentionRecords = lc.Retention.Ticks, lc.Retention.Records
		}
		t, err := eventlog.New(c)
		if err != nil {
			return r.s.runErr(lc.Pos, err.Error())
		}
		rl := &runLog{cfg: lc, t: t}
		r.logs = append(r.logs, rl)
		r.logBy[lc.Name] = rl
		if err := r.w.Add(sim.PhaseBroker, "log:"+lc.Name, t); err != nil {
			return r.s.runErr(lc.Pos, err.Error())
		}
	}
	for i := range r.s.Topology.Groups {
		gc := &r.s.Topology.Groups[i]
		rl := r.logBy[gc.Log]
		if rl == nil {
			return r.s.runErr(gc.FieldPos("log"), "log "+strconv.Quote(gc.Log)+" is not defined")
		}
		cfg := eventlog.GroupConfig{Name: gc.Name, SessionTimeout: gc.SessionTimeout}
		switch gc.Assignment {
		case "round_robin":
			cfg.Strategy = eventlog.RoundRobin
		case "sticky":
			cfg.Strategy = eventlog.Sticky
		}
		switch gc.AutoOffsetReset {
		case "latest":
			cfg.Reset = eventlog.ResetLatest
		case "none":
			cfg.Reset = eventlog.ResetNone
		}
		g, err := rl.t.NewGroup(cfg)
		if err != nil {
			return r.s.runErr(gc.Pos, err.Error())
		}
		rg := &runGroup{cfg: gc, log: rl, g: g}
		r.groups = append(r.groups, rg)
		r.groupBy[gc.Name] = rg
	}
	return nil
}

// target returns the publisher of t.
func (r *Run) target(t Target) (sim.Publisher, error) {
	switch t.Kind {
	case TargetQueue:
		if q := r.queueBy[t.Name]; q != nil {
			return q.q, nil
		}
	case TargetTopic:
		if x := r.topicBy[t.Name]; x != nil {
			return x, nil
		}
	case TargetLog:
		if l := r.logBy[t.Name]; l != nil {
			return l.t, nil
		}
	}
	return nil, r.s.runErr(t.Pos, t.String()+" is not defined")
}

func (r *Run) buildServices() error {
	for i := range r.s.Topology.Services {
		sc := &r.s.Topology.Services[i]
		cdc := false
		for _, rl := range r.s.Actors.Relays {
			cdc = cdc || rl.Service == sc.Name && rl.Mode == "cdc"
		}
		svc, err := outbox.New(outbox.Config{Name: sc.Name, Env: r.env, ChangeLog: cdc})
		if err != nil {
			return r.s.runErr(sc.Pos, err.Error())
		}
		tgt, err := r.target(sc.PublishTo)
		if err != nil {
			return err
		}
		mode := outbox.Outbox
		switch sc.Writer {
		case WriterCommitThenPublish:
			mode = outbox.CommitThenPublish
		case WriterPublishThenCommit:
			mode = outbox.PublishThenCommit
		}
		wr, err := outbox.NewWriter(outbox.WriterConfig{Name: sc.Name, Service: svc, Mode: mode, Target: tgt, Faults: r.inj})
		if err != nil {
			return r.s.runErr(sc.Pos, err.Error())
		}
		rs := &runService{cfg: sc, svc: svc, writer: wr}
		r.services = append(r.services, rs)
		r.serviceBy[sc.Name] = rs
		if k := sc.Cleanup; k > 0 {
			// Processed rows are deleted k ticks after they were marked sent,
			// whichever relay marked them; O(rows removed) per tick.
			if err := r.w.Add(sim.PhaseObserver, "outbox:"+sc.Name+"/cleanup", sim.ActorFunc(func(sim.Tick) { _, _ = svc.Cleanup(k, 0) })); err != nil {
				return r.s.runErr(sc.Pos, err.Error())
			}
		}
	}
	return nil
}

func (r *Run) buildProducers() error {
	for i := range r.s.Actors.Producers {
		pc := &r.s.Actors.Producers[i]
		p := &runProducer{r: r, cfg: pc, stream: r.env.Stream("producer/" + pc.Name)}
		if pc.To.Kind == TargetService {
			p.svc = r.serviceBy[pc.To.Name]
			if p.svc == nil {
				return r.s.runErr(pc.To.Pos, pc.To.String()+" is not defined")
			}
		} else {
			tgt, err := r.target(pc.To)
			if err != nil {
				return err
			}
			p.target = tgt
		}
		r.producers = append(r.producers, p)
		if err := r.w.Add(sim.PhaseProducer, "producer:"+pc.Name, p); err != nil {
			return r.s.runErr(pc.Pos, err.Error())
		}
	}
	return nil
}

func (r *Run) buildRelays() error {
	for i := range r.s.Actors.Relays {
		rc := &r.s.Actors.Relays[i]
		rs := r.serviceBy[rc.Service]
		if rs == nil {
			return r.s.runErr(rc.FieldPos("service"), "service "+strconv.Quote(rc.Service)+" is not defined")
		}
		tgt, err := r.target(rs.cfg.PublishTo)
		if err != nil {
			return err
		}
		rr := &runRelay{cfg: rc, svc: rs}
		if rc.Mode == "cdc" {
			rr.cdc, err = outbox.NewCDCRelay(outbox.CDCConfig{Name: rc.Name, Service: rs.svc, Target: tgt, Faults: r.inj, MaxPerStep: rc.Batch})
		} else {
			ord := outbox.InOrder
			if rc.Order == "per_aggregate" {
				ord = outbox.PerAggregate
			}
			rr.poll, err = outbox.NewRelay(outbox.RelayConfig{Name: rc.Name, Service: rs.svc, Target: tgt, Faults: r.inj,
				Batch: rc.Batch, PollEvery: rc.Interval, Lease: rc.Lease, MaxAttempts: rs.cfg.MaxAttempts, Backoff: rc.Backoff, Ordering: ord})
		}
		if err != nil {
			return r.s.runErr(rc.Pos, err.Error())
		}
		rs.relays = append(rs.relays, rr)
		r.relays = append(r.relays, rr)
		r.relayBy[rc.Name] = rr
		if err := r.w.Add(sim.PhaseRelay, "relay:"+rc.Name, rr); err != nil {
			return r.s.runErr(rc.Pos, err.Error())
		}
	}
	return nil
}

func (r *Run) buildConsumers() error {
	for i := range r.s.Actors.Consumers {
		cc := &r.s.Actors.Consumers[i]
		rq := r.queueBy[cc.Queue]
		if rq == nil {
			return r.s.runErr(cc.FieldPos("queue"), "queue "+strconv.Quote(cc.Queue)+" is not defined")
		}
		rc := &runConsumer{cfg: cc, q: rq, h: newHandler(r, &cc.Handler)}
		cfg := queue.ConsumerConfig{Queue: rq.q, Batch: cc.Batch, Handler: queue.OutcomeFunc(rc.h.queueOutcome), Faults: r.inj}
		if cc.Ack == "before" {
			cfg.AckMode = queue.AckBeforeProcess
		}
		rt := cc.Retry
		switch rt.Policy {
		case "fixed":
			cfg.Retry = queue.FixedRetry(rt.Base)
		case "exponential":
			j := 0.0
			if rt.Jitter {
				j = 0.5
			}
			cfg.Retry = queue.ExponentialRetry(rt.Base, rt.Cap, j)
		}
		if cc.Idempotency != "" && cc.Idempotency != "none" {
			rc.seen = map[string]bool{}
			byKey := cc.Idempotency == "business_key"
			cfg.Dedup = func(m sim.Message) bool { return rc.dedup(m, byKey) }
		}
		for k := 1; k <= cc.Instances; k++ {
			cfg.Name = instanceName(cc.Name, k, cc.Instances)
			c, err := queue.NewConsumer(cfg)
			if err != nil {
				return r.s.runErr(cc.Pos, err.Error())
			}
			rc.inst = append(rc.inst, c)
			if err := r.w.Add(sim.PhaseConsumer, "consumer:"+cfg.Name, &instance{rc: rc, c: c}); err != nil {
				return r.s.runErr(cc.Pos, err.Error())
			}
		}
		r.consumers = append(r.consumers, rc)
		r.consBy[cc.Name] = rc
	}
	return nil
}

func (r *Run) buildMembers() error {
	for i := range r.s.Actors.Members {
		mc := &r.s.Actors.Members[i]
		rg := r.groupBy[mc.Group]
		if rg == nil {
			return r.s.runErr(mc.FieldPos("group"), "group "+strconv.Quote(mc.Group)+" is not defined")
		}
		rm := &runMember{r: r, cfg: mc, group: rg, h: newHandler(r, &mc.Handler)}
		if mc.Idempotency != "" && mc.Idempotency != "none" {
			rm.seen = map[string]bool{}
		}
		mode := eventlog.CommitAfter
		switch mc.Commit {
		case "before":
			mode = eventlog.CommitBefore
		case "auto":
			mode = eventlog.CommitAuto
		case "off_by_one":
			mode = eventlog.CommitOffByOne
		}
		rm.mcfg = eventlog.MemberConfig{Name: mc.Name, Handler: rm.handle, Commit: mode,
			AutoCommitEvery: rg.cfg.AutoCommitInterval, Batch: mc.Batch}
		if err := rm.mcfg.Validate(); err != nil {
			return r.s.runErr(mc.Pos, err.Error())
		}
		r.members = append(r.members, rm)
		r.memberBy[mc.Name] = rm
		if err := r.w.Add(sim.PhaseConsumer, "member:"+mc.Name, rm); err != nil {
			return r.s.runErr(mc.Pos, err.Error())
		}
	}
	return nil
}

// schedule puts every timeline action on the World's timeline.
func (r *Run) schedule() {
	for i := range r.s.Timeline {
		a := &r.s.Timeline[i]
		r.w.At(a.At, actionText(a), func() {
			if err := r.do(a); err != nil {
				r.fail(a.Pos, "action "+a.Action, err)
			}
		})
	}
}

// actionText describes a in the trace, e.g. "redrive queue=orders-dlq".
func actionText(a *Action) string {
	var b strings.Builder
	b.WriteString(a.Action)
	for _, f := range []struct{ k, v string }{{"queue", a.Queue}, {"log", a.Log}, {"group", a.Group}, {"consumer", a.Consumer},
		{"member", a.Member}, {"subscriber", a.Subscriber}, {"relay", a.Relay}, {"fault", a.Fault}} {
		if f.v != "" {
			b.WriteString(" " + f.k + "=" + f.v)
		}
	}
	switch a.Action {
	case ActionSeek:
		b.WriteString(" to=" + a.To)
		switch a.To {
		case "offset":
			b.WriteString(" offset=" + strconv.FormatInt(a.Offset, 10))
		case "tick":
			b.WriteString(" tick=" + strconv.FormatInt(int64(a.Tick), 10))
		}
		if a.Partition >= 0 {
			b.WriteString(" partition=" + strconv.Itoa(a.Partition))
		}
	case ActionAddPartitions, ActionRedrive:
		if a.Count > 0 {
			b.WriteString(" count=" + strconv.Itoa(a.Count))
		}
	}
	return b.String()
}

// errUnknown reports a subject that the run does not know.
func errUnknown(kind, name string) error {
	return fmt.Errorf("%w: %s %q is not defined", ErrRuntime, kind, name)
}

// do runs one timeline action.
func (r *Run) do(a *Action) error {
	switch a.Action {
	case ActionConnect, ActionDisconnect:
		on := a.Action == ActionConnect
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
			c.offline = !on
			return nil
		case a.Member != "":
			m := r.memberBy[a.Member]
			if m == nil {
				return errUnknown("member", a.Member)
			}
			return m.connect(on)
		}
	case ActionMute, ActionUnmute:
		s := r.subBy[a.Subscriber]
		if s == nil {
			return errUnknown("subscriber", a.Subscriber)
		}
		s.muted = a.Action == ActionMute
		return nil
	case ActionSeek:
		g := r.groupBy[a.Group]
		if g == nil {
			return errUnknown("group", a.Group)
		}
		p := a.Partition
		if p < 0 {
			p = eventlog.AllPartitions
		}
		switch a.To {
		case "earliest":
			return g.g.SeekEarliest(p)
		case "latest":
			return g.g.SeekLatest(p)
		case "offset":
			return g.g.SeekOffset(p, a.Offset)
		case "tick":
			return g.g.SeekTick(p, a.Tick)
		}
		return fmt.Errorf("%w: unknown seek target %q", ErrRuntime, a.To)
	case ActionRedrive:
		_, err := r.redrive(a.Queue, a.Count)
		return err
	case ActionPurge:
		q := r.queueBy[a.Queue]
		if q == nil {
			return errUnknown("queue", a.Queue)
		}
		q.q.Purge()
		return nil
	case ActionAddPartitions:
		l := r.logBy[a.Log]
		if l == nil {
			return errUnknown("log", a.Log)
		}
		if n := l.t.Partitions() + a.Count; n > MaxPartitions {
			return fmt.Errorf("%w: log %q would have %d partitions; the cap is %d", ErrRuntime, a.Log, n, MaxPartitions)
		}
		return l.t.AddPartitions(a.Count)
	case ActionFixHandler:
		switch {
		case a.Consumer != "":
			c := r.consBy[a.Consumer]
			if c == nil {
				return errUnknown("consumer", a.Consumer)
			}
			c.h.fixed = true
			return nil
		case a.Member != "":
			m := r.memberBy[a.Member]
			if m == nil {
				return errUnknown("member", a.Member)
			}
			m.h.fixed = true
			return nil
		}
	case ActionCrash:
		switch {
		case a.Consumer != "":
			return r.CrashConsumer(a.Consumer)
		case a.Member != "":
			return r.CrashConsumer(a.Member)
		}
	case ActionKillRelay, ActionStartRelay:
		rl := r.relayBy[a.Relay]
		if rl == nil {
			return errUnknown("relay", a.Relay)
		}
		rl.killed = a.Action == ActionKillRelay
		return nil
	case ActionDisableFault:
		return r.inj.Disable(a.Fault)
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
func (r *Run) Scenario() *Scenario { return r.s }

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
	if r.w.Now() >= r.limit {
		r.over = true
	}
	if r.s.Run.Until == UntilDrained && r.isDrained() {
		r.over, r.drained = true, true
	}
	return true
}

// Done reports whether the run is over.
func (r *Run) Done() bool { return r.over }

// Drained reports whether a run until drained stopped because the system
// drained (rather than at max_ticks).
func (r *Run) Drained() bool { return r.drained }

// isDrained reports the until: drained condition: every producer done, no
// timeline action to come, no message visible, delayed or in flight in a
// queue that is not a dead-letter queue, no copy buffered or held by the
// pub/sub broker, every group at zero lag and no outbox row pending.
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
	if r.broker != nil {
		if m := r.broker.Metrics(); m.Buffered > 0 || m.InFlight > 0 {
			return false
		}
	}
	for _, g := range r.groups {
		if g.g.Metrics().Lag > 0 {
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
func (r *Run) Finish() *Report {
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
// are positioned (*Errors). The report is returned whenever the run was
// built.
func Execute(s *Scenario, opts Options) (*Report, error) {
	r, err := s.NewRun(opts)
	if err != nil {
		return nil, err
	}
	rep := r.Finish()
	return rep, r.Err()
}

// SeekEarliest moves group name (every group when name is "") back to the
// start of its log, for replays.
func (r *Run) SeekEarliest(name string) error {
	if len(r.groups) == 0 {
		return fmt.Errorf("%w: the scenario has no consumer group", ErrRuntime)
	}
	for _, g := range r.groups {
		if name == "" || g.cfg.Name == name {
			if err := g.g.SeekEarliest(eventlog.AllPartitions); err != nil {
				return err
			}
			if name != "" {
				return nil
			}
		}
	}
	if name != "" {
		return errUnknown("group", name)
	}
	return nil
}

// Redrive moves every dead letter of queue name (of every dead-letter queue
// when name is "") back to its source and returns how many moved.
func (r *Run) Redrive(name string) (int, error) { return r.redrive(name, 0) }

// CrashConsumer crashes a queue consumer (every instance) or a group
// member now; "" picks the first consumer, else the first member.
func (r *Run) CrashConsumer(name string) error {
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
		for _, in := range c.inst {
			in.Crash("crashed by hand")
		}
		return nil
	}
	if m := r.memberBy[name]; m != nil {
		if m.m == nil {
			return fmt.Errorf("%w: member %q has not joined its group yet", ErrRuntime, name)
		}
		m.m.Crash("")
		return nil
	}
	return errUnknown("consumer", name)
}

// BrokerDown makes every broker unavailable from now for window ticks by
// adding a broker.unavailable fault rule at run time.
func (r *Run) BrokerDown(window sim.Tick) error {
	if window < 1 {
		return fmt.Errorf("%w: window %d must be at least 1", ErrRuntime, window)
	}
	r.manual++
	now := r.w.Now()
	return r.inj.Add(faults.Rule{Name: "manual-broker-down-" + strconv.Itoa(r.manual), Point: faults.BrokerUnavailable,
		From: now, Until: now + window, Error: "broker down (by hand)"})
}
