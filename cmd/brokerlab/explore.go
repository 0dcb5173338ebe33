package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/printable"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sweep"
)

// stderrTerminal reports whether w (the command's stderr) is a terminal,
// where explore draws its progress bar; replaced in tests.
var stderrTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// maxJobs caps --jobs: more workers than that only cost memory.
const maxJobs = sweep.MaxJobs

// exploreGCPercent is the GOGC explore runs with unless GOGC says
// otherwise. A sweep builds and drops one small World per seed, so with
// the default 100 the collector runs every few seeds; at 400 it ran twice
// as many seeds per second on the lessons (measured with --jobs 1 and 2),
// and the memory limit still bounds the heap.
const exploreGCPercent = 400

// shardFlag is a --shard K/N value.
type shardFlag struct{ k, n int }

func (s *shardFlag) String() string {
	if s.n == 0 {
		return "1/1"
	}
	return strconv.Itoa(s.k) + "/" + strconv.Itoa(s.n)
}

func (s *shardFlag) Set(v string) error {
	ks, ns, ok := strings.Cut(v, "/")
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n || n > lab.MaxSweepShards {
		return fmt.Errorf("want K/N with 1 <= K <= N <= %d, e.g. 2/4", lab.MaxSweepShards)
	}
	s.k, s.n = k, n
	return nil
}

// uintFlag is a whole-number flag with a clear error.
type uintFlag struct{ v uint64 }

func (u *uintFlag) String() string { return strconv.FormatUint(u.v, 10) }

func (u *uintFlag) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("must be a whole number from 0 to %d", uint64(1<<64-1))
	}
	u.v = n
	return nil
}

