package live

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// Models built inside Do are bound to the driver's world: concurrent
// goroutines send through Do, a queue consumer registered with the world
// handles the messages as the driver ticks, and the ledger folded from the
// world's trace accounts for every message.
func TestModelsBuiltInsideDoShareTheWorld(t *testing.T) {
	d, err := Start(Config{World: newWorld(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	var q *queue.Queue
	var c *queue.Consumer
	if err := d.Do(func(w *sim.World) {
		if q, err = queue.New(w, queue.Config{Name: "jobs"}); err != nil {
			return
		}
		c, err = queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "worker", Batch: 5})
	}); err != nil || c == nil {
		t.Fatalf("building the models: %v", err)
	}
	const senders, each = 4, 25
	var wg sync.WaitGroup
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				key := "k" + strconv.Itoa(i*each+j)
				if err := d.Do(func(w *sim.World) {
					if err := q.Send(w.Env().NewMessage(key, nil, sim.Headers{}), 0); err != nil {
						t.Error(err)
					}
				}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for range 100 {
		var left int
		_ = d.Do(func(*sim.World) { left = q.Len() })
		if left == 0 {
			break
		}
		if err := d.Advance(1); err != nil {
			t.Fatal(err)
		}
	}
	var checkErr error
	var processed int
	_ = d.Do(func(w *sim.World) {
		checkErr = sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("jobs"))
		processed = c.Stats().Processed
	})
	if checkErr != nil || processed != senders*each {
		t.Fatalf("processed %d of %d: %v", processed, senders*each, checkErr)
	}
	if d.Err() != nil {
		t.Fatalf("Err = %v without a budget", d.Err())
	}
}

// Err reports a spent budget once the tick or request that spent it is
// over.
func TestErrReportsASpentBudget(t *testing.T) {
	w := newWorld(t)
	w.SetBudget(sim.Budget{Messages: 3})
	d, _ := Start(Config{World: w})
	defer d.Stop()
	_ = d.Do(func(w *sim.World) {
		for range 4 {
			w.Env().NewMessage("", nil, sim.Headers{})
		}
	})
	if err := d.Err(); !errors.Is(err, sim.ErrBudget) {
		t.Fatalf("Err after a request past the message budget: %v", err)
	}
	if err := d.Advance(2); err != nil || !errors.Is(d.Err(), sim.ErrBudget) {
		t.Fatalf("Advance: %v, Err: %v", err, d.Err())
	}
}
