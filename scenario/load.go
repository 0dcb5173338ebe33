package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	yaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Load parses and validates the scenario in data; name is the file name
// used in error positions. On failure it returns an *Errors listing every
// problem found (up to MaxErrors), each as "name:line:col: message", and
// the error wraps ErrInvalid. Load never panics; its cost is linear in the
// size of data, which is capped at MaxFileSize.
func Load(name string, data []byte) (*Scenario, error) {
	c := &collector{file: name}
	s := &Scenario{File: name}
	if len(data) > MaxFileSize {
		c.add(Pos{1, 1}, fmt.Sprintf("the file is %d bytes long; scenario files are capped at %d bytes", len(data), MaxFileSize))
		return nil, c.result()
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if p, msg := checkEncoding(data); msg != "" {
		c.add(p, msg)
		return nil, c.result()
	}
	body, ok := parse(c, data)
	if !ok {
		return nil, c.result()
	}
	d := &dec{c: c, src: data}
	if body == nil {
		c.add(Pos{1, 1}, "the file is empty; a scenario needs at least title, run and topology")
		return nil, c.result()
	}
	if body = d.plain(body); body != nil {
		if d.scenario(body, s) {
			(&val{d: d, s: s}).validate()
		}
	}
	if len(c.list) == 0 {
		s.src = data
		// Every variant must make a valid scenario too.
		for i := range s.Variants {
			if _, err := s.variant(&s.Variants[i]); err != nil {
				var errs *Errors
				if errors.As(err, &errs) {
					c.list = append(c.list, errs.List...)
				}
			}
		}
	}
	if err := c.result(); err != nil {
		return nil, err
	}
	return s, nil
}

// ErrNoVariant is wrapped by the error Scenario.Variant returns for a name
// the file does not define.
var ErrNoVariant = errors.New("scenario: no such variant")

// Variant returns the scenario as its variant called name makes it: the
// file decoded again with the value of every set entry in place of the
// one written at its path, then validated like any file. A path is the
// YAML keys from the top, joined by dots, where a list entry is chosen by
// its name: topology.queues.orders.visibility_timeout, or
// actors.consumers.billing.idempotency. A path may start at a list of
// topology or actors (queues.orders.delay, consumers.billing.batch), and
// may name a field that was not written (it is added) or a mapping on the
// way that was not written (it is created); a null value removes what was
// written, so the default applies. Problems are reported as by Load, with
// messages that start `variant "NAME": `, at the set entry's position for
// a bad path or value. The result has the same Variants, and its File is
// s.File. It costs two decodings of the file.
func (s *Scenario) Variant(name string) (*Scenario, error) {
	names := make([]string, len(s.Variants))
	for i := range s.Variants {
		if s.Variants[i].Name == name {
			return s.variant(&s.Variants[i])
		}
		names[i] = s.Variants[i].Name
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w %q: %s defines no variants", ErrNoVariant, name, s.File)
	}
	return nil, fmt.Errorf("%w %q; variants: %s", ErrNoVariant, name, listNames(names))
}

// variant builds vr from s's source.
func (s *Scenario) variant(vr *Variant) (*Scenario, error) {
	c := &collector{file: s.File}
	body, ok := parse(c, s.src)
	if !ok || body == nil || len(s.src) == 0 {
		return nil, fmt.Errorf("%w: scenario %s was not loaded from a file", ErrInvalid, s.File)
	}
	// The set values of this parse, so that applying them changes
	// nothing s holds.
	fresh := &Scenario{File: s.File}
	(&dec{c: &collector{file: s.File}, src: s.src}).scenario(body, fresh)
	var sets []override
	for _, x := range fresh.Variants {
		if x.Name == vr.Name {
			sets = x.sets
		}
	}
	d := &dec{c: c, src: s.src}
	for _, o := range sets {
		body = d.apply(body, o)
	}
	t := &Scenario{File: s.File}
	if len(c.list) == 0 && d.scenario(body, t) {
		(&val{d: d, s: t}).validate()
	}
	if len(c.list) > 0 {
		for i := range c.list {
			c.list[i].Msg = fmt.Sprintf("variant %q: %s", vr.Name, c.list[i].Msg)
		}
		return nil, c.result()
	}
	t.src = s.src
	return t, nil
}

// shortcuts are the lists a set path may start with, and the section they
// are in.
var shortcuts = map[string]string{
	"queues": "topology", "topics": "topology", "logs": "topology", "groups": "topology", "services": "topology",
	"producers": "actors", "consumers": "actors", "members": "actors", "relays": "actors",
}

// apply puts o.value at o.path in the document body and returns the body.
// Problems are reported at the part of the path they are about.
func (d *dec) apply(body ast.Node, o override) ast.Node {
	segs := strings.Split(o.path, ".")
	if sec, ok := shortcuts[segs[0]]; ok && pairOf(body, segs[0]) == nil {
		segs = append([]string{sec}, segs...)
	}
	shift := len(segs) - len(strings.Split(o.path, "."))
	// at returns the position of part i of the written path.
	at := func(i int) Pos {
		col := o.pos.Col
		if o.quote {
			col++
		}
		for _, seg := range segs[shift:max(i, shift)] {
			col += len(seg) + 1
		}
		return Pos{o.pos.Line, col}
	}
	root := body
	cur, set := body, func(n ast.Node) { root = n }
	for i, seg := range segs {
		last := i == len(segs)-1
		switch x := cur.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			kv := pairOf(x, seg)
			if kv == nil {
				key := &token.Token{Type: token.StringType, Value: seg, Origin: seg,
					Position: &token.Position{Line: at(i).Line, Column: at(i).Col}}
				var v ast.Node = o.value
				if !last {
					v = ast.Mapping(key, true)
				}
				kv = ast.MappingValue(key, ast.String(key), v)
				m := asMapping(x)
				m.Values = append(m.Values, kv)
				set(m)
				if last {
					return root
				}
			} else if last {
				kv.Value = o.value
				return root
			} else if isNull(kv.Value) {
				kv.Value = ast.Mapping(kv.Key.GetToken(), true)
			}
			cur, set = kv.Value, func(n ast.Node) { kv.Value = n }
		case *ast.SequenceNode:
			j := -1
			var names []string
			for k, item := range x.Values {
				if kv := pairOf(item, "name"); kv != nil {
					if sn, ok := kv.Value.(*ast.StringNode); ok {
						names = append(names, sn.Value)
						if sn.Value == seg {
							j = k
						}
					}
				}
			}
			if j < 0 {
				msg := fmt.Sprintf("set path %q: %s has no entry named %q", clip(o.path), strings.Join(segs[shift:i], "."), clip(seg))
				if i == shift {
					msg = fmt.Sprintf("set path %q: %s has no entry named %q", clip(o.path), segs[i-1], clip(seg))
				}
				if sg := suggestName(seg, names); sg != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", sg)
				}
				if len(names) == 0 {
					msg += "; it has no named entries"
				} else {
					msg += "; names: " + listNames(names)
				}
				d.errf(at(i), "%s", msg)
				return root
			}
			if last {
				x.Values[j] = o.value
				return root
			}
			cur, set = x.Values[j], func(n ast.Node) { x.Values[j] = n }
		default:
			where := strings.Join(segs[shift:i], ".")
			if where == "" {
				where = segs[0]
			}
			d.errf(at(i), "set path %q: %s is %s, so it has no %q to set", clip(o.path), where, describe(cur), clip(seg))
			return root
		}
	}
	return root
}

