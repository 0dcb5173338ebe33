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
