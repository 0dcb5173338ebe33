package scenario

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// The field tables of docs/scenario-format.md are generated from the
// field table: each stands between a line `<!-- fields OBJECT -->` and a
// line `<!-- end fields -->`, where OBJECT is an object's anchor or
// what (e.g. `queue`, `fan_out_retry`).

const (
	docBegin = "<!-- fields "
	docEnd   = "<!-- end fields -->"
)

// updateDoc returns doc with every generated field table replaced by the
// one the field table gives now. It fails on a marker that names no
// object or has no end.
func updateDoc(doc []byte) ([]byte, error) {
	var out bytes.Buffer
	rest := doc
	for {
		i := bytes.Index(rest, []byte(docBegin))
		if i < 0 {
			out.Write(rest)
			return out.Bytes(), nil
		}
		eol := bytes.IndexByte(rest[i:], '\n')
		if eol < 0 {
			return nil, fmt.Errorf("scenario: unterminated marker %q", rest[i:])
		}
		marker := string(rest[i : i+eol])
		name := strings.TrimSuffix(strings.TrimPrefix(marker, docBegin), " -->")
		o := docObject(name)
		if o == nil {
			return nil, fmt.Errorf("scenario: marker %q names no object of the format", marker)
		}
		end := bytes.Index(rest[i:], []byte(docEnd))
		if end < 0 {
			return nil, fmt.Errorf("scenario: marker %q has no %s", marker, docEnd)
		}
		out.Write(rest[:i+eol+1])
		out.WriteString(docTable(o))
		out.WriteString(docEnd)
		rest = rest[i+end+len(docEnd):]
	}
}

// docObject finds the object a marker names.
func docObject(name string) *object {
	for _, x := range objects {
		if defName(x.o) == name {
			return x.o
		}
	}
	return nil
}

// docTable renders o as a Markdown table, one row per field, and one per
// field of a mapping it documents inline (dead_letter.queue).
func docTable(o *object) string {
	var b strings.Builder
	b.WriteString("| Field | Type | Default | Allowed / meaning |\n|---|---|---|---|\n")
	var rows func(o *object, prefix string)
	rows = func(o *object, prefix string) {
		for i := range o.fields {
			f := &o.fields[i]
			allowed := f.allowedDoc()
			if f.doc != "" {
				if allowed != "" {
					allowed += "; "
				}
				allowed += f.doc
			}
			fmt.Fprintf(&b, "| `%s%s` | %s | %s | %s |\n", prefix, f.name, f.typeDoc(), f.defaultDoc(), cell(allowed))
			if f.inline {
				sub := prefix + f.name + "."
				if f.kind == kList {
					sub = prefix + f.name + "[]."
				}
				rows(f.of, sub)
			}
		}
	}
	rows(o, "")
	return b.String()
}

// cell escapes the pipes of a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// typeDoc names the type of f's value.
func (f *field) typeDoc() string {
	link := func(o *object) string {
		if o.title == "" || f.inline {
			return "mapping"
		}
		return "[" + o.title + "](#" + o.anchor + ")"
	}
	switch f.kind {
	case kName:
		return "name"
	case kLine:
		return "string, one line"
	case kText:
		return "text"
	case kPattern:
		return "pattern"
	case kMetric:
		return "metric name"
	case kPoint:
		return "fault point"
	case kTicks:
		if f.or != "" {
			return "ticks or `" + f.or + "`"
		}
		return "ticks"
	case kInt, kInt64, kSeed:
		return "integer"
	case kNumber:
		return "number"
	case kBool:
		return "boolean"
	case kEnum:
		return "string"
	case kObject:
		if f.or != "" {
			return "`" + f.or + "` or mapping"
		}
		return link(f.of)
	case kList:
		return "list of " + link(f.of)
	case kNames:
		return "list of names"
	case kKeys:
		return "string or list of strings"
	case kTarget:
		return "target"
	case kSet:
		return "mapping"
	}
	return "?"
}

// defaultDoc says what applies when f is not written.
func (f *field) defaultDoc() string {
	switch {
	case f.required:
		return "required"
	case f.defDoc != "":
		return f.defDoc
	}
	switch v := f.def.(type) {
	case encoding.TextMarshaler:
		b, err := v.MarshalText()
		if err != nil {
			panic(err)
		}
		return "`" + string(b) + "`"
	case string:
		return "`" + v + "`"
	case nil:
	default:
		return thousands(intOf(v))
	}
	switch f.kind {
	case kBool:
		return "false"
	case kTicks, kInt, kInt64:
		return "0"
	case kLine, kText:
		return "`\"\"`"
	case kList, kNames, kObject, kSet:
		return "none"
	}
	return "—"
}

// allowedDoc says which values f takes.
func (f *field) allowedDoc() string {
	switch f.kind {
	case kTicks, kInt, kInt64:
		if f.min == f.max {
			return "only `" + strconv.FormatInt(f.min, 10) + "`"
		}
		s := thousands(f.min) + " to " + thousands(f.max)
		if f.or != "" {
			s += ", or `" + f.or + "`"
		}
		return s
	case kSeed:
		return "0 to 2^64-1"
	case kNumber:
		if f.hi == 1e15 {
			return "−10^15 to 10^15"
		}
		return strconv.FormatFloat(f.lo, 'g', -1, 64) + " to " + strconv.FormatFloat(f.hi, 'g', -1, 64)
	case kEnum:
		return f.enumDoc()
	case kTarget:
		kinds := make([]string, len(f.of.fields))
		for i, k := range f.of.fields {
			kinds[i] = "`{" + k.name + ": NAME}`"
		}
		return strings.Join(kinds[:len(kinds)-1], ", ") + " or " + kinds[len(kinds)-1]
	case kObject:
		if f.inline || f.of.title == "" {
			return "`" + strings.Join(f.of.names(), "`, `") + "`"
		}
	}
	return ""
}

// thousands formats n with commas (1,000,000); 2^53 as such.
func thousands(n int64) string {
	if n == 1<<53 {
		return "2^53"
	}
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if len(s) > 4 {
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		s = b.String()
	}
	if neg {
		s = "-" + s
	}
	return s
}

// intOf returns the integer v of any integer type.
func intOf(v any) int64 {
	r := reflect.ValueOf(v)
	if r.CanUint() {
		return int64(r.Uint())
	}
	return r.Int()
}
