package queue

import (
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestDelayedCopiesPinNoChunks: a delayed copy stays while the copies sent
// around it are received and acked. Its body is kept apart from theirs,
// so it does not keep their arena chunk alive: 200 delayed copies among
// 8,000 fast ones of 1,000 bytes (a round fills more than a chunk) hold
// about their own bytes, not 200 chunks of 32 KiB.
func TestDelayedCopiesPinNoChunks(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "pin"})
	live := 0
	for round := 0; round < 200; round++ {
		m := r.env.NewMessage("k", []byte("delayed-order"), sim.Headers{})
		if err := q.Send(m, 900); err != nil {
			t.Fatal(err)
		}
		live += len(m.Body)
		for i := 0; i < 40; i++ {
			m := r.env.NewMessage("k", fmt.Appendf(make([]byte, 0, 1000), "order-%0994d", i), sim.Headers{})
			if err := q.Send(m, 0); err != nil {
				t.Fatal(err)
			}
		}
		for {
			ds, err := q.Receive("c", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) == 0 {
				break
			}
			for _, d := range ds {
				if err := q.Ack(d.Receipt); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	chunks, bytes := q.s.bodies.Held()
	if q.Len() != 200 || bytes > 64<<10 {
		t.Errorf("%d resident copies with %d body bytes; the arena holds %d chunks, %d bytes (want at most 64 KiB)", q.Len(), live, chunks, bytes)
	}
	// The delayed copies, once visible, still carry their bodies.
	r.to(r.w.Now() + 901)
	ds, err := q.Receive("c", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if string(d.Message.Body) != "delayed-order" {
			t.Fatalf("delayed copy %v has body %q", d.Message.ID, d.Message.Body)
		}
	}
	if len(ds) != 200 {
		t.Errorf("received %d delayed copies, want 200", len(ds))
	}
}
