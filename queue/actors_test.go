package queue

import (
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestWorkersAreKnownByName checks the queue's list of workers below and
// past maxActorScan, where it starts an index: each in-flight message
// names the worker that received it last, whether the worker was new,
// the last one seen, or one seen earlier.
func TestWorkersAreKnownByName(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	q, err := New(w, Config{Name: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	workers := 3 * maxActorScan
	order := []int{}
	for i := range workers {
		order = append(order, i, i, i/2) // new, the last one seen, an earlier one
	}
	want := map[sim.ID]string{}
	for _, k := range order {
		name := "worker-" + strconv.Itoa(k)
		if err := q.Send(w.Env().NewMessage("", nil, sim.Headers{}), 0); err != nil {
			t.Fatal(err)
		}
		got, err := q.Receive(name, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %v, %d deliveries", name, err, len(got))
		}
		want[got[0].Message.ID] = name
	}
	res := q.AppendResidents(nil, len(order))
	if len(res) != len(order) {
		t.Fatalf("%d residents, want %d", len(res), len(order))
	}
	for _, r := range res {
		if r.Consumer != want[r.Msg] {
			t.Errorf("%v was received by %q, the queue says %q", r.Msg, want[r.Msg], r.Consumer)
		}
	}
	if len(q.actors) != workers || q.actorIdx == nil {
		t.Errorf("%d workers known (want %d), index made: %v", len(q.actors), workers, q.actorIdx != nil)
	}
}
