package tui

import "testing"

// A narration step's filter holds while its step is shown: the next step
// without one clears it (it would hide what that step talks about), while
// a filter the student typed stays from step to step.
func TestStepFilterLastsOneStep(t *testing.T) {
	ctl := NewController(lessonDriver(t, "architecture-choice"))
	p := NewPlayer(NewTheme(true), nil)
	p.SetSnapshot(ctl.Snapshot())
	next := func() {
		ctl.Handle(Command{Kind: CmdStepNarration})
		p.SetSnapshot(ctl.Snapshot())
	}
	for i := 0; i < 3 && p.Snapshot().Narration.Index < 2; i++ {
		next() // to 2/9, t=1: filter a-shared
	}
	if n := p.Snapshot().Narration; n.Index != 2 || p.Filter() != "a-shared" {
		t.Fatalf("step %d: filter %q, want step 2 with the step's filter a-shared", n.Index, p.Filter())
	}
	next() // 3/9: no filter of its own
	if n := p.Snapshot().Narration; n.Index != 3 || p.Filter() != "" {
		t.Fatalf("step %d: filter %q, want none: the earlier step's filter hides this step's events", n.Index, p.Filter())
	}
	p.startFilter()
	p.filter, p.editing = "order-2", false
	next()
	if p.Filter() != "order-2" {
		t.Fatalf("a typed filter was replaced by %q", p.Filter())
	}
}
