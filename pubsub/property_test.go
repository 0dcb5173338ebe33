package pubsub

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

var (
	propSubjects = []string{"a.b", "a.c", "c.b", "a.b.c"}
	propPatterns = []string{"a.*", "a.>", ">", "a.b", "*.b", "c.*", "a.b.c"}
)

// modelled are the causes of loss the models know; a loss with any other
// cause (or none) is a bug.
var modelled = map[sim.Cause]bool{
	sim.CauseDualWrite: true, sim.CauseAckBeforeProcess: true, sim.CauseCommitBeforeProcess: true, sim.CauseRetention: true,
	sim.CauseCompaction: true, sim.CauseOverflow: true, sim.CausePurge: true, sim.CauseBrokerUnavailable: true,
	sim.CauseOffsetReset: true, sim.CauseSeek: true, sim.CauseHandlerFailed: true, sim.CauseDisconnect: true,
	sim.CauseForwardFailed: true, sim.CauseDeadRow: true,
}

// randomPlan draws a fault mix over every pubsub fault point, the handler
// points (for subscribers and queue workers alike), queue outages that
// refuse fan-out forwards, outages that refuse subscribers' connects (the
// "down" rule, when it names a subscriber) and broker.ack_lost on the
// topics (which pub/sub never consults) and the queues; every rule ends by
// tick 40 so the run can drain.
func randomPlan(st *sim.Stream, actors, subs []string) []faults.Rule {
	var rules []faults.Rule
	add := func(name string, p faults.Point, prob float64, param int64, where string) {
		if !st.Chance(0.5) {
			return
		}
		from := sim.Tick(st.IntN(30))
		r := faults.Rule{Name: name, Point: p, Probability: prob, From: from, Until: from + 1 + sim.Tick(st.IntN(10)), Param: param}
		r.Match.Where = where
		if st.Chance(0.5) {
			r.Match.Consumer = actors[st.IntN(len(actors))]
		}
		rules = append(rules, r)
	}
	add("offline", faults.SubscriberOffline, 0.7, 0, "")
	add("slow", faults.SubscriberSlow, 0.5, int64(1+st.IntN(3)), "")
	add("dup", faults.BrokerDuplicate, 0.2, 0, "topic:*")
	add("delay", faults.BrokerDelay, 0.3, int64(1+st.IntN(8)), "topic:*")
	add("reorder", faults.BrokerReorder, 0.2, 0, "topic:*")
	add("down", faults.BrokerUnavailable, 0.5, 0, "topic:*")
	add("queue-down", faults.BrokerUnavailable, 0.5, 0, "queue:*")
	add("queue-dup", faults.BrokerDuplicate, 0.3, 0, "queue:*")
	if st.Chance(0.5) { // an outage one subscriber's connects run into
		from := sim.Tick(st.IntN(30))
		rules = append(rules, faults.Rule{Name: "connect-down", Point: faults.BrokerUnavailable, Probability: 0.8, From: from,
			Until: from + 2 + sim.Tick(st.IntN(8)), Match: faults.Match{Where: "topic:*", Consumer: subs[st.IntN(len(subs))]}})
	}
	add("topic-ack-lost", faults.BrokerAckLost, 0.5, 0, "topic:*")
	add("queue-ack-lost", faults.BrokerAckLost, 0.3, 0, "queue:*")
	add("transient", faults.HandlerTransient, 0.3, int64(1+st.IntN(3)), "")
	add("permanent", faults.HandlerPermanent, 0.2, 0, "")
	add("poison", faults.HandlerPoison, 0.1, 0, "")
	add("handler-slow", faults.HandlerSlow, 0.3, int64(1+st.IntN(3)), "")
	return rules
}

type pairKey struct {
	msg sim.ID
	sub string
}

// outcome counts the trace events about one copy for one subscriber.
type outcome struct {
	delivered, processed, skipped, failed, droppedOld, droppedNew, missed, discarded, discardedHeld, handlerLost, suppressed, dup int
}

// propRun is one random seed's world.
type propRun struct {
	r      *rig
	subs   []*Subscriber
	queues []*queue.Queue
	cons   []*queue.Consumer
	retry  []*ForwardRetry // each queue's fan-out policy (nil: the default)
}

