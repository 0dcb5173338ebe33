package scenario

import (
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

func mustLoad(t *testing.T, path string) *Scenario {
	t.Helper()
	s, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDefaultsAndPositions checks that defaults are filled in and that
// positions of written fields are kept for the runner.
func TestDefaultsAndPositions(t *testing.T) {
	s := mustLoad(t, "testdata/valid/poison-dlq.yaml")
	q := s.Topology.Queues[1] // orders-dlq: everything defaulted
	if q.VisibilityTimeout != 30 || q.Retention != 0 || q.DeadLetter != nil || q.FIFO {
		t.Errorf("queue defaults: %+v", q)
	}
	c := s.Actors.Consumers[0]
	if got, want := c.FieldPos("queue"), (Pos{23, 14}); got != want {
		t.Errorf("consumer queue at %v, want %v", got, want)
	}
	if got := c.FieldPos("batch"); got != c.Pos {
		t.Errorf("unwritten field at %v, want the mapping's %v", got, c.Pos)
	}
	if c.Batch != 1 || c.Retry.Cap != 8 || c.Handler.Kind != sim.Poison || c.Handler.Keys != "kunde-2" {
		t.Errorf("consumer: %+v", c)
	}
	if s.Run.Cap() != 500 || s.Run.Until != UntilDrained {
		t.Errorf("run: %+v", s.Run)
	}
	o := mustLoad(t, "testdata/valid/outbox-relay.yaml")
	if o.Seed != 7 || o.Run.Cap() != 120 || o.Topology.Services[0].MaxAttempts != 5 {
		t.Errorf("outbox scenario: seed %d cap %d", o.Seed, o.Run.Cap())
	}
	r := o.Actors.Relays[1]
	if r.Mode != outbox.CDC || r.Batch != 10 || r.Interval != 1 || r.Lease != 5 || r.Backoff != 2 || r.Order != outbox.InOrder {
		t.Errorf("relay defaults: %+v", r)
	}
	l := mustLoad(t, "testdata/valid/log-replay.yaml")
	if l.Faults[0].Name != "fault-1" || l.Faults[1].Name != "fault-2" {
		t.Errorf("default fault names: %q %q", l.Faults[0].Name, l.Faults[1].Name)
	}
	if a := l.Timeline[3]; a.Partition != -1 || a.To != eventlog.SeekToEarliest {
		t.Errorf("seek defaults: %+v", a)
	}
	if g := l.Topology.Groups[1]; g.AutoOffsetReset != eventlog.ResetEarliest || g.SessionTimeout != 10 || g.AutoCommitInterval != 5 {
		t.Errorf("group defaults: %+v", g)
	}
}

func TestProducerKeys(t *testing.T) {
	for _, tc := range []struct {
		p    Producer
		want []string
	}{
		{Producer{}, nil},
		{Producer{Config: producer.Config{KeyPattern: "kunde-%d", KeyCount: 3}}, []string{"kunde-1", "kunde-2", "kunde-3"}},
		{Producer{Config: producer.Config{KeyPattern: "%d-x", KeyCount: 1}}, []string{"1-x"}},
		{Producer{Config: producer.Config{KeyPattern: "fixed", KeyCount: 1}}, []string{"fixed"}},
		{Producer{Config: producer.Config{Keys: []string{"kunde-A", "kunde-B"}}}, []string{"kunde-A", "kunde-B"}},
	} {
		if n := tc.p.NumKeys(); n != len(tc.want) {
			t.Errorf("%+v: NumKeys %d, want %d", tc.p, n, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if got := tc.p.Key(i); got != w {
				t.Errorf("%+v: Key(%d) = %q, want %q", tc.p, i, got, w)
			}
		}
	}
}

func TestExpectations(t *testing.T) {
	s := mustLoad(t, "testdata/valid/outbox-relay.yaml")
	wantNames := []string{"exactly-once", "max-duplicates", "", ""}
	for i, e := range s.Expect {
		c := s.Checker(e)
		if (c == nil) != (wantNames[i] == "") || c != nil && c.Name() != wantNames[i] {
			t.Errorf("expectation %v: checker %v, want %q", e, c, wantNames[i])
		}
	}
	// A queue consumer's checks are about its queue's logical consumer.
	if got := s.LedgerConsumer("billing"); got != "billing-in" {
		t.Errorf("LedgerConsumer(billing) = %q", got)
	}
	if got := s.Expect[1].String(); got != "max_duplicates(billing-in, max=25)" {
		t.Errorf("String() = %q", got)
	}
	e := s.Expect[3] // ledger.lost <= 1
	if e.String() != "ledger.lost <= 1" || !e.Holds(1) || e.Holds(2) {
		t.Errorf("%v: Holds wrong", e)
	}
	v, ok := e.Metric.Ledger(sim.Stats{Lost: 4})
	if !ok || v != 4 {
		t.Errorf("Ledger() = %v, %v", v, ok)
	}
	if _, ok := s.Expect[2].Metric.Ledger(sim.Stats{}); ok {
		t.Errorf("an outbox metric read from the ledger")
	}
	for op, want := range map[string][3]bool{
		"==": {false, true, false}, "!=": {true, false, true}, "<": {true, false, false},
		"<=": {true, true, false}, ">": {false, false, true}, ">=": {false, true, true},
	} {
		x := Expectation{Op: op, Value: 1}
		for i, v := range []float64{0, 1, 2} {
			if x.Holds(v) != want[i] {
				t.Errorf("%v %s 1 = %v", v, op, !want[i])
			}
		}
	}
}

// TestMetricFieldsCoverStats checks that every ledger metric field reads a
// field of sim.Stats.
func TestMetricFieldsCoverStats(t *testing.T) {
	for _, f := range MetricFields["ledger"] {
		m, msg := parseMetric("ledger." + f)
		if msg != "" {
			t.Fatal(msg)
		}
		if _, ok := m.Ledger(sim.Stats{}); !ok {
			t.Errorf("ledger.%s is not read from sim.Stats", f)
		}
	}
	for _, k := range MetricKinds {
		if len(MetricFields[k]) == 0 {
			t.Errorf("kind %s has no fields", k)
		}
	}
}

// TestSeedRange: a seed is any integer from 0 to 2^64-1; an unquoted
// number beyond that is out of range, not "a string".
func TestSeedRange(t *testing.T) {
	const body = "title: t\nrun: {ticks: 1}\ntopology: {queues: [{name: q}]}\nseed: "
	for _, c := range []struct {
		seed string
		want uint64
	}{{"0", 0}, {"42", 42}, {"18446744073709551615", 1<<64 - 1}, {"1e3", 1000}, {"1_000", 1000}} {
		s, err := Load("s.yaml", []byte(body+c.seed+"\n"))
		if err != nil || s.Seed != c.want {
			t.Errorf("seed: %s = %v, %v; want %d", c.seed, s, err, c.want)
		}
	}
	for _, c := range []struct{ seed, want string }{
		{"123456789012345678901234567890", "s.yaml:4:7: seed 123456789012345678901234567890 is out of range; a seed is between 0 and 18446744073709551615 (2^64-1)"},
		{"18446744073709551616", "s.yaml:4:7: seed 18446744073709551616 is out of range; a seed is between 0 and 18446744073709551615 (2^64-1)"},
		{"-123456789012345678901234567890", "s.yaml:4:7: seed -123456789012345678901234567890 is out of range; a seed is between 0 and 18446744073709551615 (2^64-1)"},
		{"1e30", "s.yaml:4:7: seed 1e30 is out of range; a seed is between 0 and 18446744073709551615 (2^64-1)"},
		{"-1", "s.yaml:4:7: seed must be an integer between 0 and 18446744073709551615, got the integer -1"},
		{"\"7\"", "s.yaml:4:7: seed must be an integer between 0 and 18446744073709551615, got the string \"7\""},
	} {
		_, err := Load("s.yaml", []byte(body+c.seed+"\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("seed: %s:\n got %v\nwant %s", c.seed, err, c.want)
		}
	}
}
