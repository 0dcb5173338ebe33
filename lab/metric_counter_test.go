package lab

import (
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// Every counter the verdict trusts is a field a metric may name.
func TestMetricCountersAreFields(t *testing.T) {
	for kind, fs := range metricCounters {
		for _, f := range fs {
			if !slices.Contains(scenario.MetricFields[kind], f) {
				t.Errorf("counter %s.%s is not in MetricFields", kind, f)
			}
		}
	}
}
