package scenario

import (
	"os"
	"testing"

	yaml "github.com/goccy/go-yaml"
)

func benchData(b *testing.B) []byte {
	data, err := os.ReadFile("testdata/valid/log-replay.yaml")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkLoad is the strict loader on a typical lesson file.
func BenchmarkLoad(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load("log-replay.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBaselineUnmarshal is the baseline: the same bytes decoded by
// goccy/go-yaml into untyped values, with no validation at all.
func BenchmarkBaselineUnmarshal(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}
