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

// resetMessages are messages that differ in every field, and in which of
// the fields most messages leave empty (the correlation ID and the extra
// headers) they leave empty, nil or empty but not nil: a reset from one
// to the next covers every pair of a field's old and new value.
func resetMessages() []Message {
	full := func(id ID, s string) Message {
		return Message{ID: id, Key: "key-" + s, Body: []byte("body-" + s), Created: Tick(id) + 1, Origin: id + 2,
			Headers: Headers{Type: "type-" + s, CorrelationID: "corr-" + s, CausationID: id + 3, Source: "src-" + s,
				SchemaVersion: int(id) + 4, Extra: []Header{{"x", s}}}}
	}
	a, b := full(1, "a"), full(2, "b")
	bare := full(3, "c")
	bare.Headers.CorrelationID, bare.Headers.Extra = "", nil
	empty := full(4, "d")
	empty.Body, empty.Headers.Extra = []byte{}, []Header{}
	shared := full(5, "e") // a's body and extra headers, re-sliced
	shared.Body, shared.Headers.Extra = a.Body[:2], a.Headers.Extra[:0]
	return []Message{a, b, bare, empty, shared, {}}
}

// sameMessage reports whether a and b are the same message: deeply equal
// (so nil and empty slices differ), with slices of the same arrays.
func sameMessage(a, b Message) bool {
	return reflect.DeepEqual(a, b) && sameArray(a.Body, b.Body) && sameArray(a.Headers.Extra, b.Headers.Extra)
}

// sameArray reports whether a and b begin at the same element (or are
// both without elements to begin at), and have the same length and
// capacity.
func sameArray[E any](a, b []E) bool {
	if len(a) != len(b) || cap(a) != cap(b) {
		return false
	}
	if cap(a) == 0 {
		return (a == nil) == (b == nil)
	}
	return &a[:1][0] == &b[:1][0]
}

// fillMessage returns a message with every field set from id and s by
// reflection, so that a field added to Message or Headers is set too, or
// the test says how to fill its kind.
func fillMessage(t *testing.T, id int64, s string) Message {
	t.Helper()
	var m Message
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.String:
				f.SetString(v.Type().Field(i).Name + "-" + s)
			case reflect.Int, reflect.Int64:
				f.SetInt(id + int64(i))
			case reflect.Uint64:
				f.SetUint(uint64(id) + uint64(i))
			case reflect.Slice:
				f.Set(reflect.MakeSlice(f.Type(), 1, 2))
			case reflect.Struct:
				fill(f)
			default:
				t.Fatalf("field %s of kind %s: teach fillMessage to fill it", v.Type().Field(i).Name, f.Kind())
			}
		}
	}
	fill(reflect.ValueOf(&m).Elem())
	return m
}

// A Delivery reset again and again, from message to message with and
// without a correlation ID, extra headers or Ext, and on two equal but
// distinct environments, holds after each reset exactly the fields
// written out here: a reset that kept a field of the delivery before
// (say, one that skips a store it takes for unchanged) fails it.
func TestResetAfterResets(t *testing.T) {
	envs := []*Env{{}, {}} // equal but distinct
	msgs := append(resetMessages(), fillMessage(t, 7, "f"))
	var d Delivery
	step := 0
	for round := range 2 {
		for i := range msgs {
			for _, through := range []string{"ResetFrom", "ResetInPlace", "Reset"} {
				step++
				m := msgs[(i*(round+1)+step)%len(msgs)]
				env := envs[step%2]
				if step%3 == 0 {
					d.Ext = "ext" // a model's context, which the next reset must clear
				}
				d.effects, d.skips, d.HasPos, d.Partition, d.Offset = 1, 2, true, 3, 4
				instance := []string{"", "w#1"}[step%2]
				switch through {
				case "ResetFrom":
					d.ResetFrom(env, &m, "queue:q", "q", instance, step)
				case "ResetInPlace":
					d.Msg = m
					d.ResetInPlace(env, "queue:q", "q", instance, step)
				case "Reset":
					d.Reset(env, m, "queue:q", "q", instance, step)
				}
				want := Delivery{Msg: m, Where: "queue:q", Consumer: "q", Instance: "q", Attempt: step,
					Corr: m.Headers.CorrelationID, env: env}
				if instance != "" {
					want.Instance = instance
				}
				// DeepEqual follows env rather than comparing it: the
				// environment is compared as a pointer.
				if !reflect.DeepEqual(d, want) || !sameMessage(d.Msg, m) || d.env != env {
					t.Fatalf("step %d (%s of message %d): got %#v, want %#v", step, through, i, d, want)
				}
			}
		}
	}
}
