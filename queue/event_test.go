package queue

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestEventsCarryTheCopy checks the fields every event the queue builds
// about a copy carries (see Queue.event): its tick, kind, the queue, the
// actor, the message's ID, key and correlation ID, and its receive count,
// through a send, a delayed send, a receive, a nack, a visibility change,
// an expired visibility timeout, a redelivery and an ack. The golden
// traces carry no correlation ID, so this is what catches an event that
// loses one.
func TestEventsCarryTheCopy(t *testing.T) {
	r := newRig(t)
	w, rec, env := r.w, r.rec, r.env
	ticks := &tickSink{now: env.Now}
	w.Trace().Attach(ticks)
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 2})
	a := env.NewMessage("k-a", []byte("a"), sim.Headers{CorrelationID: "corr-a", Source: "shop", Type: "t"})
	b := env.NewMessage("k-b", []byte("b"), sim.Headers{CorrelationID: "corr-b"})
	if err := q.Send(a, 0); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(b, 1); err != nil {
		t.Fatal(err)
	}
	got, err := q.Receive("w1", 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("receive: %v %v", got, err)
	}
	if err := q.Nack(got[0].Receipt, 0); err != nil {
		t.Fatal(err)
	}
	w.Tick()
	got, err = q.Receive("w2", 2)
	if err != nil || len(got) != 2 {
		t.Fatalf("receive: %v %v", got, err)
	}
	if err := q.ChangeVisibility(got[1].Receipt, 1); err != nil {
		t.Fatal(err)
	}
	r.to(w.Now() + 3)
	got, err = q.Receive("w3", 2)
	if err != nil || len(got) != 2 {
		t.Fatalf("receive: %v %v", got, err)
	}
	for _, d := range got {
		if err := q.Ack(d.Receipt); err != nil {
			t.Fatal(err)
		}
	}

	corr := map[sim.ID]string{a.ID: "corr-a", b.ID: "corr-b"}
	key := map[sim.ID]string{a.ID: "k-a", b.ID: "k-b"}
	receives := map[sim.ID]int{}
	kinds := map[sim.Kind]int{}
	for _, ev := range rec.Events() {
		if ev.Where != "queue:orders" || ev.Msg == 0 {
			continue
		}
		kinds[ev.Kind]++
		if ev.Corr != corr[ev.Msg] || ev.Key != key[ev.Msg] {
			t.Errorf("%v: corr %q key %q, want %q %q", ev, ev.Corr, ev.Key, corr[ev.Msg], key[ev.Msg])
		}
		switch ev.Kind {
		case sim.KindReceived, sim.KindRedelivered:
			receives[ev.Msg]++
			fallthrough
		case sim.KindAcked, sim.KindNacked, sim.KindVisibility, sim.KindVisibilityExpired:
			if ev.Attempt != receives[ev.Msg] {
				t.Errorf("%v: attempt %d, want %d", ev, ev.Attempt, receives[ev.Msg])
			}
			if ev.Actor == "" {
				t.Errorf("%v: no actor", ev)
			}
		case sim.KindSent:
			if ev.Attempt != 0 {
				t.Errorf("%v: attempt %d, want 0", ev, ev.Attempt)
			}
			if ev.Msg == a.ID && (ev.Actor != "shop" || ev.Type != "t") {
				t.Errorf("%v: actor %q type %q, want shop t", ev, ev.Actor, ev.Type)
			}
		}
	}
	for _, bad := range ticks.wrong {
		t.Errorf("%v: tick %d, emitted at tick %d", bad.ev, bad.ev.Tick, bad.at)
	}
	if ticks.last == 0 {
		t.Errorf("no event after tick 0: the tick check no longer covers a later tick")
	}
	for _, k := range []sim.Kind{sim.KindSent, sim.KindDelayed, sim.KindReceived, sim.KindRedelivered,
		sim.KindNacked, sim.KindVisibility, sim.KindVisibilityExpired, sim.KindAcked} {
		if kinds[k] == 0 {
			t.Errorf("no %v event: the test no longer covers it (%v)", k, kinds)
		}
	}
}

// tickSink is a Sink that notes every event of the queue whose tick is
// not the clock's when it was emitted.
type tickSink struct {
	now   func() sim.Tick
	last  sim.Tick // the latest tick an event was emitted at
	wrong []struct {
		ev sim.Event
		at sim.Tick
	}
}

func (s *tickSink) Emit(e *sim.Event) {
	at := s.now()
	s.last = max(s.last, at)
	if e.Where == "queue:orders" && e.Tick != at {
		s.wrong = append(s.wrong, struct {
			ev sim.Event
			at sim.Tick
		}{*e, at})
	}
}
