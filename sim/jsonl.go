package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrBadTrace is wrapped by the errors ReadJSONL returns for input that is
// not a JSON Lines trace.
var ErrBadTrace = errors.New("sim: bad trace")

// MaxTraceLine is the longest line ReadJSONL accepts, in bytes.
const MaxTraceLine = 1 << 20

// jsonEvent is the JSON Lines form of an Event, as AppendJSON writes it.
type jsonEvent struct {
	Seq       uint64 `json:"seq"`
	Tick      int64  `json:"tick"`
	Kind      string `json:"kind"`
	Where     string `json:"where"`
	Msg       string `json:"msg"`
	Origin    string `json:"origin"`
	Key       string `json:"key"`
	Type      string `json:"type"`
	Actor     string `json:"actor"`
	Consumer  string `json:"consumer"`
	Corr      string `json:"corr"`
	Attempt   int    `json:"attempt"`
	Partition *int   `json:"partition"`
	Offset    *int64 `json:"offset"`
	Rule      string `json:"rule"`
	Cause     string `json:"cause"`
	Detail    string `json:"detail"`
}

// ReadJSONL reads a JSON Lines trace, as JSONWriter writes it, and hands
// every event to sink in order; folding it into a NewLedger rebuilds the
// ledger of the run that wrote it. Blank lines are skipped. An error names
// the line ("line 7: ...") and wraps ErrBadTrace; the events before it
// have been handed on. Memory is bounded by MaxTraceLine per line.
func ReadJSONL(r io.Reader, sink Sink) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxTraceLine)
	line := 0
	var prev uint64
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var j jsonEvent
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			return fmt.Errorf("%w: line %d: %v", ErrBadTrace, line, err)
		}
		e, err := j.event()
		if err != nil {
			return fmt.Errorf("%w: line %d: %v", ErrBadTrace, line, err)
		}
		if e.Seq != 0 && e.Seq <= prev {
			return fmt.Errorf("%w: line %d: seq %d does not follow seq %d", ErrBadTrace, line, e.Seq, prev)
		}
		prev = e.Seq
		sink.Emit(&e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%w: line %d: longer than %d bytes", ErrBadTrace, line+1, MaxTraceLine)
		}
		return fmt.Errorf("%w: line %d: %v", ErrBadTrace, line+1, err)
	}
	return nil
}

// event converts the JSON form back to an Event.
func (j *jsonEvent) event() (Event, error) {
	e := Event{Seq: j.Seq, Tick: Tick(j.Tick), Kind: Kind(j.Kind), Where: j.Where, Key: j.Key, Type: j.Type, Actor: j.Actor,
		Consumer: j.Consumer, Corr: j.Corr, Attempt: j.Attempt, Rule: j.Rule, Cause: Cause(j.Cause), Detail: j.Detail}
	if j.Kind == "" {
		return e, errors.New(`the event has no "kind"`)
	}
	var ok bool
	if j.Msg != "" {
		if e.Msg, ok = parseMsg(j.Msg); !ok {
			return e, fmt.Errorf(`"msg" %q is not a message ID such as "m7"`, j.Msg)
		}
	}
	if j.Origin != "" {
		if e.Origin, ok = parseMsg(j.Origin); !ok {
			return e, fmt.Errorf(`"origin" %q is not a message ID such as "m7"`, j.Origin)
		}
	}
	if (j.Partition == nil) != (j.Offset == nil) {
		return e, errors.New(`"partition" and "offset" come together`)
	}
	if j.Partition != nil {
		e.HasPos, e.Partition, e.Offset = true, *j.Partition, *j.Offset
	}
	return e, nil
}

// parseMsg parses "m7".
func parseMsg(s string) (ID, bool) {
	if !strings.HasPrefix(s, "m") {
		return 0, false
	}
	return ParseID(s)
}
