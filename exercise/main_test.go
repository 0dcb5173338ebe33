package exercise

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The workspace's commands: check fails a wrong solution with exit 1,
// json carries the same grading, hint and task print text, and bad input
// exits 2 saying what is allowed.
func TestMainArgs(t *testing.T) {
	run := func(sol Solution, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := MainArgs(sol, args, &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, out, _ := run(outboxTwoTxns(), "check", "-seeds", "20"); code != 1 || !strings.Contains(out, "crash between insert and outbox row") {
		t.Errorf("check: exit %d\n%s", code, out)
	}
	if code, out, _ := run(outboxTwoTxns(), "check", "-seed", "7"); code != 1 || !strings.Contains(out, "1 of 1 seeds") || !strings.Contains(out, "Seed 7, shrunk") {
		t.Errorf("check -seed 7: exit %d\n%s", code, out)
	}
	if code, out, _ := run(outboxModel(), "-seeds", "20"); code == 0 {
		t.Errorf("a command line of flags only ran: exit %d\n%s", code, out)
	}
	if code, out, _ := run(outboxModel(), "check", "-seeds", "20"); code != 0 || !strings.Contains(out, "PASS: 20 of 20 seeds") {
		t.Errorf("check of the model: exit %d\n%s", code, out)
	}
	code, out, _ := run(dlqSwallow(), "json", "-seeds", "10")
	var rep Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.Exercise != "dead-letter" || rep.Shrunk == nil || len(rep.Shrunk.Faults) != 1 {
		t.Errorf("json: exit %d, %v\n%s", code, err, out)
	}
	if code, out, _ := run(dlqModel(), "hint", "3"); code != 0 || !strings.Contains(out, "Hint 3 of 3") {
		t.Errorf("hint 3: exit %d %s", code, out)
	}
	if code, out, _ := run(dlqModel(), "task"); code != 0 || !strings.Contains(out, "after lesson poison-dlq") {
		t.Errorf("task: exit %d %s", code, out)
	}
	for _, args := range [][]string{{"hint", "4"}, {"frob"}, {"check", "-seeds", "0"}, {"check", "extra"}} {
		if code, _, errOut := run(dlqModel(), args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// play -cast writes the shrunk failing run as a cast at 80x24 whose last
// frames show the broken property.
func TestPlayCast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "replay.cast")
	var out, errb bytes.Buffer
	if code := MainArgs(dlqRetryForever(), []string{"play", "-cast", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"width":80`, `"height":24`, "poison message blocked"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("cast lacks %q", want)
		}
	}
}

// Code that loops without calling into the world cannot be stopped; the
// driver gives up after Hang and names the seed.
func TestMainArgsHang(t *testing.T) {
	defer func(h time.Duration) { Hang = h }(Hang)
	Hang = 200 * time.Millisecond
	stuck := make(chan struct{})
	defer close(stuck)
	sol := DeadLetterLoop{ProcessAll: func(q WorkQueue, _ func(string) error, _ int, _ *[]DeadLetter) {
		if q.Open() > 0 {
			<-stuck // stands for an endless loop
		}
	}}
	var out, errb bytes.Buffer
	if code := MainArgs(sol, []string{"check", "-seeds", "3"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "did not return within 200ms on seed 1") {
		t.Fatalf("exit %d: %q", code, errb.String())
	}
}

// A seed that fails with no fault at all says so plainly: the faults its
// own run drew were all taken away and it still failed, so the code fails
// without any fault. The count of those faults must not read as faults
// that fired in a run without any.
func TestCheckFailsWithoutFault(t *testing.T) {
	var out, errb bytes.Buffer
	if code := MainArgs(idemStubbed(), []string{"check", "-seed", "1"}, &out, &errb); code != 1 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "Seed 1 fails even with all ") || !strings.Contains(out.String(), " of the faults that fired in its run removed; your code fails without any fault:\n") {
		t.Errorf("check -seed 1 of the stub:\n%s", out.String())
	}
	e, err := Lookup("idempotent")
	if err != nil {
		t.Fatal(err)
	}
	for fired, want := range map[int]string{
		0: "\nSeed 3 fails, and no fault fired in its run:\n",
		1: "\nSeed 3 fails even with the one fault that fired in its run removed; your code fails without any fault:\n",
		4: "\nSeed 3 fails even with all 4 of the faults that fired in its run removed; your code fails without any fault:\n",
	} {
		r := &Report{Exercise: e.Name, Seeds: 1, Shrunk: &Shrunk{Seed: 3, Fired: fired}}
		if got := r.Text(e); !strings.Contains(got, want) {
			t.Errorf("%d fired: want %q in:\n%s", fired, want, got)
		}
	}
}
