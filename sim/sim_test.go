package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	golden(t, "trace.txt.golden", text.Bytes())
	golden(t, "trace.jsonl.golden", js.Bytes())
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	for i, line := range lines[:len(lines)-1] {
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
	if tr.Enabled() || tr.Len() != 0 || tr.Detailed() {
		t.Fatal("nil trace must be disabled")
	}
	var l *Ledger
	l.Emit(&Event{Kind: KindSent, Msg: 1})
	if l.Stats().Messages != 0 || l.Records() != nil || l.Losses() != nil {
		t.Fatal("nil ledger must be empty")
	}
	if err := Check(l, NoLoss()); err == nil {
		t.Fatal("checking no ledger must fail, not pass vacuously")
	}
}

// feed folds events into a new ledger, numbering them.
func feed(events ...Event) *Ledger {
	l := NewLedger()
	tr := NewTrace(l)
	for _, e := range events {
		tr.Emit(e)
	}
	return l
}

func TestWorldOrderAndTimeline(t *testing.T) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	step := func(name string) func(Tick) {
		return func(now Tick) { log = append(log, name+"@"+now.String()) }
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.AddFunc("c1", PhaseConsumer, step("c1")))
	must(w.AddFunc("b1", PhaseBroker, step("b1")))
	must(w.AddFunc("p1", PhaseProducer, step("p1")))
	must(w.AddFunc("c2", PhaseConsumer, step("c2")))
	if err := w.AddFunc("c1", PhaseBroker, step("x")); !errors.Is(err, ErrDuplicateName) {
		t.Fatalf("duplicate name: %v", err)
	}
	if err := w.AddFunc("bad", Phase(9), step("x")); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("bad phase: %v", err)
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

// phased is a Component whose type fixes its phase.
type phased struct {
	p   Phase
	log *[]string
}

