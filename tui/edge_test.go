package tui

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/gdamore/tcell/v2"
)

// TestDrawOddSnapshots draws awkward snapshots (empty, inconsistent,
// oversized, wide and control characters) at many sizes; nothing may panic
// and nothing may be drawn outside the screen.
func TestDrawOddSnapshots(t *testing.T) {
	long := strings.Repeat("長い名前", 30) + "\t\x1b[31m"
	odd := fixture()
	odd.Header.Title = long
	odd.Header.Notice = SymFault + " " + long
	odd.Queues[0].Name = long
	odd.Queues[0].Visible = -3
	odd.Queues[0].Chips = append(odd.Queues[0].Chips, lab.Chip{ID: 1, Where: lab.Where(9)})
	odd.Topics[0].Subscribers[0].Name = long
	odd.Logs[0].Partitions = append(odd.Logs[0].Partitions, lab.PartitionView{Index: 3, Start: 50, End: 10})
	odd.Logs[0].Groups[0].Committed = []int64{-5, 1 << 40}
	odd.Logs[0].Groups = append(odd.Logs[0].Groups, make([]lab.GroupView, 30)...)
	odd.Outboxes[0].Relays[0].Claims = make([]int64, 500)
	odd.Series = append(odd.Series, lab.Series{Kind: lab.SeriesLag, Group: long}, lab.Series{Kind: lab.SeriesKind(99), Values: []float64{-1, 0, 1e300}})
	odd.Narration.Text = long + "\n\n" + long
	odd.Trace = append(odd.Trace, sim.Event{Kind: sim.KindSent, Key: long, Detail: long})
	empty := lab.Snapshot{}
	noLogs := fixture()
	noLogs.Logs[0].Partitions = nil
	for _, snap := range []lab.Snapshot{odd, empty, noLogs, bigSnapshot(1000)} {
		for _, sz := range [][2]int{{1, 1}, {10, 3}, {29, 7}, {30, 8}, {45, 13}, {80, 24}, {119, 35}, {120, 36}, {200, 60}} {
			s := newScreen(t, sz[0], sz[1])
			p := NewPlayer(NewTheme(false), nil)
			p.SetSnapshot(snap)
			for _, k := range []rune{0, '\t', '?', '/'} {
				switch k {
				case '\t':
					p.HandleKey(tcell.NewEventKey(tcell.KeyTab, 0, 0))
				case 0:
				default:
					p.HandleKey(tcell.NewEventKey(tcell.KeyRune, k, 0))
				}
				draw(s, p)
				p.HandleKey(tcell.NewEventKey(tcell.KeyPgDn, 0, 0))
				draw(s, p)
			}
			m := NewMenu(NewTheme(false), []Lesson{{Name: long, Title: long, Summary: long, Description: long}})
			draw(s, m)
			s.Fini()
		}
	}
}

// TestDevNullIsNotATerminal: /dev/null is a character device but not a
// terminal; the player must refuse it instead of failing to open a tty.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if err := CheckTerminal(f); !errors.Is(err, ErrNotTerminal) {
		t.Fatalf("CheckTerminal(%s) = %v, want ErrNotTerminal", os.DevNull, err)
	}
}
