package outbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// The tests in this file are the checks of the "repair the outbox" exercise:
// the normal case, a crash while placing an order, a broker failure in the
// middle of a relay run, a second relay run, and a relay crash between
// publish and mark.

func TestExerciseNormalCase(t *testing.T) {
	env := sim.NewEnv(1)
	s := mustService(t, env, false)
	p := newSink(env)
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
	r := mustRelay(t, RelayConfig{Service: s, Target: p})
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
}

func TestExerciseCrashWhilePlacingStoresNeither(t *testing.T) {
	env := sim.NewEnv(1)
	s := mustService(t, env, false)
	in := mustFaults(t, env, faults.Rule{Name: "crash-mid-order", Point: faults.WriterCrashAfterPublish, Nth: 1})
	w, err := NewWriter(WriterConfig{Service: s, Mode: Outbox, Faults: in})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.PlaceOrder("kunde-A", 100); !errors.Is(err, ErrCrashed) {
		t.Fatalf("PlaceOrder = %v, want ErrCrashed", err)
	}
	if n, m := len(s.Orders()), len(s.Rows()); n != 0 || m != 0 {
		t.Fatalf("after the crash: %d orders, %d outbox rows; want neither", n, m)
	}
	// The same through Update: an error after the order insert aborts both.
	boom := errors.New("power cut")
	err = s.Update(func(tx *Tx) error {
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
	// The next order goes through.
	if _, err := w.PlaceOrder("kunde-C", 7); err != nil {
		t.Fatal(err)
	}
	if n, m := len(s.Orders()), len(s.Rows()); n != 1 || m != 1 {
		t.Fatalf("%d orders, %d rows, want 1 and 1", n, m)
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
			env := sim.NewEnv(1)
			s := mustService(t, env, false)
			p := newSink(env)
			var in *faults.Injector
			if via == "target error" {
				p.failNth[2] = true
			} else {
				in = mustFaults(t, env, faults.Rule{Name: "broker-down", Point: faults.BrokerUnavailable, Nth: 2})
			}
			rows := placeThree(t, s)
			r := mustRelay(t, RelayConfig{Service: s, Target: p, Faults: in})
			err := r.Poll()
			if err == nil {
				t.Fatal("Poll = nil, want the broker error")
			}
			if via == "target error" && !errors.Is(err, errScripted) || via == "fault rule" && !errors.Is(err, ErrUnavailable) {
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
			if err := sim.Check(env.Ledger, sim.ExactlyOnce("sink"), sim.OrderedPerKey("sink"), sim.NoLoss()); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestExerciseRelayCrashPublishesTwice(t *testing.T) {
	env := sim.NewEnv(1)
	s := mustService(t, env, false)
	p := newSink(env)
	in := mustFaults(t, env, faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Nth: 2})
	rows := placeThree(t, s)
	r := mustRelay(t, RelayConfig{Service: s, Target: p, Faults: in, MarkEach: true})
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
	if rec, _ := env.Ledger.Record(rows[1].Msg); rec.Sends != 2 {
		t.Errorf("ledger counts %d sends of the re-published message, want 2", rec.Sends)
	}
	if d := env.Ledger.Duplicates("sink"); d != 1 {
		t.Errorf("ledger duplicates %d, want 1", d)
	}
	if m := s.Metrics(); m.Duplicates() != 1 || m.RelayCrash != 1 {
		t.Errorf("metrics %+v: duplicates %d, want 1", m, m.Duplicates())
	}
	if err := sim.Check(env.Ledger, sim.AtMostOnce("sink")); err == nil {
		t.Error("at-most-once holds, want the duplicate reported")
	}
}

// TestExerciseGoldenTrace keeps the trace of the exercise as a golden file:
// the same calls produce a byte-identical trace.
func TestExerciseGoldenTrace(t *testing.T) {
	run := func() []byte {
		var buf bytes.Buffer
		w, err := sim.New(sim.Config{Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		env := w.Env()
		env.Trace.Attach(sim.NewTextWriter(&buf))
		s := mustService(t, env, false)
		p := newSink(env)
		in := mustFaults(t, env,
			faults.Rule{Name: "broker-down", Point: faults.BrokerUnavailable, Nth: 2},
			faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, From: 4, Nth: 1},
		)
		wr, err := NewWriter(WriterConfig{Service: s, Mode: Outbox, Limit: 6})
		if err != nil {
			t.Fatal(err)
		}
		r := mustRelay(t, RelayConfig{Service: s, Target: p, Faults: in, Lease: 3, Backoff: 1, MarkEach: true})
		if err := w.Add(sim.PhaseProducer, "writer", wr); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(sim.PhaseRelay, "relay", r); err != nil {
			t.Fatal(err)
		}
		if err := w.Run(12); err != nil {
			t.Fatal(err)
		}
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
