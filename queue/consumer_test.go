package queue

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest/core"
)

// world wires a queue (with a DLQ), producers and consumers into a
// simtest world, whose injector, recorder and checks it shares.
type world struct {
	*core.World
	t   *testing.T
	w   *sim.World
	env *sim.Env
	rec *sim.Recorder
	in  *faults.Injector
	q   *Queue
	dlq *Queue
	cs  []*Consumer
	ps  []*producer.Producer
}

func newWorld(t *testing.T, seed uint64, rules []faults.Rule, qc Config) *world {
	t.Helper()
	return newWorldDLQ(t, seed, rules, qc, Config{})
}

// newWorldDLQ is newWorld with the dead-letter queue's configuration (its
// name and type are the queue's).
func newWorldDLQ(t *testing.T, seed uint64, rules []faults.Rule, qc, dc Config) *world {
	t.Helper()
	cw := core.New(t, seed)
	cw.FaultRules(rules...)
	dc.Name, dc.FIFO = qc.Name+"-dlq", qc.FIFO // SQS: a DLQ has its source's type
	dlq, err := New(cw.World, dc)
	cw.Must(err)
	qc.Faults, qc.DeadLetter = cw.Faults(), dlq
	q, err := New(cw.World, qc)
	cw.Must(err)
	return &world{World: cw, t: t, w: cw.World, env: cw.Env(), rec: cw.Recorder(), in: cw.Faults(), q: q, dlq: dlq}
}

func (w *world) consumer(cc ConsumerConfig) *Consumer {
	w.t.Helper()
	cc.Queue = w.q
	c, err := NewConsumer(w.w, cc)
	w.Must(err)
	w.cs = append(w.cs, c)
	return c
}

func (w *world) producer(pc producer.Config) *producer.Producer {
	w.t.Helper()
	if pc.Target == nil {
		pc.Target = w.q
	}
	p, err := producer.New(w.w, pc)
	w.Must(err)
	w.ps = append(w.ps, p)
	return p
}

// drained reports whether the producers are done and no work is left in
// the queue or in the consumers.
func (w *world) drained() bool {
	for _, p := range w.ps {
		if !p.Done() {
			return false
		}
	}
	for _, c := range w.cs {
		if c.Busy() > 0 {
			return false
		}
	}
	return w.q.Len() == 0
}

func (w *world) run(max sim.Tick) {
	w.t.Helper()
	w.RunUntil(w.drained, max)
}

func (w *world) events(kind sim.Kind) []sim.Event { return w.Events(kind) }

func (w *world) count(kind sim.Kind) int { return len(w.events(kind)) }

func TestConsumerAtLeastOnceCrashAfterEffectDuplicates(t *testing.T) {
	w := newWorld(t, 1, []faults.Rule{{Name: "boom", Point: faults.ConsumerCrashAfterEffect, Nth: 2}},
		Config{Name: "orders", VisibilityTimeout: 4})
	w.consumer(ConsumerConfig{Name: "w1"})
	w.producer(producer.Config{Name: "p", Count: 5, KeyPattern: "kunde-%d", KeyCount: 3})
	w.run(100)
	l := w.env.Ledger
	if err := sim.Check(l, sim.NoLoss(), sim.AtLeastOnce("orders")); err != nil {
		t.Fatal(err)
	}
	if got := l.DuplicateEffects("orders"); got != 1 {
		t.Fatalf("duplicate effects = %d, want 1", got)
	}
	if err := sim.Check(l, sim.AtMostOnce("orders")); err == nil {
		t.Fatal("at-most-once should fail after a crash before the ack")
	}
	if w.count(sim.KindCrashed) != 1 || w.cs[0].Stats().Crashes != 1 {
		t.Fatal("crash not traced")
	}
}

