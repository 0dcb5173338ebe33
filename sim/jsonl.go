package sim

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
)

// ErrBadTrace is wrapped by the errors ReadJSONL returns for input that is
// not a whole JSON Lines trace as JSONWriter writes it.
var ErrBadTrace = errors.New("sim: bad trace")

// ErrTruncated is wrapped by the error ReadJSONL returns for a trace that
// ends without its closing record: the run that wrote it did not finish,
// or the file was cut. It wraps ErrBadTrace.
var ErrTruncated = fmt.Errorf("%w: truncated: the run did not finish", ErrBadTrace)

// TraceError is the error ReadJSONL returns: the line of the trace it is
// about and what is wrong there. It wraps ErrTruncated for a trace that
// ends without its closing record, and ErrBadTrace otherwise, so that a
// caller finds the line with errors.As instead of reading the text.
type TraceError struct {
	// Line is the line the error is about, counted from 1 with blank
	// lines included; for a truncated trace it is the last line read, 0
	// for an empty trace.
	Line int
	// Truncated reports a trace that ends without its closing record.
	Truncated bool
	// Msg says what is wrong, without the line.
	Msg string
}

// Error returns "sim: bad trace: line N: MSG", or for a truncated trace
// "sim: bad trace: truncated: the run did not finish: MSG".
func (e *TraceError) Error() string {
	if e.Truncated {
		return ErrTruncated.Error() + ": " + e.Msg
	}
	return ErrBadTrace.Error() + ": line " + strconv.Itoa(e.Line) + ": " + e.Msg
}

// Unwrap returns ErrTruncated or ErrBadTrace.
func (e *TraceError) Unwrap() error {
	if e.Truncated {
		return ErrTruncated
	}
	return ErrBadTrace
}

// badLine returns the *TraceError about line, its message formatted.
func badLine(line int, format string, args ...any) error {
	return &TraceError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// ErrTraceClosed is kept in JSONWriter.Err when an event arrives after
// the writer wrote its closing record.
var ErrTraceClosed = errors.New("sim: event after the trace was closed")

// MaxTraceLine is the longest line ReadJSONL accepts, in bytes, not
// counting the line's end.
const MaxTraceLine = 1 << 20

// ChainHash is the running hash of a JSON Lines trace: after line i it is
// the first 8 bytes of SHA-256(hash after line i-1 || line i), where line
// i is the event's JSON object as AppendJSON writes it, before the "hash"
// field is added. The zero value is the hash before the first line.
type ChainHash [8]byte

// Add folds the JSON object of one event into the chain. It costs one
// SHA-256 over len(obj)+8 bytes.
func (c *ChainHash) Add(obj []byte) { c.add(sha256.New(), obj, false) }

// add is Add with a digest the caller reuses. With brace set, obj is the
// object without its closing brace, and the brace is hashed after it:
// ReadJSONL hashes a line without its hash field that way.
func (c *ChainHash) add(d hash.Hash, obj []byte, brace bool) {
	d.Reset()
	d.Write(c[:])
	d.Write(obj)
	if brace {
		d.Write(closeBrace)
	}
	var sum [sha256.Size]byte
	copy(c[:], d.Sum(sum[:0]))
}

var closeBrace = []byte{'}'}

// String returns the hash as 16 lower-case hex digits.
func (c ChainHash) String() string { return hex.EncodeToString(c[:]) }

// hashField is what JSONWriter puts before the hex digits of a line's hash.
const hashField = `,"hash":"`

// hashTail is the length of the hash field at the end of a line,
// `,"hash":"0123456789abcdef"}`.
const hashTail = len(hashField) + 16 + 2

// appendField replaces the closing brace of the JSON object in b with the
// hash field and the brace.
func (c ChainHash) appendField(b []byte) []byte {
	b = append(b[:len(b)-1], hashField...)
	b = hex.AppendEncode(b, c[:])
	return append(b, '"', '}')
}

// AppendClosing appends the closing record of a trace of n events whose
// running hash is c: {"end":true,"events":n,"hash":"..."}.
func AppendClosing(b []byte, n uint64, c ChainHash) []byte {
	b = append(b, `{"end":true,"events":`...)
	b = strconv.AppendUint(b, n, 10)
	b = append(b, `,"hash":"`...)
	b = hex.AppendEncode(b, c[:])
	return append(b, '"', '}')
}

// jsonEvent is the JSON Lines form of an Event, as AppendJSON writes it,
// or of the closing record (End, Events and Hash).
type jsonEvent struct {
	Seq       *uint64 `json:"seq"`
	Tick      int64   `json:"tick"`
	Kind      string  `json:"kind"`
	Where     string  `json:"where"`
	Msg       string  `json:"msg"`
	Origin    string  `json:"origin"`
	Key       string  `json:"key"`
	Type      string  `json:"type"`
	Actor     string  `json:"actor"`
	Consumer  string  `json:"consumer"`
	Corr      string  `json:"corr"`
	Attempt   int     `json:"attempt"`
	Partition *int    `json:"partition"`
	Offset    *int64  `json:"offset"`
	Rule      string  `json:"rule"`
	Cause     string  `json:"cause"`
	Detail    string  `json:"detail"`
	Hash      string  `json:"hash"`
	End       *bool   `json:"end"`
	Events    *uint64 `json:"events"`
}

// ReadJSONL reads a JSON Lines trace, as JSONWriter writes it, and hands
// every event to sink in order; folding it into a NewLedger rebuilds the
// ledger of the run that wrote it. Blank lines are skipped.
//
// It accepts only a whole, unedited trace: events numbered 1, 2, 3, ...
// with no gap, repeat or missing "seq"; on every line the running hash
// (ChainHash) of the lines so far; and last a closing record whose count
// and hash match, with nothing after it. A trace without the closing
// record returns an error wrapping ErrTruncated. Every error is a
// *TraceError, which names the line ("line 7: ...") and wraps
// ErrBadTrace; the events before it have
// been handed on, so a caller must not judge a trace that returned an
// error. Memory is bounded by MaxTraceLine per line.
func ReadJSONL(r io.Reader, sink Sink) error {
	sc := bufio.NewScanner(r)
	// Room for a line of MaxTraceLine bytes and its "\r\n"; the length
	// of the line itself is checked below.
	sc.Buffer(make([]byte, 64<<10), MaxTraceLine+2)
	line := 0
	var seq uint64
	var chain ChainHash
	digest := sha256.New()
	closed := 0 // the line of the closing record
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if len(raw) > MaxTraceLine {
			return badLine(line, "longer than %d bytes", MaxTraceLine)
		}
		b := bytes.TrimSpace(raw)
		if len(b) == 0 {
			continue
		}
		if closed != 0 {
			return badLine(line, "a line after the closing record on line %d", closed)
		}
		var j jsonEvent
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			return badLine(line, "%v", err)
		}
		if dec.More() {
			return badLine(line, "more than one JSON value on the line")
		}
		if j.End != nil || j.Events != nil {
			if err := j.closing(seq, chain); err != nil {
				return badLine(line, "%v", err)
			}
			closed = line
			continue
		}
		e, err := j.event()
		if err != nil {
			return badLine(line, "%v", err)
		}
		if j.Seq == nil {
			return badLine(line, `the event has no "seq"; events are numbered 1, 2, 3, ...`)
		}
		switch {
		case e.Seq == seq+1:
		case e.Seq <= seq:
			return badLine(line, "seq %d repeats or goes back: the line before has seq %d (a line was duplicated or moved)", e.Seq, seq)
		case e.Seq == seq+2:
			return badLine(line, "seq %d, but seq %d comes next (a gap: event %d is missing)", e.Seq, seq+1, seq+1)
		default:
			return badLine(line, "seq %d, but seq %d comes next (a gap: events %d to %d are missing)", e.Seq, seq+1, seq+1, e.Seq-1)
		}
		seq = e.Seq
		if len(b) < hashTail || !bytes.HasPrefix(b[len(b)-hashTail:], []byte(hashField)) || j.Hash == "" {
			return badLine(line, `the event has no "hash" as its last field; only traces written by 'brokerlab trace --format json' can be verified`)
		}
		chain.add(digest, b[:len(b)-hashTail], true)
		if j.Hash != chain.String() {
			return badLine(line, "the hash chain breaks here (hash %q, want %q): this line, or the hash of the line before, was edited", j.Hash, chain.String())
		}
		sink.Emit(&e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return badLine(line+1, "longer than %d bytes", MaxTraceLine)
		}
		return badLine(line+1, "%v", err)
	}
	if closed == 0 {
		if seq == 0 {
			return &TraceError{Line: line, Truncated: true, Msg: "the trace is empty: no events and no closing record"}
		}
		return &TraceError{Line: line, Truncated: true, Msg: fmt.Sprintf("no closing record after line %d (seq %d)", line, seq)}
	}
	return nil
}