// runProperty runs one random seed to the end and checks it; it returns
// its text trace and the broker's metrics.
func runProperty(t *testing.T, seed uint64, tally map[string]int) ([]byte, Metrics) {
	st := sim.NewStream(seed, "property")
	nsubs := 2 + st.IntN(4)
	names := make([]string, nsubs)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	nq := st.IntN(3)
	actors := append([]string(nil), names...)
	for i := range nq {
		actors = append(actors, fmt.Sprintf("w%d", i))
	}
	plan := randomPlan(st, actors, names)
	r := newRig(t, seed, 3, plan...)
	var text bytes.Buffer
	r.w.Trace().Attach(sim.NewTextWriter(&text))
	p := &propRun{r: r}
	for i, name := range names {
		hs := sim.NewStream(seed, "handler/"+name)
		var h sim.Handler
		switch st.IntN(5) {
		case 1:
			h = &recorder{}
		case 2:
			h = &sim.Script{Ticks: sim.Tick(1 + st.IntN(3)), Note: "slow"}
		case 3:
			muted := st.Chance(0.5)
			h = HandlerFunc(func(ctx *Context, d *sim.Delivery) error {
				d.Apply("")
				if !hs.Chance(0.4) {
					return nil
				}
				subject := propSubjects[hs.IntN(len(propSubjects))]
				pub := func() error { _, err := ctx.Publish(subject, d.Msg.Key, nil); return err }
				if muted && hs.Chance(0.5) {
					_ = ctx.Muted(pub)
				} else {
					_ = pub()
				}
				return nil
			})
		case 4:
			h = sim.Idempotent(sim.Effect("once per key"), sim.ByKey)
		}
		var emits []Emit
		if st.Chance(0.3) {
			emits = append(emits, Emit{Subject: propSubjects[st.IntN(len(propSubjects))], Count: st.IntN(3), CascadeLimit: st.IntN(4)})
		}
		s := r.sub(SubscriberConfig{
			Name: name, Pattern: propPatterns[st.IntN(len(propPatterns))],
			Buffer: 1 + st.IntN(6), Policy: Policy(st.IntN(3)), Rate: st.IntN(4), Handler: h,
			Offline: st.Chance(0.2), Start: sim.Tick(st.IntN(6)), Emits: emits,
			SourceCheck: st.Chance(0.3), Supervisor: st.Chance(0.2),
		})
		p.subs = append(p.subs, s)
		for range st.IntN(4) {
			at := sim.Tick(1 + st.IntN(35))
			switch st.IntN(4) {
			case 0:
				r.w.At(at, "disconnect "+name, s.Disconnect)
			case 1:
				r.w.At(at, "connect "+name, func() { _ = s.Connect() })
			case 2:
				r.w.At(at, "mute "+name, s.Mute)
			case 3:
				r.w.At(at, "unmute "+name, s.Unmute)
			}
		}
		r.w.At(40, "connect "+name, func() { _ = s.Connect(); s.Unmute() })
		_ = i
	}
	for _, rule := range plan {
		if rule.Name != "connect-down" {
			continue
		}
		// The subscriber the outage names drops its connection as the
		// outage starts and connects at once: refused, it retries by itself.
		for _, s := range p.subs {
			if s.Name() == rule.Match.Consumer {
				r.w.At(rule.From, "drop "+s.Name(), s.Disconnect)
				r.w.At(rule.From, "reconnect "+s.Name(), func() { _ = s.Connect() })
			}
		}
	}
	for i := range nq {
		name := fmt.Sprintf("q%d", i)
		dlq := r.newQueue(queue.Config{Name: name + "-dlq"})
		q := r.newQueue(queue.Config{Name: name, DeadLetter: dlq, VisibilityTimeout: sim.Tick(3 + st.IntN(5))})
		var retry *ForwardRetry
		switch st.IntN(4) {
		case 1:
			retry = &NoForwardRetry
		case 2:
			retry = &ForwardRetry{Immediate: st.IntN(3), Backoff: st.IntN(5), Delay: sim.Tick(1 + st.IntN(3))}
			if st.Chance(0.5) {
				retry.MaxDelay = retry.Delay * sim.Tick(1+st.IntN(4))
			}
		case 3:
			retry = &ForwardRetry{Backoff: 1 + st.IntN(3), Delay: 1}
		}
		p.retry = append(p.retry, retry)
		if err := r.b.FanOutWith(FanOutConfig{Name: name, Pattern: propPatterns[st.IntN(len(propPatterns))], Target: q, Retry: retry}); err != nil {
			t.Fatal(err)
		}
		var h sim.Handler = sim.Effect("")
		if st.Chance(0.5) {
			h = &sim.Script{Ticks: sim.Tick(st.IntN(3))}
		}
		c := r.newConsumer(queue.ConsumerConfig{Queue: q, Name: fmt.Sprintf("w%d", i), Handler: h, MaxAttempts: 3, Batch: 1 + st.IntN(3)})
		p.queues = append(p.queues, q)
		p.cons = append(p.cons, c)
	}
	r.producer(func(now sim.Tick) {
		if now > 30 {
			return
		}
		for range st.IntN(4) {
			h := sim.Headers{Type: propSubjects[st.IntN(len(propSubjects))]}
			if st.Chance(0.3) {
				h.Source = names[st.IntN(len(names))]
			}
			_ = r.b.Publish(r.env.NewMessage(fmt.Sprintf("k%d", st.IntN(3)), nil, h))
		}
	})
	if err := r.w.RunUntil(p.drained, 400); err != nil {
		t.Fatalf("seed %d: %v (metrics %+v)", seed, err, r.b.Metrics())
	}
	p.check(t, seed, tally)
	return text.Bytes(), r.b.Metrics()
}