// pairOf returns the entry of mapping n whose key is name, or nil.
func pairOf(n ast.Node, name string) *ast.MappingValueNode {
	var pairs []*ast.MappingValueNode
	switch x := n.(type) {
	case *ast.MappingNode:
		pairs = x.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{x}
	}
	for _, kv := range pairs {
		if kv == nil || kv.Key == nil {
			continue
		}
		if k, ok := kv.Key.(*ast.StringNode); ok && k.Value == name {
			return kv
		}
	}
	return nil
}

// asMapping returns n as a *ast.MappingNode, wrapping a single entry.
func asMapping(n ast.Node) *ast.MappingNode {
	switch x := n.(type) {
	case *ast.MappingNode:
		return x
	case *ast.MappingValueNode:
		return ast.Mapping(x.Start, false, x)
	}
	return nil
}

// utf8BOM is the byte order mark some editors write at the start of a
// UTF-8 file; Load skips it.
var utf8BOM = []byte("\xef\xbb\xbf")

// checkEncoding reports a file that is not UTF-8: one in UTF-16 or UTF-32
// (by its byte order mark, or for UTF-16 by the zero bytes between ASCII
// letters), and otherwise the first byte that is not UTF-8.
func checkEncoding(data []byte) (Pos, string) {
	const resave = "; save it as UTF-8"
	switch {
	case bytes.HasPrefix(data, []byte{0, 0, 0xfe, 0xff}), bytes.HasPrefix(data, []byte{0xff, 0xfe, 0, 0}):
		return Pos{1, 1}, "the file is UTF-32 encoded" + resave
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}), bytes.HasPrefix(data, []byte{0xff, 0xfe}):
		return Pos{1, 1}, "the file is UTF-16 encoded" + resave
	}
	// UTF-16 without a byte order mark: ASCII text has a zero byte in
	// every other place. YAML text starts with ASCII.
	var zeros [2]int
	n := min(len(data), 64) &^ 1
	for i := 0; i < n; i++ {
		if data[i] == 0 {
			zeros[i%2]++
		}
	}
	if n >= 4 && (zeros[0] == 0 && zeros[1] >= n/4 || zeros[1] == 0 && zeros[0] >= n/4) {
		return Pos{1, 1}, "the file is UTF-16 encoded" + resave
	}
	if utf8.Valid(data) {
		return Pos{}, ""
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return Pos{line, col}, fmt.Sprintf("the file is not UTF-8: the byte 0x%02X here is not part of a UTF-8 character%s", data[i], resave)
		}
		if r == '\n' {
			line, col = line+1, 0
		}
		i += size
		col++
	}
	return Pos{1, 1}, "the file is not UTF-8" + resave
}

