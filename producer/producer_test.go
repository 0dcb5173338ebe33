package producer_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// sink is a Publisher that records what it accepts and refuses while down
// returns true.
type sink struct {
	got  []sim.Message
	down func() bool
}

func (s *sink) Publish(m sim.Message) error {
	if s.down != nil && s.down() {
		return fmt.Errorf("sink refused %v: %w", m.ID, sim.ErrUnavailable)
	}
	s.got = append(s.got, m)
	return nil
}

func newWorld(t *testing.T) *sim.World {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestRateStartCountAndHeaders(t *testing.T) {
	w := newWorld(t)
	s := &sink{}
	p, err := producer.New(w, producer.Config{Name: "shop", Target: s, Count: 7, Rate: 3, Start: 4, KeyPattern: "kunde-%d", KeyCount: 2, Type: "order.placed"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Phase() != sim.PhaseProducer || p.Name() != "shop" || w.Components()[0] != "producer:shop" {
		t.Fatal("registration")
	}
	_ = w.Run(3)
	if len(s.got) != 0 || p.Produced() != 0 {
		t.Fatal("produced before the start tick")
	}
	_ = w.Run(1)
	if len(s.got) != 3 || p.Done() {
		t.Fatalf("t=4: %d messages", len(s.got))
	}
	_ = w.Run(5)
	if len(s.got) != 7 || !p.Done() || p.Produced() != 7 {
		t.Fatalf("%d messages, done %v", len(s.got), p.Done())
	}
	var keys, bodies []string
	for _, m := range s.got {
		keys = append(keys, m.Key)
		bodies = append(bodies, string(m.Body))
		if m.Headers.Type != "order.placed" || m.Headers.Source != "shop" {
			t.Fatalf("headers %+v", m.Headers)
		}
	}
	if got := strings.Join(keys, " "); got != "kunde-1 kunde-2 kunde-1 kunde-2 kunde-1 kunde-2 kunde-1" {
		t.Fatal(got)
	}
	if got := strings.Join(bodies, " "); got != "shop#1 shop#2 shop#3 shop#4 shop#5 shop#6 shop#7" {
		t.Fatal(got)
	}
	if s.got[0].Created != 4 || s.got[6].Created != 6 {
		t.Fatalf("created at %d and %d", s.got[0].Created, s.got[6].Created)
	}
}

func TestKeys(t *testing.T) {
	draw := func(cfg producer.Config) string {
		w := newWorld(t)
		s := &sink{}
		cfg.Name, cfg.Target, cfg.Count, cfg.Rate = "p", s, 8, 8
		if _, err := producer.New(w, cfg); err != nil {
			t.Fatal(err)
		}
		_ = w.Run(1)
		var keys []string
		for _, m := range s.got {
			keys = append(keys, m.Key)
		}
		return strings.Join(keys, ",")
	}
	for _, tc := range []struct {
		cfg  producer.Config
		want string
	}{
		{producer.Config{}, ",,,,,,,"},
		{producer.Config{KeyPattern: "order-%d"}, "order-1,order-2,order-3,order-4,order-5,order-6,order-7,order-8"},
		{producer.Config{KeyPattern: "fixed"}, "fixed,fixed,fixed,fixed,fixed,fixed,fixed,fixed"},
		{producer.Config{KeyPattern: "k%d-x", KeyCount: 3, KeyOrder: producer.RoundRobin}, "k1-x,k2-x,k3-x,k1-x,k2-x,k3-x,k1-x,k2-x"},
		{producer.Config{Keys: []string{"a", "b"}}, "a,b,a,b,a,b,a,b"},
	} {
		if got := draw(tc.cfg); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.cfg, got, tc.want)
		}
	}
	random := producer.Config{KeyPattern: "k-%d", KeyCount: 4, KeyOrder: producer.Random}
	a, b := draw(random), draw(random)
	if a != b || a == draw(producer.Config{KeyPattern: "k-%d", KeyCount: 4}) {
		t.Fatalf("random keys %s / %s are not reproducible or not random", a, b)
	}
	for _, k := range strings.Split(a, ",") {
		if k < "k-1" || k > "k-4" || len(k) != 3 {
			t.Fatalf("random key %q outside k-1..k-4", k)
		}
	}
	if got := draw(producer.Config{Keys: []string{"x", "y"}, KeyOrder: producer.Random}); strings.Trim(got, "xy,") != "" {
		t.Fatal(got)
	}
}

// TestRetriesWhileBrokerDown: a refused publish is kept and published
// again first on the next tick, in order, so nothing is lost and per-key
// order holds.
func TestRetriesWhileBrokerDown(t *testing.T) {
	w := newWorld(t)
	in, _ := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{{Name: "down", Point: faults.BrokerUnavailable, From: 2, Until: 5}}}})
	q, _ := queue.New(w, queue.Config{Name: "orders", Faults: in})
	_, _ = queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "w1", Batch: 10})
	p, err := producer.New(w, producer.Config{Name: "p", Target: q, Count: 6, Rate: 2, KeyPattern: "kunde-%d", KeyCount: 2, Type: "order.placed"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 100); err != nil {
		t.Fatal(err)
	}
	if p.Refused() == 0 || p.Dropped() != 0 || p.Pending() != 0 || p.Produced() != 6 {
		t.Fatalf("refused %d dropped %d produced %d", p.Refused(), p.Dropped(), p.Produced())
	}
	l := w.Ledger()
	if err := sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("orders"), sim.OrderedPerKey("orders")); err != nil {
		t.Fatal(err)
	}
	if r, _ := l.Record(1); r.Type != "order.placed" || r.Key != "kunde-1" {
		t.Fatalf("%+v", r)
	}
}

