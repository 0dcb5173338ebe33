package outbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// The tests in this file are the checks of the "repair the outbox" exercise:
// the normal case, a crash while placing an order, a broker failure in the
// middle of a relay run, a second relay run, and a relay crash between
// publish and mark.

func TestExerciseNormalCase(t *testing.T) {
	w := mustWorld(t, 1)
	s := mustService(t, w, false)
	p := newSink(w)
	o, row, err := s.PlaceOrder("kunde-A", 100)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Order(o.ID); !ok || got.Amount != 100 {
		t.Fatalf("order %d not stored: %+v", o.ID, got)
	}
	if got, ok := s.Row(row.ID); !ok || got.State != StatePending || got.Msg == 0 {
		t.Fatalf("outbox row not stored as pending: %+v", got)
	}
	if rec, ok := w.Ledger().Record(row.Msg); !ok || rec.State != sim.StatePending || rec.Where != "outbox:shop" || rec.Type != EventOrderPlaced {
		t.Fatalf("ledger record of the stored row %+v, want pending at outbox:shop", rec)
	}
	r := mustRelay(t, w, RelayConfig{Service: s, Target: p})
	if err := r.Poll(); err != nil {
		t.Fatal(err)
	}
	if len(p.got) != 1 {
		t.Fatalf("published %d messages, want 1", len(p.got))
	}
	ev, err := DecodeOrderPlaced(p.got[0].Body)
	if err != nil {
		t.Fatal(err)
	}
	if ev.OrderID != o.ID || ev.Amount != 100 || ev.Customer != "kunde-A" {
		t.Errorf("payload %+v, want order %d amount 100", ev, o.ID)
	}
	if p.got[0].ID != row.Msg || p.got[0].Key != "kunde-A" || p.got[0].Headers.Type != EventOrderPlaced {
		t.Errorf("message %+v does not carry the row's id, key and type", p.got[0])
	}
	if got, _ := s.Row(row.ID); got.State != StateSent || got.ClaimedBy != "" {
		t.Errorf("row after relay: %+v, want sent and unclaimed", got)
	}
	if m := s.Metrics(); m.Pending != 0 || m.Sent != 1 || m.Published != 1 || m.Marked != 1 {
		t.Errorf("metrics %+v", m)
	}
	if rec, _ := w.Ledger().Record(row.Msg); rec.State != sim.StateDone || rec.Sends != 2 {
		t.Errorf("ledger record %+v, want done after 2 sends (stored, then sent)", rec)
	}
	if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("sink")); err != nil {
		t.Error(err)
	}
}

