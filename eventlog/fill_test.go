package eventlog

import (
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// A delivery's message is written in place by entry.fill, over the
// message of the delivery before: every field must be written, so that
// nothing of the stale message shows through, and the result must be the
// message entry.message builds, for a record with an aside and without.
func TestFillWritesEveryField(t *testing.T) {
	hdr := &sim.Headers{Type: "t", CorrelationID: "c", Source: "s"}
	e := &entry{id: 7, tick: 3, key: "k", body: []byte("b"), hdr: hdr}
	for _, h := range []held{{e: e}, {e: e, a: &aside{off: 4, created: 2, origin: 5}}} {
		var stale sim.Message
		v := reflect.ValueOf(&stale).Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.String:
				f.SetString("stale")
			case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Uint32:
				if f.CanInt() {
					f.SetInt(99)
				} else {
					f.SetUint(99)
				}
			case reflect.Slice:
				f.Set(reflect.ValueOf([]byte("stale")))
			case reflect.Struct:
				f.Set(reflect.ValueOf(sim.Headers{Type: "stale", CorrelationID: "stale"}))
			default:
				t.Fatalf("field %s of kind %s: teach this test to fill it", v.Type().Field(i).Name, f.Kind())
			}
		}
		h.fill(&stale)
		if want := h.message(); !reflect.DeepEqual(stale, want) {
			t.Fatalf("filled %+v, want %+v", stale, want)
		}
	}
}
