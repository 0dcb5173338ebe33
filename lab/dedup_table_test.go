package lab

import (
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// sweepSrc is a consumer group whose members crash before committing,
// idempotent by message ID; perMember says whether each keeps its own
// dedup table.
func sweepSrc(perMember bool) string {
	per := ""
	if perMember {
		per = ", idempotency_per_member: true"
	}
	return `version: 1
title: a group with crashes, idempotent by message ID
seed: 1
run: {until: drained, max_ticks: 200}
topology:
  logs:
    - {name: pay, partitions: 2}
  groups:
    - {name: g, log: pay, session_timeout: 3` + per + `}
actors:
  producers:
    - {name: psp, to: {log: pay}, count: 20, rate: 2, keys: "acct-%d", key_count: 5}
  members:
    - {name: w1, group: g, commit: after, batch: 3, idempotency: message_id}
    - {name: w2, group: g, commit: after, batch: 3, idempotency: message_id}
faults:
  - {name: crash, point: consumer.crash_before_commit, probability: 0.2}
expect:
  - {check: exactly_once, consumer: g}
`
}

// TestGroupMembersShareTheirDedupTable sweeps 40 seeds of a group whose
// members crash between processing and committing. With a dedup table per
// member, the member that takes a partition over applies again what the
// crashed one applied, and exactly-once fails on most seeds; with the
// default, one table shared by the group (kept in the service's database),
// it holds on every seed.
//
// Kafka's consumer group hands a crashed member's partitions to another
// member, which resumes from the committed offset (at-least-once); a
// consumer that dedups in its own memory cannot know what the other
// applied, while one whose processed-IDs table lives in the service's
// database, written with the effect, can.
func TestGroupMembersShareTheirDedupTable(t *testing.T) {
	fails := map[bool]int{}
	const seeds = 40
	for _, perMember := range []bool{false, true} {
		s, err := scenario.Load("sweep.yaml", []byte(sweepSrc(perMember)))
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= seeds; seed++ {
			rep, err := Execute(s, Options{Seed: &seed})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Pass {
				fails[perMember]++
				if !perMember {
					t.Errorf("seed %d: exactly-once failed with the shared table: %+v", seed, rep.Outcomes)
				}
			}
		}
	}
	if fails[true] < seeds/2 {
		t.Errorf("a table per member failed exactly-once on %d of %d seeds; the sweep no longer shows the difference", fails[true], seeds)
	}
	t.Logf("exactly-once failed on %d of %d seeds with a table per member, %d with the group's shared table", fails[true], seeds, fails[false])
}
