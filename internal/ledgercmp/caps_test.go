package ledgercmp

import (
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// Caps counts every error, and names the cap of those that name one.
func TestCaps(t *testing.T) {
	errs := []error{
		nil,
		fmt.Errorf("%w: more than 10 copies handed to brokers by tick 3 (cap sends), at queue orders", sim.ErrBudget),
		fmt.Errorf("%w: more than 2 deliveries in tick 4 (cap deliveries_per_tick), at queue orders", sim.ErrBudget),
		fmt.Errorf("%w: more than 10 copies handed to brokers by tick 5 (cap sends), at log orders", sim.ErrBudget),
		errors.New("stopped without naming a cap"),
	}
	capped, by := Caps(errs)
	if want := map[string]int{"sends": 2, "deliveries_per_tick": 1}; capped != 4 || !maps.Equal(by, want) {
		t.Fatalf("Caps = %d, %v; want 4, %v", capped, by, want)
	}
}
