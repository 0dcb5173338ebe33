package sim

import (
	"reflect"
	"testing"
)

// Reset makes a used delivery, every field of it set, equal to a new one:
// a model that reuses its Delivery hands the next handler nothing of the
// last. The used delivery's exported fields are filled by reflection, so
// a field added later and forgotten by Reset fails here.
func TestResetForgetsEveryField(t *testing.T) {
	w, err := New(Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m := Message{ID: 7, Key: "k", Body: []byte("b"), Headers: Headers{Type: "t", CorrelationID: "c"}, Created: 2, Origin: 1}
	want := NewDelivery(w.Env(), m, "queue:q", "q", "", 3)

	d := &Delivery{env: &Env{}, effects: 5, skips: 5} // the unexported fields, by hand
	v := reflect.ValueOf(d).Elem()
	filled, unexported := 0, 0
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			unexported++
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("stale")
		case reflect.Int, reflect.Int64:
			f.SetInt(99)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Interface:
			f.Set(reflect.ValueOf("stale"))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Struct:
			f.Set(reflect.ValueOf(Message{ID: 99, Key: "stale"}))
		default:
			t.Fatalf("field %s of kind %s: teach this test to fill it", v.Type().Field(i).Name, f.Kind())
		}
		filled++
	}
	d.Reset(w.Env(), m, "queue:q", "q", "", 3)
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("after Reset\n%+v\nwant\n%+v", *d, *want)
	}
	if unexported != 4 || filled == 0 { // env, effects, skips and the ledger handle cache, which Reset keeps
		t.Fatalf("%d exported fields filled, %d unexported: fill the new unexported field above", filled, unexported)
	}
}
