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