func (c phased) Phase() Phase  { return c.p }
func (c phased) Step(now Tick) { *c.log = append(*c.log, c.p.String()) }
func TestWorldAddUsesTheTypesPhase(t *testing.T) {
	w, _ := New(Config{})
	var log []string
	_ = w.Add("c", phased{PhaseConsumer, &log})
	_ = w.Add("b", phased{PhaseBroker, &log})
	_ = w.Run(1)
	if strings.Join(log, " ") != "broker consumer" {
		t.Fatalf("order %v", log)
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
	if err := w2.RunUntil(func() bool { return w2.Now() == 3 }, 100); err != nil || w2.Now() != 3 {
		t.Fatalf("RunUntil: %v %d", err, w2.Now())
	}
	w3, _ := New(Config{})
	if err := w3.RunUntil(func() bool { return false }, 2); !errors.Is(err, ErrNotDone) || w3.Now() != 2 {
		t.Fatalf("a RunUntil that did not finish must say so: %v", err)
	}
}

// ledgerFixture builds a ledger, from events only, with one example of
// every violation class.
func ledgerFixture() *Ledger {
	var ev []Event
	id := ID(0)
	send := func(key string) ID {
		id++
		ev = append(ev, Event{Tick: Tick(id), Kind: KindSent, Where: "queue:orders", Consumer: "billing", Msg: id, Key: key})
		return id
	}
	a1, a2, b1, lost, never, pend := send("A"), send("A"), send("B"), send("C"), send("D"), send("E")
	_ = pend // still pending at the end
	do := func(tick Tick, kind Kind, m ID) {
		ev = append(ev, Event{Tick: tick, Kind: kind, Where: "queue:orders", Consumer: "billing", Actor: "billing#1", Msg: m})
	}
	do(7, KindReceived, a2)
	do(7, KindProcessed, a2) // A out of order: a2 before a1
	do(7, KindAcked, a2)
	do(8, KindReceived, a1)
	do(8, KindProcessed, a1)
	do(8, KindAcked, a1)
	do(9, KindReceived, b1)
	do(9, KindProcessed, b1)
	do(10, KindRedelivered, b1) // duplicate delivery and effect
	do(10, KindProcessed, b1)
	do(10, KindAcked, b1)
	do(11, KindReceived, lost)
	do(11, KindAcked, lost)
	ev = append(ev, Event{Tick: 11, Kind: KindLost, Where: "queue:orders", Consumer: "billing", Msg: lost, Cause: CauseAckBeforeProcess})
	do(12, KindAcked, never) // deleted without delivery or cause
	return feed(ev...)
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
	var ev []Event
	for i := 1; i <= 5; i++ {
		m := ID(i)
		ev = append(ev, Event{Kind: KindSent, Where: "q", Consumer: "w", Msg: m, Key: "k"},
			Event{Tick: 1, Kind: KindReceived, Consumer: "w", Msg: m},
			Event{Tick: 1, Kind: KindProcessed, Consumer: "w", Msg: m},
			Event{Tick: 1, Kind: KindAcked, Consumer: "w", Msg: m})
	}
	l := feed(ev...)
	if err := Check(l, NoLoss(), AtLeastOnce(""), AtMostOnce(""), ExactlyOnce("w"), OrderedPerKey(""), MaxDuplicates("", 0)); err != nil {
		t.Fatal(err)
	}
}

func TestCheckersNeverPassVacuously(t *testing.T) {
	empty := NewLedger()
	for _, c := range []Checker{NoLoss(), AtLeastOnce(""), ExactlyOnce(""), AtMostOnce(""), OrderedPerKey(""), MaxDuplicates("", 0)} {
		if len(c.Violations(empty)) == 0 {
			t.Errorf("%s passes on an empty ledger", c.Name())
		}
		if len(c.Violations(nil)) == 0 {
			t.Errorf("%s passes without a ledger", c.Name())
		}
	}
	if Check(empty) == nil {
		t.Error("Check with no checkers passes")
	}
	keyless := feed(Event{Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1},
		Event{Kind: KindProcessed, Consumer: "w", Msg: 1}, Event{Kind: KindAcked, Consumer: "w", Msg: 1})
	if len(OrderedPerKey("w").Violations(keyless)) == 0 || len(MaxDuplicates("w", -1).Violations(keyless)) == 0 {
		t.Error("an order check with no keys, or a negative duplicate cap, passes")
	}
	sentOnly := feed(Event{Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1, Key: "k"})
	err := Check(sentOnly, AtLeastOnce("w"), MaxDuplicates("typo", 3))
	if err == nil || !strings.Contains(err.Error(), "still pending") || !strings.Contains(err.Error(), `knows no consumer "typo"; it knows: "w"`) {
		t.Fatalf("got %v", err)
	}
	// A copy in a queue no consumer reads is still pending, not fine.
	orphan := feed(Event{Kind: KindSent, Where: "queue:q", Msg: 1})
	if err := Check(orphan, NoLoss()); err == nil || !strings.Contains(err.Error(), "no consumer is routed it") {
		t.Fatalf("got %v", err)
	}
}

func TestLedgerLineage(t *testing.T) {
	// m1 is applied, then crashes before the ack; its redelivery fails into
	// the DLQ; the DLQ is redriven as m2 (origin m1), applied again.
	l := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:orders", Consumer: "billing", Msg: 1, Key: "order-1", Type: "order.placed"},
		Event{Tick: 2, Kind: KindReceived, Consumer: "billing", Msg: 1},
		Event{Tick: 2, Kind: KindProcessed, Consumer: "billing", Msg: 1},
		Event{Tick: 5, Kind: KindRedelivered, Consumer: "billing", Msg: 1},
		Event{Tick: 5, Kind: KindFailed, Consumer: "billing", Msg: 1},
		Event{Tick: 5, Kind: KindDeadLettered, Where: "queue:orders", Msg: 1},
		Event{Tick: 9, Kind: KindRedriven, Where: "queue:orders", Consumer: "billing", Msg: 2, Origin: 1, Key: "order-1"},
		Event{Tick: 10, Kind: KindReceived, Consumer: "billing", Msg: 2},
		Event{Tick: 10, Kind: KindProcessed, Consumer: "billing", Msg: 2},
		Event{Tick: 10, Kind: KindAcked, Consumer: "billing", Msg: 2},
		Event{Tick: 11, Kind: KindPhantom, Msg: 2},
	)
	r1, _ := l.Record(1)
	r2, _ := l.Record(2)
	if r1.State != StateRedriven || r1.Redriven != 2 || r2.Origin != 1 || !r2.Phantom || r1.Type != "order.placed" || l.Root(2) != 1 {
		t.Fatalf("m1=%+v m2=%+v", r1, r2)
	}
	err := Check(l, NoLoss(), ExactlyOnce("billing"))
	if err == nil || !strings.Contains(err.Error(), "exactly-once: m1 key=order-1 consumer=billing t=10: effect applied 2 times") || strings.Contains(err.Error(), "no-loss") {
		t.Fatalf("got %v", err)
	}
	if l.DuplicateEffects("billing") != 1 || l.Duplicates("billing") != 2 {
		t.Fatalf("duplicate effects %d, duplicates %d", l.DuplicateEffects("billing"), l.Duplicates("billing"))
	}
	if _, ok := l.Record(99); ok {
		t.Fatal("unknown record found")
	}
	if s := l.Stats(); s.Phantoms != 1 || s.Origins != 1 || s.Messages != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestLedgerFanOutCopiesHaveTheirOwnState(t *testing.T) {
	// One publish copied into queues a and b; only a is consumed.
	l := feed(
		Event{Tick: 1, Kind: KindPublished, Where: "topic:orders", Msg: 1, Key: "k"},
		Event{Tick: 1, Kind: KindSent, Where: "queue:a", Consumer: "a-worker", Msg: 2, Origin: 1, Key: "k"},
		Event{Tick: 1, Kind: KindSent, Where: "queue:b", Consumer: "b-worker", Msg: 3, Origin: 1, Key: "k"},
		Event{Tick: 2, Kind: KindReceived, Consumer: "a-worker", Msg: 2},
		Event{Tick: 2, Kind: KindProcessed, Consumer: "a-worker", Msg: 2},
		Event{Tick: 2, Kind: KindAcked, Consumer: "a-worker", Msg: 2},
	)
	if err := Check(l, ExactlyOnce("a-worker")); err != nil {
		t.Fatal(err)
	}
	err := Check(l, AtLeastOnce("b-worker"))
	if err == nil || !strings.Contains(err.Error(), "still pending") || strings.Contains(err.Error(), "left the broker") {
		t.Fatalf("got %v", err)
	}
}

func TestLedgerReconcilesALossContradictedByAnEffect(t *testing.T) {
	// Retention deletes an in-flight message; its slow handler applies it.
	l := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1},
		Event{Tick: 2, Kind: KindReceived, Consumer: "w", Msg: 1},
		Event{Tick: 4, Kind: KindExpired, Where: "queue:q", Msg: 1},
		Event{Tick: 6, Kind: KindProcessed, Consumer: "w", Msg: 1},
	)
	if err := Check(l, NoLoss(), ExactlyOnce("w")); err != nil {
		t.Fatal(err)
	}
	if len(l.Losses()) != 0 || l.Stats().Lost != 0 {
		t.Fatalf("losses %v", l.Losses())
	}
}

