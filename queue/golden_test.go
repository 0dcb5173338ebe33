package queue

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenScenario exercises most of the queue in one short run: a FIFO-free
// queue with a redrive policy, three worker pools with different handlers
// (naive, idempotent, scripted) and retry policies, a redrive, and a fault
// at every queue and consumer point.
func goldenScenario() scenario {
	return scenario{
		seed: 2026,
		qc:   Config{Name: "orders", VisibilityTimeout: 4, MaxReceiveCount: 3},
		rules: []faults.Rule{
			{Name: "crash-before", Point: faults.ConsumerCrashBeforeProcess, Probability: 0.05},
			{Name: "crash-after", Point: faults.ConsumerCrashAfterEffect, Probability: 0.05},
			{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.15, Param: 2},
			{Name: "perm", Point: faults.HandlerPermanent, Match: faults.Match{Key: "kunde-3"}, Count: 1},
			{Name: "poison", Point: faults.HandlerPoison, Match: faults.Match{Key: "kunde-4"}, Count: 2},
			{Name: "slow", Point: faults.HandlerSlow, Probability: 0.1, Param: 6},
			{Name: "down", Point: faults.BrokerUnavailable, From: 6, Until: 9},
			{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.05},
			{Name: "delay", Point: faults.BrokerDelay, Probability: 0.1, Param: 3},
			{Name: "reorder", Point: faults.BrokerReorder, Probability: 0.1},
		},
		consumers: []ConsumerConfig{
			{Name: "w1", Batch: 2, Retry: FixedRetry(2)},
			{Name: "w2", Batch: 1, Retry: ExponentialRetry(1, 8, 0.5), MaxAttempts: 4},
			{Name: "w3", Batch: 3, Instances: 2},
		},
		handlers:  []int{hEffect, hByID, hScript},
		redriveAt: []sim.Tick{12},
		pc:        producer.Config{Name: "shop", Count: 24, Rate: 2, KeyPattern: "kunde-%d", KeyCount: 4, Type: "order.placed"},
	}
}

// TestGoldenTrace keeps the text trace of one seeded run byte for byte: the
// same seed must give the same run on any machine. Regenerate with -update
// and inspect the diff.
func TestGoldenTrace(t *testing.T) {
	s := goldenScenario()
	out := play(t, s)
	if out.err != nil {
		t.Fatal(out.err)
	}
	path := filepath.Join("testdata", "golden_trace.txt")
	if *update {
		if err := os.WriteFile(path, out.trace, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.trace, want) {
		t.Fatalf("trace differs from %s; run with -update and inspect the diff", path)
	}
	if err := sim.Check(out.w.env.Ledger, sim.NoLoss(), sim.AtLeastOnce("orders")); err != nil {
		t.Fatal(err)
	}
	if bad := account(s, out.w); len(bad) > 0 {
		t.Fatal(strings.Join(bad, "\n"))
	}
}

func TestBatchReceiveAndMisc(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders"})
	for i := 0; i < 5; i++ {
		if err := q.Publish(r.env.NewMessage("k", nil, sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	ds := r.recv(q, 3)
	if len(ds) != 3 || ds[0].Message.ID != 1 || ds[2].Message.ID != 3 {
		t.Fatalf("%+v", ds)
	}
	seen := map[Receipt]bool{}
	for _, d := range ds {
		if d.Receipt.IsZero() || seen[d.Receipt] || d.Receipt.Msg() != d.Message.ID {
			t.Fatalf("receipt %v", d.Receipt)
		}
		seen[d.Receipt] = true
	}
	if len(r.recv(q, 10)) != 2 || q.Metrics().InFlight != 5 {
		t.Fatal("second batch")
	}
	if err := q.DeadLetter(ds[0].Receipt, "x"); !errors.Is(err, ErrNoDeadLetter) {
		t.Fatal(err)
	}
	if q.Name() != "orders" || q.Where() != "queue:orders" || (Receipt{}).String() != "-" {
		t.Fatal("names")
	}
	if m := r.env.NewMessage("", nil, sim.Headers{}); q.Send(sim.Message{Key: "no-id"}, 0) != nil || m.ID+1 != r.env.IDs.Last() {
		t.Fatal("a message without an ID gets a fresh one")
	}
}