// drained reports whether the run is over: no timeline action to come, the
// producer done, nothing held by the broker, and nothing left in a queue
// that is not a dead-letter queue or in a worker's hands.
func (p *propRun) drained() bool {
	r := p.r
	if r.w.Now() <= 30 || r.w.Pending() > 0 || !r.b.Idle() {
		return false
	}
	for i, q := range p.queues {
		if q.Len() > 0 || p.cons[i].Busy() > 0 {
			return false
		}
	}
	return true
}

// check checks one drained run: the ledger's verdicts, its causes of loss,
// its fold from the JSON Lines trace, and the fate of every copy against
// the trace and the metrics.
func (p *propRun) check(t *testing.T, seed uint64, tally map[string]int) {
	t.Helper()
	r := p.r
	led := r.w.Ledger()
	r.refold()
	for _, o := range led.Outcomes("") {
		tally[o.Verdict.String()]++
		switch o.Verdict {
		case sim.VerdictUnsettled, sim.VerdictPending:
			t.Errorf("seed %d: %v for %s is %v after draining: %+v", seed, o.Origin, o.Consumer, o.Verdict, o)
		case sim.VerdictLost:
			tally["lost: "+string(o.Cause)]++
		}
	}
	for _, l := range led.Losses() {
		if !modelled[l.Cause] {
			t.Errorf("seed %d: loss without a modelled cause: %+v", seed, l)
		}
		if l.Consumer == "" {
			tally["lost before any consumer: "+string(l.Cause)]++
		}
	}
	for _, e := range r.rec.Events() {
		if e.Kind == sim.KindLost && e.Cause == sim.CauseDisconnect && strings.Contains(e.Detail, "held") {
			tally["held copies discarded"]++
		}
	}
	p.checkCopies(t, seed)
	p.checkFanOuts(t, seed)
}

