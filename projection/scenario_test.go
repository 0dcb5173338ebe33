package projection_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// A key's write that lands at a lower offset of a partition added after
// the row's record is a lost update of a projection versioned by offset:
// no_loss fails and names the message, the tick and the cause, and the
// ledger counts it lost by that cause, not absorbed. Before the cause
// existed the projection skipped it and no_loss passed.
func TestAddedPartitionLosesUpdate(t *testing.T) {
	s, err := scenario.LoadFile("../scenario/testdata/valid/projection-added-partition.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := lab.Execute(s, lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !rep.Pass {
		t.Errorf("expectations failed:\n%s", b.String())
	}
	const want = "no-loss: m4 key=kunde-A consumer=view t=6: lost (offset order)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
	if got := rep.Stats.LostBy; len(got) != 1 || got[0] != (sim.CauseCount{Cause: sim.CauseOffsetOrder, Count: 1}) || rep.Stats.Absorbed != 0 {
		t.Errorf("lost by %v, absorbed %d; want one loss by offset order and nothing absorbed", got, rep.Stats.Absorbed)
	}
}
