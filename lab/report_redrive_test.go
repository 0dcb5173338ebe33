package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// TestReportCountsRedrivenDeadLetters: poison-dlq dead-letters four orders
// and redrives them all, so its DLQ ends empty; the ledger line must not
// read as if nothing was ever dead-lettered.
func TestReportCountsRedrivenDeadLetters(t *testing.T) {
	s, err := scenario.LoadLesson("poison-dlq")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Execute(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "0 in a DLQ, 4 redriven, ") {
		t.Errorf("ledger line does not count the redriven dead letters:\n%s", b.String())
	}
}
