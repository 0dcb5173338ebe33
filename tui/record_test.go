package tui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"
)

// castEvent is one parsed event line.
type castEvent struct {
	At   float64
	Kind string
	Data string
}

// parseCast parses an asciinema v2 cast strictly: every line is JSON, the
// first an object with version 2, width and height, the others
// [time, "o", data] with non-decreasing times.
func parseCast(t *testing.T, data []byte) (map[string]any, []castEvent) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	var hdr map[string]any
	var evs []castEvent
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			if err := json.Unmarshal(sc.Bytes(), &hdr); err != nil {
				t.Fatalf("header: %v: %s", err, sc.Bytes())
			}
			continue
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		if len(raw) != 3 {
			t.Fatalf("line %d: %d elements, want 3", line, len(raw))
		}
		var e castEvent
		if err := json.Unmarshal(raw[0], &e.At); err != nil {
			t.Fatalf("line %d: time: %v", line, err)
		}
		if err := json.Unmarshal(raw[1], &e.Kind); err != nil || e.Kind != "o" {
			t.Fatalf("line %d: kind %s, want \"o\"", line, raw[1])
		}
		if err := json.Unmarshal(raw[2], &e.Data); err != nil {
			t.Fatalf("line %d: data: %v", line, err)
		}
		if len(evs) > 0 && e.At < evs[len(evs)-1].At {
			t.Fatalf("line %d: time %v before the previous event's %v", line, e.At, evs[len(evs)-1].At)
		}
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if hdr == nil {
		t.Fatal("empty cast")
	}
	if v, _ := hdr["version"].(float64); v != 2 {
		t.Fatalf("header version %v, want 2", hdr["version"])
	}
	return hdr, evs
}

// vterm is the small terminal the tests replay casts on. It knows what the
// renderer writes: CSI row;col H, CSI 2J, CSI ?25l and ?25h, SGR (CSI ...
// m) and text, wide characters taking two columns.
type vterm struct {
	w, h int
	// hidden is whether the cursor is hidden (CSI ?25l) and not yet shown
	// again (CSI ?25h).
	hidden bool
	cells  [][]string // "" for the second column of a wide character
	sgr    [][]string
	x, y   int
	cur    string
}

func newVterm(w, h int) *vterm {
	v := &vterm{w: w, h: h}
	v.clear()
	return v
}

func (v *vterm) clear() {
	v.cells = make([][]string, v.h)
	v.sgr = make([][]string, v.h)
	for y := range v.cells {
		v.cells[y] = make([]string, v.w)
		v.sgr[y] = make([]string, v.w)
		for x := range v.cells[y] {
			v.cells[y][x] = " "
		}
	}
}

// feed interprets data; it fails on a sequence the renderer should not
// write or a write past the screen.
func (v *vterm) feed(t *testing.T, data string) {
	t.Helper()
	for data != "" {
		if data[0] == 0x1b {
			if len(data) < 2 || data[1] != '[' {
				t.Fatalf("escape without CSI: %q", data)
			}
			end := strings.IndexAny(data[2:], "HJhlm")
			if end < 0 {
				t.Fatalf("unterminated CSI: %q", data)
			}
			params, final := data[2:2+end], data[2+end]
			data = data[3+end:]
			switch final {
			case 'H':
				rc := strings.Split(params, ";")
				row, _ := strconv.Atoi(rc[0])
				col, _ := strconv.Atoi(rc[len(rc)-1])
				if params == "" {
					row, col = 1, 1
				}
				v.y, v.x = row-1, col-1
			case 'J':
				v.clear()
			case 'm':
				v.cur = params
			case 'l', 'h':
				if params != "?25" {
					t.Fatalf("unexpected CSI %s%c", params, final)
				}
				v.hidden = final == 'l'
			}
			continue
		}
		g, rest, w, _ := uniseg.FirstGraphemeClusterInString(data, -1)
		data = rest
		if v.y < 0 || v.y >= v.h || v.x < 0 || v.x+w > v.w {
			t.Fatalf("write of %q at %d,%d outside %dx%d", g, v.x, v.y, v.w, v.h)
		}
		// As in xterm, writing over either column of a wide character
		// blanks the other one.
		row := v.cells[v.y]
		if row[v.x] == "" && v.x > 0 {
			row[v.x-1] = " "
		}
		if end := v.x + w; end < v.w && row[end] == "" {
			row[end] = " "
		}
		row[v.x] = g
		v.sgr[v.y][v.x] = v.cur
		if w == 2 {
			row[v.x+1] = ""
		}
		v.x += w
	}
}