func TestConsumerAtMostOnceCrashLoses(t *testing.T) {
	w := newWorld(t, 1, []faults.Rule{{Name: "boom", Point: faults.ConsumerCrashBeforeProcess, Nth: 3}},
		Config{Name: "orders", VisibilityTimeout: 4})
	c := w.consumer(ConsumerConfig{Name: "w1", AckMode: AckBeforeProcess})
	w.producer(producer.Config{Name: "p", Count: 5})
	w.run(100)
	l := w.env.Ledger
	if err := sim.Check(l, sim.AtMostOnce("orders")); err != nil {
		t.Fatal(err)
	}
	losses := l.Losses()
	if len(losses) != 1 || losses[0].Cause != sim.CauseAckBeforeProcess || losses[0].ID != 3 || losses[0].Consumer != "orders" {
		t.Fatalf("losses %+v", losses)
	}
	if c.Stats().Lost != 1 || l.Stats().Applied != 4 {
		t.Fatalf("stats %+v applied %d", c.Stats(), l.Stats().Applied)
	}
	lost := w.events(sim.KindLost)
	if len(lost) != 1 || lost[0].Consumer != "orders" || lost[0].Actor != "w1" || lost[0].Cause != sim.CauseAckBeforeProcess {
		t.Fatalf("lost events %+v", lost)
	}
}

func TestConsumerAtLeastOnceCrashBeforeProcessRedelivers(t *testing.T) {
	w := newWorld(t, 1, []faults.Rule{{Name: "boom", Point: faults.ConsumerCrashBeforeProcess, Nth: 1}},
		Config{Name: "orders", VisibilityTimeout: 4})
	w.consumer(ConsumerConfig{Name: "w1", Batch: 3})
	w.producer(producer.Config{Name: "p", Count: 3, Rate: 3})
	w.run(100)
	if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("orders")); err != nil {
		t.Fatal(err)
	}
	if w.q.Metrics().Redeliveries != 3 {
		t.Fatalf("redeliveries %d, want 3 (the whole dropped batch)", w.q.Metrics().Redeliveries)
	}
}

// TestSlowHandlerOutlivesVisibilityTimeout: a first attempt that takes 5
// ticks (handler.slow) keeps its message in flight, and its effect lands
// when the work ends. The visibility timeout of 3 runs out first, so the
// second instance receives the message concurrently and handles it at
// once: a naive handler applies it twice, and the first instance's late
// ack is stale. An idempotent handler skips the late repeat.
func TestSlowHandlerOutlivesVisibilityTimeout(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		slow := []faults.Rule{{Name: "slow", Point: faults.HandlerSlow, Param: 5, Count: 1}}
		w := newWorld(t, 1, slow, Config{Name: "orders", VisibilityTimeout: 3})
		h := sim.Effect("")
		if idempotent {
			h = sim.Idempotent(h, sim.ByMessageID)
		}
		c := w.consumer(ConsumerConfig{Name: "w", Instances: 2, Handler: h})
		w.producer(producer.Config{Name: "p", Count: 1})
		w.run(50)
		l := w.env.Ledger
		var got []string
		for _, e := range w.rec.Events() {
			switch e.Kind {
			case sim.KindReceived, sim.KindRedelivered, sim.KindProcessed, sim.KindSkipped, sim.KindAcked, sim.KindRejected:
				got = append(got, e.Tick.String()+" "+string(e.Kind)+" "+e.Actor)
			}
		}
		want := []string{"t=1 received w#1", "t=4 redelivered w#2", "t=4 processed w#2", "t=4 acked w#2", "t=6 processed w#1", "t=6 rejected "}
		if idempotent {
			want[4] = "t=6 skipped w#1"
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("idempotent=%v: events\n%s\nwant\n%s", idempotent, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if s := c.Stats(); s.StaleAcks != 1 || s.Received != 2 {
			t.Fatalf("stats %+v", s)
		}
		err := sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("orders"))
		if idempotent != (err == nil) {
			t.Fatalf("idempotent=%v: %v", idempotent, err)
		}
		if !idempotent && (l.DuplicateEffects("orders") != 1 || !strings.Contains(err.Error(), "effect applied 2 times")) {
			t.Fatalf("duplicate effects %d: %v", l.DuplicateEffects("orders"), err)
		}
	}
}

