package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"
)

// rect is a screen area.
type rect struct{ x, y, w, h int }

// inner returns r shrunk by one cell on every side.
func (r rect) inner() rect {
	if r.w < 2 || r.h < 2 {
		return rect{r.x, r.y, 0, 0}
	}
	return rect{r.x + 1, r.y + 1, r.w - 2, r.h - 2}
}

// put draws s at (x, y) clipped to the columns [x, limit) and returns the
// column after the last cell drawn. Wide characters that do not fit are not
// drawn; control characters are shown as spaces.
func put(s tcell.Screen, x, y, limit int, str string, st tcell.Style) int {
	state := -1
	for str != "" && x < limit {
		if c := str[0]; c >= ' ' && c < 0x7f && (len(str) == 1 || str[1] < 0x80) {
			s.SetContent(x, y, rune(c), nil, st)
			x++
			str = str[1:]
			state = -1
			continue
		}
		var g string
		var w int
		g, str, w, state = uniseg.FirstGraphemeClusterInString(str, state)
		if w == 0 {
			if g == "\t" || g == "\n" || g == "\r" {
				g, w = " ", 1
			} else {
				continue
			}
		}
		if x+w > limit {
			break
		}
		rs := []rune(g)
		if rs[0] < ' ' || rs[0] == 0x7f {
			rs = []rune{' '}
		}
		s.SetContent(x, y, rs[0], rs[1:], st)
		x += w
	}
	return x
}

// putASCII is put for strings known to be printable ASCII, without the
// grapheme segmentation.
func putASCII(s tcell.Screen, x, y, limit int, str string, st tcell.Style) int {
	for i := 0; i < len(str) && x < limit; i++ {
		s.SetContent(x, y, rune(str[i]), nil, st)
		x++
	}
	return x
}

// width returns the display width of str.
func width(str string) int { return uniseg.StringWidth(str) }

// fill clears r with spaces in style st.
func fill(s tcell.Screen, r rect, st tcell.Style) {
	for y := r.y; y < r.y+r.h; y++ {
		for x := r.x; x < r.x+r.w; x++ {
			s.SetContent(x, y, ' ', nil, st)
		}
	}
}

// frame draws a box around r with a title and returns the inner area. A
// focused frame uses double lines, so focus is visible without colour.
func frame(s tcell.Screen, r rect, title string, focused bool, th *Theme) rect {
	if r.w < 2 || r.h < 2 {
		return rect{r.x, r.y, 0, 0}
	}
	h, v, tl, tr, bl, br := '─', '│', '┌', '┐', '└', '┘'
	st := th.Frame
	if focused {
		h, v, tl, tr, bl, br = '═', '║', '╔', '╗', '╚', '╝'
		st = th.Focus
	}
	for x := r.x + 1; x < r.x+r.w-1; x++ {
		s.SetContent(x, r.y, h, nil, st)
		s.SetContent(x, r.y+r.h-1, h, nil, st)
	}
	for y := r.y + 1; y < r.y+r.h-1; y++ {
		s.SetContent(r.x, y, v, nil, st)
		s.SetContent(r.x+r.w-1, y, v, nil, st)
	}
	s.SetContent(r.x, r.y, tl, nil, st)
	s.SetContent(r.x+r.w-1, r.y, tr, nil, st)
	s.SetContent(r.x, r.y+r.h-1, bl, nil, st)
	s.SetContent(r.x+r.w-1, r.y+r.h-1, br, nil, st)
	in := r.inner()
	fill(s, in, th.Normal)
	if title != "" && r.w > 4 {
		tst := th.Title
		if focused {
			tst = th.Focus
		}
		x := put(s, r.x+1, r.y, r.x+r.w-1, " ", st)
		x = put(s, x, r.y, r.x+r.w-2, title, tst)
		put(s, x, r.y, r.x+r.w-1, " ", st)
	}
	return in
}

// seg is a piece of text with a style; a line is a row of segments.
type seg struct {
	text string
	st   tcell.Style
}

// line is one row of a panel's content.
type line []seg

// drawLine draws l at row y from column x, clipped at limit.
func drawLine(s tcell.Screen, x, y, limit int, l line) int {
	for _, sg := range l {
		x = put(s, x, y, limit, sg.text, sg.st)
	}
	return x
}

// lineWidth returns the display width of l.
func lineWidth(l line) int {
	n := 0
	for _, sg := range l {
		n += width(sg.text)
	}
	return n
}

// drawLines draws lines[off:] into r, one per row.
func drawLines(s tcell.Screen, r rect, lines []line, off int) {
	for i := 0; i < r.h && off+i < len(lines); i++ {
		if off+i < 0 {
			continue
		}
		drawLine(s, r.x, r.y+i, r.x+r.w, lines[off+i])
	}
}

// wrap splits text into lines of at most w columns at spaces. Explicit
// newlines start new lines; words longer than w are cut.
func wrap(text string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range splitLines(text) {
		cur, cw := "", 0
		for _, word := range fields(para) {
			ww := width(word)
			for ww > w {
				if cur != "" {
					out = append(out, cur)
					cur, cw = "", 0
				}
				head, rest := cut(word, w)
				out = append(out, head)
				word, ww = rest, width(rest)
			}
			switch {
			case cur == "":
				cur, cw = word, ww
			case cw+1+ww <= w:
				cur += " " + word
				cw += 1 + ww
			default:
				out = append(out, cur)
				cur, cw = word, ww
			}
		}
		out = append(out, cur)
	}
	return out
}

// splitLines splits s at newlines.
func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// fields splits s at runs of spaces.
func fields(s string) []string {
	var out []string
	start := -1
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// cut splits s after w columns.
func cut(s string, w int) (string, string) {
	state, n, i := -1, 0, 0
	rest := s
	for rest != "" {
		var g string
		var gw int
		g, rest, gw, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if n+gw > w {
			break
		}
		n += gw
		i += len(g)
	}
	if i == 0 && s != "" {
		_, r, _, _ := uniseg.FirstGraphemeClusterInString(s, -1)
		i = len(s) - len(r)
	}
	return s[:i], s[i:]
}

// truncate shortens s to w columns, ending in "…" when cut.
func truncate(s string, w int) string {
	if width(s) <= w {
		return s
	}
	if w <= 1 {
		head, _ := cut(s, w)
		return head
	}
	head, _ := cut(s, w-1)
	return head + "…"
}
