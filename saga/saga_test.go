package saga_test

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/saga"
	"github.com/brokerlab/brokerlab/sim"
)

var steps = []saga.Step{{Name: "reserve", Compensation: "release"}, {Name: "charge", Compensation: "refund"}, {Name: "confirm"}}

func setup(t *testing.T, compensate bool, rules ...faults.Rule) (*sim.World, *saga.Orchestrator) {
	t.Helper()
	w, _ := sim.New(sim.Config{Seed: 1})
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: rules}})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := queue.New(w, queue.Config{Name: "orders", VisibilityTimeout: 3})
	o, err := saga.New(w, saga.Config{Name: "checkout", Queue: q, Compensate: compensate, Faults: in, Steps: steps, Timeout: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"order-1", "order-2", "order-3"} {
		_ = q.Send(w.Env().NewMessage(k, nil, sim.Headers{}), 0)
	}
	return w, o
}

// A declined payment without compensation leaves the reservation held;
// with it, nothing is held and the release applies once.
func TestDeclinedPaymentReleasesTheReservation(t *testing.T) {
	declined := faults.Rule{Name: "declined", Point: faults.SagaStepFailed, Match: faults.Match{Key: "order-2", Type: "charge"}}
	twice := faults.Rule{Name: "twice", Point: faults.SagaCompensationDuplicate}
	for _, c := range []struct {
		compensate bool
		want       saga.Metrics
	}{
		{false, saga.Metrics{Started: 3, Completed: 2, Failed: 1, Held: 1}},
		{true, saga.Metrics{Started: 3, Completed: 2, Compensated: 1, Compensations: 1, Duplicates: 1}},
	} {
		w, o := setup(t, c.compensate, declined, twice)
		_ = w.Run(10)
		if got := o.Metrics(); got != c.want {
			t.Errorf("compensate=%v: metrics %+v, want %+v", c.compensate, got, c.want)
		}
		s := o.Sagas()[1]
		if held := len(s.Held); c.compensate == (held != 0) {
			t.Errorf("compensate=%v: order-2 holds %v", c.compensate, s.Held)
		}
	}
}

// A step that never answers parks the saga after the timeout, holding
// what it did, and compensates nothing; a parked saga counts as parked,
// not as held.
func TestSilentStepParksAfterTheTimeout(t *testing.T) {
	silent := faults.Rule{Name: "silent", Point: faults.SagaStepSilent, Match: faults.Match{Key: "order-3", Type: "charge"}}
	w, o := setup(t, true, silent)
	for range 4 {
		w.Tick() // taken at 1, reserve at 2, charge sent at 3, timeout at 5
	}
	if s := o.Sagas()[2]; s.State != saga.Running {
		t.Fatalf("order-3 is %v before its timeout", s.State)
	}
	_ = w.Run(5)
	s := o.Sagas()[2]
	if s.State != saga.Parked || len(s.Held) != 1 || s.Held[0] != "reserve" {
		t.Errorf("order-3: %+v, want parked holding reserve", s)
	}
	if m := o.Metrics(); m.Parked != 1 || m.Compensations != 0 || m.Held != 0 {
		t.Errorf("metrics %+v", m)
	}
}

func TestConfigValidate(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	q, _ := queue.New(w, queue.Config{Name: "orders"})
	for _, c := range []saga.Config{
		{Queue: q, Steps: steps},
		{Name: "s", Steps: steps},
		{Name: "s", Queue: q},
		{Name: "s", Queue: q, Steps: []saga.Step{{Name: "a"}, {Name: "a"}}},
		{Name: "s", Queue: q, Steps: steps, Timeout: -1},
	} {
		if err := c.Validate(); !errors.Is(err, saga.ErrInvalidConfig) || !errors.Is(err, sim.ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// An order whose ack is lost comes back after its visibility timeout; the
// orchestrator knows it and starts no second saga.
func TestRedeliveredOrderStartsOneSaga(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, _ := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "lost", Point: faults.BrokerAckLost, Match: faults.Match{Key: "order-1"}, Count: 1},
	}}})
	q, _ := queue.New(w, queue.Config{Name: "orders", VisibilityTimeout: 2, Faults: in})
	o, _ := saga.New(w, saga.Config{Name: "checkout", Queue: q, Faults: in, Steps: steps})
	_ = q.Send(w.Env().NewMessage("order-1", nil, sim.Headers{}), 0)
	_ = w.Run(10)
	if m := q.Metrics(); m.Redeliveries != 1 {
		t.Fatalf("redeliveries %d, want 1: the test needs the order back", m.Redeliveries)
	}
	if m := o.Metrics(); m.Started != 1 || m.Completed != 1 {
		t.Errorf("metrics %+v, want one saga started and completed", m)
	}
}
