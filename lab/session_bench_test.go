package lab

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// backlogSource is the 100,000-message scenario of
// BenchmarkRenderScenario100k, run for ticks ticks.
func backlogSource(ticks int) string {
	return `title: Backlog of 100,000
seed: 1
run: {ticks: ` + strconv.Itoa(ticks) + `}
topology:
  queues:
    - {name: orders, visibility_timeout: 50, dead_letter: {queue: orders-dlq, max_receive_count: 2}}
    - {name: orders-dlq}
  logs: [{name: events, partitions: 4}]
  groups: [{name: audit, log: events}]
actors:
  producers:
    - {name: shop, to: {queue: orders}, count: 60000, rate: 10000, keys: "kunde-%d", key_count: 100}
    - {name: feed, to: {log: events}, count: 40000, rate: 10000, keys: "kunde-%d", key_count: 100}
  consumers:
    - {name: worker, queue: orders, batch: 10, handler: {kind: slow, ticks: 3}}
  members:
    - {name: a1, group: audit, batch: 5}
`
}

// BenchmarkSeekBack measures the left arrow: one tick back from tick t,
// which rebuilds the run from its seed and re-executes t-1 ticks. The
// baseline is the same driver stepping t-1 ticks forward from a fresh run
// ("forward"): going back costs what that costs plus one rebuild. The
// lesson is poison-dlq made 6,000 ticks long (lessons end by t=70); the
// backlog is the 100,000-message scenario.
func BenchmarkSeekBack(b *testing.B) {
	lesson, err := scenario.LoadLesson("poison-dlq")
	if err != nil {
		b.Fatal(err)
	}
	long := *lesson
	long.Run.Ticks = 6000
	backlog, err := scenario.Load("backlog.yaml", []byte(backlogSource(6000)))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    *scenario.Scenario
	}{{"lesson", &long}, {"backlog100k", backlog}} {
		for _, t := range []sim.Tick{50, 500, 5000} {
			b.Run(c.name+"/t="+strconv.Itoa(int(t)), func(b *testing.B) {
				d, err := Open(c.s, SessionOptions{})
				if err != nil {
					b.Fatal(err)
				}
				d.Seek(t)
				if d.Now() != t {
					b.Fatalf("at t=%d, want %d", d.Now(), t)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					d.Seek(t - 1)
					b.StopTimer()
					d.Seek(t)
					b.StartTimer()
				}
			})
			b.Run(c.name+"/forward/t="+strconv.Itoa(int(t)), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					r, err := New(c.s, Options{})
					if err != nil {
						b.Fatal(err)
					}
					for r.Now() < t-1 && r.Step() {
					}
				}
			})
		}
	}
}

// TestSeekBackExact: going back, with the kept samples, shows exactly
// what a fresh run stepped to the same tick shows (series, ledger
// summary, effects, effect table, trace, verdict), in a scenario of
// tens of thousands of messages and in a lesson with a hand action, near and far back.
func TestSeekBackExact(t *testing.T) {
	src := strings.NewReplacer("count: 60000", "count: 18000", "count: 40000", "count: 12000").Replace(backlogSource(300))
	big, err := scenario.Load("backlog.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	lesson, err := scenario.LoadLesson("poison-dlq")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		s       *scenario.Scenario
		end     sim.Tick
		hand    sim.Tick // a redrive at this tick (0: none)
		targets []sim.Tick
	}{
		{"backlog30k", big, 120, 0, []sim.Tick{119, 96, 95, 64, 33, 31, 5}},
		{"poison-dlq", lesson, 40, 20, []sim.Tick{39, 25, 20, 19, 3}},
	} {
		fresh := func(to sim.Tick) Snapshot {
			d, err := Open(c.s, SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var s Snapshot
			for d.Now() < to {
				s = d.Step()
				if c.hand != 0 && d.Now() == c.hand {
					s, _ = d.Do(Redrive(""))
				}
			}
			if to == 0 {
				s = d.Snapshot()
			}
			s.Header.Notice = ""
			return s
		}
		for _, to := range c.targets {
			d, err := Open(c.s, SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for d.Now() < c.end {
				d.Step()
				if c.hand != 0 && d.Now() == c.hand {
					d.Do(Redrive(""))
				}
			}
			got := d.Seek(to)
			got.Header.Notice = ""
			want := fresh(to)
			if !reflect.DeepEqual(got.Series, want.Series) || got.Ledger != want.Ledger || !reflect.DeepEqual(got.Effects, want.Effects) ||
				!reflect.DeepEqual(got.EffectTable, want.EffectTable) || !reflect.DeepEqual(got.Trace, want.Trace) ||
				!reflect.DeepEqual(got.Marks, want.Marks) || got.Verdict.Line() != want.Verdict.Line() {
				t.Errorf("%s: back from t=%d to t=%d differs from a fresh run stepped there:\nledger %+v\nwant   %+v\nverdict %q, want %q",
					c.name, c.end, to, got.Ledger, want.Ledger, got.Verdict.Line(), want.Verdict.Line())
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: t=%d: snapshots differ beyond the checked fields", c.name, to)
			}
		}
	}
}

// BenchmarkOpen100k measures opening the 100,000-message scenario: building
// the run and choosing the tab to open on (the look-ahead of busiest), and
// the look-ahead alone.
func BenchmarkOpen100k(b *testing.B) {
	s, err := scenario.Load("backlog.yaml", []byte(backlogSource(1000)))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("driver", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Open(s, SessionOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("busiest", func(b *testing.B) {
		d, err := Open(s, SessionOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			d.busiest()
		}
	})
}
