package sim_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/internal/ledgercmp"
	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

// TestBookedOnEveryScenario runs every lesson, variant and testdata
// scenario twice: once with the ledger as the trace's only sink, so the
// models book deliveries and effects through the typed entry points
// (Trace.BookDelivery, Trace.BookEffect) wherever they use them, and once
// with a sink that listens too, so every event is built and folded by
// Ledger.Emit. The typed run asks for Stats before the first event, so
// the summary is kept up to date through the typed entry points as well.
// The event counts, dumps, outcomes, losses, stats and consumers of the
// two ledgers must be the same.
func TestBookedOnEveryScenario(t *testing.T) {
	typed := 0
	for name, s := range ledgerScenarios(t) {
		t.Run(name, func(t *testing.T) {
			run := func(listen bool) (*sim.Ledger, *sim.Trace) {
				var opts lab.Options
				if listen {
					opts.Sinks = []sim.Sink{sim.SinkFunc(func(*sim.Event) {})}
				}
				r, err := lab.New(s, opts)
				if err != nil {
					t.Fatal(err)
				}
				tr := r.World().Env().Trace
				l := r.World().Ledger()
				if !listen {
					if sim.LedgerOnly(tr) {
						typed++
					}
					l.Stats()
				}
				r.Finish()
				return l, tr
			}
			booked, btr := run(false)
			emitted, etr := run(true)
			if len(emitted.Records()) == 0 {
				t.Fatal("no records: nothing was compared")
			}
			if d := ledgercmp.Diff(booked, btr, emitted, etr); d != "" {
				t.Fatalf("%s", d)
			}
		})
	}
	t.Logf("%d scenarios ran with the ledger as the only sink", typed)
	if typed < 10 {
		t.Fatalf("only %d scenarios ran with the ledger as the only sink: the typed entry points were hardly compared", typed)
	}
}
