package exercise

import (
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

// solutionCase is a solution of the repository's and what grading it must
// find: "" for the model, else the property it must break first.
type solutionCase struct {
	exercise string
	name     string
	sol      func() Solution // nil: the test makes it (stub)
	breaks   string
}

var solutionCases = []solutionCase{
	{"outbox", "the stub", outboxStubbed, "stored"},
	{"outbox", "model", outboxModel, ""},
	{"outbox", "two transactions", outboxTwoTxns, "atomic-order"},
	{"outbox", "mark before publish", outboxMarkFirst, "mark-after-publish"},
	{"outbox", "skip a failed row", outboxSkipFailed, "in-order"},
	{"dead-letter", "the stub", dlqStubbed, "no-loss"},
	{"dead-letter", "model", dlqModel, ""},
	{"dead-letter", "dead-letter the first failure", dlqFirstFailure, "last-attempt"},
	{"dead-letter", "retry forever", dlqRetryForever, "blocks"},
	{"dead-letter", "swallow failures", dlqSwallow, "no-loss"},
	{"dead-letter", "ack before effect", dlqAckFirst, "no-loss"},
	{"dead-letter", "ack first, dead-letter the first failure", dlqAckFirstDeadLetterAtOnce, "last-attempt"},
	{"dead-letter", "ack, never handle", dlqAckOnly, "no-loss"},
	{"idempotent", "the stub", idemStubbed, "never-lost"},
	{"idempotent", "model", idemModel, ""},
	{"idempotent", "no dedup", idemNaive, "once"},
	{"idempotent", "dedup row first, own transaction", idemMarkFirst, "never-lost"},
	{"idempotent", "charge first, dedup row after", idemChargeFirst, "once"},
	{"retries", "the stub", retryStubbed, "backoff"},
	{"retries", "model", retryModel, ""},
	{"retries", "retry every class", retryAll, "class"},
	{"retries", "never retry", retryNever, "transient"},
	{"retries", "retry at once", retryNow, "backoff"},
	{"group-member", "the stub", memberStubbed, "never-lost"},
	{"group-member", "model", memberModel, ""},
	{"group-member", "commit before processing", memberCommitFirst, "never-lost"},
	{"group-member", "no dedup", memberNoDedup, "once"},
	{"architecture", "model (a log, a group per team)", archFile("model.yaml"), ""},
	{"architecture", "pub/sub without storage", archFile("pubsub.yaml"), "offline"},
	{"architecture", "one group for every team", archFile("one-group.yaml"), "every-team"},
}

// TestSolutions grades every model and wrong solution over the default
// seeds: the model passes every seed, each wrong one breaks its property
// and shrinks to at most 3 fault decisions.
func TestSolutions(t *testing.T) {
	for _, c := range solutionCases {
		t.Run(c.exercise+"/"+c.name, func(t *testing.T) {
			e, err := Lookup(c.exercise)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			rep := e.Grade(c.sol(), 0)
			t.Logf("%s\n%v", rep.Text(e), time.Since(start))
			if c.breaks == "" {
				if !rep.Pass() {
					t.Fatalf("the model fails")
				}
				if rep.Faults == 0 {
					t.Errorf("the model passed without a single fault firing: the grading is vacuous")
				}
				return
			}
			if rep.Pass() {
				t.Fatalf("a wrong solution passes")
			}
			sh := rep.Shrunk
			if sh == nil {
				t.Fatalf("a wrong solution fails no seed")
			}
			if sh.Prop != c.breaks {
				t.Errorf("shrunk failure breaks %q, want %q", sh.Prop, c.breaks)
			}
			if n := sh.Minimal.Len(); n > 3 {
				t.Errorf("shrunk to %d fault decisions, want at most 3", n)
			}
			// The replay of the shrunk run breaks the same property, at a
			// tick within the run, with a narration step at each fault.
			rec, err := e.Recording(c.sol(), sh.Seed, &sh.Minimal)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range e.Props {
				if p.ID == c.breaks && (!rec.Checks[i].Broken || rec.Checks[i].At > rec.End) {
					t.Errorf("replay: %q is %+v, run ends at %d", p.ID, rec.Checks[i], rec.End)
				}
			}
			if len(rec.Steps) < 2 || rec.End <= 0 {
				t.Errorf("replay: %d narration steps, end %d", len(rec.Steps), rec.End)
			}
		})
	}
}

// lossProps are the properties whose breach is a lost message.
var lossProps = map[string]bool{"no-loss": true, "none-lost": true, "never-lost": true}

// TestReplayBooksLosses replays the shrunk failure of every wrong
// solution: its trace carries each loss as a lost event with its cause,
// so that the ledger the player shows counts a loss exactly when the
// verdict reports one. A stub takes nothing, so its messages are still
// pending at the end, not lost; it is left out.
func TestReplayBooksLosses(t *testing.T) {
	for _, c := range solutionCases {
		if c.breaks == "" || c.name == "the stub" {
			continue
		}
		t.Run(c.exercise+"/"+c.name, func(t *testing.T) {
			e, _ := Lookup(c.exercise)
			rep := e.Grade(c.sol(), 0)
			sh := rep.Shrunk
			if sh == nil {
				t.Fatalf("no seed fails:\n%s", rep.Text(e))
			}
			rec, err := e.Recording(c.sol(), sh.Seed, &sh.Minimal)
			if err != nil {
				t.Fatal(err)
			}
			var broken []string
			for i, p := range e.Props {
				if lossProps[p.ID] && rec.Checks[i].Broken {
					broken = append(broken, p.ID)
				}
			}
			lost := 0
			for _, ev := range rec.Trace {
				if ev.Kind == sim.KindLost {
					lost++
					if ev.Cause == "" || ev.Msg == 0 {
						t.Errorf("a loss is traced without its message or cause: %+v", ev)
					}
				}
			}
			got := lab.NewPlayback(rec).Seek(rec.End).Ledger.Lost
			if (len(broken) > 0) != (lost > 0) || got != lost {
				t.Errorf("the verdict breaks %v; the trace has %d lost events and the ledger counts %d lost", broken, lost, got)
			}
		})
	}
}

// TestModelReplayLosesNothing replays every model solution on a few
// seeds: the ledger the player shows counts no loss where the verdict
// finds none.
func TestModelReplayLosesNothing(t *testing.T) {
	for _, c := range solutionCases {
		if c.breaks != "" {
			continue
		}
		t.Run(c.exercise, func(t *testing.T) {
			e, _ := Lookup(c.exercise)
			for seed := uint64(0); seed < 10; seed++ {
				rec, err := e.Recording(c.sol(), seed, nil)
				if err != nil {
					t.Fatal(err)
				}
				if l := lab.NewPlayback(rec).Seek(rec.End).Ledger; l.Lost != 0 {
					t.Errorf("seed %d: the model's replay counts %d lost: %+v", seed, l.Lost, l)
				}
			}
		})
	}
}

// TestReplayActorsSpelledOnce replays every solution and checks that the
// trace names each actor one way: no two actors differ only in case.
func TestReplayActorsSpelledOnce(t *testing.T) {
	for _, c := range solutionCases {
		t.Run(c.exercise+"/"+c.name, func(t *testing.T) {
			e, _ := Lookup(c.exercise)
			rec, err := e.Recording(c.sol(), 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]string{}
			for _, ev := range rec.Trace {
				if ev.Actor == "" {
					continue
				}
				k := strings.ToLower(ev.Actor)
				if s, ok := seen[k]; ok && s != ev.Actor {
					t.Errorf("the trace spells one actor %q and %q", s, ev.Actor)
					return
				}
				seen[k] = ev.Actor
			}
		})
	}
}
