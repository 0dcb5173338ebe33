package queue

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/internal/stored"
	"github.com/brokerlab/brokerlab/sim"
)

// TestDeliveredBodiesStayPut checks what the queue's body arena promises
// senders and handlers: a small body is the sender's bytes as they were
// at Send, even when the sender reuses its buffer; nil and empty bodies
// come back as such, a large one whole; a handler that keeps a delivered
// body finds it unchanged after the message is acked and thousands more
// are sent, received and acked; and a handler appending to its body
// never writes into the next message's.
func TestDeliveredBodiesStayPut(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "bodies"})
	big := bytes.Repeat([]byte("x"), 5000)
	want := map[sim.ID][]byte{}
	buf := make([]byte, 0, 64)
	for i := range 3000 {
		var body []byte
		switch i % 50 {
		case 7:
			body = nil
		case 8:
			body = []byte{}
		case 9:
			body = big
		default:
			buf = fmt.Appendf(buf[:0], "order-%d", i)
			body = buf
		}
		m := r.env.NewMessage("k", body, sim.Headers{})
		want[m.ID] = bytes.Clone(body)
		if err := q.Send(m, 0); err != nil {
			t.Fatal(err)
		}
	}
	type kept struct {
		id   sim.ID
		body []byte
	}
	var keep []kept
	for q.Len() > 0 {
		ds, err := q.Receive("c", 100)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range ds {
			w := want[d.Message.ID]
			if got := d.Message.Body; (got == nil) != (w == nil) || !bytes.Equal(got, w) {
				t.Fatalf("message %v: body %q, want %q", d.Message.ID, got, w)
			}
			if i+1 < len(ds) {
				grown := append(d.Message.Body, "!!!!"...)
				_ = grown
				if next := ds[i+1]; !bytes.Equal(next.Message.Body, want[next.Message.ID]) {
					t.Fatalf("appending to %v's body changed %v's to %q", d.Message.ID, next.Message.ID, next.Message.Body)
				}
			}
			if len(keep) < 500 {
				keep = append(keep, kept{d.Message.ID, d.Message.Body})
			}
			if err := q.Ack(d.Receipt); err != nil {
				t.Fatal(err)
			}
		}
		// Later sends fill the arena while the kept bodies' messages are gone.
		if q.Len() < 1000 && len(want) < 20_000 {
			for range 1000 {
				buf = fmt.Appendf(buf[:0], "later-%d", len(want))
				m := r.env.NewMessage("k", buf, sim.Headers{})
				want[m.ID] = bytes.Clone(buf)
				if err := q.Send(m, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, k := range keep {
		if !bytes.Equal(k.body, want[k.id]) {
			t.Fatalf("message %v: a handler's kept body changed to %q, was %q", k.id, k.body, want[k.id])
		}
	}
	if held, _ := q.s.bodies.Held(); held > 1 {
		t.Fatalf("an empty queue holds %d body chunks", held)
	}
}

// TestReturnedCopiesLetTheirChunksGo holds a long backlog whose every
// 50th copy is received and returned (a nack, an expired timeout) while
// the rest leave in order: the returned copies' bodies move to the newest
// chunk, so the arena holds about the chunks of the copies that remain,
// not every chunk a returned copy entered with, and every body still
// reads back as sent.
func TestReturnedCopiesLetTheirChunksGo(t *testing.T) {
	var s slab
	var c stored.Cache
	const n = 200_000
	bodies := make([][]byte, n)
	for i := range uint32(n) {
		slot := s.alloc()
		e := s.at(slot)
		bodies[i] = fmt.Appendf(nil, "shop#%d", i+1)
		m := sim.Message{ID: sim.ID(i + 1), Key: "k", Body: bodies[i], Created: 1}
		st := c.Store(&m)
		s.hold(e, &st, 1, 1)
		s.setState(slot, e, stReady)
	}
	var returned []uint32
	for i := range uint32(n) {
		e := s.at(i)
		if i%50 == 0 {
			s.setState(i, e, stInFlight)
			s.setState(i, e, stReady)
			returned = append(returned, i)
			continue
		}
		s.release(i)
	}
	for _, i := range returned {
		if got := s.body(s.at(i)); !bytes.Equal(got, bodies[i]) {
			t.Fatalf("slot %d: body %q, want %q", i, got, bodies[i])
		}
	}
	_, held := s.bodies.Held()
	need := 0
	for _, i := range returned {
		need += len(bodies[i])
	}
	if held > 2*need+64<<10 {
		t.Fatalf("%d bytes of chunks held for %d returned copies of %d bytes", held, len(returned), need)
	}
}
