package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/faults"
	yaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// ErrRewrite is wrapped by the errors of Rewrite: a document whose
// top-level sections it cannot find line by line.
var ErrRewrite = errors.New("scenario: cannot rewrite the file")

// Rewrite is a text edit of a scenario document that keeps everything it
// does not change byte for byte: comments, order, layout.
type Rewrite struct {
	// Header is prepended as comment lines ("# " is added to each).
	Header string
	// Seed, when non-nil, replaces the seed (or adds one).
	Seed *uint64
	// Sections replace whole top-level sections: the key ("faults") maps
	// to the new text, which starts with "KEY:" and ends with a newline,
	// or is "" to remove the section. A section the document does not
	// have is appended (unless its text is "").
	Sections map[string]string
}

// Apply returns src with the edit applied. src must be a block mapping
// with its top-level keys at column 1, as scenario files are written;
// anything else is an error wrapping ErrRewrite. Cost: O(len(src)).
func (rw Rewrite) Apply(src []byte) ([]byte, error) {
	src = bytes.TrimPrefix(src, utf8BOM)
	spans, err := topLevel(src)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(src), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	repl := map[string]string{}
	for k, v := range rw.Sections {
		repl[k] = v
	}
	if rw.Seed != nil {
		repl["seed"] = "seed: " + strconv.FormatUint(*rw.Seed, 10) + "\n"
	}
	var b strings.Builder
	if rw.Header != "" {
		for _, l := range strings.Split(strings.TrimSuffix(rw.Header, "\n"), "\n") {
			b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	next := 0 // the next line of src to copy
	for _, sp := range spans {
		text, ok := repl[sp.key]
		if !ok {
			continue
		}
		delete(repl, sp.key)
		for ; next < sp.from; next++ {
			b.WriteString(lines[next])
		}
		b.WriteString(text)
		next = sp.to
	}
	for ; next < len(lines); next++ {
		b.WriteString(lines[next])
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	// Sections the document lacks, in a fixed order.
	for _, k := range []string{"seed", "faults"} {
		if text := repl[k]; text != "" {
			b.WriteString(text)
		}
		delete(repl, k)
	}
	for _, k := range keysInOrder(repl) {
		b.WriteString(repl[k])
	}
	return []byte(b.String()), nil
}

// span is one top-level section of a document: lines [from, to) (0-based),
// from its key to the line before the next key; comment and blank lines
// just before the next key belong to the next one.
type span struct {
	key      string
	from, to int
}

// topLevel returns the top-level sections of src in order.
func topLevel(src []byte) ([]span, error) {
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRewrite, err)
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, fmt.Errorf("%w: want one YAML document", ErrRewrite)
	}
	var pairs []*ast.MappingValueNode
	switch m := f.Docs[0].Body.(type) {
	case *ast.MappingNode:
		if m.IsFlowStyle {
			return nil, fmt.Errorf("%w: the document is a flow mapping ({...}); write it in block style", ErrRewrite)
		}
		pairs = m.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{m}
	default:
		return nil, fmt.Errorf("%w: the document is not a mapping", ErrRewrite)
	}
	lines := strings.Split(string(src), "\n")
	var out []span
	for i, kv := range pairs {
		tk := kv.Key.GetToken()
		if tk == nil || tk.Position == nil || tk.Position.Column != 1 {
			return nil, fmt.Errorf("%w: top-level key %q is not at column 1", ErrRewrite, kv.Key.String())
		}
		from := tk.Position.Line - 1
		if i > 0 {
			// Comments at column 1 and blank lines right above a key go
			// with it; the leading comments of the file stay at its top.
			prev := out[i-1].from
			for from-1 > prev && (lines[from-1] == "" || strings.HasPrefix(lines[from-1], "#") || strings.TrimSpace(lines[from-1]) == "") {
				from--
			}
			out[i-1].to = from
		}
		out = append(out, span{key: strings.TrimSpace(kv.Key.String()), from: from, to: len(lines)})
	}
	return out, nil
}

// keysInOrder returns the keys of m, sorted.
func keysInOrder(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// VariantSource returns the variant called name of s as a document of its
// own: s's source with every top-level section that a set entry of the
// variant changes written out again with the entry applied (see
// sectionYAML; comments inside such a section are lost), every other section
// kept byte for byte, the variants section removed, and a comment at the
// top that names the variant and its description. Loading the result
// gives the scenario s.Variant(name) returns, so a reproducer written
// from it (MinFile) runs the variant with plain brokerlab run. s must
// have been loaded from text (Load, LoadFile, LoadLesson). The result is
// loaded before it is returned; a document that does not load is an
// error wrapping ErrRewrite. Cost: two decodings of the file and one of
// the result.
func (s *Scenario) VariantSource(name string) ([]byte, error) {
	if _, err := s.Variant(name); err != nil {
		return nil, err
	}
	var vr *Variant
	for i := range s.Variants {
		if s.Variants[i].Name == name {
			vr = &s.Variants[i]
		}
	}
	c := &collector{file: s.File}
	body, ok := parse(c, s.src)
	if !ok || body == nil {
		return nil, fmt.Errorf("%w: %s does not parse again", ErrRewrite, s.File)
	}
	// Fresh set values, as Variant takes them: applying them must not
	// change what s holds.
	fresh := &Scenario{File: s.File}
	(&dec{c: &collector{file: s.File}, src: s.src}).scenario(body, fresh)
	var sets []override
	for _, x := range fresh.Variants {
		if x.Name == name {
			sets = x.sets
		}
	}
	body, ok = parse(c, s.src)
	if !ok || body == nil {
		return nil, fmt.Errorf("%w: %s does not parse again", ErrRewrite, s.File)
	}
	d := &dec{c: c, src: s.src}
	var touched []string
	for _, o := range sets {
		// The section the path is in, as apply finds it.
		k, _, _ := strings.Cut(o.path, ".")
		if sec, ok := shortcuts[k]; ok && pairOf(body, k) == nil {
			k = sec
		}
		body = d.apply(body, o)
		if !slices.Contains(touched, k) {
			touched = append(touched, k)
		}
	}
	if len(c.list) > 0 {
		return nil, fmt.Errorf("%w: variant %q: %w", ErrRewrite, name, c.result())
	}
	sections := map[string]string{"variants": ""}
	for _, k := range touched {
		kv := pairOf(body, k)
		if kv == nil {
			return nil, fmt.Errorf("%w: variant %q: section %s not found after its set entries", ErrRewrite, name, k)
		}
		var v any
		if kv.Value != nil {
			if err := yaml.NodeToValue(kv.Value, &v, yaml.UseOrderedMap()); err != nil {
				return nil, fmt.Errorf("%w: variant %q: section %s: %v", ErrRewrite, name, k, err)
			}
		}
		text, err := sectionYAML(k, v)
		if err != nil {
			return nil, fmt.Errorf("%w: variant %q: section %s: %v", ErrRewrite, name, k, err)
		}
		sections[k] = text
	}
	hdr := fmt.Sprintf("Variant %q of %s, its set entries applied", name, s.File)
	if vr != nil && vr.Description != "" {
		hdr += ":\n" + wrapWords(vr.Description, 76)
	}
	data, err := Rewrite{Header: hdr + "\n", Sections: sections}.Apply(s.src)
	if err != nil {
		return nil, err
	}
	if _, err := Load(s.File, data); err != nil {
		return nil, fmt.Errorf("%w: variant %q written out does not load: %w", ErrRewrite, name, err)
	}
	return data, nil
}

// wrapWords breaks text into lines of at most width bytes at spaces (a
// longer word stays whole).
func wrapWords(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len(w) > width:
			b.WriteString("\n")
			n = 0
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// Source returns the text of what a command-line argument names, as
// Resolve loads it: the embedded file of a built-in lesson, or the file
// at path arg, and the name positions use.
func Source(arg string) (name string, src []byte, err error) {
	if isLesson(arg) {
		name = "lessons/" + arg + ".yaml"
		src, err = lessonFiles.ReadFile(name)
		return name, src, err
	}
	data, msg := readFile(arg)
	if msg != "" {
		c := &collector{file: arg}
		c.add(Pos{1, 1}, msg)
		return arg, nil, c.result()
	}
	return arg, data, nil
}

// Repro is what a reproducer file is written from: a failing seed, its
// failure in words and the smallest fault schedule found that still makes
// it (package lab's Shrink finds them).
type Repro struct {
	Seed uint64
	// Failure is the expectation as written ("exactly_once(billing)") or
	// "runtime error"; Detail its first violation, measured value or
	// error.
	Failure, Detail string
	// Minimal is the minimal schedule as a replay of it recorded it, so
	// its ticks and opportunity numbers are exact.
	Minimal faults.Schedule
	// Fired is how many firings the seed's own run had, and Runs how many
	// runs the shrink spent.
	Fired, Runs int
}

// FilePlan returns the explicit plan of the schedule min in the scenario
// file's vocabulary: a match.where the models name "outbox:S" is the file's
// "service:S", and an instance NAME#i of a consumer with instances, which
// is not a name of the file, is the pattern NAME#[i] that matches it
// alone. Every rule fires once, in the one-tick window of its decision.
func FilePlan(min faults.Schedule) faults.Plan {
	p := min.Plan()
	for i := range p.Rules {
		m := &p.Rules[i].Match
		if name, ok := strings.CutPrefix(m.Where, "outbox:"); ok {
			m.Where = "service:" + name
		}
		if c := m.Consumer; literal(c) && isInstance(c) {
			m.Consumer = c[:len(c)-1] + "[" + c[len(c)-1:] + "]"
		}
	}
	return p
}

// isInstance reports whether name has the form NAME#i of an instance.
func isInstance(name string) bool {
	i := strings.LastIndexByte(name, '#')
	if i <= 0 || i == len(name)-1 {
		return false
	}
	for _, r := range name[i+1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// MinFile returns the reproducer of rp as a scenario document: src (the
// text s was loaded from) with its faults: section replaced by
// FilePlan(rp.Minimal), its seed fixed to rp.Seed and its variants: section
// removed (their overrides may name rules that are gone), headed by
// comment lines that give the schedule in words and the command that
// reproduces it. A fault that a disable_fault action of the timeline
// names and the plan no longer has is kept as a rule that is never
// active, so the file still loads. out is the name the file will be
// written as. MinFile only writes: package lab's MinFile loads and runs the
// result to check that it fails the same way. Cost: linear in src and the
// schedule.
func (s *Scenario) MinFile(rp Repro, src []byte, out string) ([]byte, error) {
	plan := FilePlan(rp.Minimal)
	// Plan names a rule's second firing "dup-2": when the file has a rule
	// of that name of its own (which a disable_fault action may switch
	// off), the generated rule takes a name the file does not use.
	taken := map[string]bool{}
	for _, f := range s.Faults {
		taken[f.Name] = true
	}
	for _, r := range plan.Rules {
		taken[r.Name] = true
	}
	for i := range plan.Rules {
		r := &plan.Rules[i]
		base := ""
		if i < len(rp.Minimal.Decisions) {
			base = rp.Minimal.Decisions[i].Rule
		}
		if base == "" || r.Name == base || !s.hasFault(r.Name) {
			continue
		}
		name := r.Name
		for k := 2; taken[name]; k++ {
			name = base + "-shrunk-" + strconv.Itoa(k)
		}
		taken[name] = true
		r.Name = name
	}
	have := map[string]bool{}
	for _, r := range plan.Rules {
		have[r.Name] = true
	}
	for _, a := range s.Timeline {
		if a.Action != ActionDisableFault || have[a.Fault] {
			continue
		}
		for _, f := range s.Faults {
			if f.Name == a.Fault {
				// Active only after the run's last tick: it never fires
				// (MinFile's own run checks that the failure stays).
				end := min(s.Run.Cap()+1, MaxTicks-1)
				plan.Rules = append(plan.Rules, faults.Rule{Name: f.Name, Point: f.Point, From: end, Until: end + 1})
				have[f.Name] = true
			}
		}
	}
	var hdr strings.Builder
	fmt.Fprintf(&hdr, "Reproducer written by brokerlab explore from %s, seed %d.\n", s.File, rp.Seed)
	fmt.Fprintf(&hdr, "It fails %s: %s\n", rp.Failure, rp.Detail)
	n := rp.Minimal.Len()
	fmt.Fprintf(&hdr, "Fault schedule (%d of the %d firings of the seed's run, shrunk in %d runs):\n", n, rp.Fired, rp.Runs)
	for _, d := range rp.Minimal.Decisions {
		hdr.WriteString("  " + d.Words() + "\n")
	}
	if n == 0 {
		hdr.WriteString("  none: the seed fails without any fault\n")
	}
	hdr.WriteString("The faults section below fires exactly that schedule, and the seed is fixed.\n")
	hdr.WriteString("Reproduce: brokerlab run " + out + "\n\n")
	seed := rp.Seed
	return Rewrite{Header: hdr.String(), Seed: &seed,
		Sections: map[string]string{"faults": FaultsYAML(plan), "variants": ""}}.Apply(src)
}

// hasFault reports whether the file has a fault rule named name.
func (s *Scenario) hasFault(name string) bool {
	for _, f := range s.Faults {
		if f.Name == name {
			return true
		}
	}
	return false
}
