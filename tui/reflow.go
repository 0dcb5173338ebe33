package tui

import "strings"

// block is one logical line of prose text: a paragraph, a list item, or
// the break between paragraphs.
type block struct {
	prefix string // the indent and list marker; wrapped lines hang under the text after it
	text   string // the words of the block, joined by single spaces
	item   bool   // a list item: more indented lines continue it
	indent int    // the columns before the text of the block's first line
	blank  bool   // a paragraph break
}

// reflow wraps prose to w columns as a reader expects, whatever line
// breaks the author typed: the lines of a paragraph are joined before
// wrapping, blank lines stay paragraph breaks (runs of them count once,
// leading and trailing ones are dropped), a line that starts with a list
// marker ("1.", "-", "*", "•", "a)", or a capital letter and two spaces
// as in "A  one queue") starts a list item whose wrapped lines hang under
// its text, and a more indented line continues the item above it.
// Text without newlines wraps exactly as wrap does. Its cost is linear
// in the length of text.
func reflow(text string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, b := range blocks(text) {
		if b.blank {
			out = append(out, "")
			continue
		}
		pw := width(b.prefix)
		if pw == 0 || pw > w/2 {
			out = append(out, wrap(b.text, w)...)
			continue
		}
		for i, l := range wrap(b.text, w-pw) {
			if i == 0 {
				out = append(out, b.prefix+l)
			} else {
				out = append(out, spaces(pw)+l)
			}
		}
	}
	return out
}

// blocks splits text into paragraphs, list items and paragraph breaks.
func blocks(text string) []block {
	var out []block
	for _, raw := range splitLines(text) {
		l := strings.TrimRight(raw, " \t\r")
		if l == "" {
			if len(out) > 0 && !out[len(out)-1].blank {
				out = append(out, block{blank: true})
			}
			continue
		}
		body := strings.TrimLeft(l, " \t")
		indent := len(l) - len(body)
		if k := listMarker(body); k > 0 {
			out = append(out, block{prefix: l[:indent+k], text: body[k:], item: true, indent: indent})
			continue
		}
		if n := len(out); n > 0 && !out[n-1].blank {
			cur := &out[n-1]
			if (cur.item && indent > cur.indent) || (!cur.item && indent == cur.indent) {
				cur.text += " " + body
				continue
			}
		}
		out = append(out, block{prefix: l[:indent], text: body, indent: indent})
	}
	if n := len(out); n > 0 && out[n-1].blank {
		out = out[:n-1]
	}
	return out
}

// listMarker returns the length in bytes of the list marker that starts
// s, with the spaces after it, or 0 when s starts no list item.
func listMarker(s string) int {
	if s == "" {
		return 0
	}
	k := 0
	switch {
	case strings.HasPrefix(s, "•"):
		k = len("•")
	case strings.HasPrefix(s, "–"):
		k = len("–")
	case s[0] == '-' || s[0] == '*' || s[0] == '+':
		k = 1
	case isUpper(s[0]) && strings.HasPrefix(s[1:], "  "):
		k = 1 // "A  one shared queue"
	default:
		d := 0
		for d < len(s) && d < 3 && s[d] >= '0' && s[d] <= '9' {
			d++
		}
		if d == 0 && (isUpper(s[0]) || s[0] >= 'a' && s[0] <= 'z') {
			d = 1 // "a)" or "B."
		}
		if d == 0 || d >= len(s) || (s[d] != '.' && s[d] != ')') {
			return 0
		}
		k = d + 1
	}
	e := k
	for e < len(s) && s[e] == ' ' {
		e++
	}
	if e == k || e == len(s) {
		return 0
	}
	return e
}

// isUpper reports whether c is an ASCII capital letter.
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
