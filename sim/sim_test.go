package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestStreamsAreIndependentAndReproducible(t *testing.T) {
	a1, a2 := NewStream(7, "consumer/a"), NewStream(7, "consumer/a")
	b := NewStream(7, "consumer/b")
	other := NewStream(8, "consumer/a")
	same, diffName, diffSeed := true, false, false
	for i := 0; i < 100; i++ {
		x, y := a1.Uint64(), a2.Uint64()
		if x != y {
			same = false
		}
		if x != b.Uint64() {
			diffName = true
		}
		if x != other.Uint64() {
			diffSeed = true
		}
	}
	if !same || !diffName || !diffSeed {
		t.Fatalf("same=%v diffName=%v diffSeed=%v", same, diffName, diffSeed)
	}
}

func TestStreamFrozenValues(t *testing.T) {
	// These values are part of the replay contract: changing the derivation
	// changes every recorded run.
	s := NewStream(1, "fault/boom")
	got := []uint64{s.Uint64(), s.Uint64(), s.Uint64()}
	golden(t, "stream-seed1.golden", []byte(strings.Join([]string{u(got[0]), u(got[1]), u(got[2])}, "\n")+"\n"))
}

func u(x uint64) string { return ID(x).String()[1:] }

func TestStreamEdgeCases(t *testing.T) {
	s := NewStream(1, "x")
	if s.IntN(0) != 0 || s.IntN(-3) != 0 {
		t.Fatal("IntN of non-positive n must be 0")
	}
	before := NewStream(1, "x").Uint64()
	s2 := NewStream(1, "x")
	if s2.Chance(0) || !s2.Chance(1) {
		t.Fatal("certain chances are wrong")
	}
	if s2.Uint64() != before {
		t.Fatal("certain chances must not draw from the stream")
	}
}

func sampleEvents() []Event {
	return []Event{
		{Tick: 1, Kind: KindSent, Where: "queue:orders", Actor: "shop", Msg: 1, Key: "kunde-A"},
		{Tick: 2, Kind: KindReceived, Where: "queue:orders", Actor: "worker-1", Msg: 1, Key: "kunde-A", Attempt: 1},
		{Tick: 3, Kind: KindProduced, Where: "log:orders", Msg: 2, Key: "kunde B", HasPos: true, Partition: 0, Offset: 0, Corr: "c-1"},
		{Tick: 4, Kind: KindFault, Where: "queue:orders", Actor: "worker-1", Msg: 1, Rule: "boom", Detail: "handler.poison"},
		{Tick: 5, Kind: KindAction, Where: "timeline", Detail: "say \"hi\"\n\tbye \xff"},
	}
}

func TestTraceTextAndJSONGolden(t *testing.T) {
	var text, js bytes.Buffer
	rec := &Recorder{}
	tr := NewTrace(NewTextWriter(&text), NewJSONWriter(&js), rec)
	for _, e := range sampleEvents() {
		tr.Emit(e)
	}
	golden(t, "trace.txt.golden", text.Bytes())
	golden(t, "trace.jsonl.golden", js.Bytes())
	for i, line := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i+1, err, line)
		}
		if v["seq"].(float64) != float64(i+1) {
			t.Fatalf("line %d has seq %v", i+1, v["seq"])
		}
	}
	if strings.Count(text.String(), "\n") != 5 {
		t.Fatalf("text form must be one line per event:\n%s", text.String())
	}
	if len(rec.Events()) != 5 || rec.Events()[4].Seq != 5 {
		t.Fatalf("recorder kept %d events", len(rec.Events()))
	}
}

func TestRecorderMaxKeepsNewest(t *testing.T) {
	rec := &Recorder{Max: 3}
	tr := NewTrace(rec)
	for i := 0; i < 10; i++ {
		tr.Emit(Event{Tick: Tick(i), Kind: KindSent})
	}
	ev := rec.Events()
	if len(ev) != 3 || ev[0].Tick != 7 || ev[2].Tick != 9 || rec.Dropped != 7 {
		t.Fatalf("got %d events from t=%d, dropped %d", len(ev), ev[0].Tick, rec.Dropped)
	}
}

func TestNilTraceAndLedgerAreSafe(t *testing.T) {
	var tr *Trace
	tr.Emit(Event{})
	if tr.Enabled() || tr.Len() != 0 {
		t.Fatal("nil trace must be disabled")
	}
	var l *Ledger
	m := Message{ID: 1}
	l.Register(&m)
	l.Sent(1, 0)
	l.Delivered(1, l.Consumer("x"), 0)
	l.Applied(1, NoConsumer, 0)
	l.Lost(1, NoConsumer, CauseRetention, 0)
	if err := Check(l, NoLoss(), AtLeastOnce(""), AtMostOnce(""), ExactlyOnce(""), OrderedPerKey("")); err != nil {
		t.Fatal(err)
	}
}

