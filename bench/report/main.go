// Command report reads the output of brokerlab's benchmarks (go test -bench,
// any number of runs of each benchmark, concatenated) on standard input and
// prints the results table of the benchmark suite as markdown. Every
// comparison is the median of the per-round ratios (round i of the model
// against round i of its baseline, measured moments apart), which is
// steadier on a shared machine than a ratio of medians; byte figures are
// medians. With -partial, rows without data are left out.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
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
	measure, value, target, verdict string
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

// ratio adds a row num/den; max > 0 is an upper bound, min > 0 a lower one.
func (t *table) ratio(measure, num, numUnit, den, denUnit string, max, min float64) {
	a, ok1 := t.need(num, numUnit)
	b, ok2 := t.need(den, denUnit)
	if !ok1 || !ok2 || b == 0 {
		if !*partial {
			t.rows = append(t.rows, row{measure, "n/a", bound(max, min, "x"), "not measured"})
		}
		return
	}
	r := a / b
	if x, y := t.s[num][numUnit], t.s[den][denUnit]; len(x) == len(y) {
		pairs := make([]float64, 0, len(x))
		for i := range x {
			if y[i] > 0 {
				pairs = append(pairs, x[i]/y[i])
			}
		}
		if len(pairs) == len(x) {
			r = median(pairs)
		}
	}
	ok := (max <= 0 || r <= max) && (min <= 0 || r >= min)
	v := verdict(ok)
	if max <= 0 && min <= 0 {
		v = "(for reference)"
	}
	t.rows = append(t.rows, row{measure, fmt.Sprintf("%.2fx", r), bound(max, min, "x"), v})
}

// bytes adds a row with a byte figure; max > 0 is an upper bound.
func (t *table) bytes(measure, name, unit string, max float64) {
	v, ok := t.need(name, unit)
	if !ok {
		if !*partial {
			t.rows = append(t.rows, row{measure, "n/a", bound(max, 0, " B"), "not measured"})
		}
		return
	}
	vd := "(for reference)"
	if max > 0 {
		vd = verdict(v <= max)
	}
	t.rows = append(t.rows, row{measure, fmt.Sprintf("%.0f B", v), bound(max, 0, " B"), vd})
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

// compare prints, for every benchmark and unit measured on both sides, the
// median after/before ratio of the rounds paired in order.
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
	var names []string
	for n := range after {
		if bef[n] != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	fmt.Println("| benchmark | unit | after / before |")
	fmt.Println("|---|---|---|")
	for _, n := range names {
		var units []string
		for u := range after[n] {
			if len(bef[n][u]) > 0 && (u == "ns/op" || u == "ns/msg" || u == "B/op" || strings.HasSuffix(u, "B/msg")) {
				units = append(units, u)
			}
		}
		sort.Strings(units)
		for _, u := range units {
			a, b := after[n][u], bef[n][u]
			r := median(a) / median(b)
			if len(a) == len(b) {
				pairs := make([]float64, len(a))
				for i := range a {
					pairs[i] = a[i] / b[i]
				}
				r = median(pairs)
			}
			fmt.Printf("| %s | %s | %.2fx |\n", n, u, r)
		}
	}
	return nil
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
	t.ratio("Queue lifecycle / heap baseline", "queue.QueueLifecycle", "ns/op", "queue.HeapLifecycleBaseline", "ns/op", 3, 0)
	t.ratio("watermill gochannel publish+ack / queue lifecycle (peer)", "bench.PeerGoChannelPublishAck", "ns/op", "bench.QueueLifecycle", "ns/op", 0, 20)
	t.ratio("watermill gochannel publish+ack / queue lifecycle, headless (no trace, like the peer)", "bench.PeerGoChannelPublishAck", "ns/op", "bench.QueueLifecycleHeadless", "ns/op", 0, 0)
	t.ratio("Log produce+poll+commit, ledger on / slice baseline", "eventlog.LogProducePollCommit/ledger", "ns/op", "eventlog.SliceLogBaseline", "ns/op", 3, 0)
	t.ratio("Pub/sub fan-out to 16 / loop baseline", "pubsub.PubSubFanout16", "ns/op", "pubsub.FanoutLoopBaseline", "ns/op", 3, 0)
	t.ratio("Outbox: one memdb txn per op / outbox (speed-up)", "outbox.OutboxOneTxnPerOpBaseline", "ns/op", "outbox.OutboxOrderAndRelay", "ns/op", 0, 3)
	for _, m := range []struct{ label, bench string }{{"queue", "ScaleQueue"}, {"log", "ScaleLog"}, {"pub/sub", "ScalePubSub"}} {
		base := "bench." + m.bench + "/resident=1000"
		for _, n := range []string{"10000", "100000", "1000000"} {
			max := 0.0
			if n == "1000000" {
				max = 1.5
			}
			t.ratio(fmt.Sprintf("Scale, %s: cost per message at %s resident / at 1000", m.label, n), "bench."+m.bench+"/resident="+n, "ns/op", base, "ns/op", max, 0)
		}
	}
	t.bytes("Memory: overhead per resident queued message (64-byte body), queue alone", "bench.ResidentQueue/no-ledger", "overhead-B/msg", 256)
	t.bytes("Memory: overhead per resident queued message, with the ledger", "bench.ResidentQueue/ledger", "overhead-B/msg", 0)
	t.bytes("Memory: overhead per resident log record (64-byte body), log alone", "bench.ResidentLog/no-ledger", "overhead-B/msg", 0)
	t.bytes("Memory: overhead per resident log record, with the ledger", "bench.ResidentLog/ledger", "overhead-B/msg", 0)
	t.ratio("Whole run, 1,000,000 messages, faults + ledger, headless: cost per message / queue lifecycle", "bench.WholeRun1M", "ns/msg", "bench.QueueLifecycle", "ns/op", 2, 0)
	t.ratio("Whole run: cost per message / queue lifecycle, headless", "bench.WholeRun1M", "ns/msg", "bench.QueueLifecycleHeadless", "ns/op", 0, 0)

	fmt.Println("| measure | result | target | verdict |")
	fmt.Println("|---|---|---|---|")
	for _, r := range t.rows {
		fmt.Printf("| %s | %s | %s | %s |\n", r.measure, r.value, r.target, r.verdict)
	}
	fmt.Println()
	if v, _, ok := s.get("bench.WholeRun1M", "msgs/s"); ok {
		fmt.Printf("Whole run throughput on the machine that produced this table: %.0f messages per second (absolute, for orientation only).\n\n", v)
	}
	fmt.Printf("Ratios are medians of per-round ratios over %d round(s); models, baselines and the peer were measured interleaved in one invocation of bench/run.sh.\n", t.runs)
	if len(t.missing) > 0 && !*partial {
		fmt.Printf("\nNot measured (benchmark missing from the input): %s.\n", strings.Join(t.missing, ", "))
	}
}
