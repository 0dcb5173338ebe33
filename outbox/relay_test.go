package outbox

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// runMultiRelay runs one seed: a writer, three relays with random settings,
// relay crashes and broker outages, then a quiet period to drain.
func runMultiRelay(t *testing.T, seed uint64, ordering Ordering) (crashes, dups int) {
	w := mustWorld(t, seed)
	env := w.Env()
	rnd := env.Stream("test/setup")
	lease := sim.Tick(2 + rnd.IntN(5))
	s := mustService(t, w, false)
	p := newSink(w)
	in := mustFaults(t, w,
		faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Probability: 0.03 + 0.1*rnd.Float64(), Until: 150},
		faults.Rule{Name: "broker-down", Point: faults.BrokerUnavailable, Probability: 0.1 * rnd.Float64(), Until: 150},
	)
	customers := []string{"kunde-A", "kunde-B", "kunde-C", "kunde-D", "kunde-E"}
	wr := mustWriter(t, w, WriterConfig{Service: s, Mode: Outbox})
	mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Keys: customers, RandomKeys: true, Rate: 1 + rnd.IntN(3), Count: 80})
	var relays []*Relay
	for i := 0; i < 3; i++ {
		r := mustRelay(t, w, RelayConfig{
			Name: "relay-" + strconv.Itoa(i), Service: s, Target: p, Faults: in,
			Batch: 1 + rnd.IntN(6), Lease: lease, MaxAttempts: 1000, Backoff: sim.Tick(rnd.IntN(3)),
			Ordering: ordering, MarkEach: rnd.IntN(2) == 0, ContinueOnError: rnd.IntN(2) == 0 && ordering == PerAggregate,
			RestartAfter: sim.Tick(1 + rnd.IntN(12)), PollEvery: sim.Tick(1 + rnd.IntN(2)),
		})
		relays = append(relays, r)
	}
	audit := NewInFlightCheck(relays...)
	env.Trace.Attach(audit)
	var jsonl bytes.Buffer
	env.Trace.Attach(sim.NewJSONWriter(&jsonl))
	if err := w.Run(400); err != nil {
		t.Fatal(err)
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("seed %d (%s): "+format, append([]any{seed, ordering}, args...)...)
	}
	if err := audit.Err(); err != nil {
		fail("%v", err)
	}
	rows := s.Rows()
	if len(rows) != 80 {
		fail("%d rows, want 80", len(rows))
	}
	for _, r := range rows {
		if r.State != StateSent {
			fail("row %d is %s after the quiet period", r.ID, r.State)
		}
		if p.count(r.Msg) == 0 {
			fail("row %d (%s) never published: lost", r.ID, r.Msg)
		}
	}
	checks := []sim.Checker{sim.NoLoss(), sim.AtLeastOnce("sink")}
	if ordering == PerAggregate {
		checks = append(checks, sim.OrderedPerKey("sink"))
	}
	if err := sim.Check(w.Ledger(), checks...); err != nil {
		fail("%v", err)
	}
	foldsAgain(t, w, &jsonl)
	for _, r := range relays {
		crashes += r.Stats().Crashes
	}
	m := s.Metrics()
	if m.Pending != 0 || m.Sent != 80 || m.Marked != 80 || m.Duplicates() != w.Ledger().Duplicates("sink") {
		fail("metrics %+v, ledger duplicates %d", m, w.Ledger().Duplicates("sink"))
	}
	return crashes, w.Ledger().Duplicates("sink")
}

func TestMultiRelayLeases(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 40
	}
	for _, ordering := range []Ordering{PerAggregate, InOrder} {
		crashes, dups := 0, 0
		for seed := 1; seed <= seeds; seed++ {
			c, d := runMultiRelay(t, uint64(seed), ordering)
			crashes += c
			dups += d
			if t.Failed() {
				return
			}
		}
		t.Logf("%s: %d seeds, %d relay crashes, %d duplicate publishes, no row in flight twice, none lost", ordering, seeds, crashes, dups)
		if crashes == 0 || dups == 0 {
			t.Errorf("%s: the fault mix produced %d crashes and %d duplicates; want both", ordering, crashes, dups)
		}
	}
}

