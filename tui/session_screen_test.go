package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
)

const driverScenario = `
title: Driver test
seed: 5
run: {ticks: 40}
topology:
  queues:
    - {name: orders, visibility_timeout: 3, dead_letter: {queue: orders-dlq, max_receive_count: 2}}
    - {name: orders-dlq}
  topics:
    - name: prices
      subscribers: [{name: ui}, {name: mobile, offline: true}]
  logs: [{name: events, partitions: 2}]
  groups: [{name: billing, log: events}]
  services: [{name: shop, publish_to: {queue: orders}}]
actors:
  producers:
    - {name: p, to: {queue: orders}, count: 10, keys: [a, b]}
    - {name: t, to: {topic: prices}, count: 5}
    - {name: l, to: {log: events}, count: 8, keys: [x, y, z]}
    - {name: s, to: {service: shop}, count: 4}
  consumers: [{name: worker, queue: orders, handler: {kind: poison, keys: b}}]
  members: [{name: b1, group: billing}]
  relays: [{name: r1, service: shop, lease: 3}]
narration:
  - {at: 0, text: "Start."}
  - {at: 10, text: "Later.", pause: true}
`

// newTestDriver returns a session on driverScenario.
func newTestDriver(t *testing.T) *lab.Session {
	t.Helper()
	s, err := scenario.Load("driver.yaml", []byte(driverScenario))
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
