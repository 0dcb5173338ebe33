package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Node records where a YAML mapping starts and where the value of each of
// its fields was written, so that later stages (the runner, the TUI) can
// report problems at the right place. Fields that were not written (and so
// were defaulted) have no position; FieldPos falls back to the mapping's Pos.
type Node struct {
	// Pos is the position of the mapping: its first key, or the "{" of a
	// flow mapping.
	Pos    Pos
	fields []fieldPos
}

type fieldPos struct {
	name string
	pos  Pos
}

// At returns the position of the value of field (its YAML name), or n.Pos
// when the field was not written. It costs O(fields of the mapping).
func (n *Node) FieldPos(field string) Pos {
	for _, f := range n.fields {
		if f.name == field {
			return f.pos
		}
	}
	return n.Pos
}

// Has reports whether field (its YAML name) was written with a non-null
// value.
func (n *Node) Has(field string) bool {
	for _, f := range n.fields {
		if f.name == field {
			return true
		}
	}
	return false
}

// dec turns YAML AST nodes into the scenario types, reporting every problem
// to its collector and carrying on with a zero value.
type dec struct {
	c *collector
	// src is the file's text, to find a control character in a value;
	// lines are the offsets where its lines start, computed when first
	// needed.
	src   []byte
	lines []int
}

func (d *dec) errf(p Pos, format string, args ...any) {
	d.c.add(p, fmt.Sprintf(format, args...))
}

func tokPos(tk *token.Token) Pos {
	if tk == nil || tk.Position == nil {
		return Pos{1, 1}
	}
	return Pos{tk.Position.Line, tk.Position.Column}
}

// posOf returns where node n starts.
func posOf(n ast.Node) Pos {
	switch x := n.(type) {
	case nil:
		return Pos{1, 1}
	case *ast.MappingNode:
		if x == nil {
			return Pos{1, 1}
		}
		if !x.IsFlowStyle && len(x.Values) > 0 && x.Values[0] != nil && x.Values[0].Key != nil {
			return posOf(x.Values[0].Key)
		}
		return tokPos(x.Start)
	case *ast.MappingValueNode:
		if x == nil || x.Key == nil {
			return Pos{1, 1}
		}
		return posOf(x.Key)
	}
	return tokPos(n.GetToken())
}

// describe names the kind of a node for error messages.
func describe(n ast.Node) string {
	switch x := n.(type) {
	case nil, *ast.NullNode:
		return "nothing (null)"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.BoolNode:
		return "the boolean " + strconv.FormatBool(x.Value)
	case *ast.IntegerNode:
		return "the integer " + tokText(x.Token)
	case *ast.FloatNode:
		return "the number " + tokText(x.Token)
	case *ast.InfinityNode, *ast.NanNode:
		return "the number " + tokText(n.GetToken())
	case *ast.StringNode:
		return "the string " + strconv.Quote(clip(x.Value))
	case *ast.LiteralNode:
		return "a block of text"
	}
	return "a " + n.Type().YAMLName()
}

