package scenario

import (
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/sim"
)

// This file finds the valid shapes that derive far more work than they
// spell out, so that check warns about them before a run and a run that
// hits its budget names the likely cause. Each estimate is a product of
// numbers in the file, computed in 64-bit integers that cannot overflow
// (every factor is capped), and a shape is reported when its estimate goes
// past the cap the run would stop at.

// redriveWarnAt is how many redrives of one queue the timeline may hold
// before check warns that they make quadratic work.
const redriveWarnAt = 100

// cdcWarnAt is how many copies a service's CDC relays may publish between
// them before check warns: each CDC relay publishes every row.
const cdcWarnAt = 100_000

// workWarnings returns a warning for every shape whose derived work goes
// past the budget: fan-outs retried at once into a queue that may be down,
// several CDC relays re-sending every row, failing messages that come back
// for the whole run with no dead-letter queue, more component steps than
// the step cap, and a queue redriven again and again.
func (s *Scenario) workWarnings() []Warning {
	var ws []Warning
	warn := func(p Pos, msg string) {
		ws = append(ws, Warning{File: s.File, Line: p.Line, Col: p.Col, Msg: msg})
	}
	ticks := int64(s.Run.Cap())
	sent := map[string]int64{} // messages producers send, by "kind/name"
	for i := range s.Actors.Producers {
		p := &s.Actors.Producers[i]
		sent[p.To.Kind+"/"+p.To.Name] += int64(p.Count)
	}
	unavailable := false
	for i := range s.Faults {
		if s.Faults[i].Point == faults.BrokerUnavailable {
			unavailable = true
		}
	}

	// A refused forward retried at once: every try traces an event.
	for i := range s.Topology.Topics {
		t := &s.Topology.Topics[i]
		if len(t.FanOutToQueues) == 0 || !unavailable {
			continue
		}
		policy := pubsub.DefaultForwardRetry
		if t.FanOutRetry != nil {
			policy = t.FanOutRetry.Policy()
		}
		tries := int64(1+policy.Immediate) * int64(len(t.FanOutToQueues))
		if n := tries * sent["topic/"+t.Name]; n > MaxEvents {
			p := t.Pos
			if t.FanOutRetry != nil {
				p = t.FanOutRetry.Pos
			}
			warn(p, "topic "+strconv.Quote(t.Name)+" retries a refused forward "+strconv.Itoa(policy.Immediate)+
				" times at once to each of its "+strconv.Itoa(len(t.FanOutToQueues))+" queues: while broker.unavailable refuses them, its "+
				thousands(sent["topic/"+t.Name])+" messages make up to "+thousands(n)+" tries, over the work budget of "+thousands(MaxEvents)+
				" events; retry with backoff, or fewer times at once")
		}
	}

	// CDC relays take no leases: each one publishes every row.
	for i := range s.Topology.Services {
		svc := &s.Topology.Services[i]
		var cdc []*Relay
		for j := range s.Actors.Relays {
			if r := &s.Actors.Relays[j]; r.Service == svc.Name && r.Mode == outbox.CDC {
				cdc = append(cdc, r)
			}
		}
		rows := sent["service/"+svc.Name]
		if n := int64(len(cdc)) * rows; len(cdc) > 1 && n > cdcWarnAt {
			warn(cdc[1].Pos, "service "+strconv.Quote(svc.Name)+" has "+strconv.Itoa(len(cdc))+
				" CDC relays, and CDC relays take no leases, so each publishes every row: its "+thousands(rows)+" rows go out "+
				thousands(n)+" times; use one CDC relay, or poll relays, which share the rows")
		}
	}

	// A message that always fails comes back every visibility timeout,
	// for the whole run, when its queue has no dead-letter queue.
	queues := map[string]*Queue{}
	for i := range s.Topology.Queues {
		queues[s.Topology.Queues[i].Name] = &s.Topology.Queues[i]
	}
	for i := range s.Actors.Consumers {
		c := &s.Actors.Consumers[i]
		q := queues[c.Queue]
		if q == nil || q.DeadLetter != nil || (c.Handler.Kind != sim.Poison && c.Handler.Kind != sim.Permanent) {
			continue
		}
		vis := int64(q.VisibilityTimeout)
		if c.VisibilityTimeout > 0 {
			vis = int64(c.VisibilityTimeout)
		}
		msgs := sent["queue/"+q.Name]
		if n := msgs * (ticks / max(vis, 1)) * 3; n > MaxEvents {
			warn(c.Handler.Pos, "consumer "+strconv.Quote(c.Name)+" fails every message (handler "+c.Handler.Kind.String()+
				") of queue "+strconv.Quote(q.Name)+", which has no dead_letter: each of its "+thousands(msgs)+
				" messages comes back every "+strconv.FormatInt(vis, 10)+" ticks for up to "+thousands(ticks)+" ticks, about "+thousands(n)+
				" events, over the work budget of "+thousands(MaxEvents)+"; give the queue a dead_letter, or run fewer ticks")
		}
	}

	// Every component steps every tick, busy or idle.
	instances := int64(0)
	for i := range s.Actors.Consumers {
		instances += int64(max(s.Actors.Consumers[i].Instances, 1))
	}
	components := instances + int64(len(s.Actors.Producers)+len(s.Actors.Members)+len(s.Actors.Relays)+
		len(s.Topology.Queues)+len(s.Topology.Topics)+len(s.Topology.Logs)+len(s.Topology.Groups)+len(s.Topology.Services))
	for i := range s.Topology.Topics {
		components += int64(len(s.Topology.Topics[i].Subscribers))
	}
	if n := components * ticks; n > MaxSteps {
		warn(s.Run.Pos, thousands(components)+" components ("+thousands(instances)+" consumer instances among them) step every tick for up to "+
			thousands(ticks)+" ticks: "+thousands(n)+" steps, over the cap of "+thousands(MaxSteps)+
			"; run fewer ticks (until: drained stops once the work is done), or with fewer instances")
	}

	// Each redrive sends every dead letter back; a consumer that keeps
	// failing them brings them back again, so the work grows with the
	// square of the redrives.
	redrives := map[string][]*Action{}
	var order []string
	for i := range s.Timeline {
		a := &s.Timeline[i]
		if a.Action != ActionRedrive {
			continue
		}
		if redrives[a.Queue] == nil {
			order = append(order, a.Queue)
		}
		redrives[a.Queue] = append(redrives[a.Queue], a)
	}
	for _, q := range order {
		if as := redrives[q]; len(as) >= redriveWarnAt {
			warn(as[0].Pos, "the timeline redrives dead letters of "+strconv.Quote(q)+" "+strconv.Itoa(len(as))+
				" times, and each redrive sends every one back: while the consumer keeps failing them the work grows with the square of the redrives; redrive once, after the fix")
		}
	}
	return ws
}