// closing checks a closing record against the n events read before it
// and their running hash c.
func (j *jsonEvent) closing(n uint64, c ChainHash) error {
	if j.End == nil || !*j.End || j.Events == nil || j.Hash == "" || j.Seq != nil || j.Kind != "" {
		return errors.New(`a closing record is exactly {"end":true,"events":N,"hash":"..."}`)
	}
	if *j.Events != n {
		return fmt.Errorf("the closing record counts %d events, but %d came before it (events were added or removed)", *j.Events, n)
	}
	if j.Hash != c.String() {
		return fmt.Errorf("the closing record's hash %q does not match the events' chain %q", j.Hash, c.String())
	}
	return nil
}

// event converts the JSON form back to an Event.
func (j *jsonEvent) event() (Event, error) {
	e := Event{Tick: Tick(j.Tick), Kind: Kind(j.Kind), Where: j.Where, Key: j.Key, Type: j.Type, Actor: j.Actor,
		Consumer: j.Consumer, Corr: j.Corr, Attempt: j.Attempt, Rule: j.Rule, Cause: Cause(j.Cause), Detail: j.Detail}
	if j.Seq != nil {
		e.Seq = *j.Seq
	}
	if j.Kind == "" {
		return e, errors.New(`the event has no "kind"`)
	}
	var ok bool
	if j.Msg != "" {
		if e.Msg, ok = parseMsg(j.Msg); !ok {
			return e, fmt.Errorf(`"msg" %q is not a message ID such as "m7" (a positive number without leading zeros)`, j.Msg)
		}
	}
	if j.Origin != "" {
		if e.Origin, ok = parseMsg(j.Origin); !ok {
			return e, fmt.Errorf(`"origin" %q is not a message ID such as "m7" (a positive number without leading zeros)`, j.Origin)
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

// parseMsg parses "m7". A leading zero ("m07") is refused: it would name
// the same message as "m7" in another spelling.
func parseMsg(s string) (ID, bool) {
	if !strings.HasPrefix(s, "m") || strings.HasPrefix(s, "m0") {
		return 0, false
	}
	return ParseID(s)
}
