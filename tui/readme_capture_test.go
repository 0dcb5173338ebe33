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
	block := readmeBlock(t, "## The player", "")
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

// readmeBlock returns the first fenced block of language lang ("" for a
// plain block) in the README's section whose heading line is heading,
// without its fences; it fails the test when there is none or it is not
// closed.
func readmeBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src := string(readme)
	i := strings.Index(src, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	open := "\n```" + lang + "\n"
	j := strings.Index(src[i:], open)
	if j < 0 {
		t.Fatalf("the README's section %q has no %q block", heading, "```"+lang)
	}
	block := src[i+j+len(open):]
	k := strings.Index(block, "```")
	if k < 0 {
		t.Fatalf("the README's %q block of section %q is not closed", "```"+lang, heading)
	}
	return block[:k]
}
