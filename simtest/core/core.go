// Package core is the part of package simtest that needs no model: a
// simulated world bound to a test, its fault injector with handles, checks
// that print a reproduction, and seed sweeps that shrink a failure to its
// minimal fault schedule. Package simtest adds the model constructors on
// top; the models' own in-package tests use core directly, because they
// cannot import simtest (it imports them).
//
// Everything a World does is deterministic for its seed. A World is driven
// by the goroutine of its test.
package core

import (
	"bytes"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// The flags every test binary that imports the package accepts. They are
// registered on flag.CommandLine once, and only when no other package
// registered them first, so several packages may import core.
var (
	flagSeed  = uintFlag("brokerlab.seed", 0, "run only this seed (overrides the seed of New and the seeds of Sweep); 0 means the test's own")
	flagSeeds = intFlag("brokerlab.seeds", 0, "how many seeds Sweep runs; 0 means the test's own")
	flagOut   = stringFlag("brokerlab.out", "", "directory Sweep writes a shrunk failure's faults section (TEST-seedN.faults.yaml) and Go snippet (TEST-seedN.faults.go.txt) to; empty means the test's TempDir")
)

func uintFlag(name string, v uint64, usage string) func() uint64 {
	if flag.Lookup(name) == nil {
		flag.Uint64(name, v, usage)
	}
	return func() uint64 {
		var x uint64
		if f := flag.Lookup(name); f != nil {
			fmt.Sscan(f.Value.String(), &x)
		}
		return x
	}
}

func intFlag(name string, v int, usage string) func() int {
	if flag.Lookup(name) == nil {
		flag.Int(name, v, usage)
	}
	return func() int {
		var x int
		if f := flag.Lookup(name); f != nil {
			fmt.Sscan(f.Value.String(), &x)
		}
		return x
	}
}

func stringFlag(name, v, usage string) func() string {
	if flag.Lookup(name) == nil {
		flag.String(name, v, usage)
	}
	return func() string {
		if f := flag.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
}

// mode says how a World's injector decides.
type mode int

const (
	modeDraw   mode = iota // rules draw as they say
	modeRecord             // rules draw; opportunities are recorded for replay
	modeReplay             // fire exactly a schedule
	modePlan               // run an explicit plan; the test's own rules stay off
)

// run is what Sweep asks of one run of the test function.
type run struct {
	mode     mode
	schedule *faults.Schedule // modeReplay
	plan     faults.Plan      // modePlan
	probe    bool             // a shrinking probe: failures are noted, not reported
	failed   []sim.Violation  // the violations of the run's failing Check
	known    []string         // the ledger's logical consumers when Check failed
	outside  string           // a failure outside Check (probes and quiet runs only)

	// A quiet run is a sweep's run of a seed that is expected to pass: its
	// World records no trace unless record is set, and a failure ends f
	// (World.stop) instead of being reported.
	quiet, record bool
	needTrace     bool // f asked a quiet World for the trace it did not record
	returned      bool // f returned (a quiet run that failed did not)
	stopping      bool // the World panicked with stopped to end the run (see stop)
	swallowed     bool // f recovered that panic itself and returned (see quiet)
}

// ok reports whether a quiet run passed.
func (r *run) ok() bool {
	return r.returned && !r.needTrace && r.failed == nil && r.outside == ""
}

// World is a simulated world bound to a test. Its methods fail the test
// (with t.Helper, so the failure names the caller's line) instead of
// returning errors. It embeds the *sim.World; Run and RunUntil are
// shadowed by versions that fail the test.
type World struct {
	*sim.World
	t     testing.TB
	seed  uint64
	in    *faults.Injector
	rec   *sim.Recorder
	jsonl *bytes.Buffer
	run   *run
}

// New returns a world for seed bound to t, with a fault injector and a
// recorder of the trace attached. The -brokerlab.seed flag, when set,
// replaces seed.
func New(t testing.TB, seed uint64) *World {
	t.Helper()
	if s := flagSeed(); s != 0 {
		seed = s
	}
	return newWorld(t, seed, &run{})
}

func newWorld(t testing.TB, seed uint64, r *run) *World {
	t.Helper()
	sw, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	w := &World{World: sw, t: t, seed: seed, run: r}
	if !r.quiet || r.record {
		w.rec = &sim.Recorder{}
		sw.Trace().Attach(w.rec)
	}
	cfg := faults.Config{Record: r.mode == modeRecord, Replay: r.schedule}
	if r.mode == modePlan {
		cfg.Plan, cfg.Record = r.plan, true
	}
	if w.in, err = faults.New(sw, cfg); err != nil {
		t.Fatalf("simtest: seed %d: %v", seed, err)
	}
	return w
}

// T returns the test the world is bound to.
func (w *World) T() testing.TB { return w.t }

// Seed returns the world's seed.
func (w *World) Seed() uint64 { return w.seed }

// Faults returns the world's injector; the model constructors of simtest
// hand it to every model.
func (w *World) Faults() *faults.Injector { return w.in }

// Fault adds a fault rule and returns its handle; a bad rule fails the
// test. When Sweep reruns a seed to shrink it or to check the fault plan
// it wrote, the rule stays in place but the sweep decides what fires.
func (w *World) Fault(r faults.Rule) *faults.Handle {
	w.t.Helper()
	if w.run.mode == modePlan {
		if h, ok := w.in.Handle(r.Name); ok {
			return h
		}
	}
	h, err := w.in.Add(r)
	if err != nil {
		w.fatal("%v", err)
	}
	if w.run.mode == modePlan {
		h.Disable()
	}
	return h
}

// FaultRules adds several rules at once and returns their handles in
// order; see Fault.
func (w *World) FaultRules(rules ...faults.Rule) []*faults.Handle {
	w.t.Helper()
	out := make([]*faults.Handle, len(rules))
	for i, r := range rules {
		out[i] = w.Fault(r)
	}
	return out
}

// Must fails the test when err is not nil; constructors use it.
func (w *World) Must(err error) {
	w.t.Helper()
	if err != nil {
		w.fatal("%v", err)
	}
}

// stopped is what a quiet World panics with to end its run; quiet
// recovers it. A panic rather than runtime.Goexit lets Probe run f on
// its caller's goroutine, which a Goexit would end. It names its run, so
// a nested Probe's recovery never takes an outer World's stop, and it is
// an error whose text says what it is, for code in f that recovers every
// panic and reports it (which it must not do to this one: see quiet).
type stopped struct{ r *run }

// Error says what the panic is and that f must let it pass.
func (stopped) Error() string {
	return "simtest: the World stopped this seed, which failed; f must not recover this panic"
}

// stop ends a quiet World's run where it stands, after the run noted
// why (failed, outside or needTrace): f is unwound to quiet, which
// recovers the panic. It never returns.
func (w *World) stop() {
	w.run.stopping = true
	panic(stopped{w.run})
}

// fatal stops the test with a failure outside Check.
func (w *World) fatal(format string, a ...any) {
	w.t.Helper()
	msg := fmt.Sprintf(format, a...)
	if w.run.quiet {
		w.run.outside = msg
		w.stop()
	}
	if w.run.probe {
		w.run.outside = msg
		w.t.SkipNow()
	}
	w.t.Fatalf("simtest: seed %d: %s\nreproduce: %s", w.seed, msg, w.Repro())
}

// Actor registers a function of the test's own, stepped once per tick in
// phase, under a unique name.
func (w *World) Actor(name string, phase sim.Phase, f func(now sim.Tick)) {
	w.t.Helper()
	w.Must(w.World.AddFunc(name, phase, f))
}

// Run runs n ticks and fails the test at the tick cap or a budget breach.
func (w *World) Run(n sim.Tick) {
	w.t.Helper()
	w.Must(w.World.Run(n))
}

// RunUntil runs until done holds, at most max ticks, and fails the test
// when it did not hold by then: a run that stopped before the system
// drained is never mistaken for success.
func (w *World) RunUntil(done func() bool, max sim.Tick) {
	w.t.Helper()
	if done == nil {
		w.fatal("RunUntil needs a done condition, got nil")
	}
	w.Must(w.World.RunUntil(done, max))
}

// Events returns the recorded events of the given kinds, every event when
// none is given.
func (w *World) Events(kinds ...sim.Kind) []sim.Event {
	if len(kinds) == 0 {
		return w.trace().Events()
	}
	return sim.Filter(w.trace().Events(), func(e *sim.Event) bool {
		for _, k := range kinds {
			if e.Kind == k {
				return true
			}
		}
		return false
	})
}

// Recorder returns the recorder of the world's trace: every event of the
// run, in order.
func (w *World) Recorder() *sim.Recorder { return w.trace() }

// trace returns the recorder of the world's trace. A quiet World (a
// sweep's run of a seed) has none: asked before its run began it attaches
// one; asked later it ends the run, and the sweep reruns the seed with
// the trace recorded from the start.
func (w *World) trace() *sim.Recorder {
	if w.rec == nil {
		if w.Trace().Len() > 0 {
			w.run.needTrace = true
			w.stop()
		}
		w.rec = &sim.Recorder{}
		w.Trace().Attach(w.rec)
	}
	return w.rec
}

// TraceText renders the recorded trace, one event per line.
func (w *World) TraceText() string { return text(w.trace().Events()) }

func text(evs []sim.Event) string {
	var b []byte
	for i := range evs {
		b = sim.AppendText(b, &evs[i])
		b = append(b, '\n')
	}
	return string(b)
}

// JSONL attaches a JSON Lines writer to the trace on its first call and
// returns what it wrote so far. Call it before the run; Refold needs it.
func (w *World) JSONL() *bytes.Buffer {
	if w.jsonl == nil {
		w.jsonl = &bytes.Buffer{}
		w.Trace().Attach(sim.NewJSONWriter(w.jsonl))
	}
	return w.jsonl
}

// Refold closes the JSON Lines trace (see JSONL), folds it into a fresh
// ledger and fails the test unless it equals the live one. Call it when
// the run is over: the closed trace takes no further events.
func (w *World) Refold() {
	w.t.Helper()
	if w.jsonl == nil {
		w.fatal("Refold needs the JSON Lines trace: call JSONL before the run")
	}
	if err := w.Trace().Close(); err != nil {
		w.fatal("%v", err)
	}
	l := sim.NewLedger()
	if err := sim.ReadJSONL(bytes.NewReader(w.jsonl.Bytes()), l); err != nil {
		w.fatal("%v", err)
	}
	if live, folded := w.Ledger().Dump(), l.Dump(); live != folded {
		w.fatal("the ledger folded from the JSON Lines trace differs from the live one:\nlive:\n%s\nfolded:\n%s", live, folded)
	}
}

// Violations runs the checkers on the world's ledger and returns what
// they found, without failing the test. A consumer name that is a worker's
// rather than its queue's is explained from the recorded trace
// (sim.HintActors).
func (w *World) Violations(checks ...sim.Checker) []sim.Violation {
	if err := sim.Check(w.Ledger(), checks...); err != nil {
		if ce, ok := err.(*sim.CheckError); ok {
			return sim.HintActors(ce.Violations, w.trace().Events())
		}
		return []sim.Violation{{Check: "check", Detail: err.Error()}}
	}
	return nil
}

// Check runs the checkers and fails the test when a guarantee does not
// hold, printing the seed, a one-line reproduction and only the trace
// lines of the violating messages and their lineage. Check without
// checkers fails: nothing would be judged.
func (w *World) Check(checks ...sim.Checker) {
	w.t.Helper()
	misuse := func(format string, a ...any) {
		w.t.Helper()
		msg := fmt.Sprintf(format, a...)
		if w.run.failed == nil {
			w.run.failed = []sim.Violation{{Check: "check", Tick: w.Now(), Misuse: true, Detail: msg}}
			w.run.known = w.Ledger().Consumers()
		}
		w.fatal("%s", msg)
	}
	if len(checks) == 0 {
		misuse("Check needs at least one checker (sim.NoLoss(), sim.ExactlyOnce(name), ...): with none, nothing is judged")
	}
	for i, c := range checks {
		if c == nil {
			misuse("Check: checker %d is nil", i+1)
		}
	}
	if w.run.quiet && w.rec == nil {
		// A quiet run only needs to know that the seed failed: the sweep
		// reruns it with its trace to report it.
		if err := sim.Check(w.Ledger(), checks...); err != nil {
			w.run.failed = []sim.Violation{{Check: "check", Detail: err.Error()}}
			if ce, ok := err.(*sim.CheckError); ok {
				w.run.failed = ce.Violations
			}
			w.stop()
		}
		return
	}
	vs := w.Violations(checks...)
	if len(vs) == 0 {
		return
	}
	if w.run.quiet {
		w.run.failed = vs
		w.stop()
	}
	if w.run.failed == nil {
		w.run.failed = vs
		w.run.known = w.Ledger().Consumers()
	}
	if w.run.probe {
		w.t.SkipNow()
	}
	w.t.Errorf("%s", w.Report(vs))
}

// Report formats violations as Check prints them: the violations, the
// seed, the reproduction and the trace lines that concern them.
func (w *World) Report(vs []sim.Violation) string {
	var b strings.Builder
	if slices.ContainsFunc(vs, func(v sim.Violation) bool { return v.Misuse }) {
		fmt.Fprintf(&b, "%d violation(s) with seed %d; a test configuration error (the check is set up wrong) is among them:\n", len(vs), w.seed)
	} else {
		fmt.Fprintf(&b, "%d delivery violation(s) with seed %d:\n", len(vs), w.seed)
	}
	for _, v := range vs {
		b.WriteString("\t")
		b.WriteString(v.String())
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "reproduce: %s\n", w.Repro())
	evs := w.trace().Events()
	lines := Concerning(evs, vs)
	if len(lines) == 0 {
		b.WriteString("trace: no event names the violating messages\n")
		return b.String()
	}
	fmt.Fprintf(&b, "trace of the violating messages and their copies (%d of %d events):\n", len(lines), len(evs))
	for _, l := range strings.SplitAfter(text(lines), "\n") {
		if l != "" {
			b.WriteString("\t")
			b.WriteString(l)
		}
	}
	return b.String()
}

// Repro returns the command that reruns this world's test with its seed.
// A subtest named seed=N (Sweep's) reruns by name; any other test gets
// -brokerlab.seed.
func (w *World) Repro() string { return Repro(w.t.Name(), w.seed) }

// Repro returns the go test command that reruns test name with seed.
func Repro(name string, seed uint64) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	cmd := "go test -run '" + strings.Join(parts, "/") + "'"
	if last := name[strings.LastIndex(name, "/")+1:]; last != fmt.Sprintf("seed=%d", seed) {
		cmd += fmt.Sprintf(" -brokerlab.seed=%d", seed)
	}
	return cmd
}

// Concerning returns the events about the violating messages: every event
// whose message or origin is one of them, and, in trace order, every
// event about a copy made from one of those. It costs O(events).
func Concerning(evs []sim.Event, vs []sim.Violation) []sim.Event {
	ids := map[sim.ID]bool{}
	for _, v := range vs {
		if v.Msg != 0 {
			ids[v.Msg] = true
		}
	}
	if len(ids) == 0 {
		return nil
	}
	// The origins of the violating copies count too.
	for _, e := range evs {
		if ids[e.Msg] && e.Origin != 0 {
			ids[e.Origin] = true
		}
	}
	var out []sim.Event
	for _, e := range evs {
		if e.Msg != 0 && ids[e.Msg] || e.Origin != 0 && ids[e.Origin] {
			ids[e.Msg] = true
			out = append(out, e)
		}
	}
	return out
}

// NewPlanned returns a world for seed bound to t whose injector runs plan
// p, while the rules the test adds with Fault stay switched off: how a
// fault plan that Sweep wrote (or one loaded from a scenario file) is run
// from Go against the test's own topology. -brokerlab.seed overrides seed.
func NewPlanned(t testing.TB, seed uint64, p faults.Plan) *World {
	t.Helper()
	if s := flagSeed(); s != 0 {
		seed = s
	}
	return newWorld(t, seed, &run{mode: modePlan, plan: p})
}
