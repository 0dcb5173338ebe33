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

// latest is a Source whose latest record the test moves as it writes.
type latest struct{ id sim.ID }

func (l *latest) Latest(string) (sim.ID, bool) { return l.id, l.id != 0 }

// step is one record handed to a projection versioned by offset, and the
// source's latest when it is handed.
type step struct {
	id, origin sim.ID
	where      string // "": log:x
	hasPos     bool
	partition  int
	off        int64
	latest     sim.ID
}

// feedOffset hands the steps to a projection versioned by offset and
// returns its trace, one line per event: kind, message, cause and the
// reason a loss gives.
func feedOffset(t *testing.T, steps ...step) ([]string, *Projection) {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	w.Env().Trace.Attach(sim.SinkFunc(func(e *sim.Event) {
		line := string(e.Kind) + " " + e.Msg.String()
		if e.Cause != "" {
			line += " " + string(e.Cause)
		}
		if _, after, ok := strings.Cut(e.Detail, "a later write: "); ok {
			line += ": " + after
		}
		got = append(got, line)
	}))
	src := &latest{}
	p, err := New(w, Config{Name: "view", Versioning: VersionOffset, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		src.id = s.latest
		where := s.where
		if where == "" {
			where = "log:x"
		}
		m := sim.Message{ID: s.id, Origin: s.origin, Key: "k", Body: []byte(s.id.String())}
		d := sim.NewDelivery(w.Env(), m, where, "view", "v1", 1)
		d.HasPos, d.Partition, d.Offset = s.hasPos, s.partition, s.off
		if err := p.Handle(d); err != nil {
			t.Fatal(err)
		}
	}
	return got, p
}

// After partitions are added, a key's later write sits at a lower offset
// of another partition. A projection versioned by offset cannot take it,
// and when the source holds it as the key's latest the projection knows
// it is a later write, not an older record: it traces it lost (cause
// offset order), so the ledger does not count it absorbed. Each case
// fails when the branch of laterWrite it names is removed.
func TestOffsetOrderAcrossPartitions(t *testing.T) {
	m1 := step{id: 1, hasPos: true, off: 4, latest: 1} // the row: partition 0, offset 4
	for _, c := range []struct {
		name  string
		steps []step
		want  []string
		row   string
	}{{
		name:  "the source's latest in another partition is lost",
		steps: []step{m1, {id: 2, hasPos: true, partition: 1, off: 0, latest: 2}},
		want:  []string{"processed m1", "lost m2 offset order: the source's latest for \"k\", and the offsets of partitions 1 and 0 of log:x do not compare"},
		row:   "m1",
	}, {
		name:  "in another log",
		steps: []step{m1, {id: 2, where: "log:y", hasPos: true, off: 0, latest: 2}},
		want:  []string{"processed m1", "lost m2 offset order: the source's latest for \"k\", and the offsets of partition 0 of log:y and partition 0 of log:x do not compare"},
		row:   "m1",
	}, {
		name:  "without a log position",
		steps: []step{m1, {id: 2, where: "queue:q", latest: 2}},
		want:  []string{"processed m1", "lost m2 offset order: the source's latest for \"k\", and the offsets of queue:q (no log position) and partition 0 of log:x do not compare"},
		row:   "m1",
	}, {
		name:  "a replay of a lost record is lost again, though no longer the latest",
		steps: []step{m1, {id: 2, hasPos: true, partition: 1, off: 0, latest: 2}, {id: 3, hasPos: true, partition: 1, off: 1, latest: 3}, {id: 2, hasPos: true, partition: 1, off: 0, latest: 3}},
		want:  []string{"processed m1", "lost m2 offset order", "lost m3 offset order", "lost m2 offset order: lost before, and replayed"},
		row:   "m1",
	}, {
		name:  "a copy of an applied record is a duplicate, though the latest",
		steps: []step{{id: 1, hasPos: true, off: 0, latest: 1}, {id: 2, hasPos: true, off: 4, latest: 2}, {id: 3, origin: 1, hasPos: true, partition: 1, off: 0, latest: 3}},
		want:  []string{"processed m1", "processed m2", "skipped m3"},
		row:   "m2",
	}, {
		name:  "offsets of one partition compare, whatever the source says",
		steps: []step{m1, {id: 2, hasPos: true, off: 3, latest: 2}},
		want:  []string{"processed m1", "skipped m2"},
		row:   "m1",
	}, {
		name:  "in another partition and not the latest cannot be told from an older record",
		steps: []step{m1, {id: 2, hasPos: true, partition: 1, off: 0, latest: 1}},
		want:  []string{"processed m1", "skipped m2"},
		row:   "m1",
	}, {
		name:  "a higher offset of another partition is applied",
		steps: []step{m1, {id: 2, hasPos: true, partition: 1, off: 5, latest: 2}},
		want:  []string{"processed m1", "processed m2"},
		row:   "m2",
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, p := feedOffset(t, c.steps...)
			if len(got) != len(c.want) {
				t.Fatalf("events %q, want %q", got, c.want)
			}
			for i := range c.want {
				// A loss's reason is compared when the case gives one.
				if g := got[i]; g != c.want[i] && !(strings.HasPrefix(g, c.want[i]+": ") && !strings.Contains(c.want[i], ":")) {
					t.Errorf("event %d: %q, want %q", i, g, c.want[i])
				}
			}
			if r, _ := p.Row("k"); r.Body != c.row {
				t.Errorf("row holds %q, want %q", r.Body, c.row)
			}
		})
	}
}

// A loss traced for a delivery without a log position claims none: the
// trace line must not print a partition and an offset the record never
// had.
func TestOffsetOrderLossKeepsItsPosition(t *testing.T) {
	for _, c := range []struct {
		where  string
		hasPos bool
	}{{"queue:q", false}, {"log:x", true}} {
		w, err := sim.New(sim.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		var lost []sim.Event
		w.Env().Trace.Attach(sim.SinkFunc(func(e *sim.Event) {
			if e.Kind == sim.KindLost {
				lost = append(lost, *e)
			}
		}))
		src := &latest{id: 1}
		p, err := New(w, Config{Name: "view", Versioning: VersionOffset, Source: src})
		if err != nil {
			t.Fatal(err)
		}
		d := sim.NewDelivery(w.Env(), sim.Message{ID: 1, Key: "k"}, "log:x", "view", "v1", 1)
		d.HasPos, d.Offset = true, 4
		if err := p.Handle(d); err != nil {
			t.Fatal(err)
		}
		src.id = 2
		d = sim.NewDelivery(w.Env(), sim.Message{ID: 2, Key: "k"}, c.where, "view", "v1", 1)
		d.HasPos, d.Partition, d.Offset = c.hasPos, 1, 0
		if err := p.Handle(d); err != nil {
			t.Fatal(err)
		}
		if len(lost) != 1 || lost[0].HasPos != c.hasPos {
			t.Errorf("%s: lost events %+v, want one with HasPos %v", c.where, lost, c.hasPos)
		}
	}
}
