package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

func testRecording() Recording {
	return Recording{
		Title: "Repair the outbox", Lesson: "exercise outbox", Seed: 7, End: 5,
		Trace: []sim.Event{
			{Seq: 1, Tick: 1, Kind: sim.KindAction, Where: "service:shop", Detail: "PlaceOrder(10) stored order 1"},
			{Seq: 2, Tick: 3, Kind: sim.KindFault, Where: "service:shop", Rule: "crash-mid-order", Detail: "writer.crash_after_commit"},
			{Seq: 3, Tick: 3, Kind: sim.KindChecked, Where: "expect", Detail: "FAIL atomic-order: order 2 was stored without its event"},
		},
		Checks: []RecordedCheck{
			{Text: "an order is never stored without its event", Broken: true, At: 3, Why: "order 2 was stored without its event"},
			{Text: "rows leave in id order"},
			{Text: "every event is published", Unjudged: true},
		},
		Steps: []RecordedStep{{At: 0, Text: "Seed 7, shrunk to one fault."}, {At: 3, Text: "The crash hits here.", Pause: true}},
	}
}

// The verdict of a recording stays open until a property breaks, shows
// it broken from its tick on, and holds the rest at the end; time goes
// back and forth as in a scenario.
func TestPlaybackVerdict(t *testing.T) {
	d := NewPlayback(testRecording())
	s := d.Snapshot()
	if got := s.Verdict.Judgments[0].Standing; got != NotYet {
		t.Fatalf("tick 0: %v, want not yet", got)
	}
	if len(s.Trace) != 0 || s.Narration.Index != 1 {
		t.Fatalf("tick 0: %d events, step %d", len(s.Trace), s.Narration.Index)
	}
	s = d.NextNarration()
	if s.Header.Tick != 3 || s.Verdict.Judgments[0].Standing != Broken || !s.Narration.Pause {
		t.Fatalf("next narration: tick %d, %v, pause %v", s.Header.Tick, s.Verdict.Judgments[0].Standing, s.Narration.Pause)
	}
	if len(s.Trace) != 3 {
		t.Fatalf("tick 3 shows %d events, want 3", len(s.Trace))
	}
	s = d.Seek(99)
	if !d.Done() || !s.Verdict.Final || s.Verdict.Judgments[1].Standing != Holds {
		t.Fatalf("end: done %v final %v %v", d.Done(), s.Verdict.Final, s.Verdict.Judgments[1].Standing)
	}
	if j := s.Verdict.Judgments[2]; j.Standing != NotYet || !strings.Contains(j.Measured, "not judged") || strings.Contains(j.Measured, "never got") {
		t.Fatalf("a check the run never judged reads %v %q at the end", j.Standing, j.Measured)
	}
	s = d.PrevNarration()
	if s.Header.Tick != 0 {
		t.Fatalf("prev narration from the end goes to %d, want 0 (the step before the last)", s.Header.Tick)
	}
	if _, err := d.Do(Action{}); err == nil {
		t.Fatal("a recorded run took a hand action")
	}
	if s = d.Restart(8); !strings.Contains(s.Header.Notice, "seed 7") {
		t.Fatalf("restart on another seed: notice %q", s.Header.Notice)
	}
}