func TestCrashedRelayLeaseExpires(t *testing.T) {
	w := mustWorld(t, 3)
	var rec sim.Recorder
	w.Trace().Attach(&rec)
	s := mustService(t, w, false)
	p := newSink(w)
	in := mustFaults(t, w, faults.Rule{Name: "a-dies", Point: faults.RelayCrashAfterPublish, Match: faults.Match{Consumer: "A"}, Nth: 1})
	_, row, err := s.PlaceOrder("kunde-A", 10)
	if err != nil {
		t.Fatal(err)
	}
	a := mustRelay(t, w, RelayConfig{Name: "A", Service: s, Target: p, Faults: in, Lease: 5, RestartAfter: 100})
	b := mustRelay(t, w, RelayConfig{Name: "B", Service: s, Target: p, Faults: in, Lease: 5})
	if err := w.Run(10); err != nil {
		t.Fatal(err)
	}
	var pubs []string
	for _, e := range rec.Events() {
		if e.Kind == sim.KindRelayed {
			pubs = append(pubs, fmt.Sprintf("t=%d %s", e.Tick, e.Actor))
		}
	}
	// A publishes at t=1 and dies holding the lease until t=6; B takes over then.
	if got, want := strings.Join(pubs, ", "), "t=1 A, t=6 B"; got != want {
		t.Fatalf("publishes %q, want %q", got, want)
	}
	if r, _ := s.Row(row.ID); r.State != StateSent {
		t.Errorf("row %+v, want sent", r)
	}
	if !a.Down() || a.Stats().Crashes != 1 || b.Stats().Marked != 1 {
		t.Errorf("A %+v down=%v, B %+v", a.Stats(), a.Down(), b.Stats())
	}
	if d := w.Ledger().Duplicates("sink"); d != 1 {
		t.Errorf("%d duplicates, want 1 (B re-published what A had published)", d)
	}
}

// TestRelayStartKillResume runs a relay from a start tick, kills it while
// rows pile up and resumes it: nothing is lost, only delayed.
func TestRelayStartKillResume(t *testing.T) {
	for _, cdc := range []bool{false, true} {
		w := mustWorld(t, 1)
		s := mustService(t, w, cdc)
		p := newSink(w)
		wr := mustWriter(t, w, WriterConfig{Service: s, Mode: Outbox})
		mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Count: 10, Keys: []string{"kunde-A"}})
		type relay interface {
			Kill()
			Resume()
			Down() bool
		}
		var r relay
		if cdc {
			c, err := NewCDCRelay(w, CDCConfig{Service: s, Target: p, Start: 3, Interval: 2})
			if err != nil {
				t.Fatal(err)
			}
			r = c
		} else {
			r = mustRelay(t, w, RelayConfig{Service: s, Target: p, Start: 3, PollEvery: 2})
		}
		w.At(5, "kill", r.Kill)
		w.At(12, "resume", r.Resume)
		if err := w.Run(4); err != nil {
			t.Fatal(err)
		}
		if len(p.got) != 3 || r.Down() { // t=1..4 placed 4 orders; the relay ran at t=3 only
			t.Fatalf("cdc=%v: %d published by t=4, down=%v; want 3 (the relay starts at t=3)", cdc, len(p.got), r.Down())
		}
		if err := w.Run(7); err != nil { // to t=11, killed since t=5
			t.Fatal(err)
		}
		if len(p.got) != 3 || !r.Down() {
			t.Fatalf("cdc=%v: %d published while killed, down=%v", cdc, len(p.got), r.Down())
		}
		if err := w.Run(2); err != nil { // resumed at t=12
			t.Fatal(err)
		}
		if len(p.got) != 10 || r.Down() {
			t.Fatalf("cdc=%v: %d published after the resume, down=%v; want 10", cdc, len(p.got), r.Down())
		}
		if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("sink"), sim.OrderedPerKey("sink")); err != nil {
			t.Errorf("cdc=%v: %v", cdc, err)
		}
	}
}

