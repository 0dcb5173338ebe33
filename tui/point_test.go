package tui

import (
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
)

// lessonPoints names, per lesson, the narration step (1-based) that makes
// the lesson's point. Every lesson has one; a test checks the list against
// the menu.
var lessonPoints = map[string]int{
	"dual-write":           2, // t=4: the crash loses m4's event
	"outbox-relay":         4, // t=5: the relay re-publishes m3, a duplicate
	"idempotent-consumer":  3, // t=3: naive applies the duplicates, safe skips them
	"poison-dlq":           3, // t=2: poison goes to the DLQ at once
	"visibility-timeout":   5, // t=9: the late ack; the job ran twice
	"offline-subscriber":   3, // t=14: eight events missed on the topic
	"partition-order":      3, // t=9: kunde-A applied out of order
	"crash-before-commit":  3, // t=2: the batch is applied again
	"replay-projection":    5, // t=22: the projection rebuilt
	"retention-lag":        4, // t=20: retention deletes what reports never read
	"event-storm":          3, // t=2: 73 messages for one save on storm
	"sync-loop":            3, // t=2: the tracked pair ends the round trip
	"architecture-choice":  5, // t=5: design C loses an event
	"redrive-dedup":        5, // t=20: by-id charges the redriven order again
	"queue-health":         2, // t=4: the peak would page a depth alert
	"competing-order":      2, // t=5: kunde-2 applied out of order
	"correlation-ids":      2, // t=5: shipping loses order-6
	"retry-classes":        3, // t=4: the invalid payload goes to the DLQ at once
	"resend-outgoing":      3, // t=6: only billing-fixed re-sends the invoice
	"schema-evolution":     2, // t=8: the v1 billing stops at the first v2 event
	"saga-compensation":    2, // t=5: checkout releases order-2's reservation once
	"eventual-consistency": 2, // t=5: the read right after the write is stale
}

// TestVerdictChangesAtThePoint steps every lesson's session from
// narration step to narration step, as n does, and checks that the live
// verdict changes at the step that makes the lesson's point: at least one
// expectation that was undecided at the step before is settled there.
func TestVerdictChangesAtThePoint(t *testing.T) {
	for _, l := range scenario.Lessons() {
		point, ok := lessonPoints[l.Name]
		if !ok {
			t.Errorf("%s: no point step listed in lessonPoints", l.Name)
			continue
		}
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := NewController(d)
		prev := c.Snapshot().Verdict
		for c.Snapshot().Narration.Index < point && !d.Done() {
			prev = c.Snapshot().Verdict
			c.Handle(Command{Kind: CmdStepNarration})
		}
		snap := c.Snapshot()
		if snap.Narration.Index != point {
			t.Errorf("%s: stepping stopped at step %d, want %d", l.Name, snap.Narration.Index, point)
			continue
		}
		if snap.Verdict.Final {
			t.Errorf("%s: the point step %d comes only at the end of the run", l.Name, point)
			continue
		}
		settled := 0
		for i, j := range snap.Verdict.Judgments {
			if j.Standing != lab.NotYet && prev.Judgments[i].Standing == lab.NotYet {
				settled++
			}
		}
		if settled == 0 {
			t.Errorf("%s: the verdict does not change at step %d (t=%d): %q before, %q there",
				l.Name, point, snap.Header.Tick, prev.Line(), snap.Verdict.Line())
		}
	}
}
