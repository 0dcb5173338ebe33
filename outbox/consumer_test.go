package outbox

import (
	"errors"
	"strings"
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// charge is the consumer's effect: one row per applied order event.
type charge struct {
	N       uint64
	OrderID uint64
	Amount  int64
}

var chargesTable = &memdb.TableSchema{Name: "charges", Indexes: map[string]*memdb.IndexSchema{
	"id": {Name: "id", Unique: true, Indexer: &memdb.UintFieldIndex{Field: "N"}},
}}

type bank struct {
	db *memdb.MemDB
	n  uint64
}

func newBank(t *testing.T) *bank {
	t.Helper()
	db, err := memdb.NewMemDB(ConsumerSchema(chargesTable))
	if err != nil {
		t.Fatal(err)
	}
	return &bank{db: db}
}

// charge inserts a charge for the order in m.
func (b *bank) charge(txn *memdb.Txn, m sim.Message) error {
	ev, err := DecodeOrderPlaced(m.Body)
	if err != nil {
		return err
	}
	b.n++
	return txn.Insert("charges", &charge{N: b.n, OrderID: ev.OrderID, Amount: ev.Amount})
}

func (b *bank) charges(t *testing.T) []charge {
	t.Helper()
	it, err := b.db.Txn(false).Get("charges", "id")
	if err != nil {
		t.Fatal(err)
	}
	var out []charge
	for o := it.Next(); o != nil; o = it.Next() {
		out = append(out, *o.(*charge))
	}
	return out
}

func (b *bank) processed(t *testing.T) int {
	t.Helper()
	it, err := b.db.Txn(false).Get(TableProcessed, IndexID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for o := it.Next(); o != nil; o = it.Next() {
		n++
	}
	return n
}

func mustConsumer(t *testing.T, cfg ConsumerConfig) *Consumer {
	t.Helper()
	c, err := NewConsumer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// deliverTwice publishes three orders through a relay that crashes after
// every publish, so every message is delivered twice, and hands each
// delivery to both consumers.
func TestIdempotentConsumerUnderDuplicates(t *testing.T) {
	env := sim.NewEnv(5)
	s := mustService(t, env, false)
	idemBank, naiveBank := newBank(t), newBank(t)
	idem := mustConsumer(t, ConsumerConfig{Name: "billing", Env: env, DB: idemBank.db, Effect: idemBank.charge})
	naive := mustConsumer(t, ConsumerConfig{Name: "billing-naive", Env: env, DB: naiveBank.db, Effect: naiveBank.charge, Dedup: DedupNone})
	var deliveries []sim.Message
	target := publisherFunc(func(m sim.Message) error {
		env.Ledger.Sent(m.ID, env.Now())
		deliveries = append(deliveries, m)
		return nil
	})
	customers := []string{"kunde-A", "kunde-B", "kunde-C"}
	var rules []faults.Rule
	for _, c := range customers {
		rules = append(rules, faults.Rule{Name: "crash-" + c, Point: faults.RelayCrashAfterPublish, Match: faults.Match{Key: c}, Nth: 1})
	}
	in := mustFaults(t, env, rules...)
	r := mustRelay(t, RelayConfig{Service: s, Target: target, Faults: in, MarkEach: true, Batch: 1})
	for i, c := range customers {
		if _, _, err := s.PlaceOrder(c, int64(10*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	for tick := sim.Tick(1); tick <= 6; tick++ {
		env.Clock.Set(tick)
		_ = r.Poll()
	}
	if len(deliveries) != 6 {
		t.Fatalf("%d deliveries, want 6 (each of 3 messages twice)", len(deliveries))
	}
	for _, m := range deliveries {
		for _, c := range []*Consumer{idem, naive} {
			env.Ledger.Delivered(m.ID, c.Ref(), env.Now())
			if _, err := c.Handle(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sim.Check(env.Ledger, sim.ExactlyOnce("billing")); err != nil {
		t.Errorf("idempotent consumer: %v", err)
	}
	err := sim.Check(env.Ledger, sim.ExactlyOnce("billing-naive"))
	var ce *sim.CheckError
	if !errors.As(err, &ce) || len(ce.Violations) != 3 || !strings.Contains(ce.Violations[0].Detail, "applied 2 times") {
		t.Errorf("naive consumer: %v, want 3 effects applied twice", err)
	}
	if n := len(idemBank.charges(t)); n != 3 {
		t.Errorf("idempotent consumer charged %d times, want 3", n)
	}
	if n := len(naiveBank.charges(t)); n != 6 {
		t.Errorf("naive consumer charged %d times, want 6 (double charging)", n)
	}
	if st := idem.Stats(); st.Applied != 3 || st.Duplicates != 3 {
		t.Errorf("idempotent stats %+v", st)
	}
}

type publisherFunc func(m sim.Message) error

func (f publisherFunc) Publish(m sim.Message) error { return f(m) }

func TestConsumerDedupAndEffectCommitTogether(t *testing.T) {
	env := sim.NewEnv(1)
	b := newBank(t)
	in := mustFaults(t, env, faults.Rule{Name: "crash-mid-way", Point: faults.ConsumerCrashAfterEffect, Nth: 1})
	c := mustConsumer(t, ConsumerConfig{Name: "billing", Env: env, DB: b.db, Effect: b.charge, Faults: in})
	m := env.NewMessage("kunde-A", encodeOrderPlaced(Order{ID: 1, Customer: "kunde-A", Amount: 10}), sim.Headers{Type: EventOrderPlaced})
	applied, err := c.Handle(m)
	if applied || !errors.Is(err, ErrCrashed) {
		t.Fatalf("Handle = %v, %v; want a crash", applied, err)
	}
	if n, p := len(b.charges(t)), b.processed(t); n != 0 || p != 0 {
		t.Fatalf("after the crash: %d charges, %d dedup rows; want both rolled back", n, p)
	}
	// An effect that fails half-way also leaves nothing behind.
	failing := mustConsumer(t, ConsumerConfig{Name: "billing-2", Env: env, DB: b.db, Effect: func(txn *memdb.Txn, m sim.Message) error {
		if err := b.charge(txn, m); err != nil {
			return err
		}
		return errors.New("ledger service timeout")
	}})
	if _, err := failing.Handle(m); err == nil {
		t.Fatal("failing effect reported success")
	}
	if n, p := len(b.charges(t)), b.processed(t); n != 0 || p != 0 {
		t.Fatalf("after the failed effect: %d charges, %d dedup rows", n, p)
	}
	// The redelivery applies it once; the next one is a duplicate.
	for i, want := range []bool{true, false} {
		applied, err := c.Handle(m)
		if err != nil || applied != want {
			t.Fatalf("delivery %d: %v, %v; want applied=%v", i+2, applied, err, want)
		}
	}
	if n, p := len(b.charges(t)), b.processed(t); n != 1 || p != 1 {
		t.Fatalf("%d charges, %d dedup rows; want 1 and 1", n, p)
	}
	if err := sim.Check(env.Ledger, sim.ExactlyOnce("billing")); err != nil {
		t.Error(err)
	}
}

func TestConsumerBusinessKeyBucketAndTTL(t *testing.T) {
	env := sim.NewEnv(1)
	b := newBank(t)
	c := mustConsumer(t, ConsumerConfig{Name: "billing", Env: env, DB: b.db, Effect: b.charge, Dedup: DedupBusinessKey,
		BusinessKey: func(m sim.Message) string {
			ev, _ := DecodeOrderPlaced(m.Body)
			return ev.Customer + "/" + string(rune('0'+ev.Amount%10))
		}, Bucket: 10, TTL: 20})
	body := encodeOrderPlaced(Order{ID: 1, Customer: "kunde-A", Amount: 10})
	handle := func(at sim.Tick) bool {
		env.Clock.Set(at)
		// A retried request: a new message ID, the same business key.
		m := env.NewMessage("kunde-A", body, sim.Headers{Type: EventOrderPlaced})
		applied, err := c.Handle(m)
		if err != nil {
			t.Fatal(err)
		}
		c.Step(at)
		return applied
	}
	if !handle(1) {
		t.Fatal("first request not applied")
	}
	if handle(5) {
		t.Fatal("same key in the same bucket applied twice")
	}
	if !handle(12) {
		t.Fatal("same key in the next bucket not applied")
	}
	if got := c.Key(sim.Message{Body: body, Created: 35}); got != "kunde-A/0@3" {
		t.Errorf("Key = %q", got)
	}
	// TTL: the entry from t=1 is forgotten at t=21; the one from t=12 stays.
	env.Clock.Set(25)
	c.Step(25)
	if st := c.Stats(); st.Forgotten != 1 || b.processed(t) != 1 {
		t.Errorf("stats %+v, %d dedup rows left", st, b.processed(t))
	}
}

func TestConsumerConfigValidate(t *testing.T) {
	b := newBank(t)
	plain, err := memdb.NewMemDB(&memdb.DBSchema{Tables: map[string]*memdb.TableSchema{"charges": chargesTable}})
	if err != nil {
		t.Fatal(err)
	}
	eff := func(*memdb.Txn, sim.Message) error { return nil }
	bad := []ConsumerConfig{
		{DB: b.db, Effect: eff},
		{Name: "x", Effect: eff},
		{Name: "x", DB: b.db},
		{Name: "x", DB: b.db, Effect: eff, Dedup: DedupBusinessKey},
		{Name: "x", DB: plain, Effect: eff},
		{Name: "x", DB: b.db, Effect: eff, TTL: -1},
	}
	for i, c := range bad {
		if _, err := NewConsumer(c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %d: %v", i, err)
		}
	}
	if _, err := NewConsumer(ConsumerConfig{Name: "naive", DB: plain, Effect: eff, Dedup: DedupNone}); err != nil {
		t.Errorf("naive consumer without dedup table: %v", err)
	}
}