// TestSlowHandlerLivelock: when every attempt outlives the visibility
// timeout, the instances take turns forever and no ack ever holds; every
// late effect is applied, and the run never drains.
func TestSlowHandlerLivelock(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders", VisibilityTimeout: 3})
	w.consumer(ConsumerConfig{Name: "w", Instances: 2, Handler: &sim.Script{Ticks: 5}})
	w.producer(producer.Config{Name: "p", Count: 1})
	if err := w.w.RunUntil(w.drained, 30); !errors.Is(err, sim.ErrNotDone) {
		t.Fatalf("drained: %v", err)
	}
	if n := w.count(sim.KindProcessed); n < 8 || w.count(sim.KindAcked) != 0 {
		t.Fatalf("%d effects, %d acks", n, w.count(sim.KindAcked))
	}
	if err := sim.Check(w.env.Ledger, sim.AtMostOnce("orders")); err == nil {
		t.Fatal("at-most-once passed")
	}
}

// timed gives a handler a processing time.
type timed struct {
	sim.Handler
	t sim.Tick
}

func (x timed) Duration(*sim.Delivery) sim.Tick { return x.t }

func TestHandlerFaultPoints(t *testing.T) {
	rules := []faults.Rule{
		{Name: "flaky", Point: faults.HandlerTransient, Match: faults.Match{Key: "k-1"}, Count: 1, Param: 2},
		{Name: "perm", Point: faults.HandlerPermanent, Match: faults.Match{Key: "k-2"}},
		{Name: "poison", Point: faults.HandlerPoison, Match: faults.Match{Key: "k-3"}, Error: "bad json"},
		{Name: "slow", Point: faults.HandlerSlow, Match: faults.Match{Key: "k-4"}, Param: 6, Count: 1},
	}
	w := newWorld(t, 1, rules, Config{Name: "orders", VisibilityTimeout: 4})
	c := w.consumer(ConsumerConfig{Name: "w1", Retry: FixedRetry(1)})
	w.producer(producer.Config{Name: "p", Count: 4, KeyPattern: "k-%d", Rate: 4})
	w.run(100)
	l := w.env.Ledger
	if d := ledgerEntry(l, 1, "orders"); d.Delivered != 3 || d.Applied != 1 {
		t.Fatalf("transient with param 2: %+v", d)
	}
	for _, id := range []sim.ID{2, 3} {
		if r, _ := l.Record(id); r.State != sim.StateDeadLettered {
			t.Fatalf("%v: %v", id, r.State)
		}
	}
	// The slow message outlives its visibility timeout, but nobody received
	// it meanwhile, so its ack still holds (SQS semantics).
	if d := ledgerEntry(l, 4, "orders"); d.Applied != 1 || d.Delivered != 1 || d.FirstApplied-d.LastSeen != 6 || !d.Acked {
		t.Fatalf("slow: %+v", d)
	}
	if s := c.Stats(); s.DeadLettered != 2 || s.Retried != 2 || s.StaleAcks != 0 || s.Failed != 4 || s.Processed != 2 {
		t.Fatalf("stats %+v", s)
	}
	if err := sim.Check(l, sim.NoLoss(), sim.AtLeastOnce("")); err != nil {
		t.Fatal(err)
	}
	for _, e := range w.events(sim.KindFailed) {
		if e.Consumer != "orders" || e.Actor != "w1" {
			t.Fatalf("failed event %+v", e)
		}
	}
}

func TestConsumerExponentialRetryDelays(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders", VisibilityTimeout: 100})
	w.consumer(ConsumerConfig{Name: "w1", Handler: &sim.Script{Behaviour: sim.Transient, Failures: 3}, Retry: ExponentialRetry(2, 5, 0)})
	w.producer(producer.Config{Name: "p", Count: 1})
	w.run(100)
	var ticks []sim.Tick
	for _, e := range w.rec.Events() {
		if e.Kind == sim.KindReceived || e.Kind == sim.KindRedelivered {
			ticks = append(ticks, e.Tick)
		}
	}
	// Received at 1; nacked with 2, 4, 5 (capped).
	if want := []sim.Tick{1, 3, 7, 12}; !equalTicks(ticks, want) {
		t.Fatalf("receives at %v, want %v", ticks, want)
	}
}

