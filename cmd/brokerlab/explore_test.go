package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fixture copies the explore fixture into a fresh directory and returns
// the directory and the file's name in it.
func fixture(t *testing.T) (dir, name string) {
	t.Helper()
	src, err := os.ReadFile("../../scenario/testdata/explore/naive-billing.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "naive-billing.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, "naive-billing.yaml"
}

// The whole pipeline: a naive handler under five probabilistic rules fails
// within 200 seeds, shrinks to at most 2 firings, and brokerlab run of the
// written reproducer fails with the same violation.
func TestExploreShrinksAndReproduces(t *testing.T) {
	dir, name := fixture(t)
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "200", "--jobs", "2", name)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailed, out, errs)
	}
	t.Logf("stdout:\n%s", out)
	first := regexp.MustCompile(`(?m)^FAIL seed (\d+): (exactly_once\(billing\)) at naive-billing.yaml:\d+:\d+: (.*)$`).FindStringSubmatch(out)
	if first == nil {
		t.Fatalf("no failing seed for exactly_once(billing) in:\n%s", out)
	}
	m := regexp.MustCompile(`shrunk to (\d+) in \d+ runs`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" || len(m[1]) > 1 || m[1][0] > '2' {
		t.Fatalf("shrunk to %v firings, want 1 or 2:\n%s", m, out)
	}
	fails := regexp.MustCompile(`(?m)^  fails (exactly_once\(billing\)) at naive-billing.yaml:\d+:\d+: (.*)$`).FindStringSubmatch(out)
	if fails == nil {
		t.Fatalf("no shrunk failure in:\n%s", out)
	}
	if !strings.Contains(out, "wrote naive-billing.min.yaml") {
		t.Fatalf("no reproducer written:\n%s", out)
	}
	min, err := os.ReadFile(filepath.Join(dir, "naive-billing.min.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(min), "probability:") {
		t.Fatalf("the reproducer still has probabilistic rules:\n%s", min)
	}
	code, rout, rerr := runCLI(t, dir, false, "run", "naive-billing.min.yaml")
	if code != exitFailed {
		t.Fatalf("brokerlab run of the reproducer: exit %d\n%s%s", code, rout, rerr)
	}
	// The same expectation fails with the same violation.
	want := "FAIL  naive-billing.min.yaml:"
	if !strings.Contains(rout, want) || !strings.Contains(rout, fails[1]) || !strings.Contains(rout, "        "+fails[2]+"\n") {
		t.Fatalf("brokerlab run of the reproducer does not fail %s with %q:\n%s", fails[1], fails[2], rout)
	}
	if n := strings.Count(rout, "\nFAIL  "); n != 1 {
		t.Fatalf("the reproducer fails %d expectations, want 1:\n%s", n, rout)
	}
}

