package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/gdamore/tcell/v2"
)

// lessonRuns returns every lesson and every variant of one, by name.
func lessonRuns(t *testing.T) map[string]*scenario.Scenario {
	t.Helper()
	out := map[string]*scenario.Scenario{}
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		out[l.Name] = s
		for _, v := range s.Variants {
			vs, err := s.Variant(v.Name)
			if err != nil {
				t.Fatal(err)
			}
			out[l.Name+"/"+v.Name] = vs
		}
	}
	return out
}

// flatText squeezes the white space out of a text, so wrapped lines can
// be searched for a sentence.
func flatText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// boxText returns the text inside the box whose title row contains title,
// one row after another, without the panels around it.
func boxText(screen, title string) string {
	rows := strings.Split(screen, "\n")
	top, left, right := -1, -1, -1
	for y, row := range rows {
		rs := []rune(row)
		i := strings.Index(row, title)
		if i < 0 {
			continue
		}
		at := len([]rune(row[:i]))
		for x := at; x >= 0; x-- {
			if rs[x] == '╔' {
				left = x
				break
			}
		}
		for x := at; x < len(rs); x++ {
			if rs[x] == '╗' {
				right = x
				break
			}
		}
		top = y
		break
	}
	if top < 0 || left < 0 || right < 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(string([]rune(rows[top])[left:right+1]) + " ")
	for _, row := range rows[top+1:] {
		rs := []rune(row)
		if len(rs) <= right || rs[left] == '╚' {
			break
		}
		b.WriteString(string(rs[left+1:right]) + " ")
	}
	return b.String()
}

// TestSummaryScrollsToEveryLine plays every lesson and variant to the end
// at 80x24 and scrolls the summary with ↓ to its end: every judgement, the
// ledger line and the whole "To remember" text come on screen, and no key
// that scrolls closes the box.
func TestSummaryScrollsToEveryLine(t *testing.T) {
	for name, s := range lessonRuns(t) {
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := NewController(d)
		for i := 0; i < 200 && !d.Done(); i++ {
			c.Handle(Command{Kind: CmdStepNarration})
		}
		p := NewPlayer(NewTheme(true), nil)
		p.SetOverlays(true)
		snap := c.Snapshot()
		p.SetSnapshot(snap)
		scr := newScreen(t, 80, 24)
		var seen strings.Builder
		for i := 0; i < 40; i++ {
			draw(scr, p)
			seen.WriteString(flatText(boxText(screenText(scr), "the end:")) + " ")
			if !p.OverlayVisible() {
				t.Fatalf("%s: scrolling closed the summary", name)
			}
			p.HandleKey(tcell.NewEventKey(tcell.KeyDown, 0, tcell.ModNone))
		}
		scr.Fini()
		all := seen.String()
		var want []string
		for _, j := range snap.Verdict.Judgments {
			want = append(want, j.Text+" ("+j.Measured+")")
		}
		want = append(want, "ledger at t=")
		if snap.Intro.Remember != "" {
			want = append(want, flatText("To remember: "+snap.Intro.Remember))
		}
		for _, w := range want {
			if !strings.Contains(all, flatText(w)) {
				t.Errorf("%s: %q never came on screen while scrolling the summary", name, w)
			}
		}
		p.HandleKey(tcell.NewEventKey(tcell.KeyEscape, 0, tcell.ModNone))
		if p.OverlayVisible() {
			t.Errorf("%s: esc did not close the summary", name)
		}
	}
}

// TestNextFromIntroShowsStepOne checks that "n first step" on the intro
// closes it on narration step 1 (at t=0, under the intro), not step 2.
func TestNextFromIntroShowsStepOne(t *testing.T) {
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := NewController(d)
		p := NewPlayer(NewTheme(true), func(cmd Command) { c.Handle(cmd) })
		p.SetOverlays(true)
		p.SetSnapshot(c.Snapshot())
		if !p.OverlayVisible() {
			t.Fatalf("%s: no intro at t=0", l.Name)
		}
		p.HandleKey(tcell.NewEventKey(tcell.KeyRune, 'n', tcell.ModNone))
		p.SetSnapshot(c.Snapshot())
		if p.OverlayVisible() {
			t.Errorf("%s: n did not close the intro", l.Name)
		}
		if got, want := c.Snapshot().Narration.Index, 1; got != want {
			t.Errorf("%s: n from the intro shows step %d, want %d", l.Name, got, want)
		}
		// The next n goes on to step 2.
		p.HandleKey(tcell.NewEventKey(tcell.KeyRune, 'n', tcell.ModNone))
		if got := c.Snapshot().Narration.Index; got != 2 {
			t.Errorf("%s: the second n shows step %d, want 2", l.Name, got)
		}
	}
}

// TestNarrationBringsItsPanel steps partition-order, architecture-choice
// and correlation-ids to the steps that talk about a panel: the player
// shows that panel's tab and, in partition-order, filters the trace to
// kunde-A so the inversion (m19 applied after m31) is on screen at 80x24.
func TestNarrationBringsItsPanel(t *testing.T) {
	for _, c := range []struct {
		lesson string
		step   int
		tab    string
		filter string
		text   []string
	}{
		{"partition-order", 3, "orders", "kunde-A", []string{"m31", "m19", "m25"}},
		{"architecture-choice", 6, "c-billing", "", []string{"queue c-billing"}},
		// Step 3/4 tells m12's path from its start (step 2/4 showed the
		// failure of m24 at its end): the trace shows it from there.
		{"correlation-ids", 3, "payments", "m12", []string{"t=3 published m12 by checkout", "t=3 published m14", "newer, end to follow"}},
	} {
		s, err := scenario.LoadLesson(c.lesson)
		if err != nil {
			t.Fatal(err)
		}
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctl := NewController(d)
		p := NewPlayer(NewTheme(true), nil)
		p.SetSnapshot(ctl.Snapshot())
		for ctl.Snapshot().Narration.Index < c.step && !d.Done() {
			p.SetSnapshot(ctl.Handle(Command{Kind: CmdStepNarration}))
		}
		if got := p.tab.name(&p.snap); got != c.tab {
			t.Errorf("%s step %d: tab %q in front, want %q", c.lesson, c.step, got, c.tab)
		}
		if p.Filter() != c.filter {
			t.Errorf("%s step %d: filter %q, want %q", c.lesson, c.step, p.Filter(), c.filter)
		}
		scr := newScreen(t, 80, 24)
		draw(scr, p)
		text := screenText(scr)
		scr.Fini()
		for _, w := range c.text {
			if !strings.Contains(text, w) {
				t.Errorf("%s step %d: %q not on screen:\n%s", c.lesson, c.step, w, text)
			}
		}
	}
}
