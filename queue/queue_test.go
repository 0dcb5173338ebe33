package queue

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

type rig struct {
	t   *testing.T
	w   *sim.World
	env *sim.Env
	rec *sim.Recorder
}

func newRig(t *testing.T) *rig {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec := &sim.Recorder{}
	w.Trace().Attach(rec)
	return &rig{t: t, w: w, env: w.Env(), rec: rec}
}

func (r *rig) queue(cfg Config) *Queue {
	r.t.Helper()
	q, err := New(r.w, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	return q
}

// to runs the world's ticks up to tick t: every queue (and consumer) the
// rig made steps on each tick.
func (r *rig) to(t sim.Tick) {
	for r.w.Now() < t {
		r.w.Tick()
	}
}

// ledgerEntry returns what the ledger knows of message id for the consumer
// called name.
func ledgerEntry(l *sim.Ledger, id sim.ID, name string) sim.Entry {
	return l.Entry(id, l.Consumer(name))
}

func (r *rig) send(q *Queue, key string, delay sim.Tick) sim.Message {
	r.t.Helper()
	m := r.env.NewMessage(key, []byte("body-"+key), sim.Headers{})
	if err := q.Send(m, delay); err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *rig) recv(q *Queue, max int) []Delivery {
	r.t.Helper()
	ds, err := q.Receive("w1", max)
	if err != nil {
		r.t.Fatal(err)
	}
	return ds
}

func (r *rig) events(kind sim.Kind) []sim.Event {
	var out []sim.Event
	for _, e := range r.rec.Events() {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (r *rig) text() string {
	var b []byte
	for _, e := range r.rec.Events() {
		b = sim.AppendText(b, &e)
		b = append(b, '\n')
	}
	return string(b)
}

func TestVisibilityTimeoutRedeliversWithCountTwo(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 5})
	m := r.send(q, "a", 0)
	r.to(1)
	ds := r.recv(q, 10)
	if len(ds) != 1 || ds[0].ReceiveCount != 1 || ds[0].Message.ID != m.ID {
		t.Fatalf("first receive = %+v", ds)
	}
	r.to(5)
	if ds := r.recv(q, 10); len(ds) != 0 {
		t.Fatalf("visible before the timeout ran out: %+v", ds)
	}
	if got := q.Metrics().InFlight; got != 1 {
		t.Fatalf("in flight = %d, want 1", got)
	}
	r.to(6)
	ds = r.recv(q, 10)
	if len(ds) != 1 || ds[0].ReceiveCount != 2 {
		t.Fatalf("after exactly the timeout: %+v", ds)
	}
	exp := r.events(sim.KindVisibilityExpired)
	red := r.events(sim.KindRedelivered)
	if len(exp) != 1 || exp[0].Tick != 6 || len(red) != 1 || red[0].Tick != 6 || red[0].Attempt != 2 {
		t.Fatalf("trace:\n%s", r.text())
	}
	if d := ledgerEntry(r.env.Ledger, m.ID, q.Consumer()); d.Delivered != 2 || !d.Expected {
		t.Fatalf("ledger delivered = %d, want 2", d.Delivered)
	}
	if got := q.Metrics(); got.Redeliveries != 1 || got.VisibilityExpired != 1 || got.Receives != 2 {
		t.Fatalf("metrics = %+v", got)
	}
}

func TestStaleReceiptRejectedAndTraced(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 3})
	r.send(q, "a", 0)
	old := r.recv(q, 1)[0]
	r.to(3)
	fresh := r.recv(q, 1)[0]
	err := q.Ack(old.Receipt)
	if !errors.Is(err, ErrStaleReceipt) {
		t.Fatalf("ack with the old receipt: %v", err)
	}
	if !strings.Contains(err.Error(), "received again since") {
		t.Errorf("error does not say why: %v", err)
	}
	rej := r.events(sim.KindRejected)
	if len(rej) != 1 || rej[0].Msg != old.Message.ID || !strings.Contains(rej[0].Detail, "stale") {
		t.Fatalf("rejection not traced:\n%s", r.text())
	}
	if err := q.Nack(old.Receipt, 0); !errors.Is(err, ErrStaleReceipt) {
		t.Fatalf("nack with the old receipt: %v", err)
	}
	if err := q.ChangeVisibility(old.Receipt, 4); !errors.Is(err, ErrStaleReceipt) {
		t.Fatalf("change visibility with the old receipt: %v", err)
	}
	if err := q.Ack(fresh.Receipt); err != nil {
		t.Fatal(err)
	}
	if err := q.Ack(fresh.Receipt); !errors.Is(err, ErrStaleReceipt) {
		t.Fatalf("double ack: %v", err)
	}
	if err := q.Ack(Receipt{}); !errors.Is(err, ErrUnknownReceipt) {
		t.Fatalf("zero receipt: %v", err)
	}
	other := r.queue(Config{Name: "other"})
	if err := other.Ack(fresh.Receipt); !errors.Is(err, ErrUnknownReceipt) {
		t.Fatalf("receipt of another queue: %v", err)
	}
	if got := q.Metrics().Rejected; got != 5 {
		t.Fatalf("rejected = %d, want 5", got)
	}
}

