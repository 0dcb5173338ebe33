package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
)

// driverFile is lab's session test scenario, played here on screen.
const driverFile = "../lab/testdata/driver.yaml"

// newTestDriver returns a session on driverFile.
func newTestDriver(t *testing.T) *lab.Session {
	t.Helper()
	s, err := scenario.LoadFile(driverFile)
	if err != nil {
		t.Fatal(err)
	}
	d, err := lab.Open(s, lab.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSessionRender(t *testing.T) {
	s, err := scenario.LoadFile("../scenario/testdata/valid/poison-dlq.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := lab.Open(s, lab.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12; i++ {
		d.Step()
	}
	p := NewPlayer(NewTheme(false), nil)
	p.SetSnapshot(d.Snapshot())
	scr := newScreen(t, 160, 48)
	draw(scr, p)
	text := screenText(scr)
	if testing.Verbose() {
		t.Log(text)
	}
	for _, want := range []string{"t=12", "queue orders", "Poison message"} {
		if !strings.Contains(text, want) {
			t.Errorf("screen lacks %q:\n%s", want, text)
		}
	}
}

func TestSessionPausesAtNarration(t *testing.T) {
	c := NewController(newTestDriver(t))
	c.Handle(Command{Kind: CmdTogglePlay})
	for i := 0; i < 20 && c.Playing(); i++ {
		c.Tick()
	}
	if s := c.Snapshot(); c.Playing() || s.Header.Tick != 10 || s.Narration.Index != 2 {
		t.Errorf("playing %v at tick %d, step %d", c.Playing(), s.Header.Tick, s.Narration.Index)
	}
	c.Handle(Command{Kind: CmdTogglePlay})
	c.Tick()
	if !c.Playing() || c.Snapshot().Header.Tick != 11 {
		t.Error("the player did not resume after the pause")
	}
}
