package exercise

import (
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
