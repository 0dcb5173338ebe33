package sim

import (
	"reflect"
	"testing"
)

// Reset makes a used delivery, every field of it set, equal to a new one:
// a model that reuses its Delivery hands the next handler nothing of the
// last. The used delivery's exported fields are filled by reflection, so
// a field added later and forgotten by Reset fails here.
// ResetFrom, which takes the message by pointer, is held to the same.
func TestResetForgetsEveryField(t *testing.T) {
	w, err := New(Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m := Message{ID: 7, Key: "k", Body: []byte("b"), Headers: Headers{Type: "t", CorrelationID: "c"}, Created: 2, Origin: 1}
	want := NewDelivery(w.Env(), m, "queue:q", "q", "", 3)
	resets := map[string]func(d *Delivery){
		"Reset":     func(d *Delivery) { d.Reset(w.Env(), m, "queue:q", "q", "", 3) },
		"ResetFrom": func(d *Delivery) { d.ResetFrom(w.Env(), &m, "queue:q", "q", "", 3) },
		"ResetInPlace": func(d *Delivery) {
			d.Msg = m
			d.ResetInPlace(w.Env(), "queue:q", "q", "", 3)
		},
	}
	for _, name := range []string{"Reset", "ResetFrom", "ResetInPlace"} {
		t.Run(name, func(t *testing.T) { resetForgets(t, want, resets[name]) })
	}
}

// resetForgets fills every field of a delivery, resets it and compares it
// with want.
func resetForgets(t *testing.T, want *Delivery, reset func(d *Delivery)) {

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
	reset(d)
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("after the reset\n%+v\nwant\n%+v", *d, *want)
	}
	if unexported != 4 || filled == 0 { // env, effects, skips and the ledger handle cache, which Reset keeps
		t.Fatalf("%d exported fields filled, %d unexported: fill the new unexported field above", filled, unexported)
	}
}

// ResetFrom makes each delivery from the message as it is: a handler that
// changes its delivery's message does not change the next delivery made
// from it. The body is shared, not copied, as ResetFrom's doc says: a
// model pays for no copy of it per delivery.
func TestResetFromCopiesTheMessage(t *testing.T) {
	m := Message{ID: 7, Key: "k", Body: []byte("body"), Headers: Headers{Type: "t", CorrelationID: "c"}}
	var d Delivery
	d.ResetFrom(nil, &m, "topic:t", "s", "", 1)
	if &d.Msg.Body[0] != &m.Body[0] {
		t.Fatal("ResetFrom copied the body; it shares the message's")
	}
	d.Msg.Key, d.Msg.ID, d.Msg.Headers.Type = "changed", 99, "changed"
	d.ResetFrom(nil, &m, "topic:t", "s", "", 2)
	if d.Msg.Key != "k" || d.Msg.ID != 7 || d.Msg.Headers.Type != "t" || d.Corr != "c" || d.Attempt != 2 {
		t.Fatalf("the next delivery kept the last handler's change: %+v", d)
	}
}