// TestDropGivesUpWithCause: with OnRefusedDrop a refused message is lost
// before any consumer, traced with its cause, and the producer goes on.
func TestDropGivesUpWithCause(t *testing.T) {
	w := newWorld(t)
	rec := &sim.Recorder{}
	w.Trace().Attach(rec)
	down := true
	q, _ := queue.New(w, queue.Config{Name: "orders"})
	_, _ = queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "w1"})
	s := &sink{down: func() bool { return down }}
	target := pubFunc(func(m sim.Message) error {
		if err := s.Publish(m); err != nil {
			return err
		}
		return q.Publish(m)
	})
	p, _ := producer.New(w, producer.Config{Name: "p", Target: target, Count: 4, Rate: 2, Type: "t", OnRefused: producer.OnRefusedDrop})
	_ = w.Run(1)
	down = false
	if err := w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 20); err != nil {
		t.Fatal(err)
	}
	if p.Dropped() != 2 || p.Refused() != 2 || len(s.got) != 2 {
		t.Fatalf("dropped %d refused %d accepted %d", p.Dropped(), p.Refused(), len(s.got))
	}
	var lost []sim.Event
	for _, e := range rec.Events() {
		if e.Kind == sim.KindLost {
			lost = append(lost, e)
		}
	}
	if len(lost) != 2 || lost[0].Consumer != "" || lost[0].Cause != sim.CauseBrokerUnavailable || lost[0].Where != "producer:p" ||
		lost[0].Type != "t" || !strings.Contains(lost[0].Detail, "sink refused m1") {
		t.Fatalf("lost events %+v", lost)
	}
	l := w.Ledger()
	err := sim.Check(l, sim.NoLoss())
	if err == nil || strings.Count(err.Error(), "lost before any consumer (broker unavailable)") != 2 {
		t.Fatalf("no-loss: %v", err)
	}
	if err := sim.Check(l, sim.ExactlyOnce("orders")); err != nil {
		t.Fatalf("the accepted messages were applied once: %v", err)
	}
	if st := l.Stats(); st.Lost != 2 || st.LostBy[0].Cause != sim.CauseBrokerUnavailable {
		t.Fatalf("%+v", st)
	}
}

type pubFunc func(m sim.Message) error

func (f pubFunc) Publish(m sim.Message) error { return f(m) }

func TestBodyAndSource(t *testing.T) {
	w := newWorld(t)
	s := &sink{}
	_, _ = producer.New(w, producer.Config{Name: "p", Target: s, Count: 2, Rate: 2, Source: "erp", Body: func(i int) []byte { return []byte{byte('a' + i)} }})
	_ = w.Run(1)
	if len(s.got) != 2 || string(s.got[1].Body) != "b" || s.got[0].Headers.Source != "erp" {
		t.Fatalf("%+v", s.got)
	}
}

func TestConfigValidate(t *testing.T) {
	w := newWorld(t)
	s := &sink{}
	for _, c := range []producer.Config{
		{},
		{Name: "p"},
		{Name: "p", Target: s},
		{Name: "p", Target: s, Count: 1, Rate: -1},
		{Name: "p", Target: s, Count: 1, Start: -1},
		{Name: "p", Target: s, Count: 1, KeyCount: -1},
		{Name: "p", Target: s, Count: 1, Keys: []string{}},
		{Name: "p", Target: s, Count: 1, Keys: []string{"a"}, KeyPattern: "k-%d"},
		{Name: "p", Target: s, Count: 1, KeyOrder: "shuffled"},
		{Name: "p", Target: s, Count: 1, KeyOrder: producer.Random},
		{Name: "p", Target: s, Count: 1, KeyOrder: producer.Random, KeyPattern: "k-%d"},
		{Name: "p", Target: s, Count: 1, OnRefused: "ignore"},
		{Name: "p", Target: sim.Publisher(nil), Count: 1},
	} {
		if _, err := producer.New(w, c); !errors.Is(err, producer.ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v", c, err)
		}
	}
	if _, err := producer.New(nil, producer.Config{Name: "p", Target: s, Count: 1}); !errors.Is(err, producer.ErrInvalidConfig) {
		t.Error(err)
	}
	if _, err := producer.New(w, producer.Config{Name: "p", Target: s, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := producer.New(w, producer.Config{Name: "p", Target: s, Count: 1}); !errors.Is(err, producer.ErrInvalidConfig) || !errors.Is(err, sim.ErrDuplicateName) {
		t.Errorf("a second producer:p: %v", err)
	}
	var zero producer.Producer
	zero.Step(1)
}