// cmdExplore sweeps the seeds of one scenario, shrinks the first failing
// seed and writes its reproducer; "explore merge" merges shard reports.
func (c *cli) cmdExplore(args []string) int {
	if len(args) > 0 && args[0] == "merge" {
		return c.cmdExploreMerge(args[1:])
	}
	fs := c.flags("explore")
	seeds := uintFlag{100}
	from := uintFlag{1}
	var shard shardFlag
	fs.Var(&seeds, "seeds", "how many seeds to sweep (all shards together)")
	fs.Var(&from, "from", "the first seed")
	jobs := fs.Int("jobs", runtime.GOMAXPROCS(0), "seeds run at once, each in its own world")
	fs.Var(&shard, "shard", "sweep only shard K of N: the seeds s with s mod N == K-1")
	jsonOut := fs.String("json", "", "write the sweep report (JSON, for explore merge) to this file")
	out := fs.String("out", "", "write the reproducer here (default NAME.min.yaml in the current directory)")
	force := fs.Bool("force", false, "replace the reproducer if it exists already")
	noShrink := fs.Bool("no-shrink", false, "list the failing seeds only; do not shrink or write a reproducer")
	variant := fs.String("variant", "", "sweep this variant of the file (its variants: section); the reproducer is the variant's own document, NAME-VARIANT.min.yaml")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(c.stderr, "brokerlab explore: want exactly one FILE or LESSON; lessons:", lessonNames())
		return exitBadInput
	}
	if *jobs < 1 || *jobs > maxJobs {
		fmt.Fprintf(c.stderr, "brokerlab explore: --jobs %d: want 1 to %d\n", *jobs, maxJobs)
		return exitBadInput
	}
	space := lab.Seeds{From: from.v, Count: seeds.v, Shard: shard.k, Shards: shard.n}
	if err := space.Validate(); err != nil {
		fmt.Fprintln(c.stderr, "brokerlab explore:", strings.TrimPrefix(err.Error(), sweep.ErrSeeds.Error()+": "))
		return exitBadInput
	}
	name, src, err := scenario.Source(pos[0])
	if err != nil {
		fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
		return exitBadInput
	}
	s, err := scenario.Load(name, src)
	if err != nil {
		fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
		return exitBadInput
	}
	// The text the reproducer is written from: the file, or the variant
	// as a document of its own.
	minSrc := src
	if *variant != "" {
		v, ok := c.variantOf(s, *variant)
		if !ok {
			return exitBadInput
		}
		if minSrc, err = s.VariantSource(*variant); err != nil {
			fmt.Fprintln(c.stderr, "brokerlab explore:", strings.TrimRight(err.Error(), "\n"))
			return exitBadInput
		}
		s = v
	}
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(exploreGCPercent))
	}
	minOut := *out
	if minOut == "" {
		minOut = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
		if *variant != "" {
			minOut += "-" + *variant
		}
		minOut += ".min.yaml"
	}
	if sameFile(minOut, name) {
		fmt.Fprintf(c.stderr, "brokerlab explore: --out %s would overwrite the scenario itself; name another file\n", printable.String(minOut))
		return exitBadInput
	}
	// Refuse every output before the sweep, not after it: an output that
	// is the scenario or the other output, a directory, a link to a file,
	// or a reproducer that exists already.
	if *jsonOut != "" {
		others := []clash{inputClash("scenario", name)}
		switch {
		case *noShrink:
		case *out != "":
			others = append(others, outputClash("--out names the same file", minOut))
		default:
			others = append(others, clash{minOut, fmt.Sprintf("the reproducer goes to the same file (%s; change that with --out); give each output its own file", printable.String(minOut))})
		}
		if err := checkOutput("--json", *jsonOut, others...); err != nil {
			fmt.Fprintln(c.stderr, "brokerlab explore:", err)
			return exitBadInput
		}
	}
	if !*noShrink {
		what, hint := "--out", ""
		if *out == "" {
			what, hint = "the reproducer", " with --out FILE"
		}
		if err := checkOutput(what, minOut, inputClash("scenario", name)); err != nil {
			fmt.Fprintf(c.stderr, "brokerlab explore: %v%s\n", err, hint)
			return exitBadInput
		}
		if fi, err := os.Lstat(minOut); err == nil && fi.Mode().IsRegular() && !*force {
			fmt.Fprintf(c.stderr, "brokerlab explore: %s exists; pass --force to replace it, or --out to name another file\n", printable.String(minOut))
			return exitBadInput
		}
	}
	what := name
	if *variant != "" {
		what += " variant " + *variant
	}
	fmt.Fprintf(c.stdout, "explore %s: %s (%d seeds)\n", printable.String(what), space, space.Len())
	rep, res, err := c.sweep(name, src, *variant, space, *jobs)
	if err != nil {
		fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
		return exitBadInput
	}
	if err := rep.WriteText(c.stdout); err != nil {
		fmt.Fprintln(c.stderr, "brokerlab:", err)
		return exitBadInput
	}
	unit := "jobs"
	if *jobs == 1 {
		unit = "job"
	}
	cpu := ""
	if res.CPU > 0 {
		// The CPU figure is what one core gives: on a busy machine the
		// wall-clock rate understates it.
		cpu = fmt.Sprintf(", %.0f per CPU-second (%.2f CPU-s)", res.PerCPUSecond(), res.CPU.Seconds())
	}
	fmt.Fprintf(c.stderr, "%d seeds in %.2fs with %d %s: %.0f seeds/s%s\n", rep.Ran, res.Wall.Seconds(), *jobs, unit, res.PerSecond(), cpu)
	if *jsonOut != "" {
		if err := writeOutput(*jsonOut, rep.WriteJSON); err != nil {
			fmt.Fprintln(c.stderr, "brokerlab explore:", err)
			return exitBadInput
		}
		fmt.Fprintln(c.stdout, "wrote", printable.String(*jsonOut))
	}
	if rep.Failed == 0 {
		return exitOK
	}
	worst := exitFailed
	for _, f := range rep.Failures {
		if f.Expect < 0 {
			worst = exitBadInput // a runtime error, as brokerlab run reports it
		}
	}
	if !*noShrink {
		seed := rep.Failures[0].Seed
		again := fmt.Sprintf("--seed %d ", seed)
		if *variant != "" {
			again += "--variant " + *variant + " "
		}
		c.shrink(s, minSrc, seed, minOut, again+pos[0])
	}
	return worst
}

