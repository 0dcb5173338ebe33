package tui

import (
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/gdamore/tcell/v2"
)

// BenchmarkRenderPlayer draws a full player frame of a system holding
// 100,000 messages (a snapshot capped the way runners build it) onto a
// simulation screen, including the screen's Show. Target: under 16 ms.
func BenchmarkRenderPlayer(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			s := newScreen(b, sz.w, sz.h)
			defer s.Fini()
			p := NewPlayer(NewTheme(false), nil)
			p.SetSnapshot(bigSnapshot(100000))
			p.SetRect(0, 0, sz.w, sz.h)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.Draw(s)
				s.Show()
			}
		})
	}
}

// BenchmarkRenderBaseline is the floor for BenchmarkRenderPlayer: it
// writes every cell of the same screen once with a fixed rune and shows it,
// the least work any full frame can do.
func BenchmarkRenderBaseline(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			s := newScreen(b, sz.w, sz.h)
			defer s.Fini()
			st := tcell.StyleDefault
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := rune('a' + i%26) // a different frame each time, like a running player
				for y := 0; y < sz.h; y++ {
					for x := 0; x < sz.w; x++ {
						s.SetContent(x, y, c, nil, st)
					}
				}
				s.Show()
			}
		})
	}
}

// backlogSource is the 100,000-message scenario of
// BenchmarkRenderScenario100k, run for ticks ticks (the one lab's
// BenchmarkSeekBack goes back in).
func backlogSource(ticks int) string {
	return `title: Backlog of 100,000
seed: 1
run: {ticks: ` + strconv.Itoa(ticks) + `}
topology:
  queues:
    - {name: orders, visibility_timeout: 50, dead_letter: {queue: orders-dlq, max_receive_count: 2}}
    - {name: orders-dlq}
  logs: [{name: events, partitions: 4}]
  groups: [{name: audit, log: events}]
actors:
  producers:
    - {name: shop, to: {queue: orders}, count: 60000, rate: 10000, keys: "kunde-%d", key_count: 100}
    - {name: feed, to: {log: events}, count: 40000, rate: 10000, keys: "kunde-%d", key_count: 100}
  consumers:
    - {name: worker, queue: orders, batch: 10, handler: {kind: slow, ticks: 3}}
  members:
    - {name: a1, group: audit, batch: 5}
`
}

// BenchmarkRenderScenario100k builds the snapshot of a real scenario run
// that holds 100,000 messages (a queue backlog and a log) and draws it: the
// whole per-frame cost of the player, simulation state included.
func BenchmarkRenderScenario100k(b *testing.B) {
	src := backlogSource(1000)
	s, err := scenario.Load("backlog.yaml", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	d, err := lab.Open(s, lab.SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		d.Step()
	}
	if st := d.Ledger().Stats(); st.Messages < 100000 {
		b.Fatalf("only %d messages in the system", st.Messages)
	}
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			scr := newScreen(b, sz.w, sz.h)
			defer scr.Fini()
			p := NewPlayer(NewTheme(false), nil)
			p.SetRect(0, 0, sz.w, sz.h)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.SetSnapshot(d.Snapshot())
				p.Draw(scr)
				scr.Show()
			}
		})
	}
}
