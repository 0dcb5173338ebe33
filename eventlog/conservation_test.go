package eventlog_test

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// mixGroup is one group of a conservation run and what it may lose.
type mixGroup struct {
	g       *eventlog.Group
	mode    eventlog.CommitMode
	reset   eventlog.Reset
	seeks   int
	beyond  int // commits past the log end, which are refused
	timeout sim.Tick
	causes  map[sim.Cause]bool // the causes of loss this group's setup models
}

// conservationRun is one random run with a random fault mix: 1 to 4
// partitions, maybe retention (by age or size) or compaction (with
// tombstones and a random tombstone retention), 1 or 2 groups with random
// commit modes (after, before, auto, off-by-one), auto.offset.reset
// (earliest or latest, which loses what was produced before the group's
// first poll), strategies and session timeouts, idempotent or naive or
// slow handlers; members that join, leave, rejoin and crash on the
// timeline; seeks (earliest, latest, an offset, possibly past the end or
// for every partition, a tick); commits past the log end; and fault rules
// until tick 40 for member crashes, leaves, session timeouts, crashes
// before the commit and after the effect, handler failures (transient,
// permanent, poison), slow handlers, broker outages (which fail commits
// too), lost commits (broker.ack_lost), retention overtaking a group and
// partitions added. At tick 41 a closing member joins each group, and the
// run drains.
func conservationRun(t *testing.T, seed uint64) (*rig, []*mixGroup) {
	t.Helper()
	s := sim.NewStream(seed, "conservation")
	p := func(max float64) float64 { return s.Float64() * max }
	cfg := eventlog.Config{Partitions: 1 + s.IntN(4)}
	retention, compaction := false, false
	switch s.IntN(8) {
	case 0, 1:
		cfg.RetentionTicks, retention = sim.Tick(8+s.IntN(25)), true
	case 2:
		cfg.RetentionRecords, retention = 4+s.IntN(12), true
	case 3:
		cfg.Compact, cfg.CompactEvery, compaction = true, sim.Tick(2+s.IntN(6)), true
		cfg.TombstoneRetention = sim.Tick(s.IntN(6))
	}
	rules := mixRules(s, p)
	overtake := s.IntN(6) == 0
	if overtake {
		rules = append(rules, faults.Rule{Name: "overtake", Point: faults.RetentionOvertake, Probability: p(0.05), Param: int64(1 + s.IntN(3)), Until: 40})
	}
	if s.IntN(6) == 0 {
		rules = append(rules, faults.Rule{Name: "scale-out", Point: faults.PartitionsAdded, From: sim.Tick(5 + s.IntN(30)), Count: 1, Param: int64(1 + s.IntN(2))})
	}
	r := newRig(t, seed, cfg, rules...)
	var groups []*mixGroup
	for gi, n := 0, 1+s.IntN(2); gi < n; gi++ {
		mg := &mixGroup{mode: eventlog.CommitMode(s.IntN(4)), causes: map[sim.Cause]bool{}}
		if s.IntN(4) == 0 {
			mg.reset = eventlog.ResetLatest
		}
		mg.timeout = sim.Tick(2 + s.IntN(5))
		mg.g = r.group(eventlog.GroupConfig{Name: "g" + strconv.Itoa(gi), Strategy: eventlog.Strategy(s.IntN(3)), Reset: mg.reset,
			SessionTimeout: mg.timeout})
		if retention || overtake {
			mg.causes[sim.CauseRetention] = true
		}
		if mg.reset == eventlog.ResetLatest {
			// Resolved at the first poll: what was produced since the group
			// was created is skipped.
			mg.causes[sim.CauseOffsetReset] = true
		}
		if compaction {
			mg.causes[sim.CauseCompaction] = true
		}
		if mg.mode == eventlog.CommitBefore {
			mg.causes[sim.CauseCommitBeforeProcess] = true
		}
		groups = append(groups, mg)
	}
	for _, mg := range groups {
		g := mg.g
		// A slow handler keeps a member from polling; a batch that takes
		// longer than the session timeout gets the member removed at every
		// batch, a rebalance storm that never drains (as with Kafka's
		// max.poll.interval). The batch is capped so that it does not.
		var handler func() sim.Handler
		maxBatch := 5
		switch s.IntN(3) {
		case 0:
			handler = func() sim.Handler { return nil }
		case 1:
			handler = func() sim.Handler { return sim.Idempotent(sim.Effect("charge"), sim.ByMessageID) }
		default:
			// It polls every batch x ticks + 1 ticks.
			ticks := min(sim.Tick(1+s.IntN(2)), mg.timeout-1)
			maxBatch = int((mg.timeout - 1) / ticks)
			handler = func() sim.Handler { return &sim.Script{Ticks: ticks} }
		}
		mcfg := func(name string) eventlog.MemberConfig {
			return eventlog.MemberConfig{Name: name, Handler: handler(), Commit: mg.mode, AutoCommitEvery: sim.Tick(1 + s.IntN(6)),
				Batch: 1 + s.IntN(maxBatch), RestartAfter: sim.Tick(1 + s.IntN(4)), Start: sim.Tick(s.IntN(3))}
		}
		var members []*eventlog.Member
		for i, n := 0, 1+s.IntN(3); i < n; i++ {
			members = append(members, r.member(g, mcfg("m"+strconv.Itoa(i))))
		}
		for i, n := 0, s.IntN(4); i < n; i++ {
			c := mcfg("j" + strconv.Itoa(i))
			r.w.At(sim.Tick(1+s.IntN(39)), "join "+c.Name, func() { members = append(members, r.member(g, c)) })
		}
		for i, n := 0, s.IntN(3); i < n; i++ {
			at, k := sim.Tick(1+s.IntN(39)), s.IntN(8)
			r.w.At(at, "leave", func() { members[k%len(members)].Leave() })
			r.w.At(at+sim.Tick(1+s.IntN(10)), "rejoin", func() { _ = members[k%len(members)].Rejoin() })
		}
		for i, n := 0, s.IntN(2); i < n; i++ {
			k := s.IntN(8)
			r.w.At(sim.Tick(1+s.IntN(39)), "crash", func() { members[k%len(members)].Crash("") })
		}
		for i, n := 0, s.IntN(3); i < n; i++ {
			mg.seeks++
			mg.causes[sim.CauseSeek] = true
			to, arg := s.IntN(5), s.IntN(20)
			r.w.At(sim.Tick(1+s.IntN(39)), "seek", func() {
				var err error
				switch to {
				case 0:
					err = g.SeekEarliest(eventlog.AllPartitions)
				case 1:
					err = g.SeekLatest(eventlog.AllPartitions)
				case 2:
					err = g.SeekOffset(arg%r.topic.Partitions(), int64(arg)) // maybe past the end
				case 3:
					err = g.SeekOffset(eventlog.AllPartitions, int64(arg))
				default:
					err = g.SeekTick(eventlog.AllPartitions, sim.Tick(arg))
				}
				if err != nil {
					t.Fatalf("seed %d: seek: %v", seed, err)
				}
			})
		}
		for i, n := 0, s.IntN(4)/3; i < n; i++ {
			// An adapter commits past the end for the owner of a partition:
			// refused, and nothing changes, so it models no loss.
			mg.beyond++
			at, k, ahead := sim.Tick(1+s.IntN(39)), s.IntN(8), int64(1+s.IntN(6))
			r.w.At(at, "commit past the end", func() {
				q := k % r.topic.Partitions()
				if owner := g.Owner(q); owner != "" {
					err := g.Commit(owner, g.Generation(), q, r.topic.End(q)+ahead)
					// nil: broker.ack_lost lost the commit before the broker
					// could refuse it.
					if err != nil && !errors.Is(err, eventlog.ErrOffsetOutOfRange) && !errors.Is(err, sim.ErrUnavailable) {
						t.Fatalf("seed %d: commit past the end: %v", seed, err)
					}
				}
			})
		}
		r.w.At(41, "closer joins "+g.Name(), func() { r.member(g, mcfg("zz")) })
	}
	r.producer("shop", []string{"a", "b", "c", "d", "e", "f", "g"}, 1+s.IntN(3), 30)
	if compaction {
		// Tombstones: on a compacted topic they delete their key, and once
		// the tombstone retention has passed they go too, maybe emptying the
		// tail of a partition.
		ts, every := r.env.Stream("tombstones"), sim.Tick(1+s.IntN(4))
		err := r.w.AddFunc("tombstones", sim.PhaseProducer, func(now sim.Tick) {
			if now < 30 && now%every == 0 {
				m := r.env.NewMessage(string(rune('a'+ts.IntN(7))), nil, sim.Headers{Type: "order.deleted", Source: "tombstones"})
				if err := r.topic.Publish(m); err != nil && !errors.Is(err, sim.ErrUnavailable) {
					t.Fatal(err)
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Lag, kept for conditions checked every tick, agrees with Metrics at
	// every tick, through seeks, resets, retention and compaction.
	checkLag := func() {
		for _, mg := range groups {
			if lag, m := mg.g.Lag(), mg.g.Metrics(); lag != m.Lag {
				t.Fatalf("seed %d, %s, tick %d: Lag() = %d, Metrics().Lag = %d (%+v)", seed, mg.g.Name(), r.env.Now(), lag, m.Lag, m.Partitions)
			}
		}
	}
	for range 41 {
		checkLag()
		_ = r.w.Run(1)
	}
	err := r.w.RunUntil(func() bool {
		checkLag()
		if r.w.Pending() > 0 {
			return false
		}
		for _, mg := range groups {
			if !mg.g.CaughtUp() {
				return false
			}
		}
		return true
	}, 5000)
	if err != nil {
		tr := r.traceText()
		if len(tr) > 6000 {
			tr = tr[len(tr)-6000:]
		}
		t.Fatalf("seed %d: not drained: %v\n%+v\n%s", seed, err, r.topic.Metrics(), tr)
	}
	return r, groups
}

// Conservation: whatever the fault mix, every record of every group ends
// applied, absorbed by an idempotent handler, or lost with a cause the
// group's setup models (never pending or unsettled once the groups caught
// up); a loss of commit before processing that the model booked is never
// contradicted later (the model books it only when certain), except after
// a seek back or past the end (a reset to earliest replays); a commit
// past the end is refused; and
// the ledger folded from the JSON Lines trace equals the live one.
func TestConservation(t *testing.T) {
	seeds := uint64(1000)
	if testing.Short() {
		seeds = 100
	}
	var crashes, rebalances, timeouts, seeks, dups, dupEffects, absorbed, skips, applied, origins int
	var lostCommits, refusedCommits, beyond, pastEnd, latestResets, compacted int
	lost := map[sim.Cause]int{}
	modes := map[eventlog.CommitMode]int{}
	for seed := uint64(1); seed <= seeds; seed++ {
		r, groups := conservationRun(t, seed)
		l := r.w.Ledger()
		produced := len(r.events(sim.KindProduced))
		for _, mg := range groups {
			name := mg.g.Name()
			modes[mg.mode]++
			seeks += mg.seeks
			out := l.Outcomes(name)
			if len(out) != produced {
				t.Fatalf("seed %d: group %s has %d outcomes for %d produced records", seed, name, len(out), produced)
			}
			for _, o := range out {
				origins++
				skips += o.Skipped
				switch o.Verdict {
				case sim.VerdictApplied:
					applied++
				case sim.VerdictAbsorbed:
					absorbed++
				case sim.VerdictLost:
					if !mg.causes[o.Cause] {
						t.Fatalf("seed %d: group %s (commit %s, reset %s, %d seeks): %v lost with cause %q, which its setup does not model",
							seed, name, mg.mode, mg.reset, mg.seeks, o.Origin, o.Cause)
					}
					lost[o.Cause]++
				default:
					t.Fatalf("seed %d: group %s: %v is %s after the group caught up\n%s", seed, name, o.Origin, o.Verdict, r.traceText())
				}
			}
			if mg.seeks == 0 {
				// A seek back, or past the end (which auto.offset.reset may
				// turn into a reset to earliest), replays records.
				verdicts := r.outcomes(name)
				for _, e := range r.events(sim.KindLost) {
					if e.Consumer == name && e.Cause == sim.CauseCommitBeforeProcess && verdicts[e.Msg].Verdict != sim.VerdictLost {
						t.Fatalf("seed %d: group %s: %v was booked lost (%s) at t=%d, but it is %s", seed, name, e.Msg, e.Cause, e.Tick, verdicts[e.Msg].Verdict)
					}
				}
			}
			if len(mg.causes) == 0 {
				if err := sim.Check(l, sim.AtLeastOnce(name)); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
			dups += l.Duplicates(name)
			dupEffects += l.DuplicateEffects(name)
			lostCommits += int(mg.g.Metrics().LostCommits)
			beyond += mg.beyond
		}
		r.refold()
		crashes += len(r.events(sim.KindCrashed))
		rebalances += len(r.events(sim.KindRebalanced))
		for _, e := range r.events(sim.KindRebalanced) {
			if strings.Contains(e.Detail, "session timeout") {
				timeouts++
			}
		}
		for _, e := range r.rec.Events() {
			switch {
			case e.Kind == sim.KindRejected && strings.Contains(e.Detail, "commit by group") && strings.Contains(e.Detail, "broker unavailable"):
				refusedCommits++
			case e.Kind == sim.KindSeeked && strings.Contains(e.Detail, "past the end"):
				pastEnd++
			case e.Kind == sim.KindSeeked && strings.Contains(e.Detail, "auto.offset.reset=latest: no committed offset"):
				latestResets++
			case e.Kind == sim.KindExpired && e.Cause == sim.CauseCompaction:
				compacted++
			}
		}
	}
	var causes []string
	for c, n := range lost {
		causes = append(causes, fmt.Sprintf("%s=%d", c, n))
	}
	sort.Strings(causes)
	t.Logf("%d seeds, %d group origins (commit modes %v): %d crashes, %d rebalances (%d session timeouts), %d seeks (%d partitions past the end); "+
		"%d commits lost, %d refused by an outage, %d past the end refused; %d latest positions resolved at the first poll; %d records compacted; "+
		"%d applied, %d absorbed; %d duplicate deliveries, %d duplicate effects, %d duplicates skipped by idempotent handlers; lost: %s",
		seeds, origins, modes, crashes, rebalances, timeouts, seeks, pastEnd, lostCommits, refusedCommits, beyond, latestResets, compacted,
		applied, absorbed, dups, dupEffects, skips, strings.Join(causes, " "))
	for _, c := range []sim.Cause{sim.CauseCommitBeforeProcess, sim.CauseSeek, sim.CauseRetention} {
		if lost[c] == 0 {
			t.Errorf("no loss with cause %q in any run: the fault mix is too tame", c)
		}
	}
	if crashes == 0 || timeouts == 0 || dupEffects == 0 || skips == 0 {
		t.Errorf("the faults never bit: %d crashes, %d session timeouts, %d duplicate effects, %d skipped duplicates", crashes, timeouts, dupEffects, skips)
	}
	if lostCommits == 0 || refusedCommits == 0 || beyond == 0 || pastEnd == 0 || latestResets == 0 || compacted == 0 || lost[sim.CauseOffsetReset] == 0 {
		t.Errorf("the new features never bit: %d lost commits, %d refused, %d past the end, %d seeks past the end, %d latest resolutions, %d compacted",
			lostCommits, refusedCommits, beyond, pastEnd, latestResets, compacted)
	}
}

// mixRules returns the fault rules of a random run until tick 40, their
// probabilities and parameters drawn from s (p(max) draws a probability
// up to max): member crashes, leaves and session timeouts, crashes before
// the commit and after the effect, handler failures (transient,
// permanent, poison), slow handlers, broker outages and lost commits.
// conservationRun and bookedRun draw their plans from it.
func mixRules(s *sim.Stream, p func(float64) float64) []faults.Rule {
	return []faults.Rule{
		{Name: "crash", Point: faults.MemberCrash, Probability: p(0.04), Until: 40},
		{Name: "crash-before-commit", Point: faults.ConsumerCrashBeforeCommit, Probability: p(0.05), Until: 40},
		{Name: "crash-after-effect", Point: faults.ConsumerCrashAfterEffect, Probability: p(0.03), Until: 40},
		{Name: "leave", Point: faults.MemberLeave, Probability: p(0.02), Until: 40},
		{Name: "pause", Point: faults.MemberSessionTimeout, Probability: p(0.04), Until: 40},
		{Name: "flaky", Point: faults.HandlerTransient, Probability: p(0.08), Param: int64(1 + s.IntN(3)), Until: 40},
		{Name: "reject", Point: faults.HandlerPermanent, Probability: p(0.02), Until: 40},
		{Name: "poison", Point: faults.HandlerPoison, Probability: p(0.01), Until: 40},
		{Name: "slow", Point: faults.HandlerSlow, Probability: p(0.08), Param: int64(1 + s.IntN(6)), Until: 40},
		{Name: "down", Point: faults.BrokerUnavailable, Probability: p(0.03), Until: 40},
		{Name: "ack-lost", Point: faults.BrokerAckLost, Probability: p(0.2), Until: 40},
	}
}