// shrink shrinks seed of s, prints the minimal schedule and writes the
// reproducer, made from src (the document s was loaded from), to out.
// again are the arguments of brokerlab run that reproduce the failing seed
// from the scenario itself, offered when out keeps no file to run (a
// device or a FIFO, such as /dev/null).
func (c *cli) shrink(s *scenario.Scenario, src []byte, seed uint64, out, again string) {
	sh, err := lab.Shrink(s, seed, nil)
	if err != nil {
		fmt.Fprintln(c.stderr, "brokerlab explore:", err)
		return
	}
	capped := ""
	if sh.Capped {
		capped = fmt.Sprintf(" (stopped at the cap of %d runs: it may not be minimal)", lab.MaxShrinkRuns)
	}
	fmt.Fprintf(c.stdout, "shrinking seed %d: %d %s, shrunk to %d in %d runs%s:\n", seed, sh.Fired.Len(),
		plural(sh.Fired.Len(), "firing", "firings"), sh.Minimal.Len(), sh.Runs, capped)
	if sh.Minimal.Len() <= 2 {
		fmt.Fprintf(c.stdout, "  %s\n", sh.Minimal.Words())
	} else {
		for i, d := range sh.Minimal.Decisions {
			fmt.Fprintf(c.stdout, "  %d. %s\n", i+1, d.Words())
		}
	}
	fmt.Fprintf(c.stdout, "  fails %s\n", sh.Failure.In(s.File))
	data, err := lab.MinFile(s, sh, src, out)
	if err != nil {
		fmt.Fprintln(c.stderr, "brokerlab explore:", err)
		return
	}
	plan, _ := statOutput(out)
	if err := writeOutput(out, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		fmt.Fprintln(c.stderr, "brokerlab explore:", err)
		return
	}
	if plan == planInPlace {
		fmt.Fprintf(c.stdout, "wrote the reproducer to %s, which keeps no file to run; reproduce the failing seed with: brokerlab run %s\n", printable.String(out), printable.String(again))
		return
	}
	fmt.Fprintf(c.stdout, "wrote %s; reproduce with: brokerlab run %s\n", printable.String(out), printable.String(out))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sweep runs every seed of space with jobs workers (sweep.Run), over the
// variant of src called variant when it is not "". Each worker loads its
// own Scenario from src and runs one World per seed, so no state is
// shared; the report is sorted by seed, so it does not depend on jobs.
// On a terminal, stderr shows a progress bar. It returns the sweep's
// figures (wall and CPU time) beside the report.
func (c *cli) sweep(name string, src []byte, variant string, space lab.Seeds, jobs int) (*lab.SweepReport, *sweep.Report[lab.Failure], error) {
	bar := newProgress(c.rawStderr, space.Len())
	res, err := sweep.Run(sweep.Config{Seeds: space, Jobs: jobs, MaxFailures: lab.MaxListedFailures,
		Progress: func(p sweep.Progress) { bar.update(p.Ran, p.Failed) }},
		func() (sweep.Probe[lab.Failure], error) {
			s, err := scenario.Load(name, src)
			if err == nil && variant != "" {
				s, err = s.Variant(variant)
			}
			if err != nil {
				return nil, err
			}
			return func(seed uint64) (lab.Failure, bool, error) { return lab.Probe(s, seed, lab.Options{}) }, nil
		})
	bar.done()
	if err != nil {
		return nil, nil, err
	}
	rep := lab.NewSweepReport(name, src, space)
	rep.Variant = variant
	for _, f := range res.Failures {
		rep.Add(f.Seed, f.Value, true)
	}
	rep.Ran, rep.Failed = res.Ran, res.Failed
	rep.Sort()
	return rep, res, nil
}

// progress draws a progress bar with the seeds per wall-clock second and
// per CPU-second of the process on a terminal, at most ten times a
// second; it draws nothing elsewhere.
type progress struct {
	w          io.Writer
	on         bool
	total      uint64
	start, out time.Time
	cpu        time.Duration // the process's CPU time at the start
}

func newProgress(w io.Writer, total uint64) *progress {
	now := time.Now()
	return &progress{w: w, on: stderrTerminal(w), total: total, start: now, out: now, cpu: sweep.CPUTime()}
}

const barWidth = 30

func (p *progress) update(done, failed uint64) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.out) < 100*time.Millisecond && done < p.total {
		return
	}
	p.out = now
	fill := 0
	if p.total > 0 {
		fill = int(done * barWidth / p.total)
	}
	rate := float64(done) / max(now.Sub(p.start).Seconds(), 1e-9)
	cpu := ""
	if used := sweep.CPUTime() - p.cpu; p.cpu > 0 && used > 0 {
		cpu = fmt.Sprintf(" (%.0f per CPU-s)", float64(done)/used.Seconds())
	}
	fmt.Fprintf(p.w, "\r\x1b[K[%s%s] %d/%d seeds  %.0f seeds/s%s  %d failed", strings.Repeat("#", fill),
		strings.Repeat(".", barWidth-fill), done, p.total, rate, cpu, failed)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// cmdExploreMerge merges the JSON reports of the shards of one sweep.
