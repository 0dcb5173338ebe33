package scenario

import (
	"fmt"
	"strconv"
	"strings"

	yaml "github.com/goccy/go-yaml"
)

// flowWidth is the longest line sectionYAML writes a flat mapping or list
// on in flow style ({a: 1, b: x}); a longer one is written as a block.
const flowWidth = 140

// sectionYAML writes the top-level section key with value v (decoded with
// yaml.UseOrderedMap) in the style scenario files are written in: blocks
// for nested mappings and lists, a list item or a value that holds only
// scalars (and mappings or lists of scalars) on one line in flow style
// when it fits in flowWidth, and a string of several lines as a literal
// block. It ends with a newline.
func sectionYAML(key string, v any) (string, error) {
	var b strings.Builder
	if err := emitPair(&b, key, v, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

// emitPair writes "key: value" at indent.
func emitPair(b *strings.Builder, key string, v any, indent int) error {
	k, err := scalarYAML(key, true)
	if err != nil {
		return err
	}
	pad := strings.Repeat(" ", indent)
	b.WriteString(pad + k + ":")
	switch x := v.(type) {
	case nil:
		b.WriteString("\n")
		return nil
	case yaml.MapSlice:
		if len(x) == 0 {
			b.WriteString(" {}\n")
			return nil
		}
	case []any:
		if len(x) == 0 {
			b.WriteString(" []\n")
			return nil
		}
	case string:
		if strings.Contains(x, "\n") {
			b.WriteString(" " + literalYAML(x, indent+2))
			return nil
		}
	}
	switch x := v.(type) {
	case yaml.MapSlice, []any:
		// A list of mappings or lists is a block of items, as files are
		// written; a mapping, or a list of scalars, may be one flow line.
		if f, ok := flowYAML(v); ok && !nestedList(x) && indent+len(k)+2+len(f) <= flowWidth {
			b.WriteString(" " + f + "\n")
			return nil
		}
		b.WriteString("\n")
		return emitValue(b, v, indent+2)
	}
	sc, err := scalarYAML(v, false)
	if err != nil {
		return err
	}
	b.WriteString(" " + sc + "\n")
	return nil
}

// nestedList reports whether v is or holds, at any depth, a list that
// holds a mapping or a list: such a value is written as a block.
func nestedList(v any) bool {
	switch x := v.(type) {
	case yaml.MapSlice:
		for _, it := range x {
			if nestedList(it.Value) {
				return true
			}
		}
	case []any:
		for _, it := range x {
			switch it.(type) {
			case yaml.MapSlice, []any:
				return true
			}
		}
	}
	return false
}

// emitValue writes a mapping or list as a block at indent (a scalar never
// gets here: emitPair writes it inline).
func emitValue(b *strings.Builder, v any, indent int) error {
	switch x := v.(type) {
	case yaml.MapSlice:
		for _, it := range x {
			k, ok := it.Key.(string)
			if !ok {
				k = fmt.Sprint(it.Key)
			}
			if err := emitPair(b, k, it.Value, indent); err != nil {
				return err
			}
		}
		return nil
	case []any:
		pad := strings.Repeat(" ", indent)
		for _, it := range x {
			if f, ok := flowYAML(it); ok && !nestedList(it) && indent+2+len(f) <= flowWidth {
				b.WriteString(pad + "- " + f + "\n")
				continue
			}
			if s, ok := it.(string); ok && strings.Contains(s, "\n") {
				b.WriteString(pad + "- " + literalYAML(s, indent+2))
				continue
			}
			// A block item: its first line goes after the dash.
			var sub strings.Builder
			if err := emitValue(&sub, it, indent+2); err != nil {
				return err
			}
			text := sub.String()
			if text == "" {
				b.WriteString(pad + "- {}\n")
				continue
			}
			b.WriteString(pad + "- " + strings.TrimPrefix(text, pad+"  "))
		}
		return nil
	}
	return fmt.Errorf("%w: cannot write %T as a block", ErrRewrite, v)
}

// flowYAML writes v in flow style, and false when v holds a string of
// several lines.
func flowYAML(v any) (string, bool) {
	switch x := v.(type) {
	case yaml.MapSlice:
		parts := make([]string, 0, len(x))
		for _, it := range x {
			k, ok := it.Key.(string)
			if !ok {
				return "", false
			}
			ks, err := scalarYAML(k, true)
			if err != nil {
				return "", false
			}
			vs, ok := flowYAML(it.Value)
			if !ok {
				return "", false
			}
			parts = append(parts, ks+": "+vs)
		}
		return "{" + strings.Join(parts, ", ") + "}", true
	case []any:
		parts := make([]string, 0, len(x))
		for _, it := range x {
			vs, ok := flowYAML(it)
			if !ok {
				return "", false
			}
			parts = append(parts, vs)
		}
		return "[" + strings.Join(parts, ", ") + "]", true
	case string:
		if strings.Contains(x, "\n") {
			return "", false
		}
	}
	s, err := scalarYAML(v, true)
	return s, err == nil
}

// scalarYAML writes a scalar on one line; in flow style a string that
// holds a flow indicator is double-quoted.
func scalarYAML(v any, flow bool) (string, error) {
	if v == nil {
		return "null", nil
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrRewrite, err)
	}
	s := strings.TrimSuffix(string(out), "\n")
	if str, ok := v.(string); ok && !strings.HasPrefix(s, `"`) && !strings.HasPrefix(s, `'`) &&
		(strings.Contains(s, "\n") || flow && strings.ContainsAny(str, ",[]{}:#&*!|>%@`\"'") || str == "") {
		s = strconv.Quote(str)
	}
	if strings.Contains(s, "\n") {
		return "", fmt.Errorf("%w: a scalar of several lines", ErrRewrite)
	}
	return s, nil
}

// literalYAML writes a string of several lines as a literal block whose
// lines are at indent, with the chomping indicator that keeps its final
// newlines exactly.
func literalYAML(s string, indent int) string {
	pad := strings.Repeat(" ", indent)
	head := "|"
	body := s
	switch {
	case !strings.HasSuffix(s, "\n"):
		head = "|-"
	case strings.HasSuffix(s, "\n\n"):
		head = "|+"
		body = strings.TrimSuffix(s, "\n")
	default:
		body = strings.TrimSuffix(s, "\n")
	}
	if strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\n") {
		head += "2" // the first line's indentation is content
	}
	var b strings.Builder
	b.WriteString(head + "\n")
	for _, l := range strings.Split(body, "\n") {
		if l == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString(pad + l + "\n")
	}
	return b.String()
}
