// Package printable makes text safe to print on a terminal. Strings that
// reach brokerlab's output from outside (file names, flags, check names,
// message IDs and keys read back from a trace) may hold control characters:
// ESC starts a terminal escape sequence that can clear the screen, move the
// cursor or rename the window, and BEL rings. Every string printed passes
// through String or Line, or through a Writer, so none of them reaches the
// terminal raw.
//
// What is escaped: the C0 controls (U+0000 to U+001F) and DEL, the C1
// controls (U+0080 to U+009F, which some terminals read as escape
// sequences), the Unicode bidirectional overrides and isolates (which can
// make text read differently from what it is), and bytes that are not
// valid UTF-8. Everything else, including backslashes and any printable
// Unicode, is kept as it is. The cost is one pass over the text, and no
// allocation when nothing needs escaping.
package printable

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns s with every unsafe character escaped Go-style (ESC as
// \x1b, U+009B as \u009b, an invalid byte 0xff as \xff). Line breaks and
// tabs are escaped too, so the result is always one line: use it for
// names, paths, flags and IDs.
func String(s string) string { return escape(s, false) }

// Text is String for text that may span lines: line breaks and tabs are
// kept, every other unsafe character is escaped.
func Text(s string) string { return escape(s, true) }

// Safe reports whether r prints as itself on a terminal (see the package
// comment for what does not). Line breaks and tabs are unsafe in a name
// but fine in text, so Safe reports them as lines says.
func Safe(r rune, lines bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return lines
	case r < 0x20 || r == 0x7f:
		return false
	case r >= 0x80 && r <= 0x9f:
		return false
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return false
	case r == utf8.RuneError:
		return true // a real U+FFFD; invalid bytes are caught by the decoder
	}
	return true
}

func escape(s string, lines bool) string {
	i := unsafeAt(s, lines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case Safe(r, lines):
			b.WriteString(s[i : i+n])
		case r < 0x80:
			b.WriteString(quoteRune(r))
		default:
			b.WriteString(`\u`)
			b.WriteString(hex4(r))
		}
		i += n
	}
	return b.String()
}

// unsafeAt returns the index of the first unsafe character of s, or -1.
func unsafeAt(s string, lines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || !Safe(r, lines) {
			return i
		}
		i += n
	}
	return -1
}

// quoteRune escapes an ASCII control character as Go does (\n, \t, \a,
// \x1b).
func quoteRune(r rune) string {
	q := strconv.QuoteRune(r)
	return q[1 : len(q)-1]
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15]})
}
