package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/tui"
)

// runCompare runs the CLI with a terminal and returns the exit code,
// stderr and the frame of the pair play --compare would have shown.
func runCompare(t *testing.T, args ...string) (int, string, *lab.CompareFrame) {
	t.Helper()
	var out, errb bytes.Buffer
	c := newCLI(&out, &errb)
	c.terminal = func() bool { return true }
	c.play = func(tui.Driver) error { t.Error("play --compare opened the single player"); return nil }
	var got *lab.CompareFrame
	c.comparePlay = func(p *lab.Pair) error {
		f := p.Frame(p.Snapshot())
		got = &f
		return nil
	}
	code := c.main(args)
	return code, errb.String(), got
}

func TestPlayCompare(t *testing.T) {
	for _, c := range []struct {
		args   []string
		labels [2]string
		seeds  [2]uint64
	}{
		{[]string{"play", "--compare", "poison-dlq", "--seeds", "4,5"}, [2]string{"seed 4", "seed 5"}, [2]uint64{4, 5}},
		{[]string{"play", "--compare", "dual-write", "outbox-relay"}, [2]string{"dual-write", "outbox-relay"}, [2]uint64{1, 0}},
		{[]string{"play", "--compare", "dual-write", "dual-write", "--seed", "7"}, [2]string{"dual-write · seed 7", "dual-write · seed 7"}, [2]uint64{7, 7}},
		{[]string{"play", "--compare", "dual-write", "outbox-relay", "--seeds", "2,3"}, [2]string{"dual-write · seed 2", "outbox-relay · seed 3"}, [2]uint64{2, 3}},
		{[]string{"play", "--compare", "idempotent-consumer"}, [2]string{"naive", "idempotent"}, [2]uint64{5, 5}},
		{[]string{"play", "--compare", "idempotent-consumer", "--variants", "idempotent,naive"}, [2]string{"idempotent", "naive"}, [2]uint64{5, 5}},
		{[]string{"play", "--compare", "dual-write"}, [2]string{"commit-then-publish", "outbox"}, [2]uint64{1, 1}},
		{[]string{"play", "--compare", "architecture-choice"}, [2]string{"queue-per-team", "log"}, [2]uint64{13, 13}},
	} {
		code, stderr, f := runCompare(t, c.args...)
		if code != exitOK || f == nil {
			t.Errorf("%v: exit %d: %s", c.args, code, stderr)
			continue
		}
		for i := range f.Sides {
			if f.Sides[i].Label != c.labels[i] {
				t.Errorf("%v: side %d label %q, want %q", c.args, i, f.Sides[i].Label, c.labels[i])
			}
			if c.seeds[i] != 0 && f.Sides[i].Snap.Header.Seed != c.seeds[i] {
				t.Errorf("%v: side %d seed %d, want %d", c.args, i, f.Sides[i].Snap.Header.Seed, c.seeds[i])
			}
		}
		if f.Title == "" {
			t.Errorf("%v: no title", c.args)
		}
	}
}

func TestPlayCompareBadArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"play", "--compare"}, "want A B"},
		{[]string{"play", "--compare", "a", "b", "c"}, "got 3 arguments"},
		{[]string{"play", "--compare", "poison-dlq", "--seeds", "4"}, "--seeds wants two values"},
		{[]string{"play", "--compare", "poison-dlq", "--seeds", "4,x"}, `seed "x"`},
		{[]string{"play", "--compare", "poison-dlq", "--seeds", "4,5", "--seed", "3"}, "not both"},
		{[]string{"play", "--compare", "poison-dlq", "--seeds", "4,5", "--variants", "a,b"}, "not both"},
		{[]string{"play", "--compare", "poison-dlq"}, "declares 0 variants"},
		{[]string{"play", "--compare", "idempotent-consumer", "--variants", "naive,nope"}, "nope"},
		{[]string{"play", "--compare", "idempotent-consumer", "--variants", "naive"}, "--variants wants two values"},
		{[]string{"play", "--compare", "a", "b", "--variants", "x,y"}, "give one FILE or LESSON"},
		{[]string{"play", "--compare", "no-such-lesson", "poison-dlq"}, "no-such-lesson"},
		{[]string{"play", "--compare", "idempotent-consumer", "--variant", "naive"}, "--variants V,W"},
		{[]string{"play", "poison-dlq", "--seeds", "4,5"}, "--seeds needs --compare"},
		{[]string{"play", "poison-dlq", "--variants", "a,b"}, "--variants needs --compare"},
		{[]string{"play", "poison-dlq", "--variant", "nope"}, "nope"},
	} {
		code, stderr, f := runCompare(t, c.args...)
		if code != exitBadInput || f != nil {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q, want it to say %q", c.args, stderr, c.want)
		}
	}
	// Without a terminal compare mode says so, like play.
	var out, errb bytes.Buffer
	cl := newCLI(&out, &errb)
	cl.terminal = func() bool { return false }
	if code := cl.main([]string{"play", "--compare", "poison-dlq", "--seeds", "4,5"}); code != exitBadInput || !strings.Contains(errb.String(), "needs a terminal") {
		t.Errorf("no terminal: exit %d, %q", code, errb.String())
	}
}

func TestPlayHelpDescribesCompare(t *testing.T) {
	var out, errb bytes.Buffer
	c := newCLI(&out, &errb)
	if code := c.main([]string{"help", "play"}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--compare", "--seeds", "--variants", "brokerlab play --compare A --seeds N,M", "x moves the keys",
		"Lessons with variants: dual-write, idempotent-consumer, architecture-choice."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help play lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	c.main([]string{"help"})
	for _, want := range []string{"brokerlab record --cast OUT.cast", "--compare A [B]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, out.String())
		}
	}
}

// TestEveryVariantRunsAndPasses runs every variant of every built-in
// lesson: each must build and meet its own expectations, and the lessons
// compare mode names by default must have at least two.
func TestEveryVariantRunsAndPasses(t *testing.T) {
	withVariants := map[string]bool{}
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Variants) >= 2 {
			withVariants[l.Name] = true
		}
		for _, vr := range s.Variants {
			v, err := s.Variant(vr.Name)
			if err != nil {
				t.Errorf("%s variant %s: %v", l.Name, vr.Name, err)
				continue
			}
			if vr.Description == "" {
				t.Errorf("%s variant %s has no description", l.Name, vr.Name)
			}
			rep, err := lab.Execute(v, lab.Options{})
			if err != nil {
				t.Errorf("%s variant %s: %v", l.Name, vr.Name, err)
				continue
			}
			if !rep.Pass {
				var b strings.Builder
				rep.WriteText(&b)
				t.Errorf("%s variant %s fails its expectations:\n%s", l.Name, vr.Name, b.String())
			}
		}
	}
	for _, name := range []string{"dual-write", "idempotent-consumer", "architecture-choice"} {
		if !withVariants[name] {
			t.Errorf("%s declares fewer than two variants", name)
		}
	}
}

func TestPlayVariant(t *testing.T) {
	var out, errb bytes.Buffer
	c := newCLI(&out, &errb)
	c.terminal = func() bool { return true }
	var title string
	c.play = func(d tui.Driver) error { title = d.Snapshot().Header.Title; return nil }
	if code := c.main([]string{"play", "dual-write", "--variant", "outbox"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "The outbox makes the two writes one"; title != want {
		t.Errorf("play --variant outbox: title %q, want %q", title, want)
	}
}
