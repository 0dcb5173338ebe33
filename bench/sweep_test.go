package bench

import (
	"hash/crc32"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest"
)

// A sweep is what a user's test or `brokerlab explore` pays per seed: build
// a world, run a small workload under probabilistic faults until it has
// drained, and judge it. These benchmarks run one seed per operation, a
// new seed every time (1, 2, 3, ...), so ns/op is the cost of a seed and
// 1e9 / cpu-ns/op the seeds per CPU-second on one core.

const (
	sweepMessages = 100
	sweepMaxTicks = 5000
)

// queueSweepRules are the queue sweep's three fault rules.
var queueSweepRules = []faults.Rule{
	{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.05},
	{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.02},
	{Name: "crash", Point: faults.ConsumerCrashAfterEffect, Probability: 0.02},
}

// logSweepRules are the log sweep's two fault rules.
var logSweepRules = []faults.Rule{
	{Name: "crash", Point: faults.MemberCrash, Probability: 0.02},
	{Name: "crash-after", Point: faults.ConsumerCrashAfterEffect, Probability: 0.02},
}

// queueSweepChecks are the checks every queue seed runs.
func queueSweepChecks() []sim.Checker {
	return []sim.Checker{sim.NoLoss(), sim.AtLeastOnce("orders")}
}

// logSweepChecks are the checks every log seed runs.
func logSweepChecks() []sim.Checker {
	return []sim.Checker{sim.NoLoss(), sim.AtLeastOnce("billing")}
}

// queueSeedAPI runs one queue seed through the Go API: a world, an
// injector with queueSweepRules, a queue, a producer of 100 messages over
// 10 keys (10 per tick), one consumer applying one effect per delivery,
// run until drained, then the checks. It returns the world and the
// checks' verdict.
func queueSeedAPI(seed uint64) (*sim.World, error) {
	return queueSeedParts(seed, true, true)
}

// queueSeedParts is queueSeedAPI stopped after building the world and its
// components (run false), or after running it until drained (check
// false): the benchmarks that split a seed into its parts call it.
func queueSeedParts(seed uint64, run, check bool) (*sim.World, error) {
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		return nil, err
	}
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: queueSweepRules}})
	if err != nil {
		return nil, err
	}
	q, err := queue.New(w, queue.Config{Name: "orders", Faults: in, VisibilityTimeout: 3})
	if err != nil {
		return nil, err
	}
	p, err := producer.New(w, producer.Config{Name: "shop", Target: q, Count: sweepMessages, Rate: 10, KeyPattern: "order-%d", KeyCount: 10})
	if err != nil {
		return nil, err
	}
	if _, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "billing", Faults: in}); err != nil {
		return nil, err
	}
	if !run {
		return w, nil
	}
	if err := w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, sweepMaxTicks); err != nil {
		return nil, err
	}
	if !check {
		return w, nil
	}
	return w, sim.Check(w.Ledger(), queueSweepChecks()...)
}

// queueSeedSimtest is queueSeedAPI written with simtest, as a user's Go
// test would. A benchmark runs it with simtest.Probe, as simtest.Sweep
// runs a seed until it fails (no trace recorded, no subtest), but on the
// benchmark's goroutine: a Sweep worker hands each seed to a goroutine of
// its own, two handoffs a seed that this figure leaves out.
func queueSeedSimtest(_ testing.TB, w *simtest.World) {
	for _, r := range queueSweepRules {
		w.Fault(r)
	}
	q := w.Queue("orders", queue.Config{VisibilityTimeout: 3})
	p := w.Producer("shop", producer.Config{Target: q, Count: sweepMessages, Rate: 10, KeyPattern: "order-%d", KeyCount: 10})
	w.Consumer("billing", queue.ConsumerConfig{Queue: q, Handler: sim.Effect("")})
	w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, sweepMaxTicks)
	w.Check(queueSweepChecks()...)
}

// queueSweepScenario is queueSeedAPI as a scenario file, the form
// `brokerlab explore` sweeps.
const queueSweepScenario = `
title: queue sweep
run: {until: drained, max_ticks: 5000}
topology:
  queues: [{name: orders, visibility_timeout: 3}]
actors:
  producers: [{name: shop, to: {queue: orders}, count: 100, rate: 10, keys: "order-%d", key_count: 10}]
  consumers: [{name: billing, queue: orders}]
faults:
  - {name: flaky, point: handler.transient, probability: 0.05}
  - {name: dup, point: broker.duplicate, probability: 0.02}
  - {name: crash, point: consumer.crash_after_effect, probability: 0.02}
expect:
  - {check: no_loss}
  - {check: at_least_once, consumer: orders}
`

