package tui_test

import (
	"fmt"
	"strings"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/tui"
	"github.com/gdamore/tcell/v2"
)

// counter is a tiny Driver: a run of five ticks that narrates every other
// tick.
type counter struct {
	tick sim.Tick
	seed uint64
}

func (c *counter) Snapshot() lab.Snapshot {
	return lab.Snapshot{
		Header:    lab.Header{Title: "counting", Tick: c.tick, Seed: c.seed},
		Queues:    []lab.QueueView{{Name: "jobs", Visible: int(5 - c.tick)}},
		Narration: lab.Narration{Index: int(c.tick/2) + 1, Total: 3, Text: "step " + fmt.Sprint(c.tick/2+1)},
	}
}
func (c *counter) Step() lab.Snapshot               { c.tick++; return c.Snapshot() }
func (c *counter) Restart(seed uint64) lab.Snapshot { c.tick, c.seed = 0, seed; return c.Snapshot() }
func (c *counter) Do(a lab.Action) (lab.Snapshot, error) {
	return c.Snapshot(), fmt.Errorf("%v does not apply", lab.ActionName(a))
}
func (c *counter) Done() bool { return c.tick >= 5 }

// The Controller turns commands into snapshots synchronously; Loop runs it
// on its own goroutine for the player.
func ExampleController() {
	c := tui.NewController(&counter{seed: 1})
	show := func(s lab.Snapshot) {
		h := s.Header
		fmt.Println(strings.TrimSpace(fmt.Sprintf("t=%d %s %v t/s narration %d/%d %s",
			h.Tick, h.State, h.Speed, s.Narration.Index, s.Narration.Total, h.Notice)))
	}
	show(c.Snapshot())
	show(c.Handle(tui.Command{Kind: tui.CmdStep}))
	show(c.Handle(tui.Command{Kind: tui.CmdStepNarration}))
	show(c.Handle(tui.Command{Kind: tui.CmdFaster}))
	show(c.Handle(tui.Command{Kind: tui.CmdAction, Action: lab.Redrive("")}))
	show(c.Handle(tui.Command{Kind: tui.CmdTogglePlay}))
	for {
		s, ok := c.Tick()
		if !ok {
			break
		}
		show(s)
	}
	// Output:
	// t=0 paused 4 t/s narration 1/3
	// t=1 paused 4 t/s narration 1/3
	// t=2 paused 4 t/s narration 2/3
	// t=2 paused 8 t/s narration 2/3
	// t=2 paused 8 t/s narration 2/3 ⚠ redrive: redrive does not apply
	// t=2 playing 8 t/s narration 2/3
	// t=3 playing 8 t/s narration 2/3
	// t=4 playing 8 t/s narration 3/3
	// t=5 finished 8 t/s narration 3/3
}

// The hints bar and the help overlay come from the same key table.
func ExampleBindings() {
	for _, b := range tui.Bindings() {
		if b.Hint == 1 {
			fmt.Printf("%-5s %s\n", b.Label, b.Name)
		}
	}
	// Output:
	// space play/pause
	// s →   step
	// ←     back
	// n     next
	// /     filter
	// ?     help
	// q     quit
}

// A Player draws onto any tcell screen; tests use a simulation screen.
func ExamplePlayer() {
	scr := tcell.NewSimulationScreen("UTF-8")
	_ = scr.Init()
	scr.SetSize(80, 24)
	p := tui.NewPlayer(tui.NewTheme(true), nil)
	p.SetSnapshot(tui.NewController(&counter{seed: 1}).Snapshot())
	p.SetRect(0, 0, 80, 24)
	p.Draw(scr)
	var top strings.Builder
	for x := 0; x < 80; x++ {
		r, _, _, _ := scr.GetContent(x, 0)
		top.WriteRune(r)
	}
	fmt.Println(strings.TrimSpace(top.String()))
	// Output:
	// counting                                          t=0  seed 1  4 t/s  ‖ paused
}
