package tui

import (
	"os"
	"strings"
	"testing"
)

// The README's capture of the player is the screen of poison-dlq at
// t=14 at 100x32, drawn from the lesson as it is now: a change to the
// lesson, the verdict strip or any panel that moves a character makes the
// README's picture out of date, and fails here until the README shows the
// new screen.
func TestReadmePlayerCapture(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src := string(readme)
	i := strings.Index(src, "## The player\n")
	if i < 0 {
		t.Fatal(`README.md has no section "## The player"`)
	}
	j := strings.Index(src[i:], "\n```\n")
	if j < 0 {
		t.Fatal("the section has no plain code block")
	}
	block := src[i+j+len("\n```\n"):]
	block = block[:strings.Index(block, "```")]
	var want strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		want.WriteString(strings.TrimRight(l, " "))
		want.WriteByte('\n')
	}
	ctl := NewController(lessonDriver(t, "poison-dlq"))
	got := strings.TrimRight(screenAt(t, ctl, 14, "", 100, 32), "\n") + "\n"
	if got != want.String() {
		t.Errorf("README.md's capture of poison-dlq at t=14, 100x32, is out of date; the screen now:\n%s\nthe README:\n%s", got, want.String())
	}
}
