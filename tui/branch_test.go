package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
)

// TestBranchNoticeOnScreen: after going back and acting differently, the
// player says on screen that it branched and what it dropped, at 80x24
// too.
func TestBranchNoticeOnScreen(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		c := NewController(lessonDriver(t, "poison-dlq"))
		for i := 0; i < 14; i++ {
			c.Handle(Command{Kind: CmdStep})
		}
		c.Handle(Command{Kind: CmdAction, Action: lab.Redrive("")})
		c.Handle(Command{Kind: CmdSeek, Tick: 10})
		c.Handle(Command{Kind: CmdAction, Action: lab.Crash("")})
		text := render(t, c, sz[0], sz[1])
		if !strings.Contains(flatten(text), "branched at t=10") || !strings.Contains(flatten(text), "t=14 is dropped") {
			t.Errorf("%dx%d: the branch is not on screen:\n%s", sz[0], sz[1], text)
		}
	}
}