// checkCopies checks that every copy of every accepted publish for every
// matching subscriber ended exactly once: handled (applied, skipped or
// failed), missed, dropped by overflow, thrown away by a disconnect or
// suppressed; and that the ledger and the metrics agree with the trace.
func (p *propRun) checkCopies(t *testing.T, seed uint64) {
	r := p.r
	out := map[pairKey]*outcome{}
	get := func(e *sim.Event) *outcome {
		k := pairKey{e.Msg, e.Actor}
		o := out[k]
		if o == nil {
			o = &outcome{}
			out[k] = o
		}
		return o
	}
	type pub struct {
		id      sim.ID
		subject string
	}
	var pubs []pub
	for _, e := range r.rec.Events() {
		if !strings.HasPrefix(e.Where, "topic:") {
			continue
		}
		switch e.Kind {
		case sim.KindPublished:
			pubs = append(pubs, pub{e.Msg, strings.TrimPrefix(e.Where, "topic:")})
		case sim.KindDelivered:
			get(&e).delivered++
		case sim.KindProcessed:
			get(&e).processed++
		case sim.KindSkipped:
			get(&e).skipped++
		case sim.KindFailed:
			get(&e).failed++
		case sim.KindDropped:
			if strings.Contains(e.Detail, "oldest") {
				get(&e).droppedOld++
			} else {
				get(&e).droppedNew++
			}
		case sim.KindMissed:
			get(&e).missed++
		case sim.KindLost:
			switch e.Cause {
			case sim.CauseDisconnect:
				get(&e).discarded++
				if strings.Contains(e.Detail, "held") {
					get(&e).discardedHeld++ // never entered the buffer
				}
			case sim.CauseHandlerFailed:
				get(&e).handlerLost++
			}
		case KindSuppressed:
			get(&e).suppressed++
		case sim.KindFault:
			if e.Detail == string(faults.BrokerDuplicate) {
				get(&e).dup++
			}
		}
	}
	led := r.w.Ledger()
	m := r.b.Metrics()
	pairs, missedPairs, dropped := 0, 0, 0
	for _, x := range pubs {
		for _, s := range p.subs {
			if !s.Pattern().Match(x.subject) {
				continue
			}
			pairs++
			o := out[pairKey{x.id, s.Name()}]
			if o == nil {
				o = &outcome{}
			}
			handled := o.processed + o.skipped + o.failed
			terminal := handled + o.droppedOld + o.droppedNew + o.missed + o.discarded + o.suppressed
			if terminal != 1+o.dup || o.delivered != handled+o.droppedOld+o.discarded-o.discardedHeld || o.failed != o.handlerLost {
				t.Errorf("seed %d: %v for %s: unaccounted copy: %+v", seed, x.id, s.Name(), *o)
				continue
			}
			d := r.entry(x.id, s.Name())
			if o.droppedOld+o.droppedNew > 0 {
				dropped++
			}
			if o.missed > 0 && o.processed+o.skipped == 0 {
				missedPairs++ // the verdict is missed unless another copy was handled
			}
			if int(d.Delivered) != o.delivered || int(d.Applied) != o.processed || int(d.Skipped) != o.skipped || d.Missed != (o.missed > 0) ||
				(d.Lost != "") != (o.droppedOld+o.droppedNew+o.discarded+o.handlerLost > 0) {
				t.Errorf("seed %d: %v for %s: ledger %+v disagrees with trace %+v", seed, x.id, s.Name(), d, *o)
			}
		}
	}
	if m.Published != len(pubs) || !r.b.Idle() {
		t.Errorf("seed %d: metrics %+v, %d published events", seed, m, len(pubs))
	}
	copies := m.Handled + m.Skipped + m.Failed + m.Dropped + m.Missed + m.Discarded + m.Suppressed
	if copies != pairsWithDups(out, pairs) || m.Delivered > m.Handled+m.Skipped+m.Failed+m.Discarded+m.Dropped {
		t.Errorf("seed %d: metrics %+v do not conserve the %d copies", seed, m, pairsWithDups(out, pairs))
	}
	st := led.Stats()
	if st.Missed != missedPairs || st.Delivered < m.Delivered {
		t.Errorf("seed %d: ledger stats %+v disagree with %d missed pairs and metrics %+v", seed, st, missedPairs, m)
	}
	_ = dropped
}

// pairsWithDups returns the number of copies: one per (publish, matching
// subscriber) pair plus one per duplicate made.
func pairsWithDups(out map[pairKey]*outcome, pairs int) int {
	n := pairs
	for _, o := range out {
		n += o.dup
	}
	return n
}

// checkFanOuts checks that every publish matching a fan-out made exactly
// one new copy for it, forwarded or lost with cause "forward failed", and
// that every forwarded copy has a verdict for its queue's consumer.
func (p *propRun) checkFanOuts(t *testing.T, seed uint64) {
	r := p.r
	led := r.w.Ledger()
	forwarded, failed := map[pairKey]int{}, map[pairKey]int{}
	refusals := map[sim.ID]int{} // refused attempts per fan-out copy
	for _, e := range r.rec.Events() {
		switch {
		case e.Kind == sim.KindRejected && e.Origin != 0:
			refusals[e.Msg]++
			if e.Attempt != refusals[e.Msg] {
				t.Errorf("seed %d: fan-out copy %v: refusal %d traced as attempt %d", seed, e.Msg, refusals[e.Msg], e.Attempt)
			}
		case e.Kind == KindForwarded:
			forwarded[pairKey{e.Origin, e.Actor}]++
			if rec, ok := led.Record(e.Msg); !ok || rec.Origin != e.Origin || led.Root(e.Msg) != led.Root(e.Origin) {
				t.Errorf("seed %d: forwarded copy %v of %v: record %+v", seed, e.Msg, e.Origin, rec)
			}
		case e.Kind == sim.KindLost && e.Cause == sim.CauseForwardFailed:
			failed[pairKey{e.Origin, e.Actor}]++
		}
	}
	// A copy is lost only after every attempt its policy allows was
	// refused, and a forwarded copy was refused fewer times than that.
	policy := map[string]ForwardRetry{}
	for i, q := range p.queues {
		policy[q.Name()] = DefaultForwardRetry
		if p.retry[i] != nil {
			policy[q.Name()] = *p.retry[i]
		}
	}
	for _, e := range r.rec.Events() {
		pol, ok := policy[e.Actor]
		if !ok {
			continue
		}
		switch {
		case e.Kind == KindForwarded && refusals[e.Msg] >= pol.Attempts():
			t.Errorf("seed %d: copy %v for %s forwarded after %d refusals; the policy allows %d attempts", seed, e.Msg, e.Actor, refusals[e.Msg], pol.Attempts())
		case e.Kind == sim.KindLost && e.Cause == sim.CauseForwardFailed && refusals[e.Msg] != pol.Attempts():
			t.Errorf("seed %d: copy %v for %s lost after %d refusals; the policy makes %d attempts", seed, e.Msg, e.Actor, refusals[e.Msg], pol.Attempts())
		}
	}
	for _, e := range r.rec.Events() {
		if e.Kind != sim.KindPublished {
			continue
		}
		for _, q := range p.queues {
			k := pairKey{e.Msg, q.Name()}
			if forwarded[k]+failed[k] != 0 && forwarded[k]+failed[k] != 1 {
				t.Errorf("seed %d: %v made %d copies for %s", seed, e.Msg, forwarded[k]+failed[k], q.Name())
			}
			if forwarded[k] == 1 {
				if o, ok := r.verdict(led.Root(e.Msg), q.Consumer()); !ok || o.Verdict == sim.VerdictUnsettled || o.Verdict == sim.VerdictPending {
					t.Errorf("seed %d: %v in %s: %+v", seed, e.Msg, q.Name(), o)
				}
			}
		}
	}
}

