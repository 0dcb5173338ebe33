package outbox

import (
	"reflect"
	"sort"
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

func TestSchema(t *testing.T) {
	s := Schema(chargesTable)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		TableOrders:    {IndexID},
		TableOutbox:    {IndexDead, IndexID, IndexPending, IndexSent},
		TableProcessed: {IndexID, IndexSeen},
		"charges":      {"id"},
	}
	for table, idx := range want {
		ts, ok := s.Tables[table]
		if !ok {
			t.Fatalf("table %q missing", table)
		}
		var got []string
		for name, is := range ts.Indexes {
			got = append(got, name)
			if name == IndexID && (!is.Unique || is.AllowMissing) {
				t.Errorf("%s.%s must be unique and total", table, name)
			}
			if table == TableOutbox && name != IndexID && !is.AllowMissing {
				t.Errorf("%s.%s is partial and must allow missing values", table, name)
			}
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, idx) {
			t.Errorf("%s indexes %v, want %v", table, got, idx)
		}
	}
	// The outbox row has every column the pattern needs.
	cols := map[string]bool{}
	rt := reflect.TypeOf(Row{})
	for i := 0; i < rt.NumField(); i++ {
		cols[rt.Field(i).Name] = true
	}
	for _, c := range []string{"ID", "AggregateType", "AggregateID", "EventType", "Payload", "Attempts", "Created",
		"Processed", "RetryAfter", "ClaimedBy", "LeaseUntil", "Msg", "State"} {
		if !cols[c] {
			t.Errorf("outbox row lacks column %s", c)
		}
	}
	if err := ConsumerSchema().Validate(); err != nil {
		t.Error(err)
	}
	// Wrong object types are refused, not panicked on.
	svc := mustService(t, mustWorld(t, 1), false)
	txn := svc.DB().Txn(true)
	defer txn.Abort()
	if err := txn.Insert(TableOutbox, &Order{ID: 1}); err == nil {
		t.Error("an order was accepted into the outbox table")
	}
	if err := txn.Insert(TableOrders, &Row{ID: 1}); err == nil {
		t.Error("a row was accepted into the orders table")
	}
	if _, err := txn.First(TableOutbox, IndexID, "x"); err == nil {
		t.Error("a string key was accepted for an integer index")
	}
	for _, name := range []string{TableOrders, TableOutbox, TableProcessed} {
		if _, err := New(mustWorld(t, 1), Config{Name: "x", Tables: []*memdb.TableSchema{{Name: name}}}); err == nil {
			t.Errorf("the reserved table name %s was accepted", name)
		}
	}
}

// TestRowsNeverMutated keeps the objects a snapshot saw and checks that no
// relay step, failure, dead letter, retry or cleanup modified them in place.
func TestRowsNeverMutated(t *testing.T) {
	w := mustWorld(t, 2)
	env := w.Env()
	s := mustService(t, w, true)
	p := newSink(w)
	in := mustFaults(t, w,
		faults.Rule{Name: "down", Point: faults.BrokerUnavailable, Nth: 2},
		faults.Rule{Name: "crash", Point: faults.RelayCrashAfterPublish, Nth: 4})
	for i := 0; i < 6; i++ {
		if _, _, err := s.PlaceOrder("kunde-A", int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	type seen struct {
		ptr  *Row
		copy Row
	}
	var kept []seen
	var orders []*Order
	snap := func() {
		txn := s.DB().Txn(false)
		it, _ := txn.Get(TableOutbox, IndexID)
		for o := it.Next(); o != nil; o = it.Next() {
			kept = append(kept, seen{o.(*Row), *o.(*Row)})
		}
		it, _ = txn.Get(TableOrders, IndexID)
		for o := it.Next(); o != nil; o = it.Next() {
			orders = append(orders, o.(*Order))
		}
	}
	snap()
	r := mustRelay(t, w, RelayConfig{Service: s, Target: p, Faults: in, MaxAttempts: 1, CleanupAfter: 2})
	cdc, err := NewCDCRelay(w, CDCConfig{Service: s, Target: newSink(w)})
	if err != nil {
		t.Fatal(err)
	}
	for tick := sim.Tick(1); tick <= 8; tick++ {
		env.Clock.Set(tick)
		r.Step(tick)
		snap()
		if tick == 3 {
			for _, d := range s.DeadLetters() {
				if err := s.Retry(d.ID); err != nil {
					t.Fatal(err)
				}
			}
			snap()
		}
	}
	cdc.Step(9)
	for _, k := range kept {
		if !reflect.DeepEqual(*k.ptr, k.copy) {
			t.Fatalf("row %d changed in place:\n was %+v\n now %+v", k.copy.ID, k.copy, *k.ptr)
		}
	}
	for i, o := range orders[:6] {
		if o.ID != uint64(i+1) || o.Amount != int64(i+1) {
			t.Fatalf("order changed in place: %+v", o)
		}
	}
	if len(kept) < 30 {
		t.Fatalf("only %d snapshots of rows", len(kept))
	}
}
