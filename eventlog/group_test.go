package eventlog_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// crashRun produces 60 records over 20 ticks into 3 partitions, consumed by
// two members in the given commit mode under the given crash rules, and
// drains the group.
func crashRun(t *testing.T, mode eventlog.CommitMode, rules ...faults.Rule) *rig {
	t.Helper()
	r := newRig(t, 42, eventlog.Config{Partitions: 3}, rules...)
	g := r.group(eventlog.GroupConfig{Name: "billing"})
	r.member(g, eventlog.MemberConfig{Name: "b1", Commit: mode, Batch: 4})
	r.member(g, eventlog.MemberConfig{Name: "b2", Commit: mode, Batch: 4})
	r.producer("shop", keys5, 3, 20)
	_ = r.w.Run(20)
	r.drain(g, 500)
	return r
}

func crashes(r *rig) int { return len(r.events(sim.KindCrashed)) }

func TestCommitAfterCrashRereads(t *testing.T) {
	for _, point := range []faults.Point{faults.MemberCrash, faults.ConsumerCrashBeforeCommit, faults.ConsumerCrashAfterEffect} {
		t.Run(string(point), func(t *testing.T) {
			r := crashRun(t, eventlog.CommitAfter, faults.Rule{Name: "crash", Point: point, Probability: 0.1, Count: 4, Match: faults.Match{Group: "billing"}})
			l := r.env.Ledger
			if crashes(r) == 0 {
				t.Fatal("no crash happened")
			}
			if err := sim.Check(l, sim.NoLoss(), sim.AtLeastOnce("billing"), sim.OrderedPerKey("billing")); err != nil {
				t.Error(err)
			}
			if d := l.DuplicateEffects("billing"); d == 0 {
				t.Error("at-least-once under crashes re-read nothing")
			}
			if err := sim.Check(l, sim.AtMostOnce("billing")); err == nil {
				t.Error("AtMostOnce holds although records were re-read")
			}
		})
	}
}

func TestCommitBeforeCrashLoses(t *testing.T) {
	r := crashRun(t, eventlog.CommitBefore, faults.Rule{Name: "crash", Point: faults.MemberCrash, Probability: 0.1, Count: 4})
	l := r.env.Ledger
	if crashes(r) == 0 {
		t.Fatal("no crash happened")
	}
	r.refold()
	if err := sim.Check(l, sim.AtMostOnce("billing"), sim.OrderedPerKey("billing")); err != nil {
		t.Error(err)
	}
	if d := l.Duplicates("billing"); d != 0 {
		t.Errorf("at-most-once delivered %d duplicates", d)
	}
	err := sim.Check(l, sim.NoLoss())
	vs := violations(err)
	if len(vs) == 0 {
		t.Fatal("NoLoss holds although the member committed before processing and crashed")
	}
	for _, v := range vs {
		if !strings.Contains(v.Detail, string(sim.CauseCommitBeforeProcess)) {
			t.Errorf("loss with another cause: %v", v)
		}
	}
	if err := sim.Check(l, sim.AtLeastOnce("billing")); err == nil {
		t.Error("AtLeastOnce holds although records were lost")
	}
	// Conservation: every record was applied once or lost with its cause.
	for _, o := range l.Outcomes("billing") {
		if o.Verdict == sim.VerdictApplied && o.Effects != 1 || o.Verdict != sim.VerdictApplied && (o.Verdict != sim.VerdictLost || o.Cause != sim.CauseCommitBeforeProcess) {
			t.Errorf("%v: %s (%s), %d effects", o.Origin, o.Verdict, o.Cause, o.Effects)
		}
	}
}

