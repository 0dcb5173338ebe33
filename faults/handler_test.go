package faults

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

func TestHandlerConsultsTheHandlerPoints(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{
		{Name: "poison", Point: HandlerPoison, Match: Match{Key: "bad"}},
		{Name: "flaky", Point: HandlerTransient, Match: Match{Key: "flaky"}, Count: 1, Param: 3},
		{Name: "slow", Point: HandlerSlow, Match: Match{Key: "slow"}, Param: 4},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	h := in.Handler(&sim.Script{Ticks: 1})
	deliver := func(id sim.ID, key string) (*sim.Delivery, error) {
		d := sim.NewDelivery(w.Env(), sim.Message{ID: id, Key: key}, "queue:q", "worker", "worker#1", 1)
		return d, h.Handle(d)
	}
	if _, err := deliver(1, "bad"); sim.Classify(err) != sim.ClassPoison {
		t.Fatalf("poison: %v", err)
	}
	for i := 0; i < 3; i++ { // Param 3: three attempts fail, then it works
		if _, err := deliver(2, "flaky"); sim.Classify(err) != sim.ClassTransient {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	if d, err := deliver(2, "flaky"); err != nil || d.Effects() != 1 {
		t.Fatalf("fourth attempt: %v, %d effects", err, d.Effects())
	}
	d := sim.NewDelivery(w.Env(), sim.Message{ID: 3, Key: "slow"}, "queue:q", "worker", "", 1)
	if got := sim.DurationOf(h, d); got != 5 {
		t.Fatalf("slow handler takes %d ticks, want 1 + 4", got)
	}
	if in.Handler(nil) == nil || (*Injector)(nil).Handler(sim.Effect("x")) == nil {
		t.Fatal("wrappers must not be nil")
	}
}
