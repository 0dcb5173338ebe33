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
