package projection

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

// scanLatest is LogSource's Latest as it was before the index: a scan of
// the key's whole partition, O(records in it). It is the reference the
// index is held to.
func scanLatest(t topic, key string) (sim.ID, bool) {
	p := eventlog.PartitionFor(key, t.Partitions())
	var last sim.ID
	found := false
	var buf []eventlog.Record
	for off := t.Start(p); off < t.End(p); {
		recs, err := t.Fetch(p, off, 64, buf[:0])
		if err != nil || len(recs) == 0 {
			break
		}
		for _, r := range recs {
			if r.Message.Key == key {
				last, found = r.Message.ID, true
			}
		}
		off = recs[len(recs)-1].Offset + 1
		buf = recs
	}
	return last, found
}

// sourceKeys are the keys a random log run writes and asks about: "" is
// the keyless records', spread round robin and never compacted.
var sourceKeys = []string{"", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"}

// sourceCoverage counts what random log runs did, so a test can require
// that the index met every way a partition changes.
type sourceCoverage struct {
	asked, found, vanished    int // answers, found ones, found before and not now
	expired, compacted, added int // records retention and compaction deleted, partitions added
}

// sourceRun runs one random seed's log for 60 ticks with sources made by
// newSource beside it, and returns the first answer of theirs that differs
// from scanLatest's ("" if none) and what the run did. The log has 1 to 3
// partitions, maybe retention by age, count or bytes, maybe compaction
// (with tombstones, a random interval and tombstone retention, and
// compactions forced between ticks), partitions added by the fault point
// and by hand, retention overtaking a group whose members crash, records
// without a key and records produced to a partition not their key's. One
// source is asked about every key after every tick, another about random
// keys at random moments, in the middle of the producer's step too, so
// that it reads long stretches of new records at once, some of them
// deleted meanwhile.
func sourceRun(t *testing.T, seed uint64, newSource func(*eventlog.Log) Source) (string, sourceCoverage) {
	t.Helper()
	st := sim.NewStream(seed, "source")
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	cfg := eventlog.Config{Name: "rows", Partitions: 1 + st.IntN(3)}
	switch st.IntN(4) {
	case 0:
		cfg.RetentionTicks = sim.Tick(3 + st.IntN(15))
	case 1:
		cfg.RetentionRecords = 2 + st.IntN(10)
	case 2:
		cfg.RetentionBytes = int64(8 + st.IntN(40))
	}
	if st.Chance(0.6) {
		cfg.Compact, cfg.CompactEvery, cfg.TombstoneRetention = true, sim.Tick(1+st.IntN(5)), sim.Tick(st.IntN(5))
	}
	p := func(max float64) float64 { return st.Float64() * max }
	rules := []faults.Rule{
		{Name: "overtake", Point: faults.RetentionOvertake, Probability: p(0.2), Param: int64(1 + st.IntN(4))},
		{Name: "crash", Point: faults.MemberCrash, Probability: p(0.1)},
		{Name: "crash-before-commit", Point: faults.ConsumerCrashBeforeCommit, Probability: p(0.1)},
	}
	if st.Chance(0.4) {
		rules = append(rules, faults.Rule{Name: "scale-out", Point: faults.PartitionsAdded, From: sim.Tick(5 + st.IntN(40)), Count: 1, Param: int64(1 + st.IntN(2))})
	}
	if cfg.Faults, err = faults.New(w, faults.Config{Plan: faults.Plan{Rules: rules}}); err != nil {
		t.Fatal(err)
	}
	log, err := eventlog.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := eventlog.NewGroup(w, log, eventlog.GroupConfig{Name: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "m", Batch: 1 + st.IntN(3)}); err != nil {
		t.Fatal(err)
	}
	every, sparse := newSource(log), newSource(log)
	var cov sourceCoverage
	bad := ""
	was := map[string]bool{}
	ask := func(src Source, key, when string) {
		got, gok := src.Latest(key)
		want, wok := scanLatest(log, key)
		cov.asked++
		if wok {
			cov.found++
		}
		if src == every {
			if was[key] && !wok {
				cov.vanished++
			}
			was[key] = wok
		}
		if bad == "" && (got != want || gok != wok) {
			bad = fmt.Sprintf("seed %d, %s: Latest(%q) = %v, %v; the partition's scan says %v, %v", seed, when, key, got, gok, want, wok)
		}
	}
	if err := w.AddFunc("writer", sim.PhaseProducer, func(now sim.Tick) {
		for range st.IntN(6) {
			key := sourceKeys[st.IntN(len(sourceKeys))]
			body := []byte("v" + strconv.Itoa(st.IntN(100)))
			if key != "" && st.Chance(0.15) {
				body = nil // a tombstone
			}
			m := w.Env().NewMessage(key, body, sim.Headers{})
			if st.Chance(0.15) {
				_, _ = log.ProduceTo(st.IntN(log.Partitions()), m) // not necessarily the key's partition
			} else {
				_ = log.Publish(m)
			}
			if st.Chance(0.2) {
				ask(sparse, sourceKeys[st.IntN(len(sourceKeys))], fmt.Sprintf("t=%d, while producing", now))
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	for range 60 {
		w.Tick()
		now := w.Now()
		switch {
		case st.Chance(0.03):
			_ = log.AddPartitions(1)
		case st.Chance(0.1):
			log.Compact() // nothing on a topic without compaction
		}
		for _, key := range sourceKeys {
			ask(every, key, fmt.Sprintf("after t=%d", now))
		}
		if st.Chance(0.3) {
			for range 1 + st.IntN(4) {
				ask(sparse, sourceKeys[st.IntN(len(sourceKeys))], fmt.Sprintf("after t=%d", now))
			}
		}
	}
	m := log.Metrics()
	cov.expired, cov.compacted, cov.added = int(m.Expired), int(m.Compacted), log.Partitions()-cfg.Partitions
	return bad, cov
}

// LogSource's index answers every call as the scan of the key's whole
// partition does, after every tick and within the producer's step, in
// random runs with retention, compaction, tombstones, retention
// overtaking a group, partitions added, member crashes and records put in
// other partitions than their key's. The runs must have met all of it.
func TestLogSourceIndexEqualsScan(t *testing.T) {
	var all sourceCoverage
	for seed := uint64(1); seed <= 300; seed++ {
		bad, cov := sourceRun(t, seed, LogSource)
		if bad != "" {
			t.Fatal(bad)
		}
		all.asked += cov.asked
		all.found += cov.found
		all.vanished += cov.vanished
		all.expired += cov.expired
		all.compacted += cov.compacted
		all.added += cov.added
	}
	t.Logf("%+v", all)
	if all.found < all.asked/4 || all.found > all.asked*3/4 || all.vanished < 500 || all.expired < 1000 || all.compacted < 1000 || all.added < 50 {
		t.Fatalf("the runs hardly met what they test: %+v", all)
	}
}

// blindSource is LogSource's index without its check that a key's latest
// record is still in the log: what the index would be if it followed only
// what is appended.
type blindSource struct{ *logSource }

func (s blindSource) Latest(key string) (sim.ID, bool) {
	p := eventlog.PartitionFor(key, s.t.Partitions())
	at, ok := s.catchUp(p).latest[key]
	return at.id, ok
}

// The comparison of TestLogSourceIndexEqualsScan finds an index that does
// not follow deletions: it is not vacuous.
func TestLogSourceIndexEqualsScanCatchesBlindIndex(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		if bad, _ := sourceRun(t, seed, func(l *eventlog.Log) Source { return blindSource{newLogSource(l)} }); bad != "" {
			t.Logf("found: %s", bad)
			return
		}
	}
	t.Fatal("an index blind to deletions answered as the scan did in every run")
}

// counting is a topic that counts the records fetched from it.
type counting struct {
	*eventlog.Log
	fetched int
}

func (c *counting) Fetch(p int, off int64, max int, dst []eventlog.Record) ([]eventlog.Record, error) {
	n := len(dst)
	dst, err := c.Log.Fetch(p, off, max, dst)
	c.fetched += len(dst) - n
	return dst, err
}

// replayLog returns a world and its one-partition log of n records of key
// "k" written by a writer whose clock is stuck at 1, so that a projection
// versioned by clock finds every record after the first no newer than its
// row and asks its source whether it is the key's latest.
func replayLog(tb testing.TB, n int) (*sim.World, *eventlog.Log) {
	tb.Helper()
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	log, err := eventlog.New(w, eventlog.Config{Name: "rows"})
	if err != nil {
		tb.Fatal(err)
	}
	h := sim.Headers{}.With(producer.HeaderClock, "1")
	for i := range n {
		if _, err := log.Produce(w.Env().NewMessage("k", []byte(strconv.Itoa(i)), h)); err != nil {
			tb.Fatal(err)
		}
	}
	return w, log
}

// replay hands the n records of log to a new projection versioned by clock
// with source src, in order, as a member replaying the partition would.
func replay(tb testing.TB, w *sim.World, log *eventlog.Log, n int, src Source) {
	tb.Helper()
	p, err := New(w, Config{Name: "view", Versioning: VersionClock, Source: src})
	if err != nil {
		tb.Fatal(err)
	}
	var buf []eventlog.Record
	for off := int64(0); off < int64(n); {
		recs, err := log.Fetch(0, off, 256, buf[:0])
		if err != nil {
			tb.Fatal(err)
		}
		for _, r := range recs {
			d := sim.NewDelivery(w.Env(), r.Message, "log:rows", "view", "v1", 1)
			d.HasPos, d.Partition, d.Offset = true, r.Partition, r.Offset
			if err := p.Handle(d); err != nil {
				tb.Fatal(err)
			}
		}
		off = recs[len(recs)-1].Offset + 1
		buf = recs
	}
}

// A replay of a partition of n records by a projection versioned by clock
// asks the source about nearly every record; the source reads each record
// of the partition once, plus one per call to check the key's latest is
// still there, whatever n: the replay is linear, where the scan it
// replaced read the whole partition at every call (about n²/2 records).
func TestReplayReadsEachRecordOnce(t *testing.T) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		w, log := replayLog(t, n)
		c := &counting{Log: log}
		replay(t, w, log, n, newLogSource(c))
		if c.fetched > 2*n {
			t.Errorf("%d records: the source fetched %d, %.1f per record; want at most 2", n, c.fetched, float64(c.fetched)/float64(n))
		}
	}
	// The measure tells a scan from the index.
	const n = 1_000
	w, log := replayLog(t, n)
	c := &counting{Log: log}
	replay(t, w, log, n, scanning{c})
	if c.fetched < n*n/4 {
		t.Errorf("the scan fetched only %d records for %d", c.fetched, n)
	}
}

// scanning is a Source that answers with scanLatest.
type scanning struct{ t topic }

func (s scanning) Latest(key string) (sim.ID, bool) { return scanLatest(s.t, key) }

// The index of a partition holds no more keys than its records have,
// give or take the sweeps' slack, when every record has a key of its own
// and retention keeps ten of them: memory follows the log, not its
// history.
func TestLogSourceIndexStaysBounded(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	log, err := eventlog.New(w, eventlog.Config{Name: "rows", RetentionRecords: 10})
	if err != nil {
		t.Fatal(err)
	}
	src := newLogSource(log)
	most := 0
	for i := range 20_000 {
		key := "k" + strconv.Itoa(i)
		if _, err := log.Produce(w.Env().NewMessage(key, []byte("v"), sim.Headers{})); err != nil {
			t.Fatal(err)
		}
		w.Tick()
		if _, ok := src.Latest(key); !ok {
			t.Fatalf("%s: not found", key)
		}
		most = max(most, len(src.parts[0].latest))
	}
	if most > 2*10+64 {
		t.Fatalf("the index held up to %d keys for a partition of 10 records", most)
	}
}

// afterBurst makes a log with retention by age, produces n records of
// distinct keys with body into it, asks a new source about one of them
// (so its index reads all n), then for 20 ticks produces a record of key
// "x" and asks about it, so that retention deletes the burst. It returns
// the source and the log.
func afterBurst(t *testing.T, n int, body []byte) (*logSource, *eventlog.Log) {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	log, err := eventlog.New(w, eventlog.Config{Name: "rows", RetentionTicks: 5})
	if err != nil {
		t.Fatal(err)
	}
	src := newLogSource(log)
	for i := range n {
		if _, err := log.Produce(w.Env().NewMessage("k"+strconv.Itoa(i), body, sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := src.Latest("k" + strconv.Itoa(n-1)); !ok || len(src.parts[0].latest) != n {
		t.Fatalf("the index holds %d keys of %d", len(src.parts[0].latest), n)
	}
	for range 20 {
		if _, err := log.Produce(w.Env().NewMessage("x", []byte("v"), sim.Headers{})); err != nil {
			t.Fatal(err)
		}
		w.Tick()
		if _, ok := src.Latest("x"); !ok {
			t.Fatal("x: not found")
		}
	}
	return src, log
}

// The index of a partition lets go of the keys retention deleted once the
// partition's start has moved past them, even when no new key comes.
func TestLogSourceIndexShrinks(t *testing.T) {
	src, _ := afterBurst(t, 1_000, []byte("v"))
	if n := len(src.parts[0].latest); n > 1 {
		t.Fatalf("the index still holds %d keys for a partition of one key", n)
	}
}

// A burst of keys that retention then deletes does not leave its room
// behind: the sweep that drops them moves the keys left to a map sized for
// them, since a Go map keeps the room it once needed. The index's heap is
// measured as what its source holds beyond the log, with the log kept
// alive: a map sized for the burst of 200,000 keys takes several MiB.
func TestLogSourceIndexGivesBackABurst(t *testing.T) {
	src, log := afterBurst(t, 200_000, nil)
	if n := len(src.parts[0].latest); n != 1 {
		t.Fatalf("the index holds %d keys, want 1", n)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	with := heap()
	runtime.KeepAlive(src) // src is dead from here on
	without := heap()
	runtime.KeepAlive(log)
	if held := int64(with) - int64(without); held > 1<<20 {
		t.Fatalf("the index of one key still holds %d KiB after a burst of 200,000 keys", held>>10)
	}
}

// BenchmarkReplayClock replays a partition of n records of one key into a
// projection versioned by clock, which asks its source about every record
// after the first; ns/record stays flat as n grows with LogSource's index,
// and grows with n with the scan it replaced (scan, run up to 10^4
// records only).
func BenchmarkReplayClock(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"index", 1_000}, {"index", 10_000}, {"index", 100_000}, {"scan", 1_000}, {"scan", 10_000}} {
		b.Run(c.name+"/"+strconv.Itoa(c.n), func(b *testing.B) {
			w, log := replayLog(b, c.n)
			var elapsed time.Duration
			for range b.N {
				var src Source = scanning{log}
				if c.name == "index" {
					src = LogSource(log)
				}
				start := time.Now()
				replay(b, w, log, c.n, src)
				elapsed += time.Since(start)
			}
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N)/float64(c.n), "ns/record")
		})
	}
}