func TestAckAfterExpiryBeforeRedeliverySucceeds(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 2})
	r.send(q, "a", 0)
	d := r.recv(q, 1)[0]
	r.to(5)
	if q.Metrics().Visible != 1 {
		t.Fatal("not visible after expiry")
	}
	if err := q.Ack(d.Receipt); err != nil {
		t.Fatalf("SQS accepts a receipt until the next receive: %v", err)
	}
	if q.Len() != 0 || len(r.recv(q, 1)) != 0 {
		t.Fatal("message still there")
	}
	if err := q.Nack(d.Receipt, 0); !errors.Is(err, ErrStaleReceipt) {
		t.Fatal(err)
	}
}

func TestChangeVisibilityCountsFromTheCallOnly(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 10})
	r.send(q, "a", 0)
	r.to(1)
	d := r.recv(q, 1)[0]
	r.to(2)
	if err := q.ChangeVisibility(d.Receipt, 3); err != nil {
		t.Fatal(err)
	}
	r.to(4)
	if len(r.recv(q, 1)) != 0 {
		t.Fatal("visible before 2+3")
	}
	r.to(5)
	d2 := r.recv(q, 1)
	if len(d2) != 1 || d2[0].ReceiveCount != 2 {
		t.Fatalf("at 2+3: %+v", d2)
	}
	// The next delivery uses the queue's timeout again, not 3.
	r.to(14)
	if len(r.recv(q, 1)) != 0 {
		t.Fatal("the changed timeout was remembered for the next receive")
	}
	r.to(15)
	if d3 := r.recv(q, 1); len(d3) != 1 || d3[0].ReceiveCount != 3 {
		t.Fatalf("at 5+10: %+v", d3)
	}
	if ev := r.events(sim.KindVisibility); len(ev) != 1 || ev[0].Detail != "timeout 3" {
		t.Fatalf("trace:\n%s", r.text())
	}
	// Timeout 0 makes it visible now.
	d4 := r.recv(q, 1)
	if len(d4) != 0 {
		t.Fatal("two deliveries in flight")
	}
}

