package printable_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/printable"
)

var control = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")

func TestString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain.yaml", "plain.yaml"},
		{"", ""},
		{"café ünïcode 日本", "café ünïcode 日本"},
		{"clear\x1b[2J", `clear\x1b[2J`},
		{"bell\a", `bell\a`},
		{"two\nlines\ttab\r", `two\nlines\ttab\r`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"csi \u009b2J", `csi \u009b2J`},
		{"rlo \u202eabc", `rlo \u202eabc`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"cut \xe6\x97", `cut \xe6\x97`},
		{`back\slash`, `back\slash`},
		{"replacement \ufffd", "replacement \ufffd"},
	}
	for _, c := range cases {
		if got := printable.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if control.MatchString(printable.String(c.in)) || strings.ContainsAny(printable.String(c.in), "\n\t") {
			t.Errorf("String(%q) still holds a control character", c.in)
		}
	}
}

func TestText(t *testing.T) {
	in := "line one\n\tline two \x1b]0;pwned\a\n"
	want := "line one\n\tline two \\x1b]0;pwned\\a\n"
	if got := printable.Text(in); got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

// TestWriterSplitRunes writes a text byte by byte: a multi-byte character
// split across writes must come out whole, and controls escaped.
func TestWriterSplitRunes(t *testing.T) {
	in := "日本 \x1b[2J ok\u009b\n"
	var out bytes.Buffer
	w := printable.NewWriter(&out)
	for i := range len(in) {
		if n, err := w.Write([]byte{in[i]}); n != 1 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "日本 \\x1b[2J ok\\u009b\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	w.Write([]byte("cut \xe6\x97"))
	if out.String() != "cut " {
		t.Errorf("before Flush: %q", out.String())
	}
	w.Flush()
	if out.String() != `cut \xe6\x97` {
		t.Errorf("after Flush: %q", out.String())
	}
}

// FuzzString: no input gives an output with a control character, and safe
// input comes back unchanged.
func FuzzString(f *testing.F) {
	for _, s := range []string{"a", "\x1b[2J", "\xff", "\u009b", "日本\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := printable.String(s)
		if control.MatchString(out) || strings.ContainsAny(out, "\n\t") {
			t.Fatalf("String(%q) = %q", s, out)
		}
		if printable.String(out) != out {
			t.Fatalf("String is not idempotent on %q", s)
		}
		if !control.MatchString(s) && !strings.ContainsAny(s, "\n\t") && strings.ToValidUTF8(s, "") == s && out != s {
			t.Fatalf("safe %q changed to %q", s, out)
		}
	})
}
