package live

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/sim"
)

func newWorld(t *testing.T) *sim.World {
	w, err := sim.New(sim.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestConcurrentCallersSerialiseThroughTheOwner(t *testing.T) {
	w := newWorld(t)
	counter := 0 // touched only on the owner goroutine
	d, err := Start(Config{World: w, TickEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if err := d.Do(func(*sim.World) { counter++ }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var got int
	_ = d.Do(func(*sim.World) { got = counter })
	if got != 800 {
		t.Fatalf("counter %d, want 800", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.WaitFor(ctx, 3); err != nil || d.Now() < 3 {
		t.Fatalf("WaitFor: %v now=%d", err, d.Now())
	}
}

func TestManualModeIsDeterministic(t *testing.T) {
	run := func() []uint64 {
		w := newWorld(t)
		var draws []uint64
		s := w.Env().Stream("consumer/a")
		_ = w.AddFunc("a", sim.PhaseConsumer, func(sim.Tick) { draws = append(draws, s.Uint64()) })
		d, _ := Start(Config{World: w})
		defer d.Stop()
		_ = d.Advance(5)
		_ = d.Do(func(w *sim.World) { draws = append(draws, uint64(w.Now())) })
		_ = d.Advance(2)
		return draws
	}
	a, b := run(), run()
	if len(a) != 8 || len(b) != 8 {
		t.Fatalf("lengths %d %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("run differs at %d", i)
		}
	}
	if a[5] != 5 {
		t.Fatalf("Do ran at tick %d, want 5", a[5])
	}
}

func TestStopIsIdempotentAndRefusesLaterCalls(t *testing.T) {
	d, _ := Start(Config{World: newWorld(t), OnTick: func(*sim.World) {}})
	_ = d.Advance(1)
	d.Stop()
	d.Stop()
	if err := d.Do(func(*sim.World) {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Do after Stop: %v", err)
	}
	if err := d.WaitFor(context.Background(), 100); !errors.Is(err, ErrStopped) {
		t.Fatalf("WaitFor after Stop: %v", err)
	}
	if _, err := Start(Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("nil world: %v", err)
	}
	if _, err := Start(Config{World: newWorld(t), TickEvery: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative tick: %v", err)
	}
}
