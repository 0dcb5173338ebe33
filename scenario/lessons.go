package scenario

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// lessonFiles holds the built-in lessons, one scenario file each.
//
//go:embed lessons/*.yaml
var lessonFiles embed.FS

// menu is the order of the lesson menu: from the dual-write problem and its
// fix, through queue and log failure modes, to choosing an architecture.
// Every embedded file is listed here exactly once (a test checks it).
var menu = []string{
	"dual-write",
	"outbox-relay",
	"idempotent-consumer",
	"poison-dlq",
	"visibility-timeout",
	"offline-subscriber",
	"partition-order",
	"crash-before-commit",
	"replay-projection",
	"retention-lag",
	"event-storm",
	"sync-loop",
	"architecture-choice",
	"redrive-dedup",
	"queue-health",
	"competing-order",
	"correlation-ids",
	"retry-classes",
	"resend-outgoing",
	"schema-evolution",
	"saga-compensation",
	"eventual-consistency",
}

// ErrUnknownLesson is wrapped by the error LoadLesson returns for a name
// that is not a built-in lesson.
var ErrUnknownLesson = errors.New("scenario: unknown lesson")

// Lesson is one entry of the built-in lesson menu.
type Lesson struct {
	// Name identifies the lesson on the command line and is the base name
	// of its embedded file without ".yaml", e.g. "poison-dlq".
	Name string
	// Title and Summary are the scenario's title and one-line summary.
	Title, Summary string
}

var (
	lessonsOnce sync.Once
	lessonList  []Lesson
)

// Lessons returns the built-in lessons in menu order. The list is built
// once, by loading every embedded file, and the same order is returned on
// every call; the caller may modify the returned slice.
func Lessons() []Lesson {
	lessonsOnce.Do(func() {
		lessonList = make([]Lesson, 0, len(menu))
		for _, name := range menu {
			l := Lesson{Name: name, Title: name}
			if s, err := LoadLesson(name); err == nil {
				l.Title, l.Summary = s.Title, s.Summary
			}
			lessonList = append(lessonList, l)
		}
	})
	return append([]Lesson(nil), lessonList...)
}

// isLesson reports whether name is the name of a built-in lesson.
func isLesson(name string) bool {
	for _, n := range menu {
		if n == name {
			return true
		}
	}
	return false
}

// LoadLesson loads the built-in lesson called name from the files embedded
// in the binary. Positions in its errors name the file "lessons/NAME.yaml".
// An unknown name returns an error wrapping ErrUnknownLesson that lists the
// lessons. Each call parses the file afresh, so callers may change the
// returned Scenario.
func LoadLesson(name string) (*Scenario, error) {
	if !isLesson(name) {
		hint := ""
		if s := suggestName(name, menu); s != "" {
			hint = " (did you mean " + quote(s) + "?)"
		}
		return nil, fmt.Errorf("%w %s%s; lessons: %s", ErrUnknownLesson, quote(name), hint, strings.Join(menu, ", "))
	}
	path := "lessons/" + name + ".yaml"
	data, err := lessonFiles.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrUnknownLesson, name, err)
	}
	return Load(path, data)
}

// Resolve loads what a command-line argument names: a built-in lesson when
// arg is a lesson's name, otherwise the scenario file at path arg. A file
// that happens to share a lesson's name can be reached as "./NAME".
//
// An argument that names neither, looks like a lesson name (no path
// separator, no file extension) and is close to one returns an error
// wrapping ErrUnknownLesson that says "did you mean", so a typo in a lesson
// name is not reported as an unreadable file.
func Resolve(arg string) (*Scenario, error) {
	if isLesson(arg) {
		return LoadLesson(arg)
	}
	s, err := LoadFile(arg)
	if err != nil && !strings.ContainsAny(arg, `/\.`) && suggestName(arg, menu) != "" {
		if _, serr := os.Stat(arg); serr != nil {
			return nil, fmt.Errorf("%w %s (did you mean %s?) and no file of that name; lessons: %s",
				ErrUnknownLesson, quote(arg), quote(suggestName(arg, menu)), strings.Join(menu, ", "))
		}
	}
	return s, err
}
