package sim

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// sealed returns the JSON Lines trace of events, closed.
func sealed(t *testing.T, events ...Event) string {
	t.Helper()
	var js bytes.Buffer
	tr := NewTrace(NewJSONWriter(&js))
	for _, e := range events {
		tr.Emit(e)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	return js.String()
}

// TestReadJSONLRefusesWhatIsNotAWholeTrace covers each rule of the
// reader with a trace that breaks it, and requires the line it names.
func TestReadJSONLRefusesWhatIsNotAWholeTrace(t *testing.T) {
	good := sealed(t,
		Event{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1},
		Event{Tick: 2, Kind: KindReceived, Where: "queue:q", Consumer: "w", Msg: 1},
		Event{Tick: 2, Kind: KindProcessed, Where: "queue:q", Consumer: "w", Msg: 1},
	)
	if err := ReadJSONL(strings.NewReader(good), NewLedger()); err != nil {
		t.Fatal(err)
	}
	l := strings.SplitAfter(good, "\n")[:4] // three events and the closing record
	for _, c := range []struct{ name, trace, want string }{
		{"no seq", strings.Replace(good, `"seq":2,`, "", 1), `line 2: the event has no "seq"`},
		{"gap", l[0] + l[2] + l[3], "line 2: seq 3, but seq 2 comes next (a gap: event 2 is missing)"},
		{"repeat", l[0] + l[1] + l[1] + l[2] + l[3], "line 3: seq 2 repeats or goes back"},
		{"not from 1", l[1] + l[2] + l[3], "line 1: seq 2, but seq 1 comes next"},
		{"edited", strings.Replace(good, `"tick":2,"kind":"processed"`, `"tick":3,"kind":"processed"`, 1), "line 3: the hash chain breaks here"},
		{"no hash", strings.Replace(l[0], `,"hash"`, `,"hush"`, 1), `line 1: json: unknown field "hush"`},
		{"hash not last", `{"seq":1,"hash":"0000000000000000","tick":1,"kind":"sent","where":"q"}` + "\n", `line 1: the event has no "hash" as its last field`},
		{"truncated", l[0] + l[1], "truncated: the run did not finish: no closing record after line 2 (seq 2)"},
		{"empty", "", "truncated: the run did not finish: the trace is empty"},
		{"miscounted", l[0] + l[1] + l[3], "line 3: the closing record counts 3 events, but 2 came before it"},
		{"after the end", good + l[0], "line 5: a line after the closing record on line 4"},
		{"forged end", l[0] + l[1] + l[2] + `{"end":true,"events":3,"hash":"0000000000000000"}` + "\n", "line 4: the closing record's hash"},
		{"odd end", l[0] + l[1] + l[2] + `{"end":false,"events":3,"hash":"0000000000000000"}` + "\n", `line 4: a closing record is exactly {"end":true`},
		{"leading zero", strings.Replace(good, `"msg":"m1"`, `"msg":"m01"`, 1), `line 1: "msg" "m01" is not a message ID`},
		{"two values", strings.Replace(good, "}\n", "} {}\n", 1), "line 1: more than one JSON value"},
	} {
		err := ReadJSONL(strings.NewReader(c.trace), NewLedger())
		if !errors.Is(err, ErrBadTrace) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
		if trunc := strings.Contains(c.want, "truncated"); errors.Is(err, ErrTruncated) != trunc {
			t.Errorf("%s: errors.Is(err, ErrTruncated) = %v", c.name, !trunc)
		}
	}
}

// TestReadJSONLLineLimit accepts a line of exactly MaxTraceLine bytes
// and refuses one byte more, with or without a "\r".
func TestReadJSONLLineLimit(t *testing.T) {
	line := func(n int) string {
		e := Event{Seq: 1, Tick: 1, Kind: KindAction, Where: "timeline"}
		base := len(AppendJSON(nil, &e)) + hashTail - 1 + len(`,"detail":""`)
		e.Detail = strings.Repeat("x", n-base)
		js := sealed(t, e)
		if got := strings.Index(js, "\n"); got != n {
			t.Fatalf("built a line of %d bytes, want %d", got, n)
		}
		return js
	}
	for _, c := range []struct {
		n  int
		ok bool
	}{{MaxTraceLine - 1, true}, {MaxTraceLine, true}, {MaxTraceLine + 1, false}, {MaxTraceLine + 2, false}} {
		for _, eol := range []string{"\n", "\r\n"} {
			js := strings.Replace(line(c.n), "\n", eol, 1)
			err := ReadJSONL(strings.NewReader(js), NewLedger())
			if (err == nil) != c.ok {
				t.Errorf("a line of %d bytes ending %q: %v", c.n, eol, err)
			}
			if err != nil && !strings.Contains(err.Error(), "line 1: longer than 1048576 bytes") {
				t.Errorf("a line of %d bytes: %v", c.n, err)
			}
		}
	}
}

// TestJSONWriterAfterClose refuses an event after the closing record
// instead of writing a line a reader would take for tampering.
func TestJSONWriterAfterClose(t *testing.T) {
	var js bytes.Buffer
	jw := NewJSONWriter(&js)
	jw.Emit(&Event{Seq: 1, Kind: KindSent})
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
	n := js.Len()
	jw.Emit(&Event{Seq: 2, Kind: KindSent})
	if !errors.Is(jw.Err, ErrTraceClosed) || js.Len() != n || jw.Close() != ErrTraceClosed {
		t.Fatalf("after Close: err %v, %d bytes written", jw.Err, js.Len()-n)
	}
}

// TestReadJSONLTraceError gives every refusal as a *TraceError whose Line
// is the line the message names, so that a caller never parses the text.
func TestReadJSONLTraceError(t *testing.T) {
	good := sealed(t,
		Event{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1},
		Event{Tick: 2, Kind: KindReceived, Where: "queue:q", Consumer: "w", Msg: 1},
	)
	l := strings.SplitAfter(good, "\n")[:3] // two events and the closing record
	for _, c := range []struct {
		name, trace string
		line        int
		truncated   bool
	}{
		{"gap", l[1] + l[2], 1, false},
		{"edited", strings.Replace(good, `"tick":2`, `"tick":3`, 1), 2, false},
		{"blank lines count", "\n\n" + strings.Replace(good, `"tick":2`, `"tick":3`, 1), 4, false},
		{"miscounted", l[0] + l[2], 2, false},
		{"after the end", good + l[0], 4, false},
		{"truncated", l[0] + l[1], 2, true},
		{"empty", "", 0, true},
		{"too long", strings.Repeat("x", MaxTraceLine+10) + "\n", 1, false},
	} {
		err := ReadJSONL(strings.NewReader(c.trace), NewLedger())
		var te *TraceError
		if !errors.As(err, &te) {
			t.Errorf("%s: %v is not a *TraceError", c.name, err)
			continue
		}
		if te.Line != c.line || te.Truncated != c.truncated {
			t.Errorf("%s: Line %d, Truncated %v; want %d, %v (%v)", c.name, te.Line, te.Truncated, c.line, c.truncated, err)
		}
		if !errors.Is(err, ErrBadTrace) || errors.Is(err, ErrTruncated) != c.truncated {
			t.Errorf("%s: %v does not wrap ErrBadTrace, and ErrTruncated exactly when truncated", c.name, err)
		}
		if te.Error() != err.Error() || !strings.HasPrefix(err.Error(), ErrBadTrace.Error()+": ") {
			t.Errorf("%s: text %q", c.name, err)
		}
	}
}
