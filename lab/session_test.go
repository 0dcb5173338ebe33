package lab

import (
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// driverFile is the scenario the session tests (and tui's screen tests)
// play: a queue with a DLQ, a topic, a log with a group and a service with
// a relay.
const driverFile = "testdata/driver.yaml"

func newTestDriver(t *testing.T) *Session {
	t.Helper()
	s, err := scenario.LoadFile(driverFile)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(s, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSessionSnapshot(t *testing.T) {
	d := newTestDriver(t)
	s0 := d.Snapshot()
	if s0.Header.Title != "Driver test" || s0.Header.Seed != 5 || s0.Header.Tick != 0 || s0.Narration.Index != 1 || s0.Narration.Total != 2 {
		t.Fatalf("initial snapshot header %+v narration %+v", s0.Header, s0.Narration)
	}
	for i := 0; i < 8; i++ {
		d.Step()
	}
	s := d.Snapshot()
	if s.Header.Tick != 8 {
		t.Fatalf("tick %d", s.Header.Tick)
	}
	if len(s.Queues) != 1 || s.Queues[0].Name != "orders" || s.Queues[0].DLQName != "orders-dlq" {
		t.Fatalf("queues %+v", s.Queues)
	}
	q := s.Queues[0]
	if q.DLQDepth == 0 || len(q.Chips) == 0 {
		t.Errorf("queue view %+v", q)
	}
	if len(s.Topics) != 1 || len(s.Topics[0].Subscribers) != 2 || s.Topics[0].Published == 0 || s.Topics[0].Subscribers[1].Missed == 0 {
		t.Errorf("topics %+v", s.Topics)
	}
	if len(s.Logs) != 1 || len(s.Logs[0].Partitions) != 2 || len(s.Logs[0].Groups) != 1 || len(s.Logs[0].Groups[0].Lag) != 2 {
		t.Errorf("logs %+v", s.Logs)
	}
	if len(s.Outboxes) != 1 || len(s.Outboxes[0].Relays) != 1 {
		t.Errorf("outboxes %+v", s.Outboxes)
	}
	names := map[string]int{}
	for _, x := range s.Series {
		names[x.Name()] = len(x.Values)
	}
	for _, n := range []string{"publish/t", "lag billing", "DLQ depth", "duplicates", "lost"} {
		if names[n] != 9 {
			t.Errorf("series %q has %d samples, want 9 (%v)", n, names[n], names)
		}
	}
	if len(s.Trace) == 0 || len(s.Trace) > MaxTrace || s.Ledger.Messages == 0 {
		t.Errorf("trace %d events, ledger %+v", len(s.Trace), s.Ledger)
	}
	// Snapshots are immutable: stepping on leaves s as it was.
	trace0, series0 := s.Trace[len(s.Trace)-1], s.Series[0].Values[len(s.Series[0].Values)-1]
	chips0 := append([]Chip(nil), q.Chips...)
	for i := 0; i < 5; i++ {
		d.Step()
	}
	if s.Trace[len(s.Trace)-1] != trace0 || s.Series[0].Values[len(s.Series[0].Values)-1] != series0 {
		t.Error("a later step changed an earlier snapshot")
	}
	for i := range chips0 {
		if s.Queues[0].Chips[i] != chips0[i] {
			t.Fatal("a later step changed an earlier snapshot's chips")
		}
	}
}

func TestSessionActions(t *testing.T) {
	d := newTestDriver(t)
	n := d.NextNarration()
	if n.Header.Tick != 10 || n.Narration.Index != 2 || n.Narration.Text != "Later." || !n.Narration.Pause {
		t.Fatalf("next narration: tick %d narration %+v", n.Header.Tick, n.Narration)
	}
	if _, err := d.Do(Redrive("")); err != nil {
		t.Errorf("redrive: %v", err)
	}
	if _, err := d.Do(SeekEarliest("")); err != nil {
		t.Errorf("seek: %v", err)
	}
	if _, err := d.Do(Crash("")); err != nil {
		t.Errorf("crash: %v", err)
	}
	if _, err := d.Do(Crash("nobody")); err == nil {
		t.Error("crash of an unknown consumer succeeded")
	}
	if _, err := d.Do(BrokerDown()); err != nil {
		t.Errorf("broker down: %v", err)
	}
	s := d.Step()
	rejected := false
	for _, e := range s.Trace {
		rejected = rejected || e.Tick == 11 && e.Kind == "rejected"
	}
	if !rejected {
		t.Error("broker down rejected nothing")
	}
	for !d.Done() {
		s = d.Step()
	}
	if s.Header.Tick != 40 {
		t.Errorf("ended at %d", s.Header.Tick)
	}
	r := d.Restart(9)
	if r.Header.Tick != 0 || r.Header.Seed != 9 || d.Done() || len(r.Series[0].Values) != 1 {
		t.Errorf("restart: %+v", r.Header)
	}
}

func TestSessionDeterministic(t *testing.T) {
	a, b := newTestDriver(t), newTestDriver(t)
	for i := 0; i < 40; i++ {
		sa, sb := a.Step(), b.Step()
		if len(sa.Trace) != len(sb.Trace) || sa.Ledger != sb.Ledger {
			t.Fatalf("tick %d differs", i)
		}
	}
}

func TestSessionCapsChips(t *testing.T) {
	s, err := scenario.Load("big.yaml", []byte(`
title: big
run: {ticks: 5}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 5000, rate: 2000}]
`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(s, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var snap Snapshot
	for !d.Done() {
		snap = d.Step()
	}
	q := snap.Queues[0]
	if q.Visible != 5000 || len(q.Chips) != MaxChips || len(snap.Trace) != MaxTrace {
		t.Errorf("visible %d, %d chips, %d trace events", q.Visible, len(q.Chips), len(snap.Trace))
	}
	if v := snap.Series[0].Values; len(v) != 6 || v[1] != 2000 || v[3] != 1000 {
		t.Errorf("publish rate %v", v)
	}
}

// TestBusiestBoundSparesLessons: the look-ahead's event bound only cuts
// large scenarios short; every lesson's first busiestTicks ticks have fewer
// events, so its opening tab is the one the full look-ahead finds.
func TestBusiestBoundSparesLessons(t *testing.T) {
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := New(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < busiestTicks && r.Step(); i++ {
		}
		if n := r.Env().Trace.Len(); n >= busiestEvents {
			t.Errorf("%s: %d events in %d ticks, the look-ahead stops at %d", l.Name, n, busiestTicks, busiestEvents)
		}
	}
}
