package live

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/sim"
)

// 200,000 WaitFor calls whose context ends leave no waiter behind: the
// heap stays as it was and 1,000 ticks cost what they cost without them.
// (Before, each call stayed in a list every tick scanned: 24 MiB more and
// 1,000 ticks in seconds instead of milliseconds.)
func TestCancelledWaitForLeavesNothing(t *testing.T) {
	d, err := Start(Config{World: newWorld(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	ticks := func() time.Duration {
		start := time.Now()
		if err := d.Advance(1000); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	base := ticks()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	far := d.Now() + 1<<40
	for i := range 200_000 {
		if err := d.WaitFor(ctx, far+sim.Tick(i)); err != context.Canceled {
			t.Fatalf("call %d: %v, want context.Canceled", i, err)
		}
	}
	// And calls that are waiting when their context ends.
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		if err := d.WaitFor(ctx, far); err != context.DeadlineExceeded {
			t.Fatalf("%v, want context.DeadlineExceeded", err)
		}
		cancel()
	}
	d.mu.Lock()
	n := len(d.waiters)
	d.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d waiters kept after their contexts ended", n)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4<<20 {
		t.Errorf("heap grew by %d KiB", grew>>10)
	}
	took := ticks()
	t.Logf("1,000 ticks: %v before the calls, %v after", base, took)
	if took > base*20+time.Second {
		t.Errorf("1,000 ticks took %v after the cancelled calls, %v before", took, base)
	}
}

// A waiter that is due is woken, and those that are not stay until their
// tick, in any order of calls.
func TestWaitForWakesInTickOrder(t *testing.T) {
	d, err := Start(Config{World: newWorld(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	done := make(chan int, 8)
	for _, at := range []int{5, 1, 3, 8, 2, 3, 7, 4} {
		go func() {
			if err := d.WaitFor(context.Background(), d.Now()+sim.Tick(at)); err != nil {
				t.Error(err)
			}
			done <- at
		}()
	}
	for d.waiting() < 8 {
		time.Sleep(time.Millisecond)
	}
	for tick := 1; tick <= 8; tick++ {
		if err := d.Advance(1); err != nil {
			t.Fatal(err)
		}
		want := map[int]int{1: 1, 2: 1, 3: 2, 4: 1, 5: 1, 6: 0, 7: 1, 8: 1}[tick]
		for range want {
			if got := <-done; got != tick {
				t.Fatalf("tick %d woke the waiter for %d", tick, got)
			}
		}
	}
	if n := d.waiting(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}

func (d *Driver) waiting() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.waiters)
}
