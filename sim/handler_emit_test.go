package sim

import "testing"

// A handler's records are numbered the same whether or not a sink listens:
// with none, Apply and Skip build no event but count one each, so the
// events that follow keep their sequence numbers.
func TestDeliveryRecordsNumberedWithoutSinks(t *testing.T) {
	run := func(tr *Trace) (uint64, *Delivery) {
		env := &Env{Trace: tr}
		d := NewDelivery(env, Message{ID: 1, Key: "k"}, "topic:x", "s", "", 1)
		d.Apply("charged")
		d.Skip("seen")
		d.Apply("")
		return tr.Len(), d
	}
	rec := &Recorder{}
	on, don := run(NewTrace(rec))
	off, doff := run(NewTrace())
	if on != 3 || off != on {
		t.Errorf("events numbered %d without a sink, %d with one; want 3 and 3", off, on)
	}
	if doff.Effects() != 2 || !doff.Skipped() || don.Effects() != 2 || !don.Skipped() {
		t.Errorf("records: effects %d/%d, skipped %v/%v; want 2 and true", doff.Effects(), don.Effects(), doff.Skipped(), don.Skipped())
	}
	if evs := rec.Events(); len(evs) != 3 || evs[0].Kind != KindProcessed || evs[1].Kind != KindSkipped || evs[2].Seq != 3 {
		t.Errorf("recorded %v, want processed, skipped, processed numbered 1 to 3", evs)
	}
}

// Effect's handler applies exactly one effect per delivery, noted with its
// text, and succeeds; its processed event is the one a handler calling
// Apply itself would emit.
func TestEffectAppliesOneEffect(t *testing.T) {
	handle := func(h Handler) (*Delivery, error, []Event) {
		rec := &Recorder{}
		env := &Env{Trace: NewTrace(rec)}
		d := NewDelivery(env, Message{ID: 4, Key: "k"}, "queue:q", "q", "w1", 2)
		err := h.Handle(d)
		return d, err, rec.Events()
	}
	d, err, got := handle(Effect("charged"))
	_, _, want := handle(HandlerFunc(func(d *Delivery) error { d.Apply("charged"); return nil }))
	if err != nil || d.Effects() != 1 || d.Skipped() {
		t.Fatalf("Effect: error %v, %d effects, skipped %v; want nil, 1, false", err, d.Effects(), d.Skipped())
	}
	if len(got) != 1 || got[0] != want[0] || got[0].Kind != KindProcessed || got[0].Detail != "charged" {
		t.Fatalf("Effect traced %+v, want %+v", got, want)
	}
}

// TestIsEffect requires IsEffect to recognise Effect's handler alone: a
// wrapped effect, or a function doing the same, may do more than the one
// effect a model would book for it.
func TestIsEffect(t *testing.T) {
	if !IsEffect(Effect("note")) {
		t.Fatal("Effect's handler is not an effect")
	}
	for _, h := range []Handler{
		HandlerFunc(func(d *Delivery) error { d.Apply(""); return nil }),
		Idempotent(Effect(""), ByMessageID),
		&Script{Ticks: 1},
		nil,
	} {
		if IsEffect(h) {
			t.Fatalf("%T is taken for an effect", h)
		}
	}
}
