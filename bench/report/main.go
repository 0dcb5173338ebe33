// Command report reads the output of brokerlab's benchmarks (go test -bench,
// any number of runs of each benchmark, concatenated) on standard input and
// prints the results table of the benchmark suite as markdown. The primary
// figure of every comparison is process CPU time (the benchmarks' cpu-ns/op
// or cpu-ns/msg, from getrusage), which a loaded machine disturbs far less
// than wall time; the wall-time ratio is printed beside it. Every ratio is
// the median of the per-round ratios (round i of the model against round i
// of its baseline, measured moments apart), shown with their range (lowest
// to highest round), so a reader sees how far a rerun may move it. Byte
// figures are medians. With -partial, rows without data are left out.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// samples maps "pkg.Benchmark/sub" and a unit to the values seen.
type samples map[string]map[string][]float64

var procSuffix = regexp.MustCompile(`-\d+$`)

// parse reads benchmark lines; a "pkg:" line names the package of the lines
// that follow, so benchmarks of the same name in two packages stay apart.
func parse(r io.Reader) (samples, error) {
	s := samples{}
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = p[strings.LastIndex(p, "/")+1:]
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := pkg + "." + procSuffix.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")
		if s[name] == nil {
			s[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
			s[name][f[i+1]] = append(s[name][f[i+1]], v)
		}
	}
	return s, sc.Err()
}