// The listing and the reproducer do not depend on --jobs.
func TestExploreIndependentOfJobs(t *testing.T) {
	var outs, mins []string
	dirs := map[string]string{}
	for _, jobs := range []string{"1", "4"} {
		dirs[jobs], _ = fixture(t)
	}
	for _, jobs := range []string{"1", "4"} {
		dir, name := dirs[jobs], "naive-billing.yaml"
		code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "300", "--jobs", jobs, name)
		if code != exitFailed {
			t.Fatalf("--jobs %s: exit %d\n%s%s", jobs, code, out, errs)
		}
		min, err := os.ReadFile(filepath.Join(dir, "naive-billing.min.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		outs, mins = append(outs, out), append(mins, string(min))
	}
	if outs[0] != outs[1] {
		t.Errorf("stdout differs between --jobs 1 and 4:\n%s\n----\n%s", outs[0], outs[1])
	}
	if mins[0] != mins[1] {
		t.Errorf("reproducer differs between --jobs 1 and 4:\n%s\n----\n%s", mins[0], mins[1])
	}
}

func TestExploreShardsMerge(t *testing.T) {
	dir, name := fixture(t)
	code, whole, _ := runCLI(t, dir, false, "explore", "--seeds", "120", "--no-shrink", "--json", "all.json", name)
	if code != exitFailed {
		t.Fatalf("whole sweep: exit %d\n%s", code, whole)
	}
	for _, k := range []string{"1", "2", "3"} {
		code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "120", "--shard", k+"/3", "--no-shrink", "--json", "s"+k+".json", name)
		if code != exitFailed && code != exitOK {
			t.Fatalf("shard %s: exit %d\n%s%s", k, code, out, errs)
		}
	}
	code, merged, errs := runCLI(t, dir, false, "explore", "merge", "--json", "merged.json", "s1.json", "s2.json", "s3.json")
	if code != exitFailed {
		t.Fatalf("merge: exit %d\n%s%s", code, merged, errs)
	}
	// The merged listing is the whole sweep's.
	body := func(s string) string {
		lines := strings.Split(s, "\n")
		var keep []string
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "wrote") || strings.HasPrefix(l, "shrink the first") {
				continue
			}
			keep = append(keep, l)
		}
		return strings.Join(keep, "\n")
	}
	if body(merged) != body(whole) {
		t.Fatalf("merged shards:\n%s\nwhole sweep:\n%s", merged, whole)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "all.json"))
	b, _ := os.ReadFile(filepath.Join(dir, "merged.json"))
	a = bytes.Replace(a, []byte(`"covered": [
    1
  ]`), []byte(`"covered": [
    1,
    2,
    3
  ]`), 1)
	a = bytes.Replace(a, []byte(`"shards": 1`), []byte(`"shards": 3`), 1)
	if !bytes.Equal(a, b) {
		t.Fatalf("merged report:\n%s\nwhole sweep's, with 3 shards:\n%s", b, a)
	}
	// A shard twice, a missing shard, reports of different sweeps.
	// (A copy: the same file twice is refused before it is read.)
	s1, _ := os.ReadFile(filepath.Join(dir, "s1.json"))
	os.WriteFile(filepath.Join(dir, "s1-copy.json"), s1, 0o644)
	code, _, errs = runCLI(t, dir, false, "explore", "merge", "s1.json", "s1-copy.json")
	if code != exitBadInput || !strings.Contains(errs, "shard 1/3 is in report 1 and report 2") {
		t.Fatalf("a shard twice: exit %d, %s", code, errs)
	}
	code, out, errs := runCLI(t, dir, false, "explore", "merge", "s1.json", "s3.json")
	if code != exitFailed || strings.Contains(out, "NOTE") || strings.Count(out+errs, "missing") != 1 || !strings.Contains(errs, "shards [2] of 3 are missing") {
		t.Fatalf("a missing shard (exit %d):\n%s%s", code, out, errs)
	}
	code, _, errs = runCLI(t, dir, false, "explore", "merge", "s1.json", "all.json")
	if code != exitBadInput || !strings.Contains(errs, "report 2 sweeps seeds 1..120 of 1 shards, report 1 seeds 1..120 of 3 shards") {
		t.Fatalf("different sweeps: exit %d, %s", code, errs)
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"version": 2}`), 0o644)
	code, _, errs = runCLI(t, dir, false, "explore", "merge", "bad.json")
	if code != exitBadInput || !strings.Contains(errs, "bad.json: not a sweep report") {
		t.Fatalf("a bad report: exit %d, %s", code, errs)
	}
}

func TestExploreBadInput(t *testing.T) {
	dir, name := fixture(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explore"}, "want exactly one FILE or LESSON"},
		{[]string{"explore", "--seeds", "0", name}, "no seeds: the count must be at least 1"},
		{[]string{"explore", "--seeds", "-3", name}, `invalid value "-3" for flag -seeds: must be a whole number`},
		{[]string{"explore", "--jobs", "0", name}, "--jobs 0: want 1 to 1024"},
		{[]string{"explore", "--shard", "3/2", name}, `invalid value "3/2" for flag -shard: want K/N with 1 <= K <= N`},
		{[]string{"explore", "--from", "18446744073709551615", "--seeds", "2", name}, "run past the largest seed"},
		{[]string{"explore", "nope.yaml"}, "nope.yaml:1:1: cannot read the file"},
		{[]string{"explore", "--out", name, name}, "would overwrite the scenario itself"},
		{[]string{"explore", "merge"}, "want at least one REPORT.json"},
		{[]string{"explore", "merge", "missing.json"}, "missing.json: no such file"},
	} {
		code, out, errs := runCLI(t, dir, false, c.args...)
		if code != exitBadInput || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q (stdout %q)", c.args, code, errs, c.want, out)
		}
	}
}

// A sweep in which every seed passes exits 0 and writes no reproducer;
// the progress bar is drawn only on a terminal.
func TestExplorePassAndProgress(t *testing.T) {
	dir, _ := fixture(t)
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "5", "idempotent-consumer")
	if code != exitOK || !strings.Contains(out, "0 of 5 seeds failed") || strings.Contains(errs, "\x1b") {
		t.Fatalf("exit %d\n%s\nstderr %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "idempotent-consumer.min.yaml")); err == nil {
		t.Fatal("a passing sweep wrote a reproducer")
	}
	old := stderrTerminal
	defer func() { stderrTerminal = old }()
	stderrTerminal = func(io.Writer) bool { return true }
	_, _, errs = runCLI(t, dir, false, "explore", "--seeds", "5", "idempotent-consumer")
	if !strings.Contains(errs, "\r\x1b[K[") || !strings.Contains(errs, "5/5 seeds") || !strings.Contains(errs, "seeds/s") {
		t.Fatalf("no progress bar on a terminal: %q", errs)
	}
}

// explore --variant sweeps and shrinks the variant, and the reproducer is
// the variant's own document: plain brokerlab run of it fails the same
// way, although the file as written passes every seed.
func TestExploreVariant(t *testing.T) {
	src, err := os.ReadFile("../../scenario/testdata/explore/billing-variants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	name := "billing-variants.yaml"
	if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "200", "--no-shrink", name)
	if code != exitOK || !strings.Contains(out, "0 of 200 seeds failed") {
		t.Fatalf("the file as written: exit %d, want 0\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, dir, false, "explore", "--seeds", "200", "--jobs", "2", "--variant", "naive", "--json", "v.json", name)
	if code != exitFailed {
		t.Fatalf("variant naive: exit %d, want %d\n%s%s", code, exitFailed, out, errs)
	}
	if !strings.HasPrefix(out, "explore billing-variants.yaml variant naive: seeds 1..200") {
		t.Errorf("the listing does not name the variant:\n%s", out)
	}
	fails := regexp.MustCompile(`(?m)^  fails (exactly_once\(billing\)) at billing-variants.yaml:\d+:\d+: (.*)$`).FindStringSubmatch(out)
	if fails == nil || !strings.Contains(out, "wrote billing-variants-naive.min.yaml") {
		t.Fatalf("no shrunk failure or reproducer:\n%s%s", out, errs)
	}
	min, err := os.ReadFile(filepath.Join(dir, "billing-variants-naive.min.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"variants:", "idempotency: message_id", "probability:"} {
		if strings.Contains(string(min), bad) {
			t.Errorf("the reproducer still has %q:\n%s", bad, min)
		}
	}
	if !strings.Contains(string(min), `# Variant "naive" of billing-variants.yaml`) || !strings.Contains(string(min), "idempotency: none") {
		t.Errorf("the reproducer is not the variant's document:\n%s", min)
	}
	code, rout, rerr := runCLI(t, dir, false, "run", "billing-variants-naive.min.yaml")
	if code != exitFailed || !strings.Contains(rout, fails[1]) || !strings.Contains(rout, "        "+fails[2]+"\n") {
		t.Fatalf("brokerlab run of the reproducer: exit %d, want it to fail %s with %q\n%s%s", code, fails[1], fails[2], rout, rerr)
	}
	// Shards of the variant merge, and the hint keeps the variant; a report
	// of the file as written does not merge with them.
	for _, k := range []string{"1", "2"} {
		runCLI(t, dir, false, "explore", "--seeds", "200", "--variant", "naive", "--shard", k+"/2", "--no-shrink", "--json", "s"+k+".json", name)
	}
	code, merged, errs := runCLI(t, dir, false, "explore", "merge", "s1.json", "s2.json")
	if code != exitFailed || !strings.Contains(merged, "explore billing-variants.yaml variant naive: seeds 1..200, 2 of 2 shards merged") ||
		!strings.Contains(merged, "brokerlab explore --variant naive billing-variants.yaml --from ") {
		t.Fatalf("merge of the variant's shards: exit %d\n%s%s", code, merged, errs)
	}
	runCLI(t, dir, false, "explore", "--seeds", "200", "--shard", "2/2", "--no-shrink", "--json", "base2.json", name)
	code, _, errs = runCLI(t, dir, false, "explore", "merge", "s1.json", "base2.json")
	if code != exitBadInput || !strings.Contains(errs, `report 2 sweeps the file as written of billing-variants.yaml, report 1 variant "naive"`) {
		t.Fatalf("merging a variant with the file: exit %d, %s", code, errs)
	}
	code, _, errs = runCLI(t, dir, false, "explore", "--variant", "nope", name)
	if code != exitBadInput || !strings.Contains(errs, `no such variant "nope"; variants: naive`) {
		t.Fatalf("an unknown variant: exit %d, %s", code, errs)
	}
}
