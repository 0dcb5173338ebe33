package queue

import (
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/internal/ledgercmp"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

// bookedRun plays the property test's scenario of seed (bookedWorld,
// without a budget) until it drains, and, when the scenario draws a final
// redrive and dead letters are left, redrives them to fixed handlers and
// plays on until it drains again. It returns the ledger and the trace.
func bookedRun(t *testing.T, seed uint64, listen bool) (*sim.Ledger, *sim.Trace) {
	t.Helper()
	w, drained, finish := bookedWorld(t, seed, listen, sim.Budget{})
	if err := w.RunUntil(drained, 800); err == nil && finish() {
		_ = w.RunUntil(drained, 800)
	}
	return w.Ledger(), w.Trace()
}

// bookedWorld builds the property test's scenario of seed (drawScenario:
// a standard or FIFO queue with a dead-letter queue, dedup windows by ID
// or content, retention, purges, redrives, republished and deduplicated
// sends, broker duplicates, delays, reorders, outages, lost acks, crashes
// before and after the effect, failing, slow and idempotent handlers)
// under budget b, with the ledger as the trace's only sink (listen false:
// the queue books its sends, deliveries and acks, and the handlers their
// effects, through the ledger's typed entry points) or with a sink
// listening too (listen true: every event is built and folded by
// Ledger.Emit). It returns the world, drained, which holds once the
// producer is done, the queue empty and no consumer busy, and finish,
// which a caller runs once the world has drained: when the scenario draws
// a final redrive and the dead-letter queue holds messages, it disables
// the handler faults, makes every handler idempotent, redrives the dead
// letters and reports true; otherwise it does nothing and reports false.
func bookedWorld(t *testing.T, seed uint64, listen bool, b sim.Budget) (w *sim.World, drained, finish func() bool) {
	t.Helper()
	s := drawScenario(seed)
	w = ledgercmp.BudgetWorld(t, seed, listen, b)
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: s.rules}})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := New(w, Config{Name: s.qc.Name + "-dlq", FIFO: s.qc.FIFO, Retention: s.dlqRetention})
	if err != nil {
		t.Fatal(err)
	}
	qc := s.qc
	qc.Faults, qc.DeadLetter = in, dlq
	q, err := New(w, qc)
	if err != nil {
		t.Fatal(err)
	}
	var cs []*Consumer
	for i, cc := range s.consumers {
		cc.Queue, cc.Handler = q, newHandler(s.handlers[i])
		c, err := NewConsumer(w, cc)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	pc := s.pc
	pc.Target = q
	if s.republish > 0 {
		pc.Target = &repeater{q: q, r: w.Env().Stream("repeater"), p: s.republish, newCopy: s.newCopy}
	}
	// Some sends are copies of an earlier message (an origin of their
	// own), as a relay or a forward hands them over.
	pc.Target = &originator{to: pc.Target, r: w.Env().Stream("originator")}
	p, err := producer.New(w, pc)
	if err != nil {
		t.Fatal(err)
	}
	if s.purgeAt > 0 {
		w.At(s.purgeAt, "purge", func() { q.Purge() })
	}
	for _, at := range s.redriveAt {
		w.At(at, "redrive", func() { _, _ = dlq.Redrive(1000) })
	}
	drained = func() bool {
		for _, c := range cs {
			if c.Busy() > 0 {
				return false
			}
		}
		return p.Done() && q.Len() == 0
	}
	finish = func() bool {
		if !s.finalRedrive || dlq.Len() == 0 {
			return false
		}
		for _, r := range s.rules {
			switch r.Point {
			case faults.HandlerPermanent, faults.HandlerPoison, faults.HandlerTransient:
				_ = in.Disable(r.Name)
			}
		}
		for _, c := range cs {
			_ = c.SetHandler(sim.Idempotent(sim.Effect("fixed"), sim.ByMessageID))
		}
		_, _ = dlq.Redrive(1000)
		return true
	}
	return w, drained, finish
}

// TestBookedEqualsEmitted runs the property test's random queue worlds
// twice, once with the typed booking the queue and its consumers use when
// the ledger is the only sink and once with every event built and
// emitted, and requires the same ledger (see ledgercmp.Diff): event
// count, last tick, dump, outcomes, losses, stats, consumers and every
// copy's entry for every consumer, ticks included.
func TestBookedEqualsEmitted(t *testing.T) {
	delivered, lost, duplicated := 0, 0, 0
	for _, o := range ledgercmp.Seeds(t, 200, func(seed uint64, listen bool) (*sim.Ledger, *sim.Trace) { return bookedRun(t, seed, listen) }) {
		delivered += o.Deliveries
		if o.Verdict == sim.VerdictLost {
			lost++
		}
		if o.Effects > 1 {
			duplicated++
		}
	}
	t.Logf("%d deliveries, %d lost verdicts, %d copies applied more than once", delivered, lost, duplicated)
	if delivered < 5000 || lost < 20 || duplicated < 50 {
		t.Fatalf("only %d deliveries, %d losses and %d duplicates in all: the typed booking was hardly compared", delivered, lost, duplicated)
	}
}

