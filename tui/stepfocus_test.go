package tui

import (
	"strings"
	"testing"
)

// stepTo plays lesson to narration step n and returns the controller and
// a player showing it.
func stepTo(t *testing.T, lesson string, n int) (*Controller, *Player) {
	t.Helper()
	ctl := NewController(lessonDriver(t, lesson))
	p := NewPlayer(NewTheme(true), nil)
	p.SetSnapshot(ctl.Snapshot())
	for i := 0; i < 2*n && p.Snapshot().Narration.Index < n; i++ {
		ctl.Handle(Command{Kind: CmdStepNarration})
		p.SetSnapshot(ctl.Snapshot())
	}
	if got := p.Snapshot().Narration.Index; got != n {
		t.Fatalf("%s: at step %d, want %d", lesson, got, n)
	}
	return ctl, p
}

// TestPastStoryShowsFromItsStart: correlation-ids' step 3/4 (at t=6)
// filters the trace on m12, whose story (published at t=3, a cascade,
// lost at t=5) is behind the step's tick and longer than the trace at
// 80x24. The trace shows it from its start, "checkout published m12", with
// the count of newer lines below; end follows the newest event, and so
// does the next tick. A step whose story is in its own tick
// (retry-classes' 3/7) keeps the tick's outcome in view.
func TestPastStoryShowsFromItsStart(t *testing.T) {
	ctl, p := stepTo(t, "correlation-ids", 3)
	tick := p.Snapshot().Header.Tick
	screen := drawnText(t, p, 80, 24)
	for _, want := range []string{"published m12 by checkout", "newer, end to follow"} {
		if !strings.Contains(screen, want) {
			t.Errorf("step 3/4 at 80x24: %q is not on screen:\n%s", want, screen)
		}
	}
	p.focus = panelID{kindTrace, 0}
	p.scrollEnd()
	if screen := drawnText(t, p, 80, 24); strings.Contains(screen, "newer, end to follow") || !strings.Contains(screen, "lost m24") {
		t.Errorf("after end, the trace does not show the newest events:\n%s", screen)
	}
	for p.Snapshot().Header.Tick < tick+1 {
		ctl.Handle(Command{Kind: CmdStep})
		p.SetSnapshot(ctl.Snapshot())
	}
	if p.Snapshot().Narration.Index != 3 {
		t.Fatalf("tick %d has a step of its own", p.Snapshot().Header.Tick)
	}
	if screen := drawnText(t, p, 80, 24); strings.Contains(screen, "newer, end to follow") {
		t.Errorf("the next tick does not follow the newest event:\n%s", screen)
	}
	// A filter the student types follows the newest event, as always.
	_, p = stepTo(t, "correlation-ids", 3)
	p.startFilter()
	p.filter, p.editing = "m12", false
	if screen := drawnText(t, p, 80, 24); strings.Contains(screen, "newer, end to follow") || !strings.Contains(screen, "lost m24") {
		t.Errorf("a typed filter does not follow the newest event:\n%s", screen)
	}
	_, p = stepTo(t, "retry-classes", 3)
	if screen := drawnText(t, p, 80, 24); strings.Contains(screen, "newer, end to follow") {
		t.Errorf("retry-classes 3/7 tells the story of its own tick, whose outcome stays in view:\n%s", screen)
	}
}

// TestCrashStepShowsBothEffects: crash-before-commit's step 3/6 talks
// about m3 applied by w1, which then crashes, and again by w2: at 80x24
// both effects are on screen (the step filters the trace on m3's key; the
// end of its tick alone showed only w2's).
func TestCrashStepShowsBothEffects(t *testing.T) {
	_, p := stepTo(t, "crash-before-commit", 3)
	screen := drawnText(t, p, 80, 24)
	for _, want := range []string{"processed m3 by w1", "processed m3 (effect 2×) by w2"} {
		if !strings.Contains(screen, want) {
			t.Errorf("step 3/6 at 80x24: %q is not on screen:\n%s", want, screen)
		}
	}
}
