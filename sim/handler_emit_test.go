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

// An EffectRun's Book is what Effect's handler does to the trace and the
// ledger, when the trace would not build the event: numbered alone with
// no listener, folded into the same ledger with only the ledger
// listening; with a sink it declines and numbers nothing.
func TestEffectRunBooksAsApply(t *testing.T) {
	run := func(sink, book bool) (*World, bool) {
		w, err := New(Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if sink {
			w.Trace().Attach(SinkFunc(func(*Event) {}))
		}
		env := w.Env()
		m := env.NewMessage("k", nil, Headers{Type: "t"})
		env.Emit(Event{Kind: KindPublished, Where: "topic:t", Msg: m.ID, Key: m.Key, Type: "t"})
		env.Emit(Event{Kind: KindDelivered, Where: "topic:t", Actor: "s", Consumer: "s", Msg: m.ID, Key: m.Key})
		if book {
			var lc LedgerConsumer
			r := env.Trace.Effects(env.Now(), "s", &lc)
			return w, r.Book(m.ID)
		}
		NewDelivery(env, m, "topic:t", "s", "", 1).Apply("")
		return w, true
	}
	got, ok := run(false, true)
	want, _ := run(false, false)
	if !ok || got.Trace().Len() != want.Trace().Len() || got.Ledger().Dump() != want.Ledger().Dump() {
		t.Fatalf("Book reported %v; %d events, ledger\n%s\nwant %d,\n%s", ok, got.Trace().Len(), got.Ledger().Dump(), want.Trace().Len(), want.Ledger().Dump())
	}
	if got, ok := run(true, true); ok || got.Trace().Len() != 2 {
		t.Fatalf("with a sink Book reported %v and left %d events; want false and 2", ok, got.Trace().Len())
	}
	tr := NewTrace()
	var lc LedgerConsumer
	r := tr.Effects(3, "s", &lc)
	if !r.Book(1) || !r.Book(2) || tr.Len() != 2 {
		t.Fatalf("without a listener Book numbered %d events, want 2", tr.Len())
	}
}
