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
		// What the action did comes first and is never cut; the dropped
		// action is named after it, in full where there is room.
		head := strings.SplitN(text, "\n", 2)[0]
		if !strings.Contains(head, "crashed worker; dropped the redrive at t=14") {
			t.Errorf("%dx%d: the branch is not on screen:\n%s", sz[0], sz[1], text)
		}
	}
}