func TestAutoCommitCrashRereads(t *testing.T) {
	r := newRig(t, 3, eventlog.Config{Partitions: 2},
		faults.Rule{Name: "crash", Point: faults.MemberCrash, From: 9, Count: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	r.member(g, eventlog.MemberConfig{Name: "a", Commit: eventlog.CommitAuto, AutoCommitEvery: 5, Batch: 1})
	r.producer("p", keys5, 1, 12)
	// Auto-commit at the start of t=5; t=5..8 process one record each; the
	// member crashes at t=9 before processing and restarts at t=10.
	_ = r.w.Run(12)
	r.drain(g, 100)
	if crashes(r) != 1 {
		t.Fatalf("%d crashes", crashes(r))
	}
	l := r.env.Ledger
	if err := sim.Check(l, sim.NoLoss(), sim.AtLeastOnce("g"), sim.OrderedPerKey("g")); err != nil {
		t.Error(err)
	}
	if d := l.DuplicateEffects("g"); d != 4 {
		t.Errorf("%d duplicate effects, want 4 (processed since the last auto-commit)", d)
	}
	if err := sim.Check(l, sim.AtMostOnce("g")); err == nil {
		t.Error("AtMostOnce holds although records were re-read")
	}
}

func TestOffByOneRereadsLastRecord(t *testing.T) {
	r := newRig(t, 3, eventlog.Config{Partitions: 2},
		faults.Rule{Name: "crash", Point: faults.MemberCrash, From: 3, Count: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	r.member(g, eventlog.MemberConfig{Name: "a", Commit: eventlog.CommitOffByOne})
	r.publish(10, keys5...)
	var ends [2]int64
	r.w.At(3, "one more record", func() {
		ends = [2]int64{r.topic.End(0), r.topic.End(1)}
		_ = r.topic.Publish(r.env.NewMessage("kunde-A", nil, sim.Headers{}))
	})
	_ = r.w.Run(2)
	for p := 0; p < 2; p++ {
		if c, _ := g.Committed(p); c != r.topic.End(p)-1 {
			t.Errorf("p%d committed %d, end %d: off-by-one should commit the last processed offset", p, c, r.topic.End(p))
		}
	}
	_ = r.w.Run(4) // t=3: polls the new record and crashes; t=4: restarts
	// Lag never reaches 0 with this mistake: one record per partition stays
	// "unread" for the group.
	if lag := g.Metrics().Lag; lag != 2 {
		t.Errorf("lag %d, want 2", lag)
	}
	if crashes(r) != 1 {
		t.Fatalf("%d crashes", crashes(r))
	}
	l := r.env.Ledger
	if err := sim.Check(l, sim.NoLoss(), sim.AtLeastOnce("g")); err != nil {
		t.Error(err)
	}
	if d := l.DuplicateEffects("g"); d != 2 {
		t.Errorf("%d duplicate effects after the restart, want 2 (one per partition)", d)
	}
	applied := map[string]int{}
	for _, e := range r.events(sim.KindProcessed) {
		applied[fmt.Sprintf("p%d/%d", e.Partition, e.Offset)]++
	}
	var twice []string
	for p := 0; p < 2; p++ {
		for off := int64(0); off < r.topic.End(p); off++ {
			if k := fmt.Sprintf("p%d/%d", p, off); applied[k] == 2 {
				twice = append(twice, k)
			}
		}
	}
	if got, want := strings.Join(twice, " "), fmt.Sprintf("p0/%d p1/%d", ends[0]-1, ends[1]-1); got != want {
		t.Errorf("re-applied %s, want %s (the last record processed before the crash)", got, want)
	}
}

// A member that misses its session timeout is removed; when it wakes up,
// its commit carries the old generation and is rejected and traced.
func TestSessionTimeoutStaleCommit(t *testing.T) {
	r := newRig(t, 5, eventlog.Config{Partitions: 2},
		faults.Rule{Name: "gc-pause", Point: faults.MemberSessionTimeout, From: 3, Count: 1, Match: faults.Match{Consumer: "a"}})
	g := r.group(eventlog.GroupConfig{Name: "g", SessionTimeout: 4})
	a := r.member(g, eventlog.MemberConfig{Name: "a", Batch: 2})
	r.member(g, eventlog.MemberConfig{Name: "b", Batch: 2})
	r.producer("p", keys5, 2, 15)
	_ = r.w.Run(15)
	r.drain(g, 100)
	var stale []sim.Event
	for _, e := range r.events(sim.KindRejected) {
		if strings.Contains(e.Detail, "stale") {
			stale = append(stale, e)
		}
	}
	if len(stale) == 0 || stale[0].Actor != "a" {
		t.Fatalf("no stale commit by a rejected; trace:\n%s", r.traceText())
	}
	timeouts := 0
	for _, e := range r.events(sim.KindRebalanced) {
		if strings.Contains(e.Detail, "session timeout") {
			timeouts++
		}
	}
	if timeouts != 1 {
		t.Errorf("%d session-timeout rebalances, want 1", timeouts)
	}
	if !a.Active() || g.Metrics().RejectedCommits == 0 {
		t.Errorf("a active=%v, metrics %+v", a.Active(), g.Metrics())
	}
	if err := sim.Check(r.env.Ledger, sim.NoLoss(), sim.AtLeastOnce("g"), sim.OrderedPerKey("g")); err != nil {
		t.Error(err)
	}
}

func TestCommitValidation(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 2})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	a := r.member(g, eventlog.MemberConfig{Name: "a"})
	r.publish(4, keys5[:4]...)
	old := g.Generation()
	r.member(g, eventlog.MemberConfig{Name: "b"})
	if err := g.Commit("a", old, a.Assigned()[0], 1); !errors.Is(err, eventlog.ErrStaleGeneration) {
		t.Errorf("commit from generation %d: %v", old, err)
	}
	if err := g.Commit("a", g.Generation(), 1, 1); !errors.Is(err, eventlog.ErrNotAssigned) {
		t.Errorf("commit for b's partition: %v", err)
	}
	if err := g.Commit("zz", g.Generation(), 0, 1); !errors.Is(err, eventlog.ErrUnknownMember) {
		t.Errorf("unknown member: %v", err)
	}
	// A negative offset is refused (Kafka's client refuses it too:
	// OffsetAndMetadata throws "Invalid negative offset"); an offset past the
	// end is accepted, see TestCommitBeyondTheEndIsAccepted.
	if err := g.Commit("a", g.Generation(), 0, -1); !errors.Is(err, eventlog.ErrOffsetOutOfRange) {
		t.Errorf("negative commit: %v", err)
	}
	if err := g.Commit("a", g.Generation(), 0, 1); err != nil {
		t.Fatal(err)
	}
	if c, ok := g.Committed(0); !ok || c != 1 {
		t.Errorf("committed %d %v", c, ok)
	}
	if n := len(r.events(sim.KindRejected)); n != 4 {
		t.Errorf("%d rejections traced, want 4", n)
	}
	if m := g.Metrics(); m.RejectedCommits != 4 || m.Commits != 1 {
		t.Errorf("metrics %+v", m)
	}
}

func TestLeaveAndRejoin(t *testing.T) {
	r := newRig(t, 2, eventlog.Config{Partitions: 3},
		faults.Rule{Name: "quit", Point: faults.MemberLeave, From: 4, Count: 1, Match: faults.Match{Consumer: "a"}})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	a := r.member(g, eventlog.MemberConfig{Name: "a", Batch: 1})
	r.member(g, eventlog.MemberConfig{Name: "b", Batch: 1})
	r.producer("p", keys5, 2, 10)
	_ = r.w.Run(6)
	if a.Active() || strings.Join(g.Members(), ",") != "b" {
		t.Fatalf("a still in the group: %v", g.Members())
	}
	if got := fmtAssign(g.Assignment()); got != "[b=[0 1 2]]" {
		t.Errorf("assignment %s", got)
	}
	if err := a.Rejoin(); err != nil {
		t.Fatal(err)
	}
	if err := a.Rejoin(); !errors.Is(err, eventlog.ErrDuplicateMember) {
		t.Errorf("second rejoin: %v", err)
	}
	r.drain(g, 200)
	if err := sim.Check(r.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("g"), sim.OrderedPerKey("g")); err != nil {
		t.Error(err)
	}
}

// A projection (balance per customer) built from the log is corrupted by a
// handler bug; after the fix, seeking the group to earliest rebuilds it
// exactly.
func TestReplayRebuildsProjection(t *testing.T) {
	r := newRig(t, 9, eventlog.Config{Partitions: 3})
	g := r.group(eventlog.GroupConfig{Name: "projection"})
	s := r.env.Stream("amounts")
	err := r.w.AddFunc("shop", sim.PhaseProducer, func(now sim.Tick) {
		if now > 20 {
			return
		}
		for i := 0; i < 3; i++ {
			typ, amount := "charge", 1+s.IntN(50)
			if s.IntN(4) == 0 {
				typ = "refund"
			}
			_ = r.topic.Publish(r.env.NewMessage(keys5[s.IntN(5)], []byte(strconv.Itoa(amount)), sim.Headers{Type: typ}))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	balance := map[string]int{}
	handler := func(buggy bool) sim.Handler {
		return sim.HandlerFunc(func(d *sim.Delivery) error {
			n, err := strconv.Atoi(string(d.Msg.Body))
			if err != nil {
				return err
			}
			if d.Msg.Headers.Type == "refund" && !buggy {
				n = -n // the bug: refunds were added instead of subtracted
			}
			balance[d.Msg.Key] += n
			d.Apply("balance")
			return nil
		})
	}
	m := r.member(g, eventlog.MemberConfig{Name: "p1", Handler: handler(true)})
	_ = r.w.Run(21)
	r.drain(g, 50)

	// The truth, straight from the log.
	want := map[string]int{}
	for p := 0; p < r.topic.Partitions(); p++ {
		recs, err := r.topic.Fetch(p, r.topic.Start(p), 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			n, _ := strconv.Atoi(string(rec.Message.Body))
			if rec.Message.Headers.Type == "refund" {
				n = -n
			}
			want[rec.Message.Key] += n
		}
	}
	if fmt.Sprint(balance) == fmt.Sprint(want) {
		t.Fatal("the buggy projection is correct; the test proves nothing")
	}
	// Deploy the fix, drop the projection, replay from the start.
	m.SetHandler(handler(false))
	clear(balance)
	if err := g.SeekEarliest(eventlog.AllPartitions); err != nil {
		t.Fatal(err)
	}
	if g.Metrics().Lag == 0 {
		t.Fatal("seek to earliest left no lag")
	}
	r.drain(g, 100)
	if got := fmt.Sprint(balance); got != fmt.Sprint(want) {
		t.Errorf("rebuilt projection %s, want %s", got, fmt.Sprint(want))
	}
	if n := len(r.events(sim.KindSeeked)); n != 3 {
		t.Errorf("%d seeks traced, want 3", n)
	}
	// Every record was applied exactly twice: once buggy, once fixed.
	for _, o := range r.env.Ledger.Outcomes("projection") {
		if o.Effects != 2 {
			t.Errorf("%v applied %d times", o.Origin, o.Effects)
		}
	}
	r.refold()
}

func TestSeekTargets(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 2})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	for tick := sim.Tick(0); tick < 5; tick++ {
		r.env.Clock.Set(tick * 10)
		_, _ = r.topic.ProduceTo(0, r.env.NewMessage("", nil, sim.Headers{}))
		_, _ = r.topic.ProduceTo(1, r.env.NewMessage("", nil, sim.Headers{}))
	}
	committed := func() string {
		var s []string
		for p := 0; p < 2; p++ {
			c, _ := g.Committed(p)
			s = append(s, strconv.FormatInt(c, 10))
		}
		return strings.Join(s, ",")
	}
	steps := []struct {
		do   func() error
		want string
	}{
		{func() error { return g.SeekLatest(eventlog.AllPartitions) }, "5,5"},
		{func() error { return g.SeekOffset(1, 2) }, "5,2"},
		{func() error { return g.SeekTick(eventlog.AllPartitions, 25) }, "3,3"},
		{func() error { return g.SeekTick(0, 99) }, "5,3"},
		{func() error { return g.SeekEarliest(0) }, "0,3"},
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatal(err)
		}
		if got := committed(); got != s.want {
			t.Errorf("step %d: committed %s, want %s", i, got, s.want)
		}
	}
	// A negative offset is refused; one past the end is accepted and
	// resolved at the next fetch (TestSeekBeyondTheEndResetsAtTheNextFetch).
	if err := g.SeekOffset(0, -1); !errors.Is(err, eventlog.ErrOffsetOutOfRange) {
		t.Errorf("seek to a negative offset: %v", err)
	}
	if err := g.SeekOffset(7, 0); !errors.Is(err, eventlog.ErrNoPartition) {
		t.Errorf("seek unknown partition: %v", err)
	}
}

// Adding partitions remaps keys: a consumer that reads the new partition
// before the old backlog applies a key's later record first.
func TestPartitionsAddedBreakKeyOrder(t *testing.T) {
	run := func(rules ...faults.Rule) (*rig, error) {
		r := newRig(t, 11, eventlog.Config{Partitions: 2}, rules...)
		g := r.group(eventlog.GroupConfig{Name: "g"})
		r.member(g, eventlog.MemberConfig{Name: "a", Batch: 1})
		r.producer("p", keys5, 2, 12)
		_ = r.w.Run(12)
		r.drain(g, 200)
		return r, sim.Check(r.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("g"), sim.OrderedPerKey("g"))
	}
	if _, err := run(); err != nil {
		t.Fatalf("without the fault: %v", err)
	}
	r, err := run(faults.Rule{Name: "scale-out", Point: faults.PartitionsAdded, From: 6, Count: 1, Param: 2})
	if r.topic.Partitions() != 4 {
		t.Fatalf("%d partitions", r.topic.Partitions())
	}
	vs := violations(err)
	if len(vs) == 0 {
		t.Fatal("no ordering violation after adding partitions")
	}
	for _, v := range vs {
		if v.Check != "ordered-per-key" {
			t.Errorf("unexpected violation %v", v)
		}
	}
	t.Logf("%d per-key order violations, e.g. %v", len(vs), vs[0])
}

// Lag, which a run's stop condition calls every tick, allocates nothing
// and agrees with Metrics (TestConservation compares them at every tick
// of its runs).
func TestLagDoesNotAllocate(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 6})
	g := r.group(eventlog.GroupConfig{Name: "billing"})
	r.member(g, eventlog.MemberConfig{Name: "a"})
	for i := range 20 {
		_ = r.topic.Publish(r.env.NewMessage("k"+strconv.Itoa(i), nil, sim.Headers{}))
	}
	if lag := g.Lag(); lag != 20 || lag != g.Metrics().Lag {
		t.Fatalf("Lag() = %d, Metrics().Lag = %d, want 20", lag, g.Metrics().Lag)
	}
	if n := testing.AllocsPerRun(100, func() { _ = g.Lag() }); n != 0 {
		t.Errorf("Lag allocates %.1f times", n)
	}
}
