package eventlog

import (
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// A delivery's message is written in place by entry.fill, over the
// message of the delivery before: every field, of the message and of its
// headers, must be written, so that nothing of the stale message shows
// through, and the result must be the message entry.message builds, for
// a record with an aside and without, with extra headers and without.
func TestFillWritesEveryField(t *testing.T) {
	hdrs := []*sim.Headers{
		{Type: "t", CorrelationID: "c", Source: "s"},
		{Type: "t", CausationID: 3, SchemaVersion: 2, Extra: []sim.Header{{Name: "n", Value: "v"}}},
		{},
	}
	for _, hdr := range hdrs {
		e := &entry{id: 7, tick: 3, key: "k", body: []byte("b"), hdr: hdr}
		for _, h := range []held{{e: e}, {e: e, a: &aside{off: 4, created: 2, origin: 5}}} {
			var stale sim.Message
			staleFields(t, reflect.ValueOf(&stale).Elem())
			h.fill(&stale)
			if want := h.message(); !reflect.DeepEqual(stale, want) {
				t.Fatalf("filled %+v, want %+v", stale, want)
			}
		}
	}
}

// staleFields sets every field of the struct v, and of the structs in it,
// to a value no message of the test has.
func staleFields(t *testing.T, v reflect.Value) {
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
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			if e := f.Index(0); e.Kind() == reflect.Struct {
				staleFields(t, e)
			}
		case reflect.Struct:
			staleFields(t, f)
		default:
			t.Fatalf("field %s of kind %s: teach this test to fill it", v.Type().Field(i).Name, f.Kind())
		}
	}
}
