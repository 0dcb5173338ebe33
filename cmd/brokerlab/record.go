package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/printable"
	"github.com/brokerlab/brokerlab/tui"
)

// parseSize parses a --size value, WIDTHxHEIGHT.
func parseSize(v string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(strings.ToLower(v), "x")
	if ok {
		w, err = strconv.Atoi(ws)
		if err == nil {
			h, err = strconv.Atoi(hs)
		}
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("--size wants WIDTHxHEIGHT in cells, e.g. --size 100x32; got %q", v)
	}
	if err := (tui.RecordConfig{Width: w, Height: h}).Validate(); err != nil || w <= 0 || h <= 0 {
		return 0, 0, fmt.Errorf("--size %s: widths go from %d to %d and heights from %d to %d",
			v, tui.RecordMinWidth, tui.RecordMaxWidth, tui.RecordMinHeight, tui.RecordMaxHeight)
	}
	return w, h, nil
}

// cmdRecord writes an asciinema v2 cast of the player going through a
// lesson or scenario file. The cast goes to a temporary file next to
// --cast, renamed into place once complete, so a failure or an interrupt
// never leaves a partial cast behind (see writeOutput).
func (c *cli) cmdRecord(args []string) int {
	fs := c.flags("record")
	var seed seedFlag
	fs.Var(&seed, "seed", "override the scenario's seed")
	out := fs.String("cast", "", "the cast file `OUT.cast` to write (required)")
	size := fs.String("size", "100x32", "the terminal size in cells, `WIDTHxHEIGHT`")
	variant := fs.String("variant", "", "record the variant `NAME` of the scenario (see its variants:)")
	bare := fs.Bool("bare", false, "record the run only, without the lesson's introduction and end summary")
	noColor := fs.Bool("no-color", false, "record without colours (bold, dim, reverse and underline only)")
	tick := fs.Duration("tick", tui.DefaultRecordTick, "how long each tick stays on screen")
	stamp := fs.Bool("timestamp", false, "write the current time into the cast's header (off: the cast depends only on the scenario, seed and size)")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(c.stderr, "brokerlab record: "+format+"\n", a...)
		return exitBadInput
	}
	if len(pos) != 1 {
		return fail("want exactly one FILE or LESSON; lessons: %s", lessonNames())
	}
	if *out == "" {
		return fail("--cast OUT.cast is required (where to write the cast)")
	}
	w, h, err := parseSize(*size)
	if err != nil {
		return fail("%v", err)
	}
	if *tick <= 0 || *tick > time.Minute {
		return fail("--tick %v: want a duration above 0 and at most 1m, e.g. 500ms", *tick)
	}
	s, ok := c.load(pos[0])
	if !ok {
		return exitBadInput
	}
	if s, ok = c.variantOf(s, *variant); !ok {
		return exitBadInput
	}
	d, err := lab.Open(s, lab.SessionOptions{Seed: seed.ptr()})
	if err != nil {
		fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
		return exitBadInput
	}
	title := s.Title
	if isLesson(pos[0]) {
		d.SetLesson(pos[0])
		title += " (" + pos[0] + ")"
	}
	if *variant != "" {
		title += " · " + *variant
	}
	cfg := tui.RecordConfig{Width: w, Height: h, Title: title, NoColor: *noColor, Tick: *tick, Bare: *bare}
	if *stamp {
		cfg.Timestamp = time.Now().Unix()
	}
	if fi, err := os.Stat(*out); err == nil && fi.IsDir() {
		return fail("--cast %s is a directory; give a file name, e.g. %s", printable.String(*out), printable.String(filepath.Join(*out, "lesson.cast")))
	}
	input := pos[0]
	if isLesson(input) {
		input = ""
	}
	if err := checkOutput("--cast", *out, inputClash("scenario", input)); err != nil {
		return fail("%v", err)
	}
	var res tui.RecordResult
	err = writeOutput(*out, func(w io.Writer) error {
		var err error
		res, err = tui.Record(w, d, cfg)
		return err
	})
	if err != nil {
		if errors.Is(err, errOutput) || errors.Is(err, errWrite) {
			return fail("%v", err)
		}
		return fail("cannot write %s: %v", printable.String(*out), pathError(err))
	}
	fmt.Fprintf(c.stdout, "wrote %s: %dx%d, %d ticks, %d events, %.1fs\n", printable.String(*out), w, h, res.Ticks, res.Events, res.Duration.Seconds())
	return exitOK
}

// pathError returns the reason of a file-system error without the
// operation and path, which the message names already.
func pathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	if le, ok := err.(*os.LinkError); ok {
		return le.Err
	}
	return err
}