// originator hands messages on to a publisher, some of them made copies
// of the message it handed on before (Origin set), so sends with an
// origin are booked and compared too.
type originator struct {
	to   sim.Publisher
	r    *sim.Stream
	last sim.ID
}

func (x *originator) Publish(m sim.Message) error {
	if x.last != 0 && x.r.Chance(0.2) {
		m.Origin = x.last
	}
	x.last = m.ID
	return x.to.Publish(m)
}

// smallBudget draws a budget for seed whose caps a bookedWorld often
// meets: in about half the seeds a cap on sends, which the typed booking
// of sends checks before it books, and in about half a cap on deliveries
// per tick, which the typed booking of deliveries checks; in three seeds
// of four also a cap on messages, events or component steps, which stop
// the run between component steps and so count every booked event and
// message as an emitted one.
func smallBudget(seed uint64) sim.Budget {
	st := sim.NewStream(seed, "budget")
	var b sim.Budget
	if st.Chance(0.5) {
		b.Sends = uint64(10 + st.IntN(40))
	}
	if st.Chance(0.5) {
		b.DeliveriesPerTick = 1 + st.IntN(4)
	}
	switch st.IntN(4) {
	case 0:
		b.Messages = uint64(10 + st.IntN(30))
	case 1:
		b.Events = uint64(60 + st.IntN(300))
	case 2:
		b.Steps = uint64(40 + st.IntN(400))
	}
	if b == (sim.Budget{}) {
		b.DeliveriesPerTick = 1 + st.IntN(4)
	}
	return b
}

// TestBookedEqualsEmittedUnderBudget plays TestBookedEqualsEmitted's
// random queue worlds under a small budget (smallBudget), booked and
// emitted, side by side, and requires the same ledger after every tick
// and the same budget error at the same tick (ledgercmp.Lockstep): a
// typed booking of a send or a delivery must charge the budget as the
// event it stands for, and leave to Emit the one that breaches a cap, so
// that the error names the same place. A world that drains redrives its
// dead letters to fixed handlers at the end of that tick, as bookedRun
// does between its two runs. The test is not vacuous only if enough is
// compared: at least 3000 deliveries over the 200 seeds, half the seeds
// stopped by a cap, a quarter of those by the cap on deliveries per tick
// and a sixth by the cap on sends (the two the typed bookings check),
// each of the caps on messages, events and steps met at least once, and
// every run that met no cap drained within the ticks played, so that it
// was compared to its end.
func TestBookedEqualsEmittedUnderBudget(t *testing.T) {
	const seeds, ticks = 200, 100
	var drains []func() bool // per seed, the emitted world's drained
	outcomes, errs := ledgercmp.Lockstep(t, seeds, ticks, func(seed uint64, listen bool) *sim.World {
		w, drained, finish := bookedWorld(t, seed, listen, smallBudget(seed))
		finished := false
		if err := w.AddFunc("final redrive", sim.PhaseObserver, func(sim.Tick) {
			if !finished && drained() {
				finished = true
				finish()
			}
		}); err != nil {
			t.Fatal(err)
		}
		if listen {
			drains = append(drains, drained)
		}
		return w
	})
	delivered := 0
	for _, o := range outcomes {
		delivered += o.Deliveries
	}
	for i, err := range errs {
		if err == nil && !drains[i]() {
			t.Fatalf("seed %d met no cap and did not drain in %d ticks: it was not compared to its end", i+1, ticks)
		}
	}
	n, capped := ledgercmp.Caps(errs)
	capped[""] = n
	t.Logf("%d deliveries; %d of %d seeds met a cap: %d deliveries per tick, %d sends, %d messages, %d events, %d steps",
		delivered, capped[""], len(errs), capped["deliveries_per_tick"], capped["sends"], capped["messages"], capped["events"], capped["steps"])
	if delivered < 3000 || capped[""] < len(errs)/2 || capped["deliveries_per_tick"] < capped[""]/4 || capped["sends"] < capped[""]/6 ||
		capped["messages"] == 0 || capped["events"] == 0 || capped["steps"] == 0 {
		t.Fatalf("the budget was hardly compared")
	}
}
