package sim_test

import (
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/internal/ledgercmp"
	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

// TestBookedOnEveryScenario runs every lesson, variant and testdata
// scenario twice, side by side: once with the ledger as the trace's only
// sink, so the models book through the typed entry points wherever they
// may, and once with a sink that listens too, so every event is built and
// folded by Ledger.Emit. A scenario run always has a budget, which counts
// deliveries and sends; the typed entry points charge it as Emit does,
// and the two ledgers, event counts and budget errors are compared here,
// under the budget. No scenario here reaches a cap, so the budget errors
// compared are nil on both sides: TestBudgetCountsTypedBookings and the
// models' booked tests under a small budget (internal/ledgercmp.Lockstep,
// in queue, eventlog and pubsub) are the tests of typed bookings that
// meet a cap, and the models' booked tests without a budget
// (internal/ledgercmp.Seeds) compare every typed entry point each model
// uses.
// The typed run asks for Stats before the first
// event, so the summary is kept up to date through the typed entry points
// as well. After every tick, not only at the end, the event counts,
// dumps, outcomes, losses, stats, consumers and entries of the two
// ledgers must be the same: a later event of the same copy and consumer
// overwrites the tick an entry last saw it, so a delivery booked at a
// wrong tick shows only before it.
func TestBookedOnEveryScenario(t *testing.T) {
	typed := 0
	for name, s := range ledgerScenarios(t) {
		t.Run(name, func(t *testing.T) {
			start := func(listen bool) *lab.Run {
				var opts lab.Options
				if listen {
					opts.Sinks = []sim.Sink{sim.SinkFunc(func(*sim.Event) {})}
				}
				r, err := lab.New(s, opts)
				if err != nil {
					t.Fatal(err)
				}
				if !listen {
					if sim.LedgerOnly(r.World().Env().Trace) {
						typed++
					}
					r.World().Ledger().Stats()
				}
				return r
			}
			booked, emitted := start(false), start(true)
			diff := func() string {
				return ledgercmp.Diff(booked.World().Ledger(), booked.World().Env().Trace, emitted.World().Ledger(), emitted.World().Env().Trace)
			}
			for {
				b, e := booked.Step(), emitted.Step()
				if b != e {
					t.Fatalf("t=%d: the booked run stepped %v, the emitted one %v", booked.Now(), b, e)
				}
				if d := diff(); d != "" {
					t.Fatalf("t=%d: %s", booked.Now(), d)
				}
				if b, e := fmt.Sprint(booked.World().Err()), fmt.Sprint(emitted.World().Err()); b != e {
					t.Fatalf("t=%d: the booked run's budget error is %s, the emitted one's %s", booked.Now(), b, e)
				}
				if !b {
					break
				}
			}
			booked.Finish()
			emitted.Finish()
			if len(emitted.World().Ledger().Records()) == 0 {
				t.Fatal("no records: nothing was compared")
			}
			if d := diff(); d != "" {
				t.Fatalf("at the end: %s", d)
			}
		})
	}
	t.Logf("%d scenarios ran with the ledger as the only sink", typed)
	if typed < 10 {
		t.Fatalf("only %d scenarios ran with the ledger as the only sink: the typed entry points were hardly compared", typed)
	}
}
