package bench

import (
	"os"
	"strings"
	"testing"
)

// TestExploreScenarioIsTheSweep checks that the scenario run.sh hands to
// `brokerlab explore` (testdata/sweep-queue.yaml) is the queue sweep the
// Go benchmarks measure, so the explore rows compare the same work.
func TestExploreScenarioIsTheSweep(t *testing.T) {
	b, err := os.ReadFile("testdata/sweep-queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			body = append(body, line)
		}
	}
	if got, want := strings.Join(body, ""), strings.TrimPrefix(queueSweepScenario, "\n"); got != want {
		t.Fatalf("testdata/sweep-queue.yaml differs from queueSweepScenario:\n%s\nwant:\n%s", got, want)
	}
}