// TestPropertyConservation runs 1000 random seeds (100 with -short) with
// random subscribers, handlers, overflow policies, cascades, emits,
// supervisor and source checks, mutes, connects (refused and retried
// during outages) and disconnects (which throw away buffered and held
// copies), fan-outs into consumed queues with random retry policies, and a
// random mix of every pubsub fault, the handler faults, broker.ack_lost
// and queue outages. Every origin must end with a verdict that is
// neither unsettled nor pending, every loss must have a modelled cause,
// the ledger folded from the JSON Lines trace must equal the live one, and
// every copy must be accounted for.
func TestPropertyConservation(t *testing.T) {
	n := uint64(1000)
	if testing.Short() {
		n = 100
	}
	var sum Metrics
	tally := map[string]int{}
	for seed := uint64(1); seed <= n; seed++ {
		text, m := runProperty(t, seed, tally)
		if seed%100 == 1 {
			if again, _ := runProperty(t, seed, map[string]int{}); !bytes.Equal(text, again) {
				t.Errorf("seed %d: the same seed produced a different trace", seed)
			}
		}
		sum.Published += m.Published
		sum.Rejected += m.Rejected
		sum.Backpressure += m.Backpressure
		sum.Delivered += m.Delivered
		sum.Missed += m.Missed
		sum.Dropped += m.Dropped
		sum.Suppressed += m.Suppressed
		sum.Handled += m.Handled
		sum.Skipped += m.Skipped
		sum.Failed += m.Failed
		sum.Discarded += m.Discarded
		sum.Duplicated += m.Duplicated
		sum.Delayed += m.Delayed
		sum.Forwarded += m.Forwarded
		sum.ForwardFailed += m.ForwardFailed
		sum.ForwardRetries += m.ForwardRetries
		sum.ConnectRefused += m.ConnectRefused
		sum.CascadeLimited += m.CascadeLimited
		sum.Emitted += m.Emitted
		sum.EmitsLost += m.EmitsLost
	}
	keys := make([]string, 0, len(tally))
	for k := range tally {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n\t%-45s %d", k, tally[k])
	}
	t.Logf("%d seeds: %+v\nverdicts (origin x consumer):%s", n, sum, b.String())
	// Every outcome must have been exercised, or the property is vacuous.
	for _, c := range []struct {
		name string
		v    int
	}{{"rejected", sum.Rejected}, {"back-pressure", sum.Backpressure}, {"missed", sum.Missed}, {"dropped", sum.Dropped},
		{"suppressed", sum.Suppressed}, {"skipped", sum.Skipped}, {"discarded", sum.Discarded}, {"duplicated", sum.Duplicated},
		{"delayed", sum.Delayed}, {"failed", sum.Failed}, {"forwarded", sum.Forwarded}, {"forward failed", sum.ForwardFailed},
		{"forward retries", sum.ForwardRetries}, {"refused connects", sum.ConnectRefused}, {"held copies discarded", tally["held copies discarded"]},
		{"cascade-limited", sum.CascadeLimited}, {"emitted", sum.Emitted},
		{"applied verdicts", tally["applied"]}, {"parked verdicts", tally["parked"]}, {"absorbed verdicts", tally["absorbed"]},
		{"missed verdicts", tally["missed"]}, {"lost verdicts", tally["lost"]}} {
		if c.v == 0 {
			t.Errorf("no seed exercised %s", c.name)
		}
	}
}
