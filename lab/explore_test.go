package lab

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/sweep"
)

// The acceptance pipeline from Go: a naive handler under five
// probabilistic rules fails within 200 seeds, the failure shrinks to at
// most 2 firings, and the written reproducer fails with the same violation.
func TestShrinkNaiveBilling(t *testing.T) {
	s := loadFixture(t)
	if n := len(s.Faults); n != 5 {
		t.Fatalf("the fixture has %d fault rules", n)
	}
	for _, f := range s.Faults {
		if f.Probability == 0 || f.Probability >= 1 {
			t.Fatalf("rule %s is not probabilistic", f.Name)
		}
	}
	var seed uint64
	var first Failure
	for x := range (Seeds{From: 1, Count: 200}).All() {
		f, failed, err := Probe(s, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if failed {
			seed, first = x, f
			break
		}
	}
	if seed == 0 {
		t.Fatal("no seed in 1..200 fails")
	}
	sh, err := Shrink(s, seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: %s; %d firings -> %d in %d runs: %s", seed, sh.Failure, sh.Fired.Len(), sh.Minimal.Len(), sh.Runs, sh.Minimal.Words())
	if !sh.Failure.Same(first) || first.Text != "exactly_once(billing)" {
		t.Fatalf("shrunk failure %v, the seed's %v", sh.Failure, first)
	}
	if sh.Minimal.Len() == 0 || sh.Minimal.Len() > 2 || sh.Minimal.Len() >= sh.Fired.Len() {
		t.Fatalf("minimal schedule %d of %d firings", sh.Minimal.Len(), sh.Fired.Len())
	}
	src, err := readTestdata(naiveBilling)
	if err != nil {
		t.Fatal(err)
	}
	data, err := MinFile(s, sh, src, "naive-billing.min.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !strings.Contains(string(data), "seed: "+strconv.FormatUint(seed, 10)+"\n") || strings.Contains(string(data), "probability:") {
		t.Fatalf("the seed is not fixed or a rule is still probabilistic:\n%s", data)
	}
	for _, d := range sh.Minimal.Decisions {
		if !strings.Contains(string(data), "#   "+d.Words()+"\n") {
			t.Fatalf("the header does not give %q:\n%s", d.Words(), data)
		}
	}
	m, err := scenario.Load("naive-billing.min.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Execute(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, failed := FailureOf(rep, nil)
	if !failed || !got.Same(sh.Failure) || got.Detail != sh.Failure.Detail || len(rep.Failures()) != 1 {
		t.Fatalf("the reproducer fails %v (%d expectations), want %v", got, len(rep.Failures()), sh.Failure)
	}
}

func readTestdata(path string) ([]byte, error) {
	_, src, err := scenario.Source(path)
	return src, err
}

func TestReplayForwarded(t *testing.T) {
	s := loadFixture(t)
	seed := uint64(5)
	r, err := New(s, Options{Seed: &seed, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	want, failed := FailureOf(r.Finish(), r.Err())
	fired := r.Faults().Fired()
	if !failed || fired.Len() == 0 {
		t.Fatalf("seed 5: failed %v with %d firings", failed, fired.Len())
	}
	// The whole schedule replayed fails the same way; none passes.
	for _, c := range []struct {
		sched faults.Schedule
		fail  bool
	}{{fired, true}, {faults.Schedule{}, false}} {
		r, err := New(s, Options{Seed: &seed, Replay: &c.sched})
		if err != nil {
			t.Fatal(err)
		}
		got, failed := FailureOf(r.Finish(), r.Err())
		if failed != c.fail || failed && (!got.Same(want) || got.Detail != want.Detail) {
			t.Errorf("replay of %d firings: failed %v (%v), want %v (%v)", c.sched.Len(), failed, got, c.fail, want)
		}
		if n := r.Faults().Fired().Len(); n != c.sched.Len() {
			t.Errorf("replay of %d firings fired %d", c.sched.Len(), n)
		}
	}
}

func TestShrinkPassingSeed(t *testing.T) {
	s := loadFixture(t)
	if _, err := Shrink(s, 1, nil); !errors.Is(err, ErrShrink) || !strings.Contains(err.Error(), "seed 1 of ../scenario/testdata/explore/naive-billing.yaml passes") {
		t.Fatalf("shrinking a passing seed: %v", err)
	}
}

// A bound handler is bound afresh for every run of a shrink; with an
// idempotent one, the failing seed passes and there is nothing to shrink.
func TestShrinkWithHandlers(t *testing.T) {
	s := loadFixture(t)
	calls := 0
	naive := func() map[string]sim.Handler {
		calls++
		return map[string]sim.Handler{"billing": sim.Effect("charged")}
	}
	sh, err := Shrink(s, 5, naive)
	if err != nil {
		t.Fatal(err)
	}
	if calls != sh.Runs || sh.Minimal.Len() != 1 {
		t.Fatalf("%d handler sets for %d runs; minimal %s", calls, sh.Runs, sh.Minimal.Words())
	}
	safe := func() map[string]sim.Handler {
		return map[string]sim.Handler{"billing": sim.Idempotent(sim.Effect("charged"), sim.ByMessageID)}
	}
	if _, err := Shrink(s, 5, safe); !errors.Is(err, ErrShrink) {
		t.Fatalf("an idempotent handler at seed 5: %v", err)
	}
}

func TestSeedsShards(t *testing.T) {
	for _, c := range []struct{ from, count uint64 }{{1, 200}, {0, 7}, {5, 1}, {math.MaxUint64 - 9, 10}} {
		for n := 1; n <= 5; n++ {
			seen := map[uint64]int{}
			var total uint64
			for k := 1; k <= n; k++ {
				sp := Seeds{From: c.from, Count: c.count, Shard: k, Shards: n}
				if err := sp.Validate(); err != nil {
					t.Fatal(err)
				}
				var got uint64
				prev := uint64(0)
				for x := range sp.All() {
					if x%uint64(n) != uint64(k-1) || x < c.from || x-c.from >= c.count || got > 0 && x <= prev {
						t.Fatalf("%+v yields %d", sp, x)
					}
					seen[x]++
					got++
					prev = x
				}
				if got != sp.Len() {
					t.Fatalf("%+v: Len %d, yields %d", sp, sp.Len(), got)
				}
				total += got
			}
			if total != c.count || uint64(len(seen)) != c.count {
				t.Fatalf("from %d count %d in %d shards: %d seeds, %d distinct", c.from, c.count, n, total, len(seen))
			}
		}
	}
	for _, sp := range []Seeds{{Count: 0}, {From: math.MaxUint64, Count: 2}, {Count: 1, Shard: 0, Shards: 2}, {Count: 1, Shard: 3, Shards: 2}, {Count: MaxSweepSeeds + 1}} {
		if err := sp.Validate(); !errors.Is(err, sweep.ErrSeeds) {
			t.Errorf("%+v: %v", sp, err)
		}
	}
}

func TestSweepReport(t *testing.T) {
	src := []byte("title: x\n")
	r := NewSweepReport("x.yaml", src, Seeds{From: 1, Count: 10, Shard: 2, Shards: 3})
	a := Failure{Expect: 1, Text: "exactly_once(billing)", Line: 9, Col: 5, Detail: "exactly-once: m5 t=3"}
	b := Failure{Expect: 0, Text: "no_loss", Line: 8, Col: 5, Detail: "no-loss: m1 t=1"}
	e := Failure{Expect: -1, Text: "runtime error", Detail: "x.yaml:3:3: boom"}
	for _, x := range []struct {
		seed uint64
		f    Failure
	}{{7, a}, {1, e}, {4, b}, {10, Failure{}}} { // shard 2 of 3: the seeds s with s mod 3 == 1
		r.Add(x.seed, x.f, x.f.Text != "")
	}
	var buf strings.Builder
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := `FAIL seed 1: runtime error: x.yaml:3:3: boom
FAIL seed 4: no_loss at x.yaml:8:5: no-loss: m1 t=1
FAIL seed 7: exactly_once(billing) at x.yaml:9:5: exactly-once: m5 t=3
failing: no_loss in 1 seed, exactly_once(billing) in 1 seed, runtime error in 1 seed
3 of 4 seeds failed (first: 1)
NOTE: this is shard 2 of 3; merge the shards' --json reports with brokerlab explore merge
`
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
	// Only the lowest MaxListedFailures stay listed; all are counted.
	big := NewSweepReport("x.yaml", src, Seeds{From: 1, Count: 3 * MaxListedFailures})
	for x := uint64(3 * MaxListedFailures); x >= 1; x-- {
		big.Add(x, a, true)
	}
	big.Sort()
	if big.Failed != 3*MaxListedFailures || len(big.Failures) != MaxListedFailures || big.Failures[0].Seed != 1 ||
		big.Failures[MaxListedFailures-1].Seed != MaxListedFailures {
		t.Fatalf("failed %d, listed %d from %d", big.Failed, len(big.Failures), big.Failures[0].Seed)
	}
	// JSON round trip.
	var js strings.Builder
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSweepReport("r.json", strings.NewReader(js.String()))
	if err != nil || back.Failed != 3 || back.Failures[1].Failure != b || back.Digest != Digest(src) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if _, err := ReadSweepReport("r.json", strings.NewReader(`{"version": 1, "shards": 1, "sha256": "x", "extra": 1}`)); !errors.Is(err, ErrSweep) {
		t.Fatalf("unknown field: %v", err)
	}
}
