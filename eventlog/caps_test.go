package eventlog_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// TestPartitionCap checks that neither a configuration nor AddPartitions
// can make a topic hold more than MaxPartitions partitions, and that the
// error says the value and the limit.
func TestPartitionCap(t *testing.T) {
	limit := strconv.Itoa(eventlog.MaxPartitions)
	for _, n := range []int{eventlog.MaxPartitions + 1, 5000, 1 << 22} {
		err := eventlog.Config{Name: "orders", Partitions: n}.Validate()
		if !errors.Is(err, eventlog.ErrInvalidConfig) || !strings.Contains(err.Error(), strconv.Itoa(n)) || !strings.Contains(err.Error(), limit) {
			t.Errorf("Validate(Partitions: %d) = %v", n, err)
		}
		w, err := sim.New(sim.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eventlog.New(w, eventlog.Config{Name: "orders", Partitions: n}); !errors.Is(err, eventlog.ErrInvalidConfig) {
			t.Errorf("New(Partitions: %d) = %v", n, err)
		}
	}
	if err := (eventlog.Config{Name: "orders", Partitions: eventlog.MaxPartitions}).Validate(); err != nil {
		t.Errorf("Validate(Partitions: MaxPartitions) = %v", err)
	}

	r := newRig(t, 1, eventlog.Config{Partitions: 4})
	for _, n := range []int{eventlog.MaxPartitions - 3, 1 << 30, int(^uint(0) >> 1)} {
		err := r.topic.AddPartitions(n)
		if !errors.Is(err, eventlog.ErrInvalidConfig) || !strings.Contains(err.Error(), strconv.Itoa(n)) || !strings.Contains(err.Error(), limit) {
			t.Errorf("AddPartitions(%d) = %v", n, err)
		}
		if got := r.topic.Partitions(); got != 4 {
			t.Fatalf("after a refused AddPartitions(%d): %d partitions, want 4", n, got)
		}
	}
	if err := r.topic.AddPartitions(eventlog.MaxPartitions - 4); err != nil {
		t.Fatalf("AddPartitions up to the cap: %v", err)
	}
	if got := r.topic.Partitions(); got != eventlog.MaxPartitions {
		t.Errorf("%d partitions, want %d", got, eventlog.MaxPartitions)
	}
}

// TestPartitionsAddedFaultStopsAtCap checks that the fault point
// log.partitions_added, whatever its Param, grows a topic only up to
// MaxPartitions.
func TestPartitionsAddedFaultStopsAtCap(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 2},
		faults.Rule{Name: "scale-out", Point: faults.PartitionsAdded, From: 1, Count: 2, Param: 1 << 40})
	if err := r.w.Run(4); err != nil {
		t.Fatal(err)
	}
	if got := r.topic.Partitions(); got != eventlog.MaxPartitions {
		t.Errorf("%d partitions, want %d", got, eventlog.MaxPartitions)
	}
	// The second firing would add nothing: at the cap the point is not
	// consulted, so it does not fire.
	fired := 0
	for _, e := range r.rec.Events() {
		if e.Kind == sim.KindFault && e.Rule == "scale-out" {
			fired++
		}
	}
	if fired != 1 {
		t.Errorf("the rule fired %d times, want 1: a firing at the cap adds nothing", fired)
	}
}
