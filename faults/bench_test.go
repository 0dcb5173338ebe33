package faults

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// BenchmarkCheckRef measures a consultation on the hot path: two rules at
// the point, one filtered by its match, one drawing with probability
// 0.01, so almost every consultation fires nothing.
func BenchmarkCheckRef(b *testing.B) { benchCheckRef(b, false) }

// BenchmarkCheckRefRecording is BenchmarkCheckRef with Config.Record: the
// price of naming every opportunity for replay.
func BenchmarkCheckRefRecording(b *testing.B) { benchCheckRef(b, true) }

func benchCheckRef(b *testing.B, record bool) {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, err := New(w, Config{Record: record, Plan: Plan{Rules: []Rule{
		{Name: "only-b", Point: BrokerDuplicate, Match: Match{Consumer: "b"}},
		{Name: "rare", Point: BrokerDuplicate, Probability: 0.01},
	}}})
	if err != nil {
		b.Fatal(err)
	}
	c := Context{Where: "queue:orders", Consumer: "a", Key: "k", Msg: 1}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Msg = sim.ID(i / 2)              // two consultations a message
		w.Env().Clock.Set(sim.Tick(i / 8)) // eight a tick
		if in.Has(BrokerDuplicate) {
			in.CheckRef(BrokerDuplicate, &c)
		}
	}
}

// BenchmarkHandler measures the handler wrapper per delivery of a
// handler that does nothing: "unarmed" when no handler point is armed
// (another point is), "transient" with a transient rule that fires on
// one delivery in a hundred.
func BenchmarkHandler(b *testing.B) {
	for _, tc := range []struct {
		name string
		rule Rule
	}{
		{"unarmed", Rule{Name: "dup", Point: BrokerDuplicate}},
		{"transient", Rule{Name: "flaky", Point: HandlerTransient, Probability: 0.01}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w, _ := sim.New(sim.Config{Seed: 1})
			in, err := New(w, Config{Plan: Plan{Rules: []Rule{tc.rule}}})
			if err != nil {
				b.Fatal(err)
			}
			h := in.Handler(sim.HandlerFunc(func(*sim.Delivery) error { return nil }))
			d := sim.NewDelivery(w.Env(), sim.Message{ID: 1, Key: "k"}, "queue:q", "worker", "", 1)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				d.Msg.ID = sim.ID(i)
				_ = h.Handle(d)
			}
		})
	}
}