// logSeedAPI runs one log seed through the Go API: a 6-partition log, a
// group of 3 members applying one effect per record and committing after
// processing, a producer of 100 messages over 10 keys, logSweepRules, run
// until the group has no lag, then the checks.
func logSeedAPI(seed uint64) (*sim.World, error) {
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		return nil, err
	}
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: logSweepRules}})
	if err != nil {
		return nil, err
	}
	t, err := eventlog.New(w, eventlog.Config{Name: "orders", Faults: in, Partitions: 6})
	if err != nil {
		return nil, err
	}
	g, err := eventlog.NewGroup(w, t, eventlog.GroupConfig{Name: "billing"})
	if err != nil {
		return nil, err
	}
	for i := range 3 {
		if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "m" + strconv.Itoa(i), Handler: sim.Effect(""), RestartAfter: 2}); err != nil {
			return nil, err
		}
	}
	p, err := producer.New(w, producer.Config{Name: "shop", Target: t, Count: sweepMessages, Rate: 10, KeyPattern: "order-%d", KeyCount: 10})
	if err != nil {
		return nil, err
	}
	if err := w.RunUntil(func() bool { return p.Done() && g.Lag() == 0 }, sweepMaxTicks); err != nil {
		return nil, err
	}
	return w, sim.Check(w.Ledger(), logSweepChecks()...)
}

// logSeedSimtest is logSeedAPI written with simtest.
func logSeedSimtest(_ testing.TB, w *simtest.World) {
	for _, r := range logSweepRules {
		w.Fault(r)
	}
	t := w.Log("orders", eventlog.Config{Partitions: 6})
	g := w.Group("billing", t, eventlog.GroupConfig{})
	for i := range 3 {
		w.Member("m"+strconv.Itoa(i), g, eventlog.MemberConfig{Handler: sim.Effect(""), RestartAfter: 2})
	}
	p := w.Producer("shop", producer.Config{Target: t, Count: sweepMessages, Rate: 10, KeyPattern: "order-%d", KeyCount: 10})
	w.RunUntil(func() bool { return p.Done() && g.Lag() == 0 }, sweepMaxTicks)
	w.Check(logSweepChecks()...)
}

// sweep runs one seed per operation and reports cpu-ns/op and seeds per
// CPU-second.
func sweep(b *testing.B, seed func(uint64)) {
	b.ReportAllocs()
	var s uint64
	cpu := cpuTime()
	for b.Loop() {
		s++
		seed(s)
	}
	reportCPU(b, cpu)
	if used := cpuTime() - cpu; cpu != 0 && used > 0 {
		b.ReportMetric(float64(b.N)/(float64(used)/1e9), "seeds/cpu-s")
	}
}

// probe runs seed of f as simtest.Sweep runs a seed it expects to pass
// (simtest.Probe, without Sweep's goroutine handoffs) and fails b if the
// seed failed.
func probe(b *testing.B, seed uint64, f func(testing.TB, *simtest.World)) {
	if err := simtest.Probe(b, seed, func(b *testing.B, w *simtest.World) { f(b, w) }); err != nil {
		b.Fatal(err)
	}
}

// atGOGC runs f with the collector's target percentage set to pct.
func atGOGC(pct int, f func()) {
	defer debug.SetGCPercent(debug.SetGCPercent(pct))
	f()
}

