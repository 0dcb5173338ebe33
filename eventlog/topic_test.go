package eventlog_test

import (
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

func TestConfigValidate(t *testing.T) {
	bad := []eventlog.Config{
		{},
		{Name: "x", Partitions: -1},
		{Name: "x", RetentionTicks: -1},
		{Name: "x", CompactEvery: -2},
	}
	w, _ := sim.New(sim.Config{})
	for _, c := range bad {
		if _, err := eventlog.New(w, c); !errors.Is(err, eventlog.ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", c, err)
		}
	}
	if _, err := eventlog.New(nil, eventlog.Config{Name: "x"}); !errors.Is(err, eventlog.ErrInvalidConfig) {
		t.Errorf("New without a world: %v", err)
	}
	top, err := eventlog.New(w, eventlog.Config{Name: "x"})
	if err != nil || top.Partitions() != 1 {
		t.Fatalf("defaults: %v, %d partitions", err, top.Partitions())
	}
	if got := strings.Join(w.Components(), ","); got != "log:x" {
		t.Errorf("components %s", got)
	}
	if _, err := eventlog.New(w, eventlog.Config{Name: "x"}); !errors.Is(err, sim.ErrDuplicateName) {
		t.Errorf("second topic x: %v", err)
	}
	if _, err := eventlog.NewGroup(w, top, eventlog.GroupConfig{Name: "g", Strategy: 9}); !errors.Is(err, eventlog.ErrInvalidConfig) {
		t.Errorf("bad strategy: %v", err)
	}
	other, _ := sim.New(sim.Config{})
	if _, err := eventlog.NewGroup(other, top, eventlog.GroupConfig{Name: "g"}); !errors.Is(err, eventlog.ErrInvalidConfig) {
		t.Errorf("group on another world's topic: %v", err)
	}
	g, _ := eventlog.NewGroup(w, top, eventlog.GroupConfig{Name: "g"})
	if _, err := eventlog.NewGroup(w, top, eventlog.GroupConfig{Name: "g"}); !errors.Is(err, eventlog.ErrDuplicateGroup) {
		t.Errorf("duplicate group: %v", err)
	}
	if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "a", Batch: -1}); !errors.Is(err, eventlog.ErrInvalidConfig) {
		t.Errorf("bad member: %v", err)
	}
	if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "p", Pull: true, Handler: sim.Effect("")}); !errors.Is(err, eventlog.ErrInvalidConfig) {
		t.Errorf("pull member with a handler: %v", err)
	}
	if _, err := eventlog.NewMember(other, g, eventlog.MemberConfig{Name: "a"}); !errors.Is(err, eventlog.ErrInvalidConfig) {
		t.Errorf("member on another world: %v", err)
	}
	a, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Phase() != sim.PhaseConsumer || top.Phase() != sim.PhaseBroker {
		t.Errorf("phases %v %v", a.Phase(), top.Phase())
	}
	if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "a"}); !errors.Is(err, eventlog.ErrDuplicateMember) {
		t.Errorf("duplicate member: %v", err)
	}
	a.Leave()
	if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "a"}); !errors.Is(err, eventlog.ErrDuplicateMember) {
		t.Errorf("a member that left is still a's name: %v", err)
	}
	if got := strings.Join(w.Components(), ","); got != "log:x,member:g/a" {
		t.Errorf("components %s", got)
	}
	if _, err := top.ProduceTo(3, sim.Message{ID: 1}); !errors.Is(err, eventlog.ErrNoPartition) {
		t.Errorf("bad partition: %v", err)
	}
	if err := top.AddPartitions(0); !errors.Is(err, eventlog.ErrInvalidConfig) {
		t.Errorf("add 0 partitions: %v", err)
	}
	for _, s := range []eventlog.Strategy{eventlog.Range, eventlog.RoundRobin, eventlog.Sticky} {
		var got eventlog.Strategy
		text, err := s.MarshalText()
		if err != nil || string(text) != s.String() || got.UnmarshalText(text) != nil || got != s {
			t.Errorf("strategy %v round trip: %q, %v, %v", s, text, got, err)
		}
	}
	var st eventlog.Strategy
	if err := st.UnmarshalText([]byte("fair")); !errors.Is(err, eventlog.ErrInvalidConfig) {
		t.Errorf("UnmarshalText(fair) = %v", err)
	}
	if _, err := eventlog.Strategy(7).MarshalText(); !errors.Is(err, eventlog.ErrInvalidConfig) {
		t.Errorf("MarshalText(7) = %v", err)
	}
	var r eventlog.Reset
	if err := r.UnmarshalText([]byte("none")); err != nil || r != eventlog.ResetNone {
		t.Errorf("Reset.UnmarshalText(none) = %v, %v", r, err)
	}
	var c eventlog.CommitMode
	if err := c.UnmarshalText([]byte("off_by_one")); err != nil || c != eventlog.CommitOffByOne || c.String() != "off_by_one" {
		t.Errorf("CommitMode.UnmarshalText(off_by_one) = %v, %v", c, err)
	}
}

