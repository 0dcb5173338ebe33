package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// TestReportUndrained: a run until drained that reaches max_ticks with
// work left is marked and noted in the text report; one that drains, or
// runs a fixed number of ticks, is not.
func TestReportUndrained(t *testing.T) {
	const topo = "topology:\n  queues: [{name: orders}]\nactors:\n  producers: [{name: shop, to: {queue: orders}, count: 3}]\n"
	for _, c := range []struct {
		name, run, consumers string
		undrained            bool
	}{
		{"stuck", "{until: drained, max_ticks: 5}", "", true},
		{"drains", "{until: drained, max_ticks: 5}", "  consumers: [{name: worker, queue: orders}]\n", false},
		{"fixed", "{ticks: 5}", "", false},
	} {
		s, err := scenario.Load(c.name+".yaml", []byte("title: t\nrun: "+c.run+"\n"+topo+c.consumers))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Execute(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Undrained != c.undrained || !rep.Pass {
			t.Errorf("%s: Undrained %v, Pass %v; want %v, true", c.name, rep.Undrained, rep.Pass, c.undrained)
		}
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		note := "\nNOTE: stopped at max_ticks 5 before draining: "
		if strings.Contains(b.String(), note) != c.undrained || strings.HasSuffix(b.String(), ", not drained\n") != c.undrained {
			t.Errorf("%s: report:\n%s", c.name, b.String())
		}
	}
}