// text returns the screen as lines without trailing spaces.
func (v *vterm) text() string {
	var b strings.Builder
	for _, row := range v.cells {
		b.WriteString(strings.TrimRight(strings.Join(row, ""), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// recordLesson records a built-in lesson.
func recordLesson(t *testing.T, name string, cfg RecordConfig) []byte {
	t.Helper()
	s, err := scenario.LoadLesson(name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := lab.Open(s, lab.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.SetLesson(name)
	var buf bytes.Buffer
	if _, err := Record(&buf, d, cfg); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// finalScreen draws the player's screen at the end of a lesson, as Record
// does for its last frame.
func finalScreen(t *testing.T, name string, w, h int, bare bool) (string, lab.Snapshot, [][]string) {
	t.Helper()
	s, err := scenario.LoadLesson(name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := lab.Open(s, lab.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.SetLesson(name)
	pl := NewPlayer(NewTheme(false), nil)
	pl.SetOverlays(!bare)
	pl.SetRecording(true)
	c := NewController(d)
	pl.SetSnapshot(c.Handle(Command{Kind: CmdTogglePlay}))
	pl.HandleKey(tcell.NewEventKey(tcell.KeyEscape, 0, tcell.ModNone))
	for !d.Done() {
		if _, ok := c.Tick(); !ok {
			c.Handle(Command{Kind: CmdTogglePlay})
		}
	}
	snap := c.Snapshot()
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	defer scr.Fini()
	scr.SetSize(w, h)
	pl.SetSnapshot(snap)
	pl.SetRect(0, 0, w, h)
	pl.Draw(scr)
	return screenText(scr), snap, recScreenStyles(scr)
}

// recScreenStyles returns the SGR parameters of every cell of s ("" for
// the second column of a wide character).
func recScreenStyles(s tcell.Screen) [][]string {
	w, h := s.Size()
	out := make([][]string, h)
	for y := range out {
		out[y] = make([]string, w)
		for x := 0; x < w; {
			_, _, st, cw := s.GetContent(x, y)
			sgr := string(appendSGR(nil, st))
			out[y][x] = strings.TrimSuffix(strings.TrimPrefix(sgr, "\x1b["), "m")
			if cw < 1 {
				cw = 1
			}
			x += cw
		}
	}
	return out
}

// styleDiff returns the first cell whose style differs from want ("" when
// none does); a cell never written counts as the default style.
func (v *vterm) styleDiff(want [][]string) string {
	for y := range want {
		for x, ws := range want[y] {
			if ws == "" || v.cells[y][x] == "" {
				continue
			}
			got := v.sgr[y][x]
			if got == "" {
				got = "0"
			}
			if got != ws {
				return fmt.Sprintf("cell %d,%d %q: SGR %q, want %q", x, y, v.cells[y][x], got, ws)
			}
		}
	}
	return ""
}

func TestRecordCast(t *testing.T) {
	for _, c := range []struct {
		name string
		bare bool
	}{{"poison-dlq", false}, {"idempotent-consumer", false}, {"poison-dlq", true}, {"dual-write", true}} {
		name := c.name
		t.Run(fmt.Sprintf("%s/bare=%v", name, c.bare), func(t *testing.T) {
			const w, h = 100, 32
			data := recordLesson(t, name, RecordConfig{Title: name, Bare: c.bare})
			hdr, evs := parseCast(t, data)
			if hdr["width"] != float64(w) || hdr["height"] != float64(h) || hdr["title"] != name {
				t.Errorf("header %v, want width %d, height %d, title %q", hdr, w, h, name)
			}
			if _, ok := hdr["timestamp"]; ok {
				t.Errorf("header has a timestamp by default: %v", hdr)
			}
			if len(evs) < 10 {
				t.Fatalf("%d events, want a frame per tick", len(evs))
			}
			if evs[0].At != 0 {
				t.Errorf("first event at %v, want 0", evs[0].At)
			}
			vt := newVterm(w, h)
			for _, e := range evs {
				vt.feed(t, e.Data)
			}
			if vt.hidden {
				t.Errorf("the cast ends with the cursor hidden; its last event must show it again (CSI ?25h)")
			}
			got := vt.text()
			want, snap, styles := finalScreen(t, name, w, h, c.bare)
			if bad := vt.styleDiff(styles); bad != "" {
				t.Errorf("replayed cast's styles differ from the player's last frame: %s", bad)
			}
			if got != want {
				t.Errorf("replayed cast ends on a screen other than the player's last frame:\n--- cast\n%s--- player\n%s", got, want)
			}
			if snap.Header.State != lab.StateFinished || !strings.Contains(got, "finished") {
				t.Errorf("last frame not finished:\n%s", got)
			}
			last := strings.Fields(snap.Narration.Text)
			if snap.Narration.Index != snap.Narration.Total || len(last) < 4 {
				t.Fatalf("final narration %d of %d: %q", snap.Narration.Index, snap.Narration.Total, snap.Narration.Text)
			}
			flat := strings.Join(strings.Fields(got), " ")
			if head := strings.Join(last[:4], " "); c.bare && !strings.Contains(flat, head) {
				t.Errorf("last frame lacks the final narration %q:\n%s", head, got)
			}
			if v := snap.Verdict.Line(); !snap.Verdict.Final || !strings.HasPrefix(v, "PASS") || !strings.Contains(got, v) {
				t.Errorf("last frame lacks the final verdict %q:\n%s", v, got)
			}
			if !c.bare && !strings.Contains(got, "the end: ") {
				t.Errorf("last frame lacks the summary:\n%s", got)
			}
			// Frames after the first are diffs: each is smaller than a full
			// redraw.
			for i, e := range evs[1:] {
				if len(e.Data) >= len(evs[0].Data) {
					t.Errorf("event %d writes %d bytes, the full first frame %d", i+1, len(e.Data), len(evs[0].Data))
					break
				}
			}
			// Colour reaches the cast.
			if !strings.Contains(string(data), `\u001b[0;1;97m`) && !strings.Contains(string(data), ";9") {
				t.Errorf("no colour in the cast")
			}
			if again := recordLesson(t, name, RecordConfig{Title: name, Bare: c.bare}); !bytes.Equal(again, data) {
				t.Errorf("a second recording differs (%d vs %d bytes)", len(again), len(data))
			}
		})
	}
}

func TestRecordTiming(t *testing.T) {
	data := recordLesson(t, "dual-write", RecordConfig{Bare: true})
	_, evs := parseCast(t, data)
	s, _ := scenario.LoadLesson("dual-write")
	ticks := int(s.Run.Cap())
	// One frame per tick, plus one per pause resumed, plus the first and the
	// closing event.
	pauses := 0
	for _, st := range s.Narration {
		if st.Pause {
			pauses++
		}
	}
	if want := ticks + pauses + 2; len(evs) != want {
		t.Errorf("%d events, want %d (%d ticks, %d pauses)", len(evs), want, ticks, pauses)
	}
	var gaps []float64
	for i := 1; i < len(evs); i++ {
		gaps = append(gaps, evs[i].At-evs[i-1].At)
	}
	short, long := 0, 0
	for _, g := range gaps {
		switch {
		case g == DefaultRecordTick.Seconds():
			short++
		case g > DefaultRecordNarration.Seconds():
			long++
		}
	}
	if long < len(s.Narration)-1 || short < ticks/2 {
		t.Errorf("gaps %v: %d long (narration), %d ticks", gaps, long, short)
	}
	if end := evs[len(evs)-1].At - evs[len(evs)-2].At; end < DefaultRecordEnd.Seconds() {
		t.Errorf("last frame stays %vs, want at least %v", end, DefaultRecordEnd)
	}
	// With the introduction: one frame more, first, held for its reading
	// time, and the intro's text on screen.
	_, withIntro := parseCast(t, recordLesson(t, "dual-write", RecordConfig{}))
	if len(withIntro) != len(evs)+1 || withIntro[1].At < DefaultRecordNarration.Seconds() {
		t.Errorf("with the intro: %d events (bare %d), second at %v", len(withIntro), len(evs), withIntro[1].At)
	}
	if !strings.Contains(withIntro[0].Data, strings.Fields(s.Description)[0]) {
		t.Errorf("first frame lacks the description: %q", withIntro[0].Data)
	}
	stamped := recordLesson(t, "dual-write", RecordConfig{Timestamp: 1700000000})
	hdr, _ := parseCast(t, stamped)
	if hdr["timestamp"] != float64(1700000000) {
		t.Errorf("timestamp %v, want 1700000000", hdr["timestamp"])
	}
}

func TestRecordBadSize(t *testing.T) {
	for _, sz := range [][2]int{{10, 10}, {100, 3}, {5000, 40}, {100, -1}, {0, 40}} {
		d := newRecFakeDriver()
		var buf bytes.Buffer
		_, err := Record(&buf, d, RecordConfig{Width: sz[0], Height: sz[1]})
		if !errors.Is(err, ErrRecordSize) {
			t.Errorf("%v: err %v, want ErrRecordSize", sz, err)
		}
		if buf.Len() != 0 {
			t.Errorf("%v: wrote %d bytes before failing", sz, buf.Len())
		}
	}
}

// TestRendererWide replays frames with wide characters appearing,
// moving and disappearing over narrow ones, and checks the terminal ends
// up with the screen's text each time.
func TestRendererWide(t *testing.T) {
	const w, h = 12, 2
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	defer scr.Fini()
	scr.SetSize(w, h)
	rd := &renderer{w: w, h: h}
	vt := newVterm(w, h)
	st := tcell.StyleDefault.Foreground(tcell.ColorRed)
	for i, rows := range [][2]string{
		{"abcdefghijkl", "hello"},
		{"a漢字defghijk", "✖ lost ↻"},
		{"ab漢字efghijk", "界界界界界界"},
		{"abcdefghijkl", "x界界界界界"},
		{"abcdefghij漢", ""},
	} {
		scr.Clear()
		for y, row := range rows {
			put(scr, 0, y, w, row, st)
		}
		vt.feed(t, string(rd.frame(scr)))
		if got, want := vt.text(), screenText(scr); got != want {
			t.Fatalf("frame %d:\n--- terminal\n%s--- screen\n%s", i, got, want)
		}
		for x := 0; x < w; x++ {
			if c := vt.cells[0][x]; c != " " && c != "" && vt.sgr[0][x] != "0;91" {
				t.Fatalf("frame %d: cell %d style %q, want 0;91", i, x, vt.sgr[0][x])
			}
		}
	}
}

func TestAppendSGR(t *testing.T) {
	n := tcell.StyleDefault
	for _, c := range []struct {
		st   tcell.Style
		want string
	}{
		{n, "\x1b[0m"},
		{n.Bold(true).Foreground(tcell.ColorWhite), "\x1b[0;1;97m"},
		{n.Foreground(tcell.ColorBlack).Background(tcell.ColorAqua), "\x1b[0;30;106m"},
		{n.Foreground(tcell.ColorOrange).Bold(true), "\x1b[0;1;38;2;255;165;0m"},
		{n.Foreground(tcell.PaletteColor(200)).Reverse(true).Dim(true), "\x1b[0;2;7;38;5;200m"},
		{n.Underline(true), "\x1b[0;4m"},
	} {
		if got := string(appendSGR(nil, c.st)); got != c.want {
			t.Errorf("%v: %q, want %q", c.st, got, c.want)
		}
	}
}

// recFakeDriver is a driver of five empty ticks.
type recFakeDriver struct{ tick int }

func newRecFakeDriver() *recFakeDriver { return &recFakeDriver{} }

func (d *recFakeDriver) snap() lab.Snapshot {
	return lab.Snapshot{Header: lab.Header{Title: "fake", Tick: 0}}
}
func (d *recFakeDriver) Snapshot() lab.Snapshot              { return d.snap() }
func (d *recFakeDriver) Step() lab.Snapshot                  { d.tick++; return d.snap() }
func (d *recFakeDriver) Restart(uint64) lab.Snapshot         { d.tick = 0; return d.snap() }
func (d *recFakeDriver) Do(lab.Action) (lab.Snapshot, error) { return d.snap(), nil }
func (d *recFakeDriver) Done() bool                          { return d.tick >= 5 }

// TestRecordShowsNoKeys: a cast's viewer cannot press keys, so no frame of
// a recording, from the intro to the end summary, shows key hints; the
// bottom row names the lesson instead. (The end frame once offered
// "← go back  r restart  m menu".)
func TestRecordShowsNoKeys(t *testing.T) {
	const w, h = 100, 32
	for _, bare := range []bool{false, true} {
		data := recordLesson(t, "poison-dlq", RecordConfig{Bare: bare})
		_, evs := parseCast(t, data)
		vt := newVterm(w, h)
		frames := 0
		for _, e := range evs {
			vt.feed(t, e.Data)
			text := vt.text()
			for _, hint := range []string{"go back", "restart", "space start", "first step", "any key", "play/pause", "q quit", "? help"} {
				if strings.Contains(text, hint) {
					t.Fatalf("bare=%v: frame at %v shows the key hint %q:\n%s", bare, e.At, hint, text)
				}
			}
			frames++
		}
		rows := strings.Split(strings.TrimRight(vt.text(), "\n"), "\n")
		if last := rows[len(rows)-1]; !strings.Contains(last, "Poison message") {
			t.Errorf("bare=%v: last row %q does not name the lesson", bare, last)
		}
		if frames < 10 {
			t.Errorf("bare=%v: %d frames", bare, frames)
		}
	}
}