func TestPerAggregateBlocksOnlyItsAggregate(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	s := mustService(t, w, false)
	p := newSink(w)
	for _, c := range []string{"kunde-A", "kunde-B", "kunde-A", "kunde-B"} {
		if _, _, err := s.PlaceOrder(c, 1); err != nil {
			t.Fatal(err)
		}
	}
	first := s.Rows()[0]
	p.reject = func(m sim.Message) error {
		if m.ID == first.Msg {
			return errScripted
		}
		return nil
	}
	r := mustRelay(t, w, RelayConfig{Service: s, Target: p, Ordering: PerAggregate, ContinueOnError: true, Backoff: 4})
	if err := r.Poll(); !errors.Is(err, errScripted) {
		t.Fatalf("Poll = %v", err)
	}
	// kunde-A's head failed: its second row waits; kunde-B goes through.
	if got := fmt.Sprint(rowStates(s)); got != "[pending sent pending sent]" {
		t.Fatalf("states %s", got)
	}
	env.Clock.Set(2) // row 1 still backs off until t=4: kunde-A stays blocked
	if err := r.Poll(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rowStates(s)); got != "[pending sent pending sent]" {
		t.Fatalf("states during back-off %s", got)
	}
	p.reject = nil
	env.Clock.Set(4)
	if err := r.Poll(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rowStates(s)); got != "[sent sent sent sent]" {
		t.Fatalf("states %s", got)
	}
	if err := sim.Check(w.Ledger(), sim.OrderedPerKey("sink"), sim.ExactlyOnce("sink")); err != nil {
		t.Error(err)
	}
}

