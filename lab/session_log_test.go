package lab

import (
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// lesson returns a session on a built-in lesson.
func lesson(t testing.TB, name string) *Session {
	t.Helper()
	d, err := OpenLesson(name, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// stepTo steps d to tick t.
func stepTo(d *Session, t sim.Tick) Snapshot {
	s := d.Snapshot()
	for d.Now() < t && !d.Done() {
		s = d.Step()
	}
	return s
}

// sameRun reports how the run states of got and want differ, "" when they
// are the same: tick, ledger, trace, marks, queues and verdict.
func sameRun(got, want Snapshot) string {
	switch {
	case got.Header.Tick != want.Header.Tick:
		return "tick"
	case got.Ledger != want.Ledger:
		return "ledger"
	case !reflect.DeepEqual(got.Trace, want.Trace):
		return "trace"
	case !reflect.DeepEqual(got.Marks, want.Marks):
		return "marks"
	case !reflect.DeepEqual(got.Queues, want.Queues):
		return "queues"
	case got.Verdict.Line() != want.Verdict.Line():
		return "verdict"
	}
	return ""
}

// TestRedriveSurvivesSeekBack is the rewind bug: in poison-dlq, a redrive
// by hand at t=14, then back to t=10 and forward to t=20, must still have
// the redrive, exactly as a run that never went back.
func TestRedriveSurvivesSeekBack(t *testing.T) {
	d := lesson(t, "poison-dlq")
	stepTo(d, 14)
	s, err := d.Do(Redrive(""))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Header.Notice, "redrove ") {
		t.Fatalf("redrive at t=14: notice %q", s.Header.Notice)
	}
	if s := d.Seek(10); s.Header.Notice != "ahead in the log: the redrive at t=14" {
		t.Errorf("back at t=10: notice %q, want the redrive ahead", s.Header.Notice)
	}
	got := d.Seek(20)

	want := lesson(t, "poison-dlq")
	stepTo(want, 14)
	if _, err := want.Do(Redrive("")); err != nil {
		t.Fatal(err)
	}
	w := stepTo(want, 20)
	if got.Ledger.Redriven == 0 {
		t.Fatalf("the redrive at t=14 is gone after going back to t=10 and forward to t=20: %+v", got.Ledger)
	}
	if diff := sameRun(got, w); diff != "" {
		t.Errorf("back to t=10 and forward to t=20 differs from a run that never went back (%s):\n%+v\nwant %+v", diff, got.Ledger, w.Ledger)
	}
	if log := d.Log(); len(log) != 1 || log[0].At != 14 || ActionName(log[0].Action) != "redrive" {
		t.Errorf("log %+v", log)
	}
}

// TestStepForwardReplaysLog: after going back, stepping (not seeking)
// forward applies the logged action at its tick and says so.
func TestStepForwardReplaysLog(t *testing.T) {
	d := lesson(t, "poison-dlq")
	stepTo(d, 14)
	if _, err := d.Do(Redrive("")); err != nil {
		t.Fatal(err)
	}
	d.Seek(12)
	d.Step()
	s := d.Step()
	if s.Header.Tick != 14 || !strings.HasPrefix(s.Header.Notice, "again from the log: redrove ") {
		t.Errorf("at t=%d the notice is %q, want the redrive again", s.Header.Tick, s.Header.Notice)
	}
	if s := d.Step(); s.Header.Notice != "" {
		t.Errorf("t=15: notice %q, want none", s.Header.Notice)
	}
}

// TestBranchDropsFuture: acting in the past branches off the logged
// future: the notice names what is dropped, the log holds the new action
// only, and going forward gives the run of the new history.
func TestBranchDropsFuture(t *testing.T) {
	d := lesson(t, "poison-dlq")
	stepTo(d, 14)
	if _, err := d.Do(Redrive("")); err != nil {
		t.Fatal(err)
	}
	stepTo(d, 20)
	d.Seek(10)
	s, err := d.Do(Crash(""))
	if err != nil {
		t.Fatal(err)
	}
	const notice = "crashed worker; dropped the redrive at t=14"
	if s.Header.Notice != notice {
		t.Errorf("notice %q, want %q", s.Header.Notice, notice)
	}
	if log := d.Log(); len(log) != 1 || log[0].At != 10 || ActionName(log[0].Action) != "crash" {
		t.Errorf("log after the branch %+v, want the crash at t=10 only", log)
	}
	got := d.Seek(20)

	want := lesson(t, "poison-dlq")
	stepTo(want, 10)
	if _, err := want.Do(Crash("")); err != nil {
		t.Fatal(err)
	}
	w := stepTo(want, 20)
	if diff := sameRun(got, w); diff != "" {
		t.Errorf("after the branch t=20 differs from the run with the crash only (%s)", diff)
	}
	if got.Ledger.Redriven != 0 {
		t.Errorf("the dropped redrive still ran: %+v", got.Ledger)
	}
	// A second action with nothing ahead in the log does not branch.
	if s, _ := d.Do(BrokerDown()); strings.Contains(s.Header.Notice, "dropped") {
		t.Errorf("acting at the head of the log branched: %q", s.Header.Notice)
	}
}

// TestBranchNoticeCounts: the notices count the actions after the first.
func TestBranchNoticeCounts(t *testing.T) {
	l := []Logged{{At: 14, Action: Redrive("")}, {At: 15, Action: BrokerDown()}, {At: 16, Action: Crash("")}}
	for n, want := range []string{
		"dropped the redrive at t=14",
		"dropped the redrive at t=14 and 1 later action",
		"dropped the redrive at t=14 and 2 later actions",
	} {
		if got := branchNotice(l[:n+1]); got != want {
			t.Errorf("%d dropped: %q, want %q", n+1, got, want)
		}
	}
	for n, want := range []string{
		"ahead in the log: the redrive at t=14",
		"ahead in the log: the redrive at t=14 and 1 more",
		"ahead in the log: the redrive at t=14 and 2 more",
	} {
		if got := aheadNotice(l[:n+1]); got != want {
			t.Errorf("%d ahead: %q, want %q", n+1, got, want)
		}
	}
}

// TestRestartClearsLog: a restart is a new history.
func TestRestartClearsLog(t *testing.T) {
	d := lesson(t, "poison-dlq")
	stepTo(d, 14)
	if _, err := d.Do(Redrive("")); err != nil {
		t.Fatal(err)
	}
	d.Restart(d.Seed())
	if len(d.Log()) != 0 {
		t.Fatalf("log after restart: %+v", d.Log())
	}
	if s := stepTo(d, 20); s.Ledger.Redriven != 0 {
		t.Errorf("the redrive ran after a restart: %+v", s.Ledger)
	}
}

// TestHandlersPerRun: bound handlers are built afresh for every run the
// session builds, so a seek back re-executes the same history.
func TestHandlersPerRun(t *testing.T) {
	built := 0
	opt := SessionOptions{Handlers: func() map[string]sim.Handler {
		built++
		seen := 0
		return map[string]sim.Handler{"worker": sim.HandlerFunc(func(*sim.Delivery) error {
			seen++
			return nil
		})}
	}}
	d, err := OpenLesson("poison-dlq", opt)
	if err != nil {
		t.Fatal(err)
	}
	a := stepTo(d, 12)
	b := d.Seek(5)
	b = d.Seek(12)
	if diff := sameRun(a, b); diff != "" {
		t.Errorf("back and forward with bound handlers differs (%s)", diff)
	}
	if built < 2 {
		t.Errorf("handlers built %d times, want one set per run", built)
	}
	if a.Ledger.DeadLettered != 0 {
		t.Errorf("the bound handler fails nothing, yet %d dead letters", a.Ledger.DeadLettered)
	}
}

// TestTimelineActionByHand: Do takes any action of the file's timeline
// vocabulary, logs it like a hand action, and a seek back and forward
// keeps it.
func TestTimelineActionByHand(t *testing.T) {
	d := lesson(t, "poison-dlq")
	stepTo(d, 3)
	s, err := d.Do(Action{Action: "purge", Queue: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Header.Notice != "purge" || s.Queues[0].Visible+s.Queues[0].Delayed != 0 {
		t.Fatalf("after purge: notice %q, queue %+v", s.Header.Notice, s.Queues[0])
	}
	want := stepTo(d, 8)
	d.Seek(1)
	if got := d.Seek(8); sameRun(got, want) != "" {
		t.Errorf("back to t=1 and forward to t=8 lost the purge (%s)", sameRun(got, want))
	}
	if _, err := d.Do(Action{Action: "purge", Queue: "nowhere"}); err == nil || strings.Contains(err.Error(), "runtime error") {
		t.Errorf("purge of an unknown queue: %v, want the reason in words", err)
	}
}

// TestHandActionShowsAtOnce: the ledger summary a snapshot shows after a
// hand action is the ledger's own at that tick, live and when the action
// is applied again from the log, not the summary taken before the action.
func TestHandActionShowsAtOnce(t *testing.T) {
	d := lesson(t, "poison-dlq")
	stepTo(d, 14)
	s, err := d.Do(Redrive(""))
	if err != nil {
		t.Fatal(err)
	}
	if want := d.run.Env().Ledger.Stats(); s.Ledger.DeadLettered != want.DeadLettered || s.Ledger.Redriven != want.Redriven || s.Ledger.Redriven == 0 {
		t.Fatalf("after the redrive at t=14 the snapshot shows %+v, the ledger holds %+v", s.Ledger, want)
	}
	d.Seek(10)
	again := stepTo(d, 14)
	if !reflect.DeepEqual(again.Ledger, s.Ledger) {
		t.Errorf("at t=14 again from the log: %+v, live it was %+v", again.Ledger, s.Ledger)
	}
}