func (c *cli) cmdExploreMerge(args []string) int {
	fs := c.flags("explore")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: brokerlab explore merge [--json FILE] REPORT.json...")
		fmt.Fprintln(fs.Output(), "\nMerge the --json reports of the shards of one sweep (the same scenario text, seeds and shard count).")
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	jsonOut := fs.String("json", "", "write the merged report to this file")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprintln(c.stderr, "brokerlab explore merge: want at least one REPORT.json (written by brokerlab explore --json)")
		return exitBadInput
	}
	for i, p := range pos {
		for _, q := range pos[:i] {
			if sameFile(p, q) {
				fmt.Fprintf(c.stderr, "brokerlab explore merge: %s and %s are the same report; give each shard's report once\n", printable.String(q), printable.String(p))
				return exitBadInput
			}
		}
	}
	if *jsonOut != "" {
		var inputs []clash
		for _, p := range pos {
			inputs = append(inputs, inputClash("report", p))
		}
		if err := checkOutput("--json", *jsonOut, inputs...); err != nil {
			fmt.Fprintln(c.stderr, "brokerlab explore merge:", err)
			return exitBadInput
		}
	}
	var rs []*lab.SweepReport
	for _, p := range pos {
		// Non-blocking, so that a FIFO nobody writes to reads as empty
		// instead of blocking the open for ever; a pipe with a writer
		// (a shell's process substitution) is read as usual.
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			fmt.Fprintln(c.stderr, "brokerlab explore merge:", err)
			return exitBadInput
		}
		r, err := lab.ReadSweepReport(p, f)
		f.Close()
		if err != nil {
			fmt.Fprintln(c.stderr, "brokerlab explore merge:", strings.TrimPrefix(err.Error(), lab.ErrSweep.Error()+": "))
			return exitBadInput
		}
		rs = append(rs, r)
	}
	m, err := lab.MergeSweeps(rs...)
	if err != nil {
		fmt.Fprintln(c.stderr, "brokerlab explore merge:", strings.ReplaceAll(err.Error(), lab.ErrSweep.Error()+": ", ""))
		return exitBadInput
	}
	what := m.Scenario
	if m.Variant != "" {
		what += " variant " + m.Variant
	}
	fmt.Fprintf(c.stdout, "explore %s: %s, %d of %d shards merged\n", printable.String(what), lab.Seeds{From: m.From, Count: m.Count}, len(m.Covered), m.Shards)
	// The missing shards are named once, below, with the exit code.
	if err := m.WriteResults(c.stdout); err != nil {
		fmt.Fprintln(c.stderr, "brokerlab:", err)
		return exitBadInput
	}
	if *jsonOut != "" {
		if err := writeOutput(*jsonOut, m.WriteJSON); err != nil {
			fmt.Fprintln(c.stderr, "brokerlab explore merge:", err)
			return exitBadInput
		}
		fmt.Fprintln(c.stdout, "wrote", printable.String(*jsonOut))
	}
	if miss := m.Missing(); len(miss) > 0 {
		// A CI job that lost a shard must not go green: the seeds of the
		// missing shards were never run.
		fmt.Fprintf(c.stderr, "brokerlab explore merge: shards %v of %d are missing, so their seeds were not run; merge every shard's --json report\n", miss, m.Shards)
		return exitFailed
	}
	if m.Failed == 0 {
		return exitOK
	}
	arg := m.Scenario
	if l, ok := strings.CutPrefix(arg, "lessons/"); ok && isLesson(strings.TrimSuffix(l, ".yaml")) {
		arg = strings.TrimSuffix(l, ".yaml")
	}
	if m.Variant != "" {
		arg = "--variant " + m.Variant + " " + arg
	}
	fmt.Fprintf(c.stdout, "shrink the first: brokerlab explore %s --from %d --seeds 1\n", printable.String(arg), m.Failures[0].Seed)
	for _, f := range m.Failures {
		if f.Expect < 0 {
			return exitBadInput
		}
	}
	return exitFailed
}