func TestDeadLetters(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	s := mustService(t, w, false)
	p := newSink(w)
	var poison Row
	for i, c := range []string{"kunde-A", "kunde-B", "kunde-C"} {
		_, r, err := s.PlaceOrder(c, int64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			poison = r
		}
	}
	p.reject = func(m sim.Message) error {
		if m.ID == poison.Msg {
			return errors.New("schema mismatch")
		}
		return nil
	}
	r := mustRelay(t, w, RelayConfig{Service: s, Target: p, MaxAttempts: 3, Backoff: 1, MaxBackoff: 2})
	for tick := sim.Tick(1); tick <= 10; tick++ {
		env.Clock.Set(tick)
		r.Step(tick)
	}
	dead := s.DeadLetters()
	if len(dead) != 1 || dead[0].ID != poison.ID || dead[0].Attempts != 3 || !strings.Contains(dead[0].LastError, "schema mismatch") {
		t.Fatalf("dead letters %+v, want the poison row after 3 attempts", dead)
	}
	if got := fmt.Sprint(rowStates(s)); got != "[sent dead sent]" {
		t.Fatalf("states %s: the poison row must not block the rest forever", got)
	}
	if m := s.Metrics(); m.DeadLetters != 1 || m.Failed != 3 || m.Pending != 0 {
		t.Errorf("metrics %+v", m)
	}
	if rec, _ := w.Ledger().Record(poison.Msg); rec.State != sim.StateDeadLettered || rec.Where != "outbox:shop" {
		t.Errorf("ledger record %+v, want dead-lettered at outbox:shop", rec)
	}
	// Parked: not a loss, and nothing is pending.
	if err := sim.Check(w.Ledger(), sim.NoLoss()); err != nil {
		t.Errorf("a dead row is parked, not lost: %v", err)
	}
	// A dead letter is never polled again on its own.
	r.Step(11)
	if p.attempts != 5 {
		t.Errorf("%d publish attempts, want 5 (3 for the poison row)", p.attempts)
	}
	// Fix the consumer, then retry by hand.
	p.reject = nil
	if err := s.Retry(dead[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Retry(dead[0].ID); !errors.Is(err, ErrNotDead) {
		t.Errorf("second Retry = %v, want ErrNotDead", err)
	}
	if err := s.Retry(99); !errors.Is(err, ErrNotFound) {
		t.Errorf("Retry(99) = %v, want ErrNotFound", err)
	}
	if row, _ := s.Row(poison.ID); row.State != StatePending || row.Attempts != 0 || row.Msg != poison.Msg {
		t.Fatalf("retried row %+v", row)
	}
	if rec, _ := w.Ledger().Record(poison.Msg); rec.State != sim.StatePending || rec.Where != "outbox:shop" {
		t.Errorf("ledger record after the retry %+v, want pending at outbox:shop", rec)
	}
	env.Clock.Set(12)
	r.Step(12)
	if len(s.DeadLetters()) != 0 || p.count(poison.Msg) != 1 {
		t.Fatalf("after the retry: dead %v, published %d", s.DeadLetters(), p.count(poison.Msg))
	}
	if m := s.Metrics(); m.DeadLetters != 0 || m.Retried != 1 || m.Sent != 3 {
		t.Errorf("metrics %+v", m)
	}
	if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("sink")); err != nil {
		t.Error(err)
	}
}

func TestCleanup(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	s := mustService(t, w, false)
	p := newSink(w)
	r := mustRelay(t, w, RelayConfig{Service: s, Target: p})
	for tick := sim.Tick(1); tick <= 6; tick++ {
		env.Clock.Set(tick)
		if _, _, err := s.PlaceOrder("kunde-A", int64(tick)); err != nil {
			t.Fatal(err)
		}
		r.Step(tick)
	}
	if _, _, err := s.PlaceOrder("kunde-A", 99); err != nil { // stays pending
		t.Fatal(err)
	}
	n, err := s.Cleanup(3, 0) // now 6: rows processed at t<=3 go
	if err != nil || n != 3 {
		t.Fatalf("Cleanup = %d, %v; want 3", n, err)
	}
	var ids []uint64
	for _, row := range s.Rows() {
		ids = append(ids, row.ID)
	}
	if fmt.Sprint(ids) != "[4 5 6 7]" {
		t.Fatalf("rows left %v", ids)
	}
	if m := s.Metrics(); m.Cleaned != 3 || m.Sent != 3 || m.Pending != 1 {
		t.Errorf("metrics %+v", m)
	}
	if _, err := s.Cleanup(-1, 0); err == nil {
		t.Error("negative age accepted")
	}
	// The relay cleans up by itself when asked to.
	r2 := mustRelay(t, w, RelayConfig{Name: "r2", Service: s, Target: p, CleanupAfter: 1})
	env.Clock.Set(20)
	r2.Step(20)
	if rows := s.Rows(); len(rows) != 1 || rows[0].ID != 7 {
		t.Fatalf("rows after relay cleanup %+v", rows)
	}
}

// TestServiceCleanupAfter: a service with CleanupAfter removes old sent
// rows by itself, whichever relay marked them.
func TestServiceCleanupAfter(t *testing.T) {
	w := mustWorld(t, 1)
	s, err := New(w, Config{Name: "shop", CleanupAfter: 3})
	if err != nil {
		t.Fatal(err)
	}
	wr := mustWriter(t, w, WriterConfig{Service: s, Mode: Outbox})
	mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Count: 5})
	mustRelay(t, w, RelayConfig{Service: s, Target: newSink(w)})
	if err := w.Run(6); err != nil { // rows marked at t=1..5; those of t<=3 go
		t.Fatal(err)
	}
	if m := s.Metrics(); m.Cleaned != 3 || m.Sent != 2 || len(s.Rows()) != 2 {
		t.Errorf("metrics %+v, %d rows", m, len(s.Rows()))
	}
	if _, err := New(w, Config{Name: "shop"}); err != nil {
		t.Errorf("a second service of the same name without a cleaner: %v", err)
	}
	if _, err := New(w, Config{Name: "shop", CleanupAfter: 1}); !errors.Is(err, sim.ErrDuplicateName) {
		t.Errorf("a second cleaner of the same name: %v", err)
	}
}

func TestRelayConfigValidate(t *testing.T) {
	w := mustWorld(t, 1)
	s := mustService(t, w, false)
	p := newSink(w)
	bad := []RelayConfig{
		{Target: p},
		{Service: s},
		{Service: s, Target: p, Batch: -1},
		{Service: s, Target: p, Lease: -1},
		{Service: s, Target: p, Ordering: 7},
		{Service: s, Target: p, Start: -1},
	}
	for i, c := range bad {
		if _, err := NewRelay(w, c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %d: %v", i, err)
		}
	}
	if _, err := NewRelay(mustWorld(t, 2), RelayConfig{Service: s, Target: p}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a relay of another world: %v", err)
	}
	mustRelay(t, w, RelayConfig{Name: "r", Service: s, Target: p})
	if _, err := NewRelay(w, RelayConfig{Name: "r", Service: s, Target: p}); !errors.Is(err, sim.ErrDuplicateName) {
		t.Errorf("two relays named r: %v", err)
	}
	if _, err := New(w, Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("nameless service: %v", err)
	}
	if _, err := New(nil, Config{Name: "x"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("service without a world: %v", err)
	}
}
