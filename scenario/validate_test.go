package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWarnings loads every file under testdata/warn, which must be valid,
// and compares its warnings with the golden NAME.warn next to it (rewrite
// with -update).
func TestWarnings(t *testing.T) {
	files, _ := filepath.Glob("testdata/warn/*.yaml")
	if len(files) == 0 {
		t.Fatal("no files in testdata/warn")
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Load(name, data)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, w := range s.Warnings() {
				b.WriteString(w.String() + "\n")
			}
			golden := strings.TrimSuffix(f, ".yaml") + ".warn"
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if b.String() != string(want) {
				t.Errorf("warnings differ from %s:\ngot:\n%s\nwant:\n%s", golden, b.String(), want)
			}
		})
	}
}

// TestNoWarnings: the lessons and the valid examples bound every loop
// they have (sync-loop, event-storm), so they have no warnings.
func TestNoWarnings(t *testing.T) {
	for _, l := range Lessons() {
		s, err := LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		if ws := s.Warnings(); len(ws) > 0 {
			t.Errorf("lesson %s: %v", l.Name, ws)
		}
	}
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	for _, f := range files {
		s, err := LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if ws := s.Warnings(); len(ws) > 0 {
			t.Errorf("%s: %v", f, ws)
		}
	}
}

// TestLoopWarningsAreBounded: each kind of bound keeps the sync loop of
// two topics from being warned about, and without one it is.
func TestLoopWarningsAreBounded(t *testing.T) {
	loop := func(topicA, subA string) string {
		return "title: t\nrun: {ticks: 5}\ntopology:\n  topics:\n" +
			"    - {name: a" + topicA + ", subscribers: [{name: x" + subA + ", emits: [{topic: b}]}]}\n" +
			"    - {name: b, subscribers: [{name: y, emits: [{topic: a}]}]}\n"
	}
	for _, c := range []struct {
		topicA, subA string
		warns        bool
	}{
		{"", "", true},
		{", cascade_limit: 5", "", false},
		{"", ", source_check: true", false},
		{"", ", supervisor: true", false},
		{"", ", offline: true", true},
	} {
		s, err := Load("loop.yaml", []byte(loop(c.topicA, c.subA)))
		if err != nil {
			t.Fatal(err)
		}
		ws := s.Warnings()
		if (len(ws) == 1) != c.warns || len(ws) > 1 {
			t.Errorf("topic a%s, subscriber x%s: %v", c.topicA, c.subA, ws)
		}
		if c.warns && len(ws) == 1 {
			want := `loop.yaml:5:57: warning: subscriber "x" emits into a loop that nothing stops: topic "a" -> x -> topic "b" -> y -> topic "a", so each message`
			if c.subA == "" && !strings.HasPrefix(ws[0].String(), want) {
				t.Errorf("got  %s\nwant %s...", ws[0], want)
			}
		}
	}
}
