package queue

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// world wires a queue (with a DLQ), producers and consumers into a World.
type world struct {
	t   *testing.T
	w   *sim.World
	env *sim.Env
	rec *sim.Recorder
	in  *faults.Injector
	q   *Queue
	dlq *Queue
	cs  []*Consumer
	p   *Producer
}

func newWorld(t *testing.T, seed uint64, rules []faults.Rule, qc Config) *world {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	rec := &sim.Recorder{}
	env.Trace.Attach(rec)
	in, err := faults.New(faults.Config{Env: env, Plan: faults.Plan{Rules: rules}})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := New(Config{Name: qc.Name + "-dlq", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	qc.Env, qc.Faults, qc.DeadLetter = env, in, dlq
	q, err := New(qc)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Add(sim.PhaseBroker, dlq.Name(), dlq)
	_ = w.Add(sim.PhaseBroker, q.Name(), q)
	return &world{t: t, w: w, env: env, rec: rec, in: in, q: q, dlq: dlq}
}

func (w *world) consumer(cc ConsumerConfig) *Consumer {
	w.t.Helper()
	cc.Queue = w.q
	c, err := NewConsumer(cc)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.w.Add(sim.PhaseConsumer, cc.Name, c); err != nil {
		w.t.Fatal(err)
	}
	w.cs = append(w.cs, c)
	return c
}

func (w *world) producer(pc ProducerConfig) *Producer {
	w.t.Helper()
	pc.Target = w.q
	p, err := NewProducer(pc)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.w.Add(sim.PhaseProducer, pc.Name, p); err != nil {
		w.t.Fatal(err)
	}
	w.p = p
	return p
}

// drained reports whether the producer is done and no work is left in the
// queue or in the consumers.
func (w *world) drained() bool {
	if w.p != nil && !w.p.Done() {
		return false
	}
	if w.q.Len() > 0 {
		return false
	}
	for _, c := range w.cs {
		if c.Busy() > 0 {
			return false
		}
	}
	return true
}

func (w *world) run(max sim.Tick) {
	w.t.Helper()
	if _, err := w.w.RunUntil(w.drained, max); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) count(kind sim.Kind) int {
	n := 0
	for _, e := range w.rec.Events() {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func TestConsumerAtLeastOnceCrashAfterEffectDuplicates(t *testing.T) {
	w := newWorld(t, 1, []faults.Rule{{Name: "boom", Point: faults.ConsumerCrashAfterEffect, Nth: 2}},
		Config{Name: "orders", VisibilityTimeout: 4})
	w.consumer(ConsumerConfig{Name: "w1"})
	w.producer(ProducerConfig{Name: "p", Count: 5, KeyPattern: "kunde-%d", Keys: 3})
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
	w.producer(ProducerConfig{Name: "p", Count: 5})
	w.run(100)
	l := w.env.Ledger
	if err := sim.Check(l, sim.AtMostOnce("orders")); err != nil {
		t.Fatal(err)
	}
	losses := l.Losses()
	if len(losses) != 1 || losses[0].Cause != sim.CauseAckBeforeProcess || losses[0].ID != 3 {
		t.Fatalf("losses %+v", losses)
	}
	if c.Stats().Lost != 1 || l.Stats().Applied != 4 {
		t.Fatalf("stats %+v applied %d", c.Stats(), l.Stats().Applied)
	}
}

func TestConsumerAtLeastOnceCrashBeforeProcessRedelivers(t *testing.T) {
	w := newWorld(t, 1, []faults.Rule{{Name: "boom", Point: faults.ConsumerCrashBeforeProcess, Nth: 1}},
		Config{Name: "orders", VisibilityTimeout: 4})
	w.consumer(ConsumerConfig{Name: "w1", Batch: 3})
	w.producer(ProducerConfig{Name: "p", Count: 3, Rate: 3})
	w.run(100)
	if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("orders")); err != nil {
		t.Fatal(err)
	}
	if w.q.Metrics().Redeliveries != 3 {
		t.Fatalf("redeliveries %d, want 3 (the whole dropped batch)", w.q.Metrics().Redeliveries)
	}
}

func TestSlowHandlerOutlivesVisibilityTimeout(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders", VisibilityTimeout: 3})
	slow := w.consumer(ConsumerConfig{Name: "slow", Handler: Slow(5)})
	w.producer(ProducerConfig{Name: "p", Count: 1})
	_ = w.w.Run(1)
	fast := w.consumer(ConsumerConfig{Name: "fast"})
	w.run(50)
	l := w.env.Ledger
	if got := l.DuplicateEffects("orders"); got != 1 {
		t.Fatalf("duplicate effects %d, want 1", got)
	}
	if slow.Stats().StaleAcks != 1 || fast.Stats().Processed != 1 {
		t.Fatalf("slow %+v fast %+v", slow.Stats(), fast.Stats())
	}
	rejected := 0
	for _, e := range w.rec.Events() {
		if e.Kind == sim.KindRejected && e.Msg == 1 {
			rejected++
		}
	}
	if rejected != 1 {
		t.Fatal("stale ack not traced")
	}
}

func TestHandlerFaultPoints(t *testing.T) {
	rules := []faults.Rule{
		{Name: "flaky", Point: faults.HandlerTransient, Match: faults.Match{Key: "k-0"}, Count: 1, Param: 2},
		{Name: "perm", Point: faults.HandlerPermanent, Match: faults.Match{Key: "k-1"}},
		{Name: "poison", Point: faults.HandlerPoison, Match: faults.Match{Key: "k-2"}, Error: "bad json"},
		{Name: "slow", Point: faults.HandlerSlow, Match: faults.Match{Key: "k-3"}, Param: 6, Count: 1},
	}
	w := newWorld(t, 1, rules, Config{Name: "orders", VisibilityTimeout: 4})
	c := w.consumer(ConsumerConfig{Name: "w1", Retry: FixedRetry(1)})
	w.producer(ProducerConfig{Name: "p", Count: 4, KeyPattern: "k-%d", Rate: 4})
	w.run(100)
	l := w.env.Ledger
	if d := l.Delivery(1, w.q.ConsumerRef()); d.Delivered != 3 || d.Applied != 1 {
		t.Fatalf("transient with param 2: %+v", d)
	}
	for _, id := range []sim.ID{2, 3} {
		if r, _ := l.Record(id); r.State != sim.StateDeadLettered {
			t.Fatalf("%v: %v", id, r.State)
		}
	}
	// The slow message outlives its visibility timeout, but nobody received
	// it meanwhile, so its ack still holds (SQS semantics).
	if d := l.Delivery(4, w.q.ConsumerRef()); d.Applied != 1 || d.Delivered != 1 || d.FirstApplied-d.LastSeen != 6 {
		t.Fatalf("slow: %+v", d)
	}
	if s := c.Stats(); s.DeadLettered != 2 || s.Retried != 2 || s.StaleAcks != 0 {
		t.Fatalf("stats %+v", s)
	}
	if err := sim.Check(l, sim.NoLoss(), sim.AtLeastOnce("")); err != nil {
		t.Fatal(err)
	}
}

func TestConsumerExponentialRetryDelays(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders", VisibilityTimeout: 100})
	w.consumer(ConsumerConfig{Name: "w1", Handler: Transient(3), Retry: ExponentialRetry(2, 5, 0)})
	w.producer(ProducerConfig{Name: "p", Count: 1})
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
	w.consumer(ConsumerConfig{Name: "w1", AckMode: AckBeforeProcess, Handler: Select(func(m sim.Message) bool { return m.ID == 2 }, Poison(), Succeed())})
	w.producer(ProducerConfig{Name: "p", Count: 3})
	w.run(100)
	l := w.env.Ledger
	if ls := l.Losses(); len(ls) != 1 || ls[0].ID != 2 || ls[0].Cause != sim.CauseAckBeforeProcess {
		t.Fatalf("%+v", ls)
	}
	if w.dlq.Len() != 0 {
		t.Fatal("acked message cannot be dead-lettered")
	}
}

func TestProducerRetriesWhileBrokerDown(t *testing.T) {
	w := newWorld(t, 1, []faults.Rule{{Name: "down", Point: faults.BrokerUnavailable, From: 2, Until: 5}}, Config{Name: "orders"})
	w.consumer(ConsumerConfig{Name: "w1", Batch: 10})
	p := w.producer(ProducerConfig{Name: "p", Count: 6, Rate: 2, KeyPattern: "kunde-%d", Keys: 2, Type: "order.placed"})
	w.run(100)
	if p.Refused() == 0 || !p.Done() || p.Produced() != 6 {
		t.Fatalf("refused %d produced %d", p.Refused(), p.Produced())
	}
	if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("orders"), sim.OrderedPerKey("orders")); err != nil {
		t.Fatal(err)
	}
	if p.Key(3) != "kunde-1" {
		t.Fatal(p.Key(3))
	}
	r, _ := w.env.Ledger.Record(1)
	if r.Type != "order.placed" {
		t.Fatal(r.Type)
	}
}

func TestSetHandlerFixesBug(t *testing.T) {
	w := newWorld(t, 1, nil, Config{Name: "orders"})
	c := w.consumer(ConsumerConfig{Name: "w1", Handler: Poison()})
	w.producer(ProducerConfig{Name: "p", Count: 2})
	w.run(20)
	if w.dlq.Len() != 2 {
		t.Fatal(w.dlq.Len())
	}
	if err := c.SetHandler(nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatal(err)
	}
	if err := c.SetHandler(Slow(0)); !errors.Is(err, ErrInvalidConfig) {
		t.Fatal(err)
	}
	_ = c.SetHandler(Succeed())
	if n, _ := w.dlq.Redrive(10); n != 2 {
		t.Fatal(n)
	}
	w.run(20)
	if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.AtLeastOnce("orders")); err != nil {
		t.Fatal(err)
	}
	if st := w.env.Ledger.Stats(); st.Redriven != 2 || st.Done != 2 {
		t.Fatalf("%+v", st)
	}
}