func TestExerciseCrashWhilePlacingStoresNeither(t *testing.T) {
	world := mustWorld(t, 1)
	s := mustService(t, world, false)
	in := mustFaults(t, world, faults.Rule{Name: "crash-mid-order", Point: faults.WriterCrashAfterPublish, Nth: 1})
	w := mustWriter(t, world, WriterConfig{Service: s, Mode: Outbox, Faults: in})
	if _, err := w.PlaceOrder("kunde-A", 100); !errors.Is(err, ErrCrashed) {
		t.Fatalf("PlaceOrder = %v, want ErrCrashed", err)
	}
	if n, m := len(s.Orders()), len(s.Rows()); n != 0 || m != 0 {
		t.Fatalf("after the crash: %d orders, %d outbox rows; want neither", n, m)
	}
	if recs := world.Ledger().Records(); len(recs) != 0 {
		t.Fatalf("the ledger knows %+v; an aborted order must leave no event", recs)
	}
	// The same through Update: an error after the order insert aborts both.
	boom := errors.New("power cut")
	err := s.Update(func(tx *Tx) error {
		o, err := tx.InsertOrder("kunde-B", 5)
		if err != nil {
			return err
		}
		if _, err := tx.Append(orderEvent(o)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v", err)
	}
	if n, m := len(s.Orders()), len(s.Rows()); n != 0 || m != 0 {
		t.Fatalf("after the aborted update: %d orders, %d outbox rows; want neither", n, m)
	}
	if m := s.Metrics(); m.Written != 0 || m.Pending != 0 {
		t.Errorf("metrics count aborted rows: %+v", m)
	}
	// The next order goes through: its row is pending at the outbox, and
	// with no relay running no-loss says so.
	if _, err := w.PlaceOrder("kunde-C", 7); err != nil {
		t.Fatal(err)
	}
	if n, m := len(s.Orders()), len(s.Rows()); n != 1 || m != 1 {
		t.Fatalf("%d orders, %d rows, want 1 and 1", n, m)
	}
	if st := world.Ledger().Stats(); st.Messages != 1 || st.Pending != 1 {
		t.Errorf("ledger %+v, want one message pending", st)
	}
	if err := sim.Check(world.Ledger(), sim.NoLoss()); err == nil || !strings.Contains(err.Error(), "still pending in outbox:shop") {
		t.Errorf("no-loss = %v, want the unrelayed row reported pending at the outbox", err)
	}
}

func placeThree(t *testing.T, s *Service) []Row {
	t.Helper()
	var rows []Row
	for i, c := range []string{"kunde-A", "kunde-B", "kunde-A"} {
		_, r, err := s.PlaceOrder(c, int64(10*(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

func TestExerciseBrokerFailsOnSecondOfThree(t *testing.T) {
	for _, via := range []string{"target error", "fault rule"} {
		t.Run(via, func(t *testing.T) {
			w := mustWorld(t, 1)
			s := mustService(t, w, false)
			p := newSink(w)
			var in *faults.Injector
			if via == "target error" {
				p.failNth[2] = true
			} else {
				in = mustFaults(t, w, faults.Rule{Name: "broker-down", Point: faults.BrokerUnavailable, Nth: 2})
			}
			rows := placeThree(t, s)
			r := mustRelay(t, w, RelayConfig{Service: s, Target: p, Faults: in})
			err := r.Poll()
			if err == nil {
				t.Fatal("Poll = nil, want the broker error")
			}
			if via == "target error" && !errors.Is(err, errScripted) || via == "fault rule" && (!errors.Is(err, ErrUnavailable) || !errors.Is(err, sim.ErrUnavailable)) {
				t.Fatalf("Poll = %v, want it to wrap the broker error", err)
			}
			if got, want := rowStates(s), []State{StateSent, StatePending, StatePending}; !reflect.DeepEqual(got, want) {
				t.Fatalf("row states %v, want %v", got, want)
			}
			if len(p.got) != 1 || p.got[0].ID != rows[0].Msg {
				t.Fatalf("published %v, want only row 1 (nothing after the failure)", p.got)
			}
			if r2, _ := s.Row(rows[1].ID); r2.Attempts != 1 || r2.LastError == "" || r2.ClaimedBy != "" {
				t.Errorf("failed row %+v, want 1 attempt, an error and no lease", r2)
			}
			if r3, _ := s.Row(rows[2].ID); r3.Attempts != 0 || r3.ClaimedBy != "" {
				t.Errorf("untouched row %+v, want no attempt and no lease", r3)
			}
			// The second run sends rows 2 and 3, each exactly once.
			if err := r.Poll(); err != nil {
				t.Fatal(err)
			}
			if got, want := rowStates(s), []State{StateSent, StateSent, StateSent}; !reflect.DeepEqual(got, want) {
				t.Fatalf("row states %v, want %v", got, want)
			}
			for _, row := range rows {
				if n := p.count(row.Msg); n != 1 {
					t.Errorf("row %d published %d times, want 1", row.ID, n)
				}
			}
			if err := sim.Check(w.Ledger(), sim.ExactlyOnce("sink"), sim.OrderedPerKey("sink"), sim.NoLoss()); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestExerciseRelayCrashPublishesTwice(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	s := mustService(t, w, false)
	p := newSink(w)
	in := mustFaults(t, w, faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Nth: 2})
	rows := placeThree(t, s)
	r := mustRelay(t, w, RelayConfig{Service: s, Target: p, Faults: in, MarkEach: true})
	if err := r.Poll(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("Poll = %v, want ErrCrashed", err)
	}
	if got, want := rowStates(s), []State{StateSent, StatePending, StatePending}; !reflect.DeepEqual(got, want) {
		t.Fatalf("row states after the crash %v, want %v", got, want)
	}
	env.Clock.Set(10) // the crashed relay's lease has run out
	if err := r.Poll(); err != nil {
		t.Fatal(err)
	}
	want := []int{1, 2, 1}
	for i, row := range rows {
		if n := p.count(row.Msg); n != want[i] {
			t.Errorf("row %d published %d times, want %d", row.ID, n, want[i])
		}
	}
	// Stored once, then sent twice: the same copy (the same ID), two
	// deliveries of one origin.
	if rec, _ := w.Ledger().Record(rows[1].Msg); rec.Sends != 3 || rec.Origin != 0 {
		t.Errorf("ledger record %+v of the re-published message, want 3 sends (stored, sent, sent) of one copy", rec)
	}
	if d := w.Ledger().Duplicates("sink"); d != 1 {
		t.Errorf("ledger duplicates %d, want 1", d)
	}
	if m := s.Metrics(); m.Duplicates() != 1 || m.RelayCrash != 1 {
		t.Errorf("metrics %+v: duplicates %d, want 1", m, m.Duplicates())
	}
	if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("sink")); err != nil {
		t.Error(err)
	}
	if err := sim.Check(w.Ledger(), sim.AtMostOnce("sink")); err == nil {
		t.Error("at-most-once holds, want the duplicate reported")
	}
}

// TestExerciseGoldenTrace keeps the trace of the exercise as a golden file:
// the same calls produce a byte-identical trace.
func TestExerciseGoldenTrace(t *testing.T) {
	run := func() []byte {
		var buf, jsonl bytes.Buffer
		w := mustWorld(t, 7)
		w.Trace().Attach(sim.NewTextWriter(&buf))
		w.Trace().Attach(sim.NewJSONWriter(&jsonl))
		s := mustService(t, w, false)
		p := newSink(w)
		in := mustFaults(t, w,
			faults.Rule{Name: "broker-down", Point: faults.BrokerUnavailable, Nth: 2},
			faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, From: 4, Nth: 1},
		)
		wr := mustWriter(t, w, WriterConfig{Service: s, Mode: Outbox})
		mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Count: 6, Keys: []string{"kunde-A", "kunde-B", "kunde-C"}, RandomKeys: true})
		mustRelay(t, w, RelayConfig{Service: s, Target: p, Faults: in, Lease: 3, Backoff: 1, MarkEach: true})
		if err := w.Run(12); err != nil {
			t.Fatal(err)
		}
		if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("sink")); err != nil {
			t.Error(err)
		}
		foldsAgain(t, w, &jsonl)
		return buf.Bytes()
	}
	got := run()
	if again := run(); !bytes.Equal(got, again) {
		t.Fatal("two runs with the same seed produced different traces")
	}
	path := filepath.Join("testdata", "exercise.golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("trace differs from %s (rerun with -update and inspect the diff):\n%s", path, got)
	}
}