func TestAtMostOnceFailureIsLostWithCause(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders"})
	h := sim.HandlerFunc(func(d *sim.Delivery) error {
		if d.Msg.ID == 2 {
			return sim.ErrPoison
		}
		d.Apply("")
		return nil
	})
	w.consumer(ConsumerConfig{Name: "w1", AckMode: AckBeforeProcess, Handler: h})
	w.producer(producer.Config{Name: "p", Count: 3})
	w.run(100)
	l := w.env.Ledger
	if ls := l.Losses(); len(ls) != 1 || ls[0].ID != 2 || ls[0].Cause != sim.CauseAckBeforeProcess {
		t.Fatalf("%+v", ls)
	}
	if w.dlq.Len() != 0 {
		t.Fatal("acked message cannot be dead-lettered")
	}
}

// TestSetHandlerChangesProcessingTime: a handler set with SetHandler
// brings its processing time with it, from untimed to timed and back, on
// a world with no fault rule: the first message is processed as it is
// received, the second, with a handler of 3 ticks, 3 ticks after, and the
// third, received as the second is done, at once again.
func TestSetHandlerChangesProcessingTime(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders", VisibilityTimeout: 10})
	c := w.consumer(ConsumerConfig{Name: "w1"})
	w.producer(producer.Config{Name: "p", Count: 3})
	_ = w.w.Run(1)
	if err := c.SetHandler(&sim.Script{Behaviour: sim.Slow, Ticks: 3}); err != nil {
		t.Fatal(err)
	}
	_ = w.w.Run(1)
	if err := c.SetHandler(sim.Effect("")); err != nil {
		t.Fatal(err)
	}
	w.run(20)
	var got []string
	for _, e := range w.rec.Events() {
		if e.Kind == sim.KindReceived || e.Kind == sim.KindProcessed {
			got = append(got, e.Tick.String()+" "+string(e.Kind))
		}
	}
	want := []string{"t=1 received", "t=1 processed", "t=2 received", "t=5 processed", "t=5 received", "t=5 processed"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSetHandlerFixesBug: a poison handler dead-letters everything; after
// SetHandler and a redrive every message is applied. A delivery already in
// progress finishes with the handler it started with.
func TestSetHandlerFixesBug(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders"})
	c := w.consumer(ConsumerConfig{Name: "w1", Handler: &sim.Script{Behaviour: sim.Poison, Ticks: 2}})
	w.producer(producer.Config{Name: "p", Count: 2})
	w.run(20)
	if w.dlq.Len() != 2 {
		t.Fatal(w.dlq.Len())
	}
	if err := c.SetHandler(nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatal(err)
	}
	if err := c.SetHandler(&sim.Script{Ticks: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatal(err)
	}
	if _, ok := c.Handler().(*sim.Script); !ok {
		t.Fatal("a refused handler replaced the old one")
	}
	if n, _ := w.dlq.Redrive(1); n != 1 {
		t.Fatal(n)
	}
	_ = w.w.Run(1) // the redriven message starts with the poison handler
	if err := c.SetHandler(sim.Effect("fixed")); err != nil {
		t.Fatal(err)
	}
	w.run(20)
	if w.dlq.Len() != 2 {
		t.Fatalf("the delivery in progress did not finish with the old handler: dlq %d", w.dlq.Len())
	}
	if n, _ := w.dlq.Redrive(10); n != 2 {
		t.Fatal(n)
	}
	w.run(20)
	l := w.env.Ledger
	if err := sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("orders")); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Redriven != 3 || st.Done != 2 || st.Origins != 2 {
		t.Fatalf("%+v", st)
	}
	for _, e := range w.events(sim.KindProcessed) {
		if e.Detail != "fixed" {
			t.Fatalf("processed %+v", e)
		}
	}
}

// TestInstancesStartAndPause: one NewConsumer call makes competing
// instances under the queue's logical consumer; nothing happens before the
// start tick or while the consumer is paused.
func TestInstancesStartAndPause(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders", Consumer: "billing"})
	c := w.consumer(ConsumerConfig{Name: "bill", Instances: 3, Start: 5})
	w.producer(producer.Config{Name: "p", Count: 12, Rate: 3})
	if got := c.Instances(); len(got) != 3 || got[0] != "bill#1" || got[2] != "bill#3" {
		t.Fatal(got)
	}
	if got := w.w.Components(); got[len(got)-1] != "consumer:bill" {
		t.Fatal(got)
	}
	_ = w.w.Run(4)
	if w.count(sim.KindReceived) != 0 || w.q.Len() != 12 {
		t.Fatalf("received before the start tick:\n%v", w.rec.Events())
	}
	_ = w.w.Run(1) // t=5: each instance takes one
	c.Pause()
	_ = w.w.Run(10)
	if !c.Paused() || w.count(sim.KindReceived) != 3 || w.q.Len() != 9 {
		t.Fatalf("paused consumer worked: received %d len %d", w.count(sim.KindReceived), w.q.Len())
	}
	c.Resume()
	w.run(20)
	actors := map[string]int{}
	for _, e := range w.events(sim.KindProcessed) {
		if e.Consumer != "billing" {
			t.Fatalf("processed for %q", e.Consumer)
		}
		actors[e.Actor]++
	}
	if len(actors) != 3 || c.Stats().Processed != 12 {
		t.Fatalf("effects by instance %v, stats %+v", actors, c.Stats())
	}
	if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("billing")); err != nil {
		t.Fatal(err)
	}
	if err := sim.Check(w.env.Ledger, sim.ExactlyOnce("bill")); err == nil {
		t.Fatal("the instances' pool name is not a logical consumer")
	}
}

// TestPausedSlowWorkFinishesAfterResume: work in progress stays with a
// paused consumer; its message becomes visible again after the visibility
// timeout, and the late effect is applied on Resume.
func TestPausedSlowWorkFinishesAfterResume(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders", VisibilityTimeout: 3})
	c := w.consumer(ConsumerConfig{Name: "w", Handler: &sim.Script{Ticks: 2}})
	w.producer(producer.Config{Name: "p", Count: 1})
	_ = w.w.Run(1)
	c.Pause()
	_ = w.w.Run(5)
	if c.Busy() != 1 || w.q.Metrics().Visible != 1 {
		t.Fatalf("busy %d metrics %+v", c.Busy(), w.q.Metrics())
	}
	c.Resume()
	w.run(20)
	// The late effect lands when the consumer resumes; nobody received
	// the visible message meanwhile, so the ack still holds.
	if c.Stats().StaleAcks != 0 || c.Stats().Processed != 1 {
		t.Fatalf("stats %+v", c.Stats())
	}
	if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("orders")); err != nil {
		t.Fatal(err)
	}
}

