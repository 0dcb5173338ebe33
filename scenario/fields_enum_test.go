package scenario

import (
	"encoding"
	"fmt"
	"reflect"
	"testing"
)

// fileVocabulary lists the enum fields whose words are the format's own
// (the run condition, the timeline's actions, the checks and comparison
// operators of expectations): no model type names them, so they stay
// strings. Every other enum field must decode into a model type.
var fileVocabulary = map[string]bool{
	"run.until": true, "timeline action.action": true, "expectation.check": true, "expectation.op": true,
	"timeline action.from": true, // where a read action reads: the group's projection or its source
}

// TestEnumFieldsUseModelTypes fails when an enum field of the table is a
// plain string outside the file's own vocabulary (a runner would have to
// remap it), or when its words are not exactly the model type's one
// spelling: each word unmarshals, marshals back and prints (String) as
// itself, and the default is one of the words.
func TestEnumFieldsUseModelTypes(t *testing.T) {
	seen := 0
	for _, x := range objects {
		if x.t == nil {
			continue
		}
		st := reflect.TypeOf(x.t)
		for i := range x.o.fields {
			f := &x.o.fields[i]
			if f.kind != kEnum || f.gofield == "" {
				continue
			}
			seen++
			name := x.o.what + "." + f.name
			sf, _ := st.FieldByName(f.gofield)
			ptr := reflect.New(sf.Type)
			u, ok := ptr.Interface().(encoding.TextUnmarshaler)
			if !ok {
				if !fileVocabulary[name] {
					t.Errorf("%s is a %s, not a model type with UnmarshalText", name, sf.Type)
				}
				continue
			}
			if fileVocabulary[name] {
				t.Errorf("%s is listed as the file's vocabulary but decodes into %s", name, sf.Type)
			}
			for _, w := range f.enum {
				if err := u.UnmarshalText([]byte(w)); err != nil {
					t.Errorf("%s: %s does not take %q: %v", name, sf.Type, w, err)
					continue
				}
				v := ptr.Elem().Interface()
				b, err := v.(encoding.TextMarshaler).MarshalText()
				if err != nil || string(b) != w {
					t.Errorf("%s: %q marshals as %q, %v", name, w, b, err)
				}
				if s, ok := v.(fmt.Stringer); ok && s.String() != w {
					t.Errorf("%s: %q prints as %q", name, w, s.String())
				}
			}
			if err := u.UnmarshalText([]byte("no-such-word")); err == nil {
				t.Errorf("%s: %s takes any word", name, sf.Type)
			}
			if f.def != nil {
				b, err := f.def.(encoding.TextMarshaler).MarshalText()
				if err != nil || !contains(f.enum, string(b)) {
					t.Errorf("%s: default %q is not one of %q (%v)", name, b, f.enum, err)
				}
			}
		}
	}
	if seen < 15 {
		t.Errorf("checked %d enum fields; the table has more", seen)
	}
}
