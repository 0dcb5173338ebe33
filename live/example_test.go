package live_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/live"
	"github.com/brokerlab/brokerlab/sim"
)

// A Driver owns the world; every other goroutine talks to it through Do.
func ExampleDriver() {
	w, _ := sim.New(sim.Config{Seed: 1})
	d, _ := live.Start(live.Config{World: w}) // manual mode: no wall-clock ticks
	defer d.Stop()
	_ = d.Advance(3)
	_ = d.Do(func(w *sim.World) { fmt.Println("tick", w.Now()) })
	// Output: tick t=3
}