func tokText(tk *token.Token) string {
	if tk == nil {
		return "?"
	}
	return clip(tk.Value)
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// plain reports anchors, aliases and tags, which scenario files do not use,
// and returns the node otherwise. A nil result means "skip this value".
func (d *dec) plain(n ast.Node) ast.Node {
	switch n.(type) {
	case *ast.AnchorNode:
		d.errf(posOf(n), "anchors (&name) are not supported in scenario files; write the value out")
		return nil
	case *ast.AliasNode:
		d.errf(posOf(n), "aliases (*name) are not supported in scenario files; write the value out")
		return nil
	case *ast.TagNode:
		d.errf(posOf(n), "tags (%s) are not supported in scenario files; quote a value that should be a string", tokText(n.GetToken()))
		return nil
	case *ast.MergeKeyNode:
		d.errf(posOf(n), "merge keys (<<) are not supported in scenario files")
		return nil
	}
	return n
}

func isNull(n ast.Node) bool {
	if n == nil {
		return true
	}
	_, ok := n.(*ast.NullNode)
	return ok
}

// object decodes mapping n described as what (e.g. "queue") with the
// fields of o, calling fn for each field written with a non-null value;
// it records positions in into, reports unknown and repeated keys, and
// skips null values, which count as "not written". It returns false when
// n is not a mapping.
func (d *dec) object(n ast.Node, what string, o *object, into *Node, fn func(f *field, v ast.Node)) bool {
	into.Pos = posOf(n)
	var pairs []*ast.MappingValueNode
	switch x := n.(type) {
	case *ast.MappingNode:
		pairs = x.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{x}
	default:
		d.errf(posOf(n), "%s must be a mapping with the fields %s, got %s", what, strings.Join(o.names(), ", "), describe(n))
		return false
	}
	for _, kv := range pairs {
		if kv == nil || kv.Key == nil {
			continue
		}
		kp := posOf(kv.Key)
		var key string
		switch k := kv.Key.(type) {
		case *ast.StringNode:
			key = k.Value
		case *ast.MergeKeyNode:
			d.errf(kp, "merge keys (<<) are not supported in scenario files")
			continue
		case *ast.MappingKeyNode:
			d.errf(kp, "complex mapping keys (?) are not supported in scenario files")
			continue
		default:
			key = tokText(kv.Key.GetToken())
		}
		var f *field
		for i := range o.fields {
			if o.fields[i].name == key {
				f = &o.fields[i]
				break
			}
		}
		if f == nil {
			msg := fmt.Sprintf("unknown field %q in %s", clip(key), what)
			if s := suggestName(key, o.names()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			d.errf(kp, "%s; allowed: %s", msg, strings.Join(o.names(), ", "))
			continue
		}
		if into.Has(key) {
			d.errf(kp, "field %q is written twice in %s", key, what)
			continue
		}
		v := d.plain(kv.Value)
		if v == nil && kv.Value != nil {
			// Reported by plain; count the field as written so no
			// "needs the field" error follows.
			into.fields = append(into.fields, fieldPos{key, posOf(kv.Value)})
			continue
		}
		if isNull(v) {
			continue
		}
		into.fields = append(into.fields, fieldPos{key, posOf(v)})
		fn(f, v)
	}
	return true
}

// suggestName returns the name closest to s when it looks like a typo
// (edit distance at most 2, or a third of its length). A name that would
// replace every character of s is no typo of it, so an empty s or "x"
// for "<" gets no suggestion.
func suggestName(s string, names []string) string {
	if len(s) > 64 {
		return ""
	}
	best, bestD := "", 3
	if l := len(s) / 3; l > bestD {
		bestD = l
	}
	for _, n := range names {
		if d := editDistance(s, n); d < bestD && d < max(len(s), len(n)) {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// list decodes sequence n (what names it) of at most max entries, calling
// item for each non-null entry in order. Entries beyond max are reported
// once and not decoded.
func (d *dec) list(n ast.Node, what string, max int, item func(v ast.Node)) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.errf(posOf(n), "%s must be a list, got %s", what, describe(n))
		return
	}
	vals := seq.Values
	if len(vals) > max {
		d.errf(posOf(vals[max]), "%s has %d entries; at most %d are allowed", what, len(vals), max)
		vals = vals[:max]
	}
	for _, v := range vals {
		v = d.plain(v)
		if v == nil {
			continue
		}
		if isNull(v) {
			d.errf(posOf(v), "empty entry in %s", what)
			continue
		}
		item(v)
	}
}

// maxText caps free text (narration, descriptions); maxLine caps one-line
// strings (titles, error texts, patterns); names have their own grammar.
const (
	maxText = 4096
	maxLine = 200
)

// str decodes a string of at most max bytes. A text (multi-line free text
// such as a description) may hold tabs and line breaks; no string may hold
// another control character (see controlChar).
func (d *dec) str(n ast.Node, what string, max int, text bool) (string, bool) {
	var s string
	switch x := n.(type) {
	case *ast.StringNode:
		s = x.Value
	case *ast.LiteralNode:
		if x.Value != nil {
			s = x.Value.Value
		}
	default:
		hint := ""
		switch n.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
			hint = fmt.Sprintf(" (quote it: %q)", tokText(n.GetToken()))
		}
		d.errf(posOf(n), "%s must be a string, got %s%s", what, describe(n), hint)
		return "", false
	}
	if len(s) > max {
		d.errf(posOf(n), "%s is %d bytes long; at most %d are allowed", what, len(s), max)
		return "", false
	}
	for _, r := range s {
		if controlChar(r, text) {
			d.control(n, what, r, text)
			return "", false
		}
	}
	return s, true
}

// controlChar reports whether r may not appear in a string: C0 controls,
// DEL and the C1 controls U+0080 to U+009F, which a terminal would obey.
// Tabs and line breaks are allowed in a text; in other strings line breaks
// are left to the checks of their kind ("must be one line").
func controlChar(r rune, text bool) bool {
	switch {
	case r == '\n':
		return false
	case r == '\t':
		return !text
	case r == '\r':
		return text
	}
	return r < 0x20 || r >= 0x7f && r <= 0x9f
}

// control reports the control character r in the value n of what, at its
// position in the file when it can be found there.
func (d *dec) control(n ast.Node, what string, r rune, text bool) {
	p, esc := d.findRune(n, r)
	written := ""
	if esc != "" {
		written = ", written " + esc + ","
	}
	rule := "scenario strings may not contain control characters"
	switch {
	case text:
		rule = "text may hold tabs and line breaks, but no other control characters"
	case r == '\t':
		rule = "a one-line string may not contain tabs or other control characters"
	}
	d.errf(p, "%s contains the control character %s%s at column %d; %s", what, runeName(r), written, p.Col, rule)
}

// c0Names are the abbreviations of the C0 controls, c1Names those of the
// C1 controls.
var (
	c0Names = strings.Fields("NUL SOH STX ETX EOT ENQ ACK BEL BS TAB LF VT FF CR SO SI " +
		"DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US")
	c1Names = strings.Fields("PAD HOP BPH NBH IND NEL SSA ESA HTS HTJ VTS PLD PLU RI SS2 SS3 " +
		"DCS PU1 PU2 STS CCH MW SPA EPA SOS SGCI SCI CSI ST OSC PM APC")
)

// runeName names a control character, e.g. "U+001B (ESC)".
func runeName(r rune) string {
	name := ""
	switch {
	case r >= 0 && r < 0x20:
		name = c0Names[r]
	case r == 0x7f:
		name = "DEL"
	case r >= 0x80 && r <= 0x9f:
		name = c1Names[r-0x80]
	}
	s := fmt.Sprintf("U+%04X", r)
	if name != "" {
		s += " (" + name + ")"
	}
	return s
}

// findRune returns where the value n has the character r in the file: the
// character itself, or in a double-quoted string the escape that writes it
// (returned as esc). It falls back to the start of n.
func (d *dec) findRune(n ast.Node, r rune) (p Pos, esc string) {
	tk := n.GetToken()
	if l, ok := n.(*ast.LiteralNode); ok && l.Start != nil {
		tk = l.Start // the token of a block scalar's text is placed at its end
	}
	if tk == nil || tk.Position == nil || d.src == nil {
		return posOf(n), ""
	}
	if d.lines == nil {
		d.lines = []int{0}
		for i, b := range d.src {
			if b == '\n' {
				d.lines = append(d.lines, i+1)
			}
		}
	}
	line, col := tk.Position.Line, tk.Position.Column
	if line < 1 || line > len(d.lines) || col < 1 {
		return posOf(n), ""
	}
	// Columns count runes, as the YAML lexer does.
	i := d.lines[line-1]
	for c := 1; c < col && i < len(d.src) && d.src[i] != '\n'; c++ {
		_, size := utf8.DecodeRune(d.src[i:])
		i += size
	}
	quoted := tk.Type == token.DoubleQuoteType
	// A value is found near its start: give up after a bound linear in
	// the value, so a miss cannot cost a pass over the file per value.
	budget := 1024 + 16*len(tk.Value)
	if l, ok := n.(*ast.LiteralNode); ok && l.Value != nil {
		budget += 16 * len(l.Value.Value)
	}
	for opened := false; i < len(d.src) && budget > 0; budget-- {
		c, size := utf8.DecodeRune(d.src[i:])
		switch {
		case c == r:
			return Pos{line, col}, ""
		case c == '\n':
			line, col = line+1, 0
		case quoted && c == '"':
			if opened {
				return posOf(n), ""
			}
			opened = true
		case quoted && c == '\\' && opened:
			e, w := unescape(d.src[i+size:])
			if e == r {
				return Pos{line, col}, string(d.src[i : i+size+w])
			}
			i += w
			col += utf8.RuneCount(d.src[i-w : i])
		}
		i += size
		col++
	}
	return posOf(n), ""
}

// unescape decodes the YAML escape after a backslash in a double-quoted
// string: the character it writes (-1 for none or a malformed one) and
// the bytes it takes after the backslash.
func unescape(b []byte) (rune, int) {
	if len(b) == 0 {
		return -1, 0
	}
	hex := map[byte]int{'x': 2, 'u': 4, 'U': 8}[b[0]]
	if hex > 0 {
		if len(b) < 1+hex {
			return -1, 1
		}
		v, err := strconv.ParseUint(string(b[1:1+hex]), 16, 32)
		if err != nil {
			return -1, 1
		}
		return rune(v), 1 + hex
	}
	simple := map[byte]rune{'0': 0, 'a': 7, 'b': 8, 't': 9, '\t': 9, 'n': 10, 'v': 11, 'f': 12, 'r': 13, 'e': 27, 'N': 0x85}
	if c, ok := simple[b[0]]; ok {
		return c, 1
	}
	if b[0] == '\n' || b[0] == '\r' {
		return -1, 0 // an escaped line break: leave it to the scan
	}
	_, size := utf8.DecodeRune(b)
	return -1, size
}

// line decodes a one-line string.
func (d *dec) line(n ast.Node, what string) (string, bool) {
	s, ok := d.str(n, what, maxLine, false)
	if ok && strings.ContainsAny(s, "\r\n") {
		d.errf(posOf(n), "%s must be one line", what)
		return "", false
	}
	return s, ok
}

// numberText returns the text of an unquoted plain scalar that YAML readers
// disagree on (1e3, huge integers): the parser keeps those as strings, but
// an author meant a number.
func numberText(n ast.Node) (string, bool) {
	x, ok := n.(*ast.StringNode)
	if !ok || x.Token == nil || x.Token.Type == token.SingleQuoteType || x.Token.Type == token.DoubleQuoteType {
		return "", false
	}
	s := strings.ReplaceAll(x.Value, "_", "")
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return "", false
		}
	}
	return x.Value, true
}

