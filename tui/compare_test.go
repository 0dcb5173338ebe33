package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/gdamore/tcell/v2"
)

// cmpSide loads a lesson, or its variant when variant is not "", and
// returns it as a side.
func cmpSide(t *testing.T, label, lesson string, seed *uint64, variant string) lab.Side {
	t.Helper()
	s, err := scenario.LoadLesson(lesson)
	if err != nil {
		t.Fatal(err)
	}
	if variant != "" {
		if s, err = s.Variant(variant); err != nil {
			t.Fatal(err)
		}
	}
	d, err := lab.Open(s, lab.SessionOptions{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	d.SetLesson(lesson)
	return lab.Side{Label: label, Session: d}
}

// cmpPair is the idempotent-consumer lesson's variant with naive
// consumers against its variant with idempotent ones.
func cmpPair(t *testing.T) *lab.Pair {
	t.Helper()
	p, err := lab.NewPair(cmpSide(t, "naive", "idempotent-consumer", nil, "naive"),
		cmpSide(t, "idempotent", "idempotent-consumer", nil, "idempotent"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cmpDraw draws the view on a w x h simulation screen and returns its text.
func cmpDraw(t *testing.T, v *Compare, w, h int) string {
	t.Helper()
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	defer scr.Fini()
	scr.SetSize(w, h)
	v.SetRect(0, 0, w, h)
	v.Draw(scr)
	return screenText(scr)
}

func TestPairLockstep(t *testing.T) {
	four, five := uint64(4), uint64(5)
	p, err := lab.NewPair(cmpSide(t, "seed 4", "poison-dlq", &four, ""), cmpSide(t, "seed 5", "poison-dlq", &five, ""))
	if err != nil {
		t.Fatal(err)
	}
	c := NewController(p)
	for i := 1; i <= 7; i++ {
		c.Handle(Command{Kind: CmdStep})
		f := p.Frame(c.Snapshot())
		for side := range f.Sides {
			if got := f.Sides[side].Snap.Header.Tick; int(got) != i {
				t.Fatalf("after %d steps side %d is at t=%d", i, side, got)
			}
		}
		if f.Sides[0].Snap.Header.Seed != 4 || f.Sides[1].Snap.Header.Seed != 5 {
			t.Fatalf("seeds %d, %d, want 4, 5", f.Sides[0].Snap.Header.Seed, f.Sides[1].Snap.Header.Seed)
		}
	}
	// next: both sides move to the next narration point together.
	before := p.Frame(c.Snapshot())
	c.Handle(Command{Kind: CmdStepNarration})
	f := p.Frame(c.Snapshot())
	if f.Sides[0].Snap.Header.Tick != f.Sides[1].Snap.Header.Tick || f.Sides[0].Snap.Header.Tick <= before.Sides[0].Snap.Header.Tick {
		t.Fatalf("next: ticks %d, %d after %d", f.Sides[0].Snap.Header.Tick, f.Sides[1].Snap.Header.Tick, before.Sides[0].Snap.Header.Tick)
	}
	if f.Sides[0].Snap.Narration.Index == before.Sides[0].Snap.Narration.Index && f.Sides[1].Snap.Narration.Index == before.Sides[1].Snap.Narration.Index {
		t.Fatalf("next did not reach a narration step")
	}
	// Play runs both to the end, pausing at the pause steps.
	c.Handle(Command{Kind: CmdTogglePlay})
	for i := 0; i < 1000 && !p.Done(); i++ {
		if _, ok := c.Tick(); !ok {
			c.Handle(Command{Kind: CmdTogglePlay})
		}
	}
	f = p.Frame(c.Snapshot())
	if !p.Done() || f.Sides[0].Snap.Header.State != lab.StateFinished || f.Sides[1].Snap.Header.State != lab.StateFinished {
		t.Fatalf("not finished: %v %v", f.Sides[0].Snap.Header.State, f.Sides[1].Snap.Header.State)
	}
	// Restart keeps each side's seed; a new seed keeps them apart.
	c.Handle(Command{Kind: CmdRestart})
	f = p.Frame(c.Snapshot())
	if f.Sides[0].Snap.Header.Seed != 4 || f.Sides[1].Snap.Header.Seed != 5 || f.Sides[0].Snap.Header.Tick != 0 || f.Sides[1].Snap.Header.Tick != 0 {
		t.Fatalf("restart: seeds %d, %d at t=%d, %d", f.Sides[0].Snap.Header.Seed, f.Sides[1].Snap.Header.Seed, f.Sides[0].Snap.Header.Tick, f.Sides[1].Snap.Header.Tick)
	}
	if !strings.Contains(f.Sides[1].Snap.Header.Notice, "seed 5") {
		t.Errorf("side B's notice %q does not name its seed", f.Sides[1].Snap.Header.Notice)
	}
	c.Handle(Command{Kind: CmdReseed})
	f = p.Frame(c.Snapshot())
	if a, b := f.Sides[0].Snap.Header.Seed, f.Sides[1].Snap.Header.Seed; a != lab.NextSeed(4) || b != lab.NextSeed(5) {
		t.Fatalf("new seed: %d, %d, want %d, %d", a, b, lab.NextSeed(4), lab.NextSeed(5))
	}
}

func TestPairUnevenLengths(t *testing.T) {
	// dual-write runs 18 ticks, idempotent-consumer 30: the shorter side
	// stays at its end while the other goes on.
	p, err := lab.NewPair(cmpSide(t, "dual-write", "dual-write", nil, ""), cmpSide(t, "idempotent-consumer", "idempotent-consumer", nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	c := NewController(p)
	for i := 0; i < 25; i++ {
		c.Handle(Command{Kind: CmdStep})
	}
	f := p.Frame(c.Snapshot())
	if f.Sides[0].Snap.Header.Tick != 18 || f.Sides[1].Snap.Header.Tick != 25 {
		t.Fatalf("ticks %d, %d, want 18, 25", f.Sides[0].Snap.Header.Tick, f.Sides[1].Snap.Header.Tick)
	}
	if f.Sides[0].Snap.Header.State != lab.StateFinished || f.Sides[1].Snap.Header.State == lab.StateFinished {
		t.Fatalf("states %v, %v", f.Sides[0].Snap.Header.State, f.Sides[1].Snap.Header.State)
	}
	if c.Snapshot().Header.Tick != 25 || p.Done() {
		t.Fatalf("pair at t=%d, done %v", c.Snapshot().Header.Tick, p.Done())
	}
}

func TestPairTallies(t *testing.T) {
	p := cmpPair(t)
	c := NewController(p)
	for !p.Done() {
		c.Handle(Command{Kind: CmdStep})
	}
	f := p.Frame(c.Snapshot())
	naive, safe := f.Sides[0].Tally, f.Sides[1].Tally
	if !naive.Known || !safe.Known {
		t.Fatal("tallies unknown for scenario drivers")
	}
	if naive.Sent != safe.Sent || naive.Sent == 0 {
		t.Errorf("sent %d vs %d: the same workload should send the same events", naive.Sent, safe.Sent)
	}
	if naive.Duplicates == 0 || naive.Duplicates != safe.Duplicates {
		t.Errorf("duplicates %d vs %d: both sides get the same duplicates", naive.Duplicates, safe.Duplicates)
	}
	if naive.DupApplied == 0 || safe.DupApplied != 0 {
		t.Errorf("duplicates applied: naive %d (want > 0), idempotent %d (want 0)", naive.DupApplied, safe.DupApplied)
	}
	if naive.Applied <= safe.Applied {
		t.Errorf("applied: naive %d, idempotent %d; the naive side applies the duplicates too", naive.Applied, safe.Applied)
	}
	v := NewCompare(NewTheme(true), nil)
	v.SetFrame(f)
	text := cmpDraw(t, v, 120, 40)
	for _, want := range []string{"naive", "idempotent", naive.Text(), safe.Text(), "x other side"} {
		if !strings.Contains(text, want) {
			t.Errorf("screen lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(safe.Text(), "(0 applied)") || strings.Contains(naive.Text(), "(0 applied)") {
		t.Errorf("tally lines: %q / %q", naive.Text(), safe.Text())
	}
	// Each variant meets its own expectations: both verdicts pass.
	for i := range f.Sides {
		v := f.Sides[i].Snap.Verdict
		if !v.Final || !v.Pass() || !strings.Contains(text, v.Line()) {
			t.Errorf("side %d verdict %q (final %v) not shown as passing:\n%s", i, v.Line(), v.Final, text)
		}
	}
	if strings.Count(text, "PASS 7 of 7") != 2 {
		t.Errorf("want both sides' verdicts:\n%s", text)
	}
}

// terseTally matches a tally in Tally.Terse form.
var terseTally = regexp.MustCompile(`  s\d+ a\d+ d\d+/\d+ l\d+ p\d+`)

func TestCompareLayout(t *testing.T) {
	p := cmpPair(t)
	c := NewController(p)
	c.Handle(Command{Kind: CmdStep})
	v := NewCompare(NewTheme(true), nil)
	v.SetFrame(p.Frame(c.Snapshot()))
	for _, sz := range [][2]int{{120, 40}, {160, 48}, {80, 24}, {80, 40}, {60, 16}} {
		text := cmpDraw(t, v, sz[0], sz[1])
		lines := strings.Split(text, "\n")
		var naive, safe [2]int // row and column of each side's label
		naive[0], safe[0] = -1, -1
		if sz[1] >= compareTitleHeight {
			if !strings.HasPrefix(lines[0], " compare ") || !strings.Contains(lines[0], "naive vs idempotent") {
				t.Errorf("%dx%d: title row %q", sz[0], sz[1], lines[0])
			}
			lines[0] = ""
		}
		for y, l := range lines {
			if i := strings.Index(l, "naive"); i >= 0 && naive[0] < 0 {
				naive = [2]int{y, len([]rune(l[:i]))}
			}
			if i := strings.Index(l, "idempotent"); i >= 0 && safe[0] < 0 {
				safe = [2]int{y, len([]rune(l[:i]))}
			}
		}
		if naive[0] < 0 || safe[0] < 0 {
			t.Fatalf("%dx%d: a side's label is missing:\n%s", sz[0], sz[1], text)
		}
		wantStacked := stacked(sz[0], sz[1])
		if gotStacked := safe[0] > naive[0]; gotStacked != wantStacked {
			t.Errorf("%dx%d: stacked %v, want %v:\n%s", sz[0], sz[1], gotStacked, wantStacked, text)
		}
		if !wantStacked && safe[1] < sz[0]/2 {
			t.Errorf("%dx%d: side B's label at column %d, want the right half:\n%s", sz[0], sz[1], safe[1], text)
		}
		// Each side's tally in full, short or terse form ("s2 a4 d0/0 l0 p0").
		if strings.Count(text, "  sent ")+len(terseTally.FindAllString(text, -1)) != 2 {
			t.Errorf("%dx%d: per-side tallies missing:\n%s", sz[0], sz[1], text)
		}
	}
}

func TestCompareKeys(t *testing.T) {
	p := cmpPair(t)
	c := NewController(p)
	var sent []Command
	v := NewCompare(NewTheme(true), func(cmd Command) { sent = append(sent, cmd) })
	v.SetFrame(p.Frame(c.Snapshot()))
	quit := 0
	v.SetQuitFunc(func() { quit++ })
	key := func(r rune) { v.HandleKey(tcell.NewEventKey(tcell.KeyRune, r, tcell.ModNone)) }
	key(' ')
	key('s')
	if len(sent) != 2 || sent[0].Kind != CmdTogglePlay || sent[1].Kind != CmdStep {
		t.Fatalf("commands %v, want play then step, each once", sent)
	}
	if v.Focused() != 0 {
		t.Fatal("focus starts on side A")
	}
	key('x')
	if v.Focused() != 1 || len(sent) != 2 {
		t.Fatalf("x: focus %d, commands %v", v.Focused(), sent)
	}
	// A filter typed on side B applies to side B only, and x is part of it.
	key('/')
	key('m')
	key('x')
	if !v.Player(1).Capturing() || v.Player(0).Capturing() {
		t.Fatal("while a filter is typed on side B, B captures the keys and A does not")
	}
	// The side's bottom row shows the filter being typed instead of its tally.
	if text := cmpDraw(t, v, 120, 40); !strings.Contains(text, "filter: mx█") || strings.Count(text, "  sent ") != 1 {
		t.Errorf("the filter prompt is not on side B's bottom row:\n%s", text)
	}
	v.HandleKey(tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModNone))
	if v.Player(1).Capturing() {
		t.Error("enter ends the filter prompt")
	}
	if v.Focused() != 1 || v.Player(1).Filter() != "mx" || v.Player(0).Filter() != "" {
		t.Fatalf("filter: focus %d, filters %q / %q", v.Focused(), v.Player(0).Filter(), v.Player(1).Filter())
	}
	key('q')
	if quit != 1 {
		t.Fatalf("q: quit called %d times", quit)
	}
	// The commands reach both sides through the pair.
	for _, cmd := range sent {
		c.Handle(cmd)
	}
	f := p.Frame(c.Snapshot())
	if f.Sides[0].Snap.Header.Tick != 1 || f.Sides[1].Snap.Header.Tick != 1 {
		t.Fatalf("after step: t=%d, t=%d", f.Sides[0].Snap.Header.Tick, f.Sides[1].Snap.Header.Tick)
	}
}

func TestPairDo(t *testing.T) {
	p, err := lab.NewPair(cmpSide(t, "dlq", "poison-dlq", nil, ""), cmpSide(t, "no dlq", "dual-write", nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	c := NewController(p)
	for i := 0; i < 10; i++ {
		c.Handle(Command{Kind: CmdStep})
	}
	c.Handle(Command{Kind: CmdAction, Action: lab.Redrive("")})
	f := p.Frame(c.Snapshot())
	if n := f.Sides[1].Snap.Header.Notice; !strings.HasPrefix(n, SymFault) {
		t.Errorf("side without a DLQ: notice %q, want the reason", n)
	}
	if n := f.Sides[0].Snap.Header.Notice; strings.HasPrefix(n, SymFault) || n == "" {
		t.Errorf("side with a DLQ: notice %q, want what the redrive did", n)
	}
	if _, err := lab.NewPair(lab.Side{Label: "a"}, lab.Side{Label: "b"}); err == nil {
		t.Error("NewPair accepted sides without drivers")
	}
}

func TestPairTimeTravel(t *testing.T) {
	p := cmpPair(t)
	c := NewController(p)
	for i := 0; i < 10; i++ {
		c.Handle(Command{Kind: CmdStep})
	}
	ticks := func() [2]int {
		f := p.Frame(c.Snapshot())
		return [2]int{int(f.Sides[0].Snap.Header.Tick), int(f.Sides[1].Snap.Header.Tick)}
	}
	c.Handle(Command{Kind: CmdBack})
	if got := ticks(); got != [2]int{9, 9} {
		t.Fatalf("back: ticks %v, want 9, 9", got)
	}
	// The sides went back exactly: the same panels as a fresh pair
	// stepped 9 times.
	fresh := cmpPair(t)
	fc := NewController(fresh)
	for i := 0; i < 9; i++ {
		fc.Handle(Command{Kind: CmdStep})
	}
	a, b := p.Frame(c.Snapshot()), fresh.Frame(fc.Snapshot())
	v := NewCompare(NewTheme(true), nil)
	v.SetFrame(a)
	got := cmpDraw(t, v, 120, 40)
	v = NewCompare(NewTheme(true), nil)
	v.SetFrame(b)
	if want := cmpDraw(t, v, 120, 40); got != want {
		t.Errorf("back from 10 differs from a fresh run at 9:\n--- back\n%s--- fresh\n%s", got, want)
	}
	c.Handle(Command{Kind: CmdSeek, Tick: 3})
	if got := ticks(); got != [2]int{3, 3} {
		t.Fatalf("seek 3: ticks %v", got)
	}
	c.Handle(Command{Kind: CmdStepNarration}) // to t=8, step 4
	c.Handle(Command{Kind: CmdPrevNarration})
	if got := ticks(); got != [2]int{3, 3} {
		t.Fatalf("previous narration from t=8: ticks %v, want 3, 3", got)
	}
}

// TestRunCompareQuit plays a pair through RunCompare on a simulation
// screen: keys reach both sides, and q stops the loop, then the
// application.
func TestRunCompareQuit(t *testing.T) {
	p := cmpPair(t)
	scr := tcell.NewSimulationScreen("UTF-8")
	drawn := make(chan struct{}, 100)
	stepped := make(chan struct{})
	seen := false
	ft := &fakeTicker{}
	opt := Options{Screen: scr, Ticker: ft.start, NoColor: true,
		afterDraw: func() {
			rows := strings.SplitN(screenText(scr), "\n", 3)
			if !seen && len(rows) == 3 && strings.Count(rows[1], "t=2 ") == 2 {
				seen = true
				close(stepped)
			}
			select {
			case drawn <- struct{}{}:
			default:
			}
		}}
	done := make(chan error, 1)
	go func() { done <- RunCompare(p, opt) }()
	<-drawn
	scr.SetSize(120, 40)
	scr.InjectKey(tcell.KeyRune, 's', 0)
	scr.InjectKey(tcell.KeyRune, 'x', 0)
	scr.InjectKey(tcell.KeyRune, 's', 0)
	select {
	case <-stepped:
	case <-time.After(10 * time.Second):
		t.Fatalf("both sides never showed t=2:\n%s", screenText(scr))
	}
	scr.InjectKey(tcell.KeyRune, 'q', 0)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not stop RunCompare")
	}
	if err := RunCompare(nil, opt); err == nil {
		t.Error("RunCompare(nil) returned no error")
	}
}

// TestCompareGolden draws the compare view of idempotent-consumer's two
// variants at t=3, where the duplicates arrive, at 120x40 and 80x24
// (testdata/compare-*.txt; go test -update rewrites them).
func TestCompareGolden(t *testing.T) {
	p := cmpPair(t)
	p.SetTitle("An idempotent consumer absorbs the duplicates")
	c := NewController(p)
	for i := 0; i < 3; i++ {
		c.Handle(Command{Kind: CmdStep})
	}
	v := NewCompare(NewTheme(true), nil)
	v.SetFrame(p.Frame(c.Snapshot()))
	for _, sz := range [][2]int{{120, 40}, {80, 24}} {
		got := cmpDraw(t, v, sz[0], sz[1])
		path := filepath.Join("testdata", fmt.Sprintf("compare-idempotent-%dx%d.txt", sz[0], sz[1]))
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs (go test -update rewrites it; read the diff):\n--- got\n%s--- want\n%s", path, got, want)
		}
	}
}

// TestCompareTallyFits: at 80 columns each side has 38 columns for its
// tally; with three-digit counts the labels give way, progressively, and
// every number of both sides is still shown in full (the left side once
// read "lost 0 pend" with the number cut off).
func TestCompareTallyFits(t *testing.T) {
	p := cmpPair(t)
	c := NewController(p)
	c.Handle(Command{Kind: CmdStep})
	fr := p.Frame(c.Snapshot())
	tallies := []lab.Tally{
		{Known: true, Sent: 6, Applied: 8, Duplicates: 4, DupApplied: 4, Lost: 0, Pending: 6},
		{Known: true, Sent: 120, Applied: 240, Duplicates: 120, DupApplied: 120, Lost: 7, Pending: 116},
		{Known: true, Sent: 123456, Applied: 234567, Duplicates: 345678, DupApplied: 456789, Lost: 567890, Pending: 678901},
	}
	for _, tl := range tallies {
		fr.Sides[0].Tally, fr.Sides[1].Tally = tl, tl
		fr.Sides[1].Tally.Pending++
		v := NewCompare(NewTheme(true), nil)
		v.SetFrame(fr)
		got := cmpDraw(t, v, 80, 24)
		rows := strings.Split(got, "\n")
		found := 0
		for _, side := range fr.Sides {
			want := fitTally(side.Tally, 38)
			if strings.HasSuffix(want, "…") {
				if len([]rune(tl.Terse())) <= 38 {
					t.Errorf("Fit(38) cut %q", want)
				}
			} else if !strings.HasSuffix(want, " "+strconv.Itoa(side.Tally.Pending)) && !strings.HasSuffix(want, "p"+strconv.Itoa(side.Tally.Pending)) {
				t.Errorf("tally %q does not end in its pending count", want)
			}
			for _, row := range rows {
				if strings.Contains(row, want) {
					found++
					break
				}
			}
		}
		if found != 2 {
			t.Errorf("%+v: both tallies not shown whole at 80x24:\n%s", tl, got)
		}
	}
	// Each form is tried in turn, and each fits where it is used.
	tl := tallies[1]
	for _, c := range []struct {
		w    int
		want string
	}{
		{80, tl.Text()}, {45, tl.Short()}, {38, "s120 a240 d120/120 l7 p116"}, {10, "s120 a240…"},
	} {
		if got := fitTally(tl, c.w); got != c.want || width(got) > c.w {
			t.Errorf("Fit(%d) = %q, want %q", c.w, got, c.want)
		}
	}
}

// TestVerdictStripFits: a lesson with many expectations in half of an 80
// column screen keeps its verdict numbers whole, dropping the not-yet
// count (the symbols show it) before it would cut one ("16 not ye").
func TestVerdictStripFits(t *testing.T) {
	var s lab.Snapshot
	for i := 0; i < 18; i++ {
		st := lab.NotYet
		if i < 2 {
			st = lab.Holds
		}
		s.Verdict.Judgments = append(s.Verdict.Judgments, lab.Judgement{Text: "x", Standing: st})
	}
	th := NewTheme(true)
	for _, c := range []struct {
		w    int
		want string
	}{
		{80, "so far 2 of 18 hold, 16 not yet"}, {40, "2/18 hold, 16 not yet"}, {37, " 2/18 hold"}, {22, "2/18 hold, 16 not yet"}, {12, "2/18 hold"},
	} {
		l := verdictStrip(&s, &th, c.w)
		text := ""
		for _, sg := range l {
			text += sg.text
		}
		if lineWidth(l) > c.w || !strings.HasSuffix(text, c.want) {
			t.Errorf("width %d: %q (%d columns), want it to end in %q", c.w, text, lineWidth(l), c.want)
		}
	}
}
