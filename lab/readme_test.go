package lab

import (
	"os"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// TestReadmeExample loads and runs the annotated scenario in the README, so
// the documentation cannot drift from the format.
func TestReadmeExample(t *testing.T) {
	s, _ := readmeScenario(t)
	rep, err := Execute(s, Options{})
	requirePass(t, rep, err)
}

// readmeScenario loads the annotated scenario of the README, as
// TestReadmeExample does, and returns it with its text.
func readmeScenario(t *testing.T) (*scenario.Scenario, []byte) {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "```yaml\n")
	if start < 0 {
		t.Fatal("README has no yaml block")
	}
	block := text[start+len("```yaml\n"):]
	block = block[:strings.Index(block, "```")]
	s, err := scenario.Load("orders.yaml", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	return s, []byte(block)
}