func TestChangeVisibilityZeroAndNackDelay(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 10})
	r.send(q, "a", 0)
	d := r.recv(q, 1)[0]
	if err := q.ChangeVisibility(d.Receipt, 0); err != nil {
		t.Fatal(err)
	}
	d = r.recv(q, 1)[0]
	if d.ReceiveCount != 2 {
		t.Fatalf("count %d", d.ReceiveCount)
	}
	if err := q.Nack(d.Receipt, 3); err != nil {
		t.Fatal(err)
	}
	if m := q.Metrics(); m.Delayed != 1 || m.InFlight != 0 || m.Nacks != 1 {
		t.Fatalf("metrics %+v", m)
	}
	r.to(2)
	if len(r.recv(q, 1)) != 0 {
		t.Fatal("visible during the nack delay")
	}
	r.to(3)
	d = r.recv(q, 1)[0]
	if d.ReceiveCount != 3 {
		t.Fatalf("count %d", d.ReceiveCount)
	}
	if err := q.Nack(d.Receipt, -1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	if err := q.ChangeVisibility(d.Receipt, -1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	r.to(20)
	if err := q.Nack(d.Receipt, 0); !errors.Is(err, ErrNotInFlight) {
		t.Fatalf("nack after expiry: %v", err)
	}
}

func TestSendWithDelay(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders"})
	r.send(q, "late", 4)
	r.send(q, "now", 0)
	if m := q.Metrics(); m.Delayed != 1 || m.Visible != 1 {
		t.Fatalf("%+v", m)
	}
	if ds := r.recv(q, 10); len(ds) != 1 || ds[0].Message.Key != "now" {
		t.Fatalf("%+v", ds)
	}
	r.to(3)
	if len(r.recv(q, 10)) != 0 {
		t.Fatal("delayed message visible early")
	}
	r.to(4)
	if ds := r.recv(q, 10); len(ds) != 1 || ds[0].Message.Key != "late" {
		t.Fatalf("%+v", ds)
	}
	if err := q.Send(sim.Message{}, -1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	if err := q.Send(sim.Message{}, MaxDuration+1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
}

func TestRedrivePolicyMovesPoisonAndOthersComplete(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	rec := &sim.Recorder{}
	env.Trace.Attach(rec)
	dlq, _ := New(w, Config{Name: "orders-dlq"})
	q, err := New(w, Config{Name: "orders", VisibilityTimeout: 3, DeadLetter: dlq, MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	// An unclassified error is transient; RetryNone leaves retries to the
	// broker, so only the redrive policy stops the poison message.
	h := sim.HandlerFunc(func(d *sim.Delivery) error {
		if d.Msg.Key == "bad" {
			return errors.New("cannot parse body")
		}
		d.Apply("")
		return nil
	})
	if _, err := NewConsumer(w, ConsumerConfig{Queue: q, Name: "w1", Handler: h}); err != nil {
		t.Fatal(err)
	}
	bad := env.NewMessage("bad", []byte("{"), sim.Headers{})
	_ = q.Send(bad, 0)
	var good []sim.ID
	for i := 0; i < 4; i++ {
		m := env.NewMessage("ok", []byte("fine"), sim.Headers{})
		good = append(good, m.ID)
		_ = q.Send(m, 0)
	}
	if err := w.RunUntil(func() bool { return q.Len() == 0 }, 100); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 0 || dlq.Len() != 1 {
		t.Fatalf("queue %d, dlq %d", q.Len(), dlq.Len())
	}
	l := env.Ledger
	if r, _ := l.Record(bad.ID); r.State != sim.StateDeadLettered {
		t.Fatalf("poison state %v", r.State)
	}
	if d := ledgerEntry(l, bad.ID, "orders"); d.Delivered != 3 || d.Applied != 0 {
		t.Fatalf("poison delivery %+v", d)
	}
	for _, id := range good {
		if r, _ := l.Record(id); r.State != sim.StateDone {
			t.Fatalf("%v state %v", id, r.State)
		}
	}
	if err := sim.Check(l, sim.NoLoss(), sim.AtLeastOnce("orders"), sim.ExactlyOnce("orders")); err != nil {
		t.Fatal(err)
	}
	dl := 0
	for _, e := range rec.Events() {
		if e.Kind == sim.KindDeadLettered {
			dl++
			if e.Msg != bad.ID || e.Attempt != 3 {
				t.Fatalf("dead_lettered event %+v", e)
			}
		}
	}
	if dl != 1 || q.Metrics().DLQDepth != 1 || q.Metrics().DeadLettered != 1 {
		t.Fatalf("dead-lettered %d, metrics %+v", dl, q.Metrics())
	}
}

func TestClassificationDeadLettersAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    sim.Handler
		want int // receives before the DLQ
	}{
		{"poison", &sim.Script{Behaviour: sim.Poison}, 1},
		{"permanent", &sim.Script{Behaviour: sim.Permanent}, 1},
		{"transient-max-attempts", &sim.Script{Behaviour: sim.Transient, Failures: 100}, 4},
		{"unclassified-error-max-attempts", sim.HandlerFunc(func(*sim.Delivery) error { return errors.New("boom") }), 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			dlq := r.queue(Config{Name: "dlq"})
			q := r.queue(Config{Name: "orders", VisibilityTimeout: 5, DeadLetter: dlq})
			c, err := NewConsumer(r.w, ConsumerConfig{Queue: q, Name: "w1", Handler: tc.h, MaxAttempts: 4, Retry: FixedRetry(1)})
			if err != nil {
				t.Fatal(err)
			}
			m := r.send(q, "k", 0)
			for i := 0; i < 30 && q.Len() > 0; i++ {
				r.to(r.env.Now() + 1)
			}
			if dlq.Len() != 1 {
				t.Fatalf("dlq %d\n%s", dlq.Len(), r.text())
			}
			if d := ledgerEntry(r.env.Ledger, m.ID, "orders"); int(d.Delivered) != tc.want {
				t.Fatalf("delivered %d, want %d", d.Delivered, tc.want)
			}
			if s := c.Stats(); s.DeadLettered != 1 || s.Failed != tc.want {
				t.Fatalf("stats %+v", s)
			}
			if err := sim.Check(r.env.Ledger, sim.NoLoss(), sim.AtLeastOnce("orders")); err != nil {
				t.Fatalf("a parked message is accounted for: %v", err)
			}
			if o := r.env.Ledger.Outcomes("orders"); len(o) != 1 || o[0].Verdict != sim.VerdictParked {
				t.Fatalf("outcomes %+v", o)
			}
		})
	}
}

func TestDLQRedriveMakesNewMessage(t *testing.T) {
	r := newRig(t)
	dlq := r.queue(Config{Name: "dlq"})
	q := r.queue(Config{Name: "orders", DeadLetter: dlq, MaxReceiveCount: 1, VisibilityTimeout: 2})
	orig := r.send(q, "k", 0)
	r.recv(q, 1)
	r.to(2)
	if ds := r.recv(q, 1); len(ds) != 0 {
		t.Fatalf("received past the redrive policy: %+v", ds)
	}
	if dlq.Len() != 1 {
		t.Fatal("not in the DLQ")
	}
	if _, err := dlq.Redrive(0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	n, err := dlq.Redrive(10)
	if err != nil || n != 1 {
		t.Fatalf("redrive = %d, %v", n, err)
	}
	ds := r.recv(q, 1)
	if len(ds) != 1 {
		t.Fatal("redriven message not visible")
	}
	d := ds[0]
	if d.Message.ID == orig.ID || d.ReceiveCount != 1 || string(d.Message.Body) != string(orig.Body) {
		t.Fatalf("redriven delivery %+v", d)
	}
	if v, _ := d.Message.Headers.Get("redriven-from"); v != orig.ID.String() {
		t.Fatalf("redriven-from = %q", v)
	}
	if d.Message.Origin != orig.ID {
		t.Fatalf("redriven message's origin %v", d.Message.Origin)
	}
	l := r.env.Ledger
	ro, _ := l.Record(orig.ID)
	rn, _ := l.Record(d.Message.ID)
	if ro.State != sim.StateRedriven || ro.Redriven != d.Message.ID || rn.Origin != orig.ID || rn.Where != q.Where() || l.Root(d.Message.ID) != orig.ID {
		t.Fatalf("ledger link: orig %+v new %+v", ro, rn)
	}
	ev := r.events(sim.KindRedriven)
	if len(ev) != 1 || ev[0].Msg != d.Message.ID || ev[0].Origin != orig.ID || ev[0].Consumer != "orders" || ev[0].Where != q.Where() {
		t.Fatalf("trace:\n%s", r.text())
	}
	if len(r.events(sim.KindSent)) != 1 {
		t.Fatalf("a redrive is not a send:\n%s", r.text())
	}
	if err := q.Ack(d.Receipt); err != nil {
		t.Fatal(err)
	}
	// Both copies are judged as one origin. Receiving and acking by hand
	// records no effect, so the origin is not applied.
	o := l.Outcomes("orders")
	if len(o) != 1 || o[0].Origin != orig.ID || o[0].Copies != 2 || o[0].Deliveries != 2 || !o[0].Acked || o[0].Effects != 0 {
		t.Fatalf("outcomes %+v", o)
	}
	// RedriveTo and messages without a source.
	direct := r.send(dlq, "direct", 0)
	if n, _ := dlq.Redrive(10); n != 0 || dlq.Len() != 1 {
		t.Fatalf("sourceless message moved: %d", n)
	}
	other := r.queue(Config{Name: "other"})
	if n, err := dlq.RedriveTo(other, 10); n != 1 || err != nil {
		t.Fatalf("RedriveTo = %d, %v", n, err)
	}
	if rec, _ := r.env.Ledger.Record(direct.ID); rec.State != sim.StateRedriven {
		t.Fatal(rec.State)
	}
	if _, err := dlq.RedriveTo(nil, 1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
}

func TestRetentionExpires(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", Retention: 5, VisibilityTimeout: 100})
	a := r.send(q, "a", 0)
	r.to(2)
	b := r.send(q, "b", 0)
	r.recv(q, 1) // a is in flight: retention deletes it anyway
	r.to(4)
	if q.Metrics().OldestAge != 4 {
		t.Fatalf("oldest age %d", q.Metrics().OldestAge)
	}
	r.to(5)
	if q.Len() != 1 || q.Metrics().Expired != 1 || q.Metrics().InFlight != 0 {
		t.Fatalf("after 5 ticks: len %d %+v", q.Len(), q.Metrics())
	}
	r.to(7)
	if q.Len() != 0 || q.Metrics().OldestAge != 0 {
		t.Fatal("b not expired")
	}
	l := r.env.Ledger
	for _, id := range []sim.ID{a.ID, b.ID} {
		if rec, _ := l.Record(id); rec.State != sim.StateExpired {
			t.Fatalf("%v: %v", id, rec.State)
		}
	}
	losses := l.Losses()
	if len(losses) != 2 || losses[0].Cause != sim.CauseRetention || losses[1].Cause != sim.CauseRetention {
		t.Fatalf("losses %+v", losses)
	}
	if ev := r.events(sim.KindExpired); len(ev) != 2 || ev[0].Cause != sim.CauseRetention {
		t.Fatalf("trace:\n%s", r.text())
	}
}

func TestPurge(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders"})
	r.send(q, "a", 0)
	r.send(q, "b", 3)
	r.send(q, "c", 0)
	r.recv(q, 1)
	if n := q.Purge(); n != 3 {
		t.Fatalf("purged %d", n)
	}
	if m := q.Metrics(); m.Visible+m.InFlight+m.Delayed != 0 || m.Purged != 3 || q.Len() != 0 {
		t.Fatalf("%+v", m)
	}
	st := r.env.Ledger.Stats()
	if st.Purged != 3 || st.Lost != 3 || st.LostBy[0].Cause != sim.CausePurge {
		t.Fatalf("%+v", st)
	}
	r.to(10)
	if len(r.recv(q, 10)) != 0 {
		t.Fatal("purged message came back")
	}
	r.send(q, "d", 0)
	if len(r.recv(q, 10)) != 1 {
		t.Fatal("queue unusable after purge")
	}
}

func TestFIFOGroupBlocking(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders.fifo", FIFO: true, VisibilityTimeout: 5})
	a1 := r.send(q, "A", 0)
	a2 := r.send(q, "A", 0)
	b1 := r.send(q, "B", 0)
	ds := append(r.recv(q, 1), r.recv(q, 1)...)
	if len(ds) != 2 || ds[0].Message.ID != a1.ID || ds[1].Message.ID != b1.ID {
		t.Fatalf("first receives %+v", ds)
	}
	if len(r.recv(q, 10)) != 0 {
		t.Fatal("a2 delivered while a1 is in flight")
	}
	if err := q.Ack(ds[1].Receipt); err != nil {
		t.Fatal(err)
	}
	// Nack with delay keeps the group busy and a1 at its head.
	if err := q.Nack(ds[0].Receipt, 2); err != nil {
		t.Fatal(err)
	}
	if len(r.recv(q, 10)) != 0 {
		t.Fatal("group unblocked during the nack delay")
	}
	r.to(2)
	d := r.recv(q, 1)
	if len(d) != 1 || d[0].Message.ID != a1.ID || d[0].ReceiveCount != 2 {
		t.Fatalf("after the delay %+v", d)
	}
	// Visibility expiry returns a1 to the head again.
	r.to(7)
	d = r.recv(q, 1)
	if len(d) != 1 || d[0].Message.ID != a1.ID || d[0].ReceiveCount != 3 {
		t.Fatalf("after expiry %+v", d)
	}
	if err := q.Ack(d[0].Receipt); err != nil {
		t.Fatal(err)
	}
	d = r.recv(q, 10)
	if len(d) != 1 || d[0].Message.ID != a2.ID {
		t.Fatalf("a2 after a1's ack %+v", d)
	}
	if err := q.Ack(d[0].Receipt); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 0 || len(q.groups) != 0 {
		t.Fatalf("len %d groups %d", q.Len(), len(q.groups))
	}
}

func TestFIFODedupWindow(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "o.fifo", FIFO: true, DedupWindow: 5})
	m := r.send(q, "A", 0)
	if err := q.Send(m, 0); err != nil {
		t.Fatal(err)
	}
	other := r.env.NewMessage("A", nil, sim.Headers{}.With(DedupHeader, "x"))
	same := r.env.NewMessage("A", nil, sim.Headers{}.With(DedupHeader, "x"))
	_ = q.Send(other, 0)
	_ = q.Send(same, 0)
	dd := r.events(sim.KindDeduplicated)
	if q.Len() != 2 || q.Metrics().Deduplicated != 2 || len(dd) != 2 {
		t.Fatalf("len %d %+v", q.Len(), q.Metrics())
	}
	// A re-send of the same message is the same copy; a new message with a
	// known deduplication ID repeats the first one and is absorbed into it.
	if dd[0].Msg != m.ID || dd[0].Origin != 0 || dd[1].Msg != same.ID || dd[1].Origin != other.ID {
		t.Fatalf("trace:\n%s", r.text())
	}
	l := r.env.Ledger
	if rs, _ := l.Record(same.ID); rs.State != sim.StateAbsorbed || rs.Origin != other.ID {
		t.Fatalf("absorbed copy %+v", rs)
	}
	if rm, _ := l.Record(m.ID); rm.State != sim.StatePending || rm.Sends != 1 {
		t.Fatalf("re-sent copy %+v", rm)
	}
	r.to(5)
	_ = q.Send(m, 0)
	if q.Len() != 3 {
		t.Fatal("dedup window did not end")
	}
	if len(q.dedup) != 1 {
		t.Fatalf("dedup map keeps %d ids", len(q.dedup))
	}
}

func TestMetrics(t *testing.T) {
	r := newRig(t)
	dlq := r.queue(Config{Name: "dlq"})
	q := r.queue(Config{Name: "orders", DeadLetter: dlq})
	r.send(q, "a", 0)
	r.send(q, "b", 0)
	r.send(q, "c", 2)
	r.to(3)
	r.send(q, "d", 5)
	ds := r.recv(q, 1)
	_ = q.DeadLetter(ds[0].Receipt, "by hand")
	ds = r.recv(q, 1)
	m := q.Metrics()
	want := Metrics{Visible: 1, InFlight: 1, Delayed: 1, DLQDepth: 1, OldestAge: 3, Sent: 4, Receives: 2, DeadLettered: 1}
	if m != want {
		t.Fatalf("metrics\n got %+v\nwant %+v", m, want)
	}
	_ = q.Ack(ds[0].Receipt)
	if m := q.Metrics(); m.Acks != 1 || m.InFlight != 0 || m.OldestAge != 3 {
		t.Fatalf("%+v", m)
	}
}

func TestBrokerFaults(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	rec := &sim.Recorder{}
	env.Trace.Attach(rec)
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "down", Point: faults.BrokerUnavailable, From: 1, Until: 3},
		{Name: "twice", Point: faults.BrokerDuplicate, Match: faults.Match{Key: "dup"}, Count: 1},
		{Name: "slow", Point: faults.BrokerDelay, Match: faults.Match{Key: "late"}, Param: 4},
		{Name: "swap", Point: faults.BrokerReorder, Match: faults.Match{Key: "first"}, Count: 1},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := New(w, Config{Name: "orders", Faults: in})
	step := func() { w.Tick() }
	step() // t=1: down
	m := env.NewMessage("x", nil, sim.Headers{})
	err = q.Send(m, 0)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrConnection) || !errors.Is(err, sim.ErrUnavailable) {
		t.Fatalf("send while down: %v", err)
	}
	if _, err := q.Receive("w", 1); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("receive while down: %v", err)
	}
	if q.Len() != 0 {
		t.Fatal("accepted while down")
	}
	step()
	step() // t=3: up
	if err := q.Send(m, 0); err != nil {
		t.Fatal(err)
	}
	_, _ = q.Receive("w", 1)
	// Duplicate: two entries, two receipts.
	dup := env.NewMessage("dup", nil, sim.Headers{})
	_ = q.Send(dup, 0)
	d1, _ := q.Receive("w", 1)
	d2, _ := q.Receive("w", 1)
	if len(d1) != 1 || len(d2) != 1 || d1[0].Message.ID != dup.ID || d2[0].Message.ID != dup.ID || d1[0].Receipt == d2[0].Receipt {
		t.Fatalf("duplicate: %+v %+v", d1, d2)
	}
	if env.Ledger.Duplicates("orders") != 1 || q.Metrics().Duplicated < 1 {
		t.Fatal("duplicate not booked")
	}
	_ = q.Ack(d1[0].Receipt)
	_ = q.Ack(d2[0].Receipt)
	// Delay.
	_ = q.Send(env.NewMessage("late", nil, sim.Headers{}), 0)
	if q.Metrics().Delayed != 1 {
		t.Fatal("broker.delay did not delay")
	}
	// Reorder.
	first := env.NewMessage("first", nil, sim.Headers{})
	second := env.NewMessage("second", nil, sim.Headers{})
	_ = q.Send(first, 0)
	_ = q.Send(second, 0)
	ds, _ := q.Receive("w", 1)
	ds2, _ := q.Receive("w", 1)
	if ds[0].Message.ID != second.ID || ds2[0].Message.ID != first.ID {
		t.Fatalf("reorder: got %v then %v", ds[0].Message.ID, ds2[0].Message.ID)
	}
	faultsSeen := map[string]bool{}
	for _, e := range rec.Events() {
		if e.Kind == sim.KindFault {
			faultsSeen[e.Rule] = true
		}
	}
	for _, r := range []string{"down", "twice", "slow", "swap"} {
		if !faultsSeen[r] {
			t.Errorf("fault %s not traced", r)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	r := newRig(t)
	dlq := r.queue(Config{Name: "dlq"})
	other, _ := sim.New(sim.Config{})
	foreign, err := New(other, Config{Name: "foreign"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{
		{},
		{Name: "q", VisibilityTimeout: -1},
		{Name: "q", VisibilityTimeout: MaxDuration + 1},
		{Name: "q", Retention: -1},
		{Name: "q", DedupWindow: 3},
		{Name: "q", FIFO: true, DedupWindow: -3},
		{Name: "q", MaxReceiveCount: -1},
		{Name: "q", MaxReceiveCount: 2},
		{Name: "q", DeadLetter: &Queue{}},
		{Name: "q", DeadLetter: foreign},
		{Name: "dlq"}, // the world already has a queue:dlq
	} {
		if _, err := New(r.w, c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v", c, err)
		}
	}
	if _, err := New(nil, Config{Name: "q"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New without a world: %v", err)
	}
	q, err := New(r.w, Config{Name: "q", DeadLetter: dlq, MaxReceiveCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	if q.Env() != r.env || q.Config().VisibilityTimeout != DefaultVisibilityTimeout || q.Config().Consumer != "q" || q.Consumer() != "q" || q.Phase() != sim.PhaseBroker {
		t.Fatalf("%+v", q.Config())
	}
	if got := r.w.Components(); len(got) != 2 || got[0] != "queue:dlq" || got[1] != "queue:q" {
		t.Fatalf("components %v", got)
	}
	if _, err := q.Receive("w", 0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	for _, c := range []ConsumerConfig{
		{Name: "w"},
		{Queue: q},
		{Queue: q, Name: "w", Batch: -1},
		{Queue: q, Name: "w", Instances: -1},
		{Queue: q, Name: "w", Instances: MaxInstances + 1},
		{Queue: q, Name: "w", Start: -1},
		{Queue: q, Name: "w", AckMode: 9},
		{Queue: q, Name: "w", MaxAttempts: -1},
		{Queue: q, Name: "w", RestartDelay: -1},
		{Queue: q, Name: "w", Retry: FixedRetry(0)},
		{Queue: q, Name: "w", Retry: ExponentialRetry(2, 1, 0)},
		{Queue: q, Name: "w", Retry: ExponentialRetry(2, 8, 1.5)},
		{Queue: q, Name: "w", Retry: RetryPolicy{Kind: 7}},
		{Queue: q, Name: "w", Handler: &sim.Script{Ticks: -1}},
		{Queue: q, Name: "w", Handler: &sim.Script{Behaviour: sim.Transient, Failures: -1}},
		{Queue: q, Name: "w", Handler: &sim.Script{Keys: "["}},
		{Queue: foreign, Name: "w"},
	} {
		if _, err := NewConsumer(r.w, c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewConsumer(%+v) = %v", c, err)
		}
	}
	if _, err := NewConsumer(nil, ConsumerConfig{Queue: q, Name: "w"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("NewConsumer without a world: %v", err)
	}
	if _, err := NewConsumer(r.w, ConsumerConfig{Queue: q, Name: "w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewConsumer(r.w, ConsumerConfig{Queue: q, Name: "w"}); !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, sim.ErrDuplicateName) {
		t.Errorf("a second consumer:w: %v", err)
	}
}

func TestRetryBackoff(t *testing.T) {
	if _, ok := NoRetry().Backoff(1, nil); ok {
		t.Fatal("RetryNone nacks")
	}
	if d, ok := FixedRetry(3).Backoff(5, nil); !ok || d != 3 {
		t.Fatal(d)
	}
	p := ExponentialRetry(2, 10, 0)
	var got []sim.Tick
	for i := 1; i <= 5; i++ {
		d, _ := p.Backoff(i, nil)
		got = append(got, d)
	}
	if want := []sim.Tick{2, 4, 8, 10, 10}; !equalTicks(got, want) {
		t.Fatalf("exponential %v, want %v", got, want)
	}
	if d, _ := ExponentialRetry(1, 0, 0).Backoff(1000, nil); d != MaxDuration {
		t.Fatalf("uncapped %d", d)
	}
	j := ExponentialRetry(8, 64, 0.5)
	a, b := sim.NewStream(9, "c"), sim.NewStream(9, "c")
	for i := 1; i <= 20; i++ {
		x, _ := j.Backoff(i, a)
		y, _ := j.Backoff(i, b)
		full, _ := ExponentialRetry(8, 64, 0).Backoff(i, nil)
		if x != y || x > full || x < full/2 {
			t.Fatalf("attempt %d: jitter %d/%d outside [%d, %d]", i, x, y, full/2, full)
		}
	}
}

func equalTicks(a, b []sim.Tick) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestZeroValuesReturnErrors(t *testing.T) {
	for _, q := range []*Queue{nil, {}} {
		if err := q.Send(sim.Message{}, 0); !errors.Is(err, ErrNotMade) {
			t.Fatal(err)
		}
		if _, err := q.Receive("w", 1); !errors.Is(err, ErrNotMade) {
			t.Fatal(err)
		}
		for _, err := range []error{q.Ack(Receipt{}), q.Nack(Receipt{}, 0), q.ChangeVisibility(Receipt{}, 1), q.DeadLetter(Receipt{}, "")} {
			if !errors.Is(err, ErrNotMade) {
				t.Fatal(err)
			}
		}
		if _, err := q.Redrive(1); !errors.Is(err, ErrNotMade) {
			t.Fatal(err)
		}
		q.Step(1)
		if q.Purge() != 0 || q.Len() != 0 || q.Metrics() != (Metrics{}) {
			t.Fatal("zero queue not empty")
		}
	}
	var c Consumer
	c.Step(1)
	c.Crash("zero")
}

// TestLazyRefsAreCompacted checks that refs left behind by lazy deletion
// never make the rings grow with the traffic instead of the backlog.
func TestLazyRefsAreCompacted(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 1000})
	r.send(q, "old", 0)
	r.recv(q, 1) // stays in flight, pinning the front of the all ring
	for i := 0; i < 1000; i++ {
		r.send(q, "k", 0)
		d := r.recv(q, 1)
		if err := q.Ack(d[0].Receipt); err != nil {
			t.Fatal(err)
		}
	}
	if n := q.all.len(); n > 2*q.Len()+65 {
		t.Fatalf("all ring holds %d refs for %d messages", n, q.Len())
	}
	// Acks after expiry leave stale refs in the ready ring.
	q2 := r.queue(Config{Name: "other", VisibilityTimeout: 1})
	for i := 0; i < 200; i++ {
		r.send(q2, "k", 0)
	}
	ds := r.recv(q2, 200)
	r.to(r.env.Now() + 1)
	for _, d := range ds {
		if err := q2.Ack(d.Receipt); err != nil {
			t.Fatal(err)
		}
	}
	r.send(q2, "k", 0)
	if n := q2.ready.len(); n > 65 {
		t.Fatalf("ready ring holds %d refs for %d visible", n, q2.Metrics().Visible)
	}
	if ds := r.recv(q2, 10); len(ds) != 1 {
		t.Fatalf("%+v", ds)
	}
	if got := AckBeforeProcess.String() + " " + AckAfterProcess.String(); got != "before after" {
		t.Fatal(got)
	}
}

func TestAppendResidents(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 7})
	r.send(q, "a", 0)
	r.send(q, "b", 4)
	r.send(q, "c", 0)
	ds := r.recv(q, 1)
	_ = ds
	got := q.AppendResidents(nil, 10)
	want := []Resident{
		{Msg: 1, Key: "a", Status: StatusInFlight, ReceiveCount: 1, Due: 7, Consumer: "w1"},
		{Msg: 2, Key: "b", Status: StatusDelayed, Due: 4},
		{Msg: 3, Key: "c", Status: StatusVisible},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("resident %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := len(q.AppendResidents(nil, 2)); n != 2 {
		t.Fatal(n)
	}
	if StatusDelayed.String() != "delayed" || Status(9).String() != "unknown" {
		t.Fatal("status names")
	}
}

// TestBackoffOfARefusedPolicy: a policy Validate refuses still never
// gives a negative delay (a jitter above 1, a negative fixed delay) nor
// one beyond MaxDuration.
func TestBackoffOfARefusedPolicy(t *testing.T) {
	s := sim.NewStream(1, "retry")
	for _, p := range []RetryPolicy{ExponentialRetry(2, 20, 1.5), FixedRetry(-1), FixedRetry(MaxDuration + 5), ExponentialRetry(-3, 0, 0), ExponentialRetry(1, math.MaxInt64, 0)} {
		if p.Validate() == nil {
			t.Fatalf("%+v: Validate accepts it", p)
		}
		for f := 1; f <= 70; f++ {
			if d, ok := p.Backoff(f, s); !ok || d < 0 || d > MaxDuration {
				t.Errorf("%+v after %d failures: %d, %v; want a delay in [0, %d]", p, f, d, ok, MaxDuration)
			}
		}
		// A cap beyond MaxDuration doubles up to MaxDuration, never past it
		// into an overflow.
		if p.Cap > MaxDuration {
			if d, _ := p.Backoff(70, s); d != MaxDuration {
				t.Errorf("%+v after 70 failures: %d, want %d", p, d, MaxDuration)
			}
		}
	}
}