func median(v []float64) float64 {
	x := append([]float64(nil), v...)
	sort.Float64s(x)
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

// get returns the median of a benchmark's unit and how many runs it had.
func (s samples) get(name, unit string) (float64, int, bool) {
	v := s[name][unit]
	if len(v) == 0 {
		return 0, 0, false
	}
	return median(v), len(v), true
}

type row struct {
	measure, value, spread, wall, target, verdict string
}

// table collects the rows and the runs they rest on.
type table struct {
	s       samples
	rows    []row
	missing []string
	runs    int
}

func (t *table) need(name, unit string) (float64, bool) {
	v, n, ok := t.s.get(name, unit)
	if !ok {
		m := name + " (" + unit + ")"
		for _, x := range t.missing {
			if x == m {
				return 0, false
			}
		}
		t.missing = append(t.missing, m)
		return 0, false
	}
	if t.runs == 0 || n < t.runs {
		t.runs = n
	}
	return v, true
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "**missed**"
}

// cpuUnit is the CPU-time unit reported beside a wall-time unit.
func cpuUnit(unit string) string { return "cpu-" + unit }

// rounds returns the per-round ratios num/den of unit, paired in order, or
// nil when the two benchmarks have a different number of rounds or a
// round with a zero denominator.
func (t *table) rounds(num, den, unit string) []float64 {
	x, y := t.s[num][unit], t.s[den][unit]
	if len(x) == 0 || len(x) != len(y) {
		return nil
	}
	r := make([]float64, len(x))
	for i := range x {
		if y[i] <= 0 {
			return nil
		}
		r[i] = x[i] / y[i]
	}
	return r
}

// ratio adds a row num/den of CPU time per operation (unit is the wall-time
// unit, ns/op or ns/msg; its cpu- twin is the primary figure); max > 0 is
// an upper bound, min > 0 a lower one. Without CPU figures the row falls
// back to wall time and says so.
func (t *table) ratio(measure, num, numUnit, den, denUnit string, max, min float64) {
	cu, cd := cpuUnit(numUnit), cpuUnit(denUnit)
	note := ""
	if len(t.s[num][cu]) == 0 || len(t.s[den][cd]) == 0 {
		cu, cd, note = numUnit, denUnit, " (wall)"
	}
	a, ok1 := t.need(num, cu)
	b, ok2 := t.need(den, cd)
	if !ok1 || !ok2 || b == 0 {
		if !*partial {
			t.rows = append(t.rows, row{measure: measure, value: "n/a", target: bound(max, min, "x"), verdict: "not measured"})
		}
		return
	}
	r, spread := a/b, ""
	if numUnit == denUnit && cu == cd {
		if pairs := t.rounds(num, den, cu); pairs != nil {
			r = median(pairs)
			spread = fmt.Sprintf("%.2f–%.2fx", slices.Min(pairs), slices.Max(pairs))
		}
	} else if x, y := t.s[num][cu], t.s[den][cd]; len(x) == len(y) {
		pairs := make([]float64, len(x))
		for i := range x {
			pairs[i] = x[i] / y[i]
		}
		r = median(pairs)
		spread = fmt.Sprintf("%.2f–%.2fx", slices.Min(pairs), slices.Max(pairs))
	}
	wall := ""
	if x, y := t.s[num][numUnit], t.s[den][denUnit]; len(x) > 0 && len(x) == len(y) {
		pairs := make([]float64, len(x))
		for i := range x {
			pairs[i] = x[i] / y[i]
		}
		wall = fmt.Sprintf("%.2fx", median(pairs))
	}
	ok := (max <= 0 || r <= max) && (min <= 0 || r >= min)
	v := verdict(ok)
	if max <= 0 && min <= 0 {
		v = "(for reference)"
	}
	t.rows = append(t.rows, row{measure, fmt.Sprintf("%.2fx%s", r, note), spread, wall, bound(max, min, "x"), v})
}

// perSecond adds a row with the operations per CPU-second of a benchmark
// (1e9 / cpu-ns/op) and the CPU time per operation, with the range over
// the rounds; min > 0 is a lower bound on the rate.
func (t *table) perSecond(measure, name, what string, min float64) {
	v, ok := t.need(name, "cpu-ns/op")
	if !ok {
		if !*partial {
			t.rows = append(t.rows, row{measure: measure, value: "n/a", target: bound(0, min, ""), verdict: "not measured"})
		}
		return
	}
	x := t.s[name]["cpu-ns/op"]
	spread := fmt.Sprintf("%.0f–%.0f", 1e9/slices.Max(x), 1e9/slices.Min(x))
	wall := ""
	if w, _, ok := t.s.get(name, "ns/op"); ok && w > 0 {
		wall = fmt.Sprintf("%.0f %s/s", 1e9/w, what)
	}
	vd := "(for reference)"
	if min > 0 {
		vd = verdict(1e9/v >= min)
	}
	t.rows = append(t.rows, row{measure, fmt.Sprintf("%.0f %s per CPU-second (%.0f µs each)", 1e9/v, what, v/1e3), spread, wall, bound(0, min, ""), vd})
}

// bytes adds a row with a byte figure; max > 0 is an upper bound.
func (t *table) bytes(measure, name, unit string, max float64) {
	v, ok := t.need(name, unit)
	if !ok {
		if !*partial {
			t.rows = append(t.rows, row{measure: measure, value: "n/a", target: bound(max, 0, " B"), verdict: "not measured"})
		}
		return
	}
	vd := "(for reference)"
	if max > 0 {
		vd = verdict(v <= max)
	}
	x := t.s[name][unit]
	t.rows = append(t.rows, row{measure: measure, value: fmt.Sprintf("%.0f B", v), spread: fmt.Sprintf("%.0f–%.0f B", slices.Min(x), slices.Max(x)), target: bound(max, 0, " B"), verdict: vd})
}

func bound(max, min float64, unit string) string {
	switch {
	case max > 0:
		return "≤ " + strconv.FormatFloat(max, 'f', -1, 64) + unit
	case min > 0:
		return "≥ " + strconv.FormatFloat(min, 'f', -1, 64) + unit
	}
	return ""
}

var (
	partial = flag.Bool("partial", false, "leave out the rows without data")
	before  = flag.String("before", "", "a file of benchmark output to compare standard input with: print after/before per benchmark instead of the table")
)

// compare prints the results table of both sides, row by row: the before
// and after figure with their ranges, the after/before ratio of the
// figures, and the verdict of each side; then, for every benchmark and
// unit measured on both sides, the median after/before ratio of the rounds
// paired in order. A row one side lacks the data for reads n/a there.
func compare(after samples, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bef, err := parse(f)
	if err != nil {
		return err
	}
	printCompared(os.Stdout, bef, after)
	return nil
}

// printCompared writes the compared table and the per-benchmark ratios.
func printCompared(w io.Writer, bef, after samples) {
	saved := *partial
	*partial = false // both sides get every row, so they pair up
	bt, at := &table{s: bef}, &table{s: after}
	rows(bt)
	rows(at)
	*partial = saved
	byMeasure := map[string]row{}
	for _, r := range bt.rows {
		byMeasure[r.measure] = r
	}
	fmt.Fprintln(w, "| measure | before (CPU time, median) | before range | after (CPU time, median) | after range | after / before | target | verdict before → after |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	seen := map[string]bool{}
	emit := func(b, a row) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s → %s |\n", a.measure, b.value, b.spread, a.value, a.spread, change(b.value, a.value), a.target, short(b.verdict), short(a.verdict))
	}
	for _, a := range at.rows {
		seen[a.measure] = true
		b, ok := byMeasure[a.measure]
		if !ok {
			b = row{value: "n/a", verdict: "not measured"}
		}
		emit(b, a)
	}
	for _, b := range bt.rows {
		if !seen[b.measure] {
			emit(b, row{measure: b.measure, value: "n/a", target: b.target, verdict: "not measured"})
		}
	}
	fmt.Fprintf(w, "\nRounds: %d before, %d after. Ratios within a side are medians of per-round CPU-time ratios; \"after / before\" divides the two sides' figures (for a rate or a ratio of ratios, above 1 means the after figure is higher).\n\n", bt.runs, at.runs)

	var names []string
	for n := range after {
		if bef[n] != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	fmt.Fprintln(w, "| benchmark | unit | after / before |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, n := range names {
		var units []string
		for u := range after[n] {
			if len(bef[n][u]) > 0 && (strings.HasSuffix(u, "ns/op") || strings.HasSuffix(u, "ns/msg") || u == "B/op" || strings.HasSuffix(u, "B/msg") || u == "peak-MiB") {
				units = append(units, u)
			}
		}
		sort.Strings(units)
		for _, u := range units {
			a, b := after[n][u], bef[n][u]
			if median(b) == 0 {
				continue // nothing to divide by (no allocation before, say)
			}
			r := median(a) / median(b)
			if len(a) == len(b) {
				pairs := make([]float64, len(a))
				for i := range a {
					pairs[i] = a[i] / b[i]
				}
				r = median(pairs)
			}
			fmt.Fprintf(w, "| %s | %s | %.2fx |\n", n, u, r)
		}
	}
}

// short abbreviates a verdict for the compared table.
func short(v string) string {
	switch v {
	case "(for reference)":
		return "ref"
	case "not measured":
		return "n/a"
	}
	return v
}

// change returns after/before of two figures as the table prints them
// ("3230 seeds per CPU-second (...)", "1.40x", "250 B", "716 ms"): their
// leading numbers divided, or "" when either has none.
func change(before, after string) string {
	b, ok1 := leadingNumber(before)
	a, ok2 := leadingNumber(after)
	if !ok1 || !ok2 || b == 0 {
		return ""
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func leadingNumber(s string) (float64, bool) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-') {
		i++
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	return v, err == nil
}

func main() {
	flag.Parse()
	s, err := parse(os.Stdin)
	if err == nil && *before != "" {
		err = compare(s, *before)
		if err == nil {
			return
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	t := &table{s: s}
	rows(t)
	fmt.Println("| measure | result (CPU time, median) | range over rounds | wall time, median | target | verdict |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range t.rows {
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", r.measure, r.value, r.spread, r.wall, r.target, r.verdict)
	}
	fmt.Println()
	if v, _, ok := s.get("bench.WholeRun1M", "msgs/s"); ok {
		fmt.Printf("Whole run throughput on the machine that produced this table: %.0f messages per wall-clock second (absolute, for orientation only).\n\n", v)
	}
	fmt.Printf("Ratios are medians of per-round ratios of process CPU time (getrusage, user + system, every thread of the test process) over %d round(s), with the lowest and highest round beside them; models, baselines and peers were measured interleaved in one invocation of bench/run.sh.\n", t.runs)
	if len(t.missing) > 0 && !*partial {
		fmt.Printf("\nNot measured (benchmark missing from the input): %s.\n", strings.Join(t.missing, ", "))
	}
}

// rows adds the table's rows. Targets are those of the performance issue
// this suite tracks; a row without a target is for reference.
func rows(t *table) {
	// Sweeps: what a user's test or explore pays per seed.
	t.perSecond("Queue sweep (100 messages, 3 fault rules, checks on), Go API", "bench.SweepQueue/api", "seeds", 3*2230)
	t.perSecond("Log sweep (6 partitions, 3 members, 2 fault rules, checks on), Go API", "bench.SweepLog/api", "seeds", 3*2390)
	t.ratio("Queue sweep: Go API seed / hand-written floor", "bench.SweepQueue/api", "ns/op", "bench.SweepQueue/floor", "ns/op", 4, 0)
	t.ratio("Log sweep: Go API seed / hand-written floor", "bench.SweepLog/api", "ns/op", "bench.SweepLog/floor", "ns/op", 4, 0)
	t.bytes("Queue sweep: allocation per seed", "bench.SweepQueue/api", "B/op", 32*1024)
	t.bytes("Log sweep: allocation per seed", "bench.SweepLog/api", "B/op", 32*1024)
	t.ratio("Queue sweep: building the world and its components / the whole Go API seed", "bench.SweepQueue/api-build", "ns/op", "bench.SweepQueue/api", "ns/op", 0, 0)
	t.ratio("Queue sweep: building and running, checks left out / the whole Go API seed", "bench.SweepQueue/api-run", "ns/op", "bench.SweepQueue/api", "ns/op", 0, 0)
	t.ratio("Queue sweep: seed at GOGC=100 / at GOGC=400 (the collector's share)", "bench.SweepQueue/api", "ns/op", "bench.SweepQueue/api-gogc400", "ns/op", 0, 0)
	t.ratio("Log sweep: seed at GOGC=100 / at GOGC=400", "bench.SweepLog/api", "ns/op", "bench.SweepLog/api-gogc400", "ns/op", 0, 0)
	t.ratio("Queue sweep: simtest seed / Go API seed", "bench.SweepQueue/simtest", "ns/op", "bench.SweepQueue/api", "ns/op", 1.2, 0)
	t.ratio("Log sweep: simtest seed / Go API seed", "bench.SweepLog/simtest", "ns/op", "bench.SweepLog/api", "ns/op", 1.2, 0)
	t.ratio("Queue sweep: scenario seed as explore runs it (lab.Probe) / Go API seed", "bench.SweepQueue/scenario-probe", "ns/op", "bench.SweepQueue/api", "ns/op", 1.2, 0)
	t.ratio("Queue sweep: scenario run with its report's summary (lab.Execute) / Go API seed", "bench.SweepQueue/scenario", "ns/op", "bench.SweepQueue/api", "ns/op", 0, 0)
	t.bytes("Queue sweep: allocation per simtest seed", "bench.SweepQueue/simtest", "B/op", 0)
	// brokerlab explore on the queue sweep's scenario, in a process of its
	// own: process CPU time per seed, process start and scenario load
	// included (run.sh times it; explore runs at GOGC=400 unless told).
	t.perSecond("brokerlab explore --jobs 1, queue sweep scenario: seeds per CPU-second of the process", "brokerlab.Explore/jobs=1", "seeds", 0)
	t.ratio("brokerlab explore --jobs 1 seed / Go API seed", "brokerlab.Explore/jobs=1", "ns/op", "bench.SweepQueue/api", "ns/op", 1.2, 0)
	t.ratio("brokerlab explore --jobs 2 / --jobs 1, per seed (wall below 0.56x: at least 1.8x faster; needs idle cores)", "brokerlab.Explore/jobs=2", "ns/op", "brokerlab.Explore/jobs=1", "ns/op", 0, 0)
	t.ratio("Two brokerlab explore --jobs 1 processes at once / one alone, per seed (the machine's ceiling for --jobs 2: wall 0.5x would be 2x)", "brokerlab.Explore/two-processes", "ns/op", "brokerlab.Explore/jobs=1", "ns/op", 0, 0)
	if len(t.s["brokerlab.Explore/jobs=1"]["explore-seeds/cpu-s"]) > 0 {
		t.figure("brokerlab explore --jobs 1: seeds per CPU-second as explore reports it", "brokerlab.Explore/jobs=1", "explore-seeds/cpu-s", "", 1, 0)
	}
	// Peers: the same seed's work (setup, 100 messages in, out and acked, teardown).
	t.ratio("Peer seed / brokerlab queue seed: watermill gochannel", "bench.PeerSeed/gochannel", "ns/op", "bench.SweepQueue/api", "ns/op", 0, 5)
	t.ratio("Peer seed / brokerlab queue seed: NATS core, embedded", "bench.PeerSeed/nats-core", "ns/op", "bench.SweepQueue/api", "ns/op", 0, 30)
	t.ratio("Peer seed / brokerlab queue seed: NATS JetStream, memory storage", "bench.PeerSeed/nats-jetstream", "ns/op", "bench.SweepQueue/api", "ns/op", 0, 30)
	t.ratio("Peer seed / brokerlab log seed: kfake with franz-go", "kafkapeer.PeerSeed/kfake", "ns/op", "bench.SweepLog/api", "ns/op", 0, 30)
	// The player's stats refresh on a big run.
	t.figure("Stats refresh at 10^6 messages (32 lifecycles + Ledger.Stats), CPU time", "bench.LedgerStats1M", "cpu-ns/op", " ms", 1e6, 16)
	t.figure("Stats refresh at 10^6 messages: allocated per refresh", "bench.LedgerStats1M", "B/op", " MB", 1e6, 0)
	// The player's frames (Step + Snapshot) on a big run, from lab's
	// BenchmarkFrame; the 10^6 point runs with BIG=1.
	for _, n := range []struct{ label, size string }{{"10^5", "100000"}, {"10^6", "1000000"}} {
		name := "lab.Frame/messages=" + n.size
		if n.size == "1000000" && len(t.s[name]) == 0 {
			continue // BIG=1 only
		}
		t.figure("Player frame at "+n.label+" messages (Step + Snapshot, verdict included): slowest of 32 frames, CPU time", name, "max-frame-cpu-ns", " ms", 1e6, 16)
		t.figure("Player at "+n.label+" messages: slowest Snapshot (view and verdict) while they settle, thousands moving per tick, CPU time", name, "max-settle-snapshot-cpu-ns", " ms", 1e6, 16)
		t.figure("Player frame at "+n.label+" messages: mean of 32 frames, CPU time", name, "frame-cpu-ns", " ms", 1e6, 0)
		t.figure("Player frame at "+n.label+" messages: allocated over the worst 32 ticks of play", name, "max-B/32ticks", " MB", 1e6, 50)
		t.figure("Player frame at "+n.label+" messages: allocated per 32 ticks, mean", name, "B/32ticks", " MB", 1e6, 0)
		t.figure("Player at "+n.label+" messages: CPU time to settle them in a session", name, "settle-s", " s", 1, 0)
	}
	// Models against their baselines, per message.
	t.ratio("Queue lifecycle (text trace) / heap baseline", "bench.QueueLifecycle", "ns/op", "bench.HeapLifecycleBaseline", "ns/op", 3, 0)
	t.ratio("watermill gochannel publish+ack / queue lifecycle, per message", "bench.PeerGoChannelPublishAck", "ns/op", "bench.QueueLifecycle", "ns/op", 0, 0)
	t.ratio("watermill gochannel publish+ack / queue lifecycle headless, per message", "bench.PeerGoChannelPublishAck", "ns/op", "bench.QueueLifecycleHeadless", "ns/op", 0, 0)
	t.ratio("Log produce+poll+commit, ledger on / slice baseline", "bench.LogProducePollCommit", "ns/op", "bench.SliceLogBaseline", "ns/op", 3, 0)
	t.ratio("Log produce+poll+commit, the model alone (no ledger) / slice baseline", "bench.LogProducePollCommitModel", "ns/op", "bench.SliceLogBaseline", "ns/op", 0, 0)
	t.ratio("Log produce+poll+commit, the model alone, messages created in the tick they are produced / slice baseline", "bench.LogProducePollCommitModelNow", "ns/op", "bench.SliceLogBaseline", "ns/op", 0, 0)
	t.ratio("Pub/sub fan-out to 16, ledger on / loop baseline", "bench.PubSubFanout16", "ns/op", "bench.FanoutLoopBaseline", "ns/op", 10, 0)
	t.ratio("Pub/sub fan-out to 16, the model alone (no ledger) / loop baseline", "bench.PubSubFanout16Model", "ns/op", "bench.FanoutLoopBaseline", "ns/op", 0, 0)
	t.ratio("Outbox: one memdb txn per op / outbox (speed-up)", "outbox.OutboxOneTxnPerOpBaseline", "ns/op", "outbox.OutboxOrderAndRelay", "ns/op", 0, 3)
	for _, m := range []struct{ label, bench string }{{"queue", "ScaleQueue"}, {"log", "ScaleLog"}, {"pub/sub", "ScalePubSub"}} {
		base := "bench." + m.bench + "/resident=1000"
		for _, n := range []string{"10000", "100000", "1000000", "10000000"} {
			if n == "10000000" && len(t.s["bench."+m.bench+"/resident="+n]) == 0 {
				continue // the 10^7 tier runs with BIG=1 only
			}
			max := 0.0
			if n == "1000000" || n == "10000000" {
				max = 1.5
			}
			t.ratio(fmt.Sprintf("Scale, %s: cost per message at %s resident / at 1000", m.label, n), "bench."+m.bench+"/resident="+n, "ns/op", base, "ns/op", max, 0)
		}
	}
	t.bytes("Memory: overhead per resident queued message (64-byte body), queue alone", "bench.ResidentQueue/no-ledger", "overhead-B/msg", 256)
	t.bytes("Memory: overhead per resident queued message, with the ledger", "bench.ResidentQueue/ledger", "overhead-B/msg", 0)
	t.bytes("Memory: overhead per resident log record (64-byte body), log alone", "bench.ResidentLog/no-ledger", "overhead-B/msg", 0)
	t.bytes("Memory: overhead per resident log record, with the ledger", "bench.ResidentLog/ledger", "overhead-B/msg", 0)
	t.bytes("Memory: the ledger per settled message (200,000 settled, the whole run's scenario)", "bench.LedgerSettled", "B/msg", 64)
	t.ratio("Whole run, 1,000,000 messages, faults + ledger, headless: cost per message / queue lifecycle", "bench.WholeRun1M", "ns/msg", "bench.QueueLifecycle", "ns/op", 2, 0)
	t.ratio("Whole run: cost per message / queue lifecycle, headless", "bench.WholeRun1M", "ns/msg", "bench.QueueLifecycleHeadless", "ns/op", 0, 0)
	// contrib/watermillsim/README.md: "The 60 runs take about 0.1 s".
	t.figure("watermillsim: the 60 router runs of TestRouterTraceIsReproducible, process CPU time", "watermillsim.RouterTraceIsReproducible", "cpu-ns/op", " ms", 1e6/60, 0)
	t.figure("bench/run.sh: wall time of one round of this table", "suite.Round", "ns/op", " s", 1e9, 0)
	if len(t.s["bench.WholeRun10M"]) > 0 { // BIG=1 only
		t.ratio("Whole run at 10,000,000 messages: cost per message / at 1,000,000", "bench.WholeRun10M", "ns/msg", "bench.WholeRun1M", "ns/msg", 1.5, 0)
		t.figure("Whole run at 10,000,000 messages: peak RSS of the process", "bench.WholeRun10M", "peak-MiB", " MiB", 1, 700)
		t.figure("Whole run at 10,000,000 messages: peak RSS per message", "bench.WholeRun10M", "peak-B/msg", " B", 1, 0)
	}
}

// figure adds a row with the median of a benchmark's unit divided by div,
// printed with suffix; max > 0 is an upper bound on the divided figure.
func (t *table) figure(measure, name, unit, suffix string, div, max float64) {
	v, ok := t.need(name, unit)
	if !ok {
		if !*partial {
			t.rows = append(t.rows, row{measure: measure, value: "n/a", target: bound(max, 0, suffix), verdict: "not measured"})
		}
		return
	}
	v /= div
	x := slices.Clone(t.s[name][unit])
	for i := range x {
		x[i] /= div
	}
	vd := "(for reference)"
	if max > 0 {
		vd = verdict(v <= max)
	}
	t.rows = append(t.rows, row{measure: measure, value: num(v) + suffix, spread: num(slices.Min(x)) + "–" + num(slices.Max(x)) + suffix, target: bound(max, 0, suffix), verdict: vd})
}

// num prints a figure with the digits it needs: whole numbers from 10 up,
// one decimal from 1, and three significant digits below 1, so a figure
// far under its unit (24 µs as 0.024 ms) does not read 0.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 10:
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return fmt.Sprintf("%.1f", v)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
