package sim

import (
	"strings"
	"testing"
)

// A check given a worker's name instead of its queue's says whose worker it
// is, from the actors of the events; a name no consumer's actor has gets no
// hint (a producer's send names the consumer it routes to, but the
// producer is no worker of it).
func TestHintActorsNamesTheQueueOfAWorker(t *testing.T) {
	evs := []Event{
		{Kind: KindSent, Where: "queue:payments", Actor: "shop", Consumer: "payments", Msg: 1, Key: "k"},
		{Kind: KindReceived, Where: "queue:payments", Actor: "billing#2", Consumer: "payments", Msg: 1},
		{Kind: KindProcessed, Where: "queue:payments", Actor: "billing#2", Consumer: "payments", Msg: 1},
		{Kind: KindAcked, Where: "queue:payments", Actor: "billing#2", Consumer: "payments", Msg: 1},
		{Kind: KindProduced, Where: "log:orders", Actor: "shop", Msg: 2, Key: "k"},
		{Kind: KindPolled, Where: "log:orders", Actor: "m1", Consumer: "audit", Msg: 2},
	}
	l := feed(evs...)
	vs := HintActors(Check(l, ExactlyOnce("billing"), MaxDuplicates("m1", 0), AtLeastOnce("shop"), NoLoss()).(*CheckError).Violations, evs)
	want := []string{
		`exactly-once: - consumer=billing t=0: the ledger knows no consumer "billing"; it knows: "payments", "audit"; "billing" is a worker of queue "payments": checks name the queue (sim.ExactlyOnce("payments"))`,
		`max-duplicates: - consumer=m1 t=0: the ledger knows no consumer "m1"; it knows: "payments", "audit"; "m1" is a member of group "audit": checks name the group (sim.MaxDuplicates("audit", n))`,
		`at-least-once: - consumer=shop t=0: the ledger knows no consumer "shop"; it knows: "payments", "audit"`,
		`no-loss: m2 key=k consumer=audit t=0: still pending at t=0 (log:orders) after 1 deliveries without an effect; the run ended before it was settled`,
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Violations about how a check was asked are marked Misuse; violations
// about the run are not.
func TestMisuseMarksConfigurationViolations(t *testing.T) {
	dup := feed(Event{Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1, Key: "k"},
		Event{Kind: KindProcessed, Consumer: "w", Msg: 1}, Event{Kind: KindProcessed, Consumer: "w", Msg: 1},
		Event{Kind: KindAcked, Consumer: "w", Msg: 1})
	empty := NewLedger()
	cases := []struct {
		name   string
		l      *Ledger
		c      []Checker
		misuse bool
	}{
		{"unknown consumer", dup, []Checker{ExactlyOnce("typo")}, true},
		{"no checkers", dup, nil, true},
		{"no ledger", nil, []Checker{NoLoss()}, true},
		{"routed nothing", empty, []Checker{AtLeastOnce("")}, false}, // a fault can cause it
		{"saw nothing", empty, []Checker{NoLoss()}, false},
		{"negative bound", dup, []Checker{MaxDuplicates("w", -1)}, true},
		{"a duplicate", dup, []Checker{ExactlyOnce("w")}, false},
	}
	for _, c := range cases {
		err, _ := Check(c.l, c.c...).(*CheckError)
		if err == nil || len(err.Violations) == 0 {
			t.Fatalf("%s: no violation", c.name)
		}
		for _, v := range err.Violations {
			if v.Misuse != c.misuse {
				t.Errorf("%s: %s: Misuse=%v, want %v", c.name, v, v.Misuse, c.misuse)
			}
		}
	}
}
