package bench

import (
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// wholeRunMessages is the size of the generated scenario.
const wholeRunMessages = 1_000_000

// wholeRun is one generated scenario: a producer publishing 1,000 messages
// per tick over 100 keys into a queue with a dead-letter queue, four
// competing consumers taking batches of 250, and a fault plan of transient
// handler failures, slow handlers, consumer crashes and broker outages. It
// runs headless (no trace sink but the ledger, which folds every event)
// until every message is acknowledged or dead-lettered.
type wholeRun struct {
	w         *sim.World
	q, dlq    *queue.Queue
	producer  *producer.Producer
	consumers []*queue.Consumer
}

func newWholeRun(tb testing.TB, n int) *wholeRun {
	tb.Helper()
	w, err := sim.New(sim.Config{Seed: 7})
	if err != nil {
		tb.Fatal(err)
	}
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "flaky-handler", Point: faults.HandlerTransient, Probability: 0.01},
		{Name: "slow-handler", Point: faults.HandlerSlow, Probability: 0.005, Param: 3},
		{Name: "worker-crash", Point: faults.ConsumerCrashBeforeProcess, Probability: 0.0002},
		{Name: "broker-down", Point: faults.BrokerUnavailable, Probability: 0.001},
	}}})
	if err != nil {
		tb.Fatal(err)
	}
	// Every constructor registers its component with the world, in the
	// phase its type fixes.
	r := &wholeRun{w: w}
	if r.dlq, err = queue.New(w, queue.Config{Name: "orders-dlq"}); err != nil {
		tb.Fatal(err)
	}
	if r.q, err = queue.New(w, queue.Config{Name: "orders", Faults: in, VisibilityTimeout: 10,
		DeadLetter: r.dlq, MaxReceiveCount: 5}); err != nil {
		tb.Fatal(err)
	}
	if r.producer, err = producer.New(w, producer.Config{Name: "shop", Target: r.q, Count: n, Rate: 1000,
		KeyPattern: "kunde-%d", KeyCount: 100, Type: "order.placed"}); err != nil {
		tb.Fatal(err)
	}
	for _, name := range []string{"worker-1", "worker-2", "worker-3", "worker-4"} {
		c, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: r.q, Name: name, Batch: 250,
			Retry: queue.FixedRetry(2), MaxAttempts: 5})
		if err != nil {
			tb.Fatal(err)
		}
		r.consumers = append(r.consumers, c)
	}
	return r
}

// run runs the scenario to its end; RunUntil's error says when it did not
// drain within the tick cap.
func (r *wholeRun) run(tb testing.TB) {
	if err := r.w.RunUntil(func() bool { return r.producer.Done() && r.q.Len() == 0 }, sim.DefaultMaxTicks); err != nil {
		tb.Fatalf("run did not finish: %v", err)
	}
}

// settled returns how many messages were processed or dead-lettered.
func (r *wholeRun) settled() int {
	n := r.dlq.Len()
	for _, c := range r.consumers {
		n += c.Stats().Processed
	}
	return n
}

// BenchmarkWholeRun1M runs the 1,000,000-message scenario once per
// iteration and reports the cost per message and messages per second;
// compare ns/msg with BenchmarkQueueLifecycle's ns/op.
func BenchmarkWholeRun1M(b *testing.B) {
	var elapsed time.Duration
	var cpu int64
	runs := 0
	for b.Loop() {
		b.StopTimer()
		r := newWholeRun(b, wholeRunMessages)
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		r.run(b)
		elapsed += time.Since(start)
		cpu += cpuTime() - cpu0
		runs++
		b.StopTimer()
		if got := r.settled(); got < wholeRunMessages {
			b.Fatalf("%d of %d messages settled", got, wholeRunMessages)
		}
		b.StartTimer()
	}
	per := float64(elapsed.Nanoseconds()) / float64(runs*wholeRunMessages)
	b.ReportMetric(per, "ns/msg")
	b.ReportMetric(float64(cpu)/float64(runs*wholeRunMessages), "cpu-ns/msg")
	b.ReportMetric(1e9/per, "msgs/s")
}

// TestWholeRunSmall runs the scenario with 20,000 messages and checks the
// ledger: nothing lost, every message settled.
func TestWholeRunSmall(t *testing.T) {
	r := newWholeRun(t, 20_000)
	r.run(t)
	if got := r.settled(); got < 20_000 {
		t.Fatalf("%d of 20000 messages settled", got)
	}
	if err := sim.Check(r.w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("orders")); err != nil {
		t.Fatal(err)
	}
}