func TestLedgerFoldsTheJSONLinesTrace(t *testing.T) {
	var js bytes.Buffer
	live := NewLedger()
	tr := NewTrace(live, NewJSONWriter(&js))
	for _, e := range append(sampleEvents(),
		Event{Tick: 6, Kind: KindRedriven, Where: "queue:orders", Consumer: "w", Msg: 3, Origin: 1, Key: "kunde-A"},
		Event{Tick: 7, Kind: KindLost, Where: "queue:orders", Consumer: "w", Msg: 3, Cause: CauseRetention},
		Event{Tick: 8, Kind: KindSubscribed, Where: "log:orders", Consumer: "g", Detail: "earliest"},
	) {
		tr.Emit(e)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	again := NewLedger()
	if err := ReadJSONL(&js, again); err != nil {
		t.Fatal(err)
	}
	if live.Dump() != again.Dump() || live.Dump() == "" {
		t.Fatalf("live:\n%s\nfolded from JSON:\n%s", live.Dump(), again.Dump())
	}
	for _, bad := range []string{`{"seq":1,"tick":1}`, `{"seq":1,"kind":"sent","msg":"x7"}`, `{"seq":1,"kind":"sent","partition":1}`, `not json`, `{"seq":1,"kind":"sent","bogus":1}`} {
		if err := ReadJSONL(strings.NewReader(bad), NewLedger()); !errors.Is(err, ErrBadTrace) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: %v", bad, err)
		}
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
		if strings.ContainsAny(mermaidEntity.ReplaceAllString(l, ""), ";#&%") {
			t.Errorf("unescaped character in %q", l)
		}
	}
	buf.Reset()
	_ = WriteMermaid(&buf, events, 2)
	if !strings.Contains(buf.String(), "5 more events not shown") {
		t.Fatalf("cap note missing:\n%s", buf.String())
	}
}

// mermaidEntity matches one of Mermaid's numeric entity codes.
var mermaidEntity = regexp.MustCompile(`#(\d+);`)

// TestMermaidShowsTheText: a name or a narration with characters Mermaid
// reads as syntax or markup ("#", ";", ":", "<b>", "&", "%%") is written
// with entity codes that the diagram shows as the same text, word for
// word; a note of what an actor did at a component is over both.
func TestMermaidShowsTheText(t *testing.T) {
	var buf bytes.Buffer
	detail := `a;b <b>tags</b> x: y & 50%% --> #1`
	ev := []Event{
		{Tick: 1, Kind: KindSent, Where: "queue:orders", Actor: "charger#1", Msg: 1, Detail: detail},
		{Tick: 2, Kind: KindProcessed, Where: "queue:orders", Actor: "worker<1>", Msg: 1},
	}
	if err := WriteMermaid(&buf, ev, 0); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	decoded := mermaidEntity.ReplaceAllStringFunc(out, func(m string) string {
		n, _ := strconv.Atoi(m[1 : len(m)-1])
		return string(rune(n))
	})
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		_, text, ok := strings.Cut(l, " as ")
		if !ok {
			_, text, _ = strings.Cut(l, ": ")
		}
		if strings.ContainsAny(mermaidEntity.ReplaceAllString(text, ""), ";#<>&%:") {
			t.Errorf("a character Mermaid reads as syntax is left as it is in %q", l)
		}
	}
	for _, want := range []string{"participant p2 as charger#1", "t1 sent m1 - " + detail, "participant p3 as worker<1>", "Note over p1,p3: t2 processed m1"} {
		if !strings.Contains(decoded, want) {
			t.Errorf("%q is not shown; the diagram reads (entities decoded):\n%s", want, decoded)
		}
	}
}