func TestWorldOrderAndTimeline(t *testing.T) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	step := func(name string) Actor {
		return ActorFunc(func(now Tick) { log = append(log, name+"@"+now.String()) })
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Add(PhaseConsumer, "c1", step("c1")))
	must(w.Add(PhaseBroker, "b1", step("b1")))
	must(w.Add(PhaseProducer, "p1", step("p1")))
	must(w.Add(PhaseConsumer, "c2", step("c2")))
	if err := w.Add(PhaseBroker, "c1", step("x")); !errors.Is(err, ErrDuplicateName) {
		t.Fatalf("duplicate name: %v", err)
	}
	w.At(2, "second", func() { log = append(log, "action-2b") })
	w.At(2, "first", func() { log = append(log, "action-2a") })
	w.At(1, "one", func() { log = append(log, "action-1") })
	must(w.Run(2))
	want := "action-1 b1@t=1 p1@t=1 c1@t=1 c2@t=1 action-2b action-2a b1@t=2 p1@t=2 c1@t=2 c2@t=2"
	if got := strings.Join(log, " "); got != want {
		t.Fatalf("order:\n got %s\nwant %s", got, want)
	}
}

func TestWorldTickCap(t *testing.T) {
	w, _ := New(Config{MaxTicks: 5})
	if err := w.Run(10); !errors.Is(err, ErrTickCap) || w.Now() != 5 {
		t.Fatalf("err=%v now=%d", err, w.Now())
	}
	if _, err := New(Config{MaxTicks: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative cap accepted: %v", err)
	}
	w2, _ := New(Config{})
	done, err := w2.RunUntil(func() bool { return w2.Now() == 3 }, 100)
	if !done || err != nil || w2.Now() != 3 {
		t.Fatalf("RunUntil: %v %v %d", done, err, w2.Now())
	}
}

// ledgerFixture builds a ledger with one example of every violation class.
func ledgerFixture() *Ledger {
	env := NewEnv(1)
	l := env.Ledger
	c := l.Consumer("billing")
	send := func(key string) ID {
		m := env.NewMessage(key, nil, Headers{})
		l.Sent(m.ID, env.Now())
		l.Expect(m.ID, c)
		env.Clock.Advance()
		return m.ID
	}
	a1, a2, b1, lost, never, pend := send("A"), send("A"), send("B"), send("C"), send("D"), send("E")
	l.Delivered(a2, c, 7)
	l.Applied(a2, c, 7) // A out of order: a2 before a1
	l.Delivered(a1, c, 8)
	l.Applied(a1, c, 8)
	l.Acked(a1, c)
	l.SetState(a1, StateDone, 8)
	l.Delivered(b1, c, 9)
	l.Applied(b1, c, 9)
	l.Delivered(b1, c, 10) // duplicate delivery and effect
	l.Applied(b1, c, 10)
	l.SetState(b1, StateDone, 10)
	l.Delivered(lost, c, 11)
	l.Acked(lost, c)
	l.SetState(lost, StateDone, 11)
	l.Lost(lost, c, CauseAckBeforeProcess, 11)
	l.SetState(never, StateDone, 12) // deleted without delivery or cause
	_ = pend                         // still pending: accounted for
	l.SetState(a2, StateDone, 7)
	return l
}

func TestCheckersReportEveryViolationAtOnce(t *testing.T) {
	l := ledgerFixture()
	err := Check(l, NoLoss(), AtLeastOnce("billing"), AtMostOnce("billing"), ExactlyOnce("billing"), OrderedPerKey("billing"), MaxDuplicates("billing", 0), AtLeastOnce("nobody"))
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("want *CheckError, got %v", err)
	}
	golden(t, "checkers.golden", []byte(err.Error()+"\n"))
	if l.Duplicates("billing") != 1 || l.DuplicateEffects("") != 1 {
		t.Fatalf("duplicates %d, effects %d", l.Duplicates("billing"), l.DuplicateEffects(""))
	}
	s := l.Stats()
	if s.Messages != 6 || s.Lost != 1 || s.Pending != 1 || len(s.LostBy) != 1 || s.LostBy[0].Cause != CauseAckBeforeProcess {
		t.Fatalf("stats %+v", s)
	}
}