// BenchmarkSweepQueue is the queue sweep (100 messages, 3 fault rules,
// checks on) per seed: through the Go API, the same at GOGC=400 (how much
// of a seed is the collector), its parts (building, and building plus
// running), through simtest, through the scenario runner as explore runs
// each seed (lab.Probe) and as a run to the end with its summary
// (lab.Execute), and the hand-written floor.
func BenchmarkSweepQueue(b *testing.B) {
	api := func(s uint64) {
		if _, err := queueSeedAPI(s); err != nil {
			b.Fatalf("seed %d: %v", s, err)
		}
	}
	b.Run("api", func(b *testing.B) { sweep(b, api) })
	b.Run("api-gogc400", func(b *testing.B) { atGOGC(400, func() { sweep(b, api) }) })
	// The seed's parts: building alone, and building plus running without
	// the checks; api minus api-run is what the checks cost.
	for _, part := range []struct {
		name string
		run  bool
	}{{"api-build", false}, {"api-run", true}} {
		b.Run(part.name, func(b *testing.B) {
			sweep(b, func(s uint64) {
				if _, err := queueSeedParts(s, part.run, false); err != nil {
					b.Fatalf("seed %d: %v", s, err)
				}
			})
		})
	}
	b.Run("simtest", func(b *testing.B) { sweep(b, func(s uint64) { probe(b, s, queueSeedSimtest) }) })
	// Per seed, explore calls lab.Probe with no options: the run and its
	// verdict. lab.Execute, what `brokerlab run` does, adds the ledger's
	// summary a report prints.
	b.Run("scenario-probe", func(b *testing.B) {
		sc, err := scenario.Load("sweep.yaml", []byte(queueSweepScenario))
		if err != nil {
			b.Fatal(err)
		}
		sweep(b, func(s uint64) {
			if f, failed, err := lab.Probe(sc, s, lab.Options{}); err != nil || failed {
				b.Fatalf("seed %d: %v %+v", s, err, f)
			}
		})
	})
	b.Run("scenario", func(b *testing.B) {
		sc, err := scenario.Load("sweep.yaml", []byte(queueSweepScenario))
		if err != nil {
			b.Fatal(err)
		}
		sweep(b, func(s uint64) {
			rep, err := lab.Execute(sc, lab.Options{Seed: &s})
			if err != nil || rep.Stats.Done < sweepMessages {
				b.Fatalf("seed %d: %v %+v", s, err, rep.Stats)
			}
		})
	})
	b.Run("floor", func(b *testing.B) {
		sweep(b, func(s uint64) {
			if got := queueFloor(s); got < sweepMessages {
				b.Fatalf("seed %d: %d done", s, got)
			}
		})
	})
}

// BenchmarkSweepLog is the log sweep (6 partitions, 3 members, 2 fault
// rules, checks on) per seed: Go API, GOGC=400, simtest, and the floor.
func BenchmarkSweepLog(b *testing.B) {
	api := func(s uint64) {
		if _, err := logSeedAPI(s); err != nil {
			b.Fatalf("seed %d: %v", s, err)
		}
	}
	b.Run("api", func(b *testing.B) { sweep(b, api) })
	b.Run("api-gogc400", func(b *testing.B) { atGOGC(400, func() { sweep(b, api) }) })
	b.Run("simtest", func(b *testing.B) { sweep(b, func(s uint64) { probe(b, s, logSeedSimtest) }) })
	b.Run("floor", func(b *testing.B) {
		sweep(b, func(s uint64) {
			if got := logFloor(s); got < sweepMessages {
				b.Fatalf("seed %d: %d done", s, got)
			}
		})
	})
}

// floorMsg is a message of the hand-written floors.
type floorMsg struct {
	id, key int
	tries   int
}

// draw is one fault draw of the floors: a PCG step compared with p.
func draw(r *rand.Rand, p float64) bool { return r.Float64() < p }

// queueFloor is the least code doing the queue sweep's work: 100 messages
// sent 10 per tick into a slice, received in order, a duplicate draw per
// receive, then per delivery a transient-failure draw and a crash draw
// (either puts the message back), one effect, and an ack that retires a
// receipt. Like the queue sweep, it runs until every message is sent and
// the queue is empty: a duplicate's ack does not end it early. It returns
// how many messages were acked at least once with an effect; every message
// is, so nothing is lost.
func queueFloor(seed uint64) int {
	r := rand.New(rand.NewPCG(seed, 0))
	ready := make([]floorMsg, 0, 16)
	effects := make([]int, sweepMessages)
	acks := make([]bool, sweepMessages)
	inflight := map[int]floorMsg{}
	receipt, sent := 0, 0
	for tick := 0; (sent < sweepMessages || len(ready) > 0) && tick < sweepMaxTicks; tick++ {
		for i := 0; i < 10 && sent < sweepMessages; i++ {
			ready = append(ready, floorMsg{id: sent, key: sent % 10})
			sent++
		}
		for len(ready) > 0 {
			m := ready[0]
			ready = ready[1:]
			m.tries++
			receipt++
			inflight[receipt] = m
			if draw(r, queueSweepRules[1].Probability) { // duplicate
				ready = append(ready, m)
			}
			if draw(r, queueSweepRules[0].Probability) { // transient failure
				delete(inflight, receipt)
				ready = append(ready, m)
				continue
			}
			effects[m.id]++
			if draw(r, queueSweepRules[2].Probability) { // crash after the effect
				delete(inflight, receipt)
				ready = append(ready, m)
				continue
			}
			if _, ok := inflight[receipt]; ok {
				delete(inflight, receipt)
				acks[m.id] = true
			}
		}
	}
	done := 0
	for id, n := range effects {
		if n > 0 && acks[id] {
			done++
		}
	}
	return done
}

