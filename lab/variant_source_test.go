package lab

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// positions matches the file positions a trace and a report name; a
// variant's positions are in its file's variants section, the written-out
// variant's in its own text.
var positions = regexp.MustCompile(`\d+:\d+`)

// traceOf runs s at seed and returns its text trace without positions.
func traceOf(t *testing.T, s *scenario.Scenario, seed uint64) string {
	t.Helper()
	var buf bytes.Buffer
	r, err := New(s, Options{Seed: &seed, Sinks: []sim.Sink{sim.NewTextWriter(&buf)}})
	if err != nil {
		t.Fatal(err)
	}
	r.Finish()
	return positions.ReplaceAllString(buf.String(), "L:C")
}

// Every variant of every lesson, written out by VariantSource, loads as a
// file without variants and runs exactly as the variant does, at the
// lesson's seed and at others.
func TestVariantSourceRunsAsTheVariant(t *testing.T) {
	n := 0
	for _, l := range scenario.Lessons() {
		base, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, vr := range base.Variants {
			n++
			t.Run(l.Name+"/"+vr.Name, func(t *testing.T) {
				v, err := base.Variant(vr.Name)
				if err != nil {
					t.Fatal(err)
				}
				src, err := base.VariantSource(vr.Name)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(src), `# Variant "`+vr.Name+`" of `+base.File) {
					t.Errorf("no header naming the variant:\n%.200s", src)
				}
				w, err := scenario.Load("written.yaml", src)
				if err != nil {
					t.Fatalf("%v\n%s", err, src)
				}
				if len(w.Variants) != 0 {
					t.Errorf("the written variant still has %d variants", len(w.Variants))
				}
				if w.Title != v.Title || len(w.Expect) != len(v.Expect) || len(w.Narration) != len(v.Narration) {
					t.Errorf("written: title %q, %d expectations, %d narration steps; variant: %q, %d, %d",
						w.Title, len(w.Expect), len(w.Narration), v.Title, len(v.Expect), len(v.Narration))
				}
				for _, seed := range []uint64{base.Seed, 1, 2, 3} {
					if a, b := traceOf(t, v, seed), traceOf(t, w, seed); a != b {
						t.Errorf("seed %d: the written variant runs differently:\n%s", seed, firstDiff([]byte(a), []byte(b)))
					}
				}
				// Sections no set entry touches stay as written.
				if !bytes.Contains(src, []byte("\ntopology:")) && !bytes.HasPrefix(src, []byte("topology:")) {
					t.Errorf("no topology section in:\n%s", src)
				}
			})
		}
	}
	if n < 3 {
		t.Fatalf("%d lesson variants, want at least 3", n)
	}
}
