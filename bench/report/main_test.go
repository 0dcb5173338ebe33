package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
pkg: github.com/brokerlab/brokerlab/queue
BenchmarkQueueLifecycle-2   	 1000	 300.0 ns/op	 30.0 cpu-ns/op	 56 B/op	 0 allocs/op
BenchmarkHeapLifecycleBaseline-2 	 1000	 100.0 ns/op	 10.0 cpu-ns/op
pkg: github.com/brokerlab/brokerlab/bench
BenchmarkQueueLifecycle-2   	 1000	 999.0 ns/op
BenchmarkResidentQueue/no-ledger-2 	 1	 5 ns/op	 277.2 B/msg	 213.2 overhead-B/msg
pkg: github.com/brokerlab/brokerlab/queue
BenchmarkQueueLifecycle-2   	 1000	 600.0 ns/op	 50.0 cpu-ns/op
BenchmarkHeapLifecycleBaseline-2 	 1000	 150.0 ns/op	 10.0 cpu-ns/op
BenchmarkQueueLifecycle-2   	 1000	 200.0 ns/op	 20.0 cpu-ns/op
BenchmarkHeapLifecycleBaseline-2 	 1000	 100.0 ns/op	 10.0 cpu-ns/op
pkg: github.com/brokerlab/brokerlab/bench
BenchmarkSweepQueue/api-2 	 100	 900000 ns/op	 500000 cpu-ns/op
BenchmarkSweepQueue/api-2 	 100	 900000 ns/op	 250000 cpu-ns/op
BenchmarkSweepQueue/api-2 	 100	 900000 ns/op	 200000 cpu-ns/op
`

func TestParseKeepsPackagesApartAndPairsRounds(t *testing.T) {
	s, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if got := s["queue.QueueLifecycle"]["ns/op"]; len(got) != 3 {
		t.Fatalf("queue lifecycle samples = %v", got)
	}
	if got := s["bench.QueueLifecycle"]["ns/op"]; len(got) != 1 || got[0] != 999 {
		t.Fatalf("bench lifecycle samples = %v", got)
	}
	tb := &table{s: s}
	tb.ratio("q", "queue.QueueLifecycle", "ns/op", "queue.HeapLifecycleBaseline", "ns/op", 3, 0)
	// CPU ratios per round are 3, 5 and 2: the median is 3, the range 2 to
	// 5; the wall ratios are 3, 4 and 2.
	if r := tb.rows[0]; r.value != "3.00x" || r.spread != "2.00–5.00x" || r.wall != "3.00x" || r.verdict != "ok" {
		t.Fatalf("row = %+v", r)
	}
	tb.bytes("m", "bench.ResidentQueue/no-ledger", "overhead-B/msg", 256)
	if r := tb.rows[1]; r.value != "213 B" || r.verdict != "ok" {
		t.Fatalf("row = %+v", r)
	}
	tb.ratio("missing", "bench.Nothing", "ns/op", "queue.HeapLifecycleBaseline", "ns/op", 0, 20)
	if r := tb.rows[2]; r.verdict != "not measured" || len(tb.missing) != 1 {
		t.Fatalf("row = %+v, missing %v", r, tb.missing)
	}
	// Without CPU figures a ratio falls back to wall time and says so.
	tb.ratio("wall", "bench.QueueLifecycle", "ns/op", "bench.QueueLifecycle", "ns/op", 0, 0)
	if r := tb.rows[3]; r.value != "1.00x (wall)" {
		t.Fatalf("row = %+v", r)
	}
	// Seeds per CPU-second: the median of 200, 250 and 500 µs is 250 µs.
	tb.perSecond("seeds", "bench.SweepQueue/api", "seeds", 5000)
	if r := tb.rows[4]; r.value != "4000 seeds per CPU-second (250 µs each)" || r.spread != "2000–5000" || r.verdict != "**missed**" {
		t.Fatalf("row = %+v", r)
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{5, 1, 3}); m != 3 {
		t.Fatalf("median = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Fatalf("median = %v", m)
	}
}

// TestComparedTablePairsRows checks the before/after table: a row measured
// on both sides shows both figures and their ratio, and a benchmark only
// the after side has (here explore) reads n/a before.
func TestComparedTablePairsRows(t *testing.T) {
	const before = `pkg: github.com/brokerlab/brokerlab/bench
BenchmarkSweepQueue/api-2 	 100	 900000 ns/op	 400000 cpu-ns/op	 200000 B/op
`
	const after = `pkg: github.com/brokerlab/brokerlab/bench
BenchmarkSweepQueue/api-2 	 100	 900000 ns/op	 200000 cpu-ns/op	 50000 B/op
pkg: github.com/brokerlab/brokerlab/cmd/brokerlab
BenchmarkExplore/jobs=1 	2000	 1000000 ns/op	 250000 cpu-ns/op
`
	b, err := parse(strings.NewReader(before))
	if err != nil {
		t.Fatal(err)
	}
	a, err := parse(strings.NewReader(after))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printCompared(&out, b, a)
	got := out.String()
	for _, want := range []string{
		"| Queue sweep (100 messages, 3 fault rules, checks on), Go API | 2500 seeds per CPU-second (400 µs each) | 2500–2500 | 5000 seeds per CPU-second (200 µs each) | 5000–5000 | 2.00x |",
		"| Queue sweep: allocation per seed | 200000 B | 200000–200000 B | 50000 B | 50000–50000 B | 0.25x |",
		"| brokerlab explore --jobs 1 seed / Go API seed | n/a |  | 1.25x |",
		"| bench.SweepQueue/api | cpu-ns/op | 0.50x |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("compared table lacks %q:\n%s", want, got)
		}
	}
}

// A figure far below its unit keeps its digits: the stats refresh's 24 µs
// printed in ms read "0 ms" before.
func TestFigureKeepsSmallValues(t *testing.T) {
	for v, want := range map[float64]string{0.024: "0.024", 0.5: "0.5", 3.14159: "3.1", 16: "16", 977.4: "977", 0: "0"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
	s, err := parse(strings.NewReader("pkg: github.com/brokerlab/brokerlab/lab\n" +
		"BenchmarkFrame/messages=100000-2 \t1\t5 ns/op\t9000000 max-frame-cpu-ns\t400000 max-settle-snapshot-cpu-ns\t2000000 frame-cpu-ns\t45000000 max-B/32ticks\t40000000 B/32ticks\t0.6 settle-s\n"))
	if err != nil {
		t.Fatal(err)
	}
	tb := &table{s: s}
	rows(tb)
	var got []string
	for _, r := range tb.rows {
		if strings.HasPrefix(r.measure, "Player") {
			got = append(got, r.value+" "+r.verdict)
		}
	}
	want := []string{"9.0 ms ok", "0.4 ms ok", "2.0 ms (for reference)", "45 MB ok", "40 MB (for reference)", "0.6 s (for reference)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("player rows = %q, want %q", got, want)
	}
}
