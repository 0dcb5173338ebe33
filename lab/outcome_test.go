package lab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// TestOutcomeString checks that an outcome prints as the report line it
// stands for, not as a raw struct, e.g. in t.Log(rep.Failures()[0]).
func TestOutcomeString(t *testing.T) {
	o := Outcome{Text: "exactly_once(worker)", Check: "exactly_once", Line: 12, Col: 5, Measured: "2 violations"}
	if got, want := fmt.Sprint(o), "FAIL 12:5 exactly_once(worker) (measured 2 violations)"; got != want {
		t.Errorf("fmt.Sprint(outcome) = %q, want %q", got, want)
	}
	o.Pass = true
	if got := o.String(); got[:4] != "PASS" {
		t.Errorf("passing outcome = %q", got)
	}
}

// TestCrashTwoTargetsOneError checks that a crash naming both a consumer
// and a member is one mistake with one error, not also an unknown member.
func TestCrashTwoTargetsOneError(t *testing.T) {
	src := "title: t\nrun: {ticks: 5}\ntopology:\n  queues: [{name: q}]\n" +
		"actors:\n  producers: [{name: p, to: {queue: q}, count: 2}]\n  consumers: [{name: c, queue: q}]\n" +
		"timeline:\n  - {at: 2, action: crash, consumer: c, member: c}\n"
	_, err := scenario.Load("bad.yaml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	msg := strings.TrimSpace(err.Error())
	if n := strings.Count(msg, "\n") + 1; n != 1 || !strings.Contains(msg, "needs exactly one of consumer, member") {
		t.Errorf("%d error line(s), want one about the two subjects:\n%s", n, msg)
	}
}
