package eventlog_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// contextRun runs a log world whose members crash before records
// (member.crash) and after their effects (consumer.crash_after_effect),
// with the injector recording every firing and its context, and returns
// the firings and what the members did, in order: each record polled,
// handed to the handler and each crash. With plain, the members apply
// every record with the plain effect, which they book without calling a
// handler, and nothing is listed; else with a handler that applies every
// record as the plain effect does.
func contextRun(t *testing.T, seed uint64, plain bool) ([]faults.Decision, []step) {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	// Either point alone, or both, so a record is consulted about at
	// either point first.
	rules := []faults.Rule{
		{Name: "crash", Point: faults.MemberCrash, Probability: 0.05},
		{Name: "crash-after", Point: faults.ConsumerCrashAfterEffect, Probability: 0.05},
	}
	switch seed % 3 {
	case 1:
		rules = rules[:1]
	case 2:
		rules = rules[1:]
	}
	in, err := faults.New(w, faults.Config{Record: true, Plan: faults.Plan{Rules: rules}})
	if err != nil {
		t.Fatal(err)
	}
	topic, err := eventlog.New(w, eventlog.Config{Name: "orders", Faults: in, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	g, err := eventlog.NewGroup(w, topic, eventlog.GroupConfig{Name: "billing"})
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	h := sim.Handler(sim.Effect(""))
	if !plain {
		h = sim.HandlerFunc(func(d *sim.Delivery) error {
			steps = append(steps, step{what: "handed", member: d.Instance, msg: d.Msg.ID})
			d.Apply("")
			return nil
		})
		w.Trace().Attach(sim.SinkFunc(func(e *sim.Event) {
			switch e.Kind {
			case sim.KindPolled:
				steps = append(steps, step{what: "polled", member: e.Actor, msg: e.Msg})
			case sim.KindCrashed:
				steps = append(steps, step{what: "crashed", member: e.Actor})
			}
		}))
	}
	for i := range 2 {
		if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: fmt.Sprintf("m%d", i), Handler: h, RestartAfter: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddFunc("producer", sim.PhaseProducer, func(now sim.Tick) {
		if now > 30 {
			return
		}
		for k := range 8 {
			m := w.Env().NewMessage(fmt.Sprintf("k%d", k), []byte("v"), sim.Headers{Type: fmt.Sprintf("t%d", k%3)})
			if err := topic.Publish(m); err != nil {
				t.Fatal(err)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(80); err != nil {
		t.Fatal(err)
	}
	return in.Fired().Decisions, steps
}

// step is something a member did in contextRun.
type step struct {
	what   string // "polled", "handed" or "crashed"
	member string
	msg    sim.ID // none for "crashed"
}

// A member consults the crash points about the record it is at: each
// firing's context names the member, its group and topic, and the
// record's message, key and type; a crash after an effect is about the
// record the handler was handed last, and a crash before a record about
// one it was not handed yet. Booked and handed records are consulted
// about alike (the same firings).
func TestCrashPointsAreAboutTheRecord(t *testing.T) {
	crashes := 0
	for seed := range uint64(30) {
		fired, steps := contextRun(t, seed, false)
		plainFired, _ := contextRun(t, seed, true)
		if !slices.Equal(fired, plainFired) {
			t.Fatalf("seed %d: the booked path fired\n%v\nthe handler path\n%v", seed, plainFired, fired)
		}
		// Where each message was handed, by the messages' order of
		// production: message k%8 of each tick has key k<k> and type t<k%3>.
		for _, d := range fired {
			if d.Where != "log:orders" || d.Group != "billing" || d.Consumer == "" || d.Msg == 0 {
				t.Fatalf("seed %d: firing %+v does not name the member and the record", seed, d)
			}
			k := (int(d.Msg) - 1) % 8
			if d.Key != fmt.Sprintf("k%d", k) || d.Type != fmt.Sprintf("t%d", k%3) {
				t.Fatalf("seed %d: firing %+v: key and type are not message %d's", seed, d, d.Msg)
			}
			crashes++
		}
		// Replay what the members did against the firings, which crash
		// the members in order: a crash after an effect is about the
		// record the member was handed last, and a crash before a record
		// about one it polled and was not handed since.
		last := map[string]sim.ID{}
		notHanded := map[string]map[sim.ID]bool{}
		n := 0
		for _, x := range steps {
			if notHanded[x.member] == nil {
				notHanded[x.member] = map[sim.ID]bool{}
			}
			switch x.what {
			case "polled":
				notHanded[x.member][x.msg] = true
			case "handed":
				last[x.member] = x.msg
				delete(notHanded[x.member], x.msg)
			case "crashed":
				if n == len(fired) {
					t.Fatalf("seed %d: more crashes than firings", seed)
				}
				d := fired[n]
				n++
				if d.Consumer != x.member {
					t.Fatalf("seed %d: firing %+v crashed %s", seed, d, x.member)
				}
				switch {
				case d.Point == faults.ConsumerCrashAfterEffect && d.Msg != last[x.member]:
					t.Fatalf("seed %d: firing %+v after the effect on message %d", seed, d, last[x.member])
				case d.Point == faults.MemberCrash && !notHanded[x.member][d.Msg]:
					t.Fatalf("seed %d: firing %+v before a record the member was handed already", seed, d)
				}
			}
		}
		if n != len(fired) {
			t.Fatalf("seed %d: %d crashes, %d firings", seed, n, len(fired))
		}
	}
	if crashes < 40 {
		t.Fatalf("only %d crashes: the contexts were hardly checked", crashes)
	}
}
