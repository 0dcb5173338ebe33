package scenario

import (
	"encoding"
	"reflect"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/faults"
)

// FaultsYAML returns plan as the faults: section of a scenario file,
// written through the field table: each rule is a list item with the
// fault fields in the table's order, only those that are set, and match
// as a nested mapping of its set patterns. A name, pattern or text is
// plain when YAML reads it back as the same string and double-quoted
// otherwise (faults.QuoteYAML); an empty plan is "faults: []". Loading the
// section gives the plan back. It costs O(rules × fields).
func FaultsYAML(plan faults.Plan) string {
	if len(plan.Rules) == 0 {
		return "faults: []\n"
	}
	var b strings.Builder
	b.WriteString("faults:\n")
	for _, r := range plan.Rules {
		f := Fault{Rule: r}
		writeFields(&b, faultObj, reflect.ValueOf(&f).Elem(), "  - ", "    ")
	}
	return b.String()
}

// writeFields writes the fields of the struct s that o describes and that
// are set (not their type's zero value), one "key: value" line each in o's
// order: the first line after lead, the others after indent. A nested
// mapping follows its key, two columns further in. It panics on a kind no
// written section holds yet, a mistake in this file.
func writeFields(b *strings.Builder, o *object, s reflect.Value, lead, indent string) {
	for i := range o.fields {
		f := &o.fields[i]
		v := s.FieldByIndex(f.index)
		if v.IsZero() {
			continue
		}
		b.WriteString(lead + f.name + ":")
		lead = indent
		if f.kind == kObject {
			b.WriteString("\n")
			writeFields(b, f.of, v, indent+"  ", indent+"  ")
			continue
		}
		b.WriteString(" " + scalarOf(f, v) + "\n")
	}
}

// scalarOf writes the value v of field f on one line.
func scalarOf(f *field, v reflect.Value) string {
	switch f.kind {
	case kName, kLine, kPattern:
		return faults.QuoteYAML(v.String())
	case kTicks, kInt, kInt64:
		return strconv.FormatInt(v.Int(), 10)
	case kNumber:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case kBool:
		return strconv.FormatBool(v.Bool())
	case kPoint, kEnum:
		if m, ok := v.Interface().(encoding.TextMarshaler); ok {
			if t, err := m.MarshalText(); err == nil {
				return string(t)
			}
		}
		return v.String()
	}
	panic("scenario: no writer for " + f.name)
}