func TestLedgerSparseConsumerAndLargeIDs(t *testing.T) {
	var ev []Event
	for _, id := range []ID{5000, 5001, 1} {
		ev = append(ev, Event{Tick: 1, Kind: KindSent, Where: "q", Consumer: "late", Msg: id, Key: "k"},
			Event{Tick: 2, Kind: KindReceived, Consumer: "late", Msg: id},
			Event{Tick: 2, Kind: KindProcessed, Consumer: "late", Msg: id})
	}
	l := feed(ev...)
	c := l.Consumer("late")
	if _, ok := l.consumers[c].entries.get(2000); ok {
		t.Fatal("an untouched chunk was allocated")
	}
	if got := len(l.Records()); got != 3 {
		t.Fatalf("%d records", got)
	}
	if err := Check(l, OrderedPerKey("late")); err == nil || !strings.Contains(err.Error(), "m1 key=k") {
		t.Fatalf("want m1 out of order, got %v", err)
	}
	if d := l.Entry(9999, c); d.Delivered != 0 {
		t.Fatal("phantom delivery")
	}
}

func TestStreamMatchesMathRand(t *testing.T) {
	// The stream's fast paths must draw exactly what math/rand/v2 would, or
	// every recorded run would change.
	a := NewStream(5, "x")
	b := rand.New(&NewStream(5, "x").src)
	for i := 0; i < 1000; i++ {
		if a.Float64() != b.Float64() || a.Uint64() != b.Uint64() || a.IntN(7) != b.IntN(7) {
			t.Fatalf("draw %d differs from math/rand/v2", i)
		}
	}
}

func TestBudgetStopsTheWorldAtOnce(t *testing.T) {
	w, _ := New(Config{})
	w.SetBudget(Budget{Messages: 10, DeliveriesPerTick: 5})
	env := w.Env()
	steps := 0
	_ = w.AddFunc("storm", PhaseProducer, func(now Tick) {
		for i := 0; i < 4; i++ {
			if env.Exceeded() != nil {
				return
			}
			env.NewMessage("k", nil, Headers{})
		}
	})
	_ = w.AddFunc("after", PhaseConsumer, func(Tick) { steps++ })
	err := w.Run(100)
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "more than 10 messages") || w.Now() != 3 || steps != 2 {
		t.Fatalf("err=%v now=%d steps=%d", err, w.Now(), steps)
	}
	w2, _ := New(Config{})
	w2.SetBudget(Budget{DeliveriesPerTick: 3})
	_ = w2.AddFunc("flood", PhaseConsumer, func(Tick) {
		for i := 0; i < 10; i++ {
			w2.Env().Emit(Event{Kind: KindReceived, Where: "queue:q", Msg: 1})
		}
	})
	if err := w2.RunUntil(func() bool { return false }, 10); !errors.Is(err, ErrBudget) || w2.Now() != 1 || !strings.Contains(err.Error(), "deliveries in tick 1") {
		t.Fatalf("err=%v now=%d", err, w2.Now())
	}
}

// TestComponentsRunInPhaseThenAddedOrder: components step by phase, and
// within a phase in the order they were added, whatever order the phases
// were added in.
func TestComponentsRunInPhaseThenAddedOrder(t *testing.T) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, a := range []struct {
		name  string
		phase Phase
	}{{"o1", PhaseObserver}, {"c1", PhaseConsumer}, {"b1", PhaseBroker}, {"o2", PhaseObserver}, {"p1", PhaseProducer}, {"b2", PhaseBroker}, {"c2", PhaseConsumer}, {"r1", PhaseRelay}} {
		name := a.name
		if err := w.AddFunc(name, a.phase, func(Tick) { ran = append(ran, name) }); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"b1", "b2", "p1", "r1", "c1", "c2", "o1", "o2"}
	if got := w.Components(); !slices.Equal(got, want) {
		t.Fatalf("components %v, want %v", got, want)
	}
	w.Tick()
	if !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	if err := w.AddFunc("c1", PhaseConsumer, func(Tick) {}); err == nil {
		t.Fatal("a second component named c1 was added")
	}
}