// bounds is the allowed range of an integer field; note, when set, says
// why (for caps).
type bounds struct {
	min, max int64
	note     string
}

func (b bounds) String() string {
	s := fmt.Sprintf("between %d and %d", b.min, b.max)
	if b.min == b.max {
		s = strconv.FormatInt(b.min, 10)
	}
	if b.note != "" {
		s += " (" + b.note + ")"
	}
	return s
}

// integer decodes an integer within b.
func (d *dec) integer(n ast.Node, what string, b bounds) (int64, bool) {
	var v int64
	switch x := n.(type) {
	case *ast.IntegerNode:
		switch y := x.Value.(type) {
		case int64:
			v = y
		case uint64:
			if y > math.MaxInt64 {
				d.errf(posOf(n), "%s must be %s, got %s", what, b, tokText(x.Token))
				return 0, false
			}
			v = int64(y)
		default:
			d.errf(posOf(n), "%s must be an integer, got %s", what, describe(n))
			return 0, false
		}
	case *ast.FloatNode:
		if x.Value != math.Trunc(x.Value) {
			d.errf(posOf(n), "%s must be a whole number, got %s", what, tokText(x.Token))
			return 0, false
		}
		if x.Value < float64(b.min) || x.Value > float64(b.max) {
			d.errf(posOf(n), "%s must be %s, got %s", what, b, tokText(x.Token))
			return 0, false
		}
		v = int64(x.Value)
	default:
		if txt, ok := numberText(n); ok {
			f, _ := strconv.ParseFloat(strings.ReplaceAll(txt, "_", ""), 64)
			if f == math.Trunc(f) && f >= float64(b.min) && f <= float64(b.max) {
				v = int64(f)
				break
			}
			if f != math.Trunc(f) && !math.IsInf(f, 0) {
				d.errf(posOf(n), "%s must be a whole number, got %s", what, clip(txt))
				return 0, false
			}
			d.errf(posOf(n), "%s must be %s, got %s", what, b, clip(txt))
			return 0, false
		}
		d.errf(posOf(n), "%s must be an integer, got %s", what, describe(n))
		return 0, false
	}
	if v < b.min || v > b.max {
		d.errf(posOf(n), "%s must be %s, got %d", what, b, v)
		return 0, false
	}
	return v, true
}

