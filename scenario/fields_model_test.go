package scenario

import (
	"reflect"
	"testing"
)

// TestSectionsDecodeIntoModelConfigs checks that the sections that are a
// model's configuration decode every key into that configuration, except
// the few a file has and the model does not, so the file format cannot
// grow a mirror of a model field again. Each model config is named by
// its embedded field (Queue{}.Config is a queue.Config, Fault{}.Rule a
// faults.Rule, and so on), which must also be an embedded one.
func TestSectionsDecodeIntoModelConfigs(t *testing.T) {
	for _, tc := range []struct {
		o        *object
		section  any
		config   any
		fileOnly []string // keys that name things by name, or that a hook spreads over several model fields
	}{
		{queueObj, Queue{}, Queue{}.Config, []string{"dead_letter"}},
		{producerObj, Producer{}, Producer{}.Config, []string{"to", "keys"}},
		{fanOutRetryObj, FanOutRetry{}, FanOutRetry{}.ForwardRetry, nil},
		{faultObj, Fault{}, Fault{}.Rule, nil},
		{matchObj, Fault{}.Match, Fault{}.Match, nil},
	} {
		st, ct := reflect.TypeOf(tc.section), reflect.TypeOf(tc.config)
		embedded := -1
		for i := 0; i < st.NumField(); i++ {
			if f := st.Field(i); f.Anonymous && f.Type == ct {
				embedded = i
			}
		}
		if embedded < 0 && st != ct {
			t.Errorf("%s does not embed %s", st, ct)
			continue
		}
		for _, f := range tc.o.fields {
			own := false
			for _, k := range tc.fileOnly {
				own = own || k == f.name
			}
			inConfig := st == ct && f.index != nil || len(f.index) == 2 && f.index[0] == embedded
			switch {
			case own && inConfig:
				t.Errorf("%s.%s is listed as the file's own but decodes into %s", tc.o.what, f.name, ct)
			case !own && !inConfig:
				t.Errorf("%s.%s does not decode into %s (Go field %q)", tc.o.what, f.name, ct, f.gofield)
			}
		}
	}
}
