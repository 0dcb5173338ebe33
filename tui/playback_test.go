package tui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

func testRecording() lab.Recording {
	return lab.Recording{
		Title: "Repair the outbox", Lesson: "exercise outbox", Seed: 7, End: 5,
		Trace: []sim.Event{
			{Seq: 1, Tick: 1, Kind: sim.KindAction, Where: "service:shop", Detail: "PlaceOrder(10) stored order 1"},
			{Seq: 2, Tick: 3, Kind: sim.KindFault, Where: "service:shop", Rule: "crash-mid-order", Detail: "writer.crash_after_commit"},
			{Seq: 3, Tick: 3, Kind: sim.KindChecked, Where: "expect", Detail: "FAIL atomic-order: order 2 was stored without its event"},
		},
		Checks: []lab.RecordedCheck{
			{Text: "an order is never stored without its event", Broken: true, At: 3, Why: "order 2 was stored without its event"},
			{Text: "rows leave in id order"},
			{Text: "every event is published", Unjudged: true},
		},
		Steps: []lab.RecordedStep{{At: 0, Text: "Seed 7, shrunk to one fault."}, {At: 3, Text: "The crash hits here.", Pause: true}},
	}
}

// At 80x24 the player shows the broken property and the fault.
func TestPlaybackDraws(t *testing.T) {
	d := lab.NewPlayback(testRecording())
	c := NewController(d)
	d.NextNarration()
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	scr.SetSize(80, 24)
	p := NewPlayer(NewTheme(true), nil)
	p.SetSnapshot(c.Snapshot())
	p.SetSnapshot(d.Snapshot())
	p.SetRect(0, 0, 80, 24)
	p.Draw(scr)
	text := screenText(scr)
	t.Log("\n" + text)
	for _, want := range []string{"Repair the outbox", "crash-mid-order", "FAIL"} {
		if !strings.Contains(text, want) {
			t.Errorf("screen lacks %q:\n%s", want, text)
		}
	}
}