// number decodes a finite number within [min, max].
func (d *dec) number(n ast.Node, what string, lo, hi float64) (float64, bool) {
	var v float64
	switch x := n.(type) {
	case *ast.IntegerNode:
		switch y := x.Value.(type) {
		case int64:
			v = float64(y)
		case uint64:
			v = float64(y)
		}
	case *ast.FloatNode:
		v = x.Value
	default:
		txt, ok := numberText(n)
		if !ok {
			d.errf(posOf(n), "%s must be a number, got %s", what, describe(n))
			return 0, false
		}
		v, _ = strconv.ParseFloat(strings.ReplaceAll(txt, "_", ""), 64)
	}
	if math.IsNaN(v) || v < lo || v > hi {
		d.errf(posOf(n), "%s must be between %v and %v, got %s", what, lo, hi, tokText(n.GetToken()))
		return 0, false
	}
	return v, true
}

// boolean decodes true or false.
func (d *dec) boolean(n ast.Node, what string) (bool, bool) {
	x, ok := n.(*ast.BoolNode)
	if !ok {
		d.errf(posOf(n), "%s must be true or false, got %s", what, describe(n))
		return false, false
	}
	return x.Value, true
}

// enum decodes one of the allowed words.
func (d *dec) enum(n ast.Node, what string, allowed ...string) (string, bool) {
	s, ok := d.str(n, what, maxLine, false)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	if s == "" {
		d.errf(posOf(n), "%s must not be empty; allowed: %s", what, strings.Join(allowed, ", "))
		return "", false
	}
	msg := fmt.Sprintf("%s %q is not allowed", what, clip(s))
	if sg := suggestName(s, allowed); sg != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", sg)
	}
	d.errf(posOf(n), "%s; allowed: %s", msg, strings.Join(allowed, ", "))
	return "", false
}