// meddler is a timed handler whose Duration, asked with zero ticks,
// records an effect on the delivery it is shown; Handle records how many
// effects the delivery it gets already carries.
type meddler struct{ carried []int }

func (m *meddler) Duration(d *sim.Delivery) sim.Tick {
	d.Apply("asked for its duration")
	return 0
}

func (m *meddler) Handle(d *sim.Delivery) error {
	m.carried = append(m.carried, d.Effects())
	d.Apply("")
	return nil
}

// TestHandleGetsAFreshDeliveryAfterDuration checks that a handler whose
// Duration changed the delivery it was asked with gets a delivery reset
// for the message when it is called, as it did when every call reset it:
// the consumer skips that reset only for handlers that have no Duration.
func TestHandleGetsAFreshDeliveryAfterDuration(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	q, _ := New(w, Config{Name: "orders"})
	h := &meddler{}
	c, err := NewConsumer(w, ConsumerConfig{Queue: q, Name: "billing", Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := q.Send(w.Env().NewMessage("k", []byte{byte(i)}, sim.Headers{}), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.RunUntil(func() bool { return q.Len() == 0 }, 20); err != nil {
		t.Fatal(err)
	}
	if len(h.carried) != 3 {
		t.Fatalf("handled %d messages, want 3", len(h.carried))
	}
	for i, n := range h.carried {
		if n != 0 {
			t.Errorf("message %d reached Handle carrying %d effects from Duration", i, n)
		}
	}
	if got := c.Stats().Processed; got != 3 {
		t.Errorf("processed %d, want 3", got)
	}
}
