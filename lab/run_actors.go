package lab

import (
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/saga"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// This file maps the actors of a scenario file onto the models' own
// components. Nothing here produces, handles, retries or commits: the
// behaviour lives in packages producer, queue, eventlog, pubsub and
// outbox, and the scripted handler in sim.Script.

// runConsumer is a queue consumer: a queue.Consumer worker pool and the
// script its handler runs (fix_handler fixes it).
type runConsumer struct {
	cfg    *scenario.Consumer
	q      *runQueue
	c      *queue.Consumer
	script *sim.Script
}

// runMember is a consumer-group member and the script its handler runs.
type runMember struct {
	cfg    *scenario.Member
	group  *runGroup
	m      *eventlog.Member
	script *sim.Script
}

// connect brings the member back into its group (connect) or takes it out
// (disconnect), as the model's Rejoin and Leave do. Connecting a member
// that is in its group already is a no-op.
func (m *runMember) connect(on bool) error {
	if !on {
		m.m.Leave()
		return nil
	}
	if m.group.g.Member(m.cfg.Name) != nil {
		return nil
	}
	return m.m.Rejoin()
}

// relay is what the timeline needs of a polling or a CDC relay.
type relay interface {
	Name() string
	Kill()
	Resume()
	Killed() bool
	Down() bool
}

// runRelay is an outbox relay (polling or CDC).
type runRelay struct {
	cfg   *scenario.Relay
	svc   *runService
	relay relay
}

// script returns the sim.Script that plays handler h: its kind, key
// pattern, failures, processing time and error text.
func script(h *scenario.Handler) *sim.Script {
	return &sim.Script{Behaviour: h.Kind, Keys: h.Keys, Failures: h.Failures, Ticks: h.Ticks, Error: h.Error,
		MinVersion: h.MinVersion, MaxVersion: h.MaxVersion}
}

// buildProducers makes a producer.Producer for every producer that sends to
// a queue, topic or log, and an outbox.Commander for one that places
// commands with a service's writer.
func (r *Run) buildProducers() error {
	for i := range r.s.Actors.Producers {
		pc := &r.s.Actors.Producers[i]
		if pc.To.Kind == scenario.TargetService {
			svc := r.serviceBy[pc.To.Name]
			if svc == nil {
				return runErr(r.s, pc.To.Pos, pc.To.String()+" is not defined")
			}
			c, err := outbox.NewCommander(r.w, commanderConfig(pc, svc.writer))
			if err != nil {
				return runErr(r.s, pc.Pos, err.Error())
			}
			r.producers = append(r.producers, c)
			continue
		}
		tgt, err := r.target(pc.To)
		if err != nil {
			return err
		}
		cfg := pc.Config
		cfg.Target = tgt
		if pc.Keys != nil || pc.KeyPattern == "" {
			cfg.KeyPattern, cfg.KeyCount = "", 0
		}
		p, err := producer.New(r.w, cfg)
		if err != nil {
			return runErr(r.s, pc.Pos, err.Error())
		}
		r.producers = append(r.producers, p)
	}
	return nil
}

// commanderConfig maps producer pc, sending commands to a service, onto a
// commander of writer w: command i is for the customer of key number i
// (round robin or random, as for messages), or the producer's name
// without keys. A key pattern is written out only as far as the commands
// reach: in round-robin order the first min(count, key_count) keys give
// command i the same key as the full list.
func commanderConfig(pc *scenario.Producer, w *outbox.Writer) outbox.CommanderConfig {
	c := outbox.CommanderConfig{Name: pc.Name, Writer: w, Count: pc.Count, Rate: pc.Rate, Start: pc.Start,
		RandomKeys: pc.KeyOrder == producer.Random, OnRefused: pc.OnRefused}
	if n := pc.NumKeys(); n > 0 {
		if !c.RandomKeys {
			n = min(n, pc.Count)
		}
		c.Keys = make([]string, n)
		for k := range c.Keys {
			c.Keys[k] = pc.Key(k)
		}
	}
	return c
}

// buildRelays makes the polling and CDC relays of every service.
func (r *Run) buildRelays() error {
	for i := range r.s.Actors.Relays {
		rc := &r.s.Actors.Relays[i]
		rs := r.serviceBy[rc.Service]
		if rs == nil {
			return runErr(r.s, rc.FieldPos("service"), "service "+strconv.Quote(rc.Service)+" is not defined")
		}
		tgt, err := r.target(rs.cfg.PublishTo)
		if err != nil {
			return err
		}
		rr := &runRelay{cfg: rc, svc: rs}
		if rc.Mode == outbox.CDC {
			rr.relay, err = outbox.NewCDCRelay(r.w, outbox.CDCConfig{Name: rc.Name, Service: rs.svc, Target: tgt, Faults: r.inj,
				MaxPerStep: rc.Batch, Start: rc.Start, Interval: rc.Interval})
		} else {
			rr.relay, err = outbox.NewRelay(r.w, outbox.RelayConfig{Name: rc.Name, Service: rs.svc, Target: tgt, Faults: r.inj,
				Batch: rc.Batch, PollEvery: rc.Interval, Lease: rc.Lease, MaxAttempts: rs.cfg.MaxAttempts, Backoff: rc.Backoff,
				Ordering: rc.Order, Start: rc.Start})
		}
		if err != nil {
			return runErr(r.s, rc.Pos, err.Error())
		}
		rs.relays = append(rs.relays, rr)
		r.relays = append(r.relays, rr)
		put(&r.relayBy, rc.Name, rr)
	}
	return nil
}

// buildConsumers makes a queue.Consumer pool for every queue consumer: its
// instances, start tick, batch, visibility timeout and wait time, ack
// mode, retry policy and scripted handler, with the idempotency it asks
// for.
func (r *Run) buildConsumers() error {
	for i := range r.s.Actors.Consumers {
		cc := &r.s.Actors.Consumers[i]
		rq := r.queueBy[cc.Queue]
		if rq == nil {
			return runErr(r.s, cc.FieldPos("queue"), "queue "+strconv.Quote(cc.Queue)+" is not defined")
		}
		rc := &runConsumer{cfg: cc, q: rq, script: script(&cc.Handler)}
		h := r.playedBy(cc.Name, cc.Idempotency, rc.script)
		cfg := queue.ConsumerConfig{Queue: rq.q, Name: cc.Name, Instances: cc.Instances, Start: cc.Start, Batch: cc.Batch,
			VisibilityTimeout: cc.VisibilityTimeout, WaitTime: cc.WaitTime, Handler: h, AckMode: cc.Ack, Faults: r.inj}
		if cc.ShortPoll {
			cfg.WaitTime = queue.ShortPoll
		}
		cfg.Retry = retryPolicy(cc.Retry)
		if f := cc.Forward; f != nil {
			to, err := r.target(f.To)
			if err != nil {
				return err
			}
			cfg.Forward = &queue.Forward{To: to, Type: f.Type, Resend: f.Resend}
		}
		c, err := queue.NewConsumer(r.w, cfg)
		if err != nil {
			return runErr(r.s, cc.Pos, err.Error())
		}
		rc.c = c
		r.consumers = append(r.consumers, rc)
		put(&r.consBy, cc.Name, rc)
	}
	return nil
}

// retryPolicy returns the queue.RetryPolicy of rt: its kind, base and
// cap, with jitter on meaning "equal jitter" (half of each delay), and
// whether it applies to every failure class.
func retryPolicy(rt scenario.Retry) queue.RetryPolicy {
	p := queue.RetryPolicy{Kind: rt.Policy, SameForAll: rt.SameForAll}
	if rt.Policy == queue.RetryNone {
		return p
	}
	p.Delay = rt.Base
	if rt.Policy == queue.RetryExponential {
		p.Cap = rt.Cap
		if rt.Jitter {
			p.Jitter = 0.5
		}
	}
	return p
}

// buildSagas makes a saga.Orchestrator for every saga, reading its
// queue and consulting the run's fault injector.
func (r *Run) buildSagas() error {
	for i := range r.s.Actors.Sagas {
		g := &r.s.Actors.Sagas[i]
		steps := make([]saga.Step, len(g.Steps))
		for j, st := range g.Steps {
			steps[j] = saga.Step{Name: st.Name, Compensation: st.Compensation}
		}
		o, err := saga.New(r.w, saga.Config{Name: g.Name, Queue: r.queueBy[g.Queue].q, Steps: steps,
			Timeout: g.Timeout, Compensate: g.Compensate, Faults: r.inj})
		if err != nil {
			return runErr(r.s, g.Pos, err.Error())
		}
		put(&r.sagaBy, g.Name, o)
	}
	return nil
}

// buildMembers makes an eventlog.Member for every group member: its start
// tick, commit mode, batch and scripted handler, with the idempotency it
// asks for.
func (r *Run) buildMembers() error {
	for i := range r.s.Actors.Members {
		mc := &r.s.Actors.Members[i]
		rg := r.groupBy[mc.Group]
		if rg == nil {
			return runErr(r.s, mc.FieldPos("group"), "group "+strconv.Quote(mc.Group)+" is not defined")
		}
		rm := &runMember{cfg: mc, group: rg, script: script(&mc.Handler)}
		h := r.playedBy(mc.Name, mc.Idempotency, rm.script)
		if r.bound(mc.Name) == nil && mc.Idempotency != sim.NotIdempotent && !rg.cfg.IdempotencyPerMember {
			// The group's members share one dedup table per key.
			if rg.dedup == nil {
				rg.dedup = map[sim.IdempotencyKey]*sim.DedupTable{}
			}
			t := rg.dedup[mc.Idempotency]
			if t == nil {
				t = &sim.DedupTable{}
				rg.dedup[mc.Idempotency] = t
			}
			h = mc.Idempotency.WrapIn(rm.script, t)
		}
		if rg.proj != nil {
			h = rg.proj.Wrap(h)
		}
		m, err := eventlog.NewMember(r.w, rg.g, eventlog.MemberConfig{Name: mc.Name, Handler: h,
			Commit: mc.Commit, AutoCommitEvery: rg.cfg.AutoCommitInterval, Batch: mc.Batch, Start: mc.Start})
		if err != nil {
			return runErr(r.s, mc.Pos, fmt.Sprintf("member %q cannot join group %q: %v", mc.Name, mc.Group, err))
		}
		rm.m = m
		r.members = append(r.members, rm)
		put(&r.memberBy, mc.Name, rm)
	}
	return nil
}