// logFloor is the least code doing the log sweep's work: 100 messages
// over 10 keys, partitioned by crc32 into 6 slices, 10 per tick; 3
// members own 2 partitions each and per tick read from their committed
// offsets, draw a crash before and after each record's effect (a crash
// stops the member's batch without committing, so the records are read
// again), and commit the offset after processing. It returns how many
// records were committed.
func logFloor(seed uint64) int {
	const parts, members = 6, 3
	r := rand.New(rand.NewPCG(seed, 0))
	var log [parts][]floorMsg
	var committed [parts]int
	effects := make([]int, sweepMessages)
	keys := make([]uint32, 10)
	for k := range keys {
		keys[k] = crc32.ChecksumIEEE([]byte("order-"+strconv.Itoa(k))) % parts
	}
	sent, done := 0, 0
	for tick := 0; done < sweepMessages && tick < sweepMaxTicks; tick++ {
		for i := 0; i < 10 && sent < sweepMessages; i++ {
			p := keys[sent%10]
			log[p] = append(log[p], floorMsg{id: sent, key: sent % 10})
			sent++
		}
	member:
		for m := range members {
			for p := m * parts / members; p < (m+1)*parts/members; p++ {
				off := committed[p]
				for ; off < len(log[p]); off++ {
					if draw(r, logSweepRules[0].Probability) {
						continue member
					}
					effects[log[p][off].id]++
					if draw(r, logSweepRules[1].Probability) {
						continue member
					}
				}
				done += off - committed[p]
				committed[p] = off
			}
		}
	}
	return done
}

// The sweeps' workloads drain and pass their checks, their faults fire
// (some deliveries are repeated), and the floors settle every message: the
// benchmarks measure what they say, for the first 20 seeds.
func TestSweepWorkloads(t *testing.T) {
	for i, run := range []func(uint64) (*sim.World, error){queueSeedAPI, logSeedAPI} {
		repeats := 0
		for s := uint64(1); s <= 20; s++ {
			w, err := run(s)
			if err != nil {
				t.Fatalf("workload %d, seed %d: %v", i, s, err)
			}
			st := w.Ledger().Stats()
			if st.Origins != sweepMessages || st.Applied < sweepMessages || (i == 0 && st.Done != sweepMessages) {
				t.Fatalf("workload %d, seed %d: %+v", i, s, st)
			}
			repeats += st.Delivered - sweepMessages
		}
		if repeats == 0 {
			t.Errorf("workload %d: no fault fired in 20 seeds", i)
		}
	}
	// The floors finish every seed a benchmark can reach (b.N grows past
	// 10,000): a floor that stopped early did less work than the seed
	// it is the floor of, and failed the benchmark.
	for s := uint64(1); s <= 30_000; s++ {
		if got := queueFloor(s); got != sweepMessages {
			t.Fatalf("queue floor, seed %d: %d of %d acked", s, got, sweepMessages)
		}
		if got := logFloor(s); got != sweepMessages {
			t.Fatalf("log floor, seed %d: %d of %d committed", s, got, sweepMessages)
		}
	}
	for s := uint64(1); s <= 20; s++ {
		if got := queueFloor(s); got != sweepMessages {
			t.Errorf("queue floor, seed %d: %d of %d acked", s, got, sweepMessages)
		}
		if got := logFloor(s); got != sweepMessages {
			t.Errorf("log floor, seed %d: %d of %d committed", s, got, sweepMessages)
		}
		queueSeedSimtest(t, simtest.New(t, s))
		logSeedSimtest(t, simtest.New(t, s))
	}
}