func TestPartitioning(t *testing.T) {
	want := map[string]int{"kunde-A": 0, "kunde-B": 1, "kunde-C": 2}
	for k, p := range want {
		if got := eventlog.PartitionFor(k, 3); got != p {
			t.Errorf("PartitionFor(%s, 3) = %d, want %d", k, got, p)
		}
	}
	s := sim.NewStream(3, "keys")
	for i := 0; i < 2000; i++ {
		key := make([]byte, s.IntN(40))
		for j := range key {
			key[j] = byte(s.Uint64())
		}
		n := 1 + s.IntN(64)
		if got, want := eventlog.PartitionFor(string(key), n), int(crc32.ChecksumIEEE(key)%uint32(n)); got != want {
			t.Fatalf("PartitionFor(%q, %d) = %d, want crc32 %d", key, n, got, want)
		}
	}
	if eventlog.PartitionFor("x", 0) != -1 {
		t.Error("PartitionFor with 0 partitions")
	}
	w, _ := sim.New(sim.Config{})
	env := w.Env()
	top, _ := eventlog.New(w, eventlog.Config{Name: "t", Partitions: 3})
	var got []eventlog.Position
	for i := 0; i < 5; i++ {
		pos, err := top.Produce(env.NewMessage("", nil, sim.Headers{}))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, pos)
	}
	want2 := []eventlog.Position{{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}}
	if !slices.Equal(got, want2) {
		t.Errorf("keyless spread = %v, want %v", got, want2)
	}
	// Records carry headers and the produce tick.
	env.Clock.Set(7)
	h := sim.Headers{Type: "order.placed", CorrelationID: "c1"}.With("tenant", "t1")
	pos, _ := top.Produce(env.NewMessage("kunde-A", []byte("x"), h))
	recs, err := top.Fetch(pos.Partition, pos.Offset, 10, nil)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Fetch = %v, %v", recs, err)
	}
	r := recs[0]
	if v, _ := r.Message.Headers.Get("tenant"); r.Tick != 7 || r.Message.Headers.Type != "order.placed" || v != "t1" || r.Offset != 2 {
		t.Errorf("record = %+v", r)
	}
	if _, err := top.Fetch(0, 9, 1, nil); !errors.Is(err, eventlog.ErrOffsetOutOfRange) {
		t.Errorf("Fetch past end: %v", err)
	}
	if off, _ := top.OffsetForTick(0, 5); off != 2 {
		t.Errorf("OffsetForTick(0, 5) = %d, want 2", off)
	}
	if off, _ := top.OffsetForTick(0, 8); off != 3 {
		t.Errorf("OffsetForTick(0, 8) = %d, want end 3", off)
	}
}

