package lab

import (
	"os"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// The broker-fidelity cases of issue 13 that a scenario file can express,
// each in a file under testdata/valid (which TestDeterminism also runs);
// these tests run them further and check the evidence their verdicts
// rest on.

// runValid loads testdata/valid/name with edit applied to its text, runs
// it with seed (0: the file's), requires every expectation to hold and
// returns the events of the run.
func runValid(t *testing.T, name string, seed uint64, edit func(string) string) []sim.Event {
	t.Helper()
	data, err := os.ReadFile("../scenario/testdata/valid/" + name)
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	if edit != nil {
		src = edit(src)
	}
	s, err := scenario.Load(name, []byte(src))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	rec := &sim.Recorder{}
	opts := Options{Sinks: []sim.Sink{rec}}
	if seed != 0 {
		opts.Seed = &seed
	}
	rep, err := Execute(s, opts)
	requirePass(t, rep, err)
	return rec.Events()
}

// faultsFired counts the fault events of rule.
func faultsFired(evs []sim.Event, rule string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == sim.KindFault && e.Rule == rule {
			n++
		}
	}
	return n
}

// SQS FIFO: "messages that belong to the same message group are always
// processed one by one, in a strict order relative to the message group"
// (SQS Developer Guide, FIFO queue delivery logic). A broker.delay holds
// a group's head back and the messages behind it wait: the file's
// ordered_per_key and exactly_once hold over many seeds, with delays
// firing in each.
func TestIssue13FIFOOrderUnderBrokerDelay(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 8
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		evs := runValid(t, "fifo-delay.yaml", seed, nil)
		if faultsFired(evs, "slow-broker") == 0 {
			t.Fatalf("seed %d: broker.delay never fired", seed)
		}
	}
}

// SQS: "If you don't delete the message [...] it becomes visible again"
// once the visibility timeout expires; an ack (DeleteMessage) the broker
// never got is such a message. broker.ack_lost redelivers: duplicates
// above 0 while at_least_once holds (the file's expectations).
func TestIssue13AckLostRedelivers(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		evs := runValid(t, "ack-lost.yaml", seed, nil)
		if faultsFired(evs, "lossy-acks") == 0 || count(evs, sim.KindVisibilityExpired, "queue:orders") == 0 {
			t.Fatalf("seed %d: no lost ack brought a message back", seed)
		}
	}
}

// SQS DelaySeconds: "messages sent to the queue remain invisible to
// consumers for the duration of the delay period". No message of the
// queue with delay: 6 is received or processed before tick 7 (sends start
// at tick 1); the strict consumer's batch of 10 is accepted.
func TestIssue13QueueDelay(t *testing.T) {
	evs := runValid(t, "sqs-queue.yaml", 0, nil)
	first := sim.Tick(-1)
	for _, e := range evs {
		if (e.Kind == sim.KindReceived || e.Kind == sim.KindProcessed) && strings.HasPrefix(e.Where, "queue:orders") {
			first = e.Tick
			break
		}
	}
	if first < 7 {
		t.Fatalf("first receive at tick %d, want 7 or later (queue delay 6)", first)
	}
	// Without the delay the first receive comes at once.
	evs = runValid(t, "sqs-queue.yaml", 0, func(s string) string { return strings.Replace(s, "delay: 6", "delay: 0", 1) })
	for _, e := range evs {
		if e.Kind == sim.KindReceived {
			if e.Tick > 2 {
				t.Fatalf("without a delay the first receive is at tick %d", e.Tick)
			}
			break
		}
	}
}

// SNS: "If an SQS endpoint is unavailable, SNS retries the delivery"
// (SNS delivery retries: the AWS managed endpoint policy). A four-tick
// outage of the target queue loses nothing with the file's policy or with
// the default (no fan_out_retry), and with fan_out_retry: none each
// forward refused during the outage is lost with cause "forward failed".
func TestIssue13FanOutRetry(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(string) string
	}{
		{"written", nil},
		{"default", func(s string) string {
			return strings.Replace(s, ", fan_out_retry: {immediate: 1, backoff: 4, delay: 1, max_delay: 4}", "", 1)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs := runValid(t, "fan-out-retry.yaml", 0, c.edit)
			if count(evs, sim.KindRejected, "topic:orders") == 0 {
				t.Fatal("the outage refused no forward: the test shows nothing")
			}
			if count(evs, sim.KindLost, "") != 0 {
				t.Fatal("a copy was lost")
			}
		})
	}
	evs := runValid(t, "fan-out-no-retry.yaml", 0, nil)
	lost := 0
	for _, e := range evs {
		if e.Kind == sim.KindLost {
			if e.Cause != sim.CauseForwardFailed {
				t.Errorf("lost with cause %q", e.Cause)
			}
			lost++
		}
	}
	if lost == 0 {
		t.Fatal("fan_out_retry: none lost nothing")
	}
}

// The new fields reach the models: each setting of the file is the
// model's configuration.
func TestIssue13FieldsReachTheModels(t *testing.T) {
	s, err := scenario.LoadFile("../scenario/testdata/valid/sqs-queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	q := s.Topology.Queues[0]
	if q.Delay != 6 || q.ReceiveWaitTime != 3 || q.MaxInFlight != 8 || !q.Strict {
		t.Errorf("queue: %+v", q)
	}
	c := s.Actors.Consumers
	if c[0].VisibilityTimeout != 3 || c[0].WaitTime != 0 || c[0].ShortPoll || !c[1].ShortPoll {
		t.Errorf("consumers: %+v / %+v", c[0], c[1])
	}
	f, err := scenario.LoadFile("../scenario/testdata/valid/fan-out-retry.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := pubsub.ForwardRetry{Immediate: 1, Backoff: 4, Delay: 1, MaxDelay: 4}
	if r := f.Topology.Topics[0].FanOutRetry; r == nil || r.Policy() != want {
		t.Errorf("fan_out_retry = %+v, want %+v", r, want)
	}
	n, err := scenario.LoadFile("../scenario/testdata/valid/fan-out-no-retry.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r := n.Topology.Topics[0].FanOutRetry; r == nil || !r.None || r.Policy().Attempts() != 1 {
		t.Errorf("fan_out_retry none = %+v", r)
	}
	d, err := scenario.LoadFile("../scenario/testdata/valid/fifo-delay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if q := d.Topology.Queues[0]; !q.ContentBasedDedup {
		t.Errorf("content_based_dedup not set: %+v", q)
	}
}
