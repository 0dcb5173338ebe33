package sim

import (
	"reflect"
	"testing"
)

// Reset makes a used delivery, every field of it set, a fresh delivery of
// the message: a model that reuses its Delivery hands the next handler
// nothing of the last. The expectation is written out here, field by
// field, not made by NewDelivery, which runs the same reset code and so
// would agree with a field it sets wrong. The fields are walked by
// reflection, so a field added later fails here until the test is told
// what a reset leaves in it. ResetFrom, which takes the message by
// pointer, and ResetInPlace, which resets around the message the model
// wrote into d.Msg, are held to the same.
func TestResetForgetsEveryField(t *testing.T) {
	w, err := New(Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	m := Message{ID: 7, Key: "k", Body: []byte("b"), Created: 2, Origin: 1,
		Headers: Headers{Type: "t", CorrelationID: "c", CausationID: 4, Source: "s", SchemaVersion: 2, Extra: []Header{{"x", "y"}}}}
	resets := map[string]func(d *Delivery, instance string){
		"Reset":     func(d *Delivery, instance string) { d.Reset(env, m, "queue:q", "q", instance, 3) },
		"ResetFrom": func(d *Delivery, instance string) { d.ResetFrom(env, &m, "queue:q", "q", instance, 3) },
		"ResetInPlace": func(d *Delivery, instance string) {
			d.Msg = m
			d.ResetInPlace(env, "queue:q", "q", instance, 3)
		},
	}
	for _, name := range []string{"Reset", "ResetFrom", "ResetInPlace"} {
		for _, c := range []struct{ instance, want string }{{"", "q"}, {"q#2", "q#2"}} {
			t.Run(name+"/instance="+c.instance, func(t *testing.T) {
				d := staleDelivery(t)
				lc := d.lc
				resets[name](d, c.instance)
				// What every field holds after the reset, written out.
				want := map[string]any{
					"Msg":       m,
					"Where":     "queue:q",
					"Consumer":  "q",
					"Instance":  c.want, // the consumer when there is no instance
					"Attempt":   3,
					"HasPos":    false,
					"Partition": 0,
					"Offset":    int64(0),
					"Corr":      "c", // the message's correlation ID
					"Ext":       nil,
					"env":       env,
					"effects":   0,
					"skips":     0,
					"lc":        lc, // kept: keyed by ledger and consumer, never stale
				}
				got := map[string]any{"env": d.env, "effects": d.effects, "skips": d.skips, "lc": d.lc}
				v := reflect.ValueOf(d).Elem()
				for i := range v.NumField() {
					name := v.Type().Field(i).Name
					w, known := want[name]
					if !known {
						t.Errorf("field %s: tell this test what a reset leaves in it", name)
						continue
					}
					g, ok := got[name]
					if !ok {
						if !v.Field(i).CanInterface() {
							t.Errorf("unexported field %s: read it into got above", name)
							continue
						}
						g = v.Field(i).Interface()
					}
					if !reflect.DeepEqual(g, w) {
						t.Errorf("after the reset %s = %#v, want %#v", name, g, w)
					}
					delete(want, name)
				}
				for name := range want {
					t.Errorf("field %s is expected but Delivery has none: remove it from the test", name)
				}
			})
		}
	}
}

// staleDelivery returns a delivery with every field set to a value no
// reset leaves in it: the exported fields by reflection, so a new one is
// filled too (or the test says how to fill its kind), the unexported ones
// by hand.
func staleDelivery(t *testing.T) *Delivery {
	t.Helper()
	d := &Delivery{env: &Env{}, effects: 5, skips: 5, lc: LedgerConsumer{l: &Ledger{}, name: "stale", ref: 9}}
	v := reflect.ValueOf(d).Elem()
	unexported := 0
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
			f.Set(reflect.ValueOf(Message{ID: 99, Key: "stale", Body: []byte("stale"), Headers: Headers{CorrelationID: "stale"}}))
		default:
			t.Fatalf("field %s of kind %s: teach this test to fill it", v.Type().Field(i).Name, f.Kind())
		}
	}
	if unexported != 4 { // env, effects, skips and lc
		t.Fatalf("%d unexported fields: fill the new one above", unexported)
	}
	return d
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
