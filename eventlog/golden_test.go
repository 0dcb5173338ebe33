package eventlog_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenRun is a small scenario touching most of the package: the seed's
// customers on 3 partitions, two groups, a crash before commit, a session
// timeout with a stale commit, partitions added, retention and a replay.
func goldenRun(t *testing.T) string {
	r := newRig(t, 2026, eventlog.Config{Partitions: 3, RetentionRecords: 6, History: true},
		faults.Rule{Name: "crash-before-commit", Point: faults.ConsumerCrashBeforeCommit, Nth: 3, Match: faults.Match{Consumer: "billing-1"}},
		faults.Rule{Name: "gc-pause", Point: faults.MemberSessionTimeout, From: 6, Count: 1, Match: faults.Match{Consumer: "billing-2"}},
		faults.Rule{Name: "scale-out", Point: faults.PartitionsAdded, From: 12, Count: 1})
	billing := r.group(eventlog.GroupConfig{Name: "billing", SessionTimeout: 3})
	audit := r.group(eventlog.GroupConfig{Name: "audit", Strategy: eventlog.Sticky})
	r.member(billing, eventlog.MemberConfig{Name: "billing-1", Batch: 2})
	r.member(billing, eventlog.MemberConfig{Name: "billing-2", Batch: 2})
	r.member(audit, eventlog.MemberConfig{Name: "audit-1", Commit: eventlog.CommitAuto, AutoCommitEvery: 4, Batch: 3})
	r.producer("shop", []string{"kunde-A", "kunde-B", "kunde-C"}, 2, 16)
	r.w.At(18, "replay audit from t=10", func() {
		if err := audit.SeekTick(eventlog.AllPartitions, 10); err != nil {
			t.Fatal(err)
		}
	})
	_ = r.w.Run(24)
	var b strings.Builder
	b.WriteString(r.traceText())
	b.WriteString("-- history\n")
	b.WriteString(r.topic.History().String())
	b.WriteString("-- history check\n")
	for _, a := range eventlog.CheckHistory(r.topic.History()).Anomalies {
		b.WriteString(a.String())
		b.WriteByte('\n')
	}
	b.WriteString("-- metrics\n")
	m := r.topic.Metrics()
	fmt.Fprintf(&b, "%+v\n", m.Partitions)
	for _, g := range m.Groups {
		fmt.Fprintf(&b, "%+v\n", g)
	}
	fmt.Fprintf(&b, "-- ledger\n%+v\n", r.env.Ledger.Stats())
	r.refold()
	return b.String()
}

func TestGoldenTrace(t *testing.T) {
	got := goldenRun(t)
	path := filepath.Join("testdata", "trace.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("trace differs from %s at line %d:\n got: %s\nwant: %s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("trace differs from %s in length: %d lines, want %d", path, len(gl), len(wl))
	}
	if again := goldenRun(t); again != got {
		t.Fatal("the same seed gave a different trace")
	}
}
