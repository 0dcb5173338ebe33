package exercise

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

// The student's dead-lettering is an event of the replay like any other:
// the trace shows the message dead-lettered, not merely acked, and the
// ledger the player shows counts it in a DLQ. The grading is unchanged.
func TestDeadLetterReplayShowsDeadLetters(t *testing.T) {
	e, _ := Lookup("dead-letter")
	for _, c := range []struct {
		name string
		sol  func() Solution
	}{{"dead-letter the first failure", dlqFirstFailure}, {"model", dlqModel}} {
		t.Run(c.name, func(t *testing.T) {
			// Seed 1 has a poison message (order-4): every loop that ends
			// dead-letters it.
			rec, err := e.Recording(c.sol(), 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			var dead, acked int
			for _, ev := range rec.Trace {
				switch {
				case ev.Kind == sim.KindDeadLettered && ev.Key == "order-4":
					dead++
				case ev.Kind == sim.KindAcked && ev.Key == "order-4":
					acked++
				}
			}
			if dead != 1 || acked != 0 {
				t.Errorf("order-4 is traced dead-lettered %d times and acked %d times, want 1 and 0", dead, acked)
			}
			snap := lab.NewPlayback(rec).Seek(rec.End)
			if snap.Ledger.DeadLettered < 1 {
				t.Errorf("the replay's ledger counts %d in a DLQ: %+v", snap.Ledger.DeadLettered, snap.Ledger)
			}
		})
	}
}

// The player steps by ticks, so a fault and the failure it causes on the
// same tick share one narration step: the fault first, then the broken
// property, and the introduction promises a step per tick, not one for
// each fault and each failure.
func TestRecordingSameTickStep(t *testing.T) {
	e, _ := Lookup("dead-letter")
	rep := e.Grade(dlqFirstFailure(), 0)
	sh := rep.Shrunk
	rec, err := e.Recording(dlqFirstFailure(), sh.Seed, &sh.Minimal)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Steps) != 2 {
		t.Fatalf("%d steps, want the introduction and one step at t=%d: %+v", len(rec.Steps), sh.Violations[0].Tick, rec.Steps)
	}
	s := rec.Steps[1].Text
	f, v := strings.Index(s, "Fault: "), strings.Index(s, "FAIL ")
	if f != 0 || v < f {
		t.Errorf("the step does not tell the fault first, then the failure: %q", s)
	}
	if intro := rec.Steps[0].Text; !strings.Contains(intro, "each tick with a fault or a failure") {
		t.Errorf("the introduction promises a step per fault and per failure: %q", intro)
	}
}

// Exercise 6 dead-letters too: its replay's ledger counts the messages
// the policy gave up on in a DLQ, and traces them dead-lettered, not
// acked.
func TestRetriesReplayShowsDeadLetters(t *testing.T) {
	e, _ := Lookup("retries")
	rec, err := e.Recording(retryModel(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	dead := map[string]bool{}
	for _, ev := range rec.Trace {
		if ev.Kind == sim.KindDeadLettered {
			dead[ev.Key] = true
		}
	}
	if len(dead) == 0 {
		t.Fatal("seed 1 dead-letters nothing: pick a seed that does")
	}
	for _, ev := range rec.Trace {
		if ev.Kind == sim.KindAcked && dead[ev.Key] {
			t.Errorf("%s is traced dead-lettered and acked", ev.Key)
		}
	}
	if got := lab.NewPlayback(rec).Seek(rec.End).Ledger.DeadLettered; got != len(dead) {
		t.Errorf("the replay's ledger counts %d in a DLQ, want %d", got, len(dead))
	}
}
