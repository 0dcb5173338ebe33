package tui

import (
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// variantDriver returns a driver playing variant v of a built-in lesson.
func variantDriver(t testing.TB, name, v string) *lab.Session {
	t.Helper()
	s, err := scenario.LoadLesson(name)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.Variant(v); err != nil {
		t.Fatal(err)
	}
	d, err := lab.Open(s, lab.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.SetLesson(name)
	return d
}

// screenAt plays c to tick t and draws the player at w x h, on the tab
// the lesson opens on, or on the tab titled tab when tab is not "".
func screenAt(t *testing.T, c *Controller, tick sim.Tick, tab string, w, h int) string {
	t.Helper()
	c.Handle(Command{Kind: CmdSeek, Tick: tick})
	p := NewPlayer(NewTheme(true), nil)
	p.SetSnapshot(c.Snapshot())
	if tab != "" {
		for i := 0; i < 20 && p.tab.title(&p.snap) != tab; i++ {
			p.moveFocus(1)
		}
		if got := p.tab.title(&p.snap); got != tab {
			t.Fatalf("no tab %q (at %q)", tab, got)
		}
	}
	scr := newScreen(t, w, h)
	defer scr.Fini()
	draw(scr, p)
	return screenText(scr)
}

// wantOnScreen reports every line of want missing from the screen.
func wantOnScreen(t *testing.T, what, screen string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(screen, w) {
			t.Errorf("%s: %q is not on screen:\n%s", what, w, screen)
		}
	}
}

// TestOutboxPanelShowsBothWrites: dual-write's outbox panels show business
// rows against published events, the lost event of the shop (row, no
// event) and the phantom of the legacy service (event, no row) by ID; with
// the outbox variant both services publish one event per row.
func TestOutboxPanelShowsBothWrites(t *testing.T) {
	c := NewController(lessonDriver(t, "dual-write"))
	s9 := screenAt(t, c, 9, "", 80, 24)
	wantOnScreen(t, "dual-write t=9", s9, "[outbox shop]", "rows 8  events published 7", "✖ lost 1 (row, no event): m4",
		"commits the row, then publishes: no outbox table")
	snap := c.Snapshot()
	shop, legacy := snap.Outboxes[0], snap.Outboxes[1]
	if shop.Rows != 8 || shop.Published != 7 || shop.Lost != 1 || !reflect.DeepEqual(shop.LostIDs, []sim.ID{4}) || shop.Phantoms != 0 {
		t.Errorf("shop at t=9: %+v", shop)
	}
	if legacy.Rows != 0 || legacy.Published != 0 {
		t.Errorf("legacy at t=9: %+v", legacy)
	}
	s16 := screenAt(t, c, 16, "outbox legacy", 80, 24)
	wantOnScreen(t, "dual-write t=16", s16, "rows 3  events published 4", "⚠ phantom 1 (event, no row): m10",
		"publishes, then commits the row: no outbox table")
	legacy = c.Snapshot().Outboxes[1]
	if legacy.Rows != 3 || legacy.Published != 4 || legacy.Phantoms != 1 || !reflect.DeepEqual(legacy.PhantomIDs, []sim.ID{10}) || legacy.Lost != 0 {
		t.Errorf("legacy at t=16: %+v", legacy)
	}
	golden(t, "subject-dual-write-t16-80x24.txt", s16)

	// Back in time the fold starts again: at t=3 nothing is lost yet.
	s3 := screenAt(t, c, 3, "outbox shop", 80, 24)
	wantOnScreen(t, "dual-write back at t=3", s3, "rows 3  events published 3")
	if strings.Contains(s3, "lost 1") {
		t.Errorf("dual-write back at t=3 still shows the loss of t=4:\n%s", s3)
	}

	// outbox-relay: the relay publishes row 3 (m3) again after its crash.
	r := NewController(lessonDriver(t, "outbox-relay"))
	s5 := screenAt(t, r, 5, "outbox shop", 80, 24)
	wantOnScreen(t, "outbox-relay t=5", s5, "rows 10  events published 6  ↻ 1 re-published", "outbox: pending 4  sent 6  dead 0")
	if ov := r.Snapshot().Outboxes[0]; ov.Rows != 10 || ov.Published != 6 || ov.Republished != 1 || ov.Lost+ov.Phantoms != 0 {
		t.Errorf("outbox-relay at t=5: %+v", ov)
	}

	o := NewController(variantDriver(t, "dual-write", "outbox"))
	end := screenAt(t, o, 18, "outbox legacy", 80, 24)
	wantOnScreen(t, "dual-write outbox variant", end, "rows 3  events published 3", "outbox: pending 0  sent 3  dead 0")
	for _, ov := range o.Snapshot().Outboxes {
		if ov.Rows != ov.Published || ov.Lost != 0 || ov.Phantoms != 0 || ov.Writer != "outbox" {
			t.Errorf("outbox variant, %s: %+v", ov.Service, ov)
		}
	}
}

// TestProjectionPanel: replay-projection opens on the projection of its
// group; before the replay it shows what the projection holds per key
// (kunde-B stuck), after the seek what it held before and how far the
// rebuild has come, and once caught up that every key is rebuilt.
func TestProjectionPanel(t *testing.T) {
	c := NewController(lessonDriver(t, "replay-projection"))
	if tab := c.Snapshot().Header.Tab; tab != "projection revenue" {
		t.Errorf("replay-projection opens on %q, want the projection", tab)
	}
	s10 := screenAt(t, c, 10, "", 80, 24)
	wantOnScreen(t, "t=10", s10, "[projection revenue]", "revenue holds, per key, the records applied (of those in the log):",
		"kunde-A ✓4/4 m1 m4 m10 m13", "kunde-B  0/6 6 not applied yet", "kunde-C ✓3/3 m3 m8 m12")
	s17 := screenAt(t, c, 17, "", 80, 24)
	wantOnScreen(t, "t=17", s17, "rebuilding since the seek at t=16: 8 of 15 records applied again (before the",
		"kunde-A ✓4/4 m1 m4 m10 m13", "before 4", "kunde-B  4/7 m2 m5 m6 m7", "before 7", "kunde-C  0/4 4 not applied yet")
	p := c.Snapshot().Projections[0]
	if !p.Seeked || p.SeekAt != 16 || p.Before != 15 || len(p.Keys) != 3 || p.Keys[1].Before != 7 || p.Keys[1].Applied != 4 {
		t.Errorf("projection at t=17: %+v", p)
	}
	s22 := screenAt(t, c, 22, "", 80, 24)
	wantOnScreen(t, "t=22", s22, "✓ rebuilt since the seek at t=16: 15 of 15 records applied again",
		"kunde-B ✓7/7 m2 m5 m6 m7 m9 m11 m14")
	golden(t, "subject-replay-projection-t17-80x24.txt", s17)

	// Going back before the seek shows the projection as it was.
	if back := screenAt(t, c, 10, "", 80, 24); back != s10 {
		t.Errorf("back at t=10 the screen differs from t=10 played forward:\n--- back\n%s--- forward\n%s", back, s10)
	}
}

// TestEffectsTable: idempotent-consumer opens on the effects table, naive
// and safe side by side: every duplicate is a second charge for naive and
// an absorbed duplicate for safe, key by key.
func TestEffectsTable(t *testing.T) {
	c := NewController(lessonDriver(t, "idempotent-consumer"))
	if tab := c.Snapshot().Header.Tab; tab != "effects" {
		t.Errorf("idempotent-consumer opens on %q, want effects", tab)
	}
	s4 := screenAt(t, c, 4, "", 80, 24)
	wantOnScreen(t, "t=4", s4, "[effects]", "naive 6 effects for 4 keys  ↻ 2 repeated: order-1 order-2",
		"safe  4 effects for 4 keys  ✓ once each, 2 duplicates skipped", "order-1    ↻2 1 +1skip")
	end := screenAt(t, c, 30, "", 80, 24)
	c.Handle(Command{Kind: CmdSeek, Tick: 30})
	wantOnScreen(t, "end", end, "naive 26 effects for 20 keys  ↻ 6 repeated: order-1 order-2 order-13 +3",
		"safe  20 effects for 20 keys  ✓ once each, 6 duplicates skipped")
	tab := c.Snapshot().EffectTable
	if tab == nil || !reflect.DeepEqual(tab.Consumers, []string{"naive", "safe"}) || len(tab.Keys) != 20 {
		t.Fatalf("effects table %+v", tab)
	}
	var naive, safe lab.EffectCell
	for _, k := range tab.Keys {
		naive.Effects += k.Cells[0].Effects
		naive.Repeated += k.Cells[0].Repeated
		safe.Effects += k.Cells[1].Effects
		safe.Absorbed += k.Cells[1].Absorbed
		safe.Repeated += k.Cells[1].Repeated
		if k.Cells[0].Repeated != k.Cells[1].Absorbed {
			t.Errorf("%s: naive repeated %d, safe absorbed %d: the two queues got different duplicates", k.Key, k.Cells[0].Repeated, k.Cells[1].Absorbed)
		}
	}
	if naive.Effects != 26 || naive.Repeated != 6 || safe.Effects != 20 || safe.Absorbed != 6 || safe.Repeated != 0 {
		t.Errorf("naive %+v, safe %+v", naive, safe)
	}
	golden(t, "subject-idempotent-consumer-t30-80x24.txt", end)

	// A lesson with one consumer per queue... but only one queue has no
	// effects table.
	if d := lessonDriver(t, "poison-dlq"); d.Snapshot().EffectTable != nil {
		t.Error("poison-dlq (one consumer) has an effects table")
	}
}
