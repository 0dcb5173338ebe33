package printable

import (
	"io"
	"unicode/utf8"
)

// Writer passes text on to an underlying writer with every unsafe
// character escaped as Text does: line breaks and tabs go through, ESC,
// BEL and the rest do not. A UTF-8 sequence split across two writes is
// held back (at most three bytes) until the next write completes it, and
// written escaped by Flush if it never is. It is the last line of defence
// for a command's standard output and error: whatever a print path
// forgot, the terminal still never sees a raw control character.
//
// Write reports len(p) when the underlying writer took the escaped text,
// and the underlying writer's error otherwise.
type Writer struct {
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it on.
func (w *Writer) Write(p []byte) (int, error) {
	data := p
	if len(w.pending) > 0 {
		data = append(w.pending, p...)
		w.pending = nil
	}
	// Hold back an incomplete UTF-8 sequence at the end.
	keep := 0
	for k := 1; k <= 3 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < 0x80 {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-k:]) {
				keep = k
			}
			break
		}
	}
	if keep > 0 {
		w.pending = append([]byte(nil), data[len(data)-keep:]...)
		data = data[:len(data)-keep]
	}
	s := Text(string(data))
	if _, err := io.WriteString(w.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held-back partial sequence, escaped.
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	s := Text(string(w.pending))
	w.pending = nil
	_, err := io.WriteString(w.w, s)
	return err
}