func TestCheckersPassOnCleanRun(t *testing.T) {
	env := NewEnv(1)
	l := env.Ledger
	c := l.Consumer("w")
	for i := 0; i < 5; i++ {
		m := env.NewMessage("k", nil, Headers{})
		l.Sent(m.ID, 0)
		l.Delivered(m.ID, c, 1)
		l.Applied(m.ID, c, 1)
		l.Acked(m.ID, c)
		l.SetState(m.ID, StateDone, 1)
	}
	if err := Check(l, NoLoss(), AtLeastOnce(""), AtMostOnce(""), ExactlyOnce("w"), OrderedPerKey(""), MaxDuplicates("", 0)); err != nil {
		t.Fatal(err)
	}
}

func TestLedgerLinkAndPhantom(t *testing.T) {
	env := NewEnv(1)
	l := env.Ledger
	a := env.NewMessage("k", nil, Headers{Type: "order.placed"})
	b := env.NewMessage("k", nil, Headers{})
	l.SetState(a.ID, StateDeadLettered, 3)
	l.Link(a.ID, b.ID, 4)
	l.MarkPhantom(b.ID)
	ra, _ := l.Record(a.ID)
	rb, _ := l.Record(b.ID)
	if ra.State != StateRedriven || ra.Redriven != b.ID || rb.Origin != a.ID || !rb.Phantom || ra.Type != "order.placed" {
		t.Fatalf("a=%+v b=%+v", ra, rb)
	}
	if _, ok := l.Record(99); ok {
		t.Fatal("unknown record found")
	}
	if l.Stats().Phantoms != 1 {
		t.Fatal("phantom not counted")
	}
}

func TestIDsAndHeaders(t *testing.T) {
	if ID(17).String() != "m17" || ID(0).String() != "-" {
		t.Fatal("ID format")
	}
	if id, ok := ParseID("m17"); !ok || id != 17 {
		t.Fatal("ParseID")
	}
	if _, ok := ParseID("mx"); ok {
		t.Fatal("ParseID accepted garbage")
	}
	h := Headers{}.With("a", "1").With("b", "2").With("a", "3")
	if v, _ := h.Get("a"); v != "3" || len(h.Extra) != 2 || h.Extra[1].Name != "a" {
		t.Fatalf("headers %+v", h)
	}
	base := Headers{}.With("x", "1")
	_ = base.With("x", "2")
	if v, _ := base.Get("x"); v != "1" {
		t.Fatal("With modified its receiver")
	}
}

func TestMermaidGolden(t *testing.T) {
	events := append(sampleEvents(),
		Event{Tick: 6, Kind: KindMissed, Where: "topic:prices", Actor: "ui", Msg: 3},
		Event{Tick: 7, Kind: KindAcked, Where: "queue:orders", Actor: "worker-1", Msg: 1},
	)
	var buf bytes.Buffer
	if err := WriteMermaid(&buf, events, 0); err != nil {
		t.Fatal(err)
	}
	golden(t, "trace.mermaid.golden", buf.Bytes())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if lines[0] != "sequenceDiagram" {
		t.Fatal("must start with sequenceDiagram")
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "    participant p") && !strings.HasPrefix(l, "    Note over p") && !strings.HasPrefix(l, "    p") {
			t.Errorf("unexpected line shape: %q", l)
		}
		if strings.ContainsAny(l, ";#") {
			t.Errorf("unescaped character in %q", l)
		}
	}
	buf.Reset()
	_ = WriteMermaid(&buf, events, 2)
	if !strings.Contains(buf.String(), "5 more events not shown") {
		t.Fatalf("cap note missing:\n%s", buf.String())
	}
}

func TestLedgerSparseConsumerAndLargeIDs(t *testing.T) {
	l := NewLedger()
	c := l.Consumer("late")
	for _, id := range []ID{5000, 5001, 1} {
		m := Message{ID: id, Key: "k"}
		l.Register(&m)
		l.Sent(id, 1)
		l.Delivered(id, c, 2)
		l.Applied(id, c, 2)
	}
	if l.consumers[c].entries.get(2000) != nil {
		t.Fatal("an untouched chunk was allocated")
	}
	if got := len(l.Records()); got != 3 {
		t.Fatalf("%d records", got)
	}
	if err := Check(l, OrderedPerKey("late")); err == nil || !strings.Contains(err.Error(), "m1 key=k") {
		t.Fatalf("want m1 out of order, got %v", err)
	}
	if d := l.Delivery(9999, c); d.Delivered != 0 {
		t.Fatal("phantom delivery")
	}
}

func TestStreamMatchesMathRand(t *testing.T) {
	// The stream's fast paths must draw exactly what math/rand/v2 would, or
	// every recorded run would change.
	a := NewStream(5, "x")
	b := NewStream(5, "x")
	for i := 0; i < 1000; i++ {
		if a.Float64() != b.r.Float64() || a.Uint64() != b.r.Uint64() || a.IntN(7) != b.r.IntN(7) {
			t.Fatalf("draw %d differs from math/rand/v2", i)
		}
	}
}
