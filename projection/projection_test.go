package projection

import (
	"errors"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

// fixed is a Source that always has the same latest record.
type fixed sim.ID

func (f fixed) Latest(string) (sim.ID, bool) { return sim.ID(f), f != 0 }

type rec struct {
	id    sim.ID
	off   int64
	clock int64 // 0: no clock header
	body  string
}

// feed hands the records to a projection of versioning v, in order, as a
// member would, and returns it.
func feed(t *testing.T, v Versioning, src Source, recs ...rec) *Projection {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(w, Config{Name: "view", Versioning: v, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		h := sim.Headers{}
		if r.clock != 0 {
			h = h.With(producer.HeaderClock, strconv.FormatInt(r.clock, 10))
		}
		m := sim.Message{ID: r.id, Key: "k", Body: []byte(r.body), Headers: h}
		d := sim.NewDelivery(w.Env(), m, "log:x", "view", "v1", 1)
		d.HasPos, d.Offset = true, r.off
		if err := p.Handle(d); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// A replayed older record overwrites the newer value unless the row is
// versioned by offset.
func TestReplayedOlderRecord(t *testing.T) {
	recs := []rec{{1, 0, 0, "Berlin"}, {2, 1, 0, "Hamburg"}, {1, 0, 0, "Berlin"}}
	for _, c := range []struct {
		v    Versioning
		want string
	}{{VersionNone, "Berlin"}, {VersionOffset, "Hamburg"}} {
		p := feed(t, c.v, fixed(2), recs...)
		r, _ := p.Row("k")
		if r.Body != c.want {
			t.Errorf("%v: row holds %q, want %q", c.v, r.Body, c.want)
		}
	}
}

// A writer whose clock runs behind writes the newest record with the
// oldest clock: last write wins by clock keeps the older value, by
// offset the newer one.
func TestSkewedClock(t *testing.T) {
	recs := []rec{{1, 0, 10, "Berlin"}, {2, 1, 7, "Hamburg"}}
	off := feed(t, VersionOffset, fixed(2), recs...)
	clk := feed(t, VersionClock, fixed(2), recs...)
	if r, _ := off.Row("k"); r.Body != "Hamburg" {
		t.Errorf("offset: row holds %q, want Hamburg", r.Body)
	}
	if r, _ := clk.Row("k"); r.Body != "Berlin" {
		t.Errorf("clock: row holds %q, want Berlin (the skewed write lost)", r.Body)
	}
	if _, stale := clk.Read("app", "k"); !stale {
		t.Error("clock: a read of the lost write is not stale")
	}
	if _, stale := off.Read("app", "k"); stale {
		t.Error("offset: a read of the latest value is stale")
	}
	if m := clk.Metrics(); m.Reads != 1 || m.StaleReads != 1 || m.Rows != 1 {
		t.Errorf("clock metrics %+v", m)
	}
}

func TestConfigValidate(t *testing.T) {
	err := Config{Versioning: 7}.Validate()
	if !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, sim.ErrInvalidConfig) {
		t.Fatalf("got %v", err)
	}
	var v Versioning
	if err := v.UnmarshalText([]byte("lamport")); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("unknown name: %v", err)
	}
	if err := v.UnmarshalText([]byte("clock")); err != nil || v != VersionClock {
		t.Errorf("clock: %v %v", v, err)
	}
}

// A later write whose writer's clock runs behind is lost to a projection
// versioned by clock, and traced as lost (cause clock skew), so the ledger
// does not count it as an absorbed duplicate; an older record replayed
// from the same partition is still a skipped duplicate.
func TestSkewedClockIsALoss(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	w.Env().Trace.Attach(sim.SinkFunc(func(e *sim.Event) {
		got = append(got, string(e.Kind)+" "+e.Msg.String()+" "+string(e.Cause))
	}))
	p, err := New(w, Config{Name: "view", Versioning: VersionClock, Source: fixed(2)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []rec{{1, 0, 10, "Berlin"}, {2, 1, 7, "Hamburg"}, {1, 0, 10, "Berlin"}} {
		m := sim.Message{ID: r.id, Key: "k", Body: []byte(r.body), Headers: sim.Headers{}.With(producer.HeaderClock, strconv.FormatInt(r.clock, 10))}
		d := sim.NewDelivery(w.Env(), m, "log:x", "view", "v1", 1)
		d.HasPos, d.Offset = true, r.off
		if err := p.Handle(d); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"processed m1 ", "lost m2 clock skew", "skipped m1 "}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %q, want %q", i, got[i], want[i])
		}
	}
	if r, _ := p.Row("k"); r.Body != "Berlin" {
		t.Errorf("row holds %q, want Berlin", r.Body)
	}
}
