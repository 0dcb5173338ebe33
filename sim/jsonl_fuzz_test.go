package sim

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// FuzzReadJSONL feeds arbitrary bytes to the trace reader and folds what
// it accepts into a ledger, then runs the checks. It must never panic,
// and neither the reader nor the fold may take memory out of proportion
// to the input: a trace that names message m1000000000000 is as small as
// one that names m1. The seeds are a whole trace, the same trace with the
// huge ID (sealed, so it reaches the fold) and a few broken ones.
func FuzzReadJSONL(f *testing.F) {
	whole := func(ids ...ID) string {
		var js bytes.Buffer
		tr := NewTrace(NewJSONWriter(&js))
		for _, id := range ids {
			tr.Emit(Event{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: id, Key: "k"})
			tr.Emit(Event{Tick: 2, Kind: KindReceived, Where: "queue:q", Consumer: "w", Actor: "w#1", Msg: id, Attempt: 1})
			tr.Emit(Event{Tick: 2, Kind: KindProcessed, Where: "queue:q", Consumer: "w", Actor: "w#1", Msg: id})
			tr.Emit(Event{Tick: 2, Kind: KindAcked, Where: "queue:q", Consumer: "w", Actor: "w#1", Msg: id})
		}
		_ = tr.Close()
		return js.String()
	}
	f.Add(whole(1, 2, 3))
	f.Add(whole(1_000_000_000_000))
	f.Add(whole(1, 1<<62))
	f.Add(`{"seq":1,"tick":1,"kind":"sent","msg":"m1000000000000"}`)
	f.Add(strings.Replace(whole(1), `"seq":2`, `"seq":3`, 1))
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 1<<20 {
			return
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		l := NewLedger()
		var x ActorIndex
		err := ReadJSONL(strings.NewReader(in), SinkFunc(func(e *Event) { l.Emit(e); x.Emit(e) }))
		if err == nil {
			for _, c := range []Checker{NoLoss(), AtLeastOnce(""), AtMostOnce(""), ExactlyOnce(""), OrderedPerKey(""), MaxDuplicates("", 0)} {
				_ = x.Hint(c.Violations(l), nil)
			}
			_ = l.Stats()
		}
		runtime.ReadMemStats(&after)
		// TotalAlloc counts every allocation, freed or not: the work the
		// input caused, bounded by a generous multiple of its size.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20+uint64(len(in))*4096 {
			t.Fatalf("%d bytes of input allocated %d MiB", len(in), grew>>20)
		}
		runtime.KeepAlive(l)
	})
}