// LoadFile reads the file at path and loads it; positions use the path as
// given. A file that cannot be read is reported as an *Errors too, at 1:1.
//
// Only regular files are read. The path is examined before it is opened,
// so a device (/dev/zero), a named pipe without a writer, a socket or a
// directory is refused at once, and never more than MaxFileSize+1 bytes
// are read, even from a file that grows while it is read.
func LoadFile(path string) (*Scenario, error) {
	data, msg := readFile(path)
	if msg != "" {
		c := &collector{file: path}
		c.add(Pos{1, 1}, msg)
		return nil, c.result()
	}
	return Load(path, data)
}

// readFile returns the contents of the regular file at path, or a message
// saying why it cannot.
func readFile(path string) ([]byte, string) {
	fi, err := os.Stat(path)
	if err != nil {
		msg := "cannot read the file: " + pathErr(err)
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(path, `./\`) {
			// A bare name may have been meant as a lesson.
			msg += "; no built-in lesson has that name either (brokerlab list shows them)"
		}
		return nil, msg
	}
	if msg := notRegular(fi.Mode()); msg != "" {
		return nil, msg
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Sprintf("the file is %d bytes long; scenario files are capped at %d bytes", fi.Size(), MaxFileSize)
	}
	betweenStatAndOpen(path)
	// Non-blocking, so that a FIFO swapped in for the file after the Stat
	// cannot block the open (waiting for a writer that never comes); the
	// flag changes nothing for a regular file.
	f, err := os.OpenFile(filepath.Clean(path), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "cannot read the file: " + pathErr(err)
	}
	defer f.Close()
	// The path may have been pointed elsewhere between Stat and Open.
	// SameFile alone would not do: a file removed and recreated as a FIFO
	// can get the same inode number back.
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) || !now.Mode().IsRegular() {
		return nil, "cannot read the file: it was replaced while it was opened; try again"
	}
	data, err := readCapped(f)
	if err != nil {
		return nil, "cannot read the file: " + pathErr(err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Sprintf("the file grew past %d bytes while it was read; scenario files are capped at %d bytes", MaxFileSize, MaxFileSize)
	}
	return data, ""
}

// betweenStatAndOpen runs in readFile between its Stat and its Open of
// path; tests replace it to swap the file in that window.
var betweenStatAndOpen = func(path string) {}

// readCapped reads r to its end, but at most MaxFileSize+1 bytes, so a
// result longer than MaxFileSize means "too long" whatever r is.
func readCapped(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, MaxFileSize+1))
}

// pathErr drops the operation and path from an *fs.PathError: the path
// is already in the message's position.
func pathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// notRegular says why a file of mode m is not read, or returns "" for a
// regular file.
func notRegular(m fs.FileMode) string {
	var what string
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	default:
		return "cannot read the file: it is not a regular file; scenario files must be regular files"
	}
	return "cannot read the file: it is " + what + ", not a regular file; scenario files must be regular files"
}

// parse turns data into the body of its single YAML document (nil for an
// empty file). Syntax errors are reported with the parser's position; a
// panic inside the parser is reported as an error, never propagated.
func parse(c *collector, data []byte) (body ast.Node, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			c.add(Pos{1, 1}, "the YAML parser failed on this file; check its syntax")
			body, ok = nil, false
		}
	}()
	tokens := lexer.Tokenize(string(data))
	if !prescan(c, tokens) {
		return nil, false
	}
	f, err := parser.Parse(tokens, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) {
			msg := "YAML syntax: " + ye.GetMessage()
			if strings.Contains(msg, "'\t'") {
				msg += " (YAML indents with spaces; a tab is allowed only inside a quoted string)"
			}
			c.add(tokPos(ye.GetToken()), msg)
		} else {
			c.add(Pos{1, 1}, "YAML syntax: "+err.Error())
		}
		return nil, false
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return nil, true
	}
	if len(docs) > 1 {
		c.add(posOf(docs[1].Body), "a scenario file holds one YAML document; remove the second one (after ---)")
		return nil, false
	}
	return docs[0].Body, true
}

// Structural limits checked on the token stream before parsing. The YAML
// parser recurses once per key of a block mapping and per level of flow
// nesting, with cost quadratic in either, so a file far beyond any real
// scenario (the deepest is about 6 levels, the widest mapping has 15 keys)
// is refused before it is parsed. The lexer is linear in the input.
const (
	maxDepth = 64  // nesting of flow collections, and of block mappings
	maxKeys  = 512 // keys of one block mapping
)

// prescan reports a token stream that exceeds maxDepth or maxKeys, or
// that has an anchor or an alias. It tracks the open block collections by
// column: a key or a "-" closes every collection opened at a greater
// column.
func prescan(c *collector, tokens token.Tokens) bool {
	type level struct {
		col, keys int
		seq       bool
	}
	var stack []level
	flow := 0
	aliases := false
	var tags []*token.Token
	push := func(l level, tk *token.Token) bool {
		if stack = append(stack, l); len(stack) > maxDepth {
			c.add(tokPos(tk), fmt.Sprintf("collections are nested more than %d deep", maxDepth))
			return false
		}
		return true
	}
	pop := func(col int, seqToo bool) {
		for n := len(stack); n > 0 && (stack[n-1].col > col || seqToo && stack[n-1].seq && stack[n-1].col == col); n-- {
			stack = stack[:n-1]
		}
	}
	for i, tk := range tokens {
		if tk == nil || tk.Position == nil {
			continue
		}
		switch tk.Type {
		case token.AnchorType, token.AliasType:
			// Refused here, once, rather than node by node: an alias
			// bomb (each anchor a list of aliases of the one before) is
			// no scenario, and its keys are not worth reporting.
			if !aliases {
				c.add(tokPos(tk), "anchors (&name) and aliases (*name) are not supported in scenario files; write the value out")
				aliases = true
			}
		case token.TagType:
			tags = append(tags, tk)
		case token.DocumentHeaderType:
			stack, flow = stack[:0], 0
		case token.MappingStartType, token.SequenceStartType:
			if flow++; flow > maxDepth {
				c.add(tokPos(tk), fmt.Sprintf("collections are nested more than %d deep", maxDepth))
				return false
			}
		case token.MappingEndType, token.SequenceEndType:
			if flow > 0 {
				flow--
			}
		case token.SequenceEntryType:
			if flow > 0 {
				continue
			}
			col := tk.Position.Column
			pop(col, false)
			if n := len(stack); n > 0 && stack[n-1].seq && stack[n-1].col == col {
				continue
			}
			if !push(level{col: col, seq: true}, tk) {
				return false
			}
		case token.MappingValueType:
			if flow > 0 {
				continue
			}
			j := i - 1
			for j >= 0 && tokens[j] != nil && tokens[j].Type == token.CommentType {
				j--
			}
			if j < 0 || tokens[j] == nil || tokens[j].Position == nil {
				continue
			}
			col := tokens[j].Position.Column
			pop(col, true)
			if n := len(stack); n > 0 && !stack[n-1].seq && stack[n-1].col == col {
				if stack[n-1].keys++; stack[n-1].keys > maxKeys {
					c.add(tokPos(tokens[j]), fmt.Sprintf("a mapping has more than %d keys", maxKeys))
					return false
				}
				continue
			}
			if !push(level{col: col, keys: 1}, tokens[j]) {
				return false
			}
		}
	}
	if aliases {
		// The file is not decoded; the other YAML features it must not
		// use are reported as decoding would.
		for _, tk := range tags {
			c.add(tokPos(tk), fmt.Sprintf("tags (%s) are not supported in scenario files; quote a value that should be a string", tokText(tk)))
		}
		return false
	}
	return true
}
