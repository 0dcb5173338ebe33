package live_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/live"
	"github.com/brokerlab/brokerlab/queue"
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

// Models are built inside Do: their constructors take the world and
// register with it, so the driver's ticks step them and the world's ledger
// judges them.
func ExampleDriver_models() {
	w, _ := sim.New(sim.Config{Seed: 1})
	d, _ := live.Start(live.Config{World: w})
	defer d.Stop()
	var q *queue.Queue
	_ = d.Do(func(w *sim.World) {
		q, _ = queue.New(w, queue.Config{Name: "jobs"})
		_, _ = queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "worker"})
		_ = q.Send(w.Env().NewMessage("job-1", nil, sim.Headers{}), 0)
	})
	_ = d.Advance(1) // the consumer receives, applies and acks
	_ = d.Do(func(w *sim.World) {
		fmt.Println("left:", q.Len(), "check:", sim.Check(w.Ledger(), sim.ExactlyOnce("jobs")))
	})
	// Output: left: 0 check: <nil>
}