func TestProducedEventsCarryPosition(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 3})
	for _, k := range []string{"kunde-A", "kunde-B", "kunde-A"} {
		if err := r.topic.Publish(r.env.NewMessage(k, nil, sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	ev := r.events(sim.KindProduced)
	want := []string{
		"t=0 produced log:orders m1 key=kunde-A p=0 off=0",
		"t=0 produced log:orders m2 key=kunde-B p=1 off=0",
		"t=0 produced log:orders m3 key=kunde-A p=0 off=1",
	}
	for i, e := range ev {
		if got := string(sim.AppendText(nil, &e)); got != want[i] {
			t.Errorf("event %d = %s, want %s", i, got, want[i])
		}
	}
}

func TestBrokerUnavailable(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{}, faults.Rule{Name: "down", Point: faults.BrokerUnavailable, Count: 1, Error: "connection refused"})
	err := r.topic.Publish(r.env.NewMessage("k", nil, sim.Headers{}))
	if !errors.Is(err, eventlog.ErrUnavailable) || !errors.Is(err, sim.ErrUnavailable) {
		t.Fatalf("Publish = %v, want ErrUnavailable wrapping sim.ErrUnavailable", err)
	}
	if err := r.topic.Publish(r.env.NewMessage("k", nil, sim.Headers{})); err != nil {
		t.Fatal(err)
	}
	if m := r.topic.Metrics(); m.Rejected != 1 || m.Produced != 1 {
		t.Errorf("metrics = %+v", m)
	}
	// A poll fails the same way: the member reads nothing that tick.
	if _, err := r.in.Add(faults.Rule{Name: "down-for-a", Point: faults.BrokerUnavailable, Count: 1, Match: faults.Match{Consumer: "a"}}); err != nil {
		t.Fatal(err)
	}
	g := r.group(eventlog.GroupConfig{Name: "g"})
	r.member(g, eventlog.MemberConfig{Name: "a"})
	_ = r.w.Run(1)
	if g.Metrics().Lag != 1 || len(r.events(sim.KindRejected)) != 2 {
		t.Errorf("poll during the outage: %+v", g.Metrics())
	}
	_ = r.w.Run(1)
	if g.Metrics().Lag != 0 {
		t.Errorf("poll after the outage: %+v", g.Metrics())
	}
}

func TestMetricsLagPerGroupAndPartition(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 3})
	fast := r.group(eventlog.GroupConfig{Name: "fast"})
	slow := r.group(eventlog.GroupConfig{Name: "slow"})
	r.member(fast, eventlog.MemberConfig{Name: "f1", Batch: 100})
	for _, k := range []string{"kunde-A", "kunde-B", "kunde-A", "kunde-C", "kunde-A", "kunde-B"} {
		_ = r.topic.Publish(r.env.NewMessage(k, nil, sim.Headers{}))
	}
	_ = r.w.Run(1)
	m := r.topic.Metrics()
	if len(m.Groups) != 2 || m.Produced != 6 {
		t.Fatalf("metrics = %+v", m)
	}
	got := fmt.Sprint(m.Partitions)
	if want := "[{0 0 3 3 21} {1 0 2 2 14} {2 0 1 1 7}]"; got != want {
		t.Errorf("partitions = %s, want %s", got, want)
	}
	for _, pl := range fast.Metrics().Partitions {
		if pl.Lag != 0 || pl.Committed != pl.End || pl.Owner != "f1" {
			t.Errorf("fast %+v", pl)
		}
	}
	sm := slow.Metrics()
	if sm.Lag != 6 {
		t.Errorf("slow lag = %d, want 6", sm.Lag)
	}
	for _, pl := range sm.Partitions {
		if pl.Committed != -1 || pl.Lag != pl.End || pl.Owner != "" {
			t.Errorf("slow %+v", pl)
		}
	}
	// Independent groups: the slow group's commit does not move the fast one.
	s1 := r.member(slow, eventlog.MemberConfig{Name: "s1", Batch: 1})
	_ = r.w.Run(1)
	if c, _ := fast.Committed(0); c != 3 {
		t.Errorf("fast committed p0 = %d", c)
	}
	if sm := slow.Metrics(); sm.Lag != 5 {
		t.Errorf("slow lag after one record = %d, want 5 (%+v)", sm.Lag, sm)
	}
	_ = s1
	r.drain(slow, 20)
	if err := sim.Check(r.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("fast"), sim.ExactlyOnce("slow")); err != nil {
		t.Error(err)
	}
}

func TestCompaction(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Compact: true, CompactEvery: 1, TombstoneRetention: 3})
	g := r.group(eventlog.GroupConfig{Name: "late"})
	pub := func(k, v string) {
		var body []byte
		if v != "" {
			body = []byte(v)
		}
		if err := r.topic.Publish(r.env.NewMessage(k, body, sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	pub("A", "a1")
	pub("B", "b1")
	pub("A", "a2")
	pub("", "keyless")
	pub("A", "") // tombstone
	pub("C", "c1")
	_ = r.w.Run(1)
	live := func() []string {
		recs, err := r.topic.Fetch(0, r.topic.Start(0), 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range recs {
			s := fmt.Sprintf("%d:%s=%s", x.Offset, x.Message.Key, x.Message.Body)
			if x.Tombstone() {
				s += "(tombstone)"
			}
			out = append(out, s)
		}
		return out
	}
	if got, want := fmt.Sprint(live()), "[1:B=b1 3:=keyless 4:A=(tombstone) 5:C=c1]"; got != want {
		t.Errorf("after compaction %s, want %s", got, want)
	}
	_ = r.w.Run(3)
	if got, want := fmt.Sprint(live()), "[1:B=b1 3:=keyless 5:C=c1]"; got != want {
		t.Errorf("after tombstone retention %s, want %s", got, want)
	}
	if m := r.topic.Metrics(); m.Compacted != 3 || m.Partitions[0].Records != 3 {
		t.Errorf("metrics %+v", m)
	}
	// A group reading now sees the latest values only; the superseded ones
	// count as missed by design, not as lost.
	r.member(g, eventlog.MemberConfig{Name: "l1"})
	r.drain(g, 10)
	if err := sim.Check(r.env.Ledger, sim.AtMostOnce("late")); err != nil {
		t.Error(err)
	}
	// The group expected every record; the superseded values it never read
	// are lost to compaction, and NoLoss says so.
	vs := violations(sim.Check(r.env.Ledger, sim.NoLoss()))
	if len(vs) != 3 {
		t.Errorf("violations %v, want 3 compaction losses", vs)
	}
	for _, v := range vs {
		if !strings.Contains(v.Detail, string(sim.CauseCompaction)) {
			t.Errorf("unexpected %v", v)
		}
	}
	if st := r.env.Ledger.Stats(); st.Lost != 3 || st.Applied != 3 || fmt.Sprint(st.LostBy) != "[{compaction 3}]" {
		t.Errorf("stats %+v", st)
	}
	r.refold()
}
