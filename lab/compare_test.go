package lab

import (
	"strings"
	"testing"
)

// side returns lesson (its variant when variant is not "") as a side.
func side(t *testing.T, label, lesson, variant string, seed *uint64) Side {
	t.Helper()
	d, err := OpenLesson(lesson, SessionOptions{Variant: variant, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return Side{Label: label, Session: d}
}

// pair returns the pair of a and b.
func pair(t *testing.T, a, b Side) *Pair {
	t.Helper()
	p, err := NewPair(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ticks returns both sides' ticks in frame f.
func ticks(f CompareFrame) [2]int {
	return [2]int{int(f.Sides[0].Snap.Header.Tick), int(f.Sides[1].Snap.Header.Tick)}
}

func TestPairSteps(t *testing.T) {
	four, five := uint64(4), uint64(5)
	p := pair(t, side(t, "seed 4", "poison-dlq", "", &four), side(t, "seed 5", "poison-dlq", "", &five))
	var s Snapshot
	for i := 1; i <= 7; i++ {
		s = p.Step()
		if got := ticks(p.Frame(s)); got != [2]int{i, i} {
			t.Fatalf("after %d steps: ticks %v", i, got)
		}
	}
	f := p.Frame(s)
	if f.Sides[0].Snap.Header.Seed != 4 || f.Sides[1].Snap.Header.Seed != 5 {
		t.Fatalf("seeds %d, %d", f.Sides[0].Snap.Header.Seed, f.Sides[1].Snap.Header.Seed)
	}
	s = p.Restart(NextSeed(4))
	f = p.Frame(s)
	if a, b := f.Sides[0].Snap.Header.Seed, f.Sides[1].Snap.Header.Seed; a != NextSeed(4) || b != NextSeed(5) || ticks(f) != [2]int{0, 0} {
		t.Errorf("new seed: %d, %d at %v, want %d, %d at t=0", a, b, ticks(f), NextSeed(4), NextSeed(5))
	}
}

func TestPairUnevenEnds(t *testing.T) {
	// dual-write runs 18 ticks, idempotent-consumer 30.
	p := pair(t, side(t, "dual-write", "dual-write", "", nil), side(t, "idempotent-consumer", "idempotent-consumer", "", nil))
	var s Snapshot
	for i := 0; i < 25; i++ {
		s = p.Step()
	}
	f := p.Frame(s)
	if ticks(f) != [2]int{18, 25} || s.Header.Tick != 25 || p.Done() {
		t.Fatalf("ticks %v, pair at t=%d, done %v", ticks(f), s.Header.Tick, p.Done())
	}
	if f.Sides[0].Snap.Header.State != StateFinished || f.Sides[1].Snap.Header.State == StateFinished {
		t.Errorf("states %v, %v", f.Sides[0].Snap.Header.State, f.Sides[1].Snap.Header.State)
	}
}

func TestPairTalliesAndSeek(t *testing.T) {
	mk := func() *Pair {
		return pair(t, side(t, "naive", "idempotent-consumer", "naive", nil), side(t, "idempotent", "idempotent-consumer", "idempotent", nil))
	}
	p := mk()
	var s Snapshot
	for !p.Done() {
		s = p.Step()
	}
	f := p.Frame(s)
	naive, safe := f.Sides[0].Tally, f.Sides[1].Tally
	if !naive.Known || naive.Sent != safe.Sent || naive.DupApplied == 0 || safe.DupApplied != 0 || naive.Applied <= safe.Applied {
		t.Errorf("tallies naive %+v idempotent %+v", naive, safe)
	}
	// Back to t=9: the same as a fresh pair stepped 9 times.
	back := p.Frame(p.Seek(9))
	fresh := mk()
	for i := 0; i < 9; i++ {
		s = fresh.Step()
	}
	want := fresh.Frame(s)
	for i := range back.Sides {
		if diff := sameRun(back.Sides[i].Snap, want.Sides[i].Snap); diff != "" || back.Sides[i].Tally != want.Sides[i].Tally {
			t.Errorf("side %d back at t=9 differs from a fresh run (%s): %+v, want %+v", i, diff, back.Sides[i].Tally, want.Sides[i].Tally)
		}
	}
}

func TestPairDoOnBoth(t *testing.T) {
	p := pair(t, side(t, "dlq", "poison-dlq", "", nil), side(t, "no dlq", "dual-write", "", nil))
	for i := 0; i < 10; i++ {
		p.Step()
	}
	s, err := p.Do(Redrive(""))
	if err != nil {
		t.Fatalf("one side could redrive, yet %v", err)
	}
	f := p.Frame(s)
	if n := f.Sides[1].Snap.Header.Notice; !strings.HasPrefix(n, SymFault+" nothing to redrive") {
		t.Errorf("side without a DLQ: notice %q", n)
	}
	if n := f.Sides[0].Snap.Header.Notice; !strings.HasPrefix(n, "redrove ") {
		t.Errorf("side with a DLQ: notice %q", n)
	}
	if _, err := p.Do(SeekEarliest("")); err == nil || !strings.Contains(err.Error(), "dlq: ") || !strings.Contains(err.Error(), "no dlq: ") {
		t.Errorf("an action neither side takes: %v, want both reasons", err)
	}
	if _, err := NewPair(Side{Label: "a"}, Side{Label: "b"}); err == nil {
		t.Error("NewPair accepted sides without sessions")
	}
}
