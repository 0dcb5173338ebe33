package queue

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestOnFailure pins the dead-letter-or-redeliver policy every consumer of
// a queue settles failures by.
func TestOnFailure(t *testing.T) {
	for _, tc := range []struct {
		class             sim.Class
		receive, attempts int
		same              bool
		want              Settlement
	}{
		{sim.ClassTransient, 1, 0, false, SettleRedeliver},
		{sim.ClassTransient, 99, 0, false, SettleRedeliver},
		{sim.ClassTransient, 2, 3, false, SettleRedeliver},
		{sim.ClassTransient, 3, 3, false, SettleDeadLetter},
		{sim.ClassTransient, 4, 3, false, SettleDeadLetter},
		{sim.ClassPermanent, 1, 0, false, SettleDeadLetter},
		{sim.ClassPoison, 1, 0, false, SettleDeadLetter},
		{sim.ClassPermanent, 1, 0, true, SettleRedeliver},
		{sim.ClassPoison, 2, 3, true, SettleRedeliver},
		{sim.ClassPoison, 3, 3, true, SettleDeadLetter},
	} {
		if got := OnFailure(tc.class, tc.receive, tc.attempts, tc.same); got != tc.want {
			t.Errorf("OnFailure(%v, receive %d, max attempts %d, same for all %v) = %d, want %d",
				tc.class, tc.receive, tc.attempts, tc.same, got, tc.want)
		}
	}
}
