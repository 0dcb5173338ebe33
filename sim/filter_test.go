package sim

import "testing"

func TestFilterByCorr(t *testing.T) {
	evs := []Event{{Seq: 1, Corr: "a"}, {Seq: 2, Corr: "b"}, {Seq: 3, Corr: "a"}, {Seq: 4}}
	got := Filter(evs, ByCorr("a"))
	if len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 3 {
		t.Errorf("Filter(ByCorr(a)) = %+v", got)
	}
	if got := Filter(evs, ByCorr("zzz")); len(got) != 0 {
		t.Errorf("Filter(ByCorr(zzz)) = %+v", got)
	}
	var rec Recorder
	tr := NewTrace(FilterSink{Keep: ByCorr("b"), Next: &rec})
	for _, e := range evs {
		tr.Emit(e)
	}
	if len(rec.Events()) != 1 || rec.Events()[0].Seq != 2 {
		t.Errorf("FilterSink kept %+v", rec.Events())
	}
}

func TestTraceSkipAndNestedEmit(t *testing.T) {
	var rec Recorder
	tr := NewTrace()
	tr.Emit(Event{Kind: KindSent})
	tr.Skip()
	tr.Attach(&rec)
	// A sink that emits while it runs must not clobber the event the
	// later sinks get.
	var nested Recorder
	tr.Attach(SinkFunc(func(e *Event) {
		if e.Kind == KindSent {
			tr.Emit(Event{Kind: KindNarration})
		}
	}))
	tr.Attach(&nested)
	tr.Emit(Event{Kind: KindSent})
	if tr.Len() != 4 {
		t.Errorf("Len = %d, want 4", tr.Len())
	}
	if ev := rec.Events(); len(ev) != 2 || ev[0].Seq != 3 || ev[0].Kind != KindSent || ev[1].Seq != 4 || ev[1].Kind != KindNarration {
		t.Errorf("first sink got %+v", ev)
	}
	if ev := nested.Events(); len(ev) != 2 || ev[0].Kind != KindNarration || ev[1].Kind != KindSent || ev[1].Seq != 3 {
		t.Errorf("last sink got %+v", ev)
	}
	var nilTrace *Trace
	nilTrace.Skip()
}

func TestTraceEmitDoesNotAllocate(t *testing.T) {
	tr := NewTrace(SinkFunc(func(*Event) {}))
	e := Event{Kind: KindSent, Where: "queue:x", Msg: 1}
	if n := testing.AllocsPerRun(100, func() { tr.Emit(e) }); n != 0 {
		t.Errorf("Emit allocates %v times per event", n)
	}
}
