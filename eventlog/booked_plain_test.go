package eventlog_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/internal/ledgercmp"
	"github.com/brokerlab/brokerlab/sim"
)

// plainRun runs one random seed's log world whose members all handle
// their records with the plain effect (sim.Effect, or no handler), which
// a member books without preparing a delivery when only the ledger
// listens and the handler's fault wrapper would pass the delivery
// straight through. Every handler fault point gets rules added and
// disabled while the world runs (a rule's window does not disarm its
// point; disabling it does), so members take the booked path before,
// between and after them: a transient rule that fails a record for
// several attempts in a row (Param) leaves the wrapper owing failures
// after it is disabled, which the booked path must not skip. Crashes,
// commit modes, strategies and session timeouts vary as in bookedRun,
// and the group seeks now and then. listen is as for bookedRun.
func plainRun(t *testing.T, seed uint64, listen bool) (*sim.Ledger, *sim.Trace) {
	t.Helper()
	s := sim.NewStream(seed, "plain")
	w := ledgercmp.World(t, seed, listen)
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash", Point: faults.MemberCrash, Probability: 0.02},
		{Name: "crash-after", Point: faults.ConsumerCrashAfterEffect, Probability: 0.02},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	// Two spells of each handler point, each a rule added at its first
	// tick and disabled at its last.
	type spell struct {
		rule     faults.Rule
		from, to sim.Tick
	}
	var spells []spell
	for k := range 2 {
		for _, r := range []faults.Rule{
			{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.5, Param: int64(2 + s.IntN(5))},
			{Name: "slow", Point: faults.HandlerSlow, Probability: 0.3, Param: int64(1 + s.IntN(3))},
			{Name: "poison", Point: faults.HandlerPoison, Probability: 0.1},
			{Name: "reject", Point: faults.HandlerPermanent, Probability: 0.1},
			{Name: "limited", Point: faults.HandlerRateLimited, Probability: 0.2, Param: 2},
		} {
			r.Name += strconv.Itoa(k)
			from := sim.Tick(1 + s.IntN(30))
			spells = append(spells, spell{rule: r, from: from, to: from + sim.Tick(1+s.IntN(4))})
		}
	}
	if err := w.AddFunc("spells", sim.PhaseProducer, func(now sim.Tick) {
		for _, x := range spells {
			switch now {
			case x.from:
				if _, err := in.Add(x.rule); err != nil {
					t.Fatal(err)
				}
			case x.to:
				if err := in.Disable(x.rule.Name); err != nil {
					t.Fatal(err)
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	topic, err := eventlog.New(w, eventlog.Config{Name: "orders", Faults: in, Partitions: 1 + s.IntN(4)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := eventlog.NewGroup(w, topic, eventlog.GroupConfig{Name: "billing", Strategy: eventlog.Strategy(s.IntN(3)), SessionTimeout: sim.Tick(3 + s.IntN(4))})
	if err != nil {
		t.Fatal(err)
	}
	for mi, k := 0, 1+s.IntN(3); mi < k; mi++ {
		var h sim.Handler
		if s.Chance(0.5) {
			h = sim.Effect("charge")
		}
		if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: fmt.Sprintf("m%d", mi), Handler: h,
			Commit: eventlog.CommitMode(s.IntN(4)), Batch: 1 + s.IntN(6), RestartAfter: sim.Tick(1 + s.IntN(2))}); err != nil {
			t.Fatal(err)
		}
	}
	// Seeks back and forth, which re-read records the group applied and
	// skip records it holds: what the group remembers as applied decides
	// which of them are lost.
	if err := w.AddFunc("seeker", sim.PhaseProducer, func(now sim.Tick) {
		if !s.Chance(0.1) {
			return
		}
		switch s.IntN(3) {
		case 0:
			_ = g.SeekEarliest(eventlog.AllPartitions)
		case 1:
			_ = g.SeekLatest(eventlog.AllPartitions)
		default:
			_ = g.SeekOffset(eventlog.AllPartitions, int64(s.IntN(20)))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.AddFunc("producer", sim.PhaseProducer, func(now sim.Tick) {
		if now > 40 {
			return
		}
		for range s.IntN(5) {
			m := w.Env().NewMessage(fmt.Sprintf("k%d", s.IntN(7)), []byte("v"), sim.Headers{})
			_ = topic.Publish(m)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(90); err != nil {
		t.Fatal(err)
	}
	return w.Ledger(), w.Trace()
}

// TestPlainEffectBookedEqualsEmitted runs plainRun's worlds booked and
// emitted and requires the same ledger (ledgercmp.Diff), and enough
// deliveries and failures that the comparison meant something.
func TestPlainEffectBookedEqualsEmitted(t *testing.T) {
	delivered, redelivered := 0, 0
	for _, o := range ledgercmp.Seeds(t, 60, func(seed uint64, listen bool) (*sim.Ledger, *sim.Trace) { return plainRun(t, seed, listen) }) {
		delivered += o.Deliveries
		if o.Deliveries > 1 {
			redelivered++
		}
	}
	t.Logf("%d deliveries, %d outcomes delivered more than once", delivered, redelivered)
	if delivered < 2000 || redelivered < 100 {
		t.Fatalf("only %d deliveries and %d redelivered outcomes in all: the booked path was hardly compared", delivered, redelivered)
	}
}
