package projection

import (
	"errors"
	"strconv"
	"strings"
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
// does not count it as an absorbed duplicate, and so is a replay of it; an
// older record replayed, and a copy of the row's own record written again
// at a later offset, are still skipped duplicates.
func TestSkewedClockIsALoss(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	w.Env().Trace.Attach(sim.SinkFunc(func(e *sim.Event) {
		got = append(got, string(e.Kind)+" "+e.Msg.String()+" "+string(e.Cause))
	}))
	p, err := New(w, Config{Name: "view", Versioning: VersionClock, Source: fixed(3)})
	if err != nil {
		t.Fatal(err)
	}
	// m1; m2, a later write with a clock behind; m3, the source's latest;
	// m1 replayed; a copy of m1 written again after m3 (an outbox relay's
	// re-publish); m2 replayed, neither the latest nor later than m3.
	for _, r := range []rec{{1, 0, 10, "Berlin"}, {2, 1, 7, "Hamburg"}, {3, 2, 12, "Bremen"}, {1, 0, 10, "Berlin"}, {1, 3, 10, "Berlin"}, {2, 1, 7, "Hamburg"}} {
		m := sim.Message{ID: r.id, Key: "k", Body: []byte(r.body), Headers: sim.Headers{}.With(producer.HeaderClock, strconv.FormatInt(r.clock, 10))}
		d := sim.NewDelivery(w.Env(), m, "log:x", "view", "v1", 1)
		d.HasPos, d.Offset = true, r.off
		if err := p.Handle(d); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"processed m1 ", "lost m2 clock skew", "processed m3 ", "skipped m1 ", "skipped m1 ", "lost m2 clock skew"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %q, want %q", i, got[i], want[i])
		}
	}
	if r, _ := p.Row("k"); r.Body != "Bremen" {
		t.Errorf("row holds %q, want Bremen", r.Body)
	}
}

// A skewed write that is not the source's latest yet (a later one is on
// its way) is still known to be later by its offset in the same
// partition; in another partition it cannot be told from an older record.
func TestSkewedClockByOffset(t *testing.T) {
	for _, c := range []struct {
		partition int
		want      string
	}{{0, "lost m2 clock skew offset 1 is later than 0"}, {1, "skipped m2 "}} {
		w, err := sim.New(sim.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		w.Env().Trace.Attach(sim.SinkFunc(func(e *sim.Event) {
			why := ""
			if _, after, ok := strings.Cut(e.Detail, "a later write: "); ok {
				why = " " + after
			}
			got = append(got, string(e.Kind)+" "+e.Msg.String()+" "+string(e.Cause)+why)
		}))
		p, err := New(w, Config{Name: "view", Versioning: VersionClock, Source: fixed(3)})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range []rec{{1, 0, 10, "Berlin"}, {2, 1, 7, "Hamburg"}} {
			m := sim.Message{ID: r.id, Key: "k", Body: []byte(r.body), Headers: sim.Headers{}.With(producer.HeaderClock, strconv.FormatInt(r.clock, 10))}
			d := sim.NewDelivery(w.Env(), m, "log:x", "view", "v1", 1)
			d.HasPos, d.Offset = true, r.off
			if i == 1 {
				d.Partition = c.partition
			}
			if err := p.Handle(d); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != 2 || got[1] != c.want {
			t.Errorf("partition %d: events %q, want the second %q", c.partition, got, c.want)
		}
	}
}
