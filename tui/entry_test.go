package tui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/gdamore/tcell/v2"
)

// neverFails binds a worker that never fails, built afresh per run.
func neverFails(calls *int) func() map[string]sim.Handler {
	return func() map[string]sim.Handler {
		return map[string]sim.Handler{"worker": sim.HandlerFunc(func(*sim.Delivery) error {
			*calls++
			return nil
		})}
	}
}

// TestPlayLessonCast records a lesson with a bound handler through the Go
// entry point: the cast is the one Record makes of the same session, and
// the bound handler ran.
func TestPlayLessonCast(t *testing.T) {
	calls := 0
	var cast bytes.Buffer
	cfg := RecordConfig{Width: 80, Height: 24, Bare: true}
	err := PlayLesson(context.Background(), "poison-dlq", PlayOptions{
		Session: lab.SessionOptions{Handlers: neverFails(&calls)}, Cast: &cast, CastConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Fatal("the bound handler never ran")
	}
	d, err := lab.OpenLesson("poison-dlq", lab.SessionOptions{Handlers: neverFails(new(int))})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := Record(&want, d, cfg); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cast.Bytes(), want.Bytes()) {
		t.Error("the cast differs from Record's of the same session")
	}
	var scripted bytes.Buffer
	if err := PlayLesson(context.Background(), "poison-dlq", PlayOptions{Cast: &scripted, CastConfig: cfg}); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(cast.Bytes(), scripted.Bytes()) {
		t.Error("the cast with a bound worker is the cast of the scripted one")
	}
}

// TestPlayFileErrors: a file that does not load and a handler bound to a
// name the scenario lacks come back as errors, before any terminal.
func TestPlayFileErrors(t *testing.T) {
	err := PlayFile(context.Background(), filepath.Join(t.TempDir(), "missing.yaml"), PlayOptions{})
	if err == nil || !strings.Contains(err.Error(), "missing.yaml:1:1") {
		t.Errorf("missing file: %v", err)
	}
	bad := func() map[string]sim.Handler {
		return map[string]sim.Handler{"wroker": sim.HandlerFunc(func(*sim.Delivery) error { return nil })}
	}
	err = PlayLesson(context.Background(), "poison-dlq", PlayOptions{Session: lab.SessionOptions{Handlers: bad}})
	if err == nil || !strings.Contains(err.Error(), "wroker") {
		t.Errorf("unknown handler name: %v", err)
	}
}

// TestPlayLessonContext opens the player on a simulation screen and
// cancels the context: the player quits and returns the context's error.
func TestPlayLessonContext(t *testing.T) {
	scr := tcell.NewSimulationScreen("UTF-8")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	drawn := make(chan struct{}, 1)
	opt := PlayOptions{Player: Options{Screen: scr, NoColor: true, afterDraw: func() {
		select {
		case drawn <- struct{}{}:
		default:
		}
	}}}
	done := make(chan error, 1)
	go func() { done <- PlayLesson(ctx, "poison-dlq", opt) }()
	<-drawn
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("PlayLesson returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the player did not quit when the context was cancelled")
	}
}

// TestReadmePlayExample builds the README's example of the Go entry
// point and runs it with a cast file, so the README's code compiles and
// does what it says.
func TestReadmePlayExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	code := readmeBlock(t, "### Playing a scenario from Go", "go")
	if !strings.HasPrefix(code, "package main") {
		t.Fatalf("the README's example is not a program:\n%s", code)
	}
	// The program builds inside the module, against this tree, from a
	// directory that exists only in an overlay: nothing is written into
	// the tree, so a killed test leaves nothing behind (testdata also
	// keeps the path out of ./...).
	tmp := t.TempDir()
	mainFile := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(mainFile, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{
		"Replace": {filepath.Join(wd, "testdata", "readme-play", "main.go"): mainFile},
	})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "play")
	if out, err := exec.Command("go", "build", "-overlay", overlayFile, "-o", bin, "./testdata/readme-play").CombinedOutput(); err != nil {
		t.Fatalf("the README's example does not build: %v\n%s\n%s", err, out, code)
	}
	cast := filepath.Join(t.TempDir(), "poison.cast")
	if out, err := exec.Command(bin, cast).CombinedOutput(); err != nil {
		t.Fatalf("the README's example failed: %v\n%s", err, out)
	}
	f, err := os.Open(cast)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), `{"version":2,`) {
		t.Errorf("the example's cast has no asciinema header: %q", sc.Text())
	}
}
