package eventlog

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// slowRecorder is a handler that takes ticks per record and notes every
// body it handles, so a test sees whether the records a busy member
// holds survive retention (Log.detach).
type slowRecorder struct {
	ticks sim.Tick
	seen  *[]string
}

func (h slowRecorder) Handle(d *sim.Delivery) error {
	*h.seen = append(*h.seen, fmt.Sprintf("%d/%d %s %s", d.Partition, d.Offset, d.Msg.Key, d.Msg.Body))
	d.Apply("")
	return nil
}

func (h slowRecorder) Duration(*sim.Delivery) sim.Tick { return h.ticks }

// retainOneByOne is retention as it deletes records one at a time:
// expire per record, the conditions read again after every deletion.
func retainOneByOne(t *Log, now sim.Tick) {
	c := &t.cfg
	for p, part := range t.parts {
		for part.head < part.recs.len() {
			e := part.recs.at(part.head)
			switch {
			case c.RetentionTicks > 0 && now-e.tick >= c.RetentionTicks:
				t.expire(p, part, "retention: age", "")
			case c.RetentionRecords > 0 && part.size() > c.RetentionRecords:
				t.expire(p, part, "retention: size", "")
			case c.RetentionBytes > 0 && part.bytes > c.RetentionBytes && part.size() > 1:
				t.expire(p, part, "retention: bytes", "")
			default:
				goto next
			}
		}
	next:
	}
}

// TestRetainEqualsOneByOne: retain, which traces a partition's run of
// expired records and then deletes them together, leaves the trace, the
// log, the groups (what they remember of records included) and what busy members handle exactly as deleting them
// one by one does, under retention by age, count and bytes, with members
// in the middle of a batch (a slow handler), members that crash (so
// their group reads records again) and members that lag.
func TestRetainEqualsOneByOne(t *testing.T) {
	cfgs := []Config{
		{RetentionRecords: 5},
		{RetentionBytes: 40},
		{RetentionTicks: 3},
		{RetentionRecords: 9, RetentionTicks: 4, RetentionBytes: 70},
		{RetentionRecords: 3, Compact: true, CompactEvery: 4},
	}
	type outcome struct {
		Trace   []string
		Seen    []string
		Metrics Metrics
		Again   [][]againRec // what each group remembers, partition by partition
	}
	run := func(cfg Config, seed uint64, oneByOne bool) outcome {
		w, err := sim.New(sim.Config{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var o outcome
		w.Env().Trace.Attach(sim.SinkFunc(func(e *sim.Event) { o.Trace = append(o.Trace, string(sim.AppendText(nil, e))) }))
		cfg.Name, cfg.Partitions = "orders", 3
		l, err := New(w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var ms []*Member
		for gi, mcfgs := range [][]MemberConfig{
			{{Name: "slow", Batch: 6, Handler: slowRecorder{ticks: 2, seen: &o.Seen}}, {Name: "slower", Batch: 4, Handler: slowRecorder{ticks: 3, seen: &o.Seen}}},
			{{Name: "quick", Batch: 2, Handler: slowRecorder{seen: &o.Seen}}},
			{{Name: "pull", Pull: true}},
		} {
			g, err := NewGroup(w, l, GroupConfig{Name: "g" + fmt.Sprint(gi), SessionTimeout: 50})
			if err != nil {
				t.Fatal(err)
			}
			for _, mc := range mcfgs {
				m, err := NewMember(w, g, mc)
				if err != nil {
					t.Fatal(err)
				}
				ms = append(ms, m)
			}
		}
		env := w.Env()
		rng := env.Stream("test/retain")
		keys := []string{"a", "b", "c", "d", "e"}
		for range 80 {
			now := env.Clock.Advance()
			if oneByOne {
				retainOneByOne(l, now)
				if l.cfg.Compact && now-l.lastCompact >= l.cfg.CompactEvery {
					l.Compact()
				}
				for _, g := range l.groups {
					g.expireSessions(now)
				}
			} else {
				l.Step(now)
			}
			for range rng.IntN(9) {
				body := strings.Repeat("x", rng.IntN(12))
				if err := l.Publish(env.NewMessage(keys[rng.IntN(len(keys))], []byte(body), sim.Headers{})); err != nil {
					t.Fatal(err)
				}
			}
			if now%13 == 0 {
				ms[now/13%2].Crash("") // its group reads the records again: it remembers them
			}
			for _, m := range ms {
				if m.cfg.Pull {
					if now%5 == 0 {
						for _, r := range m.Poll(3) {
							o.Seen = append(o.Seen, fmt.Sprintf("pull %d/%d %s %s", r.Partition, r.Offset, r.Message.Key, r.Message.Body))
						}
					}
					continue
				}
				m.Step(now)
			}
		}
		o.Metrics = l.Metrics()
		for _, g := range l.groups {
			for p := range g.parts {
				o.Again = append(o.Again, g.parts[p].remembered())
			}
		}
		return o
	}
	for i, cfg := range cfgs {
		for seed := uint64(1); seed <= 4; seed++ {
			want, got := run(cfg, seed, true), run(cfg, seed, false)
			if len(want.Seen) == 0 || want.Metrics.Expired == 0 {
				t.Fatalf("config %d seed %d: the run handled %d records and expired %d, want some of each", i, seed, len(want.Seen), want.Metrics.Expired)
			}
			if !cfg.Compact {
				expiredInOrder(t, got.Trace, int(got.Metrics.Expired))
			}
			if !reflect.DeepEqual(got, want) {
				for k := range min(len(got.Trace), len(want.Trace)) {
					if got.Trace[k] != want.Trace[k] {
						t.Fatalf("config %d seed %d: event %d is\n%s\nwant\n%s", i, seed, k, got.Trace[k], want.Trace[k])
					}
				}
				t.Fatalf("config %d seed %d: retention in runs differs from retention one by one:\n%+v\nwant\n%+v", i, seed, got, want)
			}
		}
	}
}

// expiredInOrder checks the expired events of a trace without the
// retention code's help (the reference of TestRetainEqualsOneByOne shares
// book and drop with it): without compaction, retention deletes each
// partition's records from its head, so the expired offsets of a
// partition run 0, 1, 2, ... with no gap and no repeat, each names its
// cause, and there are as many as the log counts.
func expiredInOrder(t *testing.T, trace []string, want int) {
	t.Helper()
	next := map[int]int{}
	n := 0
	for _, line := range trace {
		if !strings.Contains(line, " expired ") {
			continue
		}
		n++
		var p, off int
		i := strings.Index(line, " p=")
		if i < 0 {
			t.Fatalf("an expired event names no partition: %s", line)
		}
		if _, err := fmt.Sscanf(line[i:], " p=%d off=%d", &p, &off); err != nil {
			t.Fatalf("an expired event names no offset (%v): %s", err, line)
		}
		if off != next[p] {
			t.Fatalf("partition %d expired offset %d, want %d: %s", p, off, next[p], line)
		}
		next[p]++
		if !strings.Contains(line, ` cause=retention "retention: `) {
			t.Fatalf("an expired event names no retention cause: %s", line)
		}
	}
	if n != want {
		t.Fatalf("%d expired events, the log counts %d", n, want)
	}
}
